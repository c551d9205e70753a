"""Where the exact shuffled delta of scalar randomizers sits between the blanket bound and the
attack (docs/theory.md §2.11): exact rational enumeration of the shuffled law of the binned
randomizer at n = 2, 3, worst case over every input pair and every dataset of the others on a
grid; bench/scalar_gap.py measures the same at larger n."""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import ldpcompress.accounting.amplification as L
from ldpcompress.accounting import scalar as S
from ldpcompress.randomizers import GaussianScalar, LaplaceScalar
from reference.shuffle import hockey, shuffled_law


def _exact_table(noise, scale, inputs, edges):
    """R_x(cell) as exact rationals: differences of the (float) cdf at the edges, 0 and 1 at the
    ends, so every row sums to 1 exactly (the binned randomizer up to 1e-16 per cell)."""
    dist = stats.laplace if noise == "laplace" else stats.norm
    rows = []
    for x in inputs:
        cdf = [Fraction(0)] + [Fraction(float(dist.cdf((e - x) / scale))) for e in edges] + [Fraction(1)]
        rows.append([b - a for a, b in zip(cdf, cdf[1:])])
    return rows


def _worst(table, n, e):
    """Exact max over ordered input pairs and the others' multisets of the shuffled delta,
    with its dataset (x1, x1', others)."""
    m = len(table)
    best, arg = Fraction(-1), None
    for others in itertools.combinations_with_replacement(range(m), n - 1):
        laws = [shuffled_law([table[x]] + [table[o] for o in others]) for x in range(m)]
        for a, b in itertools.permutations(range(m), 2):
            d = hockey(laws[a], laws[b], e, "forward")
            if d > best:
                best, arg = d, (a, b, others)
    return best, arg


CASES = [("laplace", LaplaceScalar(0.0, 1.0, 2.0), 0.5, np.linspace(0.0, 1.0, 7)),
         ("gaussian", GaussianScalar(0.0, 1.0, 1.0), 1.0, np.linspace(-2.0, 3.0, 7))]


@pytest.mark.parametrize("noise,oracle,scale,edges", CASES)
@pytest.mark.parametrize("n", [2, 3])
def test_exact_worst_case_is_the_attack_dataset_and_below_the_blanket(noise, oracle, scale,
                                                                         edges, n):
    inputs = [0.0, 0.5, 1.0]
    table = _exact_table(noise, scale, inputs, edges)
    for e in (Fraction(3, 2), Fraction(2), Fraction(3)):
        eps = math.log(e)
        worst, (a, b, others) = _worst(table, n, e)
        # the worst dataset is the attack's: user 1 at the two ends, every other user at one end
        assert {a, b} == {0, 2} and len(set(others)) == 1 and others[0] in (0, 2)
        ends = max(hockey(shuffled_law([table[x]] + [table[z]] * (n - 1)),
                          shuffled_law([table[y]] + [table[z]] * (n - 1)), e, "forward")
                   for x, y in ((0, 2), (2, 0)) for z in (0, 2))
        assert ends == worst
        # others at lo alone: the same up to the cdf's rounding (the mirror image of others at hi)
        lo_attack = max(hockey(shuffled_law([table[x]] + [table[0]] * (n - 1)),
                               shuffled_law([table[y]] + [table[0]] * (n - 1)), e, "forward")
                        for x, y in ((0, 2), (2, 0)))
        assert float(lo_attack) >= float(worst) * (1 - 1e-12)
        # the continuous randomizer's blanket covers its binned post-processing
        st = oracle.shuffle_structure()
        up = S.blanket_delta(n, S.blanket_law(st.noise, st.half_width), eps, 1e-16)
        assert up >= float(worst) * (1 + 1e-12)
        if noise == "laplace":  # the query (min with one report's bound) and its attack
            res = L.delta(n, eps=eps, oracle=oracle)
            assert res.value >= float(worst) * (1 + 1e-12)
            assert res.lower <= res.value
        # the library's attack machinery on the discretised law: below the exact value, close
        r = [np.array([float(v) for v in row]) for row in table]
        atk = max(S.attack_delta(n, S.atoms_law(r[0], r[x] / r[0], r[y] / r[0], 1.0), eps, 1e-16,
                                 resolution=256) for x, y in ((0, 2), (2, 0)))
        assert float(worst) * 0.97 <= atk <= float(worst) * (1 + 1e-12)
