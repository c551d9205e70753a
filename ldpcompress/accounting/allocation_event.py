"""The random-allocation campaign event (docs/theory.md §2.16): its fields and checks and its
registrations with the accounting backends (PLD, Renyi, approximate DP, plan cost). The direct
queries over it (epsilon, delta, max_eps0) are in ``accounting.allocation``, which imports the
accountant; the accountant imports this module only, so the two do not import each other."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core import validate as V
from ..core.numerics import EXP_MAX
from ..randomizers.contract import LocalRandomizer
from . import blanket as BL
from . import event_pld as EPLD
from . import event_rdp as ERDP
from . import plan as PL
from .events import EVENTS, Event, KRRShuffledRound, OracleShuffledRound, ShuffledRound
from .kov import approx_dp
from .rounding import fraction_up

__all__ = ["SCHEMES", "RANDOMIZERS", "MAX_CAMPAIGN_ROUNDS", "AllocatedShuffledRounds",
           "check_relation"]

SCHEMES = ("distinct", "blocks", "independent")
RANDOMIZERS = ("same", "adaptive")
MAX_CAMPAIGN_ROUNDS = 10 ** 9  # the accountant's limit on composed rounds


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

    Parameters
    ----------
    n : int
        Devices.
    rounds : int
        Shuffled rounds of the campaign.
    per_device : int, default 1
        Rounds each device reports in, in [1, rounds].
    scheme : {"distinct", "blocks", "independent"}, default "distinct"
        How a device picks its rounds (ignored for per_device = 1).
    eps0 : float, optional
        The randomizers' largest replacement eps (not with ``oracle``).
    k_rr : int, optional
        With eps0: the randomizer is k-ary randomized response on k_rr items.
    oracle : LocalRandomizer, optional
        The randomizer, accounted by its realised law (instead of eps0).
    randomizers : {"same", "adaptive"}, default "same"
        One randomizer on each device's value in every round, or a per-round item chosen from
        the earlier rounds' outputs.
    relation : str, default "substitution"
        The neighbouring relation (add/remove is refused).
    points : int, default 120
        Profile evaluations of the connect-the-dots PLD (8 to 1e5).
    """

    n: int
    rounds: int
    per_device: int = 1
    scheme: str = "distinct"
    eps0: float | None = None
    k_rr: int | None = None
    oracle: LocalRandomizer | None = None
    randomizers: str = "same"
    relation: str = "substitution"  # a field here (a class constant in most events)
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
        if self.adaptive:  # the generic pair at the largest eps0 (docs/theory.md §2.16)
            if not self.local_eps0 <= EXP_MAX:
                desc = "this randomizer" if self.oracle is None else self.oracle.describe()
                raise ValueError(f"{desc} has no finite eps0: with randomizers='adaptive' only "
                                 "the generic bound applies (the blankets and the scalar "
                                 "randomizers' lattice assume one randomizer in every round)")
            # k-RR at eps0 is eps0-LDP: its eps0 as given (the realised one is rounded up for
            # its exact tables), so dropping k_rr from a ledger cannot lower the bound
            e0 = self.local_eps0 if self.eps0 is None else self.eps0
            return ShuffledRound(self.n, V.local_eps0(e0), points=self.points)
        if self.oracle is None:
            assert self.eps0 is not None
            if self.k_rr is None:
                return ShuffledRound(self.n, self.eps0, points=self.points)
            return KRRShuffledRound(self.n, self.eps0, self.k_rr, points=self.points)
        return OracleShuffledRound(self.n, self.oracle, points=self.points)


EVENTS[AllocatedShuffledRounds.__name__] = AllocatedShuffledRounds


# -- the campaign's accounting, registered with the backends: the one-round event's, composed
# ``times`` times ----------------------------------------------------------------------------

def _allocated_shuffled_rounds_work(event, h, orders):
    """The one-round event's cost (its self-composition is a few FFTs more)."""
    return PL.work(event.round_event, h, orders)


PL.work.register(AllocatedShuffledRounds, _allocated_shuffled_rounds_work)


def _allocated_shuffled_rounds_pld(event, h, rounding):
    one = EPLD.pld(event.round_event, h, rounding)
    return one if one is None or event.times == 1 else one.self_compose(event.times)


EPLD.pld.register(AllocatedShuffledRounds, _allocated_shuffled_rounds_pld)


def _allocated_shuffled_rounds_rdp(event, orders):
    r = ERDP.rdp(event.round_event, orders)
    return None if r is None else np.asarray(r, dtype=float) * event.times


ERDP.rdp.register(AllocatedShuffledRounds, _allocated_shuffled_rounds_rdp)


def _allocated_shuffled_rounds_approx_dp(event):
    pair = approx_dp(event.round_event)
    if pair is None or pair[1] != 0.0:
        return None
    # basic composition of pure DP, the product formed exactly and rounded up (the "pure"
    # method reads delta = 0 from this eps on)
    return fraction_up(Fraction(pair[0]) * event.times), 0.0


approx_dp.register(AllocatedShuffledRounds, _allocated_shuffled_rounds_approx_dp)


