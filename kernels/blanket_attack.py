"""Exact attack on a binary-support oracle, a lower bound on its shuffled privacy
(docs/theory.md §2.6(c)). Lower sums drop the mass outside the windows and are deflated by
their rounding bound.
"""
import math
from typing import NamedTuple

import numpy as np

from .binomial import binom_window, pmf_anchor
from .bintail import excess, first_above, pmf_step_down, sf_anchor, sf_move
from .decorator import kernel
from .half_tail import half_dec_order
from .numerics import UNIT_ROUNDOFF

__all__ = ["AttackLaw", "TripleLaw", "attack_excess", "split_attack_delta",
           "triple_attack_delta"]


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


@kernel
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
    since_j = np.int64(0)  # typed: pmf_step_down compiles once, for int64
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


@kernel
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


class TripleLaw(NamedTuple):
    """The natural-dataset attack's view (build with records.record) for oracles whose support
    bits of three items are independent under w: a = Pr_w[b = 1], ac = 1 - a, a1 =
    Pr_{R_x}[b(Y, x) = 1], a1c = 1 - a1, c = e^eps0 - 1 (rounded up), scale = (e^eps0 - 1)/e^eps0
    (rounded down), eps0 the replacement eps0 (see triple_attack_delta)."""

    a: float
    ac: float
    a1: float
    a1c: float
    c: float
    scale: float
    eps0: float


@kernel
def _binom_row(m, a, b, tol):
    """(lo, pmf over the window [lo, hi] of Bin(m, a), each rounded down by its error bound)."""
    lo, hi, _ = binom_window(m, a, b, tol)
    row = np.empty(hi - lo + 1)
    for k in range(lo, hi + 1):
        w, rel = pmf_anchor(k, m, a, b)
        row[k - lo] = w * (1.0 - rel - 2.0 * UNIT_ROUNDOFF)
    return lo, row


@kernel
def triple_attack_delta(n, law, eps, tol):
    """delta(eps), rounded down, of the attack (x1, x3, ..., x3) vs (x1', x3, ..., x3) seen
    through the bits (b1, b2, b3) of every report (docs/theory.md §2.6(d)): with the three bits
    independent under w, a report of x3 has b1, b2 ~ Bern(a), b3 ~ Bern(a1), and the density
    ratio of the shuffled view is (1/n) sum_j e0^(b1_j - b3_j) against e0^(b2_j - b3_j), so

        delta = (1/n) (c/e0) E[(S1 - E S2 - r (e0 M0 + M1))_+],   r = (E - 1)/c,

    over the n reports of x3: M0 ~ Bin(n, 1 - a1) of them with b3 = 0, M1 = n - M0, and given
    M0, S1 = K1' + e0 K1 and S2 = K2' + e0 K2 iid, K ~ Bin(M0, a) (the b = 1 counts among the
    M0), K' ~ Bin(M1, a). Per M0 the atoms of S are sorted once and E[(S1 - theta)_+] is read
    from suffix sums at each atom of S2 (theta rises with it: one sweep); windows drop mass,
    each read subtracts its rounding bound, E and r are rounded up (the sum decreases in both).
    """
    a, b, a1, a1c = law.a, law.ac, law.a1, law.a1c
    c, scale, eps0 = law.c, law.scale, law.eps0
    if eps >= eps0:
        return 0.0
    ur = UNIT_ROUNDOFF
    e = math.exp(eps) * (1.0 + 4.0 * ur)
    r = math.expm1(eps) * (1.0 + 4.0 * ur) / c * (1.0 + 4.0 * ur)
    e0 = c + 1.0
    lo0, row0 = _binom_row(n, a1c, a1, tol)
    total = 0.0
    for i0 in range(row0.shape[0]):
        m0 = lo0 + i0
        m1 = n - m0
        klo, krow = _binom_row(m0, a, b, tol)
        jlo, jrow = _binom_row(m1, a, b, tol)
        nk, nj = krow.shape[0], jrow.shape[0]
        vals = np.empty(nk * nj)
        probs = np.empty(nk * nj)
        for x in range(nk):
            for y in range(nj):
                vals[x * nj + y] = (jlo + y) + e0 * (klo + x)
                probs[x * nj + y] = krow[x] * jrow[y]
        order = np.argsort(vals)
        sv = vals[order]
        sp = probs[order]
        size = sv.shape[0]
        tail_p = np.zeros(size + 1)  # sums over atoms i' >= i
        tail_v = np.zeros(size + 1)
        for i in range(size - 1, -1, -1):
            tail_p[i] = tail_p[i + 1] + sp[i]
            tail_v[i] = tail_v[i + 1] + sp[i] * sv[i]
        rho = r * (e0 * m0 + m1)
        acc = 0.0
        k = 0
        for i in range(size):
            theta = e * sv[i] + rho  # increasing in i: the first atom above it only moves up
            while k < size and sv[k] <= theta:
                k += 1
            if k >= size:
                break
            g = tail_v[k] - theta * tail_p[k]
            err = 4.0 * (size + 4) * ur * (tail_v[k] + theta * tail_p[k]) \
                + 8.0 * ur * abs(theta) * tail_p[k]
            g -= err
            if g > 0.0:
                acc += sp[i] * g
        total += row0[i0] * acc * (1.0 - 4.0 * (size + 4) * ur)
    return max(0.0, total * (1.0 - 8.0 * (row0.shape[0] + 16) * ur) * scale / n
               * (1.0 - 8.0 * ur))
