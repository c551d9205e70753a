"""Shuffle accounting for scalar randomizers (x + Laplace or Gaussian noise on [lo, hi]):
the privacy blanket put on a lattice soundly, and an exact attack (docs/theory.md §2.11).

Upper bound (BBGN19 blanket, worst pair (lo, hi), docs/theory.md §2.11):

    delta(eps) <= E[(S)_+] / (n gamma),  S = sum_{i <= n} B_i X_i,  B_i ~ Bern(gamma),

X = (R_lo(Y) - e^eps R_hi(Y)) / w(Y), Y ~ w the blanket law, gamma its weight. Lower bound
(the attack on datasets (lo, mid, ..., mid) vs (hi, mid, ..., mid)): the same functional with
every B_i = 1 and the loss taken against R_mid, divided by n.

``positive_part`` computes E[(S)_+] for a lattice law of one draw by an exponentially tilted
FFT with every error term bounded and added (upper) or subtracted (lower); ``upper_lattice``
and ``lower_lattice`` put X on the lattice so that the result can only grow (mean-preserving
split, upper tail clipped with its excess added) or only shrink (conditional means lumped).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core import validate as V
from ..core.lazy import lazy_module
from ..core.numerics import EXP_MAX
from ..core.numerics import UNIT_ROUNDOFF as U
from ..kernels.scalar import (
    ATOMS,
    GAUSS_ATTACK,
    GAUSS_BLANKET,
    GAUSS_EDGE,
    LAPLACE,
    LAPLACE_EDGE,
    law_range,
    law_tail,
    lump_cells,
    power_spectrum,
    snap_width,
    split_cells,
)
from .profiles import Profile

sfft = lazy_module("scipy.fft")  # imported by the scalar blanket's FFT, not by every query

__all__ = ["RESOLUTION", "WINDOW_SD", "LossLaw", "blanket_law", "attack_laws", "atoms_law",
           "upper_lattice", "lower_lattice", "positive_part", "blanket_delta", "attack_delta",
           "local_delta", "MAX_HALF_WIDTH", "ScalarBlanketProfile", "ScalarLowerProfile"]

RESOLUTION = 24      # lattice steps per standard deviation of one draw's loss
WINDOW_SD = 11.0     # FFT window: this many standard deviations of the tilted sum each side
LUMP_SLACK = 1e-9   # lump_cells rounds a lump mean within this many steps of a point
FULL_WINDOW = 1 << 16  # sums spanning fewer lattice points get a window over all of them
MAX_HALF_WIDTH = 10.0  # (hi - lo)/2 in noise scales (Laplace eps0 <= 20)
MAX_FFT = 1 << 23    # refuse windows above this (8M points, ~0.4 GB of work arrays)


@dataclass(frozen=True)
class LossLaw:
    """One draw's loss law (kernels/scalar.py kind and parameters) and the thinning weight
    gamma of the blanket (1.0: every user draws, as in the attack)."""

    kind: int
    par: tuple
    gamma: float = 1.0

    @property
    def array(self) -> np.ndarray:
        return np.asarray(self.par, dtype=np.float64)


def blanket_law(noise: str, half_width: float) -> LossLaw:
    """The blanket law of x + noise on [-half_width, half_width] (noise scale 1): Laplace's
    blanket is Lap(0, 1) with weight e^-half_width; the Gaussian's is the normalised minimum of
    the two extreme densities, weight 2 Phi(-half_width) (docs/theory.md §2.11)."""
    if noise == "laplace":
        return LossLaw(LAPLACE, (half_width,), math.exp(-half_width))
    if noise == "gaussian":
        return LossLaw(GAUSS_BLANKET, (2.0 * half_width,), math.erfc(half_width / math.sqrt(2)))
    raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")


def attack_laws(noise: str, half_width: float) -> tuple[LossLaw, ...]:
    """The attacks' per-draw losses, every user drawing: every other user at the midpoint
    (loss against R_mid), or at lo (loss against R_lo, user 1 at hi vs lo and lo vs hi)."""
    if noise == "laplace":
        return (LossLaw(LAPLACE, (half_width,)), LossLaw(LAPLACE_EDGE, (half_width, 1.0)),
                LossLaw(LAPLACE_EDGE, (half_width, 0.0)))
    if noise == "gaussian":
        d = 2.0 * half_width
        return (LossLaw(GAUSS_ATTACK, (d,)), LossLaw(GAUSS_EDGE, (d, 1.0)),
                LossLaw(GAUSS_EDGE, (d, 0.0)))
    raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")


def atoms_law(probs, r1, r2, gamma: float) -> LossLaw:
    """A finite blanket law: outcome i has probability probs[i] under w and density ratios
    r1[i] = R_x1/w, r2[i] = R_x1'/w (e.g. k-RR: three atoms)."""
    probs, r1, r2 = (np.asarray(v, dtype=np.float64).ravel() for v in (probs, r1, r2))
    if not (probs.size == r1.size == r2.size and probs.size > 0):
        raise ValueError("probs, r1, r2 must be non-empty and of equal length")
    return LossLaw(ATOMS, tuple(np.concatenate([probs, r1, r2]).tolist()), float(gamma))


def _tail(law: LossLaw, par, e, v, upper=True):
    return law_tail(law.kind, par, e, v, upper)


def _find_cut(f, start: float, target: float) -> float:
    """The smallest v >= start (doubling, then 40 bisections) with f(v) <= target, f
    non-increasing; a value where f is verified <= target."""
    v = max(start, 1e-3)
    for _ in range(200):
        if f(v) <= target:
            break
        v *= 2.0
    lo, hi = v / 2.0, v
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if f(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def _step(law: LossLaw, par, e, resolution: int) -> float:
    """The lattice step: sd(X) / resolution, the sd measured on a split of X into 1024 cells
    between cuts leaving 1e-9 of the first moment out (the split's variance is X's, plus
    at most a cell's width squared / 4)."""
    x_min, x_max, _ = law_range(law.kind, par, e)
    lo_v, hi_v = x_min, x_max
    if math.isinf(hi_v):
        hi_v = _find_cut(lambda v: _tail(law, par, e, v)[1], 1.0, 1e-9)
    if math.isinf(lo_v):
        lo_v = -_find_cut(lambda v: -_tail(law, par, e, -v, False)[1], 1.0, 1e-9)
    h0 = (hi_v - lo_v) / 1024.0
    k_lo, k_hi = int(math.floor(lo_v / h0)), int(math.ceil(hi_v / h0))
    p, _ = split_cells(law.kind, par, e, h0, k_lo, k_hi - 1, 0.0)
    x = (k_lo + np.arange(p.size)) * h0
    mean = float(p @ x)
    sd = math.sqrt(max(float(p @ (x - mean) ** 2) - h0 * h0 / 4.0, h0 * h0))
    return sd / resolution


def upper_lattice(law: LossLaw, e: float, tol: float, resolution: int = RESOLUTION):
    """(pmf, k0, h, extra): a lattice law X' on the points (k0 + i) h with X <=_icx X' up to
    ``extra`` per draw (upper-tail excess above the clip, rounding of the cell moments): so
    E[(sum of X)_+] <= E[(sum of X')_+] + E[number of draws] extra."""
    par = law.array
    x_min, x_max, _ = law_range(law.kind, par, e)
    extra = 0.0
    lo_v, hi_v = x_min, x_max
    if math.isinf(hi_v):  # clip at Lc: E[(X - Lc)_+] <= T(Lc) for Lc >= 0, added per draw;
        # T(Lc) <= 1e6 tol = 1e-4 of the target delta (window_tol), Gaussian tails are heavy
        hi_v = _find_cut(lambda v: _tail(law, par, e, v)[1], 1.0, tol * 1e6)
    if math.isinf(lo_v):  # raise X below -Lm to -Lm (X only grows): nothing to add; the
        # raise costs at most E[(-Lm - X)_+] <= 1e6 tol of the sum's mean
        lo_v = -_find_cut(lambda v: -_tail(law, par, e, -v, False)[1], 1.0, tol * 1e6)
    h = _step(law, par, e, resolution)
    k_lo = int(math.floor(lo_v / h))
    # bounded above: the cells reach past x_max (its atom included); else the clip k_top h
    k_top = int(math.ceil(hi_v / h)) if math.isinf(x_max) else int(math.floor(hi_v / h)) + 1
    if math.isinf(x_max):
        extra += _tail(law, par, e, k_top * h)[1]  # T at the (larger) lattice clip
    p, err = split_cells(law.kind, par, e, h, k_lo, k_top - 1, 0.0)
    if math.isinf(x_min):
        p[0] += _tail(law, par, e, k_lo * h, False)[0]   # raised to k_lo h
    if math.isinf(x_max):
        p[-1] += _tail(law, par, e, k_top * h)[0]        # clipped to k_top h
    return p, k_lo, h, extra + err + 4.0 * _snap(law, par, e)


def _snap(law: LossLaw, par, e) -> float:
    """How far kernels/scalar.py may move Laplace's mass to decide an end atom's side."""
    return snap_width(law.kind, par, e) if law.kind in (LAPLACE, LAPLACE_EDGE) else 0.0


def lower_lattice(law: LossLaw, e: float, tol: float, resolution: int = RESOLUTION, sub: int = 8):
    """(pmf, k0, h, c0, err): a lattice law X'' <=_cx X on the points c0 + k h (conditional
    means lumped onto lattice points; the mass beyond the cuts moved down, which only lowers),
    up to ``err`` per draw. A law bounded on both sides has both ends on the lattice (Laplace's
    atoms there lump exactly); the lumps sweep toward a far tail or an end atom, so that the
    one lump rounded down is tiny."""
    par = law.array
    x_min, x_max, _ = law_range(law.kind, par, e)
    lo_v, hi_v = x_min, x_max
    if math.isinf(hi_v):
        hi_v = _find_cut(lambda v: _tail(law, par, e, v)[1], 1.0, tol)
    if math.isinf(lo_v):
        lo_v = -_find_cut(lambda v: -_tail(law, par, e, -v, False)[1], 1.0, tol)
    h = _step(law, par, e, resolution)
    c0 = 0.0
    if math.isfinite(x_min) and math.isfinite(x_max):
        h = (x_max - x_min) / math.ceil((x_max - x_min) / h)
        c0 = x_min
    elif math.isfinite(x_max):
        h = x_max / math.ceil(x_max / h) if x_max > 0.0 else h
    elif math.isfinite(x_min):
        c0 = x_min
    k_lo = int(math.floor((lo_v - c0) / h)) - 1
    k_hi = int(math.floor((hi_v - c0) / h)) + (0 if math.isinf(x_max) else 2)
    # one sweep, up or down: the one whose last lump (rounded down) loses less of the mean
    cap = x_max if math.isfinite(x_max) else math.inf  # a top atom (Laplace) lumps alone
    pts = c0 + np.arange(k_lo + 1, k_hi) * h
    best = None
    for k_mid in (k_hi + 1, k_lo):
        cand = lump_cells(law.kind, par, e, h, c0, k_lo + 1, k_hi - 1, 0.0, sub, k_mid, cap)
        if best is None or float(cand @ pts) > float(best @ pts):
            best = cand
    p = best
    p = np.concatenate([[0.0], p, [0.0]])
    raise_err = 0.0
    if math.isfinite(x_max):
        g_top, _ = _tail(law, par, e, x_max)
        k_top = int(round((x_max - c0) / h))
        p[k_top - k_lo] += g_top
        raise_err = g_top * max(c0 + k_top * h - x_max, 0.0)  # its lattice point's rounding
    # below c0 + (k_lo + 1) h (a law unbounded below): at the floor of its conditional mean
    g_lo, t_lo = _tail(law, par, e, c0 + (k_lo + 1) * h, False)
    if g_lo > 0.0 and math.isinf(x_min):
        k_put = min(int(math.floor((t_lo / g_lo - c0) / h)), k_lo)
        if k_put < k_lo:
            p = np.concatenate([np.zeros(k_lo - k_put), p])
            k_lo = k_put
        p[0] += g_lo
    g_hi, _ = _tail(law, par, e, c0 + k_hi * h)  # at or above the top: moved down to it
    p[-1] += g_hi
    top = abs(c0) + abs(h * k_lo) + abs(h * (k_lo + p.size))
    err = (LUMP_SLACK * h + 32.0 * U * top + raise_err
           + 4.0 * _snap(law, par, e))  # rounding (kernels/scalar.py)
    return p, k_lo, h, c0, err


def _thin(p: np.ndarray, k0: int, gamma: float):
    """The law of B X' (B ~ Bern(gamma)) on the lattice: X' scaled by gamma plus 1 - gamma at 0."""
    if gamma >= 1.0:
        return p, k0
    lo, hi = min(k0, 0), max(k0 + p.size - 1, 0)
    out = np.zeros(hi - lo + 1)
    out[k0 - lo:k0 - lo + p.size] = gamma * p
    out[-lo] += 1.0 - gamma
    return out, lo


def _log_mgf(p, ks, t):
    """log sum p e^(t k), shifted for stability."""
    z = t * ks
    top = z.max()
    return top + math.log(float(p @ np.exp(z - top)))


def _tilt(p, ks):
    """theta >= 0 with sum p k e^(theta k) = 0 (mean 0 after tilting), by bisection."""
    if float(p @ ks) >= 0.0:
        return 0.0
    pos = ks > 0
    if not np.any(p[pos] > 0):
        return math.inf
    lo, hi = 0.0, 1.0 / max(float(ks.max()), 1.0)
    for _ in range(200):
        z = hi * ks
        if float(p @ (ks * np.exp(z - z.max()))) > 0.0:
            break
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        z = mid * ks
        if float(p @ (ks * np.exp(z - z.max()))) > 0.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def _geo_tail(mu: float, k0: int) -> float:
    """log of sum_{k >= k0} k e^(-mu k), k0 >= 1, mu > 0."""
    x = math.exp(-mu)
    return -mu * k0 + math.log(k0 - (k0 - 1) * x) - 2.0 * math.log1p(-x)


def positive_part(p: np.ndarray, k0: int, n: int, upper: bool = True, shift: float = 0.0) -> float:
    """E[(K + n shift)_+] for K the sum of n iid draws of the lattice law p on k0, k0 + 1, ...
    (one draw's value is k + shift, in lattice units), rounded up (upper) or down (lower).

    With tau = -n shift and theta the tilt giving the draws (k + shift) mean 0 under
    p e^(theta k)/G: E[(K - tau)_+] = G^n e^(-theta tau) sum_{k > tau} (k - tau) e^(-theta (k - tau))
    P~(k), P~ the tilted law of K (mean tau), from one real FFT of N points. Every term is
    bounded (docs/theory.md §2.11): the FFT and the n-th power (per frequency), the circular wrap
    (it only adds mass: bounded by Chernoff and subtracted for a lower bound), the sum beyond
    the window (Chernoff, added for an upper bound)."""
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
    k_max = int(math.ceil(n * max(mean_t, 0.0) + WINDOW_SD * sd)) + 2
    k_neg = int(math.ceil(n * max(-mean_t, 0.0) + WINDOW_SD * sd)) + 2
    full_hi, full_lo = int(n * ks[-1] - k_tau) + 1, int(k_tau - n * ks[0]) + 1
    if full_hi + full_lo + 1 <= FULL_WINDOW:  # small sums: the window holds every value
        k_max, k_neg = max(full_hi, 1), max(full_lo, 1)
    size = sfft.next_fast_len(k_max + k_neg + 1, real=True)
    if size > MAX_FFT:
        raise ValueError(f"the lattice sum needs an FFT of {size} points (limit {MAX_FFT}); "
                         "n or the resolution is too large")
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
        best = math.inf
        for lam in (0.25, 0.5, 1.0, 2.0, 4.0):
            mu = theta + lam * max(1.0 / sd, 1e-12)
            best = min(best, n * _log_mgf(p, ks, mu) - mu * k_tau + _geo_tail(mu, k_max + 1))
        return min(out + math.exp(min(best, EXP_MAX)) * g_err, trivial)
    s = float(wk @ np.maximum(vals - e_p, 0.0)) * (1.0 - 2.0 * (k_max + 8) * U)
    # the circular wrap added the tilted mass at K <= k_tau - k_neg - 1 and K >= k_tau + N + 1
    alias = 0.0
    for sign, edge in ((-1.0, k_tau - k_neg - 1), (1.0, k_tau + size + 1)):
        if (sign < 0 and edge < n * ks[0]) or (sign > 0 and edge > n * ks[-1]):
            continue  # no sum lies there
        best = math.inf
        for lam in (0.25, 0.5, 1.0, 2.0, 4.0):
            t = sign * lam / sd
            best = min(best, n * (_log_mgf(p, ks, theta + t) - log_g) - t * edge)
        alias += math.exp(min(best, 0.0))
    s = max(s - alias * float(wk.max()), 0.0)
    return math.exp(log_scale + math.log(s)) / g_err if s > 0.0 else 0.0


def blanket_delta(n: int, law: LossLaw, eps: float, tol: float,
                  resolution: int = RESOLUTION) -> float:
    """The blanket upper bound on delta(eps) for n users (docs/theory.md §2.11)."""
    e = math.exp(eps)
    p, k0, h, extra = upper_lattice(law, e, tol, resolution)
    pz, kz = _thin(p, k0, law.gamma)
    total = positive_part(pz, kz, n, upper=True)
    return min(1.0, h * total / (n * law.gamma) * (1.0 + 8.0 * U) + extra)


def attack_delta(n: int, law: LossLaw, eps: float, tol: float,
                 resolution: int = RESOLUTION) -> float:
    """The exact delta(eps) of the attack datasets, rounded down (docs/theory.md §2.11)."""
    e = math.exp(eps)
    p, k0, h, c0, err = lower_lattice(law, e, tol, resolution)
    total = positive_part(p, k0, n, upper=False, shift=c0 / h)
    return max(0.0, h * total / n * (1.0 - 8.0 * U) - err)


def local_delta(noise: str, half_width: float, eps: float) -> float:
    """H_{e^eps}(R_lo || R_hi) of one report (an upper bound for any n: the shuffled output is a
    post-processing of user 1's report). Laplace: 1 - e^((eps - eps0)/2), eps0 = 2 half_width;
    Gaussian: Phi(mu/2 - eps/mu) (its first term, an upper bound), mu = 2 half_width."""
    if noise == "laplace":
        eps0 = 2.0 * half_width
        return 0.0 if eps >= eps0 else min(1.0, -math.expm1(0.5 * (eps - eps0)) * (1 + 4 * U))
    mu = 2.0 * half_width
    return min(1.0, 0.5 * math.erfc(-(0.5 * mu - eps / mu) / math.sqrt(2.0)) * (1 + 8 * U))


class _ScalarProfile(Profile):
    """A profile of a scalar randomizer's structure ``st`` (randomizers/scalar.py)."""

    rtol = 1e-6  # the solver's bracket (an upper bound returns its verified upper end)
    law: LossLaw  # set by each subclass

    def __init__(self, n: int, st, resolution: int = RESOLUTION):
        n = V.shuffle_users(n)
        super().__init__(n, st.eps0)
        self.structure = st
        self.resolution = V.integer_at_least(resolution, "resolution", 4, 4096)

    MAX_CELLS = 2e6  # lattice points of one draw's law (at eps = 0) above which it is skipped

    def unsupported(self) -> str | None:
        """The lattice must stay small: a half-width above MAX_HALF_WIDTH noise scales (Laplace
        eps0 > 20) gives losses spanning e^(2 a), far beyond their spread (the generic bound
        answers there)."""
        if self.structure.half_width > MAX_HALF_WIDTH:
            return (f"(hi - lo)/2 is {self.structure.half_width:.4g} noise scales, above the "
                    f"{MAX_HALF_WIDTH:g} the scalar lattice supports")
        law = self.law
        par = law.array
        x_min, x_max, _ = law_range(law.kind, par, 1.0)
        if not (math.isfinite(x_min) and math.isfinite(x_max)):
            return None
        cells = (x_max - x_min) / _step(law, par, 1.0, self.resolution)
        if cells > self.MAX_CELLS:
            return (f"its lattice needs {cells:.2g} points (limit {self.MAX_CELLS:.0e}): eps0 is "
                    "too large for the scalar blanket")
        return None

    def eps_max(self, delta: float) -> float:
        """An eps with delta(eps) <= delta verified: eps0 (Laplace); for Gaussian noise the eps
        where one report's bound Phi(mu/2 - eps/mu) (local_delta) reaches delta."""
        if math.isfinite(self.eps0):
            return self.eps0
        mu = 2.0 * self.structure.half_width
        z = -NormalDist().inv_cdf(min(delta, 0.5))
        eps = mu * (0.5 * mu + z) * (1.0 + 1e-9) + 1e-12
        while local_delta(self.structure.noise, self.structure.half_width, eps) > delta:
            eps *= 1.01
        return eps

    def guess(self, delta: float) -> float:
        """The central-limit guess: delta ~ Pr[N(0, n gamma Var X) > n gamma (e^eps - 1)], so
        e^eps - 1 ~ sqrt(2 Var X log(1/delta) / (n gamma)) (Var X at eps = 0)."""
        law = blanket_law(self.structure.noise, self.structure.half_width)
        p, k0, h, _ = upper_lattice(law, 1.0, 1e-30, 8)
        x = (k0 + np.arange(p.size)) * h
        var = float(p @ x ** 2)
        g = math.sqrt(2.0 * var * math.log(1.0 / delta) / (self.n * law.gamma))
        return min(self.eps_max(delta), 1.05 * math.log1p(g))



class ScalarBlanketProfile(_ScalarProfile):
    """Blanket upper bound (docs/theory.md §2.11) of a scalar randomizer, min with the local
    divergence of one report."""

    name, label, upper = "blanket_scalar", "privacy blanket, lattice (Balle et al. 2019)", True

    def __init__(self, n: int, st, resolution: int = RESOLUTION):
        super().__init__(n, st, resolution)
        self.law = blanket_law(st.noise, st.half_width)

    def _delta(self, eps, tol):
        local = local_delta(self.structure.noise, self.structure.half_width, eps)
        if local <= tol:
            return local
        return min(local, blanket_delta(self.n, self.law, eps, tol, self.resolution))


class ScalarLowerProfile(_ScalarProfile):
    """Exact attack (docs/theory.md §2.11): user 1 at lo vs hi, every other user at the
    midpoint, the analyst's optimal test on the whole multiset; rounded down."""

    name, label, upper = "lower_scalar", "lower bound: exact attack on the shuffled reports", False

    def __init__(self, n: int, st, resolution: int = RESOLUTION):
        super().__init__(n, st, resolution)
        # others at lo: user 1 at lo vs hi for Laplace, hi vs lo for Gaussian noise (the
        # strongest of attack_laws in bench/continuous.py; any one is a lower bound)
        self.law = attack_laws(st.noise, st.half_width)[2 if st.noise == "laplace" else 1]

    def delta(self, eps: float, tol: float) -> float:
        """The attack's exact delta, rounded down."""
        if eps >= self.eps0:
            return 0.0
        # the cuts may drop more for a lower bound (mass beyond them only moves down)
        return attack_delta(self.n, self.law, eps, max(tol * 1e6, 1e-300), self.resolution)
