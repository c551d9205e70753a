"""Shuffled reports of an approximate-DP local randomizer ((eps0, delta0)-DP, FMT21 Thm 3.8,
docs/theory.md §2.1-2.3): the clone pair's delta plus (e^eps + 1)(1 + e^-eps0/2) n delta0."""
from __future__ import annotations

import math

from ..core import validate as V
from ..core.numerics import EXP_MAX
from ..core.progress import compute_time
from .bounds import Bound
from .profiles import GeneralProfile, window_tol
from .rounding import round_up
from .solve import epsilon_for_delta, golden_min

__all__ = ["APPROX_LABEL", "approx_extra_delta", "approx_delta", "approx_delta_of",
           "approx_epsilon", "approx_epsilon_of"]


APPROX_LABEL = "approximate-DP randomizer (FMT21 Thm 3.8)"


def approx_extra_delta(n: int, eps0: float, delta0: float, eps: float) -> float:
    """The term FMT21 Thm 3.8 adds for delta0 > 0: (e^eps + 1)(1 + e^-eps0/2) n delta0 (inf when
    e^eps leaves the double range and delta0 > 0). Arguments already validated."""
    if eps > EXP_MAX:  # the term exceeds any delta < 1 unless delta0 = 0
        return math.inf if delta0 > 0.0 else 0.0
    return (math.exp(eps) + 1.0) * (1.0 + 0.5 * math.exp(-eps0)) * n * delta0


def approx_delta(n, eps0, delta0, eps) -> Bound:
    """delta(eps) = pair delta(eps) + (e^eps + 1)(1 + e^-eps0/2) n delta0 (docs/theory.md §2.1-2.3), and
    at most delta0 once eps >= eps0 (one report is (eps0, delta0)-DP)."""
    n, eps0 = V.shuffle_users(n), V.local_eps0(eps0)
    delta0 = V.probability_closed_open(delta0, "delta0")
    return approx_delta_of(n, eps0, delta0, V.nonnegative(eps, "eps"))


def approx_delta_of(n: int, eps0: float, delta0: float, eps: float) -> Bound:
    """approx_delta of validated arguments (the queries validate once, then call this)."""
    prof = GeneralProfile(n, eps0)
    value = min(1.0, round_up(prof.delta_at(eps) + approx_extra_delta(n, eps0, delta0, eps)))
    if eps >= eps0:
        value = min(value, delta0)
    return Bound("approx", APPROX_LABEL, value)


def approx_epsilon(n, eps0, delta0, delta) -> Bound:
    """Smallest eps with pair delta(eps) + extra(eps) <= delta (convex in e^eps: the minimiser
    is found first, then the decreasing branch is solved); eps0 if delta >= delta0 is smaller."""
    n, eps0 = V.shuffle_users(n), V.local_eps0(eps0)
    delta0 = V.probability_closed_open(delta0, "delta0")
    return approx_epsilon_of(n, eps0, delta0, V.probability_open(delta, "delta"))


def approx_epsilon_of(n: int, eps0: float, delta0: float, delta: float) -> Bound:
    """approx_epsilon of validated arguments (the queries validate once, then call this)."""
    start = compute_time()
    prof = GeneralProfile(n, eps0)
    tol = window_tol(delta)
    total = lambda e: prof.delta(e, tol) + approx_extra_delta(n, eps0, delta0, e)
    x_min, _ = golden_min(total, 0.0, eps0)  # the minimiser of the convex total on [0, eps0]
    candidates = []
    if total(x_min) <= delta:
        candidates.append(epsilon_for_delta(total, delta, x_min, upper=True))
    if delta >= delta0:
        candidates.append(eps0)
    secs = compute_time() - start
    if not candidates:
        return Bound("approx", APPROX_LABEL, None, seconds=secs,
                     note="delta is below delta0 and below the Thm 3.8 floor "
                          f"{total(x_min):.3g}")
    return Bound("approx", APPROX_LABEL, min(candidates), seconds=secs)
