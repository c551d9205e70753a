"""Frequency oracles (SPEC S6, S5.4): exact privacy of PI-RAPPOR, pairwise independence,
unbiasedness with the stated variance, histogram algorithms, wire format, bad input."""
import itertools
import math

import numpy as np
import pytest

from ldpcompress.entropy import Entropy, deterministic_source
from ldpcompress.oracles import (HadamardOracle, KRROracle, OLHOracle, RAPPOROracle,
                                 SubsetOracle)
from ldpcompress.pirappor import FieldReports, PIRappor, VectorPIRappor


def exact_report_law(oracle, x):
    """Pr[(a, b) | x] from the client algorithm: a uniform, r uniform in [0,s) w.p. a1 else in
    [s, p), b = r - a (x+1), enumerated over every (a, r)."""
    p, s = oracle.p, oracle.s
    law = np.zeros((p, p))
    for a in range(p):
        for r in range(p):
            pr = (oracle.a1 / s if r < s else (1 - oracle.a1) / (p - s)) / p
            law[a, (r - a * (x + 1)) % p] += pr
    return law


@pytest.mark.parametrize("symmetric", [False, True])
def test_pi_rappor_exact_privacy(symmetric):
    oracle = PIRappor(6, 1.2, symmetric=symmetric, p=13)
    laws = [exact_report_law(oracle, x) for x in range(oracle.k)]
    assert all(abs(l.sum() - 1) < 1e-12 for l in laws)
    worst = max(np.max(l1 / l2) for l1 in laws for l2 in laws)
    if symmetric:  # deletion eps w.r.t. the uniform law on F_p^2
        worst = max(np.max(np.maximum(l * 13 ** 2, 1 / (l * 13 ** 2))) for l in laws)
    assert math.log(worst) == pytest.approx(oracle.eps, rel=1e-12)
    assert oracle.eps <= 1.2 + 1e-12  # the realised eps is never above the requested one


def test_pi_rappor_bits_are_pairwise_independent():
    p, s = 11, 3
    for j1, j2 in itertools.combinations(range(1, p), 2):
        both = sum(((a * j1 + b) % p < s) and ((a * j2 + b) % p < s)
                   for a in range(p) for b in range(p))
        one = sum((a * j1 + b) % p < s for a in range(p) for b in range(p))
        assert both == s * s and one == s * p


def test_vector_pi_rappor_pairwise_independence():
    q, t, s = 3, 2, 1
    vecs = list(itertools.product(range(q), repeat=t))
    for v1, v2 in itertools.combinations(vecs, 2):
        both = 0
        for a in itertools.product(range(q), repeat=t):
            for b in range(q):
                h1 = (sum(x * y for x, y in zip(a, v1)) + b) % q
                h2 = (sum(x * y for x, y in zip(a, v2)) + b) % q
                both += h1 < s and h2 < s
        assert both == s * s * q ** (t - 1)


ORACLES = [
    lambda: PIRappor(64, 2.0), lambda: PIRappor(64, 1.0, symmetric=True),
    lambda: VectorPIRappor(64, 1.5, q=11), lambda: KRROracle(64, 2.0),
    lambda: RAPPOROracle(64, 2.0), lambda: RAPPOROracle(64, 2.0, symmetric=True),
    lambda: SubsetOracle(64, 1.0), lambda: OLHOracle(64, 2.0), lambda: HadamardOracle(64, 2.0),
]


@pytest.mark.parametrize("make", ORACLES)
def test_estimates_unbiased_with_stated_variance(make):
    oracle = make()
    n = 20_000
    data_rng = np.random.default_rng(1)  # simulated users' data, not privacy coins
    xs = data_rng.zipf(1.3, n) % oracle.k
    f = np.bincount(xs, minlength=oracle.k)
    reps = oracle.randomize_many(xs, Entropy(deterministic_source(2)))
    est = oracle.estimate(reps)
    z = (est - f) / np.sqrt(oracle.variance(n, f))
    assert np.max(np.abs(z)) < 5
    assert abs(np.mean(z ** 2) - 1) < 5 * math.sqrt(2 / oracle.k)  # the variance is right
    j = int(np.argmax(f))
    assert oracle.estimate_one(reps, j) == pytest.approx(est[j])


def test_histogram_algorithms_agree_exactly():
    oracle = PIRappor(500, 3.0)
    xs = np.random.default_rng(3).integers(0, 500, 30_000)
    reps = oracle.randomize_many(xs)
    direct = oracle.counts(reps, "direct")
    assert np.array_equal(direct, oracle.counts(reps, "enum"))
    assert all(direct[j] == oracle.count_one(reps, j) for j in (0, 17, 499))
    # a = 0 reports hit every item or none
    zero = FieldReports(np.zeros(3, np.int64), np.array([0, oracle.s, 1]), oracle.p)
    assert np.array_equal(oracle.counts(zero, "enum"), oracle.counts(zero, "direct"))
    assert np.all(oracle.counts(zero, "enum") == 2)


@pytest.mark.parametrize("eps", [1e-4, 0.01, 0.3])
def test_small_eps_keeps_a_positive_realised_eps(eps):
    oracle = PIRappor(5, eps)
    assert 2 * oracle.s < oracle.p and 0 < oracle.eps <= eps
    assert oracle.a1 > oracle.a0


def test_field_choice_and_wire_format():
    oracle = PIRappor(1000, 4.0)
    assert oracle.p > 1000 and oracle.p >= 100 * (math.exp(4) + 1)
    assert oracle.a0 >= 1 / (math.exp(4) + 1) and oracle.eps <= 4.0
    assert oracle.bits_per_report == 2 * math.ceil(math.log2(oracle.p))
    reps = oracle.randomize_many(np.arange(1000))
    data = oracle.pack(reps)
    assert len(data) == math.ceil(1000 * oracle.bits_per_report / 8)
    back = oracle.unpack(data, 1000)
    assert np.array_equal(back.a, reps.a) and np.array_equal(back.b, reps.b)


@pytest.mark.parametrize("call, exc", [
    (lambda: PIRappor(10, 1.0).randomize_many(np.array([10])), ValueError),
    (lambda: PIRappor(10, 1.0).randomize_many(np.array([-1])), ValueError),
    (lambda: PIRappor(10, 1.0).randomize_many([0.5]), TypeError),
    (lambda: PIRappor(10, 1.0, p=15), ValueError),
    (lambda: PIRappor(10, 1.0, p=7), ValueError),
    (lambda: PIRappor(1, 1.0), ValueError),
    (lambda: PIRappor(10, 0.0), ValueError),
    (lambda: PIRappor(10, 1.0).unpack(b"\x00" * 3, 5), ValueError),
    (lambda: PIRappor(10, 1.0, p=13).unpack(b"\xff\xff", 1), ValueError),
    (lambda: PIRappor(10, 1.0, p=13).counts(PIRappor(10, 1.0, p=17).randomize_many([1])),
     ValueError),
    (lambda: PIRappor(10, 1.0).counts(np.zeros((3, 2))), TypeError),
    (lambda: PIRappor(10, 1.0, p=13).counts(FieldReports(np.array([1.5]), np.array([2.0]), 13)),
     TypeError),
    (lambda: PIRappor(10, 1.0, p=13).counts(FieldReports(np.array([13]), np.array([2]), 13)),
     ValueError),
    (lambda: PIRappor(10, 1.0, p=13).count_one(FieldReports(np.array([1]), np.array([-2]), 13), 0),
     ValueError),
    (lambda: VectorPIRappor(10, 1.0, q=9), ValueError),
    (lambda: VectorPIRappor(10, 0.01, q=5), ValueError),
    (lambda: PIRappor(10, 0.01, p=13), ValueError),
    (lambda: VectorPIRappor(10, 1.0, q=5).counts(np.full((2, 3), 7)), ValueError),
    (lambda: KRROracle(1, 1.0), ValueError),
])
def test_bad_input(call, exc):
    with pytest.raises(exc):
        call()
