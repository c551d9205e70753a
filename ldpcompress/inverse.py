"""Inverse queries (SPEC S2.6): which local eps0 may we deploy, how many users do we need."""
from __future__ import annotations

from . import validate as V
from .profiles import GeneralProfile, KRRBlanketProfile, KRRSplitProfile, window_tol
from .solve import largest_feasible, smallest_feasible_int

EPS0_CAP = 60.0
N_CAP = 10 ** 12


def _certified(n: int, eps0: float, eps: float, delta: float, k: int | None) -> bool:
    """True when some sound upper bound gives delta(eps) <= delta for (n, eps0)."""
    if eps >= eps0:
        return True
    tol = window_tol(delta)
    profiles = [GeneralProfile(n, eps0)]
    if k is not None:
        profiles += [KRRSplitProfile(n, eps0, k), KRRBlanketProfile(n, eps0, k)]
    return any(p.delta(eps, tol) <= delta for p in profiles)


def max_eps0(n, eps, delta, *, k=None) -> float:
    """Largest eps0 whose shuffled eps(delta) <= eps (bisection, returns the verified lower end).

    eps0 = eps always qualifies (the output is eps0-DP), so the answer is >= eps.
    """
    n, eps = V.users(n), V.positive_finite(eps, "eps")
    delta = V.probability_open(delta, "delta")
    k = None if k is None else V.domain_size(k)
    return largest_feasible(lambda e0: _certified(n, e0, eps, delta, k), eps, EPS0_CAP)


def min_n(eps0, eps, delta, *, k=None) -> int:
    """Smallest n for which n shuffled eps0-LDP reports are (eps, delta)-DP (galloping search)."""
    eps0, eps = V.positive_finite(eps0, "eps0"), V.positive_finite(eps, "eps")
    delta = V.probability_open(delta, "delta")
    k = None if k is None else V.domain_size(k)
    found = smallest_feasible_int(lambda n: _certified(n, eps0, eps, delta, k), N_CAP)
    if found is None:
        raise ValueError(f"no n <= {N_CAP:.0e} makes eps0={eps0} shuffled reports "
                         f"({eps}, {delta})-DP")
    return found
