"""Privacy-blanket upper bound for a symmetric correlated (b1, b2) law (subset selection; k-RR
and OLH exactly; docs/theory.md §2.5).

The sum runs over (J, N11), J = N10 + N01 the draws supporting exactly one of x1, x1' and N11
those supporting both: exact pieces of N11 (f is linear between integers of theta), one N11 law
shared by a run of J (that of its largest J, the least private), a Chernoff bound where it is
already below the windows' tolerance (kernels/pair_chernoff.py); the tail state of
V ~ Bin(J, 1/2) carries absolute error bounds (kernels/half_tail.py).
"""
import math
from typing import NamedTuple

import numpy as np

from .decorator import kernel
from .binomial import TINY, pmf_anchor, tail_rel_err
from .bintail import pmf_step_down, tight_window
from .blanket_indep import blocks_total
from .half_tail import (
    HALF_REL_MAX,
    HALF_REL_MOVE,
    half_anchor,
    half_excess,
    half_order_down,
    half_step,
    half_tail_below,
)
from .numerics import LOG_UNDERFLOW, UNIT_ROUNDOFF
from .pair_chernoff import pair_chernoff_log

__all__ = ["J_BLOCK_MAX", "PairLaw", "n11_table", "group_sums", "j_grid", "j_groups",
           "pair_group_excess", "pair_block_term", "pair_upper_delta"]


J_BLOCK_MAX = 4096  # widest block of J sharing one law of N11 (pair_group_excess)


class PairLaw(NamedTuple):
    """The kernel's view of a correlated-pair oracle (build with records.record): the law of
    (b1, b2) under w is P(1,0) = P(0,1) = pj/2, P(1,1) = pi (1 - pj) (pjc = 1 - pj,
    pic = 1 - pi); gc = gamma (e^eps0 - 1), c = e^eps0 - 1, eps0 the replacement eps0;
    j_frac and max_groups set the blocking in J and the pieces of N11 (pair_group_excess)."""

    pj: float
    pjc: float
    pi: float
    pic: float
    gc: float
    c: float
    eps0: float
    j_frac: float
    max_groups: int


@kernel
def n11_table(rest, pi, pic, tol, buf):
    """The law of N11 ~ Bin(rest, pi) on its window [lo, lo + L) as running sums, for O(1) group
    masses and first moments: rows of buf hold w_i (i = N11 - lo), then sum_{i' < i} w_i',
    sum_{i' < i} i' w_i' (from the left) and sum_{i' >= i} of the same two (from the right).
    Returns (lo, L, index of the mode, outside mass, relative error bound of the weights, buf)."""
    if pi > 0.0 and rest > 0:
        lo, hi, out = tight_window(rest, pi, pic, tol)
    else:
        lo, hi, out = 0, 0, 0.0
    n_len = hi - lo + 1
    if buf.shape[1] < n_len + 1:
        buf = np.empty((5, n_len + 1 + n_len // 2))
    if pi > 0.0 and rest > 0:
        w, rel_w = pmf_anchor(lo, rest, pi, pic)
    else:
        w, rel_w = 1.0, 0.0
    since = 0
    rel = 0.0
    md = 0
    buf[1, 0] = 0.0
    buf[2, 0] = 0.0
    for i in range(n_len):
        buf[0, i] = w
        rel = max(rel, rel_w + 8.0 * (since + 1) * UNIT_ROUNDOFF)
        if w > buf[0, md]:
            md = i
        buf[1, i + 1] = buf[1, i] + w
        buf[2, i + 1] = buf[2, i] + i * w
        n = lo + i
        if n < rest and i + 1 < n_len:
            w *= (rest - n) / (n + 1.0) * (pi / pic)
            since += 1
            if w < TINY:
                w, rel_w = pmf_anchor(n + 1, rest, pi, pic)
                since = 0
    buf[3, n_len] = 0.0
    buf[4, n_len] = 0.0
    for i in range(n_len - 1, -1, -1):
        buf[3, i] = buf[3, i + 1] + buf[0, i]
        buf[4, i] = buf[4, i + 1] + i * buf[0, i]
    return lo, n_len, md, out, rel, buf


@kernel
def group_sums(buf, n_len, md, a, b):
    """(W, S, eW, eS): W = sum w_i and S = sum i w_i over a <= i < b from n11_table's running
    sums, with rounding bounds. A group below the mode uses the left sums, above it the right
    ones (so the subtracted sum is at most n_len times the group's mass: the pmf is unimodal),
    one around the mode both; each running sum of at most n_len terms errs by at most
    1.01 n_len u times itself, hence the factor 3 (n_len + 4) u on the sums involved."""
    if b - 1 <= md:
        w = buf[1, b] - buf[1, a]
        s = buf[2, b] - buf[2, a]
        mw = buf[1, b]
        ms = buf[2, b]
    elif a >= md:
        w = buf[3, a] - buf[3, b]
        s = buf[4, a] - buf[4, b]
        mw = buf[3, a]
        ms = buf[4, a]
    else:
        w = (buf[1, md] - buf[1, a]) + (buf[3, md] - buf[3, b])
        s = (buf[2, md] - buf[2, a]) + (buf[4, md] - buf[4, b])
        mw = buf[1, md] + buf[3, md]
        ms = buf[2, md] + buf[4, md]
    k = 3.0 * (n_len + 4) * UNIT_ROUNDOFF
    return max(w, 0.0), max(s, 0.0), k * mw, k * ms


@kernel
def j_grid(j, e, beta, shift, nlo, n_len, n11_sd, max_groups):
    """The pieces of one J (see pair_group_excess): (tl, stride, count), covering theta of every
    N11 in the window by [tl, tl + count stride). Pieces are `stride` integers wide and start
    at multiples of it; the stride depends on the law of N11 (its standard deviation n11_sd:
    max_groups pieces over 24 of them), not on the window, so a wider window (smaller tol)
    only adds pieces."""
    ope = 1.0 + e
    th_min = (e * j + beta * nlo + shift) / ope
    th_max = (e * j + beta * (nlo + n_len - 1) + shift) / ope
    stride = np.int64(1)
    span = beta * (24.0 * n11_sd + 1.0) / ope
    if max_groups > 0 and span + 1.0 > max_groups:
        stride = np.int64(math.ceil((span + 1.0) / max_groups))
    tl = np.int64(math.floor(th_min / stride)) * stride
    count = np.int64(math.floor((th_max - tl) / stride)) + 1
    return tl, stride, count


@kernel
def j_groups(j, tl, stride, count, u, pk, eu, ep, e, beta, shift, nlo, n_len, md, rel_n, buf,
             rel_move):
    """sum over N11 of Pr[N11] f_J(theta(J, N11)) for one J (see pair_group_excess), pieces
    [t, t + stride) for t = tl + i stride, i < count (j_grid), from the state of Bin(J, 1/2) at
    tc = min(tl + count stride, J). The pieces are walked downward (t decreasing), where the
    tail recurrence only adds (u <- u + pk): its relative error does not grow however deep the
    tail. Returns (sum, allowance, terms)."""
    ur = UNIT_ROUNDOFF
    ope = 1.0 + e
    inv_ope = 1.0 / ope
    base = e * j + shift
    inv_beta = 1.0 / beta if beta > 0.0 else 0.0
    inv_stride = 1.0 / stride
    # theta of any N11 value, and every piece boundary, is known to within eps_th
    eps_th = 16.0 * ur * (base + beta * (nlo + n_len) + ope * (j + stride + 1.0)) * inv_ope
    t_hi = tl + count * stride
    t = min(t_hi, j)
    if t_hi <= j:
        f_hi, e_hi = half_excess(float(t_hi), t_hi, j, u, pk, eu, ep)
    else:
        f_hi, e_hi = 0.0, 0.0
    acc = 0.0
    acc_err = 0.0
    terms = 0
    b = n_len
    for i in range(count - 1, -1, -1):
        t_lo = tl + i * stride
        if i == 0:
            a = 0
        elif beta > 0.0:
            x = (ope * t_lo - base) * inv_beta - nlo
            if x >= b:
                a = b
            elif x <= 0.0:
                a = 0
            else:
                a = min(b, int(math.ceil(x)))
        else:
            a = b
        if t_lo >= j:
            # f_J = 0 for theta >= J; a piece starting at J may hold theta down to J - eps_th,
            # where f_J <= eps_th Pr[V = J] = eps_th 2^-J
            if t_lo == j and b > a:
                w, _, ew, _ = group_sums(buf, n_len, md, a, b)
                acc_err += (w + ew * (1.0 + rel_n) + rel_n * w) * eps_th * 0.5 ** j
            b = a
            continue
        u, pk, eu, ep = half_step(t, t_lo, j, u, pk, eu, ep, rel_move)
        t = t_lo
        f_lo, e_lo = half_excess(float(t_lo), t_lo, j, u, pk, eu, ep)
        terms += stride
        if b > a:
            w, s, ew, es = group_sums(buf, n_len, md, a, b)
            ew += rel_n * (w + ew)
            es += (rel_n + ur) * (s + es)
            if w > 2.0 * ew:
                inv_w = 1.0 / w
                mu = s * inv_w
                emu = (es + mu * ew) * inv_w * (1.0 + 2.0 * ew * inv_w) + 4.0 * ur * mu
            else:
                mu = 0.5 * (a + b - 1)
                emu = float(n_len)
            mu = min(max(mu, float(a)), float(b - 1))
            th = (base + beta * (nlo + mu)) * inv_ope
            lam = min(max((th - t_lo) * inv_stride, 0.0), 1.0)
            val = (1.0 - lam) * f_lo + lam * f_hi
            # the chord's slope, and f_J's just left of t_lo, are at most Pr[V >= t_lo] = u
            eth = min(eps_th + beta * emu * inv_ope, stride + eps_th)
            acc += w * val
            acc_err += w * ((1.0 - lam) * e_lo + lam * e_hi + 4.0 * ur * val + u * eth) \
                + ew * f_lo
            terms += 1
        b = a
        f_hi, e_hi = f_lo, e_lo
    return acc, acc_err, terms


@kernel
def pair_group_excess(m, law, e, beta, shift, tol):
    """sum over (J, N11) of Pr[J, N11] f_J(theta(J, N11)) for m draws whose (b1, b2) law has
    P(1,0) = P(0,1) = pj/2 and P(1,1) = pi (1 - pj): J = N10 + N01 ~ Bin(m, pj),
    N11 | J ~ Bin(m - J, pi), f_J(theta) = E[(V - theta)_+] with V | J ~ Bin(J, 1/2) and
    theta(J, n) = (E J + beta n + shift)/(1 + E), beta = E - 1 (the blanket sum is
    c (1+E)(V - theta)); docs/theory.md §2.5. An upper bound:

    * Pieces in N11 (exact). f_J is convex and piecewise linear with kinks at the integers, so
      over the N11 values whose theta lies in [t, t + 1) the mean of f_J is f_J at their mean
      theta: grouping N11 by t loses nothing, and a group costs one tail step and a few
      running-sum look-ups (n11_table) instead of a pass over its N11 values (j_groups). When
      a J has more than max_groups unit pieces (large eps), U consecutive pieces are merged
      and f_J is bounded on them by its chord between the integers t and t + U (convexity;
      U = 1 is exact; max_groups = 0 never merges).
    * Shared laws in J (the only blocking). Blocks of consecutive J use the N11 law of their
      largest J, Bin(m - J_top, pi): it is stochastically smaller than Bin(m - J, pi) for
      J <= J_top, and f_J(theta(J, n)) is non-increasing in n (theta grows with n), so each
      member's expectation is at most the one under that law: the block's largest J is its
      least private member. A block is as wide as keeps the shift of the mean of theta it
      causes, beta pi (width - 1)/(1 + E), within j_frac standard deviations of V (at the mean
      of J), at most J_BLOCK_MAX; j_frac = 0 is the exact law (width 1). Blocks and pieces
      are aligned at multiples of their widths, so a smaller tol only adds terms and never
      raises the bound (the eps and delta queries, which use different tol, then agree).

    The state of V's tail is carried from J to J - 1 with absolute error bounds (half_step,
    half_order_down).
    Returns (sum, allowance, outside mass of the J and N11 windows, terms, under). A cell
    outside the windows carries at most gamma c per unit mass in g ((1+E)(V - theta) <= V <= m);
    ``under`` = sum of Pr[J] J over the J whose tail Pr[V >= floor(theta)] underflowed to 0
    (f_J < J e^-745 there); the caller adds both. ``law`` is a PairLaw (pj, pjc, pi, pic,
    j_frac, max_groups are read from it).
    """
    pj, pjc, pi, pic = law.pj, law.pjc, law.pi, law.pic
    j_frac, max_groups = law.j_frac, law.max_groups
    ur = UNIT_ROUNDOFF
    ope = 1.0 + e
    jlo, jhi, outside = tight_window(m, pj, pjc, tol)
    anchor_rel = 8.0 * tail_rel_err(np.int64(0), max(jhi, 1), 0.5)  # the largest J's, any t
    rel_carry = max(HALF_REL_MAX, anchor_rel)
    rel_move = max(HALF_REL_MOVE, anchor_rel)
    j_block = np.int64(1)
    if j_frac > 0.0 and beta * pi > 0.0:
        width = j_frac * 0.5 * math.sqrt(m * pj) * ope / (beta * pi)
        j_block = np.int64(max(1.0, min(float(J_BLOCK_MAX), math.floor(width) + 1.0)))
    elif j_frac > 0.0:
        j_block = np.int64(J_BLOCK_MAX)  # the N11 law does not move theta
    buf = np.empty((5, 64))
    total = 0.0
    allow = 0.0
    terms = 0
    under = 0.0
    chain = 0  # recurrence steps of the J weights since their anchor
    j = jhi
    wj, rel_j = pmf_anchor(j, m, pj, pjc)
    blk_lo = jhi + 1  # J below this starts a new block (blocks: multiples of j_block)
    nlo, n_len, md, nout, rel_n, n11_sd = 0, 1, 0, 0.0, 0.0, 0.0
    t0 = np.int64(-1)  # the state at t0 (top of the pieces) of the previous J; -1: none
    u0, p0, eu0, ep0 = 0.0, 0.0, 0.0, 0.0
    while j >= jlo:
        if j < blk_lo:
            # the block [blk_lo, blk_lo + j_block) uses the law of its largest J (even where
            # that J lies beyond the window: the blocks do not depend on tol)
            blk_lo = (j // j_block) * j_block
            top = min(m, blk_lo + j_block - 1)
            nlo, n_len, md, nout, rel_n, buf = n11_table(m - top, pi, pic, tol, buf)
            n11_sd = math.sqrt((m - top) * pi * pic)
        outside += wj * nout
        tl, stride, count = j_grid(j, e, beta, shift, nlo, n_len, n11_sd, max_groups)
        if j > 0 and tl < j:
            tc = min(tl + count * stride, j)
            if (t0 < 0 or p0 < TINY) and half_tail_below(tl + 1, j, -746.0):
                # f_J <= J Pr[V > tl] < J e^-745 (no anchor needed): reported in `under`
                under += wj * j
                t0 = np.int64(-1)
                terms += 1
            else:
                if t0 < 0:
                    u0, p0, eu0, ep0 = half_anchor(tc, j)
                else:
                    u0, p0, eu0, ep0 = half_order_down(j + 1, t0, u0, p0, eu0, ep0, rel_carry)
                    u0, p0, eu0, ep0 = half_step(t0, tc, j, u0, p0, eu0, ep0, rel_carry)
                t0 = tc
                if u0 == 0.0:
                    # Pr[V >= tc] underflowed: the pieces above it read f_J = 0 where
                    # f_J < J e^-745, at both ends of a chord at most (in `under`)
                    under += 2.0 * wj * j
                acc, acc_err, st = j_groups(j, tl, stride, count, u0, p0, eu0, ep0, e, beta,
                                            shift, nlo, n_len, md, rel_n, buf, rel_move)
                total += wj * acc
                allow += wj * acc_err + wj * acc * (rel_j + 8.0 * (chain + 1) * ur)
                terms += st
            terms += 2
        else:
            t0 = np.int64(-1)
            # theta >= J, so f_J = 0, unless rounding hid theta just below J (theta >= J iff
            # beta N11 + shift >= J): then f_J <= that slack times Pr[V = J] = 2^-J
            if j > 0 and not beta * nlo + shift >= j * (1.0 + 64.0 * ur):
                allow += wj * 16.0 * ur * (e * j + shift + beta * (nlo + n_len) + ope) \
                    * 0.5 ** j
        if j <= 0:
            break
        wj, rel_j, chain = pmf_step_down(wj, j, m, pj, pjc, rel_j, chain)
        j -= 1
    return total, allow, outside, terms + 1, under


@kernel
def pair_block_term(m, law, e, beta, rate, threshold, tol):
    """One block's term g(m) = (gamma c (1+E)/m) E[(V - theta)_+] at the rounded threshold
    ``threshold`` (= ``rate`` m: r m unshifted, the participation kernels shift it), or its
    Chernoff bound (pair_chernoff_log at ``rate``) where that is already below tol; windows'
    outside mass adds gamma c times itself, underflowed pieces their bound. Returns (g, steps)."""
    p11, p10, p00 = law.pi * law.pjc, 0.5 * law.pj, law.pic * law.pjc
    lc = pair_chernoff_log(m, p11, p10, p00, e, rate) + math.log(law.gc / m) + 1e-12
    if lc < math.log(tol):
        return math.exp(lc), 1
    s, allow, out, st, under = pair_group_excess(m, law, e, beta, threshold, tol)
    scale = law.gc * (1.0 + e) / m
    g = scale * (s + allow) * (1.0 + 8.0 * (st + 16) * UNIT_ROUNDOFF) + law.gc * out
    if under > 0.0:
        g += math.exp(math.log(scale * under) - LOG_UNDERFLOW)
    return g, st


@kernel
def pair_upper_delta(ms, weights, outside_m, law, eps, tol):
    """Blanket upper bound for a symmetric correlated (b1, b2) law (subset selection; k-RR and
    OLH exactly): g(m) = (gamma c (1+E)/m) E[(V - theta)_+] (pair_group_excess), blocked in M'
    as in indep_upper_delta. The windows' outside mass adds gamma c times itself. E, E - 1 and
    r = (E-1)/c are rounded down: the sum decreases in each, so this only raises the bound.
    A block whose Chernoff bound (pair_chernoff_log) on g is below tol takes that bound
    instead of the sum (the windows already leave out up to tol): far above the answer, e.g.
    a solver's first probes, the sum costs nothing. ``law`` is a PairLaw; (ms, weights,
    outside_m) are m_blocks' blocks of M'."""
    if eps >= law.eps0:
        return 0.0
    e = math.exp(eps) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    beta = math.expm1(eps) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    r = beta / law.c * (1.0 - 4.0 * UNIT_ROUNDOFF)
    total = 0.0
    steps = 0
    for i in range(ms.shape[0]):
        g, st = pair_block_term(ms[i], law, e, beta, r, r * ms[i], tol)
        steps += st
        total += weights[i] * min(g, 1.0)
    return blocks_total(total, ms.shape[0], outside_m, steps)
