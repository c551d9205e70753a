"""The blanket sum of a finite randomizer, exactly for small n, and a lower bound that counts
one atom exactly (docs/theory.md §2.15).

One draw Z takes the value vals[j] with mass masses[j] (j < r; a blanket draw's loss, or 0 for
a user outside the blanket; the masses need not sum to 1: the product measure is meant). For n
draws, E[(Z_1 + ... + Z_n)_+] is the sum over the multinomial counts c (c_0 + ... + c_{r-1} = n)
of n! / prod c_j! prod masses_j^c_j (sum_j c_j vals_j)_+: C(n + r - 1, r - 1) terms, enumerated
here with every rounding bounded, so that the result is rounded up (``upper``) or down.
"""
import numpy as np

from .decorator import kernel
from .binomial import binom_window, pmf_anchor
from .numerics import SUBNORMAL_ULP, UNIT_ROUNDOFF

__all__ = ["exact_excess", "jensen_excess"]


@kernel
def exact_excess(vals, masses, n, upper):
    """E[(sum of n iid draws)_+] by enumeration of the counts, rounded up or down.

    Errors (u = 2^-53): a Pascal entry C(a, b) is within a u of exact (positive additions), a
    power masses_j^c within c u, so a term's probability within ((r + 1)(n + 2)) u; its value
    sum_j c_j vals_j within (r + 2) u sum_j c_j |vals_j| (moved outward before the positive
    part); the sum of the nonnegative terms within (terms) u. Products that fall into the
    subnormal range err by up to 2^-1075 absolute each: a term's probability is moved outward
    by (n + 2 r + 2) 2^-1074 times its multinomial coefficient as well.
    """
    r = vals.size
    u = UNIT_ROUNDOFF
    binom = np.zeros((n + 1, n + 1))
    for a in range(n + 1):
        binom[a, 0] = 1.0
        for b in range(1, a + 1):
            binom[a, b] = binom[a - 1, b - 1] + binom[a - 1, b]
    pw = np.ones((r, n + 1))
    for j in range(r):
        for c in range(1, n + 1):
            pw[j, c] = pw[j, c - 1] * masses[j]
    cnt = np.zeros(r, dtype=np.int64)
    cnt[0] = n
    rel = 2.0 * (r + 1) * (n + 2) * u   # of one term's probability
    slack = (n + 2 * r + 2) * SUBNORMAL_ULP
    total, terms = 0.0, 0
    while True:
        prob, coef, rem, s, a = 1.0, 1.0, n, 0.0, 0.0
        for j in range(r):
            c = cnt[j]
            coef *= binom[rem, c]
            prob *= binom[rem, c] * pw[j, c]
            rem -= c
            s += c * vals[j]
            a += c * abs(vals[j])
        err = (r + 2) * u * a
        v = s + err if upper else s - err
        if v > 0.0:
            if upper:
                total += (prob * (1.0 + rel) + coef * slack) * v
            else:
                total += max(prob * (1.0 - rel) - coef * slack, 0.0) * v
        terms += 1
        # the next composition of n into r parts (reverse lexicographic)
        last = cnt[r - 1]
        cnt[r - 1] = 0
        i = r - 2
        while i >= 0 and cnt[i] == 0:
            i -= 1
        if i < 0:
            break
        cnt[i] -= 1
        cnt[i + 1] = last + 1
    grow = 2.0 * (terms + 4) * u    # the products prob * v and the sum of the terms
    return total * (1.0 + grow) if upper else total * (1.0 - grow)


@kernel
def jensen_excess(v, q, mu, n, tol):
    """sum_j Pr[Bin(n, q) = j] (j v + (n - j) mu)_+ over a window of Bin(n, q) (the mass outside
    dropped), rounded down: E[(sum)_+] of n draws when one atom (value v, mass q) is counted and
    the other draws are replaced by their conditional mean mu, a lower bound by Jensen given the
    count (docs/theory.md §2.15). Each pmf carries its error bound (pmf_anchor), each value its
    rounding."""
    u = UNIT_ROUNDOFF
    lo, hi, _ = binom_window(n, q, 1.0 - q, tol)
    total = 0.0
    for j in range(lo, hi + 1):
        s = j * v + (n - j) * mu
        s -= 4.0 * u * (abs(j * v) + abs((n - j) * mu))
        if s <= 0.0:
            continue
        pmf, err = pmf_anchor(j, n, q, 1.0 - q)
        total += pmf * (1.0 - err) * s
    return total * (1.0 - 2.0 * (hi - lo + 4) * u)
