"""The heavy-hitter campaign's accounting: one ledger for all rounds of the prefix tree
(docs/theory.md §2.17).

Every round runs one frequency oracle on the same k = keep x blocks + 1 candidate indices (the
catch-all "other" last), whatever the survivors were: a round's shuffled bound holds for every
dataset of candidate indices, so for every candidate list the server may broadcast, and the
rounds compose adaptively. Three ways to assign devices to rounds are certified, and the one
whose one-round estimates have the smallest standard error is deployed:

* ``groups``: public groups of n // T devices, each oracle's blanket at n // T (parallel
  composition: one round of the smallest group);
* ``poisson``: each device in each round with probability 1/T, the sampled round's blanket,
  composed T times adaptively (the accountant);
* ``allocation``: one report per device in a secretly chosen round, accounted with the generic
  bound at the largest eps0 only (randomizers="adaptive": the blanket under random allocation
  with candidate lists chosen from earlier rounds is not proved, docs/theory.md §2.16).

Neighbouring relation: substitution of one device's word (add/remove is not claimed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..accounting import allocation as AL
from ..accounting.accountant import Accountant
from ..accounting.events import OracleShuffledRound, SampledOracleShuffledRound
from ..core.progress import compute_time
from ..planning.campaign import COMPOSE_H, plan
from ..planning.error import estimate_error
from ..randomizers.base import FrequencyOracle
from ..randomizers.catalog import make_oracle, oracle_names

__all__ = ["ASSIGNMENTS", "RELATION", "AssignmentRow", "RoundsPlan", "plan_rounds", "ledger",
           "attack_eps", "certified_eps", "certified_per_round", "per_round_assignments",
           "per_round_oracles"]

ASSIGNMENTS = ("groups", "poisson", "allocation")
RELATION = "substitution (one device's word replaced by another)"


@dataclass(frozen=True)
class AssignmentRow:
    """One certified way to run the campaign: the oracle at ``eps0``, the standard error of
    one round's count estimate (at true count 0) and the certified central eps."""

    assignment: str
    oracle: FrequencyOracle
    eps0: float
    se: float
    upper: float

    def as_dict(self) -> dict:
        return dict(assignment=self.assignment, oracle=self.oracle.describe(), eps0=self.eps0,
                    se=self.se, upper=self.upper)


@dataclass(frozen=True)
class RoundsPlan:
    """The deployed assignment, its oracle, its ledger's certified (eps, delta) and the lower
    bound (an exact attack on one round), beside every certified row.

    Attributes
    ----------
    n : int
        Devices in the campaign.
    rounds : int
        Rounds T of the prefix tree.
    k : int
        The oracle's domain size (candidate indices, the catch-all "other" last).
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target, in (0, 1).
    chosen : AssignmentRow
        The deployed row: the smallest standard error (ties: allocation, poisson, groups).
    rows : tuple of AssignmentRow
        The best certified row of each assignment, ordered allocation, poisson, groups.
    upper : float
        The deployed ledger's certified central eps at delta (<= eps).
    lower : float or None
        An exact attack's eps on round 1 of the deployed assignment (a lower bound); None for
        allocation or when no attack applies.
    relation : str
        The neighbouring relation the bounds hold for (substitution of one device's word).
    skipped : dict
        Assignment or family -> why it was not certified.
    seconds : float
        Compute seconds spent planning.
    """

    n: int
    rounds: int
    k: int
    eps: float
    delta: float
    chosen: AssignmentRow
    rows: tuple[AssignmentRow, ...]
    upper: float
    lower: float | None
    relation: str = RELATION
    skipped: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def assignment(self) -> str:
        return self.chosen.assignment

    @property
    def oracle(self) -> FrequencyOracle:
        return self.chosen.oracle

    def as_dict(self) -> dict:
        return dict(n=self.n, rounds=self.rounds, k=self.k, eps=self.eps, delta=self.delta,
                    assignment=self.assignment, oracle=self.oracle.describe(),
                    eps0=self.chosen.eps0, upper=self.upper, lower=self.lower,
                    relation=self.relation, rows=[r.as_dict() for r in self.rows],
                    skipped=dict(self.skipped), seconds=self.seconds)


def ledger(n: int, rounds: int, assignment: str, oracle: FrequencyOracle) -> Accountant:
    """The campaign's ledger: what :func:`plan_rounds` certifies, composed event by event.

    Parameters
    ----------
    n : int
        Devices in the campaign.
    rounds : int
        Rounds T (groups: n // T devices per round; poisson: sampling probability 1/T).
    assignment : {"groups", "poisson", "allocation"}
        How devices are assigned to rounds; anything else raises ValueError.
    oracle : FrequencyOracle
        The frequency oracle every round runs.
    """
    acc = Accountant(h=COMPOSE_H)
    if assignment == "groups":
        return acc.compose(OracleShuffledRound(n // rounds, oracle))
    if assignment == "poisson":
        return acc.compose(SampledOracleShuffledRound(n, oracle, gamma=1.0 / rounds), rounds)
    if assignment == "allocation":
        return acc.compose(AL.AllocatedShuffledRounds(n, rounds, oracle=oracle,
                                                      randomizers="adaptive"))
    raise ValueError(f"assignment must be one of {ASSIGNMENTS}, got {assignment!r}")


def certified_eps(n: int, rounds: int, assignment: str, oracle: FrequencyOracle,
                  delta: float) -> float:
    """The ledger's eps at delta; for groups and allocation the smaller of the ledger's and the
    direct one-event query's (amplification.epsilon, allocation.epsilon: the same event, both
    sound upper bounds; the ledger's grid is coarser)."""
    value = ledger(n, rounds, assignment, oracle).epsilon(delta).value
    if assignment == "groups":
        from ..accounting import amplification as amp
        value = min(value, amp.epsilon(n // rounds, None, delta, oracle=oracle,
                                       lower=False).value)
    if assignment == "allocation":
        ev = AL.AllocatedShuffledRounds(n, rounds, oracle=oracle, randomizers="adaptive")
        value = min(value, AL.epsilon(ev, delta, lower=False).value)
    return value


def _generic_allocation(n: int, rounds: int, k: int, eps: float, delta: float,
                        names: Sequence[str]) -> AssignmentRow | str:
    """Random allocation with the generic bound: the largest eps0 certified for any
    eps0-LDP randomizers, then the oracle of smallest variance whose replacement eps is
    within it."""
    try:
        e0 = AL.max_eps0(n, rounds, eps, delta, randomizers="adaptive")
    except ValueError as err:
        return str(err)
    best = None
    for name in names:
        try:
            o = make_oracle(name, k, e0)
        except ValueError:
            continue
        if not o.replacement_eps <= e0:
            continue
        se = estimate_error(o, n / rounds).se
        if best is None or se < best[0]:
            best = (se, o)
    if best is None:
        return f"no oracle has replacement eps <= the certified eps0 = {e0:.4g}"
    up = certified_eps(n, rounds, "allocation", best[1], delta)
    if not up <= eps:
        return f"the ledger gives {up:.6g} > {eps:g} at eps0 = {e0:.4g}"
    return AssignmentRow("allocation", best[1], e0, best[0], up)


def plan_rounds(n: int, rounds: int, k: int, eps: float, delta: float, *,
                oracles: Sequence[str] | None = None,
                assignments: Sequence[str] = ASSIGNMENTS) -> RoundsPlan:
    """Certify each assignment of ``assignments`` for a campaign of ``rounds`` rounds of one
    oracle on k candidate indices over n devices at central (eps, delta), each with the best of
    ``oracles`` (registered names; None: every registered frequency oracle) at the largest eps0
    its own bound certifies (planning.plan), and deploy the smallest standard error. The
    deployed row's ledger is recomposed here and its eps (<= eps) is ``upper``.

    Parameters
    ----------
    n : int
        Devices in the campaign.
    rounds : int
        Rounds T of the prefix tree (poisson is planned only when T > 1).
    k : int
        The oracle's domain size: keep x blocks + 1 candidate indices.
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target, in (0, 1).
    oracles : sequence of str or None, optional
        Registered frequency-oracle names to try (at least one); None: every registered one.
    assignments : sequence of str, optional
        Non-empty subset of ``ASSIGNMENTS`` ("groups", "poisson", "allocation") to certify;
        default all three.
    """
    start = compute_time()
    names = list(oracle_names() if oracles is None else oracles)
    bad = [a for a in assignments if a not in ASSIGNMENTS] or (not assignments and ["none"])
    if bad:
        raise ValueError(f"assignments must be among {ASSIGNMENTS}, got {list(assignments)!r}")
    known = oracle_names()
    for name in names:
        if name not in known:
            raise ValueError(f"oracles: {name!r} is not a registered frequency oracle built "
                             f"from (k, eps); they are: {', '.join(known)}")
    if not names:
        raise ValueError("oracles: give at least one frequency oracle")
    rows: list[AssignmentRow] = []
    skipped: dict = {}
    planned = [a for a in assignments if a in ("groups", "poisson") and (a != "poisson"
                                                                         or rounds > 1)]
    if planned:
        memo: dict = {}
        families = ["best"] if oracles is None else names
        for fam in families:
            params = {"k": k}
            res = plan(n, rounds, eps, delta, fam, params=params, assignments=planned,
                       lower=False, memo=memo)
            skipped.update(res.skipped)
            for r in res.rows:
                if isinstance(r.randomizer, FrequencyOracle):
                    rows.append(AssignmentRow(r.assignment, r.randomizer, r.eps0,
                                              r.error.se, r.upper))
    if "allocation" in assignments:
        row = _generic_allocation(n, rounds, k, eps, delta, names)
        if isinstance(row, str):
            skipped["allocation (generic bound)"] = row
        else:
            rows.append(row)
    if not rows:
        raise ValueError(f"no assignment is certified for ({eps}, {delta})-DP over n = {n} "
                         f"devices in {rounds} rounds: {skipped}")
    # keep the best row per assignment, then deploy the smallest SE (ties: allocation first)
    per: dict[str, AssignmentRow] = {}
    for row_ in rows:
        if row_.assignment not in per or row_.se < per[row_.assignment].se:
            per[row_.assignment] = row_
    order = {"allocation": 0, "poisson": 1, "groups": 2}
    chosen = min(per.values(), key=lambda a: (a.se, order[a.assignment]))
    upper = certified_eps(n, rounds, chosen.assignment, chosen.oracle, delta)
    if not upper <= eps:
        raise ValueError(f"the deployed ledger certifies {upper:.6g} > eps = {eps:g}")
    return RoundsPlan(n, rounds, k, eps, delta, chosen,
                      tuple(sorted(per.values(), key=lambda r: order[r.assignment])), upper,
                      attack_eps(n, rounds, chosen.assignment, chosen.oracle, delta),
                      skipped=skipped,
                      seconds=compute_time() - start)


def attack_eps(n: int, rounds: int, assignment: str, oracle: FrequencyOracle,
               delta: float) -> float | None:
    """An exact attack's eps on round 1 of a campaign of ``n`` devices in ``rounds`` rounds
    under ``assignment``, round 1 running ``oracle`` (its candidate list is fixed: every
    block; the campaign reveals at least that round): a lower bound on the campaign's true
    eps (docs/theory.md §2.17). None for allocation (no attack is proved with adaptive
    lists), or where the attack does not apply. Arguments are trusted (a plan's checked
    fields)."""
    from ..accounting import amplification as amp
    try:
        if assignment == "groups":
            return amp.epsilon(n // rounds, None, delta, oracle=oracle, lower=True).lower
        if assignment == "poisson":
            return amp.epsilon(n, None, delta, oracle=oracle, gamma=1.0 / rounds,
                               lower=True).lower
        # allocation: the one-round-of-n attack holds when every round feeds the oracle the
        # same item, which adaptive candidate lists do not guarantee: no attack is claimed
        return None
    except ValueError:
        return None



def certified_per_round(n: int, assignment: str, oracles: Sequence[FrequencyOracle],
                        delta: float) -> float:
    """The certified central eps at ``delta`` of a campaign whose round j runs ``oracles[j]``
    (docs/theory.md §2.17): groups, the largest one-round bound (each device is in one public
    group: parallel composition); poisson, the ledger of the T sampled rounds composed
    adaptively. Random allocation's generic bound takes one eps0 for every round: refused."""
    rounds = len(oracles)
    if assignment == "groups":
        return max(certified_eps(n, rounds, "groups", o, delta) for o in dict.fromkeys(oracles))
    if assignment == "poisson":
        acc = Accountant(h=COMPOSE_H)
        for o in oracles:
            acc.compose(SampledOracleShuffledRound(n, o, gamma=1.0 / rounds))
        return acc.epsilon(delta).value
    raise ValueError(f"per-round eps0 is certified for public groups and poisson rounds; the "
                     f"{assignment!r} bound takes one eps0 for every round")


def per_round_assignments(assignments: Sequence[str]) -> list[str]:
    """The assignments per-round eps0 can be certified for among ``assignments`` (random
    allocation's generic bound takes one eps0: dropped); ValueError when none is left.

    Parameters
    ----------
    assignments : sequence of str
        Assignments asked for.
    """
    kept = [a for a in assignments if a != "allocation"]
    if not kept:
        raise ValueError("per-round eps0 (eps0_weights) is certified for groups and poisson "
                         "rounds, not under random allocation's generic bound")
    return kept


def per_round_oracles(plan: RoundsPlan, weights: Sequence[float], *,
                      iterations: int = 12) -> tuple[tuple[FrequencyOracle, ...], float,
                                                     float | None]:
    """Per-round oracles of the deployed family at eps0_j = s w_j / max(w), with the largest
    scale s the composed bound certifies (the inverse query on the composed ledger:
    bisection that returns its verified end), and their certified eps and lower bound (round
    1's exact attack: the only round whose list is fixed, so the only attack proven). Starts
    from the plan's common eps0 (every round at most it: certified when the bound grows with
    eps0, and verified here).

    Parameters
    ----------
    plan : RoundsPlan
        The certified common-eps0 plan (groups or poisson).
    weights : sequence of float
        One relative eps0 per round (finite, > 0).
    iterations : int, optional
        Bisection steps on s (default 12).
    """
    w = [float(x) for x in weights]
    if len(w) != plan.rounds or not all(x > 0 and x < float("inf") for x in w):
        raise ValueError(f"eps0 weights: give {plan.rounds} finite numbers > 0 (one per "
                         f"round), got {list(weights)!r}")
    top, name, k = max(w), plan.oracle.name, plan.k

    def oracles(s: float) -> tuple[FrequencyOracle, ...]:
        return tuple(make_oracle(name, k, s * x / top) for x in w)

    def fits(s: float) -> float | None:
        up = certified_per_round(plan.n, plan.assignment, oracles(s), plan.delta)
        return up if up <= plan.eps else None

    lo, hi = plan.chosen.eps0, plan.chosen.eps0 * top / min(w)
    best = fits(lo)
    if best is None:
        raise ValueError(f"per-round eps0: the rounds at most the common eps0 = {lo:.6g} do not "
                         f"certify eps = {plan.eps:g}")
    up_hi = fits(hi) if hi > lo else None
    if up_hi is not None:
        lo, best = hi, up_hi
    else:
        for _ in range(iterations if hi > lo else 0):
            mid = 0.5 * (lo + hi)
            got = fits(mid)
            if got is None:
                hi = mid
            else:
                lo, best = mid, got
    chosen = oracles(lo)
    # the attack is proven for round 1 only (its candidate list is fixed: every block), so
    # the lower bound is round 1's oracle's attack, not the strongest round's
    return chosen, best, attack_eps(plan.n, plan.rounds, plan.assignment, chosen[0],
                                    plan.delta)
