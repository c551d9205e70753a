"""The campaign planner: for n devices, T rounds and a central (eps, delta), each way of
assigning devices to rounds at the largest eps0 its own bound certifies, the standard error of
one round's estimates it buys, and which to deploy (docs/guide.md, "Planning a campaign").

Assignments (docs/theory.md §2.16 and §2.7):

* ``groups``: public groups, n // T devices per round, each device in one known round;
  parallel composition: the campaign is as private as one round of its smallest group.
* ``poisson``: each device reports in each round with probability 1/T (a device may report
  twice or never), the T sampled rounds composed by the accountant.
* ``allocation``: each device reports in ``per_device`` rounds chosen secretly (random
  allocation): with one report per device exactly as private as one round of all n devices;
  with k > 1 one round in each of k consecutive blocks of rounds (the k-fold composition).

Each row carries the certified central eps at its eps0 (<= the target) and an exact attack's
eps beside it (a lower bound: the attack on one round, which any campaign containing that
round reveals at least as much as). The searches over composed campaigns (Poisson, k > 1) are
bracketed around the one-round answer and return a certified parameter (the lower end of the
last bracket, within ``tol`` of the boundary); one-round searches are ``inverse.max_eps0``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..accounting import allocation as AL
from ..accounting import amplification as amp
from ..accounting import inverse
from ..accounting.accountant import Accountant
from ..accounting.events import SampledOracleShuffledRound
from ..accounting.solve import shrink_bracket
from ..core import display as D
from ..core import validate as V
from ..core.numerics import EXP_MAX
from ..core.progress import compute_time
from ..randomizers import registry
from ..randomizers.catalog import make_oracle, oracle_names
from ..randomizers.contract import LocalRandomizer
from .error import ErrorFigure, estimate_error
from .oracles import rank_oracles

__all__ = ["ASSIGNMENTS", "MAX_PLAN_ROUNDS", "COMPOSE_H", "VALUE_RTOL", "largest_by_value", "PlanRow", "CampaignPlan", "plan",
           "randomizer_factory"]

ASSIGNMENTS = ("groups", "poisson", "allocation")
COMPOSE_H = 1e-4  # the PLD grid of the composed campaigns (Poisson, k > 1 per device)
VALUE_RTOL = 1e-3  # a composed search stops when its certified eps is this close to the target
MAX_PLAN_ROUNDS = 10 ** 5  # a campaign's rounds here (the Poisson proxy composes T rounds)
# preference among equal errors: the assignment whose accounting matches a client that
# reports a fixed number of times comes first
_PREFERENCE = {"allocation": 0, "poisson": 1, "groups": 2}

Factory = Callable[[float], LocalRandomizer]


@dataclass(frozen=True)
class PlanRow:
    """One assignment of a campaign of ``rounds`` rounds: the randomizer at ``eps0`` (its eps
    parameter), ``reports`` per round (expected, for Poisson and allocation), the ``error`` of
    one round's estimates, the certified central eps at eps0 (``upper`` <= the target) and the
    attack's (``lower``, None when none is implemented).

    Attributes
    ----------
    rounds : int
        The campaign's rounds T.
    assignment : {"groups", "poisson", "allocation"}
        How devices are assigned to rounds.
    per_device : int
        Reports per device (allocation).
    randomizer : LocalRandomizer
        The randomizer at eps0.
    eps0 : float
        Its certified eps parameter.
    error : ErrorFigure
        The error of one round's estimates.
    upper : float
        The certified central eps at eps0 (<= the target).
    lower : float or None
        The attack's eps (None when none is implemented).
    seconds : float
        The row's computation time.
    note : str, default ""
        A remark on the row.
    """

    rounds: int
    assignment: str
    per_device: int
    randomizer: LocalRandomizer
    eps0: float
    error: ErrorFigure
    upper: float
    lower: float | None
    seconds: float
    note: str = ""

    @property
    def label(self) -> str:
        if self.assignment == "groups":
            return "public groups"
        if self.assignment == "poisson":
            return "Poisson 1/T"
        return "allocation" + ("" if self.per_device == 1 else f", {self.per_device}/device")

    def as_dict(self) -> dict:
        return dict(rounds=self.rounds, assignment=self.assignment, per_device=self.per_device,
                    randomizer=self.randomizer.describe(), eps0=self.eps0,
                    reports_per_round=self.error.reports, estimate=self.error.what,
                    se=self.error.se, scaled_se=self.error.scaled_se,
                    variance=self.error.variance, mse=self.error.mse,
                    upper=self.upper, lower=self.lower, seconds=self.seconds, note=self.note)


@dataclass(frozen=True)
class CampaignPlan:
    """The rows of every (rounds, assignment), and for each number of rounds the row to
    deploy: the smallest standard error on the data's scale (``ErrorFigure.scaled_se``: of a
    frequency, or of a mean; ties: allocation, then Poisson, then groups).

    Attributes
    ----------
    n : int
        Devices.
    eps : float
        The central eps target.
    delta : float
        The central delta target.
    family : str
        What is estimated (the randomizer's family).
    rows : tuple of PlanRow
        Every (rounds, assignment) row.
    skipped : dict
        Rows left out and why (never silently).
    seconds : float
        The plan's computation time.
    """

    n: int
    eps: float
    delta: float
    family: str
    rows: tuple[PlanRow, ...]
    skipped: dict = field(default_factory=dict)
    seconds: float = 0.0

    def deploy(self, rounds: int) -> PlanRow:
        """The row to deploy at ``rounds``: the smallest scaled standard error (ties as above).

        Parameters
        ----------
        rounds : int
            A number of rounds the plan holds.
        """
        rows = [r for r in self.rows if r.rounds == rounds]
        if not rows:
            raise ValueError(f"rounds: no row for {rounds} rounds")
        return min(rows, key=lambda r: (r.error.scaled_se, _PREFERENCE[r.assignment],
                                        r.per_device))

    @property
    def rounds(self) -> list[int]:
        return sorted({r.rounds for r in self.rows})

    def as_dict(self) -> dict:
        return dict(n=self.n, eps=self.eps, delta=self.delta, family=self.family,
                    rows=[r.as_dict() for r in self.rows],
                    deploy={str(t): self.deploy(t).label for t in self.rounds},
                    skipped=dict(self.skipped), seconds=self.seconds)

    def table(self, rounds: int) -> list[list[str]]:
        """The rows of ``rounds`` as text cells (header first), best first; the deployed row
        is starred.

        Parameters
        ----------
        rounds : int
            A number of rounds the plan holds.
        """
        rows = sorted((r for r in self.rows if r.rounds == rounds),
                      key=lambda r: r.error.scaled_se)
        what = rows[0].error.what if rows else "count"
        scaled = "SE(frequency)" if what == "count" else "SE(data scale)"
        out = [["assignment", "randomizer", "eps0", "reports/round", f"SE({what})", scaled,
                "eps (upper)", "attack (lower)"]]
        best = self.deploy(rounds)
        for r in rows:
            out.append([r.label + (" *" if r is best else ""), r.randomizer.describe(),
                        f"{r.eps0:.4f}", f"{r.error.reports:.6g}", f"{r.error.se:.4g}",
                        f"{r.error.scaled_se:.4g}", f"{r.upper:.4f}",
                        "-" if r.lower is None else f"{r.lower:.4f}"])
        return out

    def __repr__(self) -> str:
        shown = ", ".join(f"T={t}: {self.deploy(t).label}" for t in self.rounds)
        return (f"CampaignPlan(n={self.n}, eps={self.eps:g}, delta={self.delta:g}, "
                f"{self.family}; deploy {shown})")

    def _repr_html_(self) -> str:
        return "".join(D.html_table(f"T = {t}", self.table(t)[0], self.table(t)[1:])
                       for t in self.rounds)


def randomizer_factory(name: str, **params) -> Factory:
    """eps0 -> the registered randomizer ``name`` built with ``params`` and eps = eps0 (its
    constructor validates them; ValueError naming the randomizer)."""
    registry.lookup(name)  # ValueError listing the known names
    if "eps" in params:
        raise ValueError(f"params: the eps of {name} is what the planner chooses; give the "
                         "other parameters only")
    registry.build(name, dict(params, eps=1.0), f"randomizer {name}")  # checks params now
    return lambda e: registry.build(name, dict(params, eps=e), f"randomizer {name}")


def _rounds_list(rounds) -> list[int]:
    values = [rounds] if not isinstance(rounds, (list, tuple)) else list(rounds)
    if not values:
        raise ValueError("rounds: give at least one number of rounds")
    return sorted({V.integer_at_least(t, "rounds", 1, MAX_PLAN_ROUNDS) for t in values})


def plan(n, rounds, eps, delta, randomizer: str = "pi-rappor", *,
         params: dict | None = None, assignments: Sequence[str] = ASSIGNMENTS,
         per_device: Sequence[int] = (1,), lower: bool = True, tol: float = 1e-3,
         memo: dict | None = None) -> CampaignPlan:
    """Plan a campaign of n devices over ``rounds`` T (an int or a list) at central
    (eps, delta): each assignment (module docstring) at its largest certified eps0, the
    standard error of one round's estimates, and the row to deploy.

    randomizer: a registered name built with ``params`` (e.g. ``"pi-rappor", params={"k":
    1000}``), its eps chosen here; or ``"best"``: every registered frequency oracle (params
    {"k": ...}), the best for each one-round assignment (planning.best_oracle), Poisson and
    k > 1 with allocation's best. per_device: the reports per device tried with allocation.
    tol: absolute width of the composed searches' last bracket. memo: certifications shared
    with other searches (inverse.max_eps0).

    Parameters
    ----------
    n : int
        Devices.
    rounds : int or list of int
        The numbers of rounds T to plan (each 1 to n).
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target, in (0, 1).
    randomizer : str, default "pi-rappor"
        A registered randomizer's name, or "best" (see above).
    params : dict, optional
        The randomizer's parameters other than its eps (e.g. ``{"k": 1000}``).
    assignments : sequence of str, default ("groups", "poisson", "allocation")
        The assignments of devices to rounds to compare.
    per_device : sequence of int, default (1,)
        Reports per device tried with allocation.
    lower : bool, default True
        Also compute each row's lower bound (an exact attack) when one is implemented.
    tol : float, default 1e-3
        Absolute width of the composed searches' last bracket.
    memo : dict, optional
        Certifications shared with other searches (``inverse.max_eps0``).
    """
    start = compute_time()
    n = V.shuffle_users(n)
    eps = V.positive_finite(eps, "eps")
    if eps > EXP_MAX:
        raise ValueError(f"eps must be <= {EXP_MAX:g}, got {eps!r}")
    delta = V.probability_open(delta, "delta")
    ts = _rounds_list(rounds)
    if any(n // t < 1 for t in ts):
        raise ValueError(f"rounds must be <= n = {n} (every round has devices), got {max(ts)}")
    bad = [a for a in assignments if a not in ASSIGNMENTS]
    if bad or not assignments:
        raise ValueError(f"assignments must be among {ASSIGNMENTS}, got {list(assignments)!r}")
    ks = sorted({V.integer_at_least(k, "per_device", 1, MAX_PLAN_ROUNDS) for k in per_device})
    if not ks:
        raise ValueError("per_device: give at least one number of reports per device")
    if ks[-1] > ts[0] and "allocation" in assignments:
        raise ValueError(f"per_device must be <= rounds ({ts[0]}), got {ks[-1]}")
    tol = V.positive_finite(tol, "tol")
    params = dict(params or {})
    factories: dict[str, Factory]
    if randomizer == "best":
        if set(params) != {"k"}:
            raise ValueError("params: randomizer='best' ranks the frequency oracles on k items: "
                             "give params={'k': ...} only")
        items = V.domain_size(params["k"])
        factories = {name: functools.partial(make_oracle, name, items)
                     for name in oracle_names()}
        family = f"best frequency oracle (k={items})"
    else:
        if not isinstance(randomizer, str):
            raise TypeError(f"randomizer must be a registered name or 'best', got "
                            f"{type(randomizer).__name__}")
        factories = {randomizer: randomizer_factory(randomizer, **params)}
        family = randomizer
    memo = {} if memo is None else memo
    rows: list[PlanRow] = []
    skipped: dict = {}
    for t in ts:
        alloc = None
        if "allocation" in assignments or "poisson" in assignments:
            alloc = _one_round(factories, n, n / t, eps, delta, memo, skipped, t)
        if "groups" in assignments:
            rows += _rows_of(_groups(factories, n, t, eps, delta, memo, skipped, lower))
        if alloc is None:
            continue
        name, e0, factory = alloc
        if "allocation" in assignments:
            for per in ks:
                if per > t:
                    continue
                row = (_allocation_one(factory, n, t, e0, eps, delta, lower) if per == 1 else
                       _allocation_blocks(factory, n, t, per, e0, eps, delta, tol, lower))
                rows += _rows_of(row, skipped, f"allocation {per} per device, T={t}")
        if "poisson" in assignments and t > 1:
            rows += _rows_of(_poisson(factory, n, t, e0, eps, delta, tol, lower), skipped,
                             f"poisson, T={t}")
    return CampaignPlan(n, eps, delta, family, tuple(rows), skipped,
                        compute_time() - start)


def _rows_of(row, skipped: dict | None = None, key: str = "") -> list[PlanRow]:
    if isinstance(row, str):
        if skipped is not None:
            skipped[key] = row
        return []
    return [] if row is None else [row]


def _one_round(factories: dict, users: int, reports: float, eps, delta, memo: dict,
               skipped: dict, t: int):
    """(name, eps0, factory) of the best randomizer for one shuffled round of ``users``
    (error at ``reports`` per round), or None (each failure recorded in ``skipped``)."""
    choices, why = rank_oracles(factories, users, reports, eps, delta, memo=memo) \
        if len(factories) > 1 else _single(factories, users, reports, eps, delta, memo)
    for name, reason in why.items():
        skipped[f"{name}, one round of {users} (T={t})"] = reason
    if not choices:
        return None
    best = choices[0]
    return best.name, best.eps0, factories[best.name]


def _single(factories: dict, users, reports, eps, delta, memo):
    """rank_oracles for one randomizer of any kind (its error from planning/error.py)."""
    ((name, factory),) = factories.items()
    try:
        e0 = inverse.max_eps0(users, eps, delta, factory, memo=memo)
    except ValueError as err:
        return [], {name: str(err)}
    return [_Pick(name, e0)], {}


@dataclass(frozen=True)
class _Pick:
    name: str
    eps0: float


def _groups(factories, n, t, eps, delta, memo, skipped, lower):
    start = compute_time()
    users = n // t
    pick = _one_round(factories, users, float(users), eps, delta, memo, skipped, t)
    if pick is None:
        return None
    _, e0, factory = pick
    oracle = factory(e0)
    res = amp.epsilon(users, None, delta, oracle=oracle, lower=lower)
    return PlanRow(t, "groups", 1, oracle, e0, estimate_error(oracle, users), res.value,
                   res.lower, compute_time() - start,
                   f"one round of the smallest group, {users} devices")


def _allocation_one(factory, n, t, e0, eps, delta, lower):
    start = compute_time()
    oracle = factory(e0)
    res = AL.epsilon(AL.AllocatedShuffledRounds(n, t, oracle=oracle), delta, lower=lower)
    return PlanRow(t, "allocation", 1, oracle, e0, estimate_error(oracle, n / t), res.value,
                   res.lower, compute_time() - start,
                   "one report per device: one round of all n devices (theory §2.16)")


def _composed(event, delta: float, times: int = 1) -> float:
    """The accountant's eps at delta of ``times`` x event, on the PLD grid COMPOSE_H (any
    grid gives a sound upper bound; this one is ~100x faster than the per-query choice and,
    for these campaigns, as tight or tighter)."""
    return Accountant(h=COMPOSE_H).compose(event, times).epsilon(delta).value


def _allocation_blocks(factory, n, t, k, e0, eps, delta, tol, lower):
    start = compute_time()

    def event(x: float):
        return AL.AllocatedShuffledRounds(n, t, k, "blocks", oracle=factory(x))

    try:
        x = largest_by_value(lambda x: _composed(event(x), delta), eps, e0 - math.log(k), tol)
    except ValueError as err:
        return str(err)
    oracle = factory(x)
    low = None
    if lower:  # the attack on one block: one report per device, one round of all n devices
        low = AL.epsilon(AL.AllocatedShuffledRounds(n, t, oracle=oracle), delta).lower
    return PlanRow(t, "allocation", k, oracle, x, estimate_error(oracle, k * n / t),
                   _composed(event(x), delta), low, compute_time() - start,
                   f"one round in each of {k} blocks: the {k}-fold composition; lower: the "
                   "attack on one block")


def _poisson(factory, n, t, e0, eps, delta, tol, lower):
    start = compute_time()

    def value(x: float) -> float:
        return _composed(SampledOracleShuffledRound(n, factory(x), gamma=1.0 / t), delta, t)

    try:
        x = largest_by_value(value, eps, e0, tol)
    except ValueError as err:
        return str(err)
    oracle = factory(x)
    up = value(x)
    low = None
    if lower:  # one sampled round's attack: the composition reveals at least that round
        low = amp.epsilon(n, None, delta, oracle=oracle, gamma=1.0 / t, lower=True).lower
    return PlanRow(t, "poisson", 1, oracle, x, estimate_error(oracle, n / t), up, low,
                   compute_time() - start,
                   f"each device in each round w.p. 1/{t}, {t} rounds composed; lower: the "
                   "attack on one round")


def largest_by_value(value: Callable[[float], float], eps: float, guess: float,
                     tol: float) -> float:
    """Largest x found with value(x) <= eps, for a value increasing in x (the central eps of a
    campaign at parameter x; a parameter the randomizer refuses counts as too large): a
    bracket grown from ``guess`` in steps doubling from 1/4, then Illinois steps on value - eps
    (solve.shrink_bracket) until the bracket is narrower than tol. Returns the lower end, whose
    value was computed and is <= eps: never an uncertified parameter. It stops early once that value is
    within a relative ``VALUE_RTOL`` of eps (the parameter is then within about
    VALUE_RTOL eps / (d value / dx) of the boundary: a few 1e-3 for a campaign's eps)."""
    def f(x: float) -> float:
        try:
            return value(x) - eps
        except ValueError:
            return math.inf

    x = min(max(guess, 1e-6), EXP_MAX)
    fx = f(x)
    step = 0.25
    if fx <= 0.0:
        lo, flo = x, fx
        while True:
            if lo >= EXP_MAX:
                return lo
            x = min(lo + step, EXP_MAX)
            fx = f(x)
            if fx > 0.0:
                hi, fhi = x, fx
                break
            lo, flo, step = x, fx, 2.0 * step
    else:
        hi, fhi = x, fx
        while True:
            x = hi - step
            if x < 1e-6:
                raise ValueError(f"no parameter >= 1e-6 is certified for central eps {eps}")
            fx = f(x)
            if fx <= 0.0:
                lo, flo = x, fx
                break
            hi, fhi, step = x, fx, 2.0 * step
    return shrink_bracket(f, lo, flo, hi, fhi,
                          lambda lo_, hi_, gap: hi_ - lo_ <= tol or gap <= VALUE_RTOL * eps)
