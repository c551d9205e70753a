"""Planning a query of a ledger (docs/theory.md §3.4; docs/guide.md, "Ledgers"): identical
events grouped, the cost stated before it is spent, cheaper sound constructions where the full
ones would not fit the time limit, and a refusal naming the cost, the limit and the option that
raises it when even those would not.

* **Grouping.** Equal events (frozen dataclasses) are composed once with the sum of their
  times: the PLD self-composes by squaring (O(log T) convolutions), the Renyi curve is
  multiplied by T. Composition is commutative, so the order of the rounds does not matter.
* **Cost.** Each distinct event states the kernel steps of its constructions
  (``Event.work``: atoms binned, profile terms summed); a step costs SECONDS_PER_STEP and a
  convolution of M points SECONDS_PER_FFT M log2 M on the reference machine (2 shared cores),
  the composed grid estimated from the events' largest losses at the grid step. These are
  nominal figures (a run lands within a few times of them), used to decide before spending.
* **Economy.** When the full constructions would take more than CONSTRUCTION_SHARE of the
  limit, every event with ``points`` (accounted from a privacy profile) is built as a
  connect-the-dots pair from fewer profile points (48, 24 or 12: the finest that fits) and
  exact clone-pair grids give way to such pairs. A connect-the-dots pair through any set of
  profile points dominates the event (Doroshenko et al. 2022: the lower convex hull of points
  on or above the profile lies above it), so the answer stays an upper bound, a little looser
  (about 1% at 48 points, 5% at 24 on heterogeneous shuffled rounds). The answer is, as
  always, the smallest of the sound methods that ran.
* **Composition.** Once its grid step is known, each PLD pass states its convolutions' cost;
  a pass that would take the estimated total past the limit is not run (noted), and the other
  methods answer; with none left the query is refused. Decisions use the nominal estimates
  only, so a query answers the same way on a busy machine as on an idle one.
* **Backstop.** The construction and composition loops stop a query still running at
  BACKSTOP times its limit (an event whose cost the model misjudges cannot run unbounded).
"""
from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass

from ..core import validate as V
from . import event_profiles as EP
from .events import Event, PoissonSampledGaussian, PoissonSampledLaplace, ShuffledRound
from .kov import approx_dp

__all__ = ["MAX_SECONDS", "SECONDS_PER_STEP", "SECONDS_PER_FFT", "ECONOMY_POINTS",
           "CONSTRUCTION_SHARE", "QueryTooCostly", "check_seconds", "group", "economy", "Plan",
           "plan", "composition_seconds", "check_deadline", "work"]

MAX_SECONDS = 60.0  # default time limit of a query (Accountant(max_seconds=...), --max-seconds)
SECONDS_PER_STEP = 1e-7  # one kernel step (an atom binned, a profile term summed), overheads in
SECONDS_PER_FFT = 1.2e-8  # per point x log2(points) of one FFT convolution
SECONDS_PER_EVENT = 1e-3  # the Python work around one distinct event's construction
ECONOMY_POINTS = (48, 24, 12)  # profile points of the economy constructions, finest first
CONSTRUCTION_SHARE = 0.5  # of the limit the constructions may take (the rest: composition)
RDP_REFINES = 12  # evaluations of the composed curve at single orders (rdp_to_epsilon)
BACKSTOP = 3.0  # a query still running at this multiple of its limit is stopped


class QueryTooCostly(ValueError):
    """A query (or one of its methods) would take, or took, more than its time limit."""


def check_seconds(value, name: str = "max_seconds") -> float | None:
    """A time limit in seconds: a positive number (inf or None: no limit)."""
    if value is None:
        return None
    v = V.real(value, name)
    if not v > 0.0:
        raise ValueError(f"{name} must be a positive number of seconds (inf or None: no limit), "
                         f"got {V.shown(value)}")
    return None if math.isinf(v) else v


def group(events) -> list:
    """(event, times) pairs with equal events merged (times summed), in first-seen order."""
    merged: dict = {}
    for event, times in events:
        merged[event] = merged.get(event, 0) + times
    return list(merged.items())


def economy(event, points: int):
    """The event built as a connect-the-dots pair from at most ``points`` profile points (an
    event with fields ``pld_method`` / ``points``), else the event itself: a sound stand-in."""
    names = {f.name for f in dataclasses.fields(event)} if dataclasses.is_dataclass(event) \
        else set()
    changes: dict = {}
    if "pld_method" in names and event.pld_method != "dots":
        changes["pld_method"] = "dots"
    if "points" in names and event.points > points:
        changes["points"] = points
    return dataclasses.replace(event, **changes) if changes else event


def _largest_loss(event) -> float:
    """The largest privacy loss of the event's pair, for the size of its grid (an estimate)."""
    eps0 = EP.dots_eps_max(event) if hasattr(event, "eps0") else None
    if isinstance(eps0, (int, float)) and math.isfinite(eps0):
        return float(eps0)
    pair = approx_dp(event)
    return float(pair[0]) if pair is not None and math.isfinite(pair[0]) else 10.0


def _seconds(event, h: float, orders: int, methods) -> float:
    """Seconds of building one distinct event for the methods (nominal)."""
    shared, pld, rdp = work(event, h, orders)
    steps = shared + (pld if "pld" in methods else 0.0) + (rdp if "rdp" in methods else 0.0)
    return steps * SECONDS_PER_STEP + SECONDS_PER_EVENT


def _refine_seconds(groups, h: float, methods) -> float:
    if "rdp" not in methods:
        return 0.0
    return RDP_REFINES * SECONDS_PER_STEP * sum(work(e, h, 1)[2] for e, _ in groups)


def composition_seconds(groups, h: float, max_size: int, grids: int = 1) -> tuple[float, str]:
    """(seconds, description) of composing the events' PLDs on ``grids`` grids of step h: the
    convolutions of the self-compositions and of the distinct events, each of about M points,
    M = the largest event grid plus the composed grid's typical width."""
    # the grid of losses in [-L, L] is trimmed where the mass falls below 1e-30: about half
    spans = [min(float(max_size), _largest_loss(e) / h + 3.0) for e, _ in groups]
    widest = max(spans)
    spread = math.sqrt(sum(t * s * s for (_, t), s in zip(groups, spans)))
    width = min(float(max_size), 2.0 * widest + spread / 16.0)
    size = width + widest
    convolutions = (len(groups) - 1) + sum(2 * int(t).bit_length() - 2 for _, t in groups)
    seconds = grids * convolutions * SECONDS_PER_FFT * size * math.log2(size)
    return seconds, f"{grids * convolutions} convolutions of ~{size:.3g} points at h = {h:.3g}"


@dataclass(frozen=True)
class Plan:
    """What a query builds: the (event, times) pairs to account (grouped; economy stand-ins
    when ``points`` is set), whether the Renyi order is refined, the limit and the nominal
    seconds the constructions take (``planned``; the PLD passes add theirs to ``spent``), the
    backstop deadline (a time.perf_counter() value; None: no limit) and a note stating the
    cost."""

    events: list
    points: int | None
    refine_rdp: bool
    limit: float | None
    planned: float
    deadline: float | None
    note: str
    spent: list = dataclasses.field(default_factory=list)  # nominal seconds of PLD passes

    def charge_pld(self, seconds: float, what: str) -> None:
        """Count a PLD pass of ``seconds`` (nominal) against the limit, or refuse it."""
        if self.limit is None:
            return
        left = self.limit - self.planned - sum(self.spent)
        if seconds > left:
            raise QueryTooCostly(f"the PLD would take about {seconds:.3g} s ({what}), "
                                 f"{max(left, 0.0):.3g} s of the {self.limit:g} s limit are "
                                 "left after the constructions: not run (raise max_seconds, "
                                 "--max-seconds on the command line)")
        self.spent.append(seconds)


def plan(events, methods, h: float, orders: int, max_seconds: float | None,
         start: float) -> Plan:
    """The plan of a query asking ``methods`` (see the module docstring): full constructions
    when they fit CONSTRUCTION_SHARE of the limit; else the costliest events, one by one, built
    as economy pairs of 48 (then 24, 12) points until the rest fits; QueryTooCostly, naming
    the cost, the limit and the option, when even all of them at 12 points would not."""
    groups = group(events)
    costs = [_seconds(e, h, orders, methods) for e, _ in groups]
    full = sum(costs)
    what = f"{len(groups)} distinct events of {len(events)} recorded"
    if max_seconds is None:
        return Plan(groups, None, True, None, full, None,
                    f"cost: {what}, ~{full:.2g} s; no time limit")
    deadline = start + BACKSTOP * max_seconds
    allowed = CONSTRUCTION_SHARE * max_seconds
    if full <= allowed:
        refine = _refine_seconds(groups, h, methods)
        fits = full + refine <= allowed
        return Plan(groups, None, fits, max_seconds, full + fits * refine, deadline,
                    f"cost: {what}, ~{full:.2g} s of the {max_seconds:g} s limit"
                    + ("" if fits else "; the Renyi order is not refined (over the limit)"))
    cheapest = full
    for points in ECONOMY_POINTS:
        cheap = [economy(e, points) for e, _ in groups]
        saving = [c - _seconds(x, h, orders, methods) for c, x in zip(costs, cheap)]
        total, chosen = full, list(groups)
        for i in sorted(range(len(groups)), key=lambda i: -saving[i]):
            if total <= allowed or saving[i] <= 0.0:
                break
            total -= saving[i]
            chosen[i] = (cheap[i], groups[i][1])
        cheapest = min(cheapest, total)
        if total <= allowed:
            built = group(chosen)
            refine = _refine_seconds(built, h, methods)
            fits = total + refine <= allowed
            swapped = sum(1 for x, y in zip(chosen, groups) if x[0] is not y[0])
            return Plan(built, points, fits, max_seconds, total + fits * refine, deadline,
                        f"cost: {what}, ~{full:.2g} s in full, more than {allowed:.2g} s of "
                        f"the {max_seconds:g} s limit: {swapped} built as connect-the-dots "
                        f"pairs of {points} points (~{total:.2g} s; sound, slightly looser; "
                        "raise max_seconds / --max-seconds for the full constructions)")
    raise QueryTooCostly(
        f"this query would take about {full:.3g} s ({what}; about {cheapest:.3g} s even with "
        f"{ECONOMY_POINTS[-1]}-point connect-the-dots pairs), more than {allowed:.3g} s of the "
        f"{max_seconds:g} s limit: refused before any is spent; raise the limit (max_seconds, "
        "--max-seconds on the command line) or query fewer distinct events")


def check_deadline(deadline: float | None, what: str) -> None:
    """Raise QueryTooCostly when the query's backstop deadline has passed (checked between
    steps)."""
    if deadline is not None and time.perf_counter() > deadline:
        raise QueryTooCostly(f"{what} ran {BACKSTOP:g} times past the query's time limit and "
                             "was stopped (its cost was misjudged; raise max_seconds, "
                             "--max-seconds on the command line)")


# -- the cost backend: the nominal work of building each event ----------------------------------

@functools.singledispatch
def work(event: Event, h: float, orders: int) -> tuple[float, float, float]:
    """(shared, PLD, RDP): nominal kernel steps (an atom binned, a profile term summed) to
    build this event's PLD at grid step h and its Renyi curve at ``orders`` orders; shared
    steps serve both (a profile's dots atoms). A query states its cost from these before
    spending it. By default a connect-the-dots event of ``points`` profile evaluations when it
    has them (a few profiles of n users), else a closed form binned on a grid over its largest
    loss; events with other costs register their own (a misjudged one is stopped at a multiple
    of the query's limit).

    Parameters
    ----------
    event : Event
        The mechanism.
    h : float
        The PLD grid step.
    orders : int
        The number of Renyi orders.
    """
    points, n = getattr(event, "points", None), getattr(event, "n", None)
    if points is not None and n is not None:
        return points * (15.0 * math.sqrt(n) + 3e4), points, orders * points
    pair = approx_dp(event)
    loss = pair[0] if pair is not None else 10.0
    return 0.0, 1e3 + 2.0 * loss / h, 10.0 * orders


def _shuffled_round_work(event, h, orders):
    """Profile evaluations of the dots (each about 15 sqrt(n q (1-q)) + 3000 steps: window terms,
    q = e^-eps0), the ~288 n q atoms of the exact pair (binned on two grids), and the
    exact Renyi curve's atoms and its grid of step 1e-5 at each order."""
    q = math.exp(-event.eps0)
    evals = event.points * (15.0 * math.sqrt(event.n * q * (1.0 - q)) + 3000.0)
    atoms = 288.0 * event.n * q
    method = EP.pld_method(event)
    dots = method == "dots" or event.eps0 <= EP.DOTS_RDP_EPS0_MAX
    pld = 2.0 * atoms if method == "exact" else event.points
    rdp = orders * event.points if dots else 0.0
    if EP.exact_rdp(event) or not dots:
        rdp += atoms + orders * min(atoms, 2.0 * event.eps0 / 1e-5) / 4.0
    return (evals if dots else 0.0), pld, rdp


work.register(ShuffledRound, _shuffled_round_work)


def _poisson_work(event, h, orders):
    """Losses up to about 12/s + 1/(2 s^2) (s = scale / sensitivity): a connect-the-dots
    grid of step h (a profile value per point), the Renyi grid of step RDP_GRID_H at each
    order."""
    s = getattr(event, event.SCALE) / event.sensitivity
    loss = min(12.0 / s + 0.5 / s ** 2, 1e6)
    return 0.0, 100.0 * loss / h, 0.14 * loss / EP.RDP_GRID_H * orders


work.register(PoissonSampledGaussian, _poisson_work)
work.register(PoissonSampledLaplace, _poisson_work)
