"""Shuffled binary randomized response on one dataset: the count pair (docs/theory.md §2.14).

Binary randomizer: Pr[report 1 | bit 1] = a, Pr[report 1 | bit 0] = b, a > b (complements ac,
bc passed, never formed by subtraction). The other users are n1 holders of 1 and n2 of 0, so
the analyst's view (the count of ones) is X + Bern(a) against X + Bern(b), with
X = Bin(n1, a) + Bin(n2, b), N = n1 + n2. The pmf x of X is log-concave (a sum of independent
Bernoullis) and, from the generating function, with ta = a/ac and tb = b/bc,

    (k+1) x(k+1) = [(n1 - k) ta + (n2 - k) tb] x(k) + ta tb (N - k + 1) x(k-1),

so rho_k = x(k+1)/x(k) obeys rho_k = A_k + B_k / rho_{k-1}, A_k = [(n1-k) ta + (n2-k) tb]/(k+1),
B_k = ta tb (N-k+1)/(k+1) > 0. Log-concavity (rho non-increasing) bounds rho_k between the
positive roots of r^2 = A_j r + B_j at j = k+1 and j = k ("a priori"), and the recurrence run
forward and backward narrows the bounds (each direction contracts where the other expands).
The pmf is anchored by direct convolution near the mode (and again wherever the carried bounds
drift apart) and carried outward by the ratio bounds. Everything rounds outward.

Given the tables, one hockey-stick divergence costs O(log W): the positive part of
P - E Q is a suffix in k (the ratio P/Q grows with k), that of Q - E P a prefix, and both sums
are read from prefix sums of the pmf bounds weighted by ratio bounds.
"""
import math
from typing import NamedTuple

import numpy as np

from .decorator import kernel
from .binomial import TINY, binom_window, pmf_anchor
from .numerics import EXP_MAX, SUBNORMAL_ULP, UNIT_ROUNDOFF

__all__ = ["CountLaw", "ROWS", "REL_ANCHOR", "count_capacity", "count_tables", "count_delta",
           "count_deltas"]

U = UNIT_ROUNDOFF
REL_ANCHOR = 1e-5   # re-anchor the carried pmf bounds once they are this far apart (relative)
_REANCHOR_EVERY = 2048  # binomial pmf recurrences restart from the log-pmf this often


class CountLaw(NamedTuple):
    """The count pair of one dataset: n1 holders of 1, n2 holders of 0 among the others;
    Pr[1 | 1] = a (ac = 1 - a), Pr[1 | 0] = b (bc = 1 - b), a > b; windows leave out at most
    ``tol`` of each binomial's mass; ``rel``: the relative gap of the carried pmf bounds above
    which a new direct anchor is computed; ``sweeps`` (0 or 1): narrow the ratio bounds by
    the recurrence (else the a priori interval alone, ~1/var X per step: several times
    cheaper, for wide windows)."""

    n1: int
    n2: int
    a: float
    ac: float
    b: float
    bc: float
    tol: float
    rel: float
    sweeps: int


@kernel
def _pmf_window(n, p, q, lo, hi, out):
    """out[j - lo] = Pr[Bin(n, p) = j] for j in [lo, hi] by ratio recurrences from log-pmf
    anchors (every _REANCHOR_EVERY steps and whenever a value falls below TINY); returns one
    relative error bound for the whole row (anchor bound + 4 ulps per step)."""
    rel = 0.0
    if hi < lo:
        return rel
    mode = min(max(int(math.floor((n + 1.0) * p)), lo), hi)
    odds = p / q
    inv = q / p
    val, r0 = pmf_anchor(mode, n, p, q)
    steps = 0
    for j in range(mode, hi + 1):  # upward from the mode
        if j > mode:
            if steps >= _REANCHOR_EVERY or val < TINY:
                val, r0 = pmf_anchor(j, n, p, q)
                steps = 0
            else:
                val = val * ((n - j + 1.0) / j) * odds
                steps += 1
        out[j - lo] = val
        rel = max(rel, r0 + 4.0 * (steps + 1) * U)
    val, r0 = pmf_anchor(mode, n, p, q)
    steps = 0
    for j in range(mode - 1, lo - 1, -1):  # downward
        if steps >= _REANCHOR_EVERY or val < TINY:
            val, r0 = pmf_anchor(j, n, p, q)
            steps = 0
        else:
            val = val * ((j + 1.0) / (n - j)) * inv
            steps += 1
        out[j - lo] = val
        rel = max(rel, r0 + 4.0 * (steps + 1) * U)
    return rel


@kernel
def _direct(k, ulo, uhi, u, urel, vlo, vhi, v, vrel, outside):
    """(lower, upper) bounds on x(k) = sum_j U(j) V(k - j) from the windowed pmfs (u on
    [ulo, uhi], v on [vlo, vhi]): the upper bound adds the mass outside both windows (each
    missing term is at most that mass)."""
    j_lo = max(ulo, k - vhi)
    j_hi = min(uhi, k - vlo)
    s = 0.0
    cnt = 0
    for j in range(j_lo, j_hi + 1):
        s += u[j - ulo] * v[k - j - vlo]
        cnt += 1
    rel = urel + vrel + (cnt + 4.0) * U
    lo = s * (1.0 - rel) - (cnt + 1.0) * SUBNORMAL_ULP
    hi = s * (1.0 + rel) + outside + (cnt + 1.0) * SUBNORMAL_ULP
    return max(lo, 0.0), hi


@kernel
def _coefs(k, n1, n2, ta, tb, tab, nn):
    """Bounds (A_lo, A_hi, B_lo, B_hi) of the recurrence coefficients at k (0 <= k <= N): 20
    ulps of each term's magnitude cover the roundings here and in ta, tb, tab (themselves a few
    ulps from the exact odds)."""
    inv = 1.0 / (k + 1.0)
    s1 = (n1 - k) * ta
    s2 = (n2 - k) * tb
    aa = (s1 + s2) * inv
    ea = 20.0 * U * (abs(s1) + abs(s2)) * inv
    bb = tab * (nn - k + 1.0) * inv
    eb = 20.0 * U * bb
    return aa - ea, aa + ea, bb - eb, bb + eb


@kernel
def _root(aa, bb):
    """The positive root of r^2 = aa r + bb (bb > 0), without cancellation; increasing in both."""
    d = math.sqrt(aa * aa + 4.0 * bb)
    if aa >= 0.0:
        return 0.5 * (aa + d)
    return 2.0 * bb / (d - aa)


@kernel
def _a_priori(k, nn, ahi_k, bhi_k, alo_next, blo_next):
    """The log-concavity interval [r(k+1), r(k)] of rho_k (1 <= k <= N - 2; else (0, inf)):
    rho_k <= rho_{k-1} gives rho_k^2 <= A_k rho_k + B_k, and rho_{k+1} <= rho_k gives
    rho_k^2 >= A_{k+1} rho_k + B_{k+1} (r(j) the positive root of r^2 = A_j r + B_j)."""
    if k < 1 or k > nn - 2:
        return 0.0, math.inf
    hi = _root(ahi_k, bhi_k) * (1.0 + 8.0 * U)
    lo = _root(alo_next, blo_next) * (1.0 - 8.0 * U) if blo_next > 0.0 else 0.0
    return lo, hi


@kernel
def _ratio_bounds(k0, k1, n1, n2, ta, tb, tab, rl, rh, sweeps):
    """Fill rl, rh (length k1 - k0 + 2) with bounds on rho_k = x(k+1)/x(k) for k in
    [k0 - 1, k1] (index k - k0 + 1), both non-increasing in k: exact ends (rho_{-1} = inf,
    rho_0 = A_0, rho_{N-1} = ta tb / (n2 ta + n1 tb), rho_N = 0), then one forward and one
    backward sweep of the recurrence, each intersected with what is known, with the a priori
    interval of log-concavity at the start and wherever the sweeps leave an interval wider than
    1e-9 (relative). The coefficients are recomputed where used (cheaper than storing them:
    these passes are bound by memory traffic)."""
    nn = n1 + n2
    w = k1 - k0 + 2
    for i in range(w):
        k = k0 - 1 + i
        rl[i] = 0.0
        rh[i] = math.inf
        if k < 0:
            rl[i] = math.inf
        elif k >= nn:
            rh[i] = 0.0
        elif k == 0 or k == nn - 1:
            v = n1 * ta + n2 * tb if k == 0 else tab / (n2 * ta + n1 * tb)
            rl[i] = v * (1.0 - 32.0 * U)
            rh[i] = v * (1.0 + 32.0 * U)
    if not sweeps:  # the a priori interval alone (relative width ~ 1/var X per step)
        nxt = _coefs(min(max(k0 - 1, 0), nn), n1, n2, ta, tb, tab, nn)
        for i in range(w):
            k = k0 - 1 + i
            cur = nxt
            nxt = _coefs(min(max(k + 1, 0), nn), n1, n2, ta, tb, tab, nn)
            if 1 <= k <= nn - 2:
                lo, hi = _a_priori(k, nn, cur[1], cur[3], nxt[0], nxt[2])
                rl[i] = lo
                rh[i] = hi
        for i in range(1, w):
            rh[i] = min(rh[i], rh[i - 1])
            rl[w - 1 - i] = max(rl[w - 1 - i], rl[w - i])
        return
    up = 1.0 + 8.0 * U
    dn = 1.0 - 8.0 * U
    wide = 1e-9
    # forward: rho_k in [A_lo + B_lo / rh_{k-1}, A_hi + B_hi / rl_{k-1}], and rho_k <= rho_{k-1}
    # (where this direction expands, the bounds it leaves are loose but valid: the backward
    # sweep then contracts, or the a priori interval is applied there)
    if not rh[0] <= rl[0] * (1.0 + wide) and 1 <= k0 - 1 <= nn - 2:
        _, ahi, _, bhi = _coefs(k0 - 1, n1, n2, ta, tb, tab, nn)
        alo1, _, blo1, _ = _coefs(k0, n1, n2, ta, tb, tab, nn)
        lo, hi = _a_priori(k0 - 1, nn, ahi, bhi, alo1, blo1)
        rl[0] = max(rl[0], lo)
        rh[0] = min(rh[0], hi)
    for i in range(1, w):
        k = k0 - 1 + i
        if 1 <= k <= nn - 1:
            alo, ahi, blo, bhi = _coefs(k, n1, n2, ta, tb, tab, nn)
            prev_h = rh[i - 1]
            prev_l = rl[i - 1]
            t_lo = blo / prev_h if prev_h < math.inf else 0.0
            rl[i] = max(rl[i], (alo + t_lo * dn) - 4.0 * U * (abs(alo) + t_lo))
            if prev_l > 0.0:
                t_hi = bhi / prev_l
                rh[i] = min(rh[i], (ahi + t_hi * up) + 4.0 * U * (abs(ahi) + t_hi))
            rh[i] = min(rh[i], prev_h)
    # backward: rho_{k-1} = B_k / (rho_k - A_k), and rho_{k-1} >= rho_k
    k_top = k0 - 1 + (w - 1)
    alo, ahi, blo, bhi = _coefs(min(max(k_top, 0), nn), n1, n2, ta, tb, tab, nn)
    for i in range(w - 1, 0, -1):
        k = k0 - 1 + i  # (alo .. bhi) are the coefficients at k here
        if 1 <= k <= nn - 1:
            den_hi = (rh[i] - alo) * up + 4.0 * U * abs(alo)
            den_lo = (rl[i] - ahi) * dn - 4.0 * U * (abs(ahi) + rl[i])
            if 0.0 < den_hi < math.inf:
                rl[i - 1] = max(rl[i - 1], blo / den_hi * dn)
            if den_lo > 0.0:
                rh[i - 1] = min(rh[i - 1], bhi / den_lo * up)
        rl[i - 1] = max(rl[i - 1], rl[i])
        plo, phi, pblo, pbhi = _coefs(min(max(k - 1, 0), nn), n1, n2, ta, tb, tab, nn)
        if not rh[i - 1] <= rl[i - 1] * (1.0 + wide):
            lo, hi = _a_priori(k - 1, nn, phi, pbhi, alo, blo)
            rl[i - 1] = max(rl[i - 1], lo)
            rh[i - 1] = min(rh[i - 1], hi)
        alo, ahi, blo, bhi = plo, phi, pblo, pbhi
    # final monotone clean-up (rh non-increasing; rl is already)
    for i in range(1, w):
        rh[i] = min(rh[i], rh[i - 1])
        rl[i] = min(rl[i], rh[i])


ROWS = 14  # rows of the work buffer of count_tables (see there)
CHUNK = 64  # running sums are kept every CHUNK entries (rows 6-13), the rest summed on demand


@kernel
def _windows(law):
    """The windows of Bin(n1, a) and Bin(n2, b) (an empty group is the point 0) and their
    outside masses."""
    u_lo, u_hi, u_out = binom_window(law.n1, law.a, law.ac, law.tol)
    v_lo, v_hi, v_out = binom_window(law.n2, law.b, law.bc, law.tol)
    if law.n1 == 0:
        u_lo, u_hi, u_out = 0, 0, 0.0
    if law.n2 == 0:
        v_lo, v_hi, v_out = 0, 0, 0.0
    return u_lo, u_hi, u_out, v_lo, v_hi, v_out


@kernel
def count_capacity(law):
    """Columns a work buffer needs for count_tables(law): the window of X plus 3."""
    u_lo, u_hi, _, v_lo, v_hi, _ = _windows(law)
    return (u_hi - u_lo) + (v_hi - v_lo) + 4


@kernel
def count_tables(law, buf):
    """Tables of the count pair of ``law`` (a CountLaw) in the rows of ``buf`` (ROWS x at least
    count_capacity(law)): the window [k0, k0 + w - 1] of X, ratio bounds rl <= rho <= rh on
    [k0 - 1, k0 + w - 1] (rows 0, 1), pmf bounds xl <= x <= xh (rows 2, 3) and the running sums
    the divergences read, every CHUNK entries (rows 6-13); rows 4-5 are work space. Returns (k0, w, left, right):
    left and right bound the mass of X outside the window. The buffer is meant to be reused
    across calls (fresh pages cost more than the arithmetic here)."""
    n1 = law.n1
    n2 = law.n2
    nn = n1 + n2
    u_lo, u_hi, u_out, v_lo, v_hi, v_out = _windows(law)
    k0 = u_lo + v_lo
    k1 = u_hi + v_hi
    w = k1 - k0 + 1
    if buf.shape[0] < ROWS or buf.shape[1] < w + 3:
        raise ValueError("count_tables: the work buffer is smaller than count_capacity(law)")
    u = buf[4]
    v = buf[5]
    urel = _pmf_window(n1, law.a, law.ac, u_lo, u_hi, u)
    vrel = _pmf_window(n2, law.b, law.bc, v_lo, v_hi, v)
    outside = u_out + v_out
    ta = law.a / law.ac
    tb = law.b / law.bc
    rl = buf[0]
    rh = buf[1]
    _ratio_bounds(k0, k1, n1, n2, ta, tb, ta * tb, rl, rh, law.sweeps != 0)
    xl = buf[2]
    xh = buf[3]
    ks = min(max(int(math.floor(n1 * law.a + n2 * law.b)), k0), k1)  # near the mode
    i0 = ks - k0
    xl[i0], xh[i0] = _direct(ks, u_lo, u_hi, u, urel, v_lo, v_hi, v, vrel, outside)
    floor = 1e6 * (outside + 1e-290)  # a direct anchor helps only well above the missing mass
    grow = 1.0 + 4.0 * U
    shrink = 1.0 - 4.0 * U
    for i in range(i0, w - 1):  # x(k+1) = x(k) rho_k, rho_k at index i + 1
        hi = xh[i] * rh[i + 1] * grow
        lo = xl[i] * rl[i + 1] * shrink
        if hi > floor and hi > lo * (1.0 + law.rel):
            dlo, dhi = _direct(k0 + i + 1, u_lo, u_hi, u, urel, v_lo, v_hi, v, vrel, outside)
            lo = max(lo, dlo)
            hi = min(hi, dhi)
        xh[i + 1] = hi if hi >= TINY else 2.0 * TINY
        xl[i + 1] = lo if lo >= TINY else 0.0
    for i in range(i0, 0, -1):  # x(k-1) = x(k) / rho_{k-1}, rho_{k-1} at index i
        hi = xh[i] / rl[i] * grow if rl[i] > 0.0 else math.inf
        lo = xl[i] / rh[i] * shrink
        if hi > floor and hi > lo * (1.0 + law.rel):
            dlo, dhi = _direct(k0 + i - 1, u_lo, u_hi, u, urel, v_lo, v_hi, v, vrel, outside)
            lo = max(lo, dlo)
            hi = min(hi, dhi)
        xh[i - 1] = hi if hi >= TINY else 2.0 * TINY
        xl[i - 1] = lo if lo >= TINY else 0.0
    # the mass beyond the window: geometric in the ratio bound at its edge (ratios fall), else
    # the binomial windows' own outside mass
    right = outside
    if k1 >= nn:
        right = 0.0
    elif rh[w] < 1.0:
        right = min(right, xh[w - 1] * rh[w] / (1.0 - rh[w]) * grow * grow)
    left = outside
    if k0 <= 0:
        left = 0.0
    elif rl[1] > 1.0:
        s = 1.0 / rl[1]
        left = min(left, xh[0] * s / (1.0 - s) * grow * grow)
    _sums(w, buf)
    return k0, w, left, right


@kernel
def _term(r, i, buf):
    """Entry i of running sum r (0-3 suffix sums of the direction P||Q, whose terms are
    x(j) (c1 + c0 rho_j): xh, xh rl, xl, xl rh; 4-7 prefix sums of the direction Q||P, terms
    x(k) (d0 + d1 / rho_{k-1}): xh, xh / rh_{k-1}, xl, xl / rl_{k-1})."""
    if r == 0 or r == 4:
        return buf[3, i]
    if r == 1:
        return buf[3, i] * buf[0, i + 1]
    if r == 2 or r == 6:
        return buf[2, i]
    if r == 3:
        return buf[2, i] * buf[1, i + 1] if buf[2, i] > 0.0 else 0.0
    if r == 5:
        return buf[3, i] / buf[1, i] if buf[1, i] < math.inf else 0.0
    lo = buf[0, i]
    if lo == math.inf or buf[2, i] == 0.0:
        return 0.0
    return buf[2, i] / lo if lo > 0.0 else math.inf


@kernel
def _sums(w, buf):
    """Checkpoints of the running sums (row 6 + r, entry c): suffix sums from c CHUNK on
    (r = 0-3), prefix sums below c CHUNK (r = 4-7), c = 0 .. ceil(w / CHUNK). One pass per
    direction, the row of each term fixed (so that each _term call folds to its formula)."""
    nc = (w + CHUNK - 1) // CHUNK
    s0 = s1 = s2 = s3 = 0.0
    for r in range(4):
        buf[6 + r, nc] = 0.0
        buf[10 + r, 0] = 0.0
    for c in range(nc - 1, -1, -1):
        for i in range(min((c + 1) * CHUNK, w) - 1, c * CHUNK - 1, -1):
            s0 += _term(0, i, buf)
            s1 += _term(1, i, buf)
            s2 += _term(2, i, buf)
            s3 += _term(3, i, buf)
        buf[6, c] = s0
        buf[7, c] = s1
        buf[8, c] = s2
        buf[9, c] = s3
    s0 = s1 = s2 = s3 = 0.0
    for c in range(nc):
        for i in range(c * CHUNK, min((c + 1) * CHUNK, w)):
            s0 += _term(4, i, buf)
            s1 += _term(5, i, buf)
            s2 += _term(6, i, buf)
            s3 += _term(7, i, buf)
        buf[10, c + 1] = s0
        buf[11, c + 1] = s1
        buf[12, c + 1] = s2
        buf[13, c + 1] = s3


@kernel
def _suffix(r, i, w, buf):
    """sum_{j >= i} of running sum r's terms (r = 0-3)."""
    c = (i + CHUNK - 1) // CHUNK
    acc = buf[6 + r, c]
    for j in range(min(c * CHUNK, w) - 1, i - 1, -1):
        acc += _term(r, j, buf)
    return acc


@kernel
def _prefix(r, i, w, buf):
    """sum_{j < i} of running sum r's terms (r = 4-7)."""
    c = i // CHUNK
    acc = buf[6 + r, c]
    for j in range(c * CHUNK, i):
        acc += _term(r, j, buf)
    return acc


@kernel
def _first_below(r, lo, hi, tau):
    """First index i in [lo, hi] with r[i] < tau for a non-increasing r (hi + 1 if none)."""
    a = lo
    b = hi + 1
    while a < b:
        mid = (a + b) // 2
        if r[mid] < tau:
            b = mid
        else:
            a = mid + 1
    return a


@kernel
def _last_above(r, lo, hi, tau):
    """Last index i in [lo, hi] with r[i] > tau for a non-increasing r (lo - 1 if none)."""
    a = lo - 1
    b = hi
    while a < b:
        mid = (a + b + 1) // 2
        if r[mid] > tau:
            a = mid
        else:
            b = mid - 1
    return a


@kernel
def _hockey_coef(x, y, e, sgn):
    """x - e y rounded up (sgn = 1) or down (sgn = -1) past its rounding error."""
    return (x - e * y) + sgn * 2.0 * U * (x + e * y)


@kernel
def count_delta(k0, w, left, right, buf, a, ac, b, bc, eps, upper):
    """max(H(P||Q), H(Q||P)) at e^eps for the tables of one count pair: an upper bound
    (``upper``: pmf upper bounds, ratio bounds on the side that enlarges each term, coefficients
    rounded up, the mass outside the window added where its terms can be positive) or a lower
    bound (the other sides, windows' mass dropped, rounded down). O(log W)."""
    rl = buf[0]
    rh = buf[1]
    e = math.exp(min(eps, EXP_MAX))
    sgn = 1.0 if upper else -1.0
    # ---- direction P||Q: terms x(j) (c1 + c0 rho_j), j in [k0, k0 + w - 1], positive for
    # rho_j < tau1 = c1 / -c0 (a suffix)
    c1 = _hockey_coef(a, b, e, sgn)
    c0 = _hockey_coef(ac, bc, e, sgn)
    h1 = 0.0
    if c1 > 0.0 and c0 < 0.0:
        tau = c1 / -c0
        tau *= (1.0 + 4.0 * U) if upper else (1.0 - 4.0 * U)
        if upper:
            # term <= xh (c1 + c0 rl): positive where rl < tau
            i = _first_below(rl, 1, w, tau) - 1  # rl index i + 1 <-> x index i
            if i < w:
                pos = c1 * _suffix(0, i, w, buf)
                neg = c0 * _suffix(1, i, w, buf)
                h1 = pos + neg + 8.0 * (w + 4.0) * U * (pos - neg)
            h1 += c1 * right
            if k0 > 0 and not rl[0] * -c0 >= c1:
                h1 += c1 * left
            h1 = max(h1, 0.0)
        else:
            i = _first_below(rh, 1, w, tau) - 1
            if i < w:
                pos = c1 * _suffix(2, i, w, buf)
                neg = c0 * _suffix(3, i, w, buf)
                h1 = pos + neg - 8.0 * (w + 4.0) * U * (pos - neg)
            h1 = max(h1, 0.0)
    # ---- direction Q||P: terms x(k) (d0 + d1 / rho_{k-1}), positive for rho_{k-1} > tau2
    # = -d1 / d0 (a prefix); rho_{k-1} of x index i sits at ratio index i
    d1 = _hockey_coef(b, a, e, sgn)
    d0 = _hockey_coef(bc, ac, e, sgn)
    h2 = 0.0
    if d0 > 0.0 and d1 < 0.0:
        tau = -d1 / d0
        tau *= (1.0 - 4.0 * U) if upper else (1.0 + 4.0 * U)
        if upper:
            i = _last_above(rh, 0, w - 1, tau)  # x indices 0..i
            if i >= 0:
                pos = d0 * _prefix(4, i + 1, w, buf)
                neg = d1 * _prefix(5, i + 1, w, buf)
                h2 = pos + neg + 8.0 * (w + 4.0) * U * (pos - neg)
            h2 += d0 * left
            if not (rh[w] <= tau):
                h2 += d0 * right
            h2 = max(h2, 0.0)
        else:
            i = _last_above(rl, 0, w - 1, tau)
            if i >= 0:
                pos = d0 * _prefix(6, i + 1, w, buf)
                neg = d1 * _prefix(7, i + 1, w, buf)
                h2 = pos + neg - 8.0 * (w + 4.0) * U * (pos - neg)
            h2 = max(h2, 0.0)
    h = max(h1, h2)
    if upper:
        return min(1.0, h * (1.0 + 8.0 * U) + SUBNORMAL_ULP if h > 0.0 else 0.0)
    return max(0.0, h * (1.0 - 8.0 * U) - SUBNORMAL_ULP)


@kernel
def count_deltas(k0, w, left, right, buf, a, ac, b, bc, eps_arr, upper):
    """count_delta at every eps of an array."""
    out = np.empty(eps_arr.shape[0])
    for i in range(eps_arr.shape[0]):
        out[i] = count_delta(k0, w, left, right, buf, a, ac, b, bc, eps_arr[i], upper)
    return out
