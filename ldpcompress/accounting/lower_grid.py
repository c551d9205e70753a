"""The balanced lower grid of one direction of a pair (docs/theory.md §3.2, "balanced lower
grid"): a grid PLD whose T-fold composition is a proven lower bound on the pair's, without the
h-per-step drift of rounding every loss down.

Cut the loss line at the grid points l_k = k h into cells (l_k, l_(k+1)]. The pair "which cell"
is a post-processing of the pair (it can only lose privacy loss). Each cell is then sent at
random partly down to the point l_k and partly up to l_(k+1), with the fractions chosen top
down so that every grid point receives at least as much loss excess (P - e^(l_k) Q > 0 from the
cell above it) as deficit (from the cell below it): the pair "which grid point" is a further
post-processing, and the loss of each of its outcomes is >= the point it is placed at. Placing
it there (rounding down) and rounding masses down can only lower every delta of every
composition, so the grid's composed eps is a lower bound on the pair's. The fractions behave
like the mean-preserving split of GLW21 (to first order each cell keeps its mean loss), but
the bound needs no concentration term: it is exact for a post-processed pair.

Inputs are bounds on the survival S(l) = P(L > l) and the profile
D(l) = P(L > l) - e^l Q(L > l) at the grid points; per cell k they give
P_k = S_k - S_(k+1), the excess A_k = P_k - e^(l_k) Q_k = D_k - e^-h D_(k+1) - (1 - e^-h) S_(k+1)
and the deficit B_k = e^(l_(k+1)) Q_k - P_k = expm1(h) S_k - e^h D_k + D_(k+1), each rounded to
its safe side.
"""
from __future__ import annotations

import math

import numpy as np

from ..kernels.balance import balanced_masses
from ..core.numerics import UNIT_ROUNDOFF as _U
from .pld import Direction

__all__ = ["balanced_direction", "cell_bounds"]


def balanced_direction(idx, s_lo, s_up, d_lo, d_up, h: float) -> Direction:
    """One direction's balanced lower grid on the consecutive grid losses idx * h, from lower
    and upper bounds on S and D there (see the module docstring). The mass below the first
    point and above the last is dropped (a lower bound needs none of it); the result is a
    sub-probability law with no infinity atom, for round-down (upper=False) PLDs."""
    idx = np.asarray(idx, dtype=np.int64)
    if idx.ndim != 1 or idx.size < 2 or np.any(np.diff(idx) != 1):
        raise ValueError("idx must be at least two consecutive grid indices")
    p_cell, a_cell, b_cell = cell_bounds(s_lo, s_up, d_lo, d_up, h)
    masses, _ = balanced_masses(p_cell, a_cell, b_cell)
    # the kernel's fractions d = 1 - u may exceed 1 - u by half an ulp, its products and sums
    # round: 8 ulps less mass covers both
    return Direction(int(idx[0]), masses * (1.0 - 8.0 * _U), 0.0)


def cell_bounds(s_lo, s_up, d_lo, d_up, h: float):
    """(P_k lower, A_k lower, B_k upper) of the cells between consecutive grid points, from
    bounds on S and D there (the module docstring's formulas, each rounded to its safe side)."""
    # the true S and D are non-increasing: bounds are tightened accordingly and stay bounds
    s_up = np.minimum.accumulate(np.clip(np.asarray(s_up, float), 0.0, 1.0))
    d_up = np.minimum.accumulate(np.clip(np.asarray(d_up, float), 0.0, 1.0))
    s_lo = np.maximum.accumulate(np.clip(np.asarray(s_lo, float), 0.0, 1.0)[::-1])[::-1]
    d_lo = np.maximum.accumulate(np.clip(np.asarray(d_lo, float), 0.0, 1.0)[::-1])[::-1]
    # the factors, rounded outward by 2 ulps (exp and expm1 are within an ulp)
    emh_up = math.exp(-h) * (1.0 + 2.0 * _U)
    one_m_emh_up = -math.expm1(-h) * (1.0 + 2.0 * _U)
    expm1_up = math.expm1(h) * (1.0 + 2.0 * _U)
    eh_lo = math.exp(h) * (1.0 - 2.0 * _U)
    # every product and difference below errs by at most an ulp of the largest term: 4 ulps
    # of the terms' sum cover them
    p_cell = np.maximum(s_lo[:-1] - s_up[1:] - 2.0 * _U * s_lo[:-1], 0.0)
    t0, t1, t2 = d_lo[:-1], emh_up * d_up[1:], one_m_emh_up * s_up[1:]
    a_cell = t0 - t1 - t2 - 4.0 * _U * (t0 + t1 + t2)
    t0, t1, t2 = expm1_up * s_up[:-1], eh_lo * d_lo[:-1], d_up[1:]
    b_cell = t0 - t1 + t2 + 4.0 * _U * (t0 + t1 + t2)
    return (np.ascontiguousarray(p_cell), np.ascontiguousarray(a_cell),
            np.ascontiguousarray(b_cell))
