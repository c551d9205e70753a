"""Shuffle rounds with participation sampling (docs/theory.md §2.7(e)): exact attacks, the
count of one class of reports (and, under Poisson participation, the number of reports with
it); lower bounds, rounded down (windows' mass dropped, sums deflated by their rounding
bounds). The notation is kernels/participation.py's.
"""
import math
from typing import NamedTuple

import numpy as np

from .decorator import kernel
from .binomial import TINY, binom_logpmf, binom_window, pmf_rel_err
from .bintail import tight_window
from .lower import count_pair_delta
from .numerics import EXP_MAX, SUBNORMAL_ULP, UNIT_ROUNDOFF
from .participation import pmf_step_up

__all__ = ["CountLaw", "count_attack_delta", "count_pair_sums", "PoissonCountLaw",
           "poisson_count_attack_delta"]

_U = UNIT_ROUNDOFF


class CountLaw(NamedTuple):
    """The law of the count V of one class of reports (build with records.record):
    P(v) = a1 b(v-1) + b1 b(v), Q(v) = a2 b(v-1) + b2 b(v), b the Bin(big_n, s) pmf, sc = 1 - s."""

    big_n: int
    s: float
    sc: float
    a1: float
    b1: float
    a2: float
    b2: float


@kernel
def count_attack_delta(law, eps, tol):
    """Exact delta(eps), rounded down (windows' mass dropped), of the count V of one class of
    reports under ``law`` (a CountLaw: P(v) = a1 b(v-1) + b1 b(v), Q(v) = a2 b(v-1) + b2 b(v),
    b the Bin(N, s) pmf; docs/theory.md §2.7(e)): both directions, max (count_pair_delta of
    kernels/lower.py on the window's pmf table)."""
    big_n, s, sc = law.big_n, law.s, law.sc
    a1, b1, a2, b2 = law.a1, law.b1, law.a2, law.b2
    lo, hi, _ = binom_window(big_n, s, sc, tol)
    nb = hi - lo + 1
    b = np.empty(nb)
    rel_b = np.empty(nb)
    for i in range(nb):
        lp = binom_logpmf(lo + i, big_n, s, sc)
        b[i] = math.exp(lp)
        rel_b[i] = pmf_rel_err(lo + i, big_n, s, lp)
    return count_pair_delta(lo, b, rel_b, big_n, a1, b1, a2, b2, math.exp(eps), 8.0 * _U)


@kernel
def _pmf_err(x, n, p, q):
    """(Pr[Bin(n, p) = x], its relative error bound); 0 outside [0, n]."""
    if x < 0 or x > n:
        return 0.0, 0.0
    lp = binom_logpmf(x, n, p, q)
    return math.exp(lp), pmf_rel_err(x, n, p, lp)


@kernel
def _tail_pass(law, e, rel0, v, step, flip):
    """One pass of count_pair_sums (``law`` a CountLaw) from v in direction step (+1/-1): sum of
    the positive
    (big - E small), rounded down, with (big, small) = (P, Q), or (Q, P) when flip; stops once
    the positive run has ended, its terms are below 1e-15 of the sum, or at the edge
    [0, N + 1]. The pmf starts from its log-pmf and moves by ratios (re-anchored on
    underflow)."""
    big_n, s, sc = law.big_n, law.s, law.sc
    a1, b1, a2, b2 = law.a1, law.b1, law.a2, law.b2
    here, rel_h = _pmf_err(v, big_n, s, sc)
    if here > TINY and 1 <= v <= big_n:
        prev, rel_p = here * v / (big_n - v + 1.0) * (sc / s), rel_h + 4.0 * _U
    else:
        prev, rel_p = _pmf_err(v - 1, big_n, s, sc)
    total = 0.0
    steps = 0
    seen = False
    while True:
        rel = rel0 + max(rel_h, rel_p) + 8.0 * (steps + 2) * _U
        pv = a1 * prev + b1 * here
        qv = a2 * prev + b2 * here
        big, small = (qv, pv) if flip else (pv, qv)
        d = big - e * small - rel * (big + e * small) - e * SUBNORMAL_ULP
        if d > 0.0:
            total += d
            seen = True
        elif seen or steps > 3:
            break  # the positive run ended (or its terms are below their rounding)
        steps += 1
        if seen and big < 1e-15 * total:
            break
        v += step
        if v < 0 or v > big_n + 1:
            break
        if step > 0:
            prev, rel_p = here, rel_h
            if here > TINY and v <= big_n:
                here = here * (big_n - v + 1.0) / v * (s / sc)
            else:
                here, rel_h = _pmf_err(v, big_n, s, sc)
        else:
            here, rel_h = prev, rel_p
            if prev > TINY and v >= 1:
                prev = prev * v / (big_n - v + 1.0) * (sc / s)
            else:
                prev, rel_p = _pmf_err(v - 1, big_n, s, sc)
    return total


@kernel
def count_pair_sums(law, e, rel0):
    """(sum_v (P(v) - E Q(v))_+, sum_v (Q(v) - E P(v))_+) for ``law`` a CountLaw: P(v) =
    a1 b(v-1) + b1 b(v), Q(v) = a2 b(v-1) + b2 b(v), b the Bin(N, s) pmf, v in [0, N + 1],
    rounded down (rel0: the coefficients' relative error). Each direction's positive set is a tail in v (the sign of
    al r + be with r = b(v-1)/b(v) = v sc / ((N + 1 - v) s) increasing in v), summed from its
    crossing point outward (_tail_pass); a set of every v is summed from the mode both ways.
    Dropping terms only lowers the value."""
    big_n, s, sc = law.big_n, law.s, law.sc
    a1, b1, a2, b2 = law.a1, law.b1, law.a2, law.b2
    out0 = 0.0
    out1 = 0.0
    mode = min(big_n, int(math.floor((big_n + 1.0) * s)))
    for direction in range(2):
        flip = direction == 1
        al, be = (a2 - e * a1, b2 - e * b1) if flip else (a1 - e * a2, b1 - e * b2)
        if al <= 0.0 and be <= 0.0:
            continue
        if al > 0.0 and be >= 0.0:
            h = _tail_pass(law, e, rel0, mode, 1, flip) + _tail_pass(law, e, rel0, mode - 1, -1,
                                                                     flip)
        elif al > 0.0:  # al r + be > 0 for r > -be/al: v above x
            x = -be * (big_n + 1.0) * s / (al * sc - be * s)
            v = min(big_n + 1, max(0, int(math.floor(x)) - 1))
            h = _tail_pass(law, e, rel0, v, 1, flip)
        else:           # below x
            x = be * (big_n + 1.0) * s / (be * s - al * sc)
            v = min(big_n + 1, max(0, int(math.ceil(x)) + 1))
            h = _tail_pass(law, e, rel0, v, -1, flip)
        if flip:
            out1 = h
        else:
            out0 = h
    return out0, out1


class PoissonCountLaw(NamedTuple):
    """The Poisson class-count attack's law (build with records.record): n users, each reports
    with probability g (gc = 1 - g); another's report is in the class with probability so
    (soc = 1 - so), user 1's with u1 on D and u2 on D' (u1c, u2c the complements); ``remove``:
    user 1 is absent from D' (u2, u2c unused)."""

    n: int
    g: float
    gc: float
    so: float
    soc: float
    u1: float
    u1c: float
    u2: float
    u2c: float
    remove: bool


@kernel
def poisson_count_attack_delta(law, eps, tol):
    """Exact delta(eps), rounded down, of the attack's view (T, V) under Poisson participation
    (docs/theory.md §2.7(e); ``law`` a PoissonCountLaw): T reports in all, V of them in the
    attack's class. The other n - 1 users each report with probability g, in the class with
    probability so; user 1 reports with probability g, in the class with probability u1 (D) or
    u2 (D'; ``remove``: user 1 absent from D'). With W = Bin(n-1, g), b = Bin(T-1, so) and k = g (n - T)/T (= (1-g) W(T)/W(T-1)):

        P(T, V) = W(T-1) [(k so + g u1) b(V-1) + (k soc + g u1c) b(V)],
        Q(T, V) = W(T-1) [(k so + g u2) b(V-1) + (k soc + g u2c) b(V)]   (substitution),
        Q(T, V) = W(T-1) (k / (1 - g)) [so b(V-1) + soc b(V)]              (add/remove).

    One window in T, the positive tails in V (count_pair_sums); T = 0 is dropped."""
    n, g, gc, so, soc = law.n, law.g, law.gc, law.so, law.soc
    u1, u1c, u2, u2c = law.u1, law.u1c, law.u2, law.u2c
    ec = min(eps, EXP_MAX)
    e = math.exp(ec)
    lo, hi, _ = tight_window(n - 1, g, gc, tol)
    h1 = 0.0
    h2 = 0.0
    terms = 0
    w, relw = _pmf_err(lo, n - 1, g, gc)
    since = 0
    for tm1 in range(lo, hi + 1):
        if tm1 > lo:
            w, relw, since = pmf_step_up(w, tm1 - 1, n - 1, g, gc, relw, since)
        big_t = tm1 + 1
        if w < TINY:
            continue
        relw_t = relw + 8.0 * (since + 1) * _U
        k = g * (n - big_t) / big_t
        a1, b1 = k * so + g * u1, k * soc + g * u1c
        if law.remove:
            a2, b2 = k * so / gc, k * soc / gc
        else:
            a2, b2 = k * so + g * u2, k * soc + g * u2c
        s1, s2 = count_pair_sums(CountLaw(tm1, so, soc, a1, b1, a2, b2), e, 16.0 * _U)
        h1 += w * s1 * (1.0 - relw_t - 8.0 * _U)
        h2 += w * s2 * (1.0 - relw_t - 8.0 * _U)
        terms += 1
    return max(h1, h2) * (1.0 - 8.0 * (terms + 16) * _U)
