"""E[(sum of n iid lattice draws)_+], bounded from above or below with every error term
(docs/theory.md §2.11 "The sum, exactly bounded"): an exponentially tilted real FFT whose
rounding, circular wrap and window are each bounded. Used by the lattice blankets and attacks
(accounting/scalar.py) of any per-draw lattice law.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.lazy import lazy_module
from ..core.numerics import EXP_MAX
from ..core.numerics import UNIT_ROUNDOFF as U
from ..kernels.scalar import log_mgf, power_spectrum, tilt

sfft = lazy_module("scipy.fft")  # imported by the first lattice sum, not by every query

__all__ = ["WINDOW_SD", "FULL_WINDOW", "MAX_FFT", "LatticeTooLarge", "positive_part"]

WINDOW_SD = 11.0     # FFT window: this many standard deviations of the tilted sum each side
FULL_WINDOW = 1 << 20  # sums spanning fewer lattice points get a window over all of them
MAX_FFT = 1 << 21    # the largest window (2M points: ~0.1 s and ~100 MB of work arrays)


class LatticeTooLarge(ValueError):
    """The sum's window needs ``size`` FFT points, above ``limit``: raised before allocating,
    so that the caller can coarsen its lattice (or report the cost)."""

    def __init__(self, size: int, limit: int):
        super().__init__(f"the lattice sum needs an FFT of {size} points (limit {limit})")
        self.size, self.limit = size, limit


def _log_mgf(p, ks, t):
    """log sum p e^(t k) (kernels/scalar.py log_mgf)."""
    return log_mgf(p, ks, float(t))


def _tilt(p, ks):
    """theta >= 0 with sum p k e^(theta k) = 0 (kernels/scalar.py tilt)."""
    return tilt(p, ks)


def _geo_tail(mu: float, k0: int) -> float:
    """log of sum_{k >= k0} k e^(-mu k), k0 >= 1, mu > 0."""
    x = math.exp(-mu)
    return -mu * k0 + math.log(k0 - (k0 - 1) * x) - 2.0 * math.log1p(-x)


LAMBDAS = (0.25, 0.5, 1.0, 2.0, 4.0, 16.0, 64.0)  # Chernoff exponents, in units of 1/sd


class _Mgf:
    """log G(t) = log sum p e^(t k) at the Chernoff exponents theta + sign lam/sd (lam in
    LAMBDAS), each computed once: the window search asks for them at every edge it tries."""

    def __init__(self, p, ks, theta, sd) -> None:
        self.p, self.ks, self.theta, self.sd = p, ks, theta, sd
        self._memo: dict[float, float] = {}

    def exponent(self, lam: float, sign: float) -> float:
        return self.theta + sign * lam * max(1.0 / self.sd, 1e-12)

    def log(self, t: float) -> float:
        if t not in self._memo:
            self._memo[t] = _log_mgf(self.p, self.ks, t)
        return self._memo[t]


def _beyond_log(mgf: _Mgf, n, k_tau, k_max) -> float:
    """log of a bound on E[(K - tau); K > k_tau + k_max] <= G(mu)^n e^(-mu k_tau)
    sum_{m > k_max} m e^(-mu m), mu > theta (Markov), the best of a few mu."""
    best = math.inf
    for lam in LAMBDAS:
        mu = mgf.exponent(lam, 1.0)
        best = min(best, n * mgf.log(mu) - mu * k_tau + _geo_tail(mu, k_max + 1))
    return best


def _wrap_log(mgf: _Mgf, n, log_g, sign, edge) -> float:
    """log of a Chernoff bound on the tilted mass of K beyond ``edge`` (below it for sign
    -1, above for +1), the best of a few exponents."""
    best = math.inf
    for lam in LAMBDAS:
        t = mgf.exponent(lam, sign)
        best = min(best, n * (mgf.log(t) - log_g) - (t - mgf.theta) * edge)
    return best


def _window(mgf: _Mgf, n, log_g, mean_t, tau, upper, max_fft) -> tuple[int, int]:
    """(k_max, k_neg): the FFT window above and below tau. Every value when the sums span at
    most FULL_WINDOW points; else 11 tilted sd each side, widened (doubling, within max_fft)
    until the terms bounding what the window misses (the sum beyond it for an upper bound,
    the circular wrap for a lower one) are below 1e-4 of the sum's typical size, the tilted
    sd / 2.6 (or 1/(theta^2 sd) / 2.6 when the tilt is steep): heavy tails need wider ones."""
    ks, theta, sd = mgf.ks, mgf.theta, mgf.sd
    k_tau = math.floor(tau)
    full_hi, full_lo = int(n * ks[-1] - k_tau) + 1, int(k_tau - n * ks[0]) + 1
    if full_hi + full_lo + 1 <= FULL_WINDOW:  # small sums: the window holds every value
        return max(full_hi, 1), max(full_lo, 1)
    k_max = max(min(int(math.ceil(n * max(mean_t, 0.0) + WINDOW_SD * sd)) + 2, full_hi), 1)
    k_neg = max(min(int(math.ceil(n * max(-mean_t, 0.0) + WINDOW_SD * sd)) + 2, full_lo), 1)
    log_s = math.log(max(min(sd, 1.0 / max(theta * theta * sd, 1e-300)), 1e-300) / 2.6) - 9.2
    if upper:
        log_s += n * log_g - theta * tau
        while (k_max < min(full_hi, max_fft - k_neg - 1)
               and _beyond_log(mgf, n, k_tau, k_max) > log_s):
            k_max = min(2 * k_max, full_hi, max_fft - k_neg - 1)
        return k_max, k_neg
    log_s -= math.log(max(min(float(k_max), 1.0 / max(math.e * theta, 1e-300)), 1.0))
    while (k_neg < min(full_lo, max_fft - k_max - 1)
           and _wrap_log(mgf, n, log_g, -1.0, k_tau - k_neg - 1) > log_s):
        k_neg = min(2 * k_neg, full_lo, max_fft - k_max - 1)
    while (k_max < min(full_hi, max_fft - k_neg - 1)
           and _wrap_log(mgf, n, log_g, 1.0, k_tau + k_max + k_neg + 1) > log_s):
        k_max = min(2 * k_max, full_hi, max_fft - k_neg - 1)
    return k_max, k_neg


def positive_part(p: np.ndarray, k0: int, n: int, upper: bool = True, shift: float = 0.0,
                  max_fft: int = MAX_FFT) -> float:
    """E[(K + n shift)_+] for K the sum of n iid draws of the lattice law p on k0, k0 + 1, ...
    (one draw's value is k + shift, in lattice units), rounded up (upper) or down (lower).

    With tau = -n shift and theta the tilt giving the draws (k + shift) mean 0 under
    p e^(theta k)/G: E[(K - tau)_+] = G^n e^(-theta tau) sum_{k > tau} (k - tau) e^(-theta (k - tau))
    P~(k), P~ the tilted law of K (mean tau), from one real FFT of N points. Every term is
    bounded (docs/theory.md §2.11): the FFT and the n-th power (per frequency), the circular wrap
    (it only adds mass: bounded by Chernoff and subtracted for a lower bound), the sum beyond
    the window (Chernoff, added for an upper bound). A window above ``max_fft`` points raises
    :class:`LatticeTooLarge` before any is allocated (the caller coarsens its lattice)."""
    p = np.asarray(p, dtype=np.float64)
    ks = np.arange(k0, k0 + p.size, dtype=np.float64)
    keep = p > 0.0
    if not np.any(keep & (ks + shift > 0)):
        return 0.0
    trivial = n * float(p @ np.maximum(ks + shift, 0.0)) * (1 + 4 * p.size * U)  # sum of X_+
    first, last = np.flatnonzero(keep)[[0, -1]]
    p, ks = p[first:last + 1], ks[first:last + 1]
    vals_x = ks + shift
    theta = _tilt(p, vals_x)
    if not math.isfinite(theta):
        return 0.0
    log_g = _log_mgf(p, ks, theta)
    pt = p * np.exp(theta * ks - log_g)
    pt /= pt.sum()
    mean_t = float(pt @ vals_x)   # ~0: the tilted sum is centred at tau
    var_t = float(pt @ (vals_x - mean_t) ** 2)
    sd = math.sqrt(n * max(var_t, 1e-300))
    tau = -n * shift
    k_tau = math.floor(tau)
    phi = tau - k_tau
    mgf = _Mgf(p, ks, theta, sd)
    k_max, k_neg = _window(mgf, n, log_g, mean_t, tau, upper, max_fft)
    size = sfft.next_fast_len(k_max + k_neg + 1, real=True)
    if size > max_fft:
        raise LatticeTooLarge(size, max_fft)
    circ = np.zeros(size)
    np.add.at(circ, (ks.astype(np.int64) % size), pt)
    coef = sfft.rfft(circ)
    e1 = 5.0 * U * math.log2(size)  # per-frequency error of the forward FFT (sum |pt| = 1)
    powered, e_p = power_spectrum(coef, n, e1, size)
    dens = sfft.irfft(powered, size)
    mm = np.arange(1, k_max + 1, dtype=np.float64)
    wk = (mm - phi) * np.exp(-theta * (mm - phi))
    vals = dens[(int(k_tau) + np.arange(1, k_max + 1)) % size]
    log_scale = n * log_g - theta * tau
    g_err = math.exp(n * (math.log2(max(p.size, 2)) + 4.0) * U + 4.0 * U * abs(theta * tau))
    if upper:
        s = float(wk @ np.maximum(vals + e_p, 0.0)) * (1.0 + 2.0 * (k_max + 8) * U)
        out = math.exp(log_scale + math.log(s)) * g_err if s > 0.0 else 0.0
        # beyond the window: E[(K - tau); K > k_tau + k_max] <= G(mu)^n e^(-mu k_tau)
        # sum_{m > k_max} m e^(-mu m), mu > 0 (Markov)
        if k_tau + k_max >= n * ks[-1]:  # the window reaches the largest sum: nothing beyond
            return min(out, trivial)
        best = _beyond_log(mgf, n, k_tau, k_max)
        return min(out + math.exp(min(best, EXP_MAX)) * g_err, trivial)
    s = float(wk @ np.maximum(vals - e_p, 0.0)) * (1.0 - 2.0 * (k_max + 8) * U)
    # the circular wrap added the tilted mass at K <= k_tau - k_neg - 1 and K >= k_tau + N + 1
    alias = 0.0
    for sign, edge in ((-1.0, k_tau - k_neg - 1), (1.0, k_tau + size + 1)):
        if (sign < 0 and edge < n * ks[0]) or (sign > 0 and edge > n * ks[-1]):
            continue  # no sum lies there
        alias += math.exp(min(_wrap_log(mgf, n, log_g, sign, edge), 0.0))
    s = max(s - alias * float(wk.max()), 0.0)
    return math.exp(log_scale + math.log(s)) / g_err if s > 0.0 else 0.0
