"""The plan file of a heavy-hitter campaign: everything the server and the devices must agree on
before round 1 (docs/guide.md, "Heavy hitters over unknown domains"; docs/theory.md §2.17).

A :class:`Campaign` holds the tree's public shape (alphabet, terminator, longest word, rounds,
symbols per round, survivors per round), the devices n, the central (eps, delta) target, the
assignment of devices to rounds, each round's frequency oracle (registry spec) and eps0, and the
certified ledger (upper bound, lower bound, neighbouring relation). Its JSON carries the SHA-256
of its content: ``Campaign.from_json`` refuses a file whose content no longer matches its
digest (an edited plan), and every candidate list, report set and aggregate of the campaign
names the plan's digest, so that one of another campaign is refused naming both digests.
The digest detects edits and mix-ups; it is not a signature (whoever can write the plan can
recompute it): the server keeps its plan where only it writes.

Every public function that takes a Campaign (``deploy``, ``round_sets``) certifies it first
(:func:`certified_campaign`): its fields are checked as a plan file's are, its upper bound and
lower bound recomputed from its own n, assignment and oracles, and a Campaign whose stored
ledger differs is refused. The result is sealed in the object with the digest of the content
it certified, so later calls cost one digest (under 0.1 ms); a Campaign built by hand, made by
``dataclasses.replace`` or changed in place carries no seal for its content and is certified
again.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..core import validate as V
from ..randomizers import registry
from ..randomizers.base import FrequencyOracle
from .accounting import ASSIGNMENTS, RELATION, RoundsPlan, per_round_oracles
from .prefix import Alphabet, children
from .rounds import RoundList
from .shape import TreeShape

__all__ = ["KIND", "TERMINATOR", "MAX_PLAN_BYTES", "Campaign", "certified_campaign"]

KIND = "ldpcompress heavy-hitter plan"
TERMINATOR = 0  # the terminator's code: a word is padded with it to rounds x step symbols
MAX_PLAN_BYTES = 1 << 24
_KEYS = {"kind", "alphabet", "terminator", "max_len", "rounds", "step", "keep", "k", "n", "eps",
         "delta", "assignment", "relation", "oracles", "eps0", "ledger"}
_LEDGER = {"upper", "lower", "delta"}


def _digest(body: dict) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Campaign:
    """A heavy-hitter campaign's plan: the tree's shape, the devices, the target, the
    assignment, one frequency oracle per round and the certified ledger.

    Attributes
    ----------
    shape : TreeShape
        The tree's public shape (alphabet, step, rounds, keep, max_len; k).
    n : int
        Devices in the campaign.
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target, in (0, 1).
    assignment : str
        How devices are assigned to rounds: "groups", "poisson" or "allocation".
    oracles : tuple of FrequencyOracle
        Round j's oracle at index j - 1 (each on the shape's k indices, "other" last).
    upper : float
        The ledger's certified central eps at ``delta`` (<= eps).
    lower : float or None
        An exact attack's eps (a lower bound on the campaign's eps), or None.
    relation : str
        The neighbouring relation the bounds hold for.
    """

    shape: TreeShape
    n: int
    eps: float
    delta: float
    assignment: str
    oracles: tuple[FrequencyOracle, ...]
    upper: float
    lower: float | None
    relation: str = RELATION
    # (digest, certified eps) of the content last certified: set only by certified()
    _seal: tuple[str, float] | None = field(default=None, init=False, repr=False,
                                            compare=False)

    @classmethod
    def of(cls, plan: RoundsPlan, shape: TreeShape,
           eps0_weights: Sequence[float] | None = None) -> "Campaign":
        """The campaign of a certified :class:`RoundsPlan`: every round the deployed oracle
        (its common eps0), or with ``eps0_weights`` per-round oracles of the same family
        at eps0 proportional to the weights, the largest the composed bound certifies
        (:func:`~ldpcompress.heavy.accounting.per_round_oracles`).

        Parameters
        ----------
        plan : RoundsPlan
            The certified accounting (its rounds and k must match ``shape``).
        shape : TreeShape
            The tree's public shape.
        eps0_weights : sequence of float or None, optional
            One relative eps0 per round (> 0); None: the common eps0.
        """
        if (plan.rounds, plan.k) != (shape.rounds, shape.k):
            raise ValueError(f"plan: made for (rounds, k) = {(plan.rounds, plan.k)}, the tree "
                             f"is {(shape.rounds, shape.k)}")
        if eps0_weights is None:
            return cls(shape, plan.n, plan.eps, plan.delta, plan.assignment,
                       (plan.oracle,) * shape.rounds, plan.upper, plan.lower, plan.relation)
        oracles, upper, lower = per_round_oracles(plan, eps0_weights)
        return cls(shape, plan.n, plan.eps, plan.delta, plan.assignment, oracles, upper,
                   lower, plan.relation)

    def body(self) -> dict:
        s = self.shape
        return dict(kind=KIND, alphabet=s.alphabet.symbols, terminator=TERMINATOR,
                    max_len=s.max_len, rounds=s.rounds, step=s.step, keep=s.keep, k=s.k,
                    n=self.n, eps=self.eps, delta=self.delta, assignment=self.assignment,
                    relation=self.relation,
                    oracles=[registry.spec(o) for o in self.oracles],
                    eps0=[float(o.eps) for o in self.oracles],
                    ledger=dict(upper=self.upper, lower=self.lower, delta=self.delta))

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the plan's canonical JSON content."""
        return _digest(self.body())

    def to_json(self) -> str:
        return json.dumps(dict(self.body(), digest=self.digest), indent=1, allow_nan=False)

    def certify(self) -> float:
        """The central eps at ``delta`` recomputed from this plan's own n, assignment and
        oracles (the ledger, not the number the file states): what a server checks before
        round 1 (a plan edited and resealed with larger eps0 fails it)."""
        from .accounting import certified_eps, certified_per_round
        T = self.shape.rounds
        if len(set(self.oracles)) == 1:
            return certified_eps(self.n, T, self.assignment, self.oracles[0], self.delta)
        return certified_per_round(self.n, self.assignment, self.oracles, self.delta)

    def certified(self) -> float:
        """The central eps this plan certifies, after checking it as a server must before
        using it: every field as :meth:`from_json` checks a file's, the bound recomputed from
        its own n, assignment and oracles (:meth:`certify`, never the stored number) and at
        most its target eps, and the stored ledger (upper and lower bound) equal to what is
        recomputed; ValueError naming the field and both values. The digest is not a
        signature: a plan resealed with a larger eps0 loads, and fails here. About 35-50 ms
        the first time (upper and lower bound recomputed); then sealed to this content's
        digest (under 0.1 ms)."""
        try:
            body = self.body()
        except (AttributeError, TypeError, ValueError) as err:
            raise TypeError(f"campaign: not a plan ({type(err).__name__}: {str(err)[:200]})") \
                from None
        digest = _digest(body)
        if self._seal is not None and self._seal[0] == digest:
            return self._seal[1]
        got = self._recertified(body)
        object.__setattr__(self, "_seal", (digest, got))
        return got

    def _recertified(self, body: dict) -> float:
        try:
            rebuilt = Campaign._checked(body, "campaign")
        except TypeError as err:
            raise ValueError(f"campaign: {err}") from None
        if rebuilt != self:
            raise ValueError("campaign: its fields differ from the plan they state (a value of "
                             "another type or a shape built by hand)")
        got = self.certify()
        if not got <= self.eps:
            raise ValueError(f"the plan's oracles certify central eps {got:.6g} > its target "
                             f"{self.eps:g} at delta {self.delta:g} (key 'eps'; eps0 = "
                             f"{[float(o.eps) for o in self.oracles]}): not deployable")
        if self.upper != got:
            raise ValueError(f"the plan's ledger.upper = {self.upper!r} differs from the "
                             f"central eps {got!r} its n, assignment and oracles certify")
        from .accounting import attack_eps
        low = attack_eps(self.n, self.shape.rounds, self.assignment, self.oracles[0],
                         self.delta)
        if self.lower != low:
            raise ValueError(f"the plan's ledger.lower = {self.lower!r} differs from round 1's "
                             f"exact attack {low!r} recomputed from its n, assignment and "
                             "oracles")
        return got

    def oracle(self, index: int) -> FrequencyOracle:
        """Round ``index``'s (1-based) frequency oracle.

        Parameters
        ----------
        index : int
            The round, in [1, rounds].
        """
        index = V.integer_at_least(index, "round", 1, self.shape.rounds)
        return self.oracles[index - 1]

    def first_list(self) -> RoundList:
        """Round 1's candidate list: every valid block of ``step`` symbols."""
        s = self.shape
        codes = children(np.zeros(1, np.int64), s.alphabet, s.step, root=True)
        return RoundList(s.alphabet.symbols, s.step, s.rounds, s.keep, s.max_len, 1, s.k,
                         tuple(int(c) for c in codes), self.digest)

    def check_list(self, rl: RoundList, what: str = "candidate list") -> RoundList:
        """``rl`` when it belongs to this campaign, else ValueError naming both digests.

        Parameters
        ----------
        rl : RoundList
            A candidate list read back.
        what : str, optional
            What errors call it (e.g. the option and file).
        """
        if not isinstance(rl, RoundList):
            raise TypeError(f"{what} must be a RoundList, got {type(rl).__name__}")
        s = self.shape
        if rl.campaign != self.digest:
            raise ValueError(f"{what} (round {rl.index}) belongs to the campaign of plan "
                             f"{rl.campaign[:16] or '(none)'}..., not to this plan "
                             f"{self.digest[:16]}...")
        if (rl.alphabet, rl.step, rl.rounds, rl.keep, rl.max_len, rl.k) != (
                s.alphabet.symbols, s.step, s.rounds, s.keep, s.max_len, s.k):
            raise ValueError(f"{what} names plan {self.digest[:16]}... but its tree shape "
                             "differs from the plan's")
        return rl

    @classmethod
    def from_json(cls, text: str | bytes, source: str = "plan") -> "Campaign":
        """The campaign of a plan file's text, every field checked; ValueError naming
        ``source`` for an edited plan (its stored digest differs from its content's, both
        named), a missing or unknown key, or a value out of range.

        Parameters
        ----------
        text : str or bytes
            The plan's JSON (``to_json``).
        source : str, optional
            What errors name (e.g. the option and file).
        """
        try:
            doc = json.loads(text)
        except (ValueError, UnicodeDecodeError, RecursionError) as err:
            raise ValueError(f"{source}: not a JSON plan ({type(err).__name__}: "
                             f"{str(err)[:200]})") from None
        if not isinstance(doc, dict) or doc.get("kind") != KIND:
            raise ValueError(f"{source}: not a heavy-hitter plan (key 'kind' must be {KIND!r})")
        stored = doc.pop("digest", None)
        if set(doc) != _KEYS:
            raise ValueError(f"{source}: keys {sorted(doc)}, expected {sorted(_KEYS | {'digest'})}")
        try:
            found = _digest(doc)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{source}: {err}") from None
        if stored != found:
            raise ValueError(f"{source}: stored digest {str(stored)[:16]}... differs from its "
                             f"content's {found[:16]}...: the plan was edited")
        try:
            return cls._checked(doc, source)
        except TypeError as err:
            raise ValueError(f"{source}: {err}") from None

    @classmethod
    def _checked(cls, doc: dict, source: str) -> "Campaign":
        if doc["terminator"] != TERMINATOR or isinstance(doc["terminator"], bool):
            raise ValueError(f"{source}: key 'terminator' must be {TERMINATOR} (the code that "
                             f"pads words), got {doc['terminator']!r}")
        for key in ("max_len", "rounds", "step", "keep", "k", "n"):
            if isinstance(doc[key], bool) or not isinstance(doc[key], int):
                raise ValueError(f"{source}: key {key!r} must be an integer, got {doc[key]!r}")
        try:
            shape = TreeShape.of(Alphabet(doc["alphabet"]), doc["step"], doc["rounds"],
                                 doc["keep"], doc["max_len"])
        except ValueError as err:  # e.g. repeated alphabet symbols: name the plan file
            raise ValueError(f"{source}: {err}") from None
        if doc["k"] != shape.k:
            raise ValueError(f"{source}: key 'k' = {doc['k']} but the tree has k = {shape.k}")
        n = V.shuffle_users(doc["n"], f"{source}: n")
        eps = V.positive_finite(doc["eps"], f"{source}: eps")
        delta = V.probability_open(doc["delta"], f"{source}: delta")
        if doc["assignment"] not in ASSIGNMENTS:
            raise ValueError(f"{source}: key 'assignment' must be one of {ASSIGNMENTS}, got "
                             f"{doc['assignment']!r}")
        if doc["relation"] != RELATION:
            raise ValueError(f"{source}: key 'relation' must be {RELATION!r}, got "
                             f"{str(doc['relation'])[:80]!r}")
        specs, eps0 = doc["oracles"], doc["eps0"]
        if not isinstance(specs, list) or len(specs) != shape.rounds or \
                not isinstance(eps0, list) or len(eps0) != shape.rounds:
            raise ValueError(f"{source}: keys 'oracles' and 'eps0' must list one entry per "
                             f"round ({shape.rounds})")
        oracles = []
        for j, (sp, e0) in enumerate(zip(specs, eps0), 1):
            o = registry.check_spec(sp, f"{source}: oracles[{j - 1}]")
            if not isinstance(o, FrequencyOracle) or o.k != shape.k:
                raise ValueError(f"{source}: round {j}'s oracle must be a frequency oracle on "
                                 f"k = {shape.k} indices, got {o.describe()}")
            if not isinstance(e0, (int, float)) or isinstance(e0, bool) or float(e0) != o.eps:
                raise ValueError(f"{source}: eps0[{j - 1}] = {e0!r} differs from round {j}'s "
                                 f"oracle eps {o.eps!r}")
            oracles.append(o)
        led = doc["ledger"]
        if not isinstance(led, dict) or set(led) != _LEDGER:
            raise ValueError(f"{source}: key 'ledger' must hold {sorted(_LEDGER)}")
        upper = V.positive_finite(led["upper"], f"{source}: ledger.upper")
        lower = led["lower"]
        if lower is not None:
            lower = V.nonnegative(lower, f"{source}: ledger.lower")
            if not math.isfinite(lower) or not lower <= upper:
                raise ValueError(f"{source}: ledger.lower = {lower!r} must be finite and <= "
                                 f"ledger.upper = {upper!r}")
        if led["delta"] != delta or not upper <= eps:
            raise ValueError(f"{source}: the ledger ({upper}, {led['delta']}) does not meet "
                             f"the target ({eps}, {delta})")
        return cls(shape, n, eps, delta, doc["assignment"], tuple(oracles), upper, lower,
                   doc["relation"])


def certified_campaign(campaign: Campaign) -> Campaign:
    """``campaign`` once it is certified (:meth:`Campaign.certified`): what every public
    function that takes a plan calls first; TypeError for another type.

    Parameters
    ----------
    campaign : Campaign
        The campaign's plan.
    """
    if not isinstance(campaign, Campaign):
        raise TypeError(f"campaign must be a Campaign, got {type(campaign).__name__}")
    campaign.certified()
    return campaign
