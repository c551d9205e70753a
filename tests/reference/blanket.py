"""The shuffled output law of every frequency oracle by enumeration (docs/theory.md §2.5-2.7).

Each ``law_*`` writes the output law R[x, y] of one randomizer from its client code (not from
the blanket derivation), with the support pattern of each output for the reduced-view check;
``classes`` merges outputs with proportional likelihood vectors, ``shuffled`` enumerates the law
of the multiset (class counts) of n users' reports and ``worst_case`` takes the exact delta(eps)
over every pair of neighbouring datasets. Floats: exact up to rounding for these tiny cases.
"""
import itertools
from collections import defaultdict
from math import comb

import numpy as np

from . import hadamard as REF_HADAMARD
from . import hockey

__all__ = ["law_rappor", "law_krr", "law_subset", "law_olh", "law_hadamard_general",
           "law_hadamard", "law_pirappor", "law_vector_pirappor", "classes", "shuffled",
           "worst_case"]



def law_rappor(o):
    outs, sup = [], []
    for y in itertools.product([0, 1], repeat=o.k):
        row = []
        for x in range(o.k):
            pr = 1.0
            for j in range(o.k):
                q = o.a1 if j == x else o.a0
                pr *= q if y[j] else 1.0 - q
            row.append(pr)
        outs.append(row)
        sup.append(tuple(y))
    return np.array(outs).T, sup


def law_krr(o):
    R = np.full((o.k, o.k), (1.0 - o.a1) / (o.k - 1))
    np.fill_diagonal(R, o.a1)
    return R, [tuple(int(j == y) for j in range(o.k)) for y in range(o.k)]


def law_subset(o):
    outs, sup = [], []
    for S in itertools.combinations(range(o.k), o.d):
        outs.append([o.a1 / comb(o.k - 1, o.d - 1) if x in S else (1 - o.a1) / comb(o.k - 1, o.d)
                     for x in range(o.k)])
        sup.append(tuple(int(j in S) for j in range(o.k)))
    return np.array(outs).T, sup


def law_olh(o):
    keep = o.a1
    outs, sup = [], []
    for a in range(o.p):
        for b in range(o.p):
            h = [((a * (x + 1) + b) % o.p) % o.g for x in range(o.k)]
            for y in range(o.g):
                outs.append([(keep if h[x] == y else (1 - keep) / (o.g - 1)) / o.p ** 2
                             for x in range(o.k)])
                sup.append(tuple(int(h[x] == y) for x in range(o.k)))
    return np.array(outs).T, sup


def law_hadamard_general(o):
    """The general code's sets C_x built by tests/reference/hadamard.py (the spread's lines),
    a1 / |C_x| on C_x, (1 - a1)/(K - |C_x|) off it."""
    K = o.big_k
    sets = REF_HADAMARD.support_sets(o.k, o.t, o.m)
    outs, sup = [], []
    for y in range(K):
        inside = [y in c for c in sets]
        outs.append([o.a1 / len(c) if i else (1 - o.a1) / (K - len(c))
                     for i, c in zip(inside, sets)])
        sup.append(tuple(int(i) for i in inside))
    return np.array(outs).T, sup


def law_hadamard(o):
    K = o.big_k
    outs, sup = [], []
    for i in range(K):
        plus = [bin((x + 1) & i).count("1") % 2 == 0 for x in range(o.k)]
        outs.append([(2.0 / K) * (o.a1 if pl else 1 - o.a1) for pl in plus])
        sup.append(tuple(int(pl) for pl in plus))
    return np.array(outs).T, sup


def law_pirappor(o):
    outs, sup = [], []
    for a in range(o.p):
        for b in range(o.p):
            hit = [(a * (x + 1) + b) % o.p < o.s for x in range(o.k)]
            outs.append([(o.a1 / o.s if h else (1 - o.a1) / (o.p - o.s)) / o.p for h in hit])
            sup.append(tuple(int(h) for h in hit))
    return np.array(outs).T, sup


def law_vector_pirappor(o):
    outs, sup = [], []
    for rep in itertools.product(range(o.q), repeat=o.t + 1):
        a, b = np.array(rep[:-1]), rep[-1]
        hit = [(int(a @ o.items[x]) + b) % o.q < o.s for x in range(o.k)]
        outs.append([(o.a1 / o.s if h else (1 - o.a1) / (o.q - o.s)) / o.q ** o.t for h in hit])
        sup.append(tuple(int(h) for h in hit))
    return np.array(outs).T, sup


def classes(R, key=None):
    """Merge outputs whose likelihood vectors are proportional (or that share ``key``)."""
    groups = defaultdict(lambda: np.zeros(R.shape[0]))
    for j in range(R.shape[1]):
        col = R[:, j]
        kk = key[j] if key is not None else tuple(np.round(col / col.max(), 10))
        groups[kk] = groups[kk] + col
    keys = sorted(groups)
    return np.array([groups[kk] for kk in keys]).T, keys


def shuffled(C, xs):
    """Law of the multiset (class counts) of the users' reports."""
    law = {(): 1.0}
    law = {tuple([0] * C.shape[1]): 1.0}
    for x in xs:
        new = defaultdict(float)
        for cnt, pr in law.items():
            for j in range(C.shape[1]):
                if C[x, j] > 0:
                    c2 = list(cnt)
                    c2[j] += 1
                    new[tuple(c2)] += pr * C[x, j]
        law = new
    return law


def worst_case(C, k, n, eps_list):
    """max over x1 != x1' and the others' values of the exact delta(eps)."""
    worst = np.zeros(len(eps_list))
    for x1, x2 in itertools.permutations(range(k), 2):
        for z in itertools.combinations_with_replacement(range(k), n - 1):
            P, Q = shuffled(C, (x1,) + z), shuffled(C, (x2,) + z)
            worst = np.maximum(worst, [hockey(P, Q, e) for e in eps_list])
    return worst
