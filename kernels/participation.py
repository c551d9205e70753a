"""Shuffle rounds with participation sampling (docs/theory.md §2.7): the decomposed pairs of
Poisson participation (each user reports with probability gamma) and fixed-size sampling (m of
the n users report), under add/remove and substitution (their exact attacks:
kernels/participation_attack.py).

Notation shared by every kernel (docs/theory.md §2.7). Once the left-over users are revealed,
the pair depends on a count N and on the law Bin(N, s) of the *other* clone-like users (clones,
or blanket draws) in the view, and on X_c = x0 + x1 c:

    Poisson:    N = N' (non-left-over others), X_c = N' + 1 - c (the silent others), wt = gamma;
    fixed size: N = m - 1,                     X_c = n - m (the users not sampled), wt = m / n.

With c clone-like reports in the view, the branch "user 1 reported" has mass wt pi(c - 1)
(pi the Bin(N, s) pmf) and the branch "user 1 silent" wtc pi_Q(c) = wt pi(c - 1) q X_c / c,
q the probability that a reporting other is clone-like (e^-eps0, or the blanket weight): the
odds of "silent" given c are rho_c = q X_c / c, non-increasing in c.

Upper sums add the mass outside their windows and are inflated by their rounding bounds; the
attack's sums drop it and are deflated. Probabilities arrive with their complements (never
formed here by subtraction).
"""
import math
from typing import NamedTuple

import numpy as np

from .decorator import kernel
from .binomial import (
    TINY,
    binom_logpmf,
    binom_window,
    clone_tail_h,
    pmf_anchor,
    tail_dec_c,
    tail_direct,
    tail_move_t,
    tail_rel_err,
)
from .bintail import first_above, pmf_step_down, sf_anchor
from .clones import (
    clone_threshold,
    pair_coefficients,
    tail_negligible,
)
from .numerics import DBL_MIN, EXP_MAX, UNIT_ROUNDOFF

__all__ = ["ANCHOR_STEPS", "pmf_step_up", "order_up", "diagonal_down", "move_down",
           "carried_state",
           "RemoveCloneLaw", "remove_clone_sums", "remove_clone_delta",
           "SubstCloneLaw", "subst_clone_sum", "subst_clone_delta",
           "RemoveBlanketLaw", "remove_blanket_sums", "remove_blanket_delta"]


ANCHOR_STEPS = 65536  # a tail state walked by recurrences is re-anchored after this many steps
_U = UNIT_ROUNDOFF


# ---------------------------------------------------------------------------------------------
# Tail states of Bin(c, a) walked by additions only (their relative error grows linearly)
# ---------------------------------------------------------------------------------------------

@kernel
def pmf_step_up(w, j, n, p, q, rel, since):
    """Bin(n, p) pmf at j -> at j + 1 by the ratio (n-j)/(j+1) p/q, re-anchored from the log-pmf
    when it underflows; returns (pmf, its anchor's relative error, steps since the anchor)."""
    w *= (n - j) / (j + 1.0) * (p / q)
    if w < TINY:
        w, rel = pmf_anchor(j + 1, n, p, q)
        return w, rel, 0
    return w, rel, since + 1


@kernel
def order_up(c, t, a, b, u, pk):
    """State (Pr[K >= t], Pr[K = t]) of K ~ Bin(c, a) -> the same for Bin(c + 1, a) at the same t:
    Pr_{c+1}[K >= t] = Pr_c[K >= t] + a Pr_c[K = t - 1] and Pr_{c+1}[K = t] = b Pr_c[K = t]
    (c + 1)/(c + 1 - t), with a Pr_c[K = t - 1] = Pr_c[K = t] t b/(c - t + 1): sums and products
    of positive terms only. Returns (u, pk, anchored)."""
    if t < 1 or t > c or pk < TINY:
        u, pk = sf_anchor(t, c + 1, a, b)
        return u, pk, True
    return min(1.0, u + pk * t * b / (c - t + 1.0)), b * pk * (c + 1.0) / (c + 1.0 - t), False


@kernel
def diagonal_down(c, t, a, b, u, pk):
    """State of K ~ Bin(c, a) at t -> state of Bin(c - 1, a) at t - 1:
    Pr_{c-1}[K >= t-1] = Pr_c[K >= t] + b Pr_{c-1}[K = t-1], Pr_{c-1}[K = t-1] = Pr_c[K = t] t/(c a)
    (additions and products only). Returns (u, pk, anchored)."""
    if t < 1 or t > c or pk < TINY:
        u, pk = sf_anchor(t - 1, c - 1, a, b)
        return u, pk, True
    step = pk * t / (c * a)
    return min(1.0, u + b * step), step, False


@kernel
def move_down(t, target, m, a, b, u, pk):
    """Move the state of Bin(m, a) from t down to target <= t by u += Pr[K = t - 1] (additions);
    re-anchors for an upward move, a long jump or an underflow. Returns (u, pk, steps), steps
    = -1 when it re-anchored (each step adds at most 4 ulps to the relative error)."""
    if target > t or t - target > 64 or pk < TINY or t > m or target < 0:
        u, pk = sf_anchor(target, m, a, b)
        return u, pk, -1
    steps = 0
    while t > target:
        pk = pk * t * b / ((m - t + 1.0) * a)
        u = min(1.0, u + pk)
        t -= 1
        steps += 1
        if pk < TINY:
            u, pk = sf_anchor(target, m, a, b)
            return u, pk, -1
    return u, pk, steps


@kernel
def carried_state(t, nt, c, a, b, u, pk, rel, walked, up):
    """The tail state of K ~ Bin(c, a) at nt, carried from the previous count's state at t:
    ``up`` (previous count c - 1, same t: order_up) or down (previous count c + 1: diagonal_down
    to t - 1), then move_down to nt -- additions of positive terms only. Anchored at the first
    use (t < 0), every ANCHOR_STEPS steps and wherever a step re-anchors. ``rel`` bounds the
    state's relative error (the anchor's tail_rel_err, then 4 ulps per recurrence step).
    Returns (u, pk, rel, walked)."""
    if t < 0 or walked >= ANCHOR_STEPS:
        u, pk = sf_anchor(nt, c, a, b)
        return u, pk, tail_rel_err(nt, c, a) + 8.0 * _U, 1
    if up:
        t_from = t
        u, pk, fresh = order_up(c - 1, t, a, b, u, pk)
    else:
        t_from = t - 1
        u, pk, fresh = diagonal_down(c + 1, t, a, b, u, pk)
    if fresh:
        rel, walked = tail_rel_err(t_from, c, a), 0
    u, pk, moved = move_down(t_from, nt, c, a, b, u, pk)
    if moved < 0:
        rel, walked = tail_rel_err(nt, c, a), 0
    else:
        rel += 4.0 * moved * _U
    return u, pk, rel + 8.0 * _U, walked + 1


@kernel
def _state_excess(theta, t, m, a, b, u, pk, rel):
    """(E[(K - theta)_+], allowance) for K ~ Bin(m, a) from the state at t = first_above(theta):
    (m a - theta) U + t b P (see ``excess`` in kernels/bintail.py), its rounding, and the state's
    relative error rel (anchor and walk) on both of its terms."""
    if t > m:
        return 0.0, 0.0
    lead = (m * a - theta) * u
    tail = t * b * pk
    v = lead + tail
    err = 8.0 * _U * (abs(lead) + tail + abs(theta) * u + m * a * u) + rel * (abs(lead) + tail)
    return max(v, 0.0), err


# ---------------------------------------------------------------------------------------------
# Any eps0-LDP randomizer, add/remove: P(c) = wt pi(c-1) (1 + wtc L_c), Q(c) = wt pi(c-1) L_c
# ---------------------------------------------------------------------------------------------

class RemoveCloneLaw(NamedTuple):
    """The add/remove clone pair's scalars (build with records.record): the others' clone-like
    count Bin(N, s) (sc = 1 - s), X_c = x0 + x1 c (x0 per block of N, an argument), the weights
    wt, wtc = 1 - wt of "user 1 reported", q = e^-eps0 and q0_power (0 Poisson, 1 fixed size)."""

    x1: float
    s: float
    sc: float
    wt: float
    wtc: float
    q: float
    q0_power: int


@kernel
def remove_clone_sums(big_n, x0, law, e, em1, tol):
    """(H(P||Q), H(Q||P), terms) of the add/remove pair of one count N (docs/theory.md §2.7(a);
    ``law`` a RemoveCloneLaw): with L_c = q X_c / (wtc c),
    P(c) - E Q(c) = wt pi(c-1) (1 - (E - wtc) L_c) and
    Q(c) - E P(c) = wt pi(c-1) (L_c (1 - E wtc) - E); the c = 0 outcome adds
    (1 - E wtc)_+ Q(0), Q(0) = sc^(N + q0_power) (q0_power: 0 Poisson, 1 fixed size).

    Every term is summed with its rounding allowance (rounded up). Outside the window of c - 1:
    (P - E Q)_+ <= wt pi(c - 1) (the silent branch alone gives P - E Q < 0), so H(P||Q) gains
    wt x outside; (Q - E P)_+ <= (1 - E wtc) Q(c), and the Q mass with c - 1 outside the window
    [lo, hi] is at most outside + pi(lo)."""
    x1, s, sc, wt, wtc, q = law.x1, law.s, law.sc, law.wt, law.wtc, law.q
    lo, hi, out = binom_window(big_n, s, sc, tol)
    a_pq = em1 + wt            # E - wtc
    b_qp = wt * e - em1        # 1 - E wtc
    b_err = 4.0 * _U * (wt * e + abs(em1))
    mode = min(big_n, int(math.floor((big_n + 1.0) * s)))
    w, rel_w = pmf_anchor(lo, big_n, s, sc)
    since = 0
    pi_lo = w
    h1 = 0.0
    h2 = 0.0
    j = lo
    while True:
        c = j + 1.0
        lam = q * (x0 + x1 * c) / (wtc * c)
        rel = rel_w + 8.0 * (since + 2) * _U
        v1 = 1.0 - a_pq * lam
        e1 = 8.0 * _U * (1.0 + a_pq * lam)
        if v1 + e1 > 0.0:
            h1 += w * (max(v1, 0.0) + e1) * (1.0 + rel)
        if b_qp + b_err > 0.0:
            v2 = lam * b_qp - e
            e2 = 8.0 * _U * (lam * (wt * e + abs(em1)) + e) + lam * b_err
            if v2 + e2 > 0.0:
                h2 += w * (max(v2, 0.0) + e2) * (1.0 + rel)
        if j >= hi:
            break
        w, rel_w, since = pmf_step_up(w, j, big_n, s, sc, rel_w, since)
        j += 1
        if j == mode:
            w, rel_w = pmf_anchor(j, big_n, s, sc)
            since = 0
    h1 = h1 * wt + wt * out
    if b_qp + b_err > 0.0:
        bq = max(b_qp, 0.0) + b_err
        if lo == 0:
            h2 = h2 * wt + bq * (pi_lo * (1.0 + pmf_anchor(0, big_n, s, sc)[1])
                                 * sc ** law.q0_power) * (1.0 + 4.0 * _U) + bq * out
        else:
            h2 = h2 * wt + bq * (out + pi_lo * (1.0 + 8.0 * _U))
    else:
        h2 = 0.0
    return h1, h2, hi - lo + 2


@kernel
def remove_clone_delta(ns, ws, x0s, law, eps, tol, outside):
    """delta(eps) <= max(sum_i w_i H_i(P||Q), sum_i w_i H_i(Q||P)) + outside over the blocks
    i of N (smallest member ns[i], mass ws[i], x0s[i]; H is non-increasing in N,
    docs/theory.md §2.7), ``law`` a RemoveCloneLaw; e^eps is formed at min(eps, 700), which
    only raises delta."""
    ec = min(eps, EXP_MAX)
    e = math.exp(ec)
    em1 = math.expm1(ec)
    t1 = 0.0
    t2 = 0.0
    steps = 0
    for i in range(ns.shape[0]):
        h1, h2, st = remove_clone_sums(ns[i], x0s[i], law, e, em1, tol)
        t1 += ws[i] * min(h1, 1.0)
        t2 += ws[i] * min(h2, 1.0)
        steps += st
    total = max(t1, t2) * (1.0 + 8.0 * (ns.shape[0] + 16) * _U)
    return min(1.0, total + outside + (steps + 1) * DBL_MIN)


# ---------------------------------------------------------------------------------------------
# Any eps0-LDP randomizer, substitution: clone pairs with count-dependent splits
# ---------------------------------------------------------------------------------------------

class SubstCloneLaw(NamedTuple):
    """The substitution clone pair's scalars (build with records.record): x1, s, sc, wt and q as
    in RemoveCloneLaw, and user 1's randomized-response split p = e^eps0/(e^eps0 + 1), pc = 1 - p."""

    x1: float
    s: float
    sc: float
    wt: float
    q: float
    p: float
    pc: float


@kernel
def subst_clone_sum(big_n, x0, law, eps, tol):
    """sum_c wt pi(c-1) (1 + rho_c) H(clone pair(c - 1, p_c)) for one count N (``law`` a
    SubstCloneLaw), rho_c = q X_c / c, p_c = (p + rho_c/2)/(1 + rho_c) (docs/theory.md §2.7(b)),
    plus wt x the mass outside the
    window of c - 1 (a branch "user 1 reported" carries at most its mass; the silent branch
    alone has P = Q). c runs downward: rho_c grows, so once p_c is private at eps every smaller
    c is too. Returns (sum, terms)."""
    x1, s, sc, wt, q, p, pc = law.x1, law.s, law.sc, law.wt, law.q, law.p, law.pc
    lo, hi, out = binom_window(big_n, s, sc, tol)
    j = hi
    w, rel_w = pmf_anchor(j, big_n, s, sc)
    since = 0
    mode = min(big_n, int(math.floor((big_n + 1.0) * s)))
    t = np.int64(-1)  # typed: the tail kernels compile once, for int64
    u = 0.0
    pm1 = 0.0
    total = 0.0
    allow = 0.0
    steps = 0
    skipped = False
    while j >= lo:
        c = j + 1.0
        rho = q * (x0 + x1 * c) / c
        al, be, theta, theta_c = pair_coefficients((p + 0.5 * rho) / (1.0 + rho),
                                                   (pc + 0.5 * rho) / (1.0 + rho), eps)
        if al <= 0.0:
            break
        if tail_negligible(j, theta, theta_c):
            # H at c is at most e^-700 (Chernoff) and the masses sum to at most 1: one e^-700
            # for all of them, and no tail state deep in the underflow
            skipped = True
            t = np.int64(-1)
        else:
            nt = clone_threshold(j, theta)
            if t < 0 or steps % ANCHOR_STEPS == 0:
                u, pm1 = tail_direct(j, nt)
            else:
                u, pm1 = tail_dec_c(j + 1, t, u, pm1)
                u, pm1 = tail_move_t(j, t, u, pm1, nt)
            t = nt
            term = wt * w * (1.0 + rho) * clone_tail_h(j, t, u, pm1, al, be)
            total += term
            allow += term * (rel_w + 8.0 * (since + 4) * _U)
        steps += 1
        if j <= 0:
            break
        w, rel_w, since = pmf_step_down(w, j, big_n, s, sc, rel_w, since)
        j -= 1
        if j == mode:
            w, rel_w = pmf_anchor(j, big_n, s, sc)
            since = 0
    total = (total + allow) * (1.0 + 8.0 * (steps + 16) * _U) \
        * (1.0 + tail_rel_err(np.int64(0), max(hi, 1), 0.5))
    if skipped:
        total += math.exp(-EXP_MAX)
    return total + wt * out, steps


@kernel
def subst_clone_delta(ns, ws, x0s, law, eps, tol, outside):
    """delta(eps) <= sum_i w_i subst_clone_sum(ns[i]) + outside (blocks of N, as in
    remove_clone_delta; ``law`` a SubstCloneLaw; the pair is symmetric, one direction
    suffices)."""
    total = 0.0
    steps = 0
    for i in range(ns.shape[0]):
        h, st = subst_clone_sum(ns[i], x0s[i], law, eps, tol)
        total += ws[i] * min(h, 1.0)
        steps += st
    total *= 1.0 + 8.0 * (ns.shape[0] + 16) * _U
    return min(1.0, total + outside + (steps + 1) * DBL_MIN)


# ---------------------------------------------------------------------------------------------
# Binary-support oracles (blanket), add/remove: only K1 (draws supporting x1) matters
# ---------------------------------------------------------------------------------------------

class RemoveBlanketLaw(NamedTuple):
    """The blanket add/remove pair's scalars (build with records.record): x1, s, sc, wt, wtc and
    q0_power as in RemoveCloneLaw; a = Pr_w[a draw supports x1], ac = 1 - a, gce = g (e^eps0 - 1)
    (g the blanket weight) and ce = e^eps0 - 1."""

    x1: float
    s: float
    sc: float
    wt: float
    wtc: float
    a: float
    ac: float
    gce: float
    ce: float
    q0_power: int


@kernel
def remove_blanket_sums(big_n, x0, law, e, em1, tol):
    """(H(P||Q), H(Q||P), terms) of the blanket add/remove pair of one count N
    (docs/theory.md §2.7(c); ``law`` a RemoveBlanketLaw): c blanket draws from w, K1 ~ Bin(c, a) of them support x1,

        H(P||Q) = sum_c wt pi(c-1) (g ce / c) E[(K1 - theta_c)_+],
        theta_c = (kappa X_c - c)/ce, kappa = (E - 1 + wt)/wtc,
        H(Q||P) = sum_c E wt pi(c-1) (g ce / c) E[(theta'_c - K1)_+] + (1 - E wtc)_+ Q(0),
        theta'_c = (X_c (1 - E wtc)/(E wtc) - c)/ce,

    gce = g ce = g (e^eps0 - 1). The first sum walks c upward (theta falls: the tail state of K1
    only grows), the second downward on K1' = c - K1 ~ Bin(c, ac) (its threshold falls by more
    than one per step): both by additions only. Thresholds are rounded toward the larger sum.
    Outside the window: H(P||Q) gains wt x outside, H(Q||P) (1 - E wtc)(outside + pi(lo))."""
    x1, s, sc, wt, wtc = law.x1, law.s, law.sc, law.wt, law.wtc
    a, ac, gce, ce = law.a, law.ac, law.gce, law.ce
    lo, hi, out = binom_window(big_n, s, sc, tol)
    kappa = (em1 + wt) / wtc * (1.0 - 4.0 * _U)
    b_qp = wt * e - em1        # 1 - E wtc
    b_err = 4.0 * _U * (wt * e + abs(em1))
    terms = 0
    # -- H(P||Q): c upward -------------------------------------------------------------------
    h1 = 0.0
    j = lo
    w, rel_w = pmf_anchor(j, big_n, s, sc)
    since = 0
    t = np.int64(-1)
    u = 0.0
    pk = 0.0
    rel = 0.0
    walked = 0
    while True:
        c = j + 1
        xc = x0 + x1 * c
        theta = (kappa * xc - c) / ce
        theta -= 8.0 * _U * (abs(kappa * xc) + c) / ce + 4.0 * _U * abs(theta)
        nt = first_above(theta, c)
        if nt <= c:
            u, pk, rel, walked = carried_state(t, nt, c, a, ac, u, pk, rel, walked, True)
            t = nt
            v, err = _state_excess(theta, t, c, a, ac, u, pk, rel)
            h1 += w * (1.0 + rel_w + 8.0 * (since + 2) * _U) * (gce / c) * (v + err)
        else:
            t = np.int64(-1)
        terms += 1
        if j >= hi:
            break
        w, rel_w, since = pmf_step_up(w, j, big_n, s, sc, rel_w, since)
        j += 1
    h1 = h1 * wt + wt * out
    # -- H(Q||P): c downward on K1' = c - K1 -----------------------------------------------
    h2 = 0.0
    if b_qp + b_err > 0.0 and e * wtc < 1.0 + 8.0 * _U:
        kq = (max(b_qp, 0.0) + b_err) / (e * wtc) * (1.0 + 8.0 * _U)
        j = hi
        w, rel_w = pmf_anchor(j, big_n, s, sc)
        since = 0
        t = np.int64(-1)
        walked = 0
        while True:
            c = j + 1
            xc = x0 + x1 * c
            th1 = (xc * kq - c) / ce
            th1 += 8.0 * _U * (xc * kq + c) / ce + 4.0 * _U * abs(th1)
            th2 = c - th1  # E[(th1 - K1)_+] = E[(K1' - th2)_+]
            th2 -= 4.0 * _U * (c + abs(th1))
            nt = first_above(th2, c)
            if nt <= c:
                u, pk, rel, walked = carried_state(t, nt, c, ac, a, u, pk, rel, walked, False)
                t = nt
                v, err = _state_excess(th2, t, c, ac, a, u, pk, rel)
                h2 += w * (1.0 + rel_w + 8.0 * (since + 2) * _U) * (gce / c) * (v + err)
            else:
                t = np.int64(-1)
            terms += 1
            if j <= lo or j <= 0:
                break
            w, rel_w, since = pmf_step_down(w, j, big_n, s, sc, rel_w, since)
            j -= 1
        h2 *= e * wt * (1.0 + 4.0 * _U)
        bq = max(b_qp, 0.0) + b_err
        if lo == 0:
            q0 = math.exp(binom_logpmf(0, big_n, s, sc)) * sc ** law.q0_power
            h2 += bq * q0 * (1.0 + 1e-12) + bq * out
        else:
            h2 += bq * (out + math.exp(binom_logpmf(lo, big_n, s, sc)) * (1.0 + 1e-12))
    return h1, h2, terms


@kernel
def remove_blanket_delta(ns, ws, x0s, law, eps, tol, outside):
    """delta(eps) <= max over the directions of sum_i w_i H_i + outside (blocks of N, as in
    remove_clone_delta; ``law`` a RemoveBlanketLaw)."""
    ec = min(eps, EXP_MAX)
    e = math.exp(ec)
    em1 = math.expm1(ec)
    t1 = 0.0
    t2 = 0.0
    steps = 0
    for i in range(ns.shape[0]):
        h1, h2, st = remove_blanket_sums(ns[i], x0s[i], law, e, em1, tol)
        t1 += ws[i] * min(h1, 1.0)
        t2 += ws[i] * min(h2, 1.0)
        steps += st
    total = max(t1, t2) * (1.0 + 8.0 * (steps + 16) * _U)
    return min(1.0, total + outside + (steps + 1) * DBL_MIN)
