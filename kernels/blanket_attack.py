"""Exact attack on a binary-support oracle, a lower bound on its shuffled privacy
(docs/theory.md §2.6(c)). Lower sums drop the mass outside the windows and are deflated by
their rounding bound.
"""
import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .binomial import UNIT_ROUNDOFF, binom_window, pmf_anchor
from .bintail import excess, first_above, pmf_step_down, sf_anchor, sf_move
from .half_tail import half_dec_order

__all__ = ["AttackLaw", "attack_excess", "split_attack_delta"]


class AttackLaw(NamedTuple):
    """The attack's view (build with records.record): pj = Pr_{R_x3}[first two classes],
    pjc = 1 - pj, ro and one_minus_ro = 1 - ro the likelihood ratio of the merged class,
    c = e^eps0 - 1, eps0 the replacement eps0 (see split_attack_delta)."""

    pj: float
    pjc: float
    one_minus_ro: float
    ro: float
    c: float
    eps0: float


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


@njit(cache=True)
def split_attack_delta(n, law, eps, tol):
    """Exact delta(eps), rounded down (windows' mass dropped), of the attack
    (x1, x3, ..., x3) vs (x1', x3, ..., x3) seen through a post-processing that keeps, of each
    report, only its class: "supports x1 but neither x1' nor x3", the same with x1 and x1'
    exchanged, or "other" (docs/theory.md §2.6(c)).

    Under R_x3 each of the first two classes has probability pj/2 (pj = 2 B t3). With J their
    count and V the first class's count (V | J ~ Bin(J, 1/2)), the density-ratio sum of the
    view is c (1+E) (V - theta_J), theta_J = (aj J + r ro n)/(1+E), aj = E + r (1 - ro),
    r = (E-1)/c, c = e^eps0 - 1, ro = the likelihood ratio of the "other" class (the same
    under both datasets). One binomial window in J, the V tail in closed form. ``law`` is an
    AttackLaw.
    """
    pj, pjc, one_minus_ro, ro = law.pj, law.pjc, law.one_minus_ro, law.ro
    c, eps0 = law.c, law.eps0
    if eps >= eps0 or not c < math.inf:
        return 0.0
    e = math.exp(eps)
    r = math.expm1(eps) / c
    aj = e + r * one_minus_ro
    s, allow, _, st = attack_excess(n, pj, pjc, e, aj, r * ro * n, tol)
    v = (s - allow) * (1.0 - 8.0 * (st + 16) * UNIT_ROUNDOFF)  # allow includes pmf errors
    return max(0.0, v * (c * (1.0 + e) / n) * (1.0 - 8.0 * UNIT_ROUNDOFF))
