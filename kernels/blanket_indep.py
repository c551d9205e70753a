"""Privacy-blanket upper bound for independent Bern(a) support bits (OUE, PI-RAPPOR, symmetric
RAPPOR, Hadamard, OLH's dominating product law; Balle, Bell, Gascon, Nissim 2019; Su, Cheng,
Wang 2025; docs/theory.md §2.5).

Units. Every sum is divided by c = e^eps0 - 1 so that nothing overflows for large eps0: the
blanket sum of m draws is ``c (K1 - E K2 - r m)`` with E = e^eps and r = (E-1)/c, where K1, K2
count the draws that support x1, x1'. Upper sums add the mass outside every window (times a
proven bound on what it can carry) and are inflated by their rounding bound.
"""
import math
from typing import NamedTuple

import numpy as np

from .binomial import TINY, binom_window, pmf_anchor, tail_rel_err
from .bintail import excess, first_above, sf_anchor, sf_move, tight_window
from .decorator import kernel
from .numerics import DBL_MIN, SUBNORMAL_ULP, UNIT_ROUNDOFF

__all__ = ["GROUPS_PER_SD", "IndepLaw", "IndepTables", "e_and_r_down", "blocks_total", "block_g",
           "indep_excess", "indep_upper_delta_direct",
           "indep_tables", "grid_excess", "indep_grouped_excess", "indep_upper_delta"]

GROUPS_PER_SD = 128  # K2 groups (and grid cells of the K1 excess) per standard deviation


class IndepLaw(NamedTuple):
    """The kernel's view of an independent-bits oracle (build with records.record):
    a = Pr_w[b = 1], ac = 1 - a, gc = gamma (e^eps0 - 1), a1 = Pr_{R_x}[b(Y, x) = 1],
    c = e^eps0 - 1, eps0 the replacement eps0."""

    a: float
    ac: float
    gc: float
    a1: float
    c: float
    eps0: float


@kernel(inline="always")
def e_and_r_down(eps, c):
    """(E, r) = (e^eps, (e^eps - 1)/c), both rounded down (the blanket sums decrease in each)."""
    e = math.exp(eps) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    r = math.expm1(eps) * (1.0 - 4.0 * UNIT_ROUNDOFF) / c * (1.0 - 4.0 * UNIT_ROUNDOFF)
    return e, r


@kernel(inline="always")
def blocks_total(total, blocks, outside_m, steps):
    """The M'-blocked sum rounded up for its additions, plus the M' window's outside mass and
    a DBL_MIN per term for underflowed values, capped at 1."""
    total *= 1.0 + 8.0 * (blocks + 16) * UNIT_ROUNDOFF
    return min(1.0, total + outside_m + (steps + 1) * DBL_MIN)


@kernel(inline="always")
def block_g(scale, s, allow, terms, outside):
    """g of one M' block, capped at 1: scale (s + allow) rounded up for the sum's terms, plus
    what the windows left out."""
    return min(scale * (s + allow) * (1.0 + 8.0 * (terms + 16) * UNIT_ROUNDOFF) + outside, 1.0)


@kernel
def indep_excess(m, a, b, e, shift, tol):
    """sum_{K2} Pr[K2] E[(K1 - e K2 - shift)_+], K1, K2 iid Bin(m, a), over a window of K2.

    Returns (sum, rounding allowance, outside mass of the K2 window, terms). K2 runs downward
    so the threshold falls and the K1 tail grows by stable additions. The allowance includes
    each K2 weight's log-pmf error bound (pmf_rel_err) and 8 ulps per recurrence step since it.
    """
    if m <= 0:
        return max(-shift, 0.0), 0.0, 0.0, 1
    lo, hi, outside = binom_window(m, a, b, tol)
    k2 = hi
    w, rel_w = pmf_anchor(k2, m, a, b)
    since = 0
    theta = e * k2 + shift
    t = first_above(theta, m)
    u, pk = sf_anchor(t, m, a, b)
    total = 0.0
    allow = 0.0
    steps = 0
    while True:
        v, err = excess(theta, t, m, a, b, u, pk)
        total += w * v
        allow += w * (err + v * (rel_w + 8.0 * (since + 1) * UNIT_ROUNDOFF))
        steps += 1
        if k2 <= lo:
            break
        w *= (k2 / (m - k2 + 1.0)) * (b / a)
        k2 -= 1
        since += 1
        if w < TINY:
            w, rel_w = pmf_anchor(k2, m, a, b)
            since = 0
        theta = e * k2 + shift
        nt = first_above(theta, m)
        if nt <= m:
            u, pk = sf_move(t, nt, m, a, b, u, pk) if t <= m else sf_anchor(nt, m, a, b)
        t = nt
    return total, allow, outside, steps


@kernel
def indep_upper_delta_direct(ms, weights, outside_m, law, eps, tol):
    """Blanket upper bound for independent Bern(a) support bits (docs/theory.md §2.5):
    delta <= sum_blocks Pr[M' in block] g(m_block) + outside_m, with
    g(m) = (gamma c / m) E[(K1 - E K2 - r m)_+], K1, K2 iid Bin(m, a); ms[i] is the smallest M'
    of block i (g is non-increasing in m, docs/theory.md §2.5). The K2 mass outside its
    window adds at most a1 times that mass ((.)_+ <= c K1, K1 independent of K2, and
    gamma c a = a1 - gamma a <= a1). c = e^eps0 - 1 is passed exactly (gc = gamma c); E and
    r = (E-1)/c are rounded down (the sum decreases in both, so this only raises the bound).
    ``law`` is an IndepLaw; (ms, weights, outside_m) are m_blocks' blocks of M'. One term per
    K2 of each block's window: O(sqrt(n)) per block and per eps (the reference the grouped
    indep_upper_delta is checked and timed against).
    """
    a, b, gc, a1, c, eps0 = law.a, law.ac, law.gc, law.a1, law.c, law.eps0
    if eps >= eps0:
        return 0.0
    e, r = e_and_r_down(eps, c)
    total = 0.0
    steps = np.int64(0)  # typed, not the literal 0: blocks_total compiles once, for int64
    for i in range(ms.shape[0]):
        m = ms[i]
        s, allow, out, st = indep_excess(m, a, b, e, r * m, tol)
        steps += st
        total += weights[i] * block_g(gc / m, s, allow, st, a1 * out)
    return blocks_total(total, ms.shape[0], outside_m, steps)


class IndepTables(NamedTuple):
    """The eps-independent part of the grouped bound, one slice per M' block (indep_tables).

    meta[i] = (lo, hi, base, G): the window [lo, hi] of K ~ Bin(m_i, a), its groups
    [base + j G, base + (j+1) G) and grid points base + j G. Group j of block i (index
    goff[i] + j): W = its mass, S = sum (k - start) Pr[k] (start = max(base + j G, lo)), rel = a
    relative error bound of both. Grid point j (index hoff[i] + j): hv = E[(K - g)_+], he = its
    absolute error bound, hu = Pr[K > g] (h's slope just right of g) with its bound hue.
    out[i] = mass of K outside its window.
    """

    meta: np.ndarray
    goff: np.ndarray
    gw: np.ndarray
    gs: np.ndarray
    grel: np.ndarray
    hoff: np.ndarray
    hv: np.ndarray
    he: np.ndarray
    hu: np.ndarray
    hue: np.ndarray
    out: np.ndarray


@kernel(inline="always")
def _block_sizes(m, a, b, tol, per_sd):
    lo, hi, out = tight_window(m, a, b, tol)
    g = max(1, int(math.sqrt(m * a * b) / per_sd))
    base = (lo // g) * g
    return lo, hi, out, g, base, (hi - base) // g + 1, (hi - base) // g + 2


@kernel
def indep_tables(ms, a, b, tol, per_sd=GROUPS_PER_SD):
    """IndepTables for the blocks ms: per block, the masses and first moments of K2's groups
    (each group's pmf anchored by pmf_anchor at its start, 8 ulps per ratio step after it) and
    the excess h(g) = E[(K1 - g)_+] at the grid points, walked down from the top by additions
    only: h(k) = h(k + 1) + U(k + 1), U(k) = U(k + 1) + Pr[K = k] (the top's h and U from
    excess/sf_anchor with their error bounds). Groups are sd/per_sd wide (at least 1).
    O(window) per block, once per tolerance."""
    nb = ms.shape[0]
    meta = np.zeros((nb, 4), dtype=np.int64)
    goff = np.zeros(nb + 1, dtype=np.int64)
    hoff = np.zeros(nb + 1, dtype=np.int64)
    outs = np.zeros(nb)
    for i in range(nb):
        lo, hi, out, g, base, ng, nh = _block_sizes(ms[i], a, b, tol, per_sd)
        meta[i, 0], meta[i, 1], meta[i, 2], meta[i, 3] = lo, hi, base, g
        goff[i + 1] = goff[i] + ng
        hoff[i + 1] = hoff[i] + nh
        outs[i] = out
    gw = np.zeros(goff[nb])
    gs = np.zeros(goff[nb])
    grel = np.zeros(goff[nb])
    hv = np.zeros(hoff[nb])
    he = np.zeros(hoff[nb])
    hu = np.zeros(hoff[nb])
    hue = np.zeros(hoff[nb])
    ur = UNIT_ROUNDOFF
    for i in range(nb):
        m = ms[i]
        lo, hi, base, g = meta[i, 0], meta[i, 1], meta[i, 2], meta[i, 3]
        ng = goff[i + 1] - goff[i]
        for j in range(ng):
            start = max(base + j * g, lo)
            stop = min(base + (j + 1) * g - 1, hi)
            w, rel = pmf_anchor(start, m, a, b)
            sw = 0.0
            ss = 0.0
            for k in range(start, stop + 1):
                sw += w
                ss += (k - start) * w
                if k < m:
                    w *= (m - k) / (k + 1.0) * (a / b)
            gw[goff[i] + j] = sw
            gs[goff[i] + j] = ss
            grel[goff[i] + j] = rel + 8.0 * (stop - start + 2) * ur
        # the excess at the grid points, from the top grid point down
        nh = hoff[i + 1] - hoff[i]
        top = base + (nh - 1) * g
        t = top + 1
        u, pk = sf_anchor(t, m, a, b)
        hval, herr = excess(float(top), t, m, a, b, u, pk)
        rel_u = tail_rel_err(t, m, a)  # of u and pk
        eu = rel_u * u
        hv[hoff[i] + nh - 1] = hval
        he[hoff[i] + nh - 1] = herr
        hu[hoff[i] + nh - 1] = u
        hue[hoff[i] + nh - 1] = eu
        k = top  # invariant: u = Pr[K >= k + 1], hval = E[(K - k)_+]
        for j in range(nh - 2, -1, -1):
            gp = base + j * g
            if k <= m:
                p, prel = pmf_anchor(k, m, a, b)  # one anchor per grid cell
            else:
                p, prel = 0.0, 0.0
            steps = 0
            while k > gp:
                # h(k - 1) = h(k) + U(k), U(k) = U(k + 1) + Pr[K = k]
                if k <= m:
                    if p < TINY:  # re-anchor near underflow (subnormals lose digits)
                        p, prel = pmf_anchor(k, m, a, b)
                        steps = 0
                    u = u + p
                    eu = eu + (prel + 8.0 * (steps + 1) * ur) * p + ur * u + SUBNORMAL_ULP
                    p *= k / (m - k + 1.0) * (b / a)
                    steps += 1
                hval = hval + u
                herr = herr + eu + ur * hval
                k -= 1
            hv[hoff[i] + j] = hval
            he[hoff[i] + j] = herr
            hu[hoff[i] + j] = u
            hue[hoff[i] + j] = eu
    return IndepTables(meta, goff, gw, gs, grel, hoff, hv, he, hu, hue, outs)


@kernel
def grid_excess(theta, eth, tab, i):
    """(upper bound on h(theta) = E[(K - theta)_+], allowance) for K ~ Bin(m_i, a) from block
    i's grid values: the chord between the grid points around theta (h is convex), h(top)
    beyond the top grid point (h is non-increasing), h(base) + (base - theta) below the base
    (h' >= -1). An error eth in theta (and the rounding of its grid position) adds itself
    times a bound on the slope there: h is convex and non-increasing with slope -Pr[K > x], so
    right of a grid point g its slope is at most Pr[K > g] (hu; at most 1 everywhere)."""
    ur = UNIT_ROUNDOFF
    base = tab.meta[i, 2]
    g = tab.meta[i, 3]
    h0 = tab.hoff[i]
    nh = tab.hoff[i + 1] - h0
    pos_err = eth + 4.0 * ur * (abs(theta) + abs(base) + g)
    x = (theta - base) / g
    if x <= 0.0:
        v = tab.hv[h0] + (base - theta)
        return v, tab.he[h0] + pos_err + 4.0 * ur * v
    if x >= nh - 1:
        return tab.hv[h0 + nh - 1], tab.he[h0 + nh - 1]
    j = int(math.floor(x))
    slope = 1.0
    if theta - pos_err >= base + j * g * (1.0 + 4.0 * ur):  # theta's range is right of g_j
        slope = min(1.0, tab.hu[h0 + j] + tab.hue[h0 + j])
    elif j >= 1 and pos_err < g:  # ... or right of g_{j-1}
        slope = min(1.0, tab.hu[h0 + j - 1] + tab.hue[h0 + j - 1])
    lam = min(max(x - j, 0.0), 1.0)
    hl, hr = tab.hv[h0 + j], tab.hv[h0 + j + 1]
    v = (1.0 - lam) * hl + lam * hr
    err = (1.0 - lam) * tab.he[h0 + j] + lam * tab.he[h0 + j + 1] + slope * pos_err \
        + 4.0 * ur * v
    return v, err


@kernel
def indep_grouped_excess(i, tab, e, shift):
    """An upper bound on sum_{K2 in window} Pr[K2] E[(K1 - e K2 - shift)_+] for block i
    (K1, K2 iid Bin(m_i, a)): f(k) = h(e k + shift) is convex in k, so over a group
    [s, s + d] of K2 with mass W and first moment S (about s) the sum is at most
    W ((1 - lam) f(s) + lam f(s + d)), lam = S/(W d) (the chord), and each f is bounded by
    grid_excess. With one K2 per group and unit grid cells (small m) nothing is lost: h is
    linear between integers. Returns (sum, allowance, groups)."""
    ur = UNIT_ROUNDOFF
    lo, hi, base, g = tab.meta[i, 0], tab.meta[i, 1], tab.meta[i, 2], tab.meta[i, 3]
    g0 = tab.goff[i]
    ng = tab.goff[i + 1] - g0
    total = 0.0
    allow = 0.0
    for j in range(ng):
        w = tab.gw[g0 + j]
        if w == 0.0:
            continue
        rel = tab.grel[g0 + j]
        start = max(base + j * g, lo)
        stop = min(base + (j + 1) * g - 1, hi)
        ta = e * start + shift
        fa, ea = grid_excess(ta, 4.0 * ur * ta, tab, i)
        if stop > start:
            tb = e * stop + shift
            fb, eb = grid_excess(tb, 4.0 * ur * tb, tab, i)
            lam = min(max(tab.gs[g0 + j] / (w * (stop - start)), 0.0), 1.0)
            elam = lam * (2.0 * rel + 4.0 * ur)
            v = w * ((1.0 - lam) * fa + lam * fb)
            err = w * ((1.0 - lam) * ea + lam * eb + abs(fb - fa) * elam) + (rel + 4.0 * ur) * v
        else:
            v = w * fa
            err = w * ea + (rel + 2.0 * ur) * v
        total += v
        allow += err
    return total, allow, ng


@kernel
def indep_upper_delta(ms, weights, outside_m, tab, law, eps):
    """Blanket upper bound for independent Bern(a) support bits (docs/theory.md §2.5), as
    indep_upper_delta_direct but with the K2 sum grouped (indep_grouped_excess) from the
    eps-independent tables ``tab`` (indep_tables of the same ms): O(GROUPS_PER_SD) terms per
    block and per eps whatever n. E and r are rounded down as there; the K2 mass outside its
    window adds a1 times itself."""
    a1, c, gc, eps0 = law.a1, law.c, law.gc, law.eps0
    if eps >= eps0:
        return 0.0
    e, r = e_and_r_down(eps, c)
    total = 0.0
    steps = np.int64(0)
    for i in range(ms.shape[0]):
        m = ms[i]
        s, allow, st = indep_grouped_excess(i, tab, e, r * m)
        steps += st
        total += weights[i] * block_g(gc / m, s, allow, st, a1 * tab.out[i])
    return blocks_total(total, ms.shape[0], outside_m, steps)
