"""Privacy loss distributions on a grid, composed by FFT (SPEC S1, S3.2).

A :class:`PLD` holds, for each direction of a pair ((P, Q) and, when the pair is not
symmetric, (Q, P)), the law of the loss L = log(P/Q) under P on the grid {(lo + i) h}, plus an
infinity mass. ``upper=True`` grids round every loss up and send truncated upper tails to the
infinity atom, so every delta they report is an upper bound; ``upper=False`` grids round down
and drop truncated mass, giving the matching optimistic estimate. ``err`` carries a proven bound
on the FFT rounding error, added to (upper) or subtracted from (lower) every delta.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np
from scipy import fft as sfft
from scipy import stats

from .kernels.renyi import clone_pld_grid

UNIT_ROUNDOFF = 2.0 ** -53
TAIL = 1e-30        # mass truncated from each tail after a convolution
MAX_SIZE = 2 ** 20  # default cap on grid points


@dataclass(frozen=True)
class Direction:
    """Loss law of one direction: pmf on {(lo + i) h}, infinity mass, FFT error bound."""

    lo: int
    pmf: np.ndarray
    inf_mass: float = 0.0
    err: float = 0.0


@dataclass(frozen=True)
class PLD:
    """A (possibly asymmetric) pair's privacy loss distribution(s) on a grid of step h."""

    h: float
    upper: bool
    dirs: tuple[Direction, ...]

    # -- composition -------------------------------------------------------------------------
    def compose(self, other: "PLD", max_size: int = MAX_SIZE) -> "PLD":
        """PLD of the two mechanisms run in sequence (independent losses add)."""
        _check_compatible(self, other)
        n = max(len(self.dirs), len(other.dirs))
        dirs = tuple(_convolve(self.dirs[min(i, len(self.dirs) - 1)],
                               other.dirs[min(i, len(other.dirs) - 1)], self.upper, max_size)
                     for i in range(n))
        return replace(self, dirs=dirs)

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
        return result

    # -- queries -----------------------------------------------------------------------------
    def delta(self, eps):
        """delta(eps) = P(L = inf) + E[(1 - e^(eps - L))_+], max over directions (S1)."""
        arr = np.atleast_1d(np.asarray(eps, dtype=float))
        out = np.max([_delta_dir(d, self.h, arr, self.upper) for d in self.dirs], axis=0)
        return float(out[0]) if np.ndim(eps) == 0 else out

    def epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with delta(eps) <= delta (exact on the grid law; inf if none)."""
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        return max(_eps_dir(d, self.h, delta, self.upper) for d in self.dirs)


def _check_compatible(a: PLD, b: PLD) -> None:
    if not isinstance(b, PLD):
        raise TypeError(f"can only compose with a PLD, got {type(b).__name__}")
    if a.h != b.h or a.upper != b.upper:
        raise ValueError(f"PLDs differ in grid step ({a.h} vs {b.h}) or rounding direction")


# ----------------------------------------------------------------------------------------------
# Grid operations
# ----------------------------------------------------------------------------------------------

def _trim(lo: int, pmf: np.ndarray, inf_mass: float, upper: bool, max_size: int,
          tail: float = TAIL):
    """Cut tails of mass <= tail (and beyond max_size): upper tail to the infinity atom (upper)
    or dropped (lower); lower tail moved up to the first kept point (upper) or dropped."""
    pmf = np.maximum(pmf, 0.0)
    cum = np.cumsum(pmf)
    first = int(np.searchsorted(cum, tail, side="right"))
    rev = np.cumsum(pmf[::-1])
    last = pmf.size - 1 - int(np.searchsorted(rev, tail, side="right"))
    first = min(first, pmf.size - 1)
    last = max(last, first)
    if last - first + 1 > max_size:
        last = first + max_size - 1
    below = float(pmf[:first].sum())
    above = float(pmf[last + 1:].sum())  # summed directly: total - cum[last] would cancel
    kept = pmf[first:last + 1].copy()
    if upper:
        kept[0] += below
        inf_mass += above
    return lo + first, kept, inf_mass


def _fft_conv(a: np.ndarray, b: np.ndarray):
    """Linear convolution by zero-padded real FFT, and a bound on its L1 rounding error."""
    size = a.size + b.size - 1
    nfft = sfft.next_fast_len(size, real=True)
    out = sfft.irfft(sfft.rfft(a, nfft) * sfft.rfft(b, nfft), nfft)[:size]
    # ||fl(a*b) - a*b||_2 <= 5 u log2(N) ||a||_2 ||b||_2, and L1 <= sqrt(N) L2; clipping the
    # negative noise to zero moves each entry by at most its own error.
    err = 2.0 * math.sqrt(nfft) * 5.0 * UNIT_ROUNDOFF * math.log2(nfft) * \
        float(np.linalg.norm(a) * np.linalg.norm(b))
    return out, err


def _convolve(x: Direction, y: Direction, upper: bool, max_size: int) -> Direction:
    pmf, err = _fft_conv(x.pmf, y.pmf)
    inf_mass = 1.0 - (1.0 - x.inf_mass) * (1.0 - y.inf_mass)
    # Entries below the FFT error bound are noise: tails of that mass are cut too.
    lo, pmf, inf_mass = _trim(x.lo + y.lo, pmf, inf_mass, upper, max_size, max(TAIL, err))
    return Direction(lo, pmf, min(inf_mass, 1.0), x.err + y.err + err)


def _suffix_sums(d: Direction, h: float):
    """S1[i] = sum_{j>=i} p_j, S2[i] = sum_{j>=i} p_j e^-L_j (each with a trailing 0)."""
    losses = (d.lo + np.arange(d.pmf.size)) * h
    s1 = np.append(np.cumsum(d.pmf[::-1])[::-1], 0.0)
    s2 = np.append(np.cumsum((d.pmf * np.exp(-losses))[::-1])[::-1], 0.0)
    return losses, s1, s2


def _slack(d: Direction, s1_i, upper: bool):
    """Rounding allowance of inf + S1 - e^eps S2 plus the FFT error: + for upper, - for lower."""
    slack = 8.0 * UNIT_ROUNDOFF * d.pmf.size * s1_i + d.err
    return slack if upper else -slack


def _delta_at(d: Direction, sums, eps: np.ndarray, upper: bool) -> np.ndarray:
    """delta(eps) = inf + S1[i] - e^eps S2[i] (+ slack), i the first atom with L_i > eps."""
    losses, s1, s2 = sums
    i = np.searchsorted(losses, eps, side="right")
    val = d.inf_mass + s1[i] - np.exp(eps) * s2[i] + _slack(d, s1[i], upper)
    return np.clip(val, 0.0, 1.0)


def _delta_dir(d: Direction, h: float, eps: np.ndarray, upper: bool) -> np.ndarray:
    return _delta_at(d, _suffix_sums(d, h), eps, upper)


def _eps_dir(d: Direction, h: float, target: float, upper: bool) -> float:
    sums = _suffix_sums(d, h)
    losses, s1, s2 = sums
    if _delta_at(d, sums, np.array([0.0]), upper)[0] <= target:
        return 0.0
    at_grid = _delta_at(d, sums, losses, upper)  # delta at each grid loss, non-increasing
    if at_grid[-1] > target:
        return math.inf
    i = int(np.argmax(at_grid <= target))  # first grid point where delta <= target
    if i == 0:
        return max(0.0, float(losses[0]))
    # On (L_{i-1}, L_i] only atoms j >= i count: delta = inf + S1[i] - e^eps S2[i] + slack.
    num = d.inf_mass + s1[i] + _slack(d, s1[i], upper) - target
    eps = math.log(num / s2[i]) if num > 0.0 and s2[i] > 0.0 else float(losses[i])
    eps = min(max(eps, float(losses[i - 1])), float(losses[i]))
    eps = np.nextafter(eps, math.inf) if upper else eps
    return max(0.0, float(eps))


# ----------------------------------------------------------------------------------------------
# Builders
# ----------------------------------------------------------------------------------------------

def check_grid(h: float) -> float:
    """A grid step h in (0, 1]."""
    h = float(h)
    if not (math.isfinite(h) and 0.0 < h <= 1.0):
        raise ValueError(f"grid step h must be in (0, 1], got {h!r}")
    return h


def _bin_atoms(losses: np.ndarray, masses: np.ndarray, h: float, upper: bool,
               inf_mass: float = 0.0, max_size: int = MAX_SIZE) -> Direction:
    """Round atom losses to the grid (up for upper, down for lower) and sum their masses."""
    keep = masses > 0.0
    losses, masses = losses[keep], masses[keep]
    finite = np.isfinite(losses)
    inf_mass += float(masses[~finite].sum())
    losses, masses = losses[finite], masses[finite]
    if losses.size == 0:
        return Direction(0, np.zeros(1), inf_mass)
    slack = 1e-13 * (1.0 + np.abs(losses))
    idx = np.ceil((losses + slack) / h) if upper else np.floor((losses - slack) / h)
    idx = idx.astype(np.int64)
    lo = int(idx.min())
    pmf = np.bincount(idx - lo, weights=masses)
    lo, pmf, inf_mass = _trim(lo, pmf, inf_mass, upper, max_size)
    return Direction(lo, pmf, inf_mass)


def from_pmfs(p: Sequence[float], q: Sequence[float], h: float = 1e-4,
              upper: bool = True) -> PLD:
    """PLD of an explicit pair of pmfs on a common finite support (both directions)."""
    h = check_grid(h)
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError("p and q must be 1-D arrays of the same length")
    for name, v in (("p", p), ("q", q)):
        if np.any(v < 0) or not np.all(np.isfinite(v)) or abs(v.sum() - 1.0) > 1e-9:
            raise ValueError(f"{name} must be a probability vector (non-negative, sum 1)")

    def direction(a, b):
        with np.errstate(divide="ignore"):
            loss = np.where(b > 0, np.log(np.where(a > 0, a, 1.0)) - np.log(np.where(b > 0, b, 1.0)),
                            np.inf)
        return _bin_atoms(loss, a, h, upper)

    return PLD(h, upper, (direction(p, q), direction(q, p)))


def symmetric_atoms(losses, masses, h: float = 1e-4, upper: bool = True,
                    inf_mass: float = 0.0) -> PLD:
    """PLD of a symmetric pair given its loss atoms under P (one direction suffices)."""
    h = check_grid(h)
    return PLD(h, upper, (_bin_atoms(np.asarray(losses, float), np.asarray(masses, float), h,
                                     upper, inf_mass),))


def pure_dp(eps: float, h: float = 1e-4, upper: bool = True) -> PLD:
    """Randomized response with parameter eps: the dominating pair of eps-DP."""
    return approx_dp(eps, 0.0, h, upper)


def approx_dp(eps: float, delta: float, h: float = 1e-4, upper: bool = True) -> PLD:
    """Dominating pair of (eps, delta)-DP: infinity atom delta, RR atoms at +-eps."""
    e = math.exp(-eps)
    hi, lo = (1.0 - delta) / (1.0 + e), (1.0 - delta) * e / (1.0 + e)
    return symmetric_atoms([eps, -eps], [hi, lo], h, upper, inf_mass=delta)


def clone_pair_grid(n: int, q: float, p: float, h: float, upper: bool, tol: float = 1e-30):
    """(lo, pmf, inf_mass): the S2.1 pair's losses binned by the Numba kernel on a grid that
    covers every possible loss, [-log(p/(1-p)), log(p/(1-p))]."""
    big_l = math.log(p / (1.0 - p))
    lo = -int(math.ceil(big_l / h)) - 1
    pmf, inf_mass = clone_pld_grid(n, q, p, h, lo, 2 * (-lo) + 1, tol, upper)
    return lo, pmf, inf_mass


def clone_pair(n: int, q: float, p: float, h: float = 1e-4, upper: bool = True,
               tol: float = 1e-30, max_size: int = MAX_SIZE) -> PLD:
    """PLD of the S2.1 clone pair, built atom by atom in a Numba kernel (symmetric pair)."""
    h = check_grid(h)
    lo, pmf, inf_mass = _trim(*clone_pair_grid(n, q, p, h, upper, tol), upper, max_size)
    return PLD(h, upper, (Direction(lo, pmf, inf_mass),))


def gaussian(sigma: float, sensitivity: float = 1.0, h: float = 1e-4, upper: bool = True,
             tail: float = 1e-30, max_size: int = MAX_SIZE) -> PLD:
    """Gaussian mechanism: L ~ N(mu, 2 mu) under P with mu = s^2 / (2 sigma^2)."""
    h = check_grid(h)
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
    mu = sensitivity ** 2 / (2.0 * sigma ** 2)
    sd = math.sqrt(2.0 * mu)
    z = stats.norm.isf(tail)
    if 2.0 * z * sd / h > max_size:
        raise ValueError(f"the Gaussian PLD needs {2 * z * sd / h:.3g} grid points (> max_size "
                         f"{max_size}): use a larger grid step h")
    edges = np.arange(math.floor((mu - z * sd) / h) - 1, math.ceil((mu + z * sd) / h) + 2) * h
    # masses of the cells (edges[i], edges[i+1]], computed on the accurate side of the median
    upper_tail = stats.norm.sf((edges - mu) / sd)
    cells = upper_tail[:-1] - upper_tail[1:]
    left = (edges[1:] - mu) / sd < 0
    cdf = stats.norm.cdf((edges - mu) / sd)
    cells[left] = (cdf[1:] - cdf[:-1])[left]
    below, above = cdf[0], upper_tail[-1]
    if upper:  # each cell's mass goes to its right end; beyond the range: bottom / infinity
        losses, inf_mass = edges[1:], above
        cells[0] += below
    else:
        losses, inf_mass = edges[:-1], 0.0
    idx = np.rint(losses / h).astype(np.int64)
    return PLD(h, upper, (Direction(int(idx[0]), np.maximum(cells, 0.0), inf_mass),))


def laplace(scale: float, sensitivity: float = 1.0, h: float = 1e-4, upper: bool = True) -> PLD:
    """Laplace mechanism: atoms at +-s/b (masses 1/2, e^(-s/b)/2) and a continuous part with
    P(L <= l) = e^(-(s - b l)/(2b))/2 in between (SPEC S3.2)."""
    h = check_grid(h)
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    top = sensitivity / scale
    edges = np.arange(math.floor(-top / h), math.ceil(top / h) + 1) * h
    inner = np.clip(edges, -top, top)
    cdf = 0.5 * np.exp(-(sensitivity - scale * inner) / (2.0 * scale))
    cells = np.diff(cdf)
    cell_losses = edges[1:] if upper else edges[:-1]
    losses = np.concatenate([cell_losses, [top, -top]])
    masses = np.concatenate([cells, [0.5, 0.5 * math.exp(-top)]])
    return symmetric_atoms(losses, masses, h, upper)


def from_profile(delta_fn: Callable[[float], float], eps_max: float, h: float = 1e-4,
                 upper: bool = True, points: int = 200) -> PLD:
    """Connect-the-dots PLD (Doroshenko et al. 2022) of a symmetric profile with delta(eps_max)=0.

    delta is evaluated on a grid of eps in [0, eps_max]; negative eps follow from
    H_E(P||Q) = 1 - E + E H_{1/E}(Q||P). The lower convex hull of the points in E = e^eps lies
    above every convex profile below the points, and is the profile of the PLD whose atom at
    eps_j has mass e^eps_j times the drop in slope there. ``upper=False`` is not available:
    the construction is an upper bound by design.
    """
    if not upper:
        raise ValueError("from_profile builds pessimistic PLDs only (upper=True)")
    h = check_grid(h)
    pos = eps_max * (np.linspace(0.0, 1.0, points) ** 2)
    d_pos = np.array([min(1.0, max(0.0, delta_fn(float(e)))) for e in pos])
    neg = -pos[:0:-1]
    d_neg = 1.0 - np.exp(neg) + np.exp(neg) * d_pos[:0:-1]
    eps = np.concatenate([neg, pos])
    dl = np.concatenate([d_neg, d_pos])
    return symmetric_atoms(*_dots_to_atoms(eps, dl), h=h, upper=True,
                           inf_mass=float(dl[-1]))


def _dots_to_atoms(eps: np.ndarray, dl: np.ndarray):
    """(losses, masses) of the PLD whose profile is the lower convex hull of (e^eps, delta)."""
    x = np.exp(eps)
    hull: list[int] = []
    for i in range(x.size):  # monotone chain, lower hull
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (x[b] - x[a]) * (dl[i] - dl[a]) - (dl[b] - dl[a]) * (x[i] - x[a])
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    hx, hd, he = x[hull], dl[hull], eps[hull]
    slopes = np.append(-np.diff(hd) / np.diff(hx), 0.0)  # S_j = -slope right of vertex j
    masses = np.empty(hx.size)
    masses[1:] = hx[1:] * (slopes[:-1] - slopes[1:])
    masses[0] = max(0.0, 1.0 - dl[-1] - masses[1:].sum())
    return he, np.maximum(masses, 0.0)
