"""Inverse queries (FMT21 Sec. 3; docs/theory.md): which local eps0 may we deploy, how many users
do we need.

Both searches certify a candidate with the forward query itself (:func:`certified` calls
``amplification.epsilon`` with the same keyword arguments: k, delta0, blocks, and any future
randomizer description), so an inverse answer and the forward answer at it can never disagree.
"""
from __future__ import annotations

from . import amplification as amp
from . import validate as V
from .solve import largest_feasible, smallest_feasible_int

EPS0_CAP = 60.0
N_CAP = V.MAX_SHUFFLE_N  # the forward query refuses larger n


def certified(n: int, eps0: float, eps: float, delta: float, **forward) -> bool:
    """True when the forward query ``amplification.epsilon(n, eps0, delta, **forward)`` gives a
    sound eps <= the target eps (False when it finds no sound eps at all)."""
    try:
        res = amp.epsilon(n, eps0, delta, lower=False, **forward)
    except ValueError:  # e.g. delta below the Thm 3.8 floor of an approximate-DP randomizer
        return False
    return res.value <= eps


def _forward_kwargs(k, delta0, forward: dict) -> dict:
    """The forward query's randomizer arguments, validated the way the forward query does."""
    kw = dict(forward, k=None if k is None else V.domain_size(k),
              delta0=V.probability_closed_open(delta0, "delta0"))
    if kw["delta0"] > 0.0 and kw["k"] is not None:
        raise ValueError("k and delta0 cannot be combined: k-RR is a pure eps0-DP randomizer")
    return kw


def max_eps0(n, eps, delta, oracle_factory=None, *, k=None, delta0: float = 0.0,
             **forward) -> float:
    """Largest eps0 whose shuffled eps(delta) <= eps, as certified by the forward query with the
    same k / delta0 (doubling then bisection; returns the verified lower end).

    For a pure randomizer eps0 = eps always qualifies (the output is eps0-DP), so the answer is
    >= eps; for an (eps0, delta0)-DP one it does when delta >= delta0 (FMT21 Thm 3.8).

    oracle_factory: a callable eps0 -> frequency oracle (e.g. ``lambda e: PIRappor(1000, e)``):
    the answer is the largest parameter whose oracle, as realised, meets the target by its own
    shuffled bounds (docs/theory.md §2.5); build the oracle to deploy with ``oracle_factory(answer)``.
    """
    n, eps = V.shuffle_users(n), V.positive_finite(eps, "eps")
    delta = V.probability_open(delta, "delta")
    if oracle_factory is not None:
        if k is not None or delta0 != 0.0 or forward:
            raise ValueError("an oracle_factory describes the randomizer: pass it without k, "
                             "delta0 or other randomizer arguments")
        return _max_eps0_oracle(n, eps, delta, oracle_factory)
    kw = _forward_kwargs(k, delta0, forward)
    ok = lambda e0: certified(n, e0, eps, delta, **kw)  # noqa: E731
    if not ok(eps):
        raise ValueError(f"no eps0 >= eps = {eps} is certified for ({eps}, {delta})-DP with "
                         f"delta0 = {kw['delta0']}: delta0 must be <= delta, or the Thm 3.8 "
                         f"term n delta0 (e^eps+1) too large")
    return largest_feasible(ok, eps, EPS0_CAP)


def min_n(eps0, eps, delta, *, k=None, delta0: float = 0.0, **forward) -> int:
    """Smallest n for which n shuffled eps0-LDP reports are (eps, delta)-DP by the forward query
    with the same k / delta0 (galloping search; the answer is verified). With ``oracle=o`` (and
    eps0=None) the reports are those of the frequency oracle o."""
    eps0 = None if eps0 is None and "oracle" in forward else V.local_eps0(eps0)
    eps = V.positive_finite(eps, "eps")
    delta = V.probability_open(delta, "delta")
    kw = _forward_kwargs(k, delta0, forward)
    found = smallest_feasible_int(lambda n: certified(n, eps0, eps, delta, **kw), N_CAP)
    if found is None:
        raise ValueError(f"no n <= {N_CAP:.0e} makes eps0={eps0} shuffled reports "
                         f"({eps}, {delta})-DP")
    return found


def _max_eps0_oracle(n: int, eps: float, delta: float, factory) -> float:
    """Largest parameter e with factory(e) certified; a parameter the factory refuses
    (ValueError: outside the oracle's range) counts as not certified."""
    def ok(e0: float) -> bool:
        try:
            oracle = factory(e0)
        except ValueError:
            return False
        return certified(n, None, eps, delta, oracle=oracle)

    lo = eps
    while not ok(lo):  # e.g. a deletion-DP oracle: its replacement eps0 is twice its parameter
        lo /= 2.0
        if lo < 1e-9:
            raise ValueError(f"no parameter >= 1e-9 of this oracle is certified for "
                             f"({eps}, {delta})-DP with n = {n}")
    return largest_feasible(ok, lo, EPS0_CAP)
