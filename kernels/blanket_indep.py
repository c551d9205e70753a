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

from numba import njit

from .binomial import TINY, UNIT_ROUNDOFF, binom_window, pmf_anchor
from .bintail import excess, first_above, sf_anchor, sf_move
from .clones import DBL_MIN

__all__ = ["IndepLaw", "indep_excess", "indep_upper_delta"]


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
def indep_upper_delta(ms, weights, outside_m, law, eps, tol):
    """Blanket upper bound for independent Bern(a) support bits (docs/theory.md §2.5):
    delta <= sum_blocks Pr[M' in block] g(m_block) + outside_m, with
    g(m) = (gamma c / m) E[(K1 - E K2 - r m)_+], K1, K2 iid Bin(m, a); ms[i] is the smallest M'
    of block i (g is non-increasing in m, docs/theory.md §2.5). The K2 mass outside its
    window adds at most a1 times that mass ((.)_+ <= c K1, K1 independent of K2, and
    gamma c a = a1 - gamma a <= a1). c = e^eps0 - 1 is passed exactly (gc = gamma c); E and
    r = (E-1)/c are rounded down (the sum decreases in both, so this only raises the bound).
    ``law`` is an IndepLaw; (ms, weights, outside_m) are m_blocks' blocks of M'.
    """
    a, b, gc, a1, c, eps0 = law.a, law.ac, law.gc, law.a1, law.c, law.eps0
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
