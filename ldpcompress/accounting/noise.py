"""Amplification by repeated noise addition: RDP of the n-party noisy sum (docs/theory.md §4).

n parties each add noise from P to a shared sum; one party's contribution moves by s. The
shift-reduction lemma gives ``D_alpha(P^{*n} + s || P^{*n}) <= n D_alpha(P + s/n || P)``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from ..core import validate as V
from ..core.limits import array_bytes, check_bytes
from ..kernels import laplace_sum as _ls
from .rdp import check_orders, gaussian_rdp, laplace_rdp

__all__ = ["gaussian_sum_rdp", "laplace_sum_rdp", "shift_rdp", "shift_reduction_rdp",
           "EXACT_ARRAYS", "MAX_EXACT_TERMS", "laplace_sum_bytes", "laplace_sum_terms",
           "check_laplace_sum_cost", "laplace_sum_logpdf", "laplace_sum_exact_rdp"]



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


EXACT_ARRAYS = 5  # float64 arrays of ``points`` alive at once: grid (+ its temporary), lp, lq
MAX_EXACT_TERMS = 4e9  # terms of the exact Laplace-sum densities one query may sum (~10 s)


def laplace_sum_bytes(points: int) -> int:
    """Peak bytes of laplace_sum_exact_rdp on ``points`` abscissae: the grid (and the temporary
    it is built from) and the two log-densities; the densities are summed in a kernel, term by
    term, whatever n."""
    return EXACT_ARRAYS * array_bytes(points, np.float64)


def laplace_sum_terms(points: int, n: int) -> int:
    """At most how many terms laplace_sum_exact_rdp sums: two densities on ``points``
    abscissae, each at most min(n, 29 sqrt(n) + 4) terms (``kernels.laplace_sum``)."""
    per_point = min(n, _ls.MAX_TERMS_PER_SQRT_N * math.isqrt(n) + _ls.MAX_TERMS_PER_SQRT_N + 4)
    return 2 * points * per_point


def check_laplace_sum_cost(points: int, n: int, max_bytes=None,
                           max_terms: float = MAX_EXACT_TERMS) -> None:
    """Refuse (ValueError with the figures, naming n) an exact Laplace-sum query whose memory
    or number of terms exceeds the limits, before anything is allocated."""
    what = f"the exact Laplace-sum column ({points} points x n = {n} noises)"
    check_bytes(laplace_sum_bytes(points), what, "points", max_bytes)
    terms = laplace_sum_terms(points, n)
    if terms > max_terms:
        raise ValueError(f"{what} would sum up to {terms:.3g} density terms, above the limit of "
                         f"{max_terms:.3g} (about 10 s): reduce n (the shift-reduction bound "
                         "needs no such sum)")


def laplace_sum_logpdf(x: np.ndarray, n: int, scale: float, max_bytes=None) -> np.ndarray:
    """log density of the sum of n iid Laplace(scale) (a difference of two Gamma(n, scale)):
    e^(-|x|/b) / (b 2^(2n-1) (n-1)!) sum_j (2n-2-j)! / (j! (n-1-j)!) (2|x|/b)^j, summed from its
    largest term outwards in ``kernels.laplace_sum`` (O(sqrt(n)) terms per point, no table).
    Memory: x as float64 and the result (refused above ``max_bytes``, default
    ``limits.MAX_BYTES``)."""
    n = V.users(n)
    scale = V.positive_finite(scale, "scale")
    check_bytes(2 * array_bytes(np.size(x), np.float64), f"the exact Laplace-sum density "
                f"({np.size(x)} points)", "the number of points", max_bytes)
    x = np.ascontiguousarray(x, dtype=float)
    out = np.empty(x.shape, dtype=float)
    _ls.laplace_sum_logpdf_into(x.reshape(-1), 0.0, scale, n, out.reshape(-1))
    return out


def laplace_sum_exact_rdp(n: int, scale: float, orders, sensitivity: float = 1.0,
                          points: int = 200001, max_bytes=None,
                          max_terms: float = MAX_EXACT_TERMS) -> np.ndarray:
    """D_alpha(S + s || S) for S the sum of n Laplace(scale) noises, by quadrature on a grid.

    Not a bound: the exact value (to quadrature accuracy), to show how loose the
    shift-reduction bound is. Memory ``laplace_sum_bytes(points)`` (~40 bytes a point, whatever
    n) and work ``laplace_sum_terms(points, n)`` (O(points sqrt(n))): refused (ValueError with
    the figures) above ``max_bytes`` (default ``limits.MAX_BYTES``) or ``max_terms`` before
    anything is allocated.
    """
    n = V.users(n)
    scale = V.positive_finite(scale, "scale")
    points = V.integer_at_least(points, "points", 3)
    sensitivity = V.real(sensitivity, "sensitivity")
    if not math.isfinite(sensitivity):
        raise ValueError(f"sensitivity must be finite, got {sensitivity!r}")
    check_laplace_sum_cost(points, n, max_bytes, max_terms)
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
        step = float(x[1] - x[0])
    lp, lq = np.empty_like(x), np.empty_like(x)
    _ls.laplace_sum_logpdf_into(x, sensitivity, scale, n, lp)
    _ls.laplace_sum_logpdf_into(x, 0.0, scale, n, lq)
    # self-normalised: divided by the same quadrature of the density itself (1 exactly), so the
    # quadrature error cancels to first order in alpha - 1 and orders near 1 stay accurate
    # (unnormalised, 1 + 1e-7 gave D = -0.03 for n = 1, where the true value is 0.368)
    log_norm = _ls.log_trapezoid_mix(lp, lq, 0.0, step)
    out = [(_ls.log_trapezoid_mix(lp, lq, float(a), step) - log_norm) / (a - 1) for a in orders]
    return np.maximum(np.array(out), 0.0)  # D >= 0: a value a rounding below 0 is 0
