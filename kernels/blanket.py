"""Privacy-blanket bound for binary-support frequency oracles, and an exact oracle attack
(Balle, Bell, Gascon, Nissim 2019; Su, Cheng, Wang 2025; docs/theory.md §2.5, §2.6(c)).

Units. Every sum is divided by c = e^eps0 - 1 so that nothing overflows for large eps0: the
blanket sum of m draws is ``c (K1 - E K2 - r m)`` with E = e^eps and r = (E-1)/c, where K1, K2
count the draws that support x1, x1'.

The inner brick is ``E[(K - theta)_+]`` for K ~ Bin(m, a), in closed form from the tail
U = Pr[K >= t] and the pmf P = Pr[K = t] at t = floor(theta) + 1:

    E[(K - theta)_+] = (m a - theta) U + t (1 - a) P   (since sum_{k>=t} (k - m a) b(k) = t (1-a) b(t)).

(U, P) move by O(1) recurrences when theta moves by a few units, as in kernels/clones.py.
Upper sums add the mass outside every window (times a proven bound on what it can carry) and
are inflated by their rounding bound; lower sums drop the outside mass and are deflated.
"""
import math

import numpy as np
from numba import njit

from .binomial import (
    TINY,
    UNIT_ROUNDOFF,
    binom_logpmf,
    binom_window,
    pmf_anchor,
    tail_rel_err,
)

__all__ = ["DBL_MIN", "MAX_JUMP", "bin_sf", "sf_anchor", "sf_move", "first_above", "excess",
           "indep_excess", "indep_upper_delta", "half_dec_order", "pair_excess",
           "pair_upper_delta", "m_blocks", "split_attack_delta"]


DBL_MIN = 2.2250738585072014e-308
MAX_JUMP = 64


@njit(cache=True)
def bin_sf(t, m, a, b):
    """Pr[Bin(m, a) >= t]: the smaller side summed by pmf ratios, geometric remainder."""
    if t <= 0:
        return 1.0
    if t > m:
        return 0.0
    if a == 0.0:
        return 0.0
    if b == 0.0:
        return 1.0
    upper = t >= m * a
    k = t if upper else t - 1
    log_head = binom_logpmf(k, m, a, b)
    term = 1.0
    total = 1.0
    while True:
        if upper:
            if k >= m:
                break
            rho = (m - k) / (k + 1.0) * (a / b)
            k += 1
        else:
            if k <= 0:
                break
            rho = k / (m - k + 1.0) * (b / a)
            k -= 1
        term *= rho
        total += term
        nxt = ((m - k) / (k + 1.0) * (a / b)) if upper else (k / (m - k + 1.0) * (b / a))
        if nxt < 1.0 and term * nxt / (1.0 - nxt) <= 1e-18 * total:
            total += term * nxt / (1.0 - nxt)
            break
    s = math.exp(log_head + math.log(total))
    if upper:
        return min(1.0, s)
    return max(0.0, 1.0 - s)


@njit(cache=True)
def sf_anchor(t, m, a, b):
    """(Pr[Bin(m, a) >= t], Pr[Bin(m, a) = t]) computed directly."""
    return bin_sf(t, m, a, b), math.exp(binom_logpmf(t, m, a, b))


@njit(cache=True)
def sf_move(t, target, m, a, b, u, pk):
    """Move the state (u, pk) at t to target by pmf-ratio recurrences; re-anchor on long
    jumps, underflow, or when a subtraction would cancel half the value."""
    if abs(target - t) > MAX_JUMP or pk < TINY:
        return sf_anchor(target, m, a, b)
    while t > target:
        if t > m or t - 1 < 0:
            return sf_anchor(target, m, a, b)
        pk = pk * t * b / ((m - t + 1.0) * a)
        u = min(1.0, u + pk)
        t -= 1
        if pk < TINY:
            return sf_anchor(target, m, a, b)
    while t < target:
        if t < 0 or t >= m:
            return sf_anchor(target, m, a, b)
        nu = u - pk
        if nu < 0.5 * u:
            return sf_anchor(target, m, a, b)
        pk = pk * (m - t) * a / ((t + 1.0) * b)
        u = nu
        t += 1
        if pk < TINY:
            return sf_anchor(target, m, a, b)
    return u, pk


@njit(cache=True)
def first_above(theta, m):
    """Smallest integer t > theta, clipped to [0, m + 1]."""
    if theta < 0.0:
        return 0
    if theta >= m:
        return m + 1
    t = int(math.floor(theta)) + 1
    if t - 1 > theta:
        t -= 1
    return t


@njit(cache=True)
def excess(theta, t, m, a, b, u, pk):
    """(E[(K - theta)_+], rounding allowance) for K ~ Bin(m, a) from (u, pk) at t. The allowance
    includes the tail state's own error bound (log-pmf anchors and ratio sums: tail_rel_err)."""
    if t > m:
        return 0.0, 0.0
    lead = (m * a - theta) * u
    tail = t * b * pk
    v = lead + tail
    err = 8.0 * UNIT_ROUNDOFF * (abs(lead) + tail + abs(theta) * u + m * a * u) \
        + tail_rel_err(t, m, a) * (abs(lead) + tail)
    return max(v, 0.0), err


@njit(cache=True)
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


@njit(cache=True)
def indep_upper_delta(ms, weights, a, b, gc, a1, c, eps0, eps, tol, outside_m):
    """Blanket upper bound for independent Bern(a) support bits (docs/theory.md §2.5):
    delta <= sum_blocks Pr[M' in block] g(m_block) + outside_m, with
    g(m) = (gamma c / m) E[(K1 - E K2 - r m)_+], K1, K2 iid Bin(m, a); ms[i] is the smallest M'
    of block i (g is non-increasing in m: see ldpcompress/blanket.py). The K2 mass outside its
    window adds at most a1 times that mass ((.)_+ <= c K1 and gamma c a = a1 - gamma a <= a1).
    c = e^eps0 - 1 is passed exactly (gc = gamma c).
    """
    if eps >= eps0:
        return 0.0
    e = math.exp(eps)
    r = math.expm1(eps) / c
    total = 0.0
    steps = 0
    for i in range(ms.shape[0]):
        m = ms[i]
        s, allow, out, st = indep_excess(m, a, b, e, r * m, tol)
        steps += st
        g = (gc / m) * (s + allow) * (1.0 + 8.0 * (st + 16) * UNIT_ROUNDOFF) + a1 * out
        total += weights[i] * min(g, 1.0)
    total *= 1.0 + 8.0 * (ms.shape[0] + 16) * UNIT_ROUNDOFF
    return min(1.0, total + outside_m + (steps + 1) * DBL_MIN)


@njit(cache=True)
def half_dec_order(j, t, u, pk):
    """State (Pr[X >= t], Pr[X = t]) of X ~ Bin(j, 1/2) -> the same for Bin(j - 1, 1/2):
    U_{j-1}(t) = U_j(t) - B_j(t) t / j and B_{j-1}(t) = B_j(t) 2 (j - t) / j (re-anchors when
    the subtraction would cancel half the value or the pmf underflows)."""
    if t <= 0 or t >= j or pk < TINY:
        return sf_anchor(t, j - 1, 0.5, 0.5)
    nu = u - pk * t / j
    if nu < 0.5 * u:
        return sf_anchor(t, j - 1, 0.5, 0.5)
    return nu, pk * 2.0 * (j - t) / j


@njit(cache=True)
def pair_excess(m, pj, pjc, pi, pic, e, shift, tol, n11_block, aj=-1.0):
    """sum over (J, N11) of Pr E[(V - theta)_+], V | J ~ Bin(J, 1/2), for m draws whose
    (b1, b2) law has P(1,0) = P(0,1) = pj/2 and P(1,1) = pi (1 - pj):
    J = N10 + N01 ~ Bin(m, pj), N11 | J ~ Bin(m - J, pi), theta = (E J + (E-1) N11 + shift)/(1+E)
    (the blanket sum is c (1+E)(V - theta)). Consecutive N11 values are blocked by
    ``n11_block`` at the block's smallest N11: theta grows with N11 while the law of V does not
    depend on it, so that value is the largest of the block (an upper bound).
    J runs downward; the tail state at the first N11 block is carried from J to J - 1.
    The attack (pi = 0, so N11 = 0) passes its own coefficient: theta = (aj J + shift)/(1+E).

    Returns (sum, allowance, outside mass, terms).
    """
    if aj < 0.0:
        aj = e
    beta = e - 1.0
    jlo, jhi, outside = binom_window(m, pj, pjc, tol)
    total = 0.0
    allow = 0.0
    steps = 0
    j = jhi
    wj, rel_j = pmf_anchor(j, m, pj, pjc)
    since_j = 0
    t0 = np.int64(-1)  # typed, not the literal -1: callees compile once, for int64
    u0 = 0.0
    p0 = 0.0
    while j >= jlo:
        rest = m - j
        if pi > 0.0:
            nlo, nhi, nout = binom_window(rest, pi, pic, tol)
        else:
            nlo, nhi, nout = 0, 0, 0.0
        outside += wj * nout
        n11 = nlo
        if pi > 0.0:
            wn, rel_n = pmf_anchor(n11, rest, pi, pic)
        else:
            wn, rel_n = 1.0, 0.0
        since_n = 0
        # state at the first block, carried over from order j + 1
        theta = (aj * j + beta * n11 + shift) / (1.0 + e)
        nt = first_above(theta, j)
        if nt <= j:
            if t0 < 0 or t0 > j + 1:
                u0, p0 = sf_anchor(nt, j, 0.5, 0.5)
            else:
                if t0 >= 0 and j + 1 > 0 and t0 <= j + 1:
                    u0, p0 = half_dec_order(j + 1, t0, u0, p0)
                u0, p0 = sf_move(t0, nt, j, 0.5, 0.5, u0, p0)
            t0 = nt
        else:
            t0 = np.int64(-1)
        t = t0
        u = u0
        pk = p0
        first = True
        while n11 <= nhi:
            if not first:
                theta = (aj * j + beta * n11 + shift) / (1.0 + e)
                nt = first_above(theta, j)
                if nt <= j and t >= 0:
                    u, pk = sf_move(t, nt, j, 0.5, 0.5, u, pk)
                t = nt
            first = False
            if t < 0 or t > j:
                v, err = 0.0, 0.0
            else:
                v, err = excess(theta, t, j, 0.5, 0.5, u, pk)
            bw = 0.0
            rel_b = 0.0  # largest relative error bound of a weight in the block
            top = min(nhi, n11 + n11_block - 1)
            while n11 <= top:
                bw += wn
                rel_b = max(rel_b, rel_n + 8.0 * (since_n + 1) * UNIT_ROUNDOFF)
                if n11 < rest and pi > 0.0:
                    wn *= (rest - n11) / (n11 + 1.0) * (pi / pic)
                    since_n += 1
                    if wn < TINY:
                        wn, rel_n = pmf_anchor(n11 + 1, rest, pi, pic)
                        since_n = 0
                n11 += 1
                steps += 1
            total += wj * bw * v
            rel = (1.0 + rel_j + 8.0 * (since_j + 1) * UNIT_ROUNDOFF) * (1.0 + rel_b) - 1.0
            allow += wj * bw * (err + v * rel)
        if j <= 0:
            break
        wj *= (j / (m - j + 1.0)) * (pjc / pj)
        j -= 1
        since_j += 1
        if wj < TINY:
            wj, rel_j = pmf_anchor(j, m, pj, pjc)
            since_j = 0
    return total, allow, outside, steps + 1


@njit(cache=True)
def pair_upper_delta(ms, weights, pj, pjc, pi, pic, gc, a1, c, eps0, eps, tol, outside_m,
                     n11_block):
    """Blanket upper bound for a symmetric correlated (b1, b2) law (subset selection, k-RR,
    OLH exactly): g(m) = (gamma c (1+E)/m) E[(V - theta)_+] (pair_excess), blocked in M' as in
    indep_upper_delta; inner windows' outside mass adds at most a1 times itself."""
    if eps >= eps0:
        return 0.0
    e = math.exp(eps)
    r = math.expm1(eps) / c
    total = 0.0
    steps = 0
    for i in range(ms.shape[0]):
        m = ms[i]
        s, allow, out, st = pair_excess(m, pj, pjc, pi, pic, e, r * m, tol, n11_block, -1.0)
        steps += st
        g = (gc * (1.0 + e) / m) * (s + allow) * (1.0 + 8.0 * (st + 16) * UNIT_ROUNDOFF) \
            + a1 * out
        total += weights[i] * min(g, 1.0)
    total *= 1.0 + 8.0 * (ms.shape[0] + 16) * UNIT_ROUNDOFF
    return min(1.0, total + outside_m + (steps + 1) * DBL_MIN)


@njit(cache=True)
def m_blocks(n, gamma, gammac, width, tol):
    """Blocks of M' = 1 + C, C ~ Bin(n-1, gamma), over a window of C, aligned at multiples of
    width: returns (smallest M' of each block, Pr[M' in block] rounded up, outside mass of the
    window). Rounding up covers the block sum, the weights' log-pmf anchors (pmf_rel_err) and
    8 ulps per recurrence step since the last anchor."""
    big_n = n - 1
    lo, hi, outside = binom_window(big_n, gamma, gammac, tol)
    # blocks start at multiples of width whatever the window, so a wider window (smaller tol)
    # only adds blocks: the bound is then non-increasing as tol shrinks
    lo = (lo // width) * width
    nb = (hi - lo) // width + 1
    ms = np.empty(nb, dtype=np.int64)
    ws = np.zeros(nb)
    c = lo
    w, rel_w = pmf_anchor(c, big_n, gamma, gammac)
    since = 0
    for i in range(nb):
        ms[i] = c + 1
        top = min(hi, c + width - 1)
        acc = 0.0
        rel_b = 0.0
        while c <= top:
            acc += w
            rel_b = max(rel_b, rel_w + 8.0 * (since + 1) * UNIT_ROUNDOFF)
            if c < big_n:
                w *= (big_n - c) / (c + 1.0) * (gamma / gammac)
                since += 1
                if w < TINY:
                    w, rel_w = pmf_anchor(c + 1, big_n, gamma, gammac)
                    since = 0
            c += 1
        ws[i] = acc * (1.0 + 4.0 * (width + 4) * UNIT_ROUNDOFF) * (1.0 + rel_b)
    return ms, ws, outside


@njit(cache=True)
def split_attack_delta(n, pj, pjc, one_minus_ro, ro, c, eps0, eps, tol):
    """Exact delta(eps), rounded down (windows' mass dropped), of the attack
    (x1, x3, ..., x3) vs (x1', x3, ..., x3) seen through a post-processing that keeps, of each
    report, only its class: "supports x1 but neither x1' nor x3", the same with x1 and x1'
    exchanged, or "other" (docs/theory.md §2.6(c)).

    Under R_x3 each of the first two classes has probability pj/2 (pj = 2 B t3). With J their
    count and V the first class's count (V | J ~ Bin(J, 1/2)), the density-ratio sum of the
    view is c (1+E) (V - theta_J), theta_J = (aj J + r ro n)/(1+E), aj = E + r (1 - ro),
    r = (E-1)/c, c = e^eps0 - 1, ro = the likelihood ratio of the "other" class (the same
    under both datasets). One binomial window in J, the V tail in closed form.
    """
    if eps >= eps0 or not c < math.inf:
        return 0.0
    e = math.exp(eps)
    r = math.expm1(eps) / c
    aj = e + r * one_minus_ro
    # n11_block and aj typed as in pair_upper_delta's call: one specialization serves both
    s, allow, _, st = pair_excess(n, pj, pjc, 0.0, 1.0, e, r * ro * n, tol, np.int64(1), aj)
    v = (s - allow) * (1.0 - 8.0 * (st + 16) * UNIT_ROUNDOFF)  # allow includes pmf errors
    return max(0.0, v * (c * (1.0 + e) / n) * (1.0 - 8.0 * UNIT_ROUNDOFF))
