"""Shuffle rounds with participation sampling (docs/theory.md §2.7): the substitution sums of a
binary-support oracle's blanket, in blocks of c (the count of other clone-like reports) that
carry their smallest c and largest odds; the notation is kernels/participation.py's.
"""
import math
from typing import NamedTuple

import numpy as np

from .decorator import kernel
from .binomial import binom_window, pmf_anchor
from .blanket_indep import blocks_total, e_and_r_down, indep_excess
from .blanket_pair import pair_block_term
from .mblocks import TAIL_ZONES
from .numerics import UNIT_ROUNDOFF
from .participation import pmf_step_up

__all__ = ["BlanketBlocksLaw", "subst_blanket_blocks", "subst_blanket_indep",
           "subst_blanket_pair"]

_U = UNIT_ROUNDOFF


# ---------------------------------------------------------------------------------------------
# Binary-support oracles (blanket), substitution: blocks of c carry (smallest c, largest odds)
# ---------------------------------------------------------------------------------------------


@kernel
def _block_size(c, cw, mean, sd, merge):
    """Width of the block starting at c (a multiple of cw): wider in the far tails, aligned at
    multiples of its own width (as m_blocks in kernels/mblocks.py)."""
    if merge and sd > 0.0:
        for zone in range(len(TAIL_ZONES)):
            z_min, factor = TAIL_ZONES[zone]
            wide = cw * factor
            end = c + wide - 1
            if c % wide == 0 and (c - mean >= z_min * sd or mean - end >= z_min * sd):
                return wide
    return cw


class BlanketBlocksLaw(NamedTuple):
    """The scalars of the blanket substitution blocks (build with records.record): the others'
    blanket-draw count Bin(N, s) (sc = 1 - s), X_c = x0 + x1 c (x0 per block of N, an
    argument), the weight wt of "user 1 reported" and the blanket weight g."""

    x1: float
    s: float
    sc: float
    wt: float
    g: float


@kernel
def subst_blanket_blocks(ns, ws, x0s, law, frac, tol, merge_tails=True):
    """Blocks of c for the blanket substitution bound (docs/theory.md §2.7(d); ``law`` a
    BlanketBlocksLaw). The window of
    c - 1 ~ Bin(N, s) over every block i of N is cut into blocks [c_lo, c_hi] of width frac x
    its standard deviation (aligned at multiples of it; tails merged unless not merge_tails).
    For the counts of block
    i in block j, the pair at (c_lo_j, tau_ij) carries them: tau_ij = 1/(1 + rho_i(c_hi_j)), the
    largest odds of "user 1 reported", rho_i(c) = g X_i(c)/c (the pair is non-increasing in c
    and non-decreasing in tau).

    Returns (c_lo [J], mass [I, J], tau [I, J], shift factor [I, J], outside): the mass is
    w_i sum_{c in block j} wt pi_i(c-1)(1 + rho_i(c)), rounded up, the shift factor
    c_lo_j (1 + X_i(c_hi_j)/c_hi_j) the threshold of the blanket sum in units of
    r = (E-1)/(e^eps0 - 1), and outside the mass of the windows left out (a branch "user 1
    reported" carries at most its mass)."""
    x1, s, sc, wt, g = law.x1, law.s, law.sc, law.wt, law.g
    nb = ns.shape[0]
    c_min = np.int64(2 ** 62)
    c_max = np.int64(0)
    for i in range(nb):
        lo, hi, _ = binom_window(ns[i], s, sc, tol)
        c_min = min(c_min, lo + 1)
        c_max = max(c_max, hi + 1)
    mid = ns[nb // 2]
    sd = math.sqrt(mid * s * sc)
    cw = max(1, int(frac * sd))
    mean = 1.0 + mid * s
    starts = np.empty((c_max - c_min) // cw + 3, dtype=np.int64)
    nj = 0
    start = (c_min // cw) * cw
    while start <= c_max:
        starts[nj] = start
        nj += 1
        start += _block_size(start, cw, mean, sd, merge_tails)
    starts[nj] = start  # the end of the last block
    c_lo = np.empty(nj, dtype=np.int64)
    for jj in range(nj):
        c_lo[jj] = max(starts[jj], 1)
    mass = np.zeros((nb, nj))
    tau = np.ones((nb, nj))
    shift = np.zeros((nb, nj))
    outside = 0.0
    for i in range(nb):
        big_n = ns[i]
        x0 = x0s[i]
        lo, hi, out = binom_window(big_n, s, sc, tol)
        outside += ws[i] * wt * out
        w, rel_w = pmf_anchor(lo, big_n, s, sc)
        since = 0
        jj = 0
        c = lo + 1
        while c <= hi + 1:
            while starts[jj + 1] <= c:
                jj += 1
            c_hi = starts[jj + 1] - 1
            acc = 0.0
            rel_b = 0.0
            while c <= c_hi and c <= hi + 1:
                acc += w * (1.0 + g * (x0 + x1 * c) / c)
                rel_b = max(rel_b, rel_w + 8.0 * (since + 2) * _U)
                if c - 1 < big_n:
                    w, rel_w, since = pmf_step_up(w, c - 1, big_n, s, sc, rel_w, since)
                else:
                    w = 0.0
                c += 1
            x_hi = max(x0 + x1 * c_hi, 0.0)
            size = c_hi - starts[jj] + 1
            mass[i, jj] = ws[i] * wt * acc * (1.0 + rel_b) * (1.0 + 4.0 * (size + 8) * _U)
            tau[i, jj] = min(1.0, 1.0 / (1.0 + g * x_hi / c_hi) * (1.0 + 4.0 * _U))
            shift[i, jj] = c_lo[jj] * (1.0 + x_hi / c_hi) * (1.0 - 4.0 * _U)
    return c_lo, mass, tau, shift, outside


@kernel
def _chord(x, x_lo, x_hi, f_lo, f_hi):
    """The chord of a convex function through (x_lo, f_lo), (x_hi, f_hi) at x in [x_lo, x_hi]:
    an upper bound on it there (f_lo, f_hi themselves upper bounds)."""
    if x_hi <= x_lo:
        return max(f_lo, f_hi)
    lam = min(max((x - x_lo) / (x_hi - x_lo), 0.0), 1.0)
    return ((1.0 - lam) * f_lo + lam * f_hi) * (1.0 + 4.0 * _U)


@kernel(inline="always")
def _block_ends(c_lo, shift, mass):
    """The points where the substitution kernels evaluate F_j: for each c-block jj that some
    count N reaches, its smallest and largest shift factor among those counts (one point where
    the two coincide). Returns (block jj [P], m_j = c_lo_j [P], shift factor [P]), in block
    order, the smaller end first."""
    nj = c_lo.shape[0]
    blocks = np.empty(2 * nj, dtype=np.int64)
    ends = np.empty(2 * nj)
    p = 0
    for jj in range(nj):
        lo = math.inf
        hi = 0.0
        for i in range(mass.shape[0]):
            if mass[i, jj] > 0.0:
                lo = min(lo, shift[i, jj])
                hi = max(hi, shift[i, jj])
        if lo > hi:
            continue
        blocks[p] = jj
        ends[p] = lo
        p += 1
        if hi != lo:
            blocks[p] = jj
            ends[p] = hi
            p += 1
    return blocks[:p], c_lo[blocks[:p]], ends[:p]


@kernel
def _block_sum(mass, tau, shift, jj, s_lo, s_hi, f_lo, f_hi):
    """sum_i mass_ij min(1, tau_ij chord(shift_ij)) for c-block jj, the chord of F_j through
    its values f_lo, f_hi at the block's smallest and largest shift factor."""
    total = 0.0
    for i in range(mass.shape[0]):
        if mass[i, jj] > 0.0:
            h = tau[i, jj] * _chord(shift[i, jj], s_lo, s_hi, f_lo, f_hi)
            total += mass[i, jj] * min(h, 1.0)
    return total


@kernel(inline="always")
def _chord_sums(mass, tau, shift, blocks, ends, f):
    """sum_j _block_sum of c-block j, F_j's chord through its values f at the block's ends
    (_block_ends' points; a block with one point takes f there at both ends)."""
    total = 0.0
    p = 0
    while p < blocks.shape[0]:
        q = p + 1 if p + 1 < blocks.shape[0] and blocks[p + 1] == blocks[p] else p
        total += _block_sum(mass, tau, shift, blocks[p], ends[p], ends[q], f[p], f[q])
        p = q + 1
    return total


@kernel
def subst_blanket_indep(c_lo, mass, tau, shift, law, eps_cap, eps, tol, outside):
    """delta(eps) <= sum_{i,j} mass_ij min(1, tau_ij (gc/m_j) F_j(r shift_ij)) + outside for
    independent Bern(a) support bits (``law`` an IndepLaw of kernels/blanket_indep.py), F_j(theta) = E[(K1 - E K2 - theta)_+], K1, K2 iid
    Bin(m_j, a), m_j = c_lo_j (docs/theory.md §2.7(d)). F_j is convex in theta: it is computed
    at the smallest and largest shift of block j (indep_excess, its K2 window's outside mass
    adding a1 x itself as in indep_upper_delta) and bounded by the chord between. 0 from
    eps_cap on."""
    if eps >= eps_cap:
        return 0.0
    e, r = e_and_r_down(eps, law.c)
    blocks, ms, ends = _block_ends(c_lo, shift, mass)
    f = np.empty(ends.shape[0])
    steps = 0
    for p in range(ends.shape[0]):
        m = ms[p]
        v, allow, out, st = indep_excess(m, law.a, law.ac, e, r * ends[p], tol)
        steps += st
        f[p] = (law.gc / m) * (v + allow) * (1.0 + 8.0 * (st + 16) * _U) + law.a1 * out
    total = _chord_sums(mass, tau, shift, blocks, ends, f)
    return blocks_total(total, mass.size, outside, steps)


@kernel
def subst_blanket_pair(c_lo, mass, tau, shift, law, eps_cap, eps, tol, outside):
    """As subst_blanket_indep for a symmetric correlated (b1, b2) law (subset selection, k-RR,
    OLH exactly; ``law`` a PairLaw record of kernels/blanket_pair.py): F_j by pair_group_excess
    at the shifted thresholds, or its Chernoff bound where that is already below tol."""
    if eps >= eps_cap:
        return 0.0
    e = math.exp(eps) * (1.0 - 4.0 * _U)
    beta = math.expm1(eps) * (1.0 - 4.0 * _U)
    r = beta / law.c * (1.0 - 4.0 * _U)
    blocks, ms, ends = _block_ends(c_lo, shift, mass)
    f = np.empty(ends.shape[0])
    steps = 0
    for p in range(ends.shape[0]):
        f[p], st = pair_block_term(ms[p], law, e, beta, r * ends[p] / ms[p], r * ends[p], tol)
        steps += st
    total = _chord_sums(mass, tau, shift, blocks, ends, f)
    return blocks_total(total, mass.size, outside, steps)
