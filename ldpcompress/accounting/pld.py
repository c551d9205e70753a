"""Privacy loss distributions on a grid, composed by FFT (docs/theory.md §1, §3.2).

A :class:`PLD` holds, for each direction of a pair ((P, Q) and, when the pair is not
symmetric, (Q, P)), the law of the loss L = log(P/Q) under P on the grid {(lo + i) h}, plus an
infinity mass. ``upper=True`` grids round every loss up and send truncated upper tails to the
infinity atom, so every delta they report is an upper bound; ``upper=False`` grids round down
and drop truncated mass, giving the matching optimistic estimate. ``mean=True`` builders split
each loss between its two grid neighbours preserving its mean (Gopi-Lee-Wutschitz 2021): the
PLD counts those steps and its queries add the Hoeffding correction, so the eps gap grows like
h sqrt(T) instead of T h. ``err`` carries a proven bound on the FFT rounding error, added to
(upper) or subtracted from (lower) every delta. All queries work in a form free of overflow
(exponents e^(eps - L) <= 1 only), so losses and eps far beyond 709 are fine. A grid that would
exceed its size cap raises :class:`GridTooLarge` (a ValueError) instead of being truncated.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ..core import validate as V
from ..core.numerics import UNIT_ROUNDOFF
from ..kernels.renyi import ROUND_DOWN, ROUND_MEAN, ROUND_UP, clone_pld_grid
from ..kernels.suffix import discounted_suffix
from .convolution import fft_convolve, tail_window  # noqa: F401 (re-exported)
from .dots import grid_masses, profile_atoms, profile_atoms_at  # noqa: F401 (re-exported)
from .rounding import round_up
from .profiles import general_split  # noqa: F401  (re-exported for callers of pld)

__all__ = ["TAIL", "MAX_SIZE", "ALLOC_CAP", "ROUNDINGS", "GridTooLarge",
           "Direction", "PLD", "GLW_FRACTIONS", "check_grid", "check_rounding", "from_pmfs",
           "symmetric_atoms", "pure_dp", "approx_dp", "grid_points", "clone_pair_grid",
           "clone_pair", "gaussian", "laplace", "from_profile", "profile_atoms", "dots_direction",
           "profile_atoms_at", "pair_atoms", "fft_convolve",
           "tail_window"]


TAIL = 1e-30        # mass truncated from each tail after a convolution
MAX_SIZE = 2 ** 20  # default cap on the length of a composed grid
ALLOC_CAP = 2 ** 25  # cap on the points of a single mechanism's grid before trimming (256 MiB)
ROUNDINGS = ("up", "down", "mean")


class GridTooLarge(ValueError):
    """A grid would need more points than allowed: use a larger step h (or a larger cap)."""

    def __init__(self, points: float, cap: int, what: str):
        self.points, self.cap = float(points), int(cap)
        super().__init__(f"{what} needs {points:.3g} grid points ({points * 8 / 2**20:.3g} MiB), "
                         f"more than the cap of {cap} points: use a larger grid step h")


@dataclass(frozen=True)
class Direction:
    """Loss law of one direction: pmf on {(lo + i) h}, infinity mass, FFT error bound, and
    ``pushed``: the mass moved pessimistically (trimmed tails, windows), which bounds how far
    the grid's delta may exceed that of the rounded law."""

    lo: int
    pmf: np.ndarray
    inf_mass: float = 0.0
    err: float = 0.0
    pushed: float = 0.0


@dataclass(frozen=True)
class PLD:
    """A (possibly asymmetric) pair's privacy loss distribution(s) on a grid of step h.

    ``steps`` counts the composed mechanisms; ``mean_steps`` of them had their losses rounded
    to the grid in a mean-preserving way (Gopi-Lee-Wutschitz 2021), the others up (upper) or
    down. ``bias`` bounds the total drift of the mean-preserving roundings caused by the
    floating-point error of the losses themselves. With mean_steps > 0 every query applies the
    GLW21 concentration correction (see :meth:`epsilon`).
    """

    h: float
    upper: bool
    dirs: tuple[Direction, ...]
    steps: int = 1
    mean_steps: int = 0
    bias: float = 0.0

    # -- composition -------------------------------------------------------------------------
    def compose(self, other: "PLD", max_size: int = MAX_SIZE) -> "PLD":
        """PLD of the two mechanisms run in sequence (independent losses add)."""
        _check_compatible(self, other)
        n = max(len(self.dirs), len(other.dirs))
        dirs = tuple(_convolve(self.dirs[min(i, len(self.dirs) - 1)],
                               other.dirs[min(i, len(other.dirs) - 1)], self.upper, max_size)
                     for i in range(n))
        return replace(self, dirs=dirs, steps=self.steps + other.steps,
                       mean_steps=self.mean_steps + other.mean_steps, bias=self.bias + other.bias)

    def self_compose(self, times: int, max_size: int = MAX_SIZE) -> "PLD":
        """T-fold composition by repeated squaring (O(log T) convolutions)."""
        if not isinstance(times, (int, np.integer)) or times < 1:
            raise ValueError(f"times must be an integer >= 1, got {times!r}")
        result, power, t = None, self, int(times)
        while t:
            if t & 1:
                result = power if result is None else result.compose(power, max_size)
            t >>= 1
            if t:
                power = power.compose(power, max_size)
        assert result is not None  # times >= 1
        return result

    # -- queries -----------------------------------------------------------------------------
    def delta(self, eps):
        """delta(eps) = P(L = inf) + E[(1 - e^(eps - L))_+], max over directions (docs/theory.md §1).

        With mean-rounded steps: delta_grid(eps - t) + e^(-2 t^2 / (M h^2)), minimised over t
        (GLW21: the rounding errors are independent, zero-mean and in an interval of length h,
        so by Hoeffding their sum exceeds t with probability at most that exponential).
        """
        arr = np.atleast_1d(np.asarray(eps, dtype=float))
        if self.mean_steps == 0:
            out = self._grid_delta(arr, self.upper)
        else:
            xs, ts = self._glw_terms()
            shifted = arr[:, None] - ts[None, :] - self.bias  # negative eps is fine here
            grid = self._grid_delta(shifted.ravel(), True).reshape(shifted.shape)
            out = np.minimum(1.0, round_up(np.min(grid + xs[None, :], axis=1)))
        return float(out[0]) if np.ndim(eps) == 0 else out

    def epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with delta(eps) <= delta (exact on the grid law; inf if none).

        With mean-rounded steps (GLW21): min over x < delta of eps_grid(delta - x) + t(x) + bias,
        t(x) = h sqrt(M log(1/x) / 2), M = mean_steps: an upper bound on the true eps.
        """
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        if self.mean_steps == 0:
            return self._grid_eps(delta, self.upper, 0.0)
        return min(round_up(self._grid_eps(delta * (1.0 - f), True, 0.0)
                            + self._glw_t(delta * f) + self.bias) for f in GLW_FRACTIONS)

    def epsilon_lower(self, delta: float) -> float | None:
        """An optimistic estimate matching :meth:`epsilon` for pessimistic grids: max over x of
        eps_grid(delta + x) - t(x) - bias - (steps - M) h, the grid's delta first reduced by the
        pessimistically moved mass (so it bounds the rounded law's from below); x = t = 0 when
        no step was mean-rounded. None for round-down grids (they are the estimate)."""
        if not self.upper:
            return None
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        det = (self.steps - self.mean_steps) * self.h
        fractions = GLW_FRACTIONS if self.mean_steps else (0.0,)
        best = 0.0
        for f in fractions:
            target = delta * (1.0 + f)
            if target >= 1.0:
                continue
            t = self._glw_t(delta * f) if f else 0.0
            best = max(best, self._grid_eps(target, False, 1.0) - t - self.bias - det)
        return best

    def delta_lower(self, eps: float) -> float | None:
        """Optimistic delta(eps) matching :meth:`delta` for pessimistic grids: max over t of
        delta_grid(eps + t + bias + (steps - M) h) - pushed - e^(-2t^2/(M h^2)) (t = 0 when
        no step was mean-rounded); None for round-down grids."""
        if not self.upper:
            return None
        xs, ts = self._glw_terms() if self.mean_steps else (np.zeros(1), np.zeros(1))
        det = (self.steps - self.mean_steps) * self.h
        shifted = float(eps) + ts + self.bias + det
        grid = np.max([_delta_at(d, self._sums(i), shifted, False) - d.pushed
                       for i, d in enumerate(self.dirs)], axis=0)
        return float(max(0.0, np.max(grid - xs)))

    # -- internals ---------------------------------------------------------------------------
    def _sums(self, i: int):
        """Suffix sums of direction i, computed once per PLD (every query reuses them)."""
        cache = self.__dict__.setdefault("_sums_cache", {})
        if i not in cache:
            cache[i] = _suffix_sums(self.dirs[i], self.h)
        return cache[i]

    def _grid_delta(self, arr: np.ndarray, upper: bool) -> np.ndarray:
        return np.max([_delta_at(d, self._sums(i), arr, upper)
                       for i, d in enumerate(self.dirs)], axis=0)

    def _grid_eps(self, delta: float, upper: bool, pushed_weight: float) -> float:
        """eps of the grid law; pushed_weight = 1 lowers every delta by the pushed mass."""
        return max(_eps_dir(d, self.h, delta + pushed_weight * d.pushed, upper, self._sums(i))
                   for i, d in enumerate(self.dirs))

    def _glw_t(self, x: float) -> float:
        """Hoeffding: the sum of M rounding errors in intervals of length h exceeds t(x) with
        probability <= x."""
        return self.h * math.sqrt(self.mean_steps * math.log(1.0 / x) / 2.0)

    def _glw_terms(self):
        xs = np.geomspace(1e-40, 0.5, 60)
        ts = self.h * np.sqrt(self.mean_steps * np.log(1.0 / xs) / 2.0)
        return xs, ts


GLW_FRACTIONS = (0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 3e-3, 1e-3, 1e-4, 1e-5)


def _check_compatible(a: PLD, b: PLD) -> None:
    if not isinstance(b, PLD):
        raise TypeError(f"can only compose with a PLD, got {type(b).__name__}")
    if a.h != b.h or a.upper != b.upper:
        raise ValueError(f"PLDs differ in grid step ({a.h} vs {b.h}) or rounding direction")


# ----------------------------------------------------------------------------------------------
# Grid operations
# ----------------------------------------------------------------------------------------------

def _trim(lo: int, pmf: np.ndarray, inf_mass: float, upper: bool, max_size: int,
          tail: float = TAIL, what: str = "the composed PLD"):
    """Cut tails of mass <= tail: upper tail to the infinity atom (upper) or dropped (lower);
    lower tail moved up to the first kept point (upper) or dropped. Returns
    (lo, pmf, inf_mass, pushed) with pushed the mass moved. A kept support longer than
    max_size raises GridTooLarge: truncating it would report delta = 1 (eps = inf)."""
    pmf = np.maximum(pmf, 0.0)
    first, last = tail_window(pmf, tail)
    if last - first + 1 > max_size:
        raise GridTooLarge(last - first + 1, max_size, what)
    below = float(pmf[:first].sum())
    above = float(pmf[last + 1:].sum())  # summed directly: total - cum[last] would cancel
    kept = pmf[first:last + 1].copy()
    if upper:
        kept[0] += below
        inf_mass += above
    return lo + first, kept, inf_mass, below + above


def _convolve(x: Direction, y: Direction, upper: bool, max_size: int) -> Direction:
    pmf, err = fft_convolve(x.pmf, y.pmf)
    # P(either infinite) = a + b (1 - a): unlike 1 - (1 - a)(1 - b), tiny masses survive;
    # an upper grid rounds it up past the two roundings
    inf_mass = x.inf_mass + y.inf_mass * (1.0 - x.inf_mass)
    if upper and inf_mass > 0.0:
        inf_mass = math.nextafter(inf_mass * (1.0 + 2.0 * UNIT_ROUNDOFF), math.inf)
    # Entries below the FFT error bound are noise: tails of that mass are cut too.
    lo, pmf, inf_mass, pushed = _trim(x.lo + y.lo, pmf, inf_mass, upper, max_size, max(TAIL, err))
    return Direction(lo, pmf, min(inf_mass, 1.0), x.err + y.err + err,
                     x.pushed + y.pushed + pushed)


def _suffix_sums(d: Direction, h: float):
    """Suffix sums over the grid, each with a trailing 0, free of overflow at any loss:
    S1[i] = sum_{j>=i} p_j and R[i] = sum_{j>=i} p_j e^-(L_j - L_i) = p_i + e^-h R[i+1].

    R replaces sum_{j>=i} p_j e^-L_j, whose terms over- or underflow once |L| passes ~709:
    e^(eps - L_i) R[i] is the same quantity, with eps - L_i <= 0 wherever it is used. The
    recurrence adds non-negative terms, so its relative error is O(N u), like S1's.
    """
    losses = (d.lo + np.arange(d.pmf.size)) * h
    s1 = np.append(np.cumsum(d.pmf[::-1])[::-1], 0.0)
    # a Numba loop: scipy.signal.lfilter did the same, but importing scipy.signal takes 1-7 s
    r = discounted_suffix(np.ascontiguousarray(d.pmf, dtype=np.float64), math.exp(-h))
    return losses, s1, np.minimum(r, s1)


def _slack(d: Direction, s1_i, upper: bool):
    """Rounding allowance of inf + S1 - e^(eps - L_i) R plus the FFT error: + for upper, - for
    lower. Both sums are <= S1 and carry a relative error <= 3 N u (the factor e^-h is rounded
    too), so 8 N u S1 covers them."""
    slack = 8.0 * UNIT_ROUNDOFF * d.pmf.size * s1_i + d.err
    return slack if upper else -slack


def _delta_at(d: Direction, sums, eps: np.ndarray, upper: bool) -> np.ndarray:
    """delta(eps) = inf + S1[i] - e^(eps - L_i) R[i] (+ slack), i the first atom with L_i > eps
    (so the exponent is <= 0 and nothing overflows)."""
    losses, s1, r = sums
    i = np.searchsorted(losses, eps, side="right")
    top = np.append(losses, math.inf)[i]  # L_i; inf past the grid, where R = 0
    with np.errstate(invalid="ignore"):  # (finite - inf) -> exp(-inf) = 0 handled below
        factor = np.where(np.isfinite(top), np.exp(np.minimum(eps - top, 0.0)), 0.0)
    val = d.inf_mass + s1[i] - factor * r[i] + _slack(d, s1[i], upper)
    return np.clip(val, 0.0, 1.0)


def _eps_dir(d: Direction, h: float, target: float, upper: bool, sums=None) -> float:
    """Smallest eps >= 0 with delta(eps) <= target for one direction's grid law, rounded up
    (``upper``) or down past its float error. delta is solved in closed form on the interval
    between the two grid losses that bracket the answer (below the first atom every atom
    counts); an upper bound may stop at the interval's right end, a lower one at its left."""
    sums = _suffix_sums(d, h) if sums is None else sums
    losses, s1, r = sums
    if _delta_at(d, sums, np.array([0.0]), upper)[0] <= target:
        return 0.0
    # delta at each grid loss L_k (non-increasing): the atoms above it start at k + 1, and
    # e^(L_k - L_(k+1)) = e^-h
    at_grid = np.clip(d.inf_mass + s1[1:] - math.exp(-h) * r[1:] + _slack(d, s1[1:], upper),
                      0.0, 1.0)
    if at_grid[-1] > target:
        return math.inf
    i = int(np.argmax(at_grid <= target))  # first grid point where delta <= target
    # On (L_(i-1), L_i] -- for i = 0 on [0, L_0], below every atom (delta(0) > target puts
    # L_0 above 0) -- only atoms j >= i count: delta = inf + S1[i] - e^(eps - L_i) R[i] +
    # slack. Its ends: delta(L_i) <= target (a verified upper end) and delta > target at
    # L_(i-1) or 0 (a verified lower end).
    right = float(losses[i])
    left = float(losses[i - 1]) if i else 0.0
    num = d.inf_mass + s1[i] + _slack(d, s1[i], upper) - target
    if not (num > 0.0 and r[i] > 0.0):
        return right if upper else left
    lg = math.log(num / r[i])
    # the quotient, the log and the sum each err by an ulp or so: 8 ulps of the terms cover it
    err = 8.0 * UNIT_ROUNDOFF * (1.0 + abs(right) + abs(lg))
    if upper:
        return max(left, min(right + lg + err, right))
    return max(left, right + lg - err)


# ----------------------------------------------------------------------------------------------
# Builders
# ----------------------------------------------------------------------------------------------

def check_grid(h: float) -> float:
    """A grid step h in (0, 1]."""
    v = V.real(h, "h")
    if not (math.isfinite(v) and 0.0 < v <= 1.0):
        raise ValueError(f"grid step h must be in (0, 1], got {V.shown(h)}")
    return v


def check_rounding(rounding: str) -> str:
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")
    return rounding


def _rounding(upper: bool, mean: bool) -> str:
    if mean and not upper:
        raise ValueError("mean-preserving grids are pessimistic in every other respect: "
                         "use upper=True with mean=True")
    return "mean" if mean else ("up" if upper else "down")


def _make(h: float, rounding: str, dirs: tuple, bias: float = 0.0) -> PLD:
    """A one-mechanism PLD; a mean-rounded one counts one mean step."""
    mean = rounding == "mean"
    return PLD(h, rounding != "down", dirs, 1, int(mean), bias if mean else 0.0)


def _bin_atoms(losses: np.ndarray, masses: np.ndarray, h: float, rounding: str,
               inf_mass: float = 0.0, max_size: int = MAX_SIZE) -> Direction:
    """Round atom losses to the grid (up, down, or split between the two neighbours with the
    mean preserved, GLW21) and sum their masses."""
    keep = masses > 0.0
    losses, masses = losses[keep], masses[keep]
    finite = np.isfinite(losses)
    inf_mass += float(masses[~finite].sum())
    losses, masses = losses[finite], masses[finite]
    if losses.size == 0:
        return Direction(0, np.zeros(1), inf_mass)
    span = (float(losses.max()) - float(losses.min())) / h + 3.0
    if span > ALLOC_CAP:
        raise GridTooLarge(span, ALLOC_CAP, "this mechanism's PLD")
    slack = 1e-13 * (1.0 + np.abs(losses))
    if rounding == "mean":
        base = np.floor(losses / h)
        frac = np.clip(losses / h - base, 0.0, 1.0)
        idx = np.concatenate([base, base + 1.0]).astype(np.int64)
        masses = np.concatenate([masses * (1.0 - frac), masses * frac])
    else:
        idx = np.ceil((losses + slack) / h) if rounding == "up" else np.floor((losses - slack) / h)
        idx = idx.astype(np.int64)
    lo = int(idx.min())
    pmf = np.bincount(idx - lo, weights=masses)
    lo, pmf, inf_mass, pushed = _trim(lo, pmf, inf_mass, rounding != "down", max_size,
                                      what="this mechanism's PLD")
    return Direction(lo, pmf, inf_mass, pushed=pushed)


def _atom_bias(losses) -> float:
    """Bound on the drift of mean-preserving rounding caused by the losses' own float error."""
    finite = np.asarray(losses, float)
    finite = finite[np.isfinite(finite)]
    return 2e-13 * (1.0 + (float(np.max(np.abs(finite))) if finite.size else 0.0))


def from_pmfs(p: ArrayLike, q: ArrayLike, h: float = 1e-4,
              upper: bool = True, mean: bool = False) -> PLD:
    """PLD of an explicit pair of pmfs on a common finite support (both directions)."""
    h = check_grid(h)
    rounding = _rounding(upper, mean)
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError("p and q must be 1-D arrays of the same length")
    for name, v in (("p", p), ("q", q)):
        if np.any(v < 0) or not np.all(np.isfinite(v)) or abs(v.sum() - 1.0) > 1e-9:
            raise ValueError(f"{name} must be a probability vector (non-negative, sum 1)")

    def loss(a, b):
        with np.errstate(divide="ignore"):
            return np.where(b > 0, np.log(np.where(a > 0, a, 1.0)) - np.log(np.where(b > 0, b, 1.0)),
                            np.inf)

    l_pq, l_qp = loss(p, q), loss(q, p)
    return _make(h, rounding, (_bin_atoms(l_pq, p, h, rounding), _bin_atoms(l_qp, q, h, rounding)),
                 max(_atom_bias(l_pq), _atom_bias(l_qp)))


def symmetric_atoms(losses, masses, h: float = 1e-4, upper: bool = True,
                    inf_mass: float = 0.0, mean: bool = False) -> PLD:
    """PLD of a symmetric pair given its loss atoms under P (one direction suffices)."""
    h = check_grid(h)
    rounding = _rounding(upper, mean)
    losses = np.asarray(losses, float)
    return _make(h, rounding, (_bin_atoms(losses, np.asarray(masses, float), h, rounding,
                                          inf_mass),), _atom_bias(losses))


def pair_atoms(p_losses, p_masses, q_losses, q_masses, h: float, rounding: str,
               inf_masses=(0.0, 0.0), errs=(0.0, 0.0)) -> PLD:
    """PLD of an asymmetric pair given each direction's loss atoms: log(P/Q) under P and
    log(Q/P) under Q, their infinity masses and proven error bounds (added to every delta of
    an upper grid, subtracted from a round-down one)."""
    h = check_grid(h)
    check_rounding(rounding)
    dirs, bias = [], 0.0
    for losses, masses, inf_mass, err in ((p_losses, p_masses, inf_masses[0], errs[0]),
                                          (q_losses, q_masses, inf_masses[1], errs[1])):
        losses = np.asarray(losses, float)
        d = _bin_atoms(losses, np.asarray(masses, float), h, rounding, float(inf_mass))
        dirs.append(replace(d, err=d.err + float(err)))
        bias = max(bias, _atom_bias(losses))
    return _make(h, rounding, tuple(dirs), bias)


def pure_dp(eps: float, h: float = 1e-4, upper: bool = True, mean: bool = False) -> PLD:
    """Randomized response with parameter eps: the dominating pair of eps-DP."""
    return approx_dp(eps, 0.0, h, upper, mean)


def approx_dp(eps: float, delta: float, h: float = 1e-4, upper: bool = True,
              mean: bool = False) -> PLD:
    """Dominating pair of (eps, delta)-DP: infinity atom delta, RR atoms at +-eps with masses
    (1-delta)/(1+e^-eps) and (1-delta)/(1+e^eps) (no overflow at any eps)."""
    hi = (1.0 - delta) / (1.0 + math.exp(-eps))
    lo = (1.0 - delta) * float(special.expit(-eps))
    return symmetric_atoms([eps, -eps], [hi, lo], h, upper, inf_mass=delta, mean=mean)


def grid_points(eps0_or_loss: float, h: float) -> float:
    """Points of a grid covering [-L, L] with step h."""
    return 2.0 * math.ceil(eps0_or_loss / h) + 3.0


def clone_pair_grid(n: int, q: float, p: float, h: float, rounding, tol: float = 1e-30,
                    qc: float | None = None, pc: float | None = None):
    """(lo, pmf, inf_mass): the §2.1 pair's losses binned by the Numba kernel on a grid that
    covers every possible loss, [-log(p/pc), log(p/pc)]. qc = 1 - q and pc = 1 - p should be
    passed when known accurately (for p = e^eps0/(e^eps0+1), pc = 1/(e^eps0+1)); otherwise
    they are formed by subtraction. ``rounding`` is "up", "down" or "mean" (True/False for
    up/down are accepted)."""
    if rounding is True or rounding is False:
        rounding = "up" if rounding else "down"
    check_rounding(rounding)
    qc = 1.0 - q if qc is None else qc
    pc = 1.0 - p if pc is None else pc
    big_l = math.log(p) - math.log(pc)
    points = grid_points(big_l, h)
    if points > ALLOC_CAP:
        raise GridTooLarge(points, ALLOC_CAP, "the clone pair's PLD")
    lo = -int(math.ceil(big_l / h)) - 1
    mode = {"down": ROUND_DOWN, "up": ROUND_UP, "mean": ROUND_MEAN}[rounding]
    pmf, inf_mass = clone_pld_grid(n, q, qc, p, pc, h, lo, 2 * (-lo) + 1, tol, mode)
    return lo, pmf, inf_mass


def clone_pair(n: int, q: float, p: float, h: float = 1e-4, upper: bool = True,
               tol: float = 1e-30, max_size: int = MAX_SIZE, mean: bool = False,
               qc: float | None = None, pc: float | None = None) -> PLD:
    """PLD of the §2.1 clone pair, built atom by atom in a Numba kernel (symmetric pair)."""
    h = check_grid(h)
    rounding = _rounding(upper, mean)
    lo, pmf, inf_mass = clone_pair_grid(n, q, p, h, rounding, tol, qc, pc)
    lo, pmf, inf_mass, pushed = _trim(lo, pmf, inf_mass, upper, max_size,
                                      what="the clone pair's PLD")
    if upper:
        pushed += inf_mass  # the pair has no infinite loss: this is the windows' left-out mass
    big_l = math.log(p) - math.log(1.0 - p if pc is None else pc)
    return _make(h, rounding, (Direction(lo, pmf, inf_mass, pushed=pushed),),
                 2e-13 * (1.0 + big_l))


def gaussian(sigma: float, sensitivity: float = 1.0, h: float = 1e-4, upper: bool = True,
             tail: float = 1e-30, max_size: int = MAX_SIZE) -> PLD:
    """Gaussian mechanism: L ~ N(mu, 2 mu) under P with mu = s^2 / (2 sigma^2)."""
    h = check_grid(h)
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
    from scipy import stats  # imported when used (with scipy.signal: 0.3 s at import)
    mu = sensitivity ** 2 / (2.0 * sigma ** 2)
    sd = math.sqrt(2.0 * mu)
    z = stats.norm.isf(tail)
    if 2.0 * z * sd / h > max_size:
        raise GridTooLarge(2.0 * z * sd / h, max_size, "the Gaussian PLD")
    edges = np.arange(math.floor((mu - z * sd) / h) - 1, math.ceil((mu + z * sd) / h) + 2) * h
    # masses of the cells (edges[i], edges[i+1]], computed on the accurate side of the median
    upper_tail = stats.norm.sf((edges - mu) / sd)
    cells = upper_tail[:-1] - upper_tail[1:]
    left = (edges[1:] - mu) / sd < 0
    cdf = stats.norm.cdf((edges - mu) / sd)
    cells[left] = (cdf[1:] - cdf[:-1])[left]
    below, above = cdf[0], upper_tail[-1]
    if upper:  # each cell's mass goes to its right end; beyond the range: bottom / infinity
        # the loss is unbounded: the mass above the grid is positive even when its float (and
        # that of the cells next to it) underflows, so the atom is at least the next double up
        losses, inf_mass = edges[1:], math.nextafter(float(above), math.inf)
        cells[0] += below
    else:
        losses, inf_mass = edges[:-1], 0.0
    idx = np.rint(losses / h).astype(np.int64)
    return PLD(h, upper, (Direction(int(idx[0]), np.maximum(cells, 0.0), inf_mass),))


def laplace(scale: float, sensitivity: float = 1.0, h: float = 1e-4, upper: bool = True) -> PLD:
    """Laplace mechanism: atoms at +-s/b (masses 1/2, e^(-s/b)/2) and a continuous part with
    P(L <= l) = e^(-(s - b l)/(2b))/2 in between (docs/theory.md §3.2)."""
    h = check_grid(h)
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    top = sensitivity / scale
    if grid_points(top, h) > ALLOC_CAP:
        raise GridTooLarge(grid_points(top, h), ALLOC_CAP, "the Laplace PLD")
    edges = np.arange(math.floor(-top / h), math.ceil(top / h) + 1) * h
    inner = np.clip(edges, -top, top)
    cdf = 0.5 * np.exp(-(sensitivity - scale * inner) / (2.0 * scale))
    cells = np.diff(cdf)
    cell_losses = edges[1:] if upper else edges[:-1]
    losses = np.concatenate([cell_losses, [top, -top]])
    masses = np.concatenate([cells, [0.5, 0.5 * math.exp(-top)]])
    return symmetric_atoms(losses, masses, h, upper)


def from_profile(delta_fn: Callable[[float], float], eps_max: float, h: float = 1e-4,
                 upper: bool = True, points: int = 200, mean: bool = False) -> PLD:
    """Connect-the-dots PLD (Doroshenko et al. 2022) of a symmetric profile with delta(eps_max)=0.

    delta is evaluated on a grid of eps in [0, eps_max]; negative eps follow from
    H_E(P||Q) = 1 - E + E H_{1/E}(Q||P). The lower convex hull of the points in E = e^eps lies
    above every convex profile below the points, and is the profile of the PLD whose atom at
    eps_j has mass e^eps_j times the drop in slope there. ``upper=False`` is not available:
    the construction is an upper bound by design; ``mean=True`` rounds its atoms to the grid
    mean-preservingly (GLW21).
    """
    if not upper:
        raise ValueError("from_profile builds pessimistic PLDs only (upper=True)")
    h = check_grid(h)
    losses, masses, inf_mass = profile_atoms(delta_fn, eps_max, points)
    return symmetric_atoms(losses, masses, h=h, upper=True, inf_mass=inf_mass, mean=mean)


def dots_direction(idx: np.ndarray, deltas: np.ndarray, h: float, pushed: float = 0.0) -> Direction:
    """One direction's connect-the-dots grid (DGKKM22) from upper bounds on its profile at the
    consecutive grid losses idx * h (any sign): the PLD whose profile is the lower convex hull
    of the points (e^eps, delta) and the point (0, 1), which lies above every convex profile
    below the points. On a uniform grid the mass at l_i is
    (D_i - e^h D_(i-1)) / expm1(h), D_i = delta_(i+1) - delta_i (no e^eps is formed); when a
    rounding makes a mass negative (the points not quite convex), the hull is taken explicitly.
    The first point takes the remaining mass; the infinity atom is delta at the last point.
    ``pushed`` is the mass a round-up grid would have moved (for the lower estimates)."""
    masses, inf_mass = grid_masses(idx, deltas, h)
    return Direction(int(np.asarray(idx)[0]), masses, inf_mass, pushed=pushed + inf_mass)
