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
  pair at n and the largest eps0 (any eps0-LDP randomizers, chosen from earlier rounds), and
  for a binary-support oracle fed a per-round item chosen from earlier rounds its privacy
  blanket at n; k-RR's split pair and the scalar randomizers' lattice blanket are not used.
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
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..core import validate as V
from ..core.numerics import EXP_MAX
from ..randomizers.contract import LocalRandomizer
from ..randomizers.scalar import ScalarStructure
from . import amplification as AMP
from . import blanket as BL
from . import pld as P
from .events import (DOTS_TOL, BLANKET_DOTS_TOL, EVENTS, Event, KRRShuffledRound,
                     OracleShuffledRound, ShuffledRound)
from .profiles import GeneralProfile, KRRBlanketProfile
from .solve import largest_feasible

__all__ = ["SCHEMES", "RANDOMIZERS", "MAX_CAMPAIGN_ROUNDS", "AllocatedShuffledRounds",
           "AdaptiveKRRRound", "check_relation", "epsilon", "delta", "max_eps0"]

SCHEMES = ("distinct", "blocks", "independent")
RANDOMIZERS = ("same", "adaptive")
MAX_CAMPAIGN_ROUNDS = 10 ** 9  # the accountant's limit on composed rounds
# bounds of a one-round query that assume the same randomizer on the same input in every round
NOT_ADAPTIVE = ("krr_split", "blanket_scalar")
# fields whose default is more private than other values: a saved ledger must state them
_IN_FILE = {"ledger": "required"}


def check_relation(relation) -> str:
    """Only substitution is finite: under add/remove every device reports, so the number of
    reports (n or n - 1) reveals whether device 1 is present (delta = 1 at every eps)."""
    if relation in (None, "substitution"):
        return "substitution"
    if relation in ("add_remove", "add/remove"):
        raise ValueError("relation: allocated shuffled rounds are accounted for 'substitution' "
                         "only: every device reports, so the total number of reports (n or "
                         "n - 1) reveals whether device 1 is present (add/remove has delta = 1 "
                         "at every eps)")
    raise ValueError(f"relation must be 'substitution', got {relation!r}")


@dataclass(frozen=True)
class AdaptiveKRRRound(KRRShuffledRound):
    """k-RR rounds whose items are chosen from earlier rounds: the generic pair and k-RR's
    privacy blanket (its §2.4(b) tables, or the pair kernel of §2.5 where they are too large),
    without the split pair of §2.4(a) (docs/theory.md §2.16). An internal event: ledgers store
    the campaign (:class:`AllocatedShuffledRounds`), never this."""

    def _profile(self):
        general = GeneralProfile(self.n, self.eps0)
        table = KRRBlanketProfile(self.n, self.eps0, self.k)
        own = table if table.unsupported() is None else BL.KRRPairProfile(self.n, self.eps0,
                                                                           self.k)
        return lambda e: min(general.delta(e, DOTS_TOL), own.delta(e, BLANKET_DOTS_TOL))


@dataclass(frozen=True)
class AllocatedShuffledRounds(Event):
    """A campaign of ``rounds`` shuffled rounds over n devices, each device reporting in
    ``per_device`` rounds chosen secretly (docs/theory.md §2.16).

    The randomizer: ``eps0`` alone (any eps0-LDP randomizers, which may differ from round to
    round and be chosen from earlier rounds: give the largest eps0), ``eps0`` with ``k_rr``
    (k-ary randomized response), or ``oracle`` (any randomizer of the library, by its realised
    law). ``randomizers="same"``: that randomizer, on each device's value, in every round;
    ``"adaptive"``: the randomizer is fed a per-round item chosen from the earlier rounds'
    outputs (only the bounds proved for that are used). ``scheme`` says how a device picks
    its k > 1 rounds (``"distinct"``, ``"blocks"``, ``"independent"``; ignored for k = 1).
    Substitution neighbours only (``relation``: add/remove is refused, see check_relation).
    """

    n: int
    rounds: int
    per_device: int = field(default=1, metadata=_IN_FILE)
    scheme: str = field(default="distinct", metadata=_IN_FILE)
    eps0: float | None = None
    k_rr: int | None = None
    oracle: LocalRandomizer | None = None
    randomizers: str = field(default="same", metadata=_IN_FILE)
    relation: str = "substitution"  # type: ignore[assignment]  (a field here)
    points: int = 120

    def __post_init__(self):
        object.__setattr__(self, "n", V.shuffle_users(self.n))
        rounds = V.integer_at_least(self.rounds, "rounds", 1, MAX_CAMPAIGN_ROUNDS)
        object.__setattr__(self, "rounds", rounds)
        object.__setattr__(self, "per_device",
                           V.integer_at_least(self.per_device, "per_device", 1, rounds))
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {self.scheme!r}")
        if self.randomizers not in RANDOMIZERS:
            raise ValueError(f"randomizers must be one of {RANDOMIZERS}, got "
                             f"{self.randomizers!r}")
        object.__setattr__(self, "relation", check_relation(self.relation))
        object.__setattr__(self, "points", V.integer_at_least(self.points, "points", 8, 10**5))
        if self.oracle is not None:
            if self.eps0 is not None or self.k_rr is not None:
                raise ValueError("an oracle states its own (realised) eps0 and domain: give "
                                 "oracle= alone, or eps0= (with k_rr= for k-RR)")
            BL.structure(self.oracle)  # TypeError for anything that is not a randomizer
        else:
            if self.eps0 is None:
                raise ValueError("give eps0= (any eps0-LDP randomizer; with k_rr= for k-RR) or "
                                 "oracle=")
            object.__setattr__(self, "eps0", V.local_eps0(self.eps0, "eps0"))
            if self.k_rr is not None:
                object.__setattr__(self, "k_rr", V.domain_size(self.k_rr))
        if self.adaptive and self.per_device > 1 and self.scheme != "blocks":
            raise ValueError(f"scheme={self.scheme!r} with randomizers='adaptive': a device's "
                             "reports in several rounds are accounted as a composition only "
                             "when each lies in its own consecutive block of rounds (scheme="
                             "'blocks'); with rounds drawn independently or distinct the "
                             "rounds' randomizers would depend on the same device's other "
                             "reports")
        self.round_event  # builds and checks the one-round event (e.g. a Gaussian: no eps0)

    # -- what the campaign is accounted as -------------------------------------------------
    @property
    def adaptive(self) -> bool:
        return self.randomizers == "adaptive"

    @property
    def linked(self) -> bool:
        """k > 1 distinct rounds: one round of n linked k-tuples (docs/theory.md §2.16)."""
        return self.per_device > 1 and self.scheme == "distinct"

    @property
    def times(self) -> int:
        """How many times the one-report event is composed: k for blocks and independent."""
        return 1 if self.linked else self.per_device

    @functools.cached_property
    def local_eps0(self) -> float:
        """The randomizer's replacement eps0 as the bounds use it (realised, rounded up); inf
        for Gaussian noise."""
        if self.oracle is None:
            assert self.eps0 is not None
            return self.eps0 if self.k_rr is None else BL.krr_structure(self.k_rr,
                                                                        self.eps0).eps0
        st = BL.structure(self.oracle)
        return self.oracle.replacement_eps if st is None else st.eps0

    @functools.cached_property
    def round_event(self) -> Event:
        """The one-round event the campaign is accounted by (composed ``times`` times)."""
        if self.linked:
            e0 = self.per_device * self.local_eps0
            if not e0 <= EXP_MAX:
                raise ValueError(f"per_device: {self.per_device} distinct rounds are accounted "
                                 f"as one round of a (k eps0 = {e0:.4g})-LDP randomizer, above "
                                 f"the supported {EXP_MAX:g}; use scheme='blocks'")
            return ShuffledRound(self.n, e0, points=self.points)
        if self.oracle is None:
            assert self.eps0 is not None
            if self.k_rr is None:
                return ShuffledRound(self.n, self.eps0, points=self.points)
            cls = AdaptiveKRRRound if self.adaptive else KRRShuffledRound
            return cls(self.n, self.eps0, self.k_rr, points=self.points)
        st = BL.structure(self.oracle)
        if not self.adaptive or (st is not None and not isinstance(st, ScalarStructure)
                                 and st.krr_k is None):
            return OracleShuffledRound(self.n, self.oracle, points=self.points)
        if st is not None and not isinstance(st, ScalarStructure):  # k-RR's structure
            return AdaptiveKRRRound(self.n, st.eps0, st.krr_k, points=self.points)
        if not self.local_eps0 <= EXP_MAX:
            raise ValueError(f"{self.oracle.describe()} has no finite eps0: with "
                             "randomizers='adaptive' only the generic bound applies (its "
                             "lattice blanket assumes the same input in every round)")
        return ShuffledRound(self.n, V.local_eps0(self.local_eps0), points=self.points)

    # -- the Event interface ---------------------------------------------------------------
    def pld(self, h, rounding):
        one = self.round_event.pld(h, rounding)
        return one if one is None or self.times == 1 else one.self_compose(self.times)

    def rdp(self, orders):
        r = self.round_event.rdp(orders)
        return None if r is None else np.asarray(r, dtype=float) * self.times

    def approx_dp(self):
        pair = self.round_event.approx_dp()
        if pair is None or pair[1] != 0.0:
            return None
        return pair[0] * self.times, 0.0  # basic composition of pure DP


EVENTS[AllocatedShuffledRounds.__name__] = AllocatedShuffledRounds


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
    start = time.perf_counter()
    if ev.per_device == 1:
        fn = AMP.epsilon if query == "epsilon" else AMP.delta
        kw = _one_round_kwargs(ev)
        res = fn(ev.n, kw.pop("eps0", None), arg, lower=lower, **kw)
        if not ev.adaptive:
            return replace(res, params=_campaign_params(ev, res.params))
        bounds = tuple(b for b in res.bounds if b.name not in NOT_ADAPTIVE)
        best, value = AMP.best_upper(bounds)
        return AMP.AmplificationResult(query, value, best.name, res.lower, bounds,
                                       _campaign_params(ev, res.params), res.seconds)
    from .accountant import Accountant  # the accountant imports the events: not at load time
    acct = Accountant().compose(ev)
    out = acct.epsilon(arg) if query == "epsilon" else acct.delta(arg)
    label = ("generic bound at k eps0 (linked reports, §2.16)" if ev.linked else
             f"{ev.per_device}-fold composition ({out.method.upper()})")
    note = ("distinct rounds: no composition bound is proved for them; a device reporting "
            "in one round of each of k consecutive blocks (scheme 'blocks') is accounted as "
            "the k-fold composition" if ev.linked else "")
    bounds = [AMP.Bound("composition", label, out.value, note=note, seconds=out.seconds)]
    low = None
    if lower and ev.scheme == "blocks":
        one = _query(replace(ev, per_device=1), query, arg, True)
        low = one.lower
        bounds.append(AMP.Bound("lower", "lower bound: the attack on one block (§2.16)",
                                low, upper=False))
    elif lower:
        bounds.append(AMP.Bound("lower", "lower bound", None, upper=False,
                                note=f"no attack for scheme {ev.scheme!r} with k > 1"))
    e0 = ev.local_eps0 if math.isfinite(ev.local_eps0) else None
    given = {"delta" if query == "epsilon" else "eps": arg}
    params = _campaign_params(ev, dict(n=ev.n, eps0=e0, k=ev.k_rr, delta0=0.0, **given))
    return AMP.AmplificationResult(query, out.value, "composition", low, tuple(bounds), params,
                                   time.perf_counter() - start)


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
