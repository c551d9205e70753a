"""Hockey-stick divergence of the generic clone pair (SPEC S2.1).

C ~ Bin(n-1, q), A | C ~ Bin(C, 1/2), Delta ~ Bern(p); P = (A+Delta, C-A+1-Delta), Q the swap.
H(P||Q) = sum_c w_c [al T_c(t_c - 1) + be T_c(t_c)] with al = p - E(1-p), be = (1-p) - E p,
t_c = floor(theta (c+1)) + 1, theta = -be/(al - be). The sum walks c downward from the top of a
window whose outside mass is bounded and added; tails follow by O(1) recurrences, so one
evaluation costs O(window) = O(sqrt(n q log(1/tol))).
"""
import math

import numpy as np
from numba import njit

from .binomial import (TINY, UNIT_ROUNDOFF, binom_logpmf, binom_window, clone_tail_h,
                       tail_dec_c, tail_direct, tail_move_t)

ANCHOR_EVERY = 4096
DBL_MIN = 2.2250738585072014e-308
CHERNOFF_EXP = 700.0  # c's whose tails are below e^-700 are skipped, their mass added


@njit(cache=True)
def _kl_half(x):
    """KL(Bern(x) || Bern(1/2)) in nats, for x in [1/2, 1]."""
    if x >= 1.0:
        return math.log(2.0)
    return x * math.log(2.0 * x) + (1.0 - x) * math.log(2.0 * (1.0 - x))


@njit(cache=True)
def _chernoff_exponent(c, theta):
    """c KL(theta - 2/c || 1/2): Pr[Bin(c,1/2) >= t_c - 2] <= exp(-this) (Chernoff)."""
    x = theta - 2.0 / c
    if x <= 0.5:
        return 0.0
    return c * _kl_half(x)


@njit(cache=True)
def negligible_from(lo, hi, theta):
    """Smallest c in [lo, hi] from which every c' >= c has tail mass <= e^-700 at its threshold.

    The exponent grows with c once theta - 2/c > 1/2, so a bisection on it is exact. Returns
    hi + 1 when no c qualifies.
    """
    if hi < 1 or _chernoff_exponent(hi, theta) < CHERNOFF_EXP:
        return hi + 1
    a = max(lo, int(2.0 / (theta - 0.5)) + 1)
    if a >= hi or _chernoff_exponent(a, theta) >= CHERNOFF_EXP:
        return max(a, lo) if a < hi else hi
    b = hi  # exponent(a) < 700 <= exponent(b)
    while b - a > 1:
        mid = (a + b) // 2
        if _chernoff_exponent(mid, theta) >= CHERNOFF_EXP:
            b = mid
        else:
            a = mid
    return b


@njit(cache=True)
def clone_threshold(c, theta):
    """Smallest a with P_c(a) > E Q_c(a): floor(theta (c+1)) + 1, clipped to [1, c+1]."""
    t = int(math.floor(theta * (c + 1.0))) + 1
    if t > c + 1:
        t = c + 1
    if t < 1:
        t = 1
    return t


@njit(cache=True)
def pair_coefficients(p, eps):
    """(al, be, theta) = (p - E(1-p), (1-p) - E p, -be/(al-be)) rounded up; al <= 0 means H = 0."""
    e = math.exp(eps)
    # Raise both coefficients by their rounding-error bound: H is increasing in each, so
    # the cancellation in p - e(1-p) near eps = log(p/(1-p)) can never make H optimistic.
    al = p - e * (1.0 - p) + 4.0 * UNIT_ROUNDOFF * (e * (1.0 - p) + p)
    be = (1.0 - p) - e * p + 4.0 * UNIT_ROUNDOFF * (e * p + (1.0 - p))
    if not (al > 0.0):
        return al, be, 1.0
    return al, be, -be / (al - be)


@njit(cache=True)
def clone_delta(n, q, p, eps, tol):
    """delta(eps) = H_{e^eps}(P||Q) of the S2.1 pair, an upper bound within +tol (outside mass).

    The result is inflated by the accumulated rounding bound 4 * steps * u and by DBL_MIN per
    term (mass that could underflow), so it is never below the exact value.
    """
    al, be, theta = pair_coefficients(p, eps)
    if al <= 0.0:
        return 0.0
    big_n = n - 1
    lo, hi, outside = binom_window(big_n, q, 1.0 - q, tol)
    skip = negligible_from(lo, hi, theta)
    if skip <= hi:  # every H_c for c >= skip is at most e^-700; their weights sum to <= 1
        hi = max(lo, skip - 1)
        outside += math.exp(-CHERNOFF_EXP)
    ratio_down = (1.0 - q) / q if q > 0.0 else 0.0
    c = hi
    w = math.exp(binom_logpmf(c, big_n, q, 1.0 - q))
    t = clone_threshold(c, theta)
    u, pm1 = tail_direct(c, t)
    total = 0.0
    steps = 0
    while True:
        total += w * clone_tail_h(c, t, u, pm1, al, be)
        if c <= lo:
            break
        # weight w_{c-1} = w_c * c / (N - c + 1) * (1-q)/q
        w *= c / (big_n - c + 1.0) * ratio_down
        if w < TINY:
            w = math.exp(binom_logpmf(c - 1, big_n, q, 1.0 - q))
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
    total *= 1.0 + 8.0 * (steps + 16) * UNIT_ROUNDOFF
    return min(1.0, total + outside + (steps + 1) * DBL_MIN)


@njit(cache=True)
def clone_delta_many(n, q, p, eps, tol):
    """clone_delta at every entry of the array eps."""
    out = np.empty(eps.shape[0])
    for i in range(eps.shape[0]):
        out[i] = clone_delta(n, q, p, eps[i], tol)
    return out
