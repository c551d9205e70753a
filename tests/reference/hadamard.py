"""Exact references for the general Hadamard response (docs/theory.md §6.3, §2.5).

Written from the definitions, sharing nothing with the library: GF(2^m) is built by finding
the smallest degree-m polynomial whose powers of z cycle through all 2^m - 1 non-zero residues
(a brute-force walk), item x's support set is {y : parity(r & y) = 0 for r in
g^x <1, omega, ..., omega^(t-1)>} with omega = g^((2^m - 1)/(2^t - 1)), and the shuffled
output law of n users is enumerated in exact rationals; hockey-stick divergences are formed
with mpmath at 50 digits from those rationals. Tiny sizes only (K <= 64, k <= 6, n <= 4).
"""
import itertools
import math
from collections import defaultdict
from fractions import Fraction

import mpmath as mp

__all__ = ["field_powers", "support_sets", "realised_a1", "output_law", "pattern_law",
           "shuffled_law", "hockey", "worst_delta", "attack_view_delta"]


def field_powers(m: int) -> list[int]:
    """[z^0, z^1, ..., z^(2^m - 2)] in GF(2)[z]/p for the smallest p (as an integer) of degree m
    whose z has order 2^m - 1, found by walking the powers."""
    for low in range(1, 1 << m, 2):
        poly = (1 << m) | low
        seen, v = [], 1
        for _ in range((1 << m) - 1):
            seen.append(v)
            v <<= 1
            if v >> m:
                v ^= poly
        if v == 1 and len(set(seen)) == (1 << m) - 1:
            return seen
    raise AssertionError("no primitive polynomial")


def support_sets(k: int, t: int, m: int) -> list[frozenset]:
    """C_x for x < k: the reports y in [0, 2^m) orthogonal to g^x times every element of the
    subfield GF(2^t) (spanned by 1, omega, ..., omega^(t-1))."""
    pw = field_powers(m)
    order = (1 << m) - 1
    step = order // ((1 << t) - 1)
    sets = []
    for x in range(k):
        rows = [pw[(x + i * step) % order] for i in range(t)]
        sets.append(frozenset(y for y in range(1 << m)
                              if all(bin(r & y).count("1") % 2 == 0 for r in rows)))
    return sets


def realised_a1(a1c: float) -> Fraction:
    """Pr[u >= a1c] for u = j 2^-53, j uniform in [0, 2^53): 1 - ceil(a1c 2^53)/2^53."""
    return 1 - Fraction(math.ceil(Fraction(a1c) * (1 << 53)), 1 << 53)


def output_law(sets, big_k: int, a1: Fraction) -> list[list[Fraction]]:
    """R[x][y] = a1/|C_x| on C_x, (1 - a1)/(K - |C_x|) off it."""
    return [[a1 / len(c) if y in c else (1 - a1) / (big_k - len(c)) for y in range(big_k)]
            for c in sets]


def pattern_law(law, sets, big_k, items) -> dict:
    """Outputs merged by their support pattern over ``items`` (which of them they support): a
    sufficient statistic for datasets drawn from ``items``, since R[x][y] depends on y only
    through y in C_x (all C_x have the same size). {x: {pattern: probability}} for x in items."""
    merged = {x: defaultdict(Fraction) for x in items}
    for y in range(big_k):
        key = tuple(int(y in sets[x]) for x in items)
        for x in items:
            merged[x][key] += law[x][y]
    return {x: dict(row) for x, row in merged.items()}


def shuffled_law(plaw, xs) -> dict:
    """Exact law of the multiset of the users' (merged) reports, users holding xs."""
    out = {(): Fraction(1)}
    for x in xs:
        nxt: dict = defaultdict(Fraction)
        for key, pr in out.items():
            for cls, q in plaw[x].items():
                if q:
                    nxt[tuple(sorted(key + (cls,)))] += pr * q
        out = nxt
    return out


def hockey(P: dict, Q: dict, eps: float) -> mp.mpf:
    """max(H_{e^eps}(P || Q), H_{e^eps}(Q || P)), 50 digits. Outcomes with the same exact
    likelihood ratio P/Q are merged first (exact: H only sees (P, Q) through the ratio)."""
    mp.mp.dps = 50
    e = mp.e ** mp.mpf(eps)
    by_ratio: dict = defaultdict(lambda: [Fraction(0), Fraction(0)])
    for s in set(P) | set(Q):
        p, q = P.get(s, Fraction(0)), Q.get(s, Fraction(0))
        cell = by_ratio[p / q if q else None]
        cell[0] += p
        cell[1] += q
    cells = [(_mp(p), _mp(q)) for p, q in by_ratio.values()]
    return max(sum((max(mp.mpf(0), p - e * q) for p, q in cells), mp.mpf(0)),
               sum((max(mp.mpf(0), q - e * p) for p, q in cells), mp.mpf(0)))


def _mp(q: Fraction) -> mp.mpf:
    return mp.mpf(q.numerator) / q.denominator


def worst_delta(law, sets, big_k, n: int, eps_list) -> list:
    """max over x1 != x1' and the other n - 1 users' values of the exact shuffled delta (the
    others' values as multisets: the view is a multiset, so their order does not matter)."""
    k = len(sets)
    worst = [mp.mpf(0)] * len(eps_list)
    for x1, x2 in itertools.combinations(range(k), 2):  # hockey() is symmetric in the pair
        for z in itertools.combinations_with_replacement(range(k), n - 1):
            items = tuple(sorted({x1, x2, *z}))
            plaw = pattern_law(law, sets, big_k, items)
            P, Q = shuffled_law(plaw, (x1,) + z), shuffled_law(plaw, (x2,) + z)
            worst = [max(w, hockey(P, Q, e)) for w, e in zip(worst, eps_list)]
    return worst


def attack_view_delta(law, sets, big_k, n, items, eps_list) -> list:
    """Exact delta of the attack's view: datasets (x1, x3, ..., x3) vs (x1', x3, ..., x3), each
    report reduced to 'supports x1 alone', 'x1' alone' (among x1, x1', x3) or 'neither'."""
    x1, x2, x3 = items
    merged = [defaultdict(Fraction) for _ in law]
    for y in range(big_k):
        s1, s2, s3 = (y in sets[x1]), (y in sets[x2]), (y in sets[x3])
        key = (1, 0) if s1 and not s2 and not s3 else (0, 1) if s2 and not s1 and not s3 \
            else (2, 2)
        for x, row in enumerate(law):
            merged[x][key] += row[y]
    plaw = [dict(r) for r in merged]
    P = shuffled_law(plaw, (x1,) + (x3,) * (n - 1))
    Q = shuffled_law(plaw, (x2,) + (x3,) * (n - 1))
    return [hockey(P, Q, e) for e in eps_list]
