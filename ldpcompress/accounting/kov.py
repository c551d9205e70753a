"""Optimal homogeneous composition of (eps, delta)-DP (Kairouz-Oh-Viswanath, docs/theory.md §3.3).

k-fold composition of (eps, delta)-DP is ((k - 2i) eps, 1 - (1-delta)^k (1 - delta_i))-DP for
i = 0..floor(k/2); delta_i is computed in log space by ``kernels.kov``.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..core import validate as V
from ..core.numerics import SUBNORMAL_ULP
from ..kernels.kov import kov_log_delta_i

__all__ = ["kov_point", "kov_delta", "kov_epsilon"]



def _check(eps: float, delta: float, k: int) -> tuple[float, float, int]:
    return (V.positive_finite(eps, "eps"), V.probability_closed_open(delta, "delta"),
            V.integer_at_least(k, "k", 1, 10 ** 9))


def kov_point(eps: float, delta: float, k: int, i: int) -> tuple[float, float]:
    """The i-th (eps_g, delta_g) point of the optimal composition theorem."""
    eps, delta, k = _check(eps, delta, k)
    if not 0 <= i <= k // 2:
        raise ValueError(f"i must be in [0, {k // 2}], got {i!r}")
    log_di = kov_log_delta_i(k, eps, i)
    if log_di >= 0.0:  # delta_i rounds to 1: the point certifies nothing
        return _times_up(k - 2 * i, eps), 1.0
    tail = math.log1p(-math.exp(log_di)) if log_di > -math.inf else 0.0
    dg = -math.expm1(k * math.log1p(-delta) + tail)
    dg = min(1.0, max(0.0, dg * (1.0 + 1e-12)))
    if delta > 0.0 or log_di > -math.inf:  # delta_g > 0: an underflow is the smallest double
        dg = max(dg, SUBNORMAL_ULP)
    return _times_up(k - 2 * i, eps), dg


def _times_up(m: int, eps: float) -> float:
    """The smallest float >= m * eps (exact rational check): the float product may fall an ulp
    below the true one, and an exact product (one round: m = 1) must stay eps itself."""
    prod = m * eps
    if Fraction(prod) >= m * Fraction(eps):
        return prod
    return math.nextafter(prod, math.inf)


def kov_delta(eps: float, delta: float, k: int, eps_total: float) -> float:
    """Smallest delta_g of a point with eps_g <= eps_total (1.0 when none exists)."""
    eps, delta, k = _check(eps, delta, k)
    eps_total = V.nonnegative(eps_total, "eps_total")
    # eps_g = (k - 2i) eps compared exactly (rounded up): the float product may round below the
    # true one (5 x 0.1 gives 0.5 while the exact product exceeds it), which would certify a
    # point whose eps_g is above eps_total
    if eps_total >= _times_up(k, eps):
        return kov_point(eps, delta, k, 0)[1]
    i = max(0, math.ceil((k - eps_total / eps) / 2.0 - 1e-12))
    while i <= k // 2 and _times_up(k - 2 * i, eps) > eps_total:
        i += 1
    if i > k // 2:
        return 1.0
    return kov_point(eps, delta, k, i)[1]


def kov_epsilon(eps: float, delta: float, k: int, delta_total: float) -> float:
    """Smallest eps_g = (k - 2i) eps whose delta_g <= delta_total (inf when none)."""
    eps, delta, k = _check(eps, delta, k)
    delta_total = V.probability_open(delta_total, "delta")
    if kov_point(eps, delta, k, 0)[1] > delta_total:
        return math.inf
    lo, hi = 0, k // 2  # delta_g increases with i; find the largest feasible i
    if kov_point(eps, delta, k, hi)[1] <= delta_total:
        return kov_point(eps, delta, k, hi)[0]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if kov_point(eps, delta, k, mid)[1] <= delta_total:
            lo = mid
        else:
            hi = mid
    return kov_point(eps, delta, k, lo)[0]
