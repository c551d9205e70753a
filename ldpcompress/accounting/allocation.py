"""Campaigns of shuffled rounds with random allocation (docs/theory.md §2.16).

n devices, T rounds; each device secretly and independently picks ``per_device`` of the T
rounds; round t releases the shuffled multiset of the reports of the devices that picked it.
Substitution neighbours (one device's value changes); add/remove is refused: every device
reports, so the total number of reports reveals whether device 1 is present.

What is proved (docs/theory.md §2.16) and used here:

* **One report per device, the same randomizer** (non-adaptive): the rounds are a uniformly
  random, data-independent split of the global multiset of the n reports, and the global
  multiset is their union, so the campaign is exactly as private as ONE shuffled round of n
  devices, whatever T: every one-round bound and attack of the library is the campaign's.
* **One report per device, adaptive rounds** (``randomizers="adaptive"``): the FMT21 clone
  pair at n and the largest eps0 (any eps0-LDP randomizers, or items fed to them, chosen from
  earlier rounds, even items that merge two values); the privacy blankets are not used (their
  proof needs one randomizer, or per-round relabellings of it, in every round), and the attack
  is the one on the same randomizer in every round, one of the adaptive policies.
* **k reports per device**: ``scheme="blocks"`` (one round in each of k consecutive blocks of
  rounds; adaptive allowed) and ``"independent"`` (k rounds drawn with replacement,
  non-adaptive) are the k-fold composition of the one-report campaign; ``"distinct"`` (a
  uniform k-subset of the rounds) is bounded by one shuffled round of n linked k-tuples of
  reports, a (k eps0)-LDP randomizer: the generic bound at k eps0 (sound, loose; the k-fold
  composition is not proved for distinct rounds).

    from ldpcompress.accounting import allocation as AL
    ev = AL.AllocatedShuffledRounds(10**6, rounds=30, oracle=PIRappor(1000, 10.9))
    AL.epsilon(ev, 1e-6)            # AmplificationResult: upper bound and the exact attack
    Accountant().compose(ev)        # composes with every other event
    AL.max_eps0(10**6, 30, 1.0, 1e-6, oracle_factory=lambda e: PIRappor(1000, e))
"""
from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import Callable

import numpy as np

from ..core import validate as V
from ..core.numerics import EXP_MAX
from ..core.progress import compute_time
from ..randomizers.contract import LocalRandomizer
from . import amplification as AMP
from .bounds import AmplificationResult, Bound, best_upper
from .solve import largest_feasible

from .allocation_event import (MAX_CAMPAIGN_ROUNDS, RANDOMIZERS, SCHEMES,  # noqa: F401
                               AllocatedShuffledRounds, check_relation)

__all__ = ["SCHEMES", "RANDOMIZERS", "MAX_CAMPAIGN_ROUNDS", "AllocatedShuffledRounds",
           "check_relation", "epsilon", "delta", "max_eps0", "union_count_delta"]


# ---------------------------------------------------------------------------------------------
# Direct queries: the one-round bounds with their attack (k = 1), else the accountant
# ---------------------------------------------------------------------------------------------

def _one_round_kwargs(ev: AllocatedShuffledRounds) -> dict:
    if ev.oracle is not None:
        return dict(oracle=ev.oracle)
    return dict(eps0=ev.eps0, k=ev.k_rr)


def _query(ev: AllocatedShuffledRounds, query: str, arg: float, lower: bool):
    if not isinstance(ev, AllocatedShuffledRounds):
        raise TypeError(f"expected an AllocatedShuffledRounds event, got {type(ev).__name__}")
    start = compute_time()
    if ev.per_device == 1:
        fn = AMP.epsilon if query == "epsilon" else AMP.delta
        kw = _one_round_kwargs(ev)
        if not ev.adaptive:
            res = fn(ev.n, kw.pop("eps0", None), arg, lower=lower, **kw)
            return replace(res, params=_campaign_params(ev, res.params))
        # adaptive: the generic bounds at the largest eps0; the attack on the same randomizer
        # in every round (one of the adaptive policies) stays a lower bound
        gen = fn(ev.n, ev.round_event.eps0, arg, lower=False)  # type: ignore[attr-defined]
        ups = tuple(b for b in gen.bounds if b.upper)
        lows: tuple = ()
        attack, params = None, gen.params
        if lower:
            same = fn(ev.n, kw.pop("eps0", None), arg, lower=True, **kw)
            lows = tuple(b for b in same.bounds if not b.upper)
            attack, params = same.lower, same.params
        best, value = best_upper(ups)
        return AmplificationResult(query, value, best.name, attack, ups + lows,
                                       _campaign_params(ev, params), compute_time() - start)
    from .accountant import Accountant
    acct = Accountant().compose(ev)
    out = acct.epsilon(arg) if query == "epsilon" else acct.delta(arg)
    label = ("generic bound at k eps0 (linked reports, §2.16)" if ev.linked else
             f"{ev.per_device}-fold composition ({out.method.upper()})")
    note = ("distinct rounds: no composition bound is proved for them; a device reporting "
            "in one round of each of k consecutive blocks (scheme 'blocks') is accounted as "
            "the k-fold composition" if ev.linked else "")
    bounds = [Bound("composition", label, out.value, note=note, seconds=out.seconds)]
    low = None
    if lower and ev.scheme == "blocks":
        one = _query(replace(ev, per_device=1), query, arg, True)
        low = one.lower
        bounds.append(Bound("lower", "lower bound: the attack on one block (§2.16)",
                                low, upper=False))
    if lower and not ev.adaptive and ev.oracle is None:
        union = _union_attack(ev, query, arg)
        bounds.append(Bound("lower_union", "lower bound: the count of one value over all "
                                "rounds (§2.16)", union, upper=False))
        low = union if low is None else max(low, union)
    elif lower and low is None:
        bounds.append(Bound("lower", "lower bound", None, upper=False,
                                note=f"no attack for an oracle or adaptive rounds with scheme "
                                     f"{ev.scheme!r} and k > 1"))
    e0 = ev.local_eps0 if math.isfinite(ev.local_eps0) else None
    given = {"delta" if query == "epsilon" else "eps": arg}
    params = _campaign_params(ev, dict(n=ev.n, eps0=e0, k=ev.k_rr, delta0=0.0, **given))
    return AmplificationResult(query, out.value, "composition", low, tuple(bounds), params,
                                   compute_time() - start)


def union_count_delta(n: int, k: int, p: float, q: float, eps: float) -> float:
    """Hockey-stick divergence, both directions, of Bin(k(n-1), q) + Bin(k, p) against
    Bin(kn, q) at eps: the count of one output value over all rounds when device 1 (k reports,
    each that value with probability p) differs from the others (probability q), a
    post-processing of every campaign of one randomizer (docs/theory.md §2.16). Rounded down
    past the log-pmfs' error (a lower bound); counts beyond 40 standard deviations dropped."""
    from scipy.stats import binom
    m = k * n
    sd = math.sqrt(m * q * (1 - q)) + 1.0
    lo, hi = max(0, int(m * q - 40 * sd) - k), min(m, int(m * q + 40 * sd) + k)
    c = np.arange(lo, hi + 1)
    log_q = binom.logpmf(c, m, q)
    own = binom.pmf(np.arange(k + 1), k, p)
    log_p = np.logaddexp.reduce(
        [math.log(own[j]) + binom.logpmf(c - j, m - k, q) for j in range(k + 1) if own[j] > 0],
        axis=0)
    best = 0.0
    for a, b in ((log_p, log_q), (log_q, log_p)):
        gap = -np.expm1(b + eps - a)  # 1 - e^(eps + b - a), where positive
        best = max(best, float(np.sum(np.exp(a) * np.clip(gap, 0.0, None))))
    # each term's log-ratio is off by ~1e-12 at most: its error is below e^eps 1e-12 Q(c)
    return max(0.0, best * (1 - 1e-9) - 1e-10 * (1.0 + math.exp(eps)))


def _union_attack(ev: AllocatedShuffledRounds, query: str, arg: float) -> float:
    """The union-count attack of :func:`union_count_delta` on binary RR (eps0 alone) or k-RR,
    rounded down: delta at eps, or the largest eps whose delta it shows above the target."""
    assert ev.eps0 is not None
    e0 = ev.eps0
    z = math.exp(-e0) * ((ev.k_rr or 2) - 1) + 1.0  # Z e^-eps0, Z = e^eps0 + K - 1
    p, q = 1.0 / z, math.exp(-e0) / z
    k = ev.per_device

    def dl(e: float) -> float:
        return union_count_delta(ev.n, k, p, q, e)
    if query == "delta":
        return dl(arg)
    if not dl(0.0) > arg:
        return 0.0
    return largest_feasible(lambda e: dl(e) > arg, 0.0, k * e0, rtol=1e-6)


def _campaign_params(ev: AllocatedShuffledRounds, params: dict) -> dict:
    return dict(params, rounds=ev.rounds, per_device=ev.per_device,
                scheme=ev.scheme if ev.per_device > 1 else None, randomizers=ev.randomizers)


def epsilon(ev: AllocatedShuffledRounds, delta: float, lower: bool = True):
    """eps at delta of the campaign: for one report per device the one-round query at n (its
    bounds valid for the campaign, and its attack), for k > 1 the accountant's composition
    (with the attack on one block for scheme='blocks')."""
    return _query(ev, "epsilon", V.probability_open(delta, "delta"), lower)


def delta(ev: AllocatedShuffledRounds, eps: float, lower: bool = True):
    """delta at eps of the campaign (see :func:`epsilon`)."""
    return _query(ev, "delta", V.nonnegative(eps, "eps"), lower)


# ---------------------------------------------------------------------------------------------
# Inverse: the largest eps0 (or oracle parameter) whose campaign meets (eps, delta)
# ---------------------------------------------------------------------------------------------

def max_eps0(n, rounds, eps, delta, *, per_device=1, scheme: str = "distinct",
             randomizers: str = "same", k_rr=None,
             oracle_factory: Callable[[float], LocalRandomizer] | None = None) -> float:
    """Largest eps0 (or parameter of ``oracle_factory``) whose campaign is certified
    (eps, delta)-DP by :func:`epsilon`. With one report per device and the same randomizer in
    every round this is the one-round inverse at n (docs/theory.md §2.10), the number of rounds
    playing no part; otherwise a doubling-then-bisection search on the campaign's own forward
    query (the verified lower end is returned)."""
    eps = V.positive_finite(eps, "eps")
    delta = V.probability_open(delta, "delta")
    probe = functools.partial(AllocatedShuffledRounds, n, rounds, per_device, scheme,
                              randomizers=randomizers)
    # validates n, rounds, per_device, scheme, randomizers (a cheap event: eps0 = 1)
    AllocatedShuffledRounds(n, rounds, per_device, scheme, eps0=1.0, randomizers=randomizers)
    if oracle_factory is not None and k_rr is not None:
        raise ValueError("give k_rr (k-RR at eps0) or oracle_factory, not both")
    simple = V.integer_at_least(per_device, "per_device", 1, MAX_CAMPAIGN_ROUNDS) == 1 and (
        randomizers == "same" or (oracle_factory is None and k_rr is None))
    if simple:
        from . import inverse
        return inverse.max_eps0(n, eps, delta, oracle_factory, k=k_rr)

    def event(e0: float):
        if oracle_factory is not None:
            return probe(oracle=oracle_factory(e0))
        return probe(eps0=e0, k_rr=k_rr)

    def ok(e0: float) -> bool:
        try:
            ev = event(e0)
        except ValueError:  # outside the randomizer's range (or k eps0 above the cap)
            return False
        return epsilon(ev, delta, lower=False).value <= eps

    lo = eps / max(1, V.integer_at_least(per_device, "per_device", 1, MAX_CAMPAIGN_ROUNDS))
    while not ok(lo):
        lo /= 2.0
        if lo < 1e-9:
            raise ValueError(f"no eps0 >= 1e-9 is certified for ({eps}, {delta})-DP with this "
                             "campaign")
    return largest_feasible(ok, lo, EXP_MAX)
