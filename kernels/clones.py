"""Hockey-stick divergence of the generic clone pair (FMT21 Thm 3.2; docs/theory.md).

C ~ Bin(n-1, q), A | C ~ Bin(C, 1/2), Delta ~ Bern(p); P = (A+Delta, C-A+1-Delta), Q the swap.
H(P||Q) = sum_c w_c [al T_c(t_c - 1) + be T_c(t_c)] with al = p - E pc, be = pc - E p,
t_c = floor(theta (c+1)) + 1, theta = -be/(al - be). The sum walks c downward from the top of a
window whose outside mass is bounded and added; tails follow by O(1) recurrences, so one
evaluation costs O(window) = O(sqrt(n q log(1/tol))).

Complements are arguments, never formed by subtraction: qc = 1 - q and pc = 1 - p are passed
by the caller (for p = e^eps0/(e^eps0+1), pc = 1/(e^eps0+1)), so the pair's largest loss
log(p/pc) keeps its digits at large eps0.
"""
import math

import numpy as np

from .binomial import (
    TINY,
    binom_window,
    clone_tail_h,
    pmf_anchor,
    tail_dec_c,
    tail_direct,
    tail_move_t,
    tail_rel_err,
)
from .decorator import kernel
from .numerics import DBL_MIN, EXP_MAX, SUBNORMAL_ULP, UNIT_ROUNDOFF

__all__ = ["ANCHOR_EVERY", "tail_negligible", "negligible_from", "clone_threshold", "rr_split",
           "pair_coefficients", "clone_delta", "clone_delta_many"]


ANCHOR_EVERY = 4096
# c's whose tails are below e^-EXP_MAX (e^-700) are skipped, their mass added; e^eps is formed
# at min(eps, EXP_MAX): H is non-increasing in eps, so this only raises it


@kernel(inline="always")
def _kl_half(x, xc):
    """KL(Bern(x) || Bern(1/2)) in nats, for x in [1/2, 1], with xc = 1 - x given."""
    if xc <= 0.0:
        return math.log(2.0)
    return x * math.log(2.0 * x) + xc * math.log(2.0 * xc)


@kernel(inline="always")
def _chernoff_exponent(c, theta, theta_c):
    """c KL(theta - 2/c || 1/2): Pr[Bin(c,1/2) >= t_c - 2] <= exp(-this) (Chernoff).

    theta_c = 1 - theta (given, so theta near 1 keeps its digits)."""
    x = theta - 2.0 / c
    if x <= 0.5:
        return 0.0
    return c * _kl_half(x, theta_c + 2.0 / c)


@kernel
def tail_negligible(c, theta, theta_c):
    """Whether Pr[Bin(c, 1/2) >= t_c - 2] <= e^-700 at the threshold of theta (Chernoff), so
    that the pair's H at c is at most e^-700."""
    return c >= 1 and _chernoff_exponent(c, theta, theta_c) >= EXP_MAX


@kernel
def negligible_from(lo, hi, theta, theta_c):
    """Smallest c in [lo, hi] from which every c' >= c has tail mass <= e^-700 at its threshold.

    The exponent grows with c once theta - 2/c > 1/2, so a bisection on it is exact. Returns
    hi + 1 when no c qualifies.
    """
    if hi < 1 or _chernoff_exponent(hi, theta, theta_c) < EXP_MAX:
        return hi + 1
    a = max(lo, int(2.0 / (theta - 0.5)) + 1)
    if a >= hi or _chernoff_exponent(a, theta, theta_c) >= EXP_MAX:
        return max(a, lo) if a < hi else hi
    b = hi  # exponent(a) < 700 <= exponent(b)
    while b - a > 1:
        mid = (a + b) // 2
        if _chernoff_exponent(mid, theta, theta_c) >= EXP_MAX:
            b = mid
        else:
            a = mid
    return b


@kernel(inline="always")
def clone_threshold(c, theta):
    """Smallest a with P_c(a) > E Q_c(a): floor(theta (c+1)) + 1, clipped to [1, c+1]."""
    t = int(math.floor(theta * (c + 1.0))) + 1
    if t > c + 1:
        t = c + 1
    if t < 1:
        t = 1
    return t


@kernel
def rr_split(eps0):
    """(p, pc) = (e^eps0/(e^eps0+1), 1/(e^eps0+1)) from x = e^-eps0: no subtraction, no overflow."""
    x = math.exp(-eps0)
    return 1.0 / (1.0 + x), x / (1.0 + x)


@kernel(inline="always")
def pair_coefficients(p, pc, eps):
    """(al, be, theta, theta_c): al = p - E pc, be = pc - E p, both rounded up, and
    theta = -be/(al - be), theta_c = al/(al - be) = 1 - theta; al <= 0 means H = 0.

    pc = 1 - p is an argument (never formed by subtraction). H is increasing in al and be, so
    raising each by its rounding-error bound (and by E times the absolute rounding of a
    subnormal pc) never makes H optimistic; e^eps is formed at min(eps, 700), which can only
    raise H (it is non-increasing in eps).
    """
    e = math.exp(min(eps, EXP_MAX))
    ep, epc = e * p, e * pc
    al = p - epc + 4.0 * UNIT_ROUNDOFF * (epc + p) + e * SUBNORMAL_ULP
    be = pc - ep + 4.0 * UNIT_ROUNDOFF * (ep + pc) + SUBNORMAL_ULP
    if not (al > 0.0):
        return al, be, 1.0, 0.0
    d = al - be  # = (p - pc)(1 + E) up to the allowances
    if not (d > 0.0 and be < 0.0):  # every a has a positive part (p = pc, E = 1): threshold 0
        return al, be, 0.0, 1.0
    return al, be, min(-be / d, 1.0), min(al / d, 1.0)


@kernel
def clone_delta(n, q, qc, p, pc, eps, tol):
    """delta(eps) = H_{e^eps}(P||Q) of the clone pair, an upper bound within +tol (outside mass).

    qc = 1 - q and pc = 1 - p are given accurately by the caller. The result is inflated by the
    accumulated rounding bound 8 * steps * u, by the relative error bound of the weights'
    log-pmf anchors (pmf_rel_err: the log-pmf errs by a few ulps of its magnitude, e.g. 7e-14
    relative at |log w| = 330) and of the half-binomial tail anchors (tail_rel_err), and by
    DBL_MIN per term (mass that could underflow), so it is never below the exact value.
    """
    al, be, theta, theta_c = pair_coefficients(p, pc, eps)
    if al <= 0.0:
        return 0.0
    big_n = n - 1
    lo, hi, outside = binom_window(big_n, q, qc, tol)
    skip = negligible_from(lo, hi, theta, theta_c)
    if skip <= hi:  # every H_c for c >= skip is at most e^-700; their weights sum to <= 1
        hi = max(lo, skip - 1)
        outside += math.exp(-EXP_MAX)
    ratio_down = qc / q if q > 0.0 else 0.0
    c = hi
    w, rel_w = pmf_anchor(c, big_n, q, qc)
    mode = int(math.floor((big_n + 1.0) * q))  # the weight is re-anchored there: its error
    t = clone_threshold(c, theta)             # bound is smallest near the mean
    u, pm1 = tail_direct(c, t)
    total = 0.0
    allow = 0.0  # each term's share of its weight's anchor error
    steps = 0
    while True:
        term = w * clone_tail_h(c, t, u, pm1, al, be)
        total += term
        allow += term * rel_w
        if c <= lo:
            break
        # weight w_{c-1} = w_c * c / (N - c + 1) * (1-q)/q
        w *= c / (big_n - c + 1.0) * ratio_down
        if w < TINY or c - 1 == mode:
            w, rel_w = pmf_anchor(c - 1, big_n, q, qc)
        u, pm1 = tail_dec_c(c, t, u, pm1)
        c -= 1
        nt = clone_threshold(c, theta)
        steps += 1
        if steps % ANCHOR_EVERY == 0:
            t = nt
            u, pm1 = tail_direct(c, t)
        else:
            u, pm1 = tail_move_t(c, t, u, pm1, nt)
            t = nt
    total = (total + allow) * (1.0 + 8.0 * (steps + 16) * UNIT_ROUNDOFF) \
        * (1.0 + tail_rel_err(np.int64(0), hi, 0.5))
    return min(1.0, total + outside + (steps + 1) * DBL_MIN)


@kernel
def clone_delta_many(n, q, qc, p, pc, eps, tol):
    """clone_delta at every entry of the array eps."""
    out = np.empty(eps.shape[0])
    for i in range(eps.shape[0]):
        out[i] = clone_delta(n, q, qc, p, pc, eps[i], tol)
    return out
