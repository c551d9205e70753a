"""Exact lower bounds (docs/theory.md): attacks whose delta(eps) every upper bound must exceed.

Here truncated mass is dropped and rounding is taken downward, so the values never exceed the
exact ones. Probabilities come from x = e^-eps0 (complements are never formed by subtraction).
"""
import math

import numpy as np

from .decorator import kernel
from .binomial import (
    TINY,
    binom_logpmf,
    binom_window,
    pmf_anchor,
    pmf_rel_err,
    tail_direct,
    tail_move_t,
)
from .clones import rr_split
from .krr import krr_probs
from .numerics import SUBNORMAL_ULP, UNIT_ROUNDOFF

__all__ = ["binary_rr_table", "binary_rr_delta", "count_pair_delta", "krr_lower_delta"]



@kernel
def _pmf_rel_err(b):
    """Relative error bound of exp(binom_logpmf): a few ulps of the log's magnitude, exact at 1."""
    if b == 1.0 or b == 0.0:
        return 0.0
    return (32.0 - 4.0 * math.log(b)) * UNIT_ROUNDOFF


@kernel
def binary_rr_table(n, eps0, tol):
    """pmf of B ~ Bin(n-1, 1-p) on a window (mass outside dropped): returns (lo, pmf array,
    relative-error bound of each pmf entry)."""
    p, pc = rr_split(eps0)
    big_n = n - 1
    lo, hi, _ = binom_window(big_n, pc, p, tol)
    b = np.empty(hi - lo + 1)
    rel = np.empty(hi - lo + 1)
    for i in range(hi - lo + 1):
        b[i] = math.exp(binom_logpmf(lo + i, big_n, pc, p))
        rel[i] = _pmf_rel_err(b[i])
    return lo, b, rel


@kernel
def binary_rr_delta(lo, b, rel_b, big_n, eps0, eps):
    """Exact delta(eps) of K|X = B + Bern(1-p) vs K|X' = B + Bern(p) (both directions), rounded
    down: each difference loses its rounding-error bound (pmf errors included) before use.

    b is the pmf of B ~ Bin(big_n, 1-p) on [lo, lo + len(b) - 1], rel_b its entries' relative
    error bounds. Only outcomes K whose two
    terms b(K) and b(K-1) are both known (inside the window, or truly 0 outside [0, big_n])
    are summed: an outcome at a truncated edge would miss part of Q(K) and could overstate.
    """
    p, pc = rr_split(eps0)
    return count_pair_delta(lo, b, rel_b, big_n, pc, p, p, pc, math.exp(eps),
                            4.0 * UNIT_ROUNDOFF)


@kernel
def count_pair_delta(lo, b, rel_b, big_n, a1, b1, a2, b2, e, rel0):
    """max over the directions of sum_k (P(k) - E Q(k))_+ for P(k) = a1 b(k-1) + b1 b(k),
    Q(k) = a2 b(k-1) + b2 b(k), rounded down: b is a pmf of Bin(big_n, .) on
    [lo, lo + len(b) - 1] with its entries' relative error bounds rel_b, rel0 the
    coefficients' relative error; each difference loses its rounding bound before use, and only
    outcomes whose two pmf values are both known (inside the window, or truly 0 outside
    [0, big_n]) are summed. E may be inf (eps > 709): E * 0 is avoided."""
    nb = b.shape[0]
    h1 = 0.0
    h2 = 0.0
    first = 0 if lo == 0 else 1
    last = nb if lo + nb - 1 >= big_n else nb - 1
    for i in range(first, last + 1):
        here = b[i] if i < nb else 0.0
        prev = b[i - 1] if i >= 1 else 0.0
        rel = rel0 + max(rel_b[i] if i < nb else 0.0, rel_b[i - 1] if i >= 1 else 0.0)
        pk = b1 * here + a1 * prev
        qk = b2 * here + a2 * prev
        eq = e * qk if qk > 0.0 else 0.0
        ep = e * pk if pk > 0.0 else 0.0
        d1 = pk - eq - rel * (pk + eq) - e * SUBNORMAL_ULP
        d2 = qk - ep - rel * (qk + ep) - e * SUBNORMAL_ULP
        if d1 > 0.0:
            h1 += d1
        if d2 > 0.0:
            h2 += d2
    return max(h1, h2) * (1.0 - 8.0 * (nb + 16) * UNIT_ROUNDOFF)


@kernel
def krr_lower_delta(n, k, eps0, eps, tol):
    """Exact delta(eps) of shuffled k-RR on D0 = (x0, z..z) vs D1 = (x1, z..z), k >= 3, rounded
    down (windows' mass dropped).

    Under n users on z (multinomial N), P0(V) = N(V) f0(V)/n, and divided by e^eps0 (x = e^-eps0
    as the scale, so nothing overflows)

        (f0 - E f1)/e^eps0 = a1 V0 - (E - x) T - D = c1 T - a1 (T - V0) - D,
        a1 = (1 - x)(1 + E),  c1 = 1 - x E = -expm1(eps - eps0),  D = (E - 1) x ((n - T - Vz) + x Vz),

    T = V0 + V1 ~ Bin(n, 2 beta), Vz | T ~ Bin(n - T, e^eps0/(e^eps0 + k - 3)), V0 | T ~ Bin(T, 1/2).
    The sum over V0 >= v* of the positive part is, with U = Pr[Bin(T,1/2) >= v*] and
    U' = Pr[Bin(T-1,1/2) >= v*] (E[T - V0; V0 >= v*] = (T/2) U'),

        g = c1 T U - D U - a1 (T/2) U'.

    Written this way no term is of size E T while g is of size c1 T: the earlier form
    a1 E[V0; V0 >= v*] + K U, with a1 ~ K ~ E T, cancelled e^eps0-fold and its rounding
    allowance swallowed the whole value from eps0 ~ 20 on. Each term of g is at most c1 T U
    (the summed integrands are >= 0), so the allowance stays relative to g's own scale. The pair is symmetric under x0 <-> x1.
    Each g loses its rounding bound, each weight its log-pmf error bound (pmf_rel_err) and
    8 ulps per recurrence step.
    """
    x = math.exp(-eps0)
    e = math.exp(eps)
    em1 = math.expm1(eps)
    cm = -math.expm1(-eps0)  # 1 - x
    c1 = -math.expm1(eps - eps0)  # 1 - x E
    a1 = cm * (1.0 + e)
    _, _, r, rc, _, _ = krr_probs(k, eps0)
    piz = 1.0 / (1.0 + (k - 3.0) * x)
    pizc = (k - 3.0) * x / (1.0 + (k - 3.0) * x)
    t_lo, t_hi, _ = binom_window(n, r, rc, tol)
    total = 0.0
    terms = 0
    for big_t in range(max(t_lo, 1), t_hi + 1):  # T = 0: g = -D <= 0
        lpt = binom_logpmf(big_t, n, r, rc)
        wt = math.exp(lpt)
        if wt < TINY:
            continue
        rel_t = pmf_rel_err(big_t, n, r, lpt)
        rest = n - big_t
        v_lo, v_hi, _ = binom_window(rest, piz, pizc, tol)
        w, rel_w = pmf_anchor(v_lo, rest, piz, pizc)
        wsteps = 0
        t = np.int64(-1)  # typed: the tail kernels compile once, for int64
        u = 0.0
        pm1 = 0.0
        u2 = 0.0
        pm2 = 0.0
        steps = 0
        for vz in range(v_lo, v_hi + 1):
            if w < TINY:
                w, rel_w = pmf_anchor(vz, rest, piz, pizc)
                wsteps = 0
            d = em1 * x * ((rest - vz) + x * vz)
            # positive part: T - V0 < s = (c1 T - D)/a1, i.e. V0 >= T + 1 - ceil(s); s is formed
            # on its own (T - s would round s away when it is below an ulp of T). A threshold
            # off by one only adds a term <= 0 or drops a term ~ 0: still a lower bound.
            s_w = (c1 * big_t - d) / a1
            vstar = big_t + 1 - int(math.ceil(min(max(s_w, 0.0), big_t + 1.0)))
            vstar = min(max(vstar, 0), big_t + 1)
            if t < 0:
                u, pm1 = tail_direct(big_t, vstar)
                u2, pm2 = tail_direct(big_t - 1, vstar)
            else:
                u, pm1 = tail_move_t(big_t, t, u, pm1, vstar)
                u2, pm2 = tail_move_t(big_t - 1, t, u2, pm2, vstar)
            t = vstar
            steps += 1
            pos = c1 * big_t * u
            neg = d * u + a1 * (0.5 * big_t) * u2
            g = pos - neg
            g -= 16.0 * (steps + 8) * UNIT_ROUNDOFF * (pos + neg)
            if g > 0.0:
                rel = rel_t + rel_w + 8.0 * (wsteps + 2) * UNIT_ROUNDOFF
                total += wt * w * g * (1.0 - rel)
                terms += 1
            if vz < rest:
                w *= (rest - vz) / (vz + 1.0) * (piz / pizc) if pizc > 0.0 else 0.0
                wsteps += 1
    total = total * (1.0 - 4.0 * (terms + 8) * UNIT_ROUNDOFF) - 4.0 * (terms + 1) * SUBNORMAL_ULP
    total = max(0.0, total)
    return total / (x * n) * (1.0 - 4.0 * UNIT_ROUNDOFF) if total > 0.0 else 0.0
