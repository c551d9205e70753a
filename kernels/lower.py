"""Exact lower bounds (SPEC S2.4): attacks whose delta(eps) every upper bound must exceed.

Here truncated mass is dropped and rounding is taken downward, so the values never exceed the
exact ones.
"""
import math

import numpy as np
from numba import njit

from .binomial import (TINY, UNIT_ROUNDOFF, binom_logpmf, binom_window, tail_direct,
                       tail_move_t)


@njit(cache=True)
def binary_rr_table(n, eps0, tol):
    """pmf of B ~ Bin(n-1, 1-p) on a window (mass outside dropped): returns (lo, pmf array)."""
    p = 1.0 / (1.0 + math.exp(-eps0))
    big_n = n - 1
    lo, hi, _ = binom_window(big_n, 1.0 - p, p, tol)
    b = np.empty(hi - lo + 1)
    for i in range(hi - lo + 1):
        b[i] = math.exp(binom_logpmf(lo + i, big_n, 1.0 - p, p))
    return lo, b


@njit(cache=True)
def binary_rr_delta(lo, b, eps0, eps):
    """Exact delta(eps) of K|X = B + Bern(1-p) vs K|X' = B + Bern(p) (both directions)."""
    p = 1.0 / (1.0 + math.exp(-eps0))
    e = math.exp(eps)
    nb = b.shape[0]
    h1 = 0.0
    h2 = 0.0
    for i in range(nb + 1):
        here = b[i] if i < nb else 0.0
        prev = b[i - 1] if i >= 1 else 0.0
        pk = p * here + (1.0 - p) * prev
        qk = (1.0 - p) * here + p * prev
        d1 = pk - e * qk
        d2 = qk - e * pk
        if d1 > 0.0:
            h1 += d1
        if d2 > 0.0:
            h2 += d2
    return max(h1, h2) * (1.0 - 8.0 * (nb + 16) * UNIT_ROUNDOFF)


@njit(cache=True)
def krr_lower_delta(n, k, eps0, eps, tol):
    """Exact delta(eps) of shuffled k-RR on D0 = (x0, z..z) vs D1 = (x1, z..z), k >= 3.

    Under n users on z (multinomial N), P0(V) = N(V) f0(V)/n with
    f0 - E f1 = a1 V0 + K(T, Vz), a1 = (e^eps0 - 1)(1 + E), T = V0 + V1 ~ Bin(n, 2 beta),
    Vz | T ~ Bin(n - T, e^eps0/(e^eps0 + k - 3)), V0 | T ~ Bin(T, 1/2). The inner sum over V0
    is a half-binomial tail; the pair is symmetric under x0 <-> x1.
    """
    e0 = math.exp(eps0)
    e = math.exp(eps)
    z = e0 + k - 1.0
    a1 = (e0 - 1.0) * (1.0 + e)
    piz = e0 / (e0 + k - 3.0)
    t_lo, t_hi, _ = binom_window(n, 2.0 / z, (e0 + k - 3.0) / z, tol)
    total = 0.0
    for big_t in range(t_lo, t_hi + 1):
        wt = math.exp(binom_logpmf(big_t, n, 2.0 / z, (e0 + k - 3.0) / z))
        if wt < TINY:
            continue
        rest = n - big_t
        v_lo, v_hi, _ = binom_window(rest, piz, 1.0 - piz, tol)
        w = math.exp(binom_logpmf(v_lo, rest, piz, 1.0 - piz))
        t = -1
        u = 0.0
        pm1 = 0.0
        steps = 0
        for vz in range(v_lo, v_hi + 1):
            if w < TINY:
                w = math.exp(binom_logpmf(vz, rest, piz, 1.0 - piz))
            kk = (1.0 - e * e0) * big_t + (1.0 - e) * (rest - (1.0 - 1.0 / e0) * vz)
            vstar = int(math.floor(-kk / a1)) + 1
            vstar = min(max(vstar, 0), big_t + 1)
            if t < 0:
                u, pm1 = tail_direct(big_t, vstar)
            else:
                u, pm1 = tail_move_t(big_t, t, u, pm1, vstar)
            t = vstar
            steps += 1
            mean_part = 0.5 * a1 * (big_t * u + pm1 * (big_t - vstar + 1.0))
            g = mean_part + kk * u
            g -= 16.0 * (steps + 8) * UNIT_ROUNDOFF * (abs(mean_part) + abs(kk * u))
            if g > 0.0:
                total += wt * w * g
            if vz < rest:
                w *= (rest - vz) / (vz + 1.0) * (piz / (1.0 - piz)) if piz < 1.0 else 0.0
    return total / n
