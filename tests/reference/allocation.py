"""Brute force of random allocation of shuffled rounds (docs/theory.md §2.16), exact rationals.

n devices, T rounds; each device picks its rounds secretly and independently by a scheme:

* ``"one"``: one round, uniform (k = 1);
* ``"distinct"``: a uniform k-subset of the rounds;
* ``"independent"``: k rounds drawn independently with replacement (two picks of one round
  are two reports in it);
* ``"blocks"``: one uniform round in each of k consecutive blocks of T/k rounds;
* ``"batches"``: the devices in a uniformly random order cut into T batches of n/T (not
  independent across devices: true shuffling, then batches).

Round t releases the multiset of the outputs of the reports in it, drawn from the round's
randomizer, a table ``table[x][y]`` of Fractions. The randomizer of round t is
``policy(t, past)``, ``past`` the outputs of rounds < t (adaptive); a list of tables is the
non-adaptive policy. The law of the whole view (one sorted tuple of outputs per round) is
enumerated exactly: first the law of the rounds' contents (the multiset of values in each
round, device by device), then each content's outputs round by round.

Written from the definitions only; shares nothing with the library.
"""
from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

from reference.shuffle import hockey  # the one hockey stick; exact on Fraction laws

__all__ = ["SCHEMES", "device_rounds", "round_law", "campaign_law", "one_round_law", "hockey",
           "product_law", "worst_delta", "rr_table", "krr_table", "oue_like_table",
           "mapped_table", "eps0_of", "split_factor", "mp_clone_pair",
           "mp_product_delta"]

SCHEMES = ("one", "distinct", "independent", "blocks", "batches")


def device_rounds(T: int, k: int, scheme: str) -> list[tuple[tuple[int, ...], Fraction]]:
    """One device's rounds (sorted, repeats kept) and their probabilities."""
    if scheme == "one":
        return [((t,), Fraction(1, T)) for t in range(T)]
    if scheme == "distinct":
        subsets = list(itertools.combinations(range(T), k))
        return [(s, Fraction(1, len(subsets))) for s in subsets]
    if scheme == "independent":
        out: dict = {}
        for picks in itertools.product(range(T), repeat=k):
            key = tuple(sorted(picks))
            out[key] = out.get(key, 0) + Fraction(1, T ** k)
        return sorted(out.items())
    if scheme == "blocks":
        assert T % k == 0
        b = T // k
        return [(picks, Fraction(1, b ** k)) for picks in
                itertools.product(*(range(j * b, (j + 1) * b) for j in range(k)))]
    raise ValueError(scheme)


def _contents(values, T: int, k: int, scheme: str) -> dict:
    """Law of the rounds' contents: a tuple of T sorted tuples of values."""
    if scheme == "batches":  # a uniform permutation of the devices cut into T equal batches
        n = len(values)
        assert n % T == 0
        out: dict = {}
        perms = list(itertools.permutations(values))
        for perm in perms:
            c = tuple(tuple(sorted(perm[j * n // T:(j + 1) * n // T])) for j in range(T))
            out[c] = out.get(c, 0) + Fraction(1, len(perms))
        return out
    law = {tuple(() for _ in range(T)): Fraction(1)}
    choices = device_rounds(T, k, scheme)
    for x in values:
        new: dict = {}
        for content, p in law.items():
            for rounds, q in choices:
                c = list(content)
                for t in rounds:
                    c[t] = tuple(sorted(c[t] + (x,)))
                c = tuple(c)
                new[c] = new.get(c, 0) + p * q
        law = new
    return law


def _freeze(table) -> tuple:
    return tuple(tuple(Fraction(v) for v in row) for row in table)


@functools.lru_cache(maxsize=None)
def _round_law_cached(table: tuple, values: tuple) -> dict:
    law = {(): Fraction(1)}
    for x in values:
        new: dict = {}
        for outs, p in law.items():
            for y, q in enumerate(table[x]):
                if q:
                    key = tuple(sorted(outs + (y,)))
                    new[key] = new.get(key, 0) + p * q
        law = new
    return law


def round_law(table, values) -> dict:
    """Law of the sorted outputs of one shuffled round of devices holding ``values``."""
    return _round_law_cached(_freeze(table), tuple(sorted(values)))


def one_round_law(table, values) -> dict:
    """One shuffled round of every device (the comparison of the k = 1 theorem)."""
    return round_law(table, values)


def campaign_law(values, T: int, k: int = 1, scheme: str = "one", policy=None) -> dict:
    """Exact law of the allocated campaign's view. ``policy``: a list of T tables (same for
    every past) or a callable (t, past) -> table."""
    if not callable(policy):
        tables = [_freeze(tb) for tb in policy]
        policy_fn = lambda t, past: tables[t]  # noqa: E731
    else:
        policy_fn = policy
    out: dict = {}
    for content, pc in _contents(values, T, k, scheme).items():
        stack = [((), pc)]
        for t in range(T):
            nxt = []
            for past, p in stack:
                for o, q in round_law(policy_fn(t, past), content[t]).items():
                    nxt.append((past + (o,), p * q))
            stack = nxt
        for view, p in stack:
            out[view] = out.get(view, 0) + p
    return out


def product_law(laws) -> dict:
    """Law of independent views (the composition of their mechanisms)."""
    out = {(): Fraction(1)}
    for law in laws:
        out = {a + (b,): p * q for a, p in out.items() for b, q in law.items()}
    return out


def worst_delta(law_of, inputs: int, n: int, E):
    """max over device 1's pair x1 != x1' and the others' values (multisets) of
    H_E(law_of(x1, others) || law_of(x1', others)), both directions; ``E`` one Fraction or a
    list of them (then a list: the laws are enumerated once for all)."""
    many = isinstance(E, (list, tuple))
    es = list(E) if many else [E]
    best = [Fraction(0)] * len(es)
    for others in itertools.combinations_with_replacement(range(inputs), n - 1):
        laws = {x: law_of((x,) + others) for x in range(inputs)}
        for a, b in itertools.combinations(range(inputs), 2):
            best = [max(v, hockey(laws[a], laws[b], e)) for v, e in zip(best, es)]
    return best if many else best[0]


# ---------------------------------------------------------------------------------------------
# Small randomizers (exact tables)
# ---------------------------------------------------------------------------------------------

def rr_table(e0: Fraction) -> list:
    """Binary randomized response keeping the bit with probability e0/(e0+1)."""
    p = Fraction(e0) / (Fraction(e0) + 1)
    return [[p, 1 - p], [1 - p, p]]


def krr_table(k: int, e0: Fraction) -> list:
    """k-RR: x with probability e0/(e0+k-1), each other value 1/(e0+k-1)."""
    z = Fraction(e0) + k - 1
    return [[Fraction(e0) / z if y == x else 1 / z for y in range(k)] for x in range(k)]


def oue_like_table(a1: Fraction, a: Fraction) -> list:
    """A 3-item binary-support oracle with independent support bits: the report is a subset of
    {0, 1, 2} (outputs 0..7 as bit masks), item x's bit kept at 1 with probability a1, every
    other bit at 1 with probability a (OUE: a1 = 1/2, a = 1/(e^eps0+1))."""
    rows = []
    for x in range(3):
        row = []
        for y in range(8):
            p = Fraction(1)
            for j in range(3):
                bit = (y >> j) & 1
                pj = a1 if j == x else a
                p *= pj if bit else 1 - pj
            row.append(p)
        rows.append(row)
    return rows


def mapped_table(table, mapping) -> list:
    """The randomizer that feeds mapping[x] (the round's item of value x) to ``table``."""
    return [list(table[mapping[x]]) for x in range(len(mapping))]


def eps0_of(table) -> float:
    """Replacement eps0 of a table: the largest log ratio over outputs and input pairs."""
    best = 0.0
    for y in range(len(table[0])):
        col = [row[y] for row in table]
        if min(col) == 0:
            if max(col) > 0:
                return math.inf
            continue
        best = max(best, math.log(max(col) / min(col)))
    return best


def split_factor(view) -> Fraction:
    """Probability that a uniformly random split of the union of ``view``'s rounds (each report
    to a uniform round, independently) gives ``view``: prod over outputs y of the multinomial
    g_y! / prod_t m_(t,y)!, over T^N (N reports in all)."""
    T = len(view)
    union: dict = {}
    per_round = []
    for outs in view:
        counts: dict = {}
        for y in outs:
            counts[y] = counts.get(y, 0) + 1
            union[y] = union.get(y, 0) + 1
        per_round.append(counts)
    num = Fraction(1)
    for y, g in union.items():
        num *= math.factorial(g)
        for counts in per_round:
            num /= math.factorial(counts.get(y, 0))
    total = sum(union.values())
    return num / Fraction(T) ** total


def mp_clone_pair(n: int, eps0, dps: int = 40):
    """The FMT21 Thm 3.2 pair (docs/theory.md §2.1) as two lists of atoms over (c, a), mpmath."""
    import mpmath as mp
    with mp.workdps(dps):
        e0 = mp.e ** mp.mpf(eps0)
        q, p = 1 / e0, e0 / (e0 + 1)
        P, Q = [], []
        for c in range(n):
            wc = mp.binomial(n - 1, c) * q ** c * (1 - q) ** (n - 1 - c)
            for a in range(c + 2):
                b_prev = mp.binomial(c, a - 1) / mp.mpf(2) ** c if a >= 1 else 0
                b_here = mp.binomial(c, a) / mp.mpf(2) ** c if a <= c else 0
                P.append(wc * (p * b_prev + (1 - p) * b_here))
                Q.append(wc * ((1 - p) * b_prev + p * b_here))
        return P, Q


def mp_product_delta(P, Q, times: int, eps, dps: int = 40):
    """Exact delta(eps) of the ``times``-fold product of the pair (P, Q), both directions."""
    import mpmath as mp
    with mp.workdps(dps):
        e = mp.e ** mp.mpf(eps)
        best = mp.mpf(0)
        for a, b in ((P, Q), (Q, P)):
            total = mp.mpf(0)
            for idx in itertools.product(range(len(a)), repeat=times):
                pa = mp.fprod(a[i] for i in idx)
                pb = mp.fprod(b[i] for i in idx)
                total += max(mp.mpf(0), pa - e * pb)
            best = max(best, total)
        return best
