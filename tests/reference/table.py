"""Brute-force references for the table randomizer's shuffle accounting (docs/theory.md
§2.15), written from the definitions: the exact law of the shuffled reports (the histogram of
the outputs) by dynamic programming over the users in exact rationals, its hockey-stick
divergence in mpmath, the worst case over every dataset of the other users; and the blanket
and attack functionals by direct summation over the multinomial counts in mpmath."""
import itertools
import math
from fractions import Fraction

import mpmath as mp

from reference.shuffle import hockey as shuffle_hockey
from reference.shuffle import shuffled_law


def histogram_law(rows, inputs):
    """Exact law of the shuffled outputs of users holding ``inputs`` (rows[x][y] = Pr[y | x],
    Fractions): dict sorted outputs -> probability."""
    return shuffled_law([rows[x] for x in inputs])


def hockey(p_law, q_law, eps, dps=50):
    """H_{e^eps}(P || Q) of two exact laws, in mpmath."""
    with mp.workdps(dps):
        return shuffle_hockey(p_law, q_law, mp.e ** mp.mpf(eps), "forward", kind="mpmath")


def worst_delta(rows, n, eps, dps=50):
    """The exact shuffled delta(eps): max over ordered pairs (a, b) of user 1's input and every
    multiset of the other n - 1 users' inputs of H_{e^eps}(shuffle(a, others) || shuffle(b, others))."""
    k = len(rows)
    best, arg = mp.mpf(0), None
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        laws = [histogram_law(rows, (x,) + others) for x in range(k)]
        for a in range(k):
            for b in range(k):
                if a != b:
                    h = hockey(laws[a], laws[b], eps, dps)
                    if h > best:
                        best, arg = h, (a, b, others)
    return best, arg


def dataset_delta(rows, n, eps, a, b, c, dps=50):
    """Exact H_{e^eps} of the attack's datasets (a, c, ..., c) vs (b, c, ..., c)."""
    others = (c,) * (n - 1)
    return hockey(histogram_law(rows, (a,) + others), histogram_law(rows, (b,) + others), eps, dps)


def _multinomial_excess(atoms, n, dps):
    """(1/n) sum over the counts of n draws of multinomial(n; c) prod mass^c (sum c value)_+,
    atoms = [(mass, value)] as mpmath numbers."""
    r = len(atoms)
    total = mp.mpf(0)
    for cnt in itertools.product(range(n + 1), repeat=r - 1):
        last = n - sum(cnt)
        if last < 0:
            continue
        c = cnt + (last,)
        s = sum(ci * v for ci, (_, v) in zip(c, atoms))
        if s <= 0:
            continue
        coef = mp.factorial(n)
        pr = mp.mpf(1)
        for ci, (q, _) in zip(c, atoms):
            coef /= mp.factorial(ci)
            pr *= q ** ci
        total += coef * pr * s
    return total / n


def mp_blanket(rows, n, eps, a, b, dps=50):
    """The blanket functional of docs/theory.md §2.15 for the pair (a, b) in mpmath:
    (1/n) E[(sum of n draws)_+], a draw (P[a][y] - e^eps P[b][y]) / mu(y) w.p. mu(y) =
    min_x P[x][y], 0 w.p. 1 - sum mu."""
    with mp.workdps(dps):
        e = mp.e ** mp.mpf(eps)
        f = lambda fr: mp.mpf(fr.numerator) / fr.denominator
        m = len(rows[0])
        mu = [min(r[y] for r in rows) for y in range(m)]
        atoms = [(f(mu[y]), (f(rows[a][y]) - e * f(rows[b][y])) / f(mu[y])) for y in range(m)]
        atoms.append((1 - sum(f(v) for v in mu), mp.mpf(0)))
        return _multinomial_excess(atoms, n, dps)


def mp_attack(rows, n, eps, a, b, c, dps=50):
    """The attack functional: (1/n) E[(sum of n draws)_+], a draw
    (P[a][y] - e^eps P[b][y]) / P[c][y] w.p. P[c][y]."""
    with mp.workdps(dps):
        e = mp.e ** mp.mpf(eps)
        f = lambda fr: mp.mpf(fr.numerator) / fr.denominator
        atoms = [(f(rows[c][y]), (f(rows[a][y]) - e * f(rows[b][y])) / f(rows[c][y]))
                 for y in range(len(rows[0]))]
        return _multinomial_excess(atoms, n, dps)


def random_table(rng, k, m, spread):
    """A random k x m table with entries proportional to e^(uniform(0, spread)), as exact
    Fractions of small denominators (rows summing to 1)."""
    rows = []
    for _ in range(k):
        w = [max(1, int(1000 * math.exp(rng.uniform(0, spread)))) for _ in range(m)]
        t = sum(w)
        rows.append([Fraction(v, t) for v in w])
    return rows


def law_table(probability, inputs, outputs):
    """[[probability(x, y) for y in outputs] for x in inputs] as strings of exact rationals
    (what a user writes for TableRandomizer)."""
    return [[str(Fraction(probability(x, y))) for y in outputs] for x in inputs]


def yes_no_table(a1):
    """Warner's randomized response keeping the answer w.p. a1 (exact)."""
    return law_table(lambda x, y: a1 if x == y else 1 - a1, range(2), range(2))


def krr_table(k, a1):
    """k-RR reporting the true item w.p. a1, each other w.p. (1 - a1)/(k - 1)."""
    return law_table(lambda x, y: a1 if x == y else (1 - a1) / (k - 1), range(k), range(k))


def unary_table(k, a, a1):
    """Unary encoding: bit x is 1 w.p. a1, every other bit w.p. a, independently; outputs are
    the 2^k bit vectors."""
    vectors = list(itertools.product((0, 1), repeat=k))

    def pr(x, y):
        out = Fraction(1)
        for j, bit in enumerate(y):
            q = a1 if j == x else a
            out *= q if bit else 1 - q
        return out
    return law_table(pr, range(k), vectors)


def subset_table(k, d, a1):
    """Subset selection: a d-subset containing x w.p. a1, uniform among those that do (or do
    not)."""
    subsets = list(itertools.combinations(range(k), d))
    inside, outside = math.comb(k - 1, d - 1), math.comb(k - 1, d)
    return law_table(lambda x, s: a1 / inside if x in s else (1 - a1) / outside, range(k),
                     subsets)
