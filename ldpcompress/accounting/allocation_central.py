"""Random allocation of a central noise mechanism: balls-and-bins DP-SGD (docs/theory.md §3.8).

Each record is used in k of the T steps of an epoch, chosen uniformly and secretly,
independently of the other records (k = 1: "balls and bins", one step per epoch); step t adds
Gaussian (or Laplace) noise to the sum of the clipped contributions of its batch; epochs
compose. Neighbours: one record added or removed (the steps' outputs do not reveal batch sizes).

For k = 1 let Z_t = dP_t/dQ_t be the likelihood ratio of one step (N(1, s^2) against N(0, s^2)
in the record's direction, or the Laplace pair). The epoch's pair has likelihood ratio
S = (1/T) sum_t Z_t, the Z_t i.i.d. under Q with E Z = 1, so

    delta_remove(eps) = E_Q[(S - e^eps)_+],    delta_add(eps) = E_Q[(1 - e^eps S)_+],

both expectations of convex functions of S: a law of Z larger in convex order gives larger
deltas in both directions (and so does every adaptive choice of the steps, §3.8).

Numerics: the law of Z is put on a lattice of step D two ways, a mean-preserving split of each
cell [jD, (j+1)D) onto its ends (larger in convex order: the upper grid) and a contraction of
the cells' atoms into buckets with lattice means (smaller: the lower grid); the law of the sum of
T lattice variables follows by FFT convolutions with repeated squaring, tails cut (their mass
goes to the infinity atoms of the upper grid and is dropped from the lower one), the FFT
rounding error bounded and carried. The loss of the pair at S = s is log s (remove, under P,
whose mass there is s Q(S = s)) and -log s (add, under Q).

k > 1 (Feldman & Shenfeld, arXiv 2502.08202): a uniform k-subset of the T steps is the choice
of one step in each block of a uniformly random partition of the steps into k blocks of sizes
floor(T/k) or ceil(T/k); joint convexity of the hockey-stick divergence over the partition
bounds the epoch by the composition of k allocations of one step out of floor(T/k) or ceil(T/k).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from ..core import validate as V
from ..core.numerics import UNIT_ROUNDOFF
from ..kernels.allocation import contract_down, split_up
from . import event_pld as EPLD
from . import plan as PL
from . import pld as P
from .events import EVENTS, Event
from .interop import dp_event_of

__all__ = ["AllocatedGaussian", "AllocatedLaplace", "GaussianStep", "LaplaceStep",
           "allocation_pld", "step_law", "MAX_STEPS"]

MAX_STEPS = 10 ** 8       # steps per epoch (the lattice of the sum grows like sqrt(T))
MAX_EPOCHS = 10 ** 6
KAPPA = 1.0 / 64.0        # lattice step D in units of the standard deviation of Z
MAX_CELLS = 2 ** 21       # cells of one step's lattice law
MAX_WINDOW = 2 ** 22      # points of the law of the sum (D is doubled until it fits)
SUM_TAIL = 1e-30          # mass cut from each tail of a convolution
STEP_TAIL = 1e-14          # T P(Z > top) and E[Z; Z > top] are at most this
COARSEST = 1.0           # beyond this lattice step (in sd(Z)) the one-step mechanism is used
LOSS_SLACK = 1e-11        # bound on the relative error of the cells' means (tests: mpmath)


# ------------------------------------------------------------------------------------------------
# One step's likelihood ratio Z under Q, cut into lattice cells
# ------------------------------------------------------------------------------------------------

def _differences(lower: np.ndarray, upper: np.ndarray, split: np.ndarray) -> np.ndarray:
    """Cell masses from a distribution function at the cell edges: differences of the lower
    tail values F (monotone) left of the median, of the upper tail values 1 - F right of it, and
    both across it. Neighbouring values within a factor 2 subtract exactly (Sterbenz), so the
    masses are exactly those of cells whose edges moved by the tails' own rounding."""
    lower = np.maximum.accumulate(lower)
    upper = np.minimum.accumulate(upper)
    left = lower[1:] - lower[:-1]
    right = upper[:-1] - upper[1:]
    across = (0.5 - lower[:-1]) + (0.5 - upper[1:])
    return np.where(split[:-1], right, np.where(split[1:], across, left))


@dataclass(frozen=True)
class GaussianStep:
    """Z = exp(c X - c^2/2), X ~ N(0, 1), c = sensitivity / sigma: the Gaussian pair's ratio."""

    c: float

    DP_EVENT: ClassVar[str] = "GaussianDpEvent"

    @classmethod
    def of(cls, sigma: float) -> "GaussianStep":
        return cls(1.0 / sigma)

    def sd(self) -> float:
        return math.sqrt(math.expm1(self.c * self.c))

    def top(self, steps: int) -> float:
        """z above which Z has mass <= STEP_TAIL / T and E[Z; Z > z] <= STEP_TAIL."""
        x = max(-special.ndtri(STEP_TAIL / steps), self.c - special.ndtri(STEP_TAIL))
        return math.exp(self.c * x - 0.5 * self.c * self.c)

    def lattice(self, step: float, top: float):
        """(origin z0, step, cells): the lattice {z0 + j step}, j <= cells, covering [0, top]."""
        return 0.0, step, int(math.ceil(top / step)) + 1

    def atoms(self, z0: float, step: float, k_cells: int):
        """(w, m, cell): mass and first moment of Z on each cell [j step, (j+1) step), j <
        k_cells: P(Z <= z) = Phi(x(z)) and E[Z; Z <= z] = Phi(x(z) - c), x(z) = (log z +
        c^2/2) / c, each from the accurate tail (the mass above the last cell is left out)."""
        c = self.c
        z = np.arange(k_cells + 1, dtype=float) * step
        with np.errstate(divide="ignore"):
            x = (np.log(z) + 0.5 * c * c) / c
        out = []
        for arg in (x, x - c):
            above = arg > 0.0
            out.append(_differences(special.ndtr(np.where(above, 0.0, arg)),
                                    special.ndtr(-np.where(above, arg, 0.0)), above))
        return out[0], out[1], np.arange(k_cells)

    def single_pld(self, h: float, rounding: str) -> P.PLD:
        return P.gaussian(1.0 / self.c, 1.0, h, rounding != "down")


@dataclass(frozen=True)
class LaplaceStep:
    """Z = exp((|x| - |x - 1|) / b), x ~ Laplace(0, b): atoms e^-a (mass 1/2) and e^a (mass
    e^-a / 2), a = 1/b, and in between Z = e^((2x - 1)/b) with density e^(-x/b) / (2b) on
    x in (0, 1)."""

    b: float

    DP_EVENT: ClassVar[str] = "LaplaceDpEvent"

    @classmethod
    def of(cls, scale: float) -> "LaplaceStep":
        return cls(scale)

    def sd(self) -> float:
        a = 1.0 / self.b
        return math.sqrt(2.0 / 3.0 * math.expm1(a) + math.expm1(-2.0 * a) / 3.0)

    def top(self, steps: int) -> float:
        return math.exp(1.0 / self.b)

    def lattice(self, step: float, top: float):
        """The lattice from e^-a to e^a with a step at most `step`: both atoms on it."""
        a = 1.0 / self.b
        span = math.exp(a) - math.exp(-a)
        cells = max(1, int(math.ceil(span / step)))
        return math.exp(-a), span / cells, cells + 1

    def atoms(self, z0: float, step: float, k_cells: int):
        """The continuous part's cells (mass (E_j - E_(j+1))/2, E_j = e^(-x_j/b), moment
        (G_(j+1) - G_j)/2, G_j = e^((x_j - 1)/b)) and the two atoms, in their cells."""
        b = self.b
        a = 1.0 / b
        z = z0 + np.arange(k_cells + 1, dtype=float) * step
        x = np.clip((1.0 + b * np.log(z)) / 2.0, 0.0, 1.0)
        e_lo = np.minimum.accumulate(np.exp(-x / b))
        g_hi = np.maximum.accumulate(np.exp((x - 1.0) / b))
        w = np.concatenate([(e_lo[:-1] - e_lo[1:]) / 2.0, [0.5, 0.5 * math.exp(-a)]])
        m = np.concatenate([(g_hi[1:] - g_hi[:-1]) / 2.0, [0.5 * math.exp(-a), 0.5]])
        cells = np.concatenate([np.arange(k_cells), [0, k_cells - 1]])
        return w, m, cells

    def single_pld(self, h: float, rounding: str) -> P.PLD:
        return P.laplace(self.b, 1.0, h, rounding != "down")


# ------------------------------------------------------------------------------------------------
# The law of the sum of T lattice variables
# ------------------------------------------------------------------------------------------------

class _TooWide(Exception):
    pass


@dataclass(frozen=True)
class _Sum:
    """The law of sum_t Z'_t on the lattice {i step}: pmf[i - lo], its L1 error bound err;
    shift bounds how far a lower grid's lattice means may exceed the buckets' means."""

    lo: int
    pmf: np.ndarray
    err: float


def _trim(lo: int, pmf: np.ndarray, tail: float):
    """Drop the ends of mass <= tail (a pointwise smaller law)."""
    first, last = P.tail_window(pmf, tail)
    return lo + first, pmf[first:last + 1].copy()


def _convolve(x: _Sum, y: _Sum) -> _Sum:
    out, err = P.fft_convolve(x.pmf, y.pmf)
    np.maximum(out, 0.0, out=out)  # clipping moves no entry further from the exact value
    lo, out = _trim(x.lo + y.lo, out, max(SUM_TAIL, err))
    if out.size > MAX_WINDOW:
        raise _TooWide
    # (a + e_a) * (b + e_b) - a * b has L1 norm <= e_a |b| + e_b |a| + e_a e_b, |a|, |b| <= 1
    return _Sum(lo, out, x.err + y.err + x.err * y.err + err)


def _power(pmf: np.ndarray, times: int) -> _Sum:
    """Law of the sum of `times` independent copies, by repeated squaring."""
    lo, pmf = _trim(0, pmf, SUM_TAIL)
    power, result, t = _Sum(lo, pmf, 0.0), None, times
    while t:
        if t & 1:
            result = power if result is None else _convolve(result, power)
        t >>= 1
        if t:
            power = _convolve(power, power)
    assert result is not None
    return result


@dataclass(frozen=True)
class _Laws:
    origin: float  # the lattice of one step is {origin + j step}; of the sum, T origin + i step
    step: float
    upper: _Sum
    lower: tuple  # (for the remove direction: rounded down, for add: rounded up)
    shift: float  # the lower lattice sum exceeds the buckets' mean sum by at most this


@functools.lru_cache(maxsize=16)
def _laws(law, steps: int) -> _Laws | None:
    """Upper (split) and lower (contracted) lattice laws of sum_t Z_t, t = 1..steps; None when
    the lattice step needed (for the cell or window caps) exceeds COARSEST x sd(Z)."""
    sd, top = law.sd(), law.top(steps)
    step = max(KAPPA * sd, top / MAX_CELLS, 26.0 * math.sqrt(steps) * sd / MAX_WINDOW)
    while step <= COARSEST * sd:
        z0, step, k_cells = law.lattice(step, top)
        w, m, cells = law.atoms(z0, step, k_cells)
        keep = w > 0.0
        w, m, cells = w[keep], m[keep], cells[keep].astype(np.int64)
        c = m / w - z0  # lattice coordinates: the lattice points are j step
        order = np.argsort(c, kind="stable")
        w, c, cells = w[order], c[order], cells[order]
        up = np.zeros(k_cells + 2)
        split_up(w, c, cells, step, up)
        lows = []
        for rounded_up in (False, True):
            low = np.zeros(k_cells + 2)
            contract_down(w, np.maximum.accumulate(c), step, low, rounded_up)
            low *= 1.0 - 8.0 * UNIT_ROUNDOFF  # below the exact contraction despite roundings
            lows.append(low)
        try:
            upper = _power(up, steps)
            lower = (_power(lows[0], steps), _power(lows[1], steps))
        except _TooWide:
            step *= 2.0
            continue
        # each bucket's mean is its lattice point to within a few roundings of numbers <= top
        # (or 1e-9 step, for an atom taken as on the lattice)
        return _Laws(z0, step, upper, lower,
                     (64.0 * UNIT_ROUNDOFF * top + 1e-9 * step) * steps)
    return None  # the lattice would be coarser than Z's spread: not worth building


def _lattice(laws: _Laws, s_sum: _Sum, steps: int):
    """(T S, Q-mass) at the lattice points of positive S carrying mass."""
    s = (s_sum.lo + np.arange(s_sum.pmf.size)) * laws.step + steps * laws.origin
    keep = (s > 0.0) & (s_sum.pmf > 0.0)
    return s[keep], s_sum.pmf[keep]


def _allocation_pld(law, steps: int, h: float, rounding: str) -> P.PLD | None:
    """PLD of one allocation of a record to one of `steps` steps (both directions): atoms at
    the lattice points s of S, loss log s under P (mass s Q(S = s)) and -log s under Q."""
    laws = None if steps == 1 else _laws(law, steps)
    if laws is None:
        # T = 1, or a step law too heavy-tailed for the lattice: the mechanism itself bounds
        # the allocation (joint convexity over the record's step); its round-down grid is no
        # lower estimate of the allocation, so none is offered
        return law.single_pld(h, rounding) if steps == 1 or rounding != "down" else None
    if rounding != "down":
        s, q = _lattice(laws, laws.upper, steps)
        # L1 error of the Q-law: the FFTs', and 2u per step from the lattice law's additions
        err = laws.upper.err + 2.0 * UNIT_ROUNDOFF * steps
        log_s = np.log(s / steps)
        p_masses = s / steps * q
        inf_p = max(0.0, 1.0 - math.fsum(p_masses)) + 8.0 * UNIT_ROUNDOFF
        inf_q = max(0.0, 1.0 - math.fsum(q)) + 8.0 * UNIT_ROUNDOFF
        errs = (err * float(s.max()) / steps + 2.0 * LOSS_SLACK, err)
        return P.pair_atoms(log_s + LOSS_SLACK, p_masses, -log_s + LOSS_SLACK, q, h, rounding,
                            (inf_p, inf_q), errs)
    # lower: remove from the law rounded down, S moved down by the buckets' mean error; add
    # from the law rounded up, S moved up
    s_rem, q_rem = _lattice(laws, laws.lower[0], steps)
    s_add, q_add = _lattice(laws, laws.lower[1], steps)
    lo_s = np.maximum(s_rem - laws.shift, 0.0) / steps
    pos = lo_s > 0.0
    hi_s = (s_add + laws.shift) / steps
    errs = (laws.lower[0].err * float(lo_s.max()), laws.lower[1].err)
    return P.pair_atoms(np.log(lo_s[pos]) - LOSS_SLACK, lo_s[pos] * q_rem[pos],
                        -np.log(hi_s) - LOSS_SLACK, q_add, h, rounding, (0.0, 0.0), errs)


def allocation_pld(law, steps: int, per_record: int, epochs: int, h: float,
                   rounding: str) -> P.PLD | None:
    """PLD of `epochs` epochs of allocating each record to `per_record` of `steps` steps: per
    epoch, the composition of per_record allocations of one step out of floor(T/k) or
    ceil(T/k) (module docstring)."""
    base, extra = divmod(steps, per_record)
    parts = [(base, per_record - extra), (base + 1, extra)]
    epoch = None
    for size, times in parts:
        if times == 0:
            continue
        part = _allocation_pld(law, size, h, rounding)
        if part is None:
            return None
        one = part.self_compose(times)
        epoch = one if epoch is None else epoch.compose(one)
    assert epoch is not None
    return epoch if epochs == 1 else epoch.self_compose(epochs)


# ------------------------------------------------------------------------------------------------
# Events
# ------------------------------------------------------------------------------------------------

class _Allocated(Event):
    """Shared validation of the allocated noise events: subclasses name the field holding the
    noise scale (SCALE), its range per unit sensitivity and the step law (STEP, which names its
    dp_accounting event); their accounting registers with the backends below."""

    relation = "add/remove"
    DP_EVENT: ClassVar[str] = "RandomAllocationDpEvent"  # dp_accounting after 0.6.0
    SCALE: ClassVar[str]
    SCALE_RANGE: ClassVar[tuple]
    STEP: ClassVar[type]  # GaussianStep or LaplaceStep
    steps: int
    per_record: int
    epochs: int
    sensitivity: float

    def __post_init__(self):
        V.positive_finite(getattr(self, self.SCALE), self.SCALE)
        V.positive_finite(self.sensitivity, "sensitivity")
        lo, hi = self.SCALE_RANGE
        ratio = getattr(self, self.SCALE) / self.sensitivity
        if not lo <= ratio <= hi:
            raise ValueError(f"{self.SCALE} / sensitivity must be in [{lo:g}, {hi:g}], got "
                             f"{ratio:g}")
        object.__setattr__(self, "steps", V.integer_at_least(self.steps, "steps", 1, MAX_STEPS))
        object.__setattr__(self, "per_record", V.integer_at_least(
            self.per_record, f"per_record (at most steps = {self.steps})", 1, self.steps))
        object.__setattr__(self, "epochs",
                           V.integer_at_least(self.epochs, "epochs", 1, MAX_EPOCHS))


@dataclass(frozen=True)
class AllocatedGaussian(_Allocated):
    """Each record in ``per_record`` of ``steps`` steps per epoch, chosen uniformly and
    secretly (balls-and-bins DP-SGD at per_record = 1); each step adds N(0, sigma^2) to the
    sum of its batch's contributions (L2 sensitivity ``sensitivity``); ``epochs`` epochs.
    Add/remove neighbours (docs/theory.md §3.8).

    Parameters
    ----------
    sigma : float
        Standard deviation of each step's noise (sigma / sensitivity in [0.25, 1e4]).
    steps : int
        Steps per epoch.
    per_record : int, default 1
        Steps of each epoch a record takes part in (chosen uniformly and secretly).
    epochs : int, default 1
        Epochs, each with a fresh allocation.
    sensitivity : float, default 1
        The L2 sensitivity of a record's contribution.
    """

    sigma: float
    steps: int
    per_record: int = 1
    epochs: int = 1
    sensitivity: float = 1.0

    SCALE: ClassVar[str] = "sigma"
    SCALE_RANGE: ClassVar[tuple] = (0.25, 1e4)
    STEP: ClassVar[type] = GaussianStep


@dataclass(frozen=True)
class AllocatedLaplace(_Allocated):
    """As AllocatedGaussian with Laplace noise of scale b (L1 sensitivity) at each step.

    Parameters
    ----------
    scale : float
        The scale b of each step's Laplace noise (b / sensitivity in [0.1, 1e4]).
    steps : int
        Steps per epoch.
    per_record : int, default 1
        Steps of each epoch a record takes part in (chosen uniformly and secretly).
    epochs : int, default 1
        Epochs, each with a fresh allocation.
    sensitivity : float, default 1
        The L1 sensitivity of a record's contribution.
    """

    scale: float
    steps: int
    per_record: int = 1
    epochs: int = 1
    sensitivity: float = 1.0

    SCALE: ClassVar[str] = "scale"
    SCALE_RANGE: ClassVar[tuple] = (0.1, 1e4)
    STEP: ClassVar[type] = LaplaceStep


EVENTS.update({cls.__name__: cls for cls in (AllocatedGaussian, AllocatedLaplace)})


def step_law(event):
    """The step law of an allocated event at its noise per unit sensitivity, rounded down
    (less noise is the pessimistic side)."""
    scale = getattr(event, event.SCALE) / event.sensitivity
    return event.STEP.of(scale * (1.0 - 4.0 * UNIT_ROUNDOFF))


# -- the events' accounting, registered with the backends (dispatch on the event's type) -------

def _pld(event, h, rounding):
    return allocation_pld(step_law(event), event.steps, event.per_record, event.epochs, h,
                          rounding)


def _work(event, h, orders):
    """The lattice law of the steps' mean, self-composed by squaring: up to about half a
    second per construction on the reference machine at any h; no Renyi curve (a query
    states its cost from this, accounting/plan.py)."""
    return 0.0, 5e6, 0.0


def _dp_event(event, dp):
    """dp_accounting's RandomAllocationDpEvent (after 0.6.0), epochs as a
    SelfComposedDpEvent; None when the installed dp_accounting lacks it."""
    cls = getattr(dp, event.DP_EVENT, None)
    if cls is None:
        return None
    step = getattr(dp, event.STEP.DP_EVENT)(getattr(event, event.SCALE) / event.sensitivity)
    one = cls(event=step, num_selected=event.per_record, num_steps=event.steps)
    return one if event.epochs == 1 else dp.SelfComposedDpEvent(one, event.epochs)


for _cls in (AllocatedGaussian, AllocatedLaplace):
    EPLD.pld.register(_cls, _pld)
    PL.work.register(_cls, _work)
    dp_event_of.register(_cls, _dp_event)
