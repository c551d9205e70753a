"""Amplification by repeated noise addition: RDP of the n-party noisy sum (docs/theory.md §4).

n parties each add noise from P to a shared sum; one party's contribution moves by s. The
shift-reduction lemma gives ``D_alpha(P^{*n} + s || P^{*n}) <= n D_alpha(P + s/n || P)``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special

from ..core import validate as V
from ..core.limits import array_bytes, check_bytes
from .rdp import check_orders, gaussian_rdp, laplace_rdp

__all__ = ["gaussian_sum_rdp", "laplace_sum_rdp", "shift_rdp", "shift_reduction_rdp",
           "LOGPDF_ARRAYS", "laplace_sum_bytes", "laplace_sum_logpdf", "laplace_sum_exact_rdp"]



def gaussian_sum_rdp(n: int, sigma: float, orders, sensitivity: float = 1.0) -> np.ndarray:
    """n D_alpha(N(s/n, sigma^2) || N(0, sigma^2)) = alpha s^2 / (2 n sigma^2) (tight)."""
    n = V.users(n)
    return n * gaussian_rdp(sigma, orders, sensitivity / n)


def laplace_sum_rdp(n: int, scale: float, orders, sensitivity: float = 1.0) -> np.ndarray:
    """Shift-reduction bound n D_alpha(Lap(s/n, b) || Lap(0, b)) (closed form, docs/theory.md §4)."""
    n = V.users(n)
    return n * laplace_rdp(scale, orders, sensitivity / n)


def shift_rdp(dist, shift: float, orders) -> np.ndarray:
    """D_alpha(P + shift || P) of a scipy.stats continuous law by numerical integration:
    log int p(x - D)^a p(x)^(1-a) dx / (a - 1), integrand formed in log space."""
    if not hasattr(dist, "logpdf"):
        raise TypeError("dist must be a frozen scipy.stats continuous distribution")
    orders = check_orders(orders)
    lo, hi = dist.ppf(1e-15) - abs(shift), dist.ppf(1 - 1e-15) + abs(shift)
    out = []
    for a in orders:
        def f(x, a=a):
            v = a * dist.logpdf(x - shift) + (1 - a) * dist.logpdf(x)
            return math.exp(v) if np.isfinite(v) else 0.0
        val, _ = integrate.quad(f, lo, hi, limit=400, epsabs=0, epsrel=1e-10)
        out.append(math.log(val) / (a - 1))
    return np.array(out)


def shift_reduction_rdp(dist, n: int, orders, sensitivity: float = 1.0) -> np.ndarray:
    """n D_alpha(P + s/n || P) for any scipy.stats continuous law P (docs/theory.md §4)."""
    n = V.users(n)
    return n * shift_rdp(dist, sensitivity / n, orders)


LOGPDF_ARRAYS = 2  # float64 arrays of shape (points, n) alive at once in laplace_sum_logpdf


def laplace_sum_bytes(points: int, n: int) -> int:
    """Peak bytes of laplace_sum_logpdf on ``points`` abscissae: a (points, n) table of terms."""
    return LOGPDF_ARRAYS * array_bytes((points, n), np.float64)


def laplace_sum_logpdf(x: np.ndarray, n: int, scale: float, max_bytes=None) -> np.ndarray:
    """log density of the sum of n iid Laplace(scale) (a difference of two Gamma(n, scale)):
    e^(-|x|/b) / (b 2^(2n-1) (n-1)!) sum_j (2n-2-j)! / (j! (n-1-j)!) (2|x|/b)^j.
    Needs a (len(x), n) table: refused (ValueError with the size) above ``max_bytes``
    (default ``limits.MAX_BYTES``)."""
    n = V.users(n)
    scale = V.positive_finite(scale, "scale")
    x = np.asarray(x, dtype=float)
    check_bytes(laplace_sum_bytes(x.size, n), f"the exact Laplace-sum density ({x.size} points "
                f"x n = {n} terms)", "n (or points)", max_bytes)
    ax = np.abs(x) / scale
    j = np.arange(n)
    log_coef = special.gammaln(2 * n - 1 - j) - special.gammaln(j + 1) - special.gammaln(n - j)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = log_coef[None, :] + j[None, :] * np.log(2 * ax)[:, None]
    terms[:, 0] = log_coef[0]  # (2|x|/b)^0 = 1, also at x = 0
    norm = math.log(scale) + (2 * n - 1) * math.log(2) + special.gammaln(n)
    return special.logsumexp(terms, axis=1) - ax - norm


def laplace_sum_exact_rdp(n: int, scale: float, orders, sensitivity: float = 1.0,
                          points: int = 200001, max_bytes=None) -> np.ndarray:
    """D_alpha(S + s || S) for S the sum of n Laplace(scale) noises, by quadrature on a grid.

    Not a bound: the exact value (to quadrature accuracy), to show how loose the
    shift-reduction bound is. Memory ~ 16 points n bytes: refused (ValueError with the figure,
    naming n) above ``max_bytes`` (default ``limits.MAX_BYTES``) before anything is allocated.
    """
    n = V.users(n)
    scale = V.positive_finite(scale, "scale")
    points = V.integer_at_least(points, "points", 3)
    sensitivity = V.real(sensitivity, "sensitivity")
    if not math.isfinite(sensitivity):
        raise ValueError(f"sensitivity must be finite, got {sensitivity!r}")
    check_bytes(laplace_sum_bytes(points, n), f"the exact Laplace-sum density ({points} points "
                f"x n = {n} terms)", "n (or points)", max_bytes)
    orders = check_orders(orders)
    width = scale * (n + 60.0 * math.sqrt(n) + 60.0) + abs(sensitivity)
    step = 2 * width / (points - 1)
    if abs(sensitivity) >= step:
        # both densities' kinks (at 0 and at s) on grid points, at most `points` of them
        step = abs(sensitivity) / math.floor(abs(sensitivity) / step)
        half = math.ceil(width / step)
        x = np.arange(-half, half + 1) * step
    else:
        x = np.linspace(-width, width, points)
    lp = laplace_sum_logpdf(x - sensitivity, n, scale, max_bytes)
    lq = laplace_sum_logpdf(x, n, scale, max_bytes)
    # self-normalised: divided by the same quadrature of the density itself (1 exactly), so the
    # quadrature error cancels to first order in alpha - 1 and orders near 1 stay accurate
    # (unnormalised, 1 + 1e-7 gave D = -0.03 for n = 1, where the true value is 0.368)
    mq = lq.max()
    log_norm = mq + math.log(np.trapezoid(np.exp(lq - mq), x))
    out = []
    for a in orders:
        v = a * lp + (1 - a) * lq
        m = v.max()
        out.append((m + math.log(np.trapezoid(np.exp(v - m), x)) - log_norm) / (a - 1))
    return np.maximum(np.array(out), 0.0)  # D >= 0: a value a rounding below 0 is 0
