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

Correlated laws (subset selection) sum over (J, N11) in pair_group_excess: exact pieces of
N11 (f is linear between integers of theta), one N11 law shared by a run of J (that of its
largest J, the least private), a Chernoff bound where it is already below the windows'
tolerance; the tail state carries absolute error bounds (half_step).
"""
import math

import numpy as np
from numba import njit

from .binomial import (
    TINY,
    UNIT_ROUNDOFF,
    _lower_tail_bound,
    _upper_tail_bound,
    binom_logpmf,
    binom_window,
    pmf_anchor,
    tail_rel_err,
)

__all__ = ["DBL_MIN", "MAX_JUMP", "HALF_REL_MAX", "HALF_REL_MOVE", "PK_REL_MAX", "J_BLOCK_MAX",
           "TAIL_ZONES", "bin_sf", "sf_anchor", "sf_move", "first_above", "excess",
           "indep_excess", "indep_upper_delta", "half_dec_order", "attack_excess", "tight_window",
           "half_anchor", "half_refresh", "half_step", "half_order_down", "half_excess",
           "n11_table", "group_sums", "half_tail_below", "j_grid", "j_groups",
           "pair_group_excess", "pair_log_mgf", "pair_chernoff_at", "pair_chernoff_log",
           "pair_upper_delta", "m_blocks", "split_attack_delta", "pmf_step_down"]


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
    of block i (g is non-increasing in m, docs/theory.md §2.5). The K2 mass outside its
    window adds at most a1 times that mass ((.)_+ <= c K1, K1 independent of K2, and
    gamma c a = a1 - gamma a <= a1). c = e^eps0 - 1 is passed exactly (gc = gamma c); E and
    r = (E-1)/c are rounded down (the sum decreases in both, so this only raises the bound).
    """
    if eps >= eps0:
        return 0.0
    e = math.exp(eps) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    r = math.expm1(eps) * (1.0 - 4.0 * UNIT_ROUNDOFF) / c * (1.0 - 4.0 * UNIT_ROUNDOFF)
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
def pmf_step_down(w, j, m, p, q, rel, since):
    """Bin(m, p) pmf at j -> at j - 1 by the ratio j/(m-j+1) q/p, re-anchored from the log-pmf
    when it underflows; returns (pmf, its anchor's relative error, steps since the anchor)."""
    w *= (j / (m - j + 1.0)) * (q / p)
    if w < TINY:
        w, rel = pmf_anchor(j - 1, m, p, q)
        return w, rel, 0
    return w, rel, since + 1


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
def attack_excess(m, pj, pjc, e, aj, shift, tol):
    """sum over J of Pr[J] E[(V - theta_J)_+] for J ~ Bin(m, pj), V | J ~ Bin(J, 1/2) and
    theta_J = (aj J + shift)/(1+E), over a window of J (the attack's view, see
    split_attack_delta). J runs downward and the tail state of V is carried from J to J - 1.

    Returns (sum, allowance, outside mass, terms).
    """
    jlo, jhi, outside = binom_window(m, pj, pjc, tol)
    total = 0.0
    allow = 0.0
    steps = 0
    j = jhi
    wj, rel_j = pmf_anchor(j, m, pj, pjc)
    since_j = 0
    t = np.int64(-1)  # typed, not the literal -1: callees compile once, for int64
    u = 0.0
    pk = 0.0
    while j >= jlo:
        theta = (aj * j + shift) / (1.0 + e)
        nt = first_above(theta, j)
        if nt <= j:
            if t < 0 or t > j + 1:
                u, pk = sf_anchor(nt, j, 0.5, 0.5)
            else:  # the state at order j + 1, moved to order j, then to the new threshold
                u, pk = half_dec_order(j + 1, t, u, pk)
                u, pk = sf_move(t, nt, j, 0.5, 0.5, u, pk)
            t = nt
            v, err = excess(theta, t, j, 0.5, 0.5, u, pk)
            total += wj * v
            rel = (1.0 + rel_j + 8.0 * (since_j + 1) * UNIT_ROUNDOFF) \
                * (1.0 + 8.0 * UNIT_ROUNDOFF) - 1.0
            allow += wj * (err + v * rel)
        else:
            t = np.int64(-1)
        steps += 1
        if j <= 0:
            break
        wj, rel_j, since_j = pmf_step_down(wj, j, m, pj, pjc, rel_j, since_j)
        j -= 1
    return total, allow, outside, steps + 1


# ---------------------------------------------------------------------------------------------
# Correlated (b1, b2) laws (subset selection): exact pieces in N11, shared N11 laws in J.
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def tight_window(n, p, q, tol):
    """binom_window narrowed to the smallest window whose geometric tail bounds (the same
    proven bounds) still sum to at most tol: binom_window starts 2 standard deviations wider
    than a Gaussian tail needs, and these windows multiply (J by N11 pieces, for every M')."""
    lo, hi, outside = binom_window(n, p, q, tol)
    if n <= 0 or p == 0.0 or q == 0.0:
        return lo, hi, outside
    mode = min(n, int(math.floor((n + 1.0) * p)))
    if hi < n and hi > mode:
        a, b = mode, hi  # the bound at b is <= tol/2; find the smallest such point
        while b - a > 1:
            mid = (a + b) // 2
            if _upper_tail_bound(mid, n, p, q) <= 0.5 * tol:
                b = mid
            else:
                a = mid
        hi = b
    if lo > 0 and lo < mode:
        a, b = lo, mode
        while b - a > 1:
            mid = (a + b) // 2
            if _lower_tail_bound(mid, n, p, q) <= 0.5 * tol:
                a = mid
            else:
                b = mid
        lo = a
    up = _upper_tail_bound(hi, n, p, q) if hi < n else 0.0
    down = _lower_tail_bound(lo, n, p, q) if lo > 0 else 0.0
    return lo, hi, up + down


# A moved tail state of Bin(J, 1/2) is re-anchored once the tracked relative error of
# Pr[V >= t] exceeds HALF_REL_MAX (the state carried from J to J - 1) or HALF_REL_MOVE (a state
# moved within one J), or 8 times an anchor's own error bound if larger (tail_rel_err grows with
# J), and its pmf is recomputed beyond PK_REL_MAX (above pmf_rel_err at p = 1/2, at most
# 1.2e-11). Larger values are cheaper and only loosen the allowance.
HALF_REL_MAX = 1e-9
HALF_REL_MOVE = 1e-7
PK_REL_MAX = 5e-11
J_BLOCK_MAX = 4096  # widest block of J sharing one law of N11 (pair_group_excess)


@njit(cache=True)
def half_anchor(t, j):
    """(u, pk, eu, ep): u = Pr[V >= t], pk = Pr[V = t] for V ~ Bin(j, 1/2), with absolute error
    bounds eu, ep (tail_rel_err of a direct anchor)."""
    u, pk = sf_anchor(t, j, 0.5, 0.5)
    rel = tail_rel_err(t, j, 0.5)
    return u, pk, rel * u, rel * pk


@njit(cache=True)
def half_refresh(t, j, u, pk, eu, ep, rel_max):
    """Recompute pk from its log-pmf once its tracked error exceeds PK_REL_MAX (otherwise the
    error of u, fed by pk's, would grow quadratically in the steps); re-anchor the whole state
    once eu exceeds rel_max u, or on an underflow."""
    if u <= 0.0 or eu > rel_max * u or pk < TINY:
        return half_anchor(t, j)
    if ep > PK_REL_MAX * pk:
        pk, rel = pmf_anchor(t, j, 0.5, 0.5)
        ep = rel * pk
    return u, pk, eu, ep


@njit(cache=True)
def half_step(t, target, j, u, pk, eu, ep, rel_max):
    """Move the state (u, pk) of Bin(j, 1/2) from t to target, carrying absolute error bounds:
    downward u <- u + pk(t-1), upward u <- u - pk(t) (the absolute errors add, so no
    cancellation test is needed: half_refresh re-anchors once the relative error of u exceeds
    rel_max; a long jump or an edge re-anchors at once)."""
    ur = UNIT_ROUNDOFF
    if abs(target - t) > MAX_JUMP or pk < TINY or target < 0 or target > j or t < 0 or t > j:
        return half_anchor(target, j)
    while t > target:
        ratio = t / (j - t + 1.0)
        ep = (ep + 3.0 * ur * pk) * ratio
        pk = pk * ratio
        u = u + pk
        eu = eu + ep + ur * u
        t -= 1
    while t < target:
        ratio = (j - t) / (t + 1.0)
        u = u - pk
        eu = eu + ep + ur * abs(u)
        ep = (ep + 3.0 * ur * pk) * ratio
        pk = pk * ratio
        t += 1
    return half_refresh(target, j, u, pk, eu, ep, rel_max)


@njit(cache=True)
def half_order_down(j, t, u, pk, eu, ep, rel_max):
    """The state at t of Bin(j, 1/2) -> the same for Bin(j - 1, 1/2) (see half_dec_order),
    carrying absolute error bounds (refreshed as in half_step)."""
    ur = UNIT_ROUNDOFF
    if t <= 0 or t >= j or pk < TINY:
        return half_anchor(t, j - 1)
    u = u - pk * t / j
    eu = eu + (ep + 3.0 * ur * pk) * t / j + ur * abs(u)
    ratio = 2.0 * (j - t) / j
    ep = (ep + 3.0 * ur * pk) * ratio
    pk = pk * ratio
    return half_refresh(t, j - 1, u, pk, eu, ep, rel_max)


@njit(cache=True)
def half_excess(theta, t, j, u, pk, eu, ep):
    """(E[(V - theta)_+], allowance) for V ~ Bin(j, 1/2) and theta in [t - 1, t], from the state
    at t: (j/2 - theta) u + (t/2) pk (see excess), linear in theta on that piece. The allowance
    carries the state's absolute errors and the rounding of the formula."""
    if t > j:
        return 0.0, 0.0
    d = 0.5 * j - theta
    lead = d * u
    tail = 0.5 * t * pk
    v = lead + tail
    err = abs(d) * eu + 0.5 * t * ep \
        + 4.0 * UNIT_ROUNDOFF * (abs(lead) + tail + (abs(theta) + 0.5 * j) * u)
    return max(v, 0.0), err


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def half_tail_below(t, j, log_bound):
    """Whether Pr[Bin(j, 1/2) >= t] < e^log_bound, by the geometric bound
    pmf(t) / (1 - rho), rho = (j - t)/(t + 1) (t above the median; else False)."""
    if t > j:
        return True
    if 2 * t <= j + 1:
        return False
    rho = (j - t) / (t + 1.0)
    return binom_logpmf(t, j, 0.5, 0.5) - math.log1p(-rho) < log_bound


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def pair_group_excess(m, pj, pjc, pi, pic, e, beta, shift, tol, j_frac, max_groups):
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
    (f_J < J e^-745 there); the caller adds both.
    """
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


@njit(cache=True)
def pair_log_mgf(lam, p11, p10, p00, e, r):
    """(log E[e^(lam X)], bound on its rounding error) for one draw's X = b1 - E b2 - r."""
    ur = UNIT_ROUNDOFF
    phi = p11 * math.exp(lam * (1.0 - e)) + p10 * math.exp(lam) + p10 * math.exp(-lam * e) + p00
    lp = math.log(phi) - lam * r
    return lp, 16.0 * ur * (2.0 + lam * (1.0 + e + r) + abs(lp))


@njit(cache=True)
def pair_chernoff_at(x, m, p11, p10, p00, e, r):
    """(m log E[e^(lam X)] - 1 - log lam at lam = e^x, the same rounded up)."""
    lp, err = pair_log_mgf(math.exp(x), p11, p10, p00, e, r)
    v = m * lp - 1.0 - x
    return v, v + m * err + 16.0 * UNIT_ROUNDOFF * (abs(v) + abs(x) + 2.0)


@njit(cache=True)
def pair_chernoff_log(m, p11, p10, p00, e, r):
    """log of an upper bound on E[(sum_{i<=m} X_i)_+], X = b1 - E b2 - r for m iid draws (the
    blanket sum over c, docs/theory.md §2.5): x_+ <= e^(lam x)/(e lam) for every lam > 0, so
    E[(S)_+] <= E[e^(lam S)]/(e lam) = exp(m log E[e^(lam X)] - 1 - log lam); lam by
    golden-section search on log lam (the exponent is convex in lam, so unimodal in log lam);
    every probe's value, rounded up, is a bound, and the smallest is returned."""
    a, b = math.log(1e-8), math.log(700.0 / (1.0 + e + r))
    g = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, up1 = pair_chernoff_at(x1, m, p11, p10, p00, e, r)
    f2, up2 = pair_chernoff_at(x2, m, p11, p10, p00, e, r)
    best = min(up1, up2)
    for _ in range(48):
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1, up = pair_chernoff_at(x1, m, p11, p10, p00, e, r)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2, up = pair_chernoff_at(x2, m, p11, p10, p00, e, r)
        best = min(best, up)
    return best


@njit(cache=True)
def pair_upper_delta(ms, weights, pj, pjc, pi, pic, gc, c, eps0, eps, tol, outside_m,
                     j_frac, max_groups):
    """Blanket upper bound for a symmetric correlated (b1, b2) law (subset selection; k-RR and
    OLH exactly): g(m) = (gamma c (1+E)/m) E[(V - theta)_+] (pair_group_excess), blocked in M'
    as in indep_upper_delta. The windows' outside mass adds gamma c times itself. E, E - 1 and
    r = (E-1)/c are rounded down: the sum decreases in each, so this only raises the bound.
    A block whose Chernoff bound (pair_chernoff_log) on g is below tol takes that bound
    instead of the sum (the windows already leave out up to tol): far above the answer, e.g.
    a solver's first probes, the sum costs nothing."""
    if eps >= eps0:
        return 0.0
    e = math.exp(eps) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    beta = math.expm1(eps) * (1.0 - 4.0 * UNIT_ROUNDOFF)
    r = beta / c * (1.0 - 4.0 * UNIT_ROUNDOFF)
    total = 0.0
    steps = 0
    p11, p10, p00 = pi * pjc, 0.5 * pj, pic * pjc
    for i in range(ms.shape[0]):
        m = ms[i]
        # where the Chernoff bound is already below tol, it stands for the whole sum
        lc = pair_chernoff_log(m, p11, p10, p00, e, r) + math.log(gc / m) + 1e-12
        if lc < math.log(tol):
            total += weights[i] * math.exp(lc)
            steps += 1
            continue
        s, allow, out, st, under = pair_group_excess(m, pj, pjc, pi, pic, e, beta, r * m, tol,
                                                     j_frac, max_groups)
        steps += st
        scale = gc * (1.0 + e) / m
        g = scale * (s + allow) * (1.0 + 8.0 * (st + 16) * UNIT_ROUNDOFF) + gc * out
        if under > 0.0:
            g += math.exp(math.log(scale * under) - 745.0)
        total += weights[i] * min(g, 1.0)
    total *= 1.0 + 8.0 * (ms.shape[0] + 16) * UNIT_ROUNDOFF
    return min(1.0, total + outside_m + (steps + 1) * DBL_MIN)


TAIL_ZONES = ((5.0, 16), (3.0, 4))  # (|z| beyond which, merge factor) for m_blocks' tails


@njit(cache=True)
def m_blocks(n, gamma, gammac, width, tol, merge_tails=False):
    """Blocks of M' = 1 + C, C ~ Bin(n-1, gamma), over a window of C, aligned at multiples of
    width: returns (smallest M' of each block, Pr[M' in block] rounded up, outside mass of the
    window). Rounding up covers the block sum, the weights' log-pmf anchors (pmf_rel_err) and
    8 ulps per recurrence step since the last anchor.

    merge_tails: a block lying wholly beyond 3 (5) standard deviations of C from its mean
    merges 4 (16) base blocks, aligned at multiples of its own width (TAIL_ZONES). Any block may
    carry g at its smallest M' (g is non-increasing in m, docs/theory.md §2.5); wide blocks only
    where Pr[block] is tiny keep the cost in tightness small and cut the blocks by about 3x."""
    big_n = n - 1
    lo, hi, outside = binom_window(big_n, gamma, gammac, tol)
    # blocks start at multiples of width whatever the window, so a wider window (smaller tol)
    # only adds blocks: the bound is then non-increasing as tol shrinks
    lo = (lo // width) * width
    nb_max = (hi - lo) // width + 1
    ms = np.empty(nb_max, dtype=np.int64)
    ws = np.zeros(nb_max)
    mean = big_n * gamma
    sd = math.sqrt(big_n * gamma * gammac)
    c = lo
    w, rel_w = pmf_anchor(c, big_n, gamma, gammac)
    since = 0
    nb = 0
    while c <= hi:
        size = width
        if merge_tails and sd > 0.0:
            for zone in range(len(TAIL_ZONES)):
                z_min, factor = TAIL_ZONES[zone]
                wide = width * factor
                end = c + wide - 1
                if c % wide == 0 and (c - mean >= z_min * sd or mean - end >= z_min * sd):
                    size = wide
                    break
        ms[nb] = c + 1
        top = min(hi, c + size - 1)
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
        ws[nb] = acc * (1.0 + 4.0 * (size + 4) * UNIT_ROUNDOFF) * (1.0 + rel_b)
        nb += 1
    return ms[:nb].copy(), ws[:nb].copy(), outside


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
    s, allow, _, st = attack_excess(n, pj, pjc, e, aj, r * ro * n, tol)
    v = (s - allow) * (1.0 - 8.0 * (st + 16) * UNIT_ROUNDOFF)  # allow includes pmf errors
    return max(0.0, v * (c * (1.0 + e) / n) * (1.0 - 8.0 * UNIT_ROUNDOFF))
