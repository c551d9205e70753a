"""The privacy accountant: compose mechanisms, ask for eps or delta (docs/theory.md §3.4).

    acct = Accountant()
    acct.compose(ShuffledRound(n=10**5, eps0=2.0), times=100)
    acct.compose(Gaussian(sigma=3.0))
    acct.epsilon(delta=1e-6)   # -> AccountingResult(value, lower, method='pld', ...)

Every method that applies (PLD: every event has one; RDP: every event has a curve; KOV:
identical (eps, delta) events) gives a sound upper bound, so ``method="auto"`` evaluates them
all and reports the smallest, naming it; ``others`` holds every method's value. ``method=``
forces one and raises when it cannot take an event. Gaussians compose to one Gaussian
(docs/theory.md §3.5): every method composes them as one, and a ledger of Gaussians alone is
answered in closed form (method "exact", the true value rounded up, ``lower`` its lower end).

PLD grid step: unless the user fixes h, it is chosen from the composition so that the
certified gap (upper - lower) is at most ``gap`` (1%) of eps. Few rounds use a round-up and a
round-down grid (gap <= rounds x h); many rounds use one mean-preserving grid with the
Gopi-Lee-Wutschitz 2021 concentration bound (gap ~ 2 h sqrt(rounds log(1/delta) / 2)). A grid
that would exceed ``max_size`` points is coarsened, never truncated into eps = inf.
"""
from __future__ import annotations

import functools
import math
import time

import numpy as np

from ..core import display as D
from ..core import validate as V
from ..core.progress import compute_time
from . import gaussian as G
from . import plan as PL
from . import pld as P
from . import pure as PU
from . import rdp as R
# the events defined beside their mathematics add themselves to EVENTS (a saved ledger may name
# them) and register with the backends
from . import allocation_event as _allocation_event  # noqa: F401
from . import allocation_central as _allocation_central  # noqa: F401
from . import event_pld as EPLD
from . import event_rdp as ERDP
from .events import Event, Gaussian
from .kov import approx_dp, kov_delta, kov_epsilon
from .ledger_io import MAX_ROUNDS, LedgerIO
from .result import AccountingResult
from .rounding import round_up

__all__ = ["AccountingResult", "METHODS", "DUAL_MAX_ROUNDS", "MAX_ROUNDS", "Accountant",
           "rdp_delta"]



METHODS = ("auto", "pld", "rdp", "kov", "exact", "pure")
DUAL_MAX_ROUNDS = 40  # up to this many rounds, round-up/round-down grids (gap <= T h) win
H_MIN, H_MAX = 1e-7, 0.5
# the finest first grid when rounded-up rounds dominate the gap: finer than dp_accounting's
# default 1e-4 (MNIST DP-SGD: eps 2.381671 at 8e-5, 2.381634 at 5e-5, 2.381705 at 1e-4, where
# dp_accounting, which leaves out the FFT's rounding error, reports 2.381686), at 0.6x the
# composition time of 5e-5
H_ROUNDED_MIN = 8e-5
ROUNDED_MAX_POINTS = 2 ** 20  # a refinement below H_ROUNDED_MIN stays under this grid length
LOWER_COARSER = 2.0  # the round-down grids beside a mean grid: this many times its step


class Accountant(LedgerIO):
    """Records (event, times) pairs; answers epsilon(delta) and delta(eps) (§3.4).

    Parameters
    ----------
    h : float, optional
        The PLD grid step; None (default) chooses it per query so that the PLD gap
        (upper - lower) is at most ``gap`` x eps.
    max_size : int, default 1,048,576
        Cap on the composed grid's length (2^10 to 2^28): a grid that would exceed it is
        coarsened (h grows) rather than truncated.
    orders : array of float, optional
        The Renyi orders of the RDP method (each > 1).
    gap : float, default 0.01
        The relative PLD gap (upper - lower) / eps a per-query grid aims at (> 0).
    max_seconds : float or None, default 60
        Time limit of a query (its plan is refused beforehand when it would exceed it; None or
        inf: no limit). A setting of this machine: not saved in a ledger.
    """

    def __init__(self, h: float | None = None, max_size: int = P.MAX_SIZE,
                 orders=R.DEFAULT_ORDERS, gap: float = 0.01,
                 max_seconds: float | None = PL.MAX_SECONDS):
        self.h = None if h is None else P.check_grid(h)
        self.max_size = V.integer_at_least(max_size, "max_size", 2 ** 10, 2 ** 28)
        self.orders = R.check_orders(orders)
        self.gap = V.positive_finite(gap, "gap")
        # a query's time limit (accounting/plan.py); this machine's, so not saved in a ledger
        self.max_seconds = PL.check_seconds(max_seconds)
        self._plan: PL.Plan | None = None  # what the query under way builds
        self.events: list[tuple[Event, int]] = []
        self._rounds = 0  # running total of the events' times: compose() is O(1), not O(events)
        self._composed: dict = {}  # composed PLDs by (h, rounding) until the next compose()

    # -- notebooks (core/display.py) ---------------------------------------------------------
    def _settings(self) -> str:
        h = f"h = {self.h:g}" if self.h is not None else f"h chosen per query (gap <= {self.gap:g} eps)"
        return f"{h}, max_size = {self.max_size:,}"

    def __repr__(self) -> str:
        shown = "; ".join(f"{t:,} x {e!r}" for e, t in self.events[:3])
        more = f"; ... {len(self.events) - 3} more" if len(self.events) > 3 else ""
        return (f"Accountant({self.rounds:,} rounds in {len(self.events)} events"
                + (f": {shown}{more}" if self.events else "") + f"; {self._settings()})")

    def _repr_html_(self) -> str:
        return D.html_table(f"Accountant: {self.rounds:,} rounds in {len(self.events)} events",
                            ("times", "event"), [(t, repr(e)) for e, t in self.events],
                            [self._settings()])

    def to_frame(self):
        """The ledger as a pandas DataFrame, one row per composed event in order: columns
        event (its class name), parameters ('n=10000, eps0=1', its fields) and times; the
        settings and the total rounds in ``frame.attrs``. pandas is optional (the [pandas]
        extra): without it, ImportError names how to install it, as every ``to_frame()``."""
        return D.ledger_frame(self.events, rounds=self.rounds, h=self.h,
                              max_size=self.max_size, gap=self.gap)

    def compose(self, event: Event, times: int = 1) -> "Accountant":
        """Record ``times`` rounds of ``event``; returns the accountant (calls chain).

        Parameters
        ----------
        event : Event
            A mechanism of ``ldpcompress.accounting`` (e.g. :class:`ShuffledRound`).
        times : int, default 1
            How many rounds of it (>= 1; at most 1e9 rounds in all).
        """
        if not isinstance(event, Event):
            raise TypeError(f"event must be an ldpcompress.accounting Event, got "
                            f"{type(event).__name__}")
        times = V.integer_at_least(times, "times", 1, MAX_ROUNDS)
        if self.rounds + times > MAX_ROUNDS:
            raise ValueError(f"times: at most {MAX_ROUNDS:.0e} rounds in all are supported (the "
                             f"grids' and KOV's arithmetic is checked up to there), "
                             f"{self.rounds} recorded, {times} more asked")
        self.events.append((event, times))
        self._rounds += times
        self._composed.clear()
        return self

    @property
    def rounds(self) -> int:
        """Rounds composed in all (the sum of every event's times)."""
        return self._rounds

    # -- the composed PLD -------------------------------------------------------------------
    def pld(self, h: float = 1e-4) -> P.PLD:
        """The composed PLD of the ledger on a round-up grid of step h (every event's
        pessimistic grid; Gaussians as one): its delta and eps are upper bounds.

        Parameters
        ----------
        h : float, default 1e-4
            The grid step (> 0).
        """
        h = P.check_grid(h)
        pld = self._compose_pld(h, "up")
        if pld is None:
            raise ValueError("an event of the ledger has no round-up PLD")
        return pld

    # -- PLD -----------------------------------------------------------------------------------
    def _pld(self, h: float, rounding: str) -> P.PLD | None:
        """The composed PLD (kept for later queries); None when some event has no PLD with
        that rounding."""
        key = (h, rounding, None if self._plan is None else self._plan.points)
        if key not in self._composed:
            self._composed[key] = self._compose_pld(h, rounding)
        return self._composed[key]

    def _merged(self) -> list[tuple[Event, int]]:
        """The events with every Gaussian folded into one Gaussian of mu = sqrt(sum t mu_i^2)
        (rounded up): the same mechanism (docs/theory.md §3.5), one grid instead of many. Equal
        events are merged (accounting/plan.py), or the query's plan says what to build."""
        events = PL.group(self.events) if self._plan is None else self._plan.events
        gauss = [(_gaussian_mu(e), t) for e, t in events if _gaussian_mu(e) is not None]
        if len(gauss) + sum(t for _, t in gauss) <= 2:  # at most one, once: nothing to fold
            return events
        rest = [(e, t) for e, t in events if _gaussian_mu(e) is None]
        return [(Gaussian(1.0, G.compose_mu(gauss)), 1)] + rest

    def _compose_pld(self, h: float, rounding: str) -> P.PLD | None:
        total = None
        deadline = None if self._plan is None else self._plan.deadline
        for event, times in self._merged():
            PL.check_deadline(deadline, "the PLD's composition")
            one = _event_pld(event, h, rounding)
            if one is None:
                return None
            one = one.self_compose(times, self.max_size)
            total = one if total is None else total.compose(one, self.max_size)
        return total

    def _grid_rounds(self) -> int:
        """Grids composed by the PLD (Gaussians folded into one count once)."""
        return sum(t for _, t in self._merged())

    def _scheme(self) -> str:
        return "dual" if self._grid_rounds() <= DUAL_MAX_ROUNDS else "mean"

    def _rounded_rounds(self) -> int:
        """Grids composed whose "mean" grid is not mean-rounded (event_pld.mean_grid False): each
        adds up to h to the certified gap, whatever the other rounds do."""
        return sum(t for e, t in self._merged() if not EPLD.mean_grid(e))

    def _gap_per_h(self, delta: float) -> float:
        """Predicted gap (upper - lower) in eps per unit of h for the scheme in use: T for
        round-up/round-down grids, the GLW21 concentration term for one mean grid (a first
        guess: the measured gap refines it, and rounded-up rounds are met by _h_floor)."""
        t = self._grid_rounds()
        if self._scheme() == "dual":
            return float(t)
        return 2.0 * math.sqrt(t * math.log(100.0 / delta) / 2.0) + 1.0

    def _grid_points(self, h: float) -> int:
        """Length of the longest direction of the composed grid of step h (built already)."""
        key = (h, "mean" if self._scheme() == "mean" else "up",
               None if self._plan is None else self._plan.points)
        pld = self._composed.get(key)
        return 0 if pld is None else max(d.pmf.size for d in pld.dirs)

    def _h_floor(self, delta: float) -> float:
        """The finest first grid the accountant tries: H_ROUNDED_MIN when rounded-up rounds
        dominate the predicted gap on one mean grid (a gap ~ T h: the target may need a grid
        too long to compose quickly; a refinement below it is made only while the composed grid
        stays under ROUNDED_MAX_POINTS, else the target is reported missed), else H_MIN."""
        t, det = self._grid_rounds(), self._rounded_rounds()
        if self._scheme() == "mean" and det > 0 and \
                det >= 2.0 * math.sqrt((t - det) * math.log(100.0 / delta) / 2.0) + 1.0:
            return H_ROUNDED_MIN
        return H_MIN

    def _pld_at(self, h: float, fn):
        """fn(upper_pld, lower_pld_or_None, scheme) on the grids of step h: scheme "dual" (a
        round-down grid is the estimate) or "single" (the pessimistic grid's own estimate, or
        the round-down grids' when rounded-up rounds are composed: the larger of the two)."""
        if self._scheme() == "dual":
            up = self._pld(h, "up")
            try:
                low = self._pld(h, "down")
            except P.GridTooLarge:
                low = None
            if low is not None:
                return fn(up, low, "dual")
            return fn(up, None, "single")  # no round-down grid: the up grid's own estimate
        low = None
        if self._rounded_rounds():
            # rounds without a mean grid drift the single grid's own estimate by up to h
            # each: the round-down grids (for sampled noise a balanced post-processing,
            # accounting/lower_grid.py) give a lower end without that drift, on a grid
            # LOWER_COARSER times coarser (MNIST DP-SGD, h = 8e-5: 2.38147 at h, 2.38004 at
            # 2 h, where the upper end is 2.38167; the gap target is 1%) at a fraction of
            # the cost
            try:
                low = self._pld(min(H_MAX, LOWER_COARSER * h), "down")
            except P.GridTooLarge:
                low = None
        return fn(self._pld(h, "mean"), low, "single")

    def _pld_query(self, fn, eps_scale: float | None, delta_for_gap: float, refine: bool = True):
        """(upper, lower, h, notes): the PLD answer with h fixed by the user, or chosen so the
        gap is <= self.gap x the answer. GridTooLarge coarsens h."""
        notes = []
        floor, stopped = H_MIN, False
        if self.h is not None:
            h, auto = self.h, False
        else:
            auto = True
            per_h = self._gap_per_h(delta_for_gap)
            scale = eps_scale if eps_scale and math.isfinite(eps_scale) else 1.0
            floor = self._h_floor(delta_for_gap)
            h = min(H_MAX, max(floor, 0.8 * self.gap * scale / per_h))
        coarsened = False
        last = None
        for _ in range(12):
            try:
                self._check_pld_cost(h)
                up, low = self._pld_at(h, fn)
            except P.GridTooLarge as err:
                if auto and h >= H_MAX:
                    raise ValueError(f"no grid step up to {H_MAX} fits: {err}") from None
                factor = max(4.0, 1.25 * err.points / err.cap)
                if not auto:
                    err.args = (f"{err} (h = {h:g} was fixed; omit h to let the accountant "
                                f"choose it)",)
                    raise
                notes.append(f"grid step {h:.3g} needs {err.points:.3g} points: coarsened")
                h, coarsened = min(H_MAX, h * factor), True
                continue
            last = (up, low, h)
            if not (auto and refine) or coarsened or low is None or not math.isfinite(up):
                break
            gap = up - low
            if gap <= self.gap * up or h <= H_MIN:
                break
            finer = max(H_MIN, 0.8 * h * self.gap * up / gap)  # refine once more
            if finer < floor and self._grid_points(h) * h / finer > ROUNDED_MAX_POINTS:
                stopped = True  # rounded-up rounds dominate: a grid this fine costs minutes
                break
            h = finer
        if last is None:
            raise ValueError("the PLD grid could not be sized: " + "; ".join(notes))
        up, low, h = last
        if not math.isfinite(up):
            low = None
            notes.append("pld: no grid point reaches the target (the grid's pessimistic mass "
                         "exceeds it): not an answer")
        if refine and low is not None and math.isfinite(up) and up > 0 and \
                up - low > self.gap * up:
            why = (f" (rounded-up rounds ({self._rounded_rounds():,}) dominate the gap: the "
                   f"grid it needs would pass {ROUNDED_MAX_POINTS:,} points; fix h to go finer)"
                   if stopped else "")
            notes.append(f"PLD gap {up - low:.3g} exceeds {self.gap:.0%} of eps at h = {h:.3g}"
                         + why)
        return up, low, h, notes

    def _check_pld_cost(self, h: float) -> None:
        """Count a PLD pass at step h against the query's limit, or refuse it (plan.py)."""
        if self._plan is None or any(k[0] == h for k in self._composed):
            return
        grids = 2 if self._scheme() == "dual" or self._rounded_rounds() else 1
        self._plan.charge_pld(*PL.composition_seconds(self._merged(), h, self.max_size, grids))

    # -- RDP / KOV -----------------------------------------------------------------------------
    def _rdp(self, orders: np.ndarray | None = None) -> np.ndarray:
        """The composed RDP curve (sum over events) at the given orders (default: the grid)."""
        orders = self.orders if orders is None else orders
        curve = np.zeros(orders.size)
        deadline = None if self._plan is None else self._plan.deadline
        merged = self._merged()
        for event, times in merged:
            PL.check_deadline(deadline, "the Renyi curve")
            r = _event_rdp(event, tuple(orders.tolist()))
            if r is None:
                raise ValueError(f"{type(event).__name__} has no RDP curve; use method='pld'")
            curve = curve + times * r
        # a sum of E non-negative rounded terms is within E ulps (relative) of the exact one
        return curve * (1.0 + (len(merged) + 2) * 2.0 ** -52)

    def _kov(self) -> tuple[float, float, int]:
        pairs = {approx_dp(event) for event, _ in self.events}
        known = {pair for pair in pairs if pair is not None}
        if len(known) != 1 or len(pairs) != 1:
            raise ValueError("KOV composition needs every event to be the same (eps, delta)-DP "
                             "event (PureDP, ApproxDP, or shuffled rounds of one eps0); use "
                             "method='pld'")
        eps, delta = known.pop()
        return eps, delta, self.rounds

    def _check(self, method: str) -> str:
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if not self.events:
            raise ValueError("the accountant has no events: call compose() first")
        return method

    # -- queries -------------------------------------------------------------------------------
    def epsilon(self, delta: float, method: str = "auto", compare: bool = False) -> AccountingResult:
        """Smallest eps with delta(eps) <= delta for the composition (an upper bound).

        Parameters
        ----------
        delta : float
            The central delta in (0, 1).
        method : {"auto", "pld", "rdp", "kov", "exact"}, default "auto"
            The method; "auto" takes the smallest sound answer of those that apply ("exact":
            a ledger of Gaussian mechanisms only).
        compare : bool, default False
            Evaluate every applicable method (their values in the result's ``others``).
        """
        delta = V.probability_open(delta, "delta")
        return self._query("epsilon", delta, self._check(method), compare)

    def delta(self, eps: float, method: str = "auto", compare: bool = False) -> AccountingResult:
        """delta(eps) of the composition (an upper bound).

        Parameters
        ----------
        eps : float
            The central eps (>= 0).
        method : {"auto", "pld", "rdp", "kov", "exact"}, default "auto"
            The method; "auto" takes the smallest sound answer of those that apply ("exact":
            a ledger of Gaussian mechanisms only).
        compare : bool, default False
            Evaluate every applicable method (their values in the result's ``others``).
        """
        eps = V.nonnegative(eps, "eps")
        return self._query("delta", eps, self._check(method), compare)

    def _exact_mu(self) -> float | None:
        """mu of the ledger when it holds Gaussians only (closed form), else None."""
        merged = self._merged()
        if len(merged) == 1 and merged[0][1] == 1:
            return _gaussian_mu(merged[0][0])
        return None

    def _pure_total(self) -> float | None:
        """E = sum of t eps over the events when every one is pure (eps, 0)-DP, else None."""
        return PU.composed_eps(PL.group(self.events))

    def _relations_note(self) -> list[str]:
        kinds = sorted({e.relation.replace("_", "/") for e, _ in self.events
                        if e.relation is not None})
        if len(kinds) < 2:
            return []
        return [f"events hold under different neighbouring relations ({', '.join(kinds)}): the "
                "bound is for one individual whose data changes in each event as that event's "
                "relation states"]

    def _query(self, query: str, arg: float, method: str, compare: bool) -> AccountingResult:
        start = time.perf_counter()  # wall clock: the plan's backstop deadline
        try:
            return self._planned(query, arg, method, compare, start)
        finally:
            self._plan = None

    def _planned(self, query: str, arg: float, method: str, compare: bool,
                 start: float) -> AccountingResult:
        clock = compute_time()  # the reported time leaves out kernel loading
        mu = self._exact_mu()
        if method == "exact" and mu is None:
            raise ValueError("method 'exact' needs a ledger of Gaussian mechanisms only "
                             "(they compose to one Gaussian); use method='auto'")
        if method == "pure" and self._pure_total() is None:
            raise ValueError("method 'pure' needs a ledger of pure (eps, 0)-DP events only "
                             "(Laplace, PureDP, RandomizedResponse, ...); use method='auto'")
        pure = ("pure",) if self._pure_total() is not None else ()
        methods: tuple[str, ...]
        if method == "auto" and not compare:  # (on a tie, the first listed is reported)
            methods = ("exact",) if mu is not None else ("rdp", "kov", "pld") + pure
        elif method == "auto" or compare:
            methods = ("rdp", "kov", "pld") + pure + (("exact",) if mu is not None else ())
        else:
            methods = (method,)
        values: dict = {}
        h_plan = self.h if self.h is not None else 1e-3
        self._plan = PL.plan(self.events, methods, h_plan, self.orders.size, self.max_seconds,
                             start)
        notes: list[str] = self._relations_note()
        if self._plan.points is not None or not self._plan.refine_rdp:
            notes.append(self._plan.note)  # the plan changed what is built
        lower, h, exact_lower = None, None, None
        for m in methods:
            try:
                if m == "exact":
                    assert mu is not None  # "exact" is asked or chosen only with mu
                    exact_lower, values[m] = (G.epsilon_bracket(mu, arg) if query == "epsilon"
                                              else G.delta_bracket(mu, arg))
                elif m == "pld":
                    up, lower, h, pld_notes = self._pld_by(query, arg, values)
                    notes += pld_notes
                    values[m] = up
                else:
                    values[m] = self._by(m, query, arg)
            except (ValueError, ArithmeticError) as err:
                if m == method or (m == "pld" and isinstance(err, P.GridTooLarge)):
                    raise  # a grid step the user fixed is refused, not silently skipped
                values[m] = None
                notes.append(f"{m}: {err}")
        if method == "auto":
            finite = {m: v for m, v in values.items() if v is not None and not math.isnan(v)}
            if not finite:
                raise ValueError("no method applies: " + "; ".join(notes))
            best = min(finite, key=lambda m: (finite[m], m != "pld"))
        else:
            best = method
        value = values[best]
        if exact_lower is not None:
            lower = exact_lower  # the truth's own bracket: [lower, value]
        if lower is not None and lower > value:
            lower = value  # a tighter method beat the PLD's own optimistic estimate
        others = {m: v for m, v in values.items() if m != best}
        target = self.gap if self.h is None and h is not None and query == "epsilon" else None
        return AccountingResult(query, value, lower, best, others,
                                compute_time() - clock, h, tuple(notes), self._plan.note, target)

    def _pld_by(self, query: str, arg: float, values: dict):
        finite = [v for v in values.values() if v is not None and math.isfinite(v)]
        if query == "epsilon":
            scale = min(finite) if finite else self._scale_hint(arg)

            def fn(up, low, scheme):
                if scheme == "single":
                    own = up.epsilon_lower(arg)
                    return up.epsilon(arg), own if low is None else max(own, low.epsilon(arg))
                return up.epsilon(arg), None if low is None else low.epsilon(arg)
            return self._pld_query(fn, scale, arg)

        def fn_d(up, low, scheme):
            if scheme == "single":
                own = up.delta_lower(arg)
                return up.delta(arg), own if low is None else max(own, low.delta(arg))
            return up.delta(arg), None if low is None else low.delta(arg)
        return self._pld_query(fn_d, max(arg, 1e-3), 1e-6, refine=False)

    def _scale_hint(self, delta: float) -> float | None:
        """A rough eps (RDP, else KOV) to size the PLD grid when no other method was asked."""
        for m in ("rdp", "kov"):
            try:
                v = self._by(m, "epsilon", delta)
            except (ValueError, FloatingPointError):
                continue
            if math.isfinite(v):
                return v
        return None

    def _by(self, method: str, query: str, arg: float) -> float:
        if method == "pure":  # closed form of (E, 0)-DP (accounting/pure.py)
            total = self._pure_total()
            assert total is not None  # "pure" is asked or chosen only then
            return PU.pure_epsilon(total, arg) if query == "epsilon" else PU.pure_delta(total, arg)
        if method == "rdp":
            if query == "epsilon":
                refine = lambda a: float(self._rdp(np.array([a]))[0])  # noqa: E731
                if self._plan is not None and not self._plan.refine_rdp:
                    # the grid's orders give a valid bound; refining them would cost too much
                    return R.rdp_to_epsilon(self.orders, self._rdp(), arg)[0]
                return R.rdp_to_epsilon(self.orders, self._rdp(), arg, refine)[0]
            return rdp_delta(self.orders, self._rdp(), arg)
        eps, d0, k = self._kov()
        return kov_epsilon(eps, d0, k, arg) if query == "epsilon" else kov_delta(eps, d0, k, arg)



def _gaussian_mu(event: Event) -> float | None:
    """mu = sensitivity / sigma of a Gaussian mechanism (Gaussians compose in closed form,
    docs/theory.md §3.5), else None."""
    return event.sensitivity / event.sigma if isinstance(event, Gaussian) else None


@functools.lru_cache(maxsize=64)
def _event_pld(event: Event, h: float, rounding: str) -> P.PLD | None:
    """One event's PLD, cached: events are frozen (hashable) dataclasses."""
    return EPLD.pld(event, h, rounding)


@functools.lru_cache(maxsize=256)
def _event_rdp(event: Event, orders: tuple) -> np.ndarray | None:
    """One event's RDP curve at the given orders, cached."""
    r = ERDP.rdp(event, np.array(orders))
    return None if r is None else np.asarray(r, dtype=float)


def rdp_delta(orders: np.ndarray, rdp: np.ndarray, eps: float) -> float:
    """delta(eps) from an RDP curve: the inverse of CKS20, minimised over the orders:
    log delta = (a-1)(rdp - eps + log(1 - 1/a)) - log a, rounded up (the float error of the
    sum, a few ulps of its terms' magnitudes, is added before exp; never below 5e-324)."""
    if eps == math.inf:
        return 0.0  # finite Renyi divergences: no infinite privacy loss
    a = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    t = np.log1p(-1.0 / a)
    log_d = (a - 1) * (rdp - eps + t) - np.log(a)
    slack = 8.0 * 2.0 ** -52 * ((a - 1) * (np.abs(rdp) + abs(eps) + np.abs(t)) + np.log(a))
    log_d = float(np.min(log_d + slack))
    # a delta below the smallest double is reported as that double, not 0 (not pure DP)
    return float(min(1.0, max(5e-324, round_up(math.exp(min(0.0, log_d))))))
