"""Brute-force references for binary randomizers in the shuffle model (docs/theory.md §2.14).

Written from the definitions, sharing nothing with the library: the shuffled output of binary
reports is their multiset, i.e. the number of ones, whose law is built user by user (exact
rationals, or mpmath at a given precision); the worst case runs over every bit vector of the
other users.
"""
import itertools

import mpmath as mp

from reference.shuffle import hockey as shuffle_hockey


def count_law(bits, p1, q0):
    """Law of the number of ones among the reports of users holding ``bits``: a user with bit 1
    reports 1 with probability p1, with bit 0 with probability q0 (exact arithmetic of whatever
    number type p1 and q0 are: Fraction or mpf). A list indexed by the count."""
    one = p1 - p1 + 1  # 1 in the type of p1
    law = [one]
    for bit in bits:
        r = p1 if bit else q0
        new = [0 * one] * (len(law) + 1)
        for c, pr in enumerate(law):
            new[c] += pr * (one - r)
            new[c + 1] += pr * r
        law = new
    return law


def hockey(p_law, q_law, e):
    """max(H_e(P||Q), H_e(Q||P)) of two laws on the same counts (sequences), e = e^eps."""
    return shuffle_hockey(dict(enumerate(p_law)), dict(enumerate(q_law)), e)


def worst_delta(n, p1, q0, e):
    """Exact worst-case delta at e = e^eps over all pairs of neighbouring datasets of n users
    (user 1 holds 1 in one and 0 in the other; the other n - 1 users' bits range over every
    vector, not only over counts), with the dataset that attains it."""
    best, arg = e - e, None
    for others in itertools.product((0, 1), repeat=n - 1):
        d = hockey(count_law((1,) + others, p1, q0), count_law((0,) + others, p1, q0), e)
        if d > best:
            best, arg = d, others
    return best, arg


def dataset_delta(n, m, p1, q0, e):
    """Exact delta at e of the datasets "m of the other n - 1 users hold 1", both directions."""
    others = (1,) * m + (0,) * (n - 1 - m)
    return hockey(count_law((1,) + others, p1, q0), count_law((0,) + others, p1, q0), e)


def mp_rr(eps0, dps=50):
    """(p, 1 - p) of randomized response at eps0, in mpmath at dps digits."""
    with mp.workdps(dps):
        e0 = mp.e ** mp.mpf(eps0)
        return e0 / (e0 + 1), 1 / (e0 + 1)


def _exact_pair(x, xc):
    """An exact probability and its complement from two floats: the smaller one is taken as
    exact (it carries the digits) and the other formed from it."""
    return (1 - mp.mpf(xc), mp.mpf(xc)) if xc < x else (mp.mpf(x), 1 - mp.mpf(x))


def mp_pair_delta(n1, n2, a, ac, b, bc, eps, dps=50):
    """delta(eps) of the count pair X + Bern(a) vs X + Bern(b), X = Bin(n1, a) + Bin(n2, b),
    summed directly in mpmath (of each probability and its complement the smaller is taken as
    exact)."""
    with mp.workdps(dps):
        a, _ = _exact_pair(a, ac)
        b, _ = _exact_pair(b, bc)
        x = count_law((1,) * n1 + (0,) * n2, a, b)
        e = mp.e ** mp.mpf(eps)
        p_law = [a * (x[k - 1] if k >= 1 else 0) + (1 - a) * (x[k] if k < len(x) else 0)
                 for k in range(len(x) + 1)]
        q_law = [b * (x[k - 1] if k >= 1 else 0) + (1 - b) * (x[k] if k < len(x) else 0)
                 for k in range(len(x) + 1)]
        return hockey(p_law, q_law, e)

