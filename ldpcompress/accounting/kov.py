"""Optimal homogeneous composition of (eps, delta)-DP (Kairouz-Oh-Viswanath, docs/theory.md §3.3),
and the KOV backend: ``approx_dp(event)``, each event as an (eps, delta)-DP pair.

k-fold composition of (eps, delta)-DP is ((k - 2i) eps, 1 - (1-delta)^k (1 - delta_i))-DP for
i = 0..floor(k/2); delta_i is computed in log space by ``kernels.kov``.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

from ..core import validate as V
from ..core.numerics import EXP_MAX, SUBNORMAL_ULP, UNIT_ROUNDOFF
from ..kernels.kov import kov_log_delta_i
from ..randomizers.scalar import ScalarStructure
from . import event_profiles as EP
from .events import (ApproxDP, Event, KRRShuffledRound, OracleShuffledRound, PoissonSampledLaplace,
                     PureDP, ShuffledRound, ShuffledSGDPass)

__all__ = ["kov_point", "kov_delta", "kov_epsilon", "approx_dp", "supports"]


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


# -- the KOV backend: each event as an (eps, delta)-DP pair ------------------------------------

@functools.singledispatch
def approx_dp(event: Event) -> tuple[float, float] | None:
    """The event as an (eps, delta)-DP guarantee for KOV composition, None when it has none.

    Parameters
    ----------
    event : Event
        The mechanism.
    """
    return None  # not an (eps, delta) event for KOV


def supports(event: Event) -> bool:
    """Whether the event is an (eps, delta)-DP pair KOV composes."""
    return approx_dp(event) is not None


def _shuffled_pure(event) -> tuple[float, float]:
    """The shuffled output is eps0-DP (post-processing of user 1's eps0-DP report), so KOV
    composition applies and caps T rounds at T eps0 (FMT21; docs/theory.md)."""
    return event.eps0, 0.0


approx_dp.register(ShuffledRound, _shuffled_pure)
approx_dp.register(KRRShuffledRound, _shuffled_pure)


def _oracle_shuffled_round_approx_dp(event):
    st = event.structure
    if isinstance(st, ScalarStructure) and not math.isfinite(st.eps0):
        return None  # Gaussian noise: no pure eps0 for KOV
    return event.eps0, 0.0


approx_dp.register(OracleShuffledRound, _oracle_shuffled_round_approx_dp)


def _shuffled_sgdpass_approx_dp(event):
    return event.eps0, event.delta0


approx_dp.register(ShuffledSGDPass, _shuffled_sgdpass_approx_dp)


def _pure_dp_approx_dp(event):
    return event.eps, 0.0


approx_dp.register(PureDP, _pure_dp_approx_dp)


def _approx_dp_approx_dp(event):
    return event.eps, event.delta


approx_dp.register(ApproxDP, _approx_dp_approx_dp)


def _poisson_sampled_laplace_approx_dp(event):
    """(largest loss of either direction, rounded up, 0): remove's is
    log(1 - q + q e^(1/b)) = log1p(q expm1(1/b)), add's -log1p(q expm1(-1/b)), smaller."""
    b = EP.noise_scale(event)
    if 1.0 / b > EXP_MAX:
        return None  # e^(1/b) overflows; the PLD and RDP still answer
    eps = math.log1p(event.q * math.expm1(1.0 / b))
    return min(eps * (1.0 + 8.0 * UNIT_ROUNDOFF) + 1e-300, EXP_MAX), 0.0


approx_dp.register(PoissonSampledLaplace, _poisson_sampled_laplace_approx_dp)


def _sampled(event):
    cap = EP.sampled_cap(event)
    return (cap, 0.0) if math.isfinite(cap) else None


for _cls in EP.SAMPLED_ROUNDS:
    approx_dp.register(_cls, _sampled)
