"""Hadamard response, general and basic variants (docs/theory.md §6.3, §2.5): the code against
an independent construction (tests/reference/hadamard.py), the client's law, the estimator's
error against OUE's, compression, saved parameters, and the shuffle accounting against the
exact shuffled output law at n <= 4."""
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from reference import hadamard as REF

from ldpcompress.accounting import Accountant, OracleShuffledRound
from ldpcompress.accounting import blanket as BL
from ldpcompress.core.entropy import Entropy, deterministic_source
from ldpcompress.core.prg import PRG
from ldpcompress.kernels import hadamard as KH
from ldpcompress.randomizers import registry
from ldpcompress.randomizers.hadamard import HadamardResponse, code_bits, primitive_poly
from ldpcompress.randomizers.rappor import OUE
from ldpcompress.randomizers.structure import ShuffleStructure

TOL = 1e-30


def sets_of(o):
    """C_x from the oracle's own rows (every syndrome bit 0)."""
    rows = o.rows()
    return [frozenset(y for y in range(o.big_k)
                      if all(bin(int(r) & y).count("1") % 2 == 0 for r in rows[x]))
            for x in range(o.k)]


# -- the code ------------------------------------------------------------------------------

@pytest.mark.parametrize("k,t,m", [(3, 2, 4), (5, 2, 4), (6, 2, 6), (21, 2, 6), (9, 3, 6),
                                   (10, 3, 9), (2, 1, 2), (7, 1, 3)])
def test_code_is_the_reference_spread(k, t, m):
    o = HadamardResponse(k, 2.0, t=t)
    assert (o.m, o.big_k) == (m, 1 << m) and o.bits_per_report == m
    ref = REF.support_sets(k, t, m) if t > 1 else [
        frozenset(y for y in range(1 << m) if bin((x + 1) & y).count("1") % 2 == 0)
        for x in range(k)]
    assert sets_of(o) == ref
    s, big_k = (1 << m) >> t, 1 << m
    for x, c in enumerate(ref):
        assert len(c) == s
        for c2 in ref[x + 1:]:
            assert len(c & c2) * 4 ** t == big_k  # independent Bern(2^-t) support bits


def test_primitive_polynomials_generate_the_field():
    for m in range(2, 13):  # the reference's walk finds the same (smallest) polynomial
        assert primitive_poly(m) == (1 << m) | REF.field_powers(m)[m]
    # the degree-24 polynomial: z has order 2^24 - 1 (checked by its prime factors' powers)
    poly, order = primitive_poly(24), (1 << 24) - 1
    assert KH.gf_pow(2, order, 24, poly) == 1
    for q in (3, 5, 7, 13, 17, 241):
        assert order % q == 0 and KH.gf_pow(2, order // q, 24, poly) != 1


def test_code_bits_is_the_smallest_spread():
    for k in (2, 3, 5, 63, 64, 1000, 4096):
        for t in range(1, 7):
            m = code_bits(k, t)
            assert m % t == 0 and ((1 << m) - 1) // ((1 << t) - 1) >= k
            assert m == t or ((1 << (m - t)) - 1) // ((1 << t) - 1) < k


@pytest.mark.parametrize("k,t", [(50, 4), (1000, 6), (300, 8), (4096, 12)])
def test_duals_flip_one_syndrome_bit(k, t):
    o = HadamardResponse(k, 6.0, t=t)
    rows, duals = o._tables()
    for x in range(0, k, max(1, k // 40)):
        for i in range(t):
            for j in range(t):
                assert bin(int(rows[x, i]) & int(duals[x, j])).count("1") % 2 == (i == j)


# -- the client ---------------------------------------------------------------------------

def test_client_law_cell_by_cell():
    """Every report cell's frequency against R[x][y] (a1 / s on C_x, (1 - a1)/(K - s) off it),
    within 5 binomial standard deviations."""
    o = HadamardResponse(5, 1.5, t=2)
    law = REF.output_law(REF.support_sets(5, 2, o.m), o.big_k, REF.realised_a1(o.a1c))
    n = 40_000
    ent = Entropy(deterministic_source(7))  # test-only seeded coins
    for x in range(o.k):
        reps = o.randomize_many(np.full(n, x), ent)
        got = np.bincount(reps, minlength=o.big_k)
        p = np.array([float(q) for q in law[x]])
        assert np.all(np.abs(got - n * p) <= 5 * np.sqrt(n * p * (1 - p)) + 1)


def test_basic_variant_reports_unchanged():
    """The basic variant's client is the one saved report sets were made with: the same coins
    give the same reports as its rule (uniform index, low bit of x + 1 flipped on a wrong sign)."""
    o = HadamardResponse(10, 1.0, variant="basic")
    xs = np.arange(10).repeat(50)
    a = o.randomize_many(xs, Entropy(deterministic_source(3)))
    ent = Entropy(deterministic_source(3))
    plus = ent.uniform(xs.size) >= 1.0 / (1.0 + math.exp(1.0))
    idx = ent.integers(16, xs.size)
    sign = np.array([bin(int(v) & int(i)).count("1") % 2 == 0 for v, i in zip(xs + 1, idx)])
    low = (xs + 1) & -(xs + 1)
    assert np.array_equal(a, np.where(sign != plus, idx ^ low, idx))


# -- the estimator: within 1.5x OUE's error at k = 1000, eps = 4 ---------------------------

def test_variance_formula_near_oue():
    """a0 = 2^-t exactly, so Var = n a0 (1 - a0)/(a1 - a0)^2 at f = 0: OUE's 4 e^eps/(e^eps-1)^2
    up to the density's rounding to a power of 2 (worst (1 + r)^2/(4 r), r = sqrt 2)."""
    for k in (16, 256, 1000, 4096):
        for eps in (1.0, 4.0, 8.0):
            o = HadamardResponse(k, eps)
            e = math.exp(eps)
            ratio = o.variance(1, 0.0) / (4 * e / (e - 1) ** 2)
            assert ratio <= 1.04, (k, eps, o.t, ratio)
    basic = HadamardResponse(1000, 4.0, variant="basic")
    e = math.exp(4.0)
    assert basic.variance(1, 0.0) == pytest.approx(((e + 1) / (e - 1)) ** 2, rel=1e-12)


def test_mse_within_1_5x_oue_at_k1000_eps4():
    """Measured squared error over the k items against the variance formula (tolerance 5 sd of
    the sum of squares) and against OUE's formula (the target: at most 1.5x)."""
    k, eps, n = 1000, 4.0, 200_000
    o, oue = HadamardResponse(k, eps), OUE(k, eps)
    xs = np.random.default_rng(11).zipf(1.2, n) % k  # test-only simulated data
    f = np.bincount(xs, minlength=k)
    est = o.estimate(o.randomize_many(xs, Entropy(deterministic_source(12))))  # test-only
    sse = float(np.sum((est - f) ** 2))
    var = o.variance(n, f)
    expect, sd = float(np.sum(var)), math.sqrt(2 * float(np.sum(var ** 2)))
    assert abs(sse - expect) <= 5 * sd
    oue_mse = float(np.sum(oue.variance(n, f)))
    assert expect <= 1.5 * oue_mse and sse <= 1.5 * oue_mse
    basic = HadamardResponse(k, eps, variant="basic")
    assert float(np.sum(basic.variance(n, f))) > 10 * oue_mse  # the 14x


# -- identity, saved parameters, hostile parameters ----------------------------------------

def test_saved_parameters_without_variant_mean_the_basic_one():
    old = registry.build("hadamard", {"k": 100, "eps": 2.0})
    assert old.variant == "basic" and old == HadamardResponse(100, 2.0, variant="basic")
    assert registry.spec(old) == OLD_SPEC
    assert old.big_k == 128 and old.a0 == 0.5 and old.a1 == 1.0 / (1.0 + math.exp(-2.0))
    st = old.shuffle_structure()
    assert st.identity == ("hadamard", (("k", 100), ("K", 128), ("a1", old.a1)))
    a1c = 1.0 / (1.0 + math.exp(2.0))
    assert st.a == Fraction(1, 2) and st.a1 == 1 - Fraction(math.ceil(Fraction(a1c) * 2 ** 53),
                                                             2 ** 53)
    assert st.t3 == Fraction(1, 4)
    for o in (old, HadamardResponse(100, 2.0), HadamardResponse(100, 5.0, t=3)):
        again = registry.build("hadamard", registry.spec(o)["params"])
        assert again == o and again.shuffle_structure() == o.shuffle_structure()
    assert HadamardResponse(100, 2.0) != old


# what main wrote for HadamardResponse(100, 2.0) before the general variant (its params() was
# {"k", "eps"}): ledgers and report-set manifests hold exactly this object
OLD_SPEC = {"randomizer": "hadamard", "params": {"k": 100, "eps": 2.0}}


def test_old_ledger_loads_as_the_basic_variant_with_the_same_epsilon():
    """A ledger saved before the general variant names {"k", "eps"}: it must load as the basic
    one, not the new default (whose law differs), and give the basic variant's epsilon."""
    basic = HadamardResponse(100, 2.0, variant="basic")
    acct = Accountant().compose(OracleShuffledRound(10 ** 4, basic), times=3)
    state = json.loads(acct.to_json())
    assert state["events"][0]["oracle"] == OLD_SPEC  # the basic one is still written so
    back = Accountant.from_json(json.dumps(state))
    assert back.events == acct.events
    assert back.events[0][0].structure == basic.shuffle_structure()
    assert back.events[0][0].structure != HadamardResponse(100, 2.0).shuffle_structure()
    assert back.epsilon(1e-6).value == acct.epsilon(1e-6).value


def test_old_manifest_loads_as_the_basic_variant(tmp_path):
    """A report set's manifest stores the spec, and the reader refuses any spec that is not
    exactly what a writer records for the randomizer it rebuilds: {"k", "eps"} must still be
    the basic variant's, and its reports must estimate the same counts."""
    from ldpcompress.scale.manifest import read_manifest
    from ldpcompress.scale.writer import write_reports

    basic = HadamardResponse(100, 2.0, variant="basic")
    reports = basic.randomize_many(np.arange(400) % 100, Entropy(deterministic_source(4)))
    write_reports(tmp_path / "set", basic, reports, shards=1)
    doc = json.loads((tmp_path / "set" / "manifest.json").read_text())
    assert doc["randomizer"] == OLD_SPEC
    again, _ = read_manifest(tmp_path / "set" / "manifest.json")
    assert again == basic and again.variant == "basic"
    assert np.array_equal(again.estimate(reports), basic.estimate(reports))
    doc["randomizer"] = {"randomizer": "hadamard", "params": {**OLD_SPEC["params"],
                                                              "variant": "basic"}}
    (tmp_path / "set" / "manifest.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="not what a writer records"):
        read_manifest(tmp_path / "set" / "manifest.json")


@pytest.mark.parametrize("call, match", [
    (lambda: HadamardResponse(10, 1.0, variant="fast"), "variant must be one of"),
    (lambda: HadamardResponse(10, 1.0, variant=1), "variant must be one of"),
    (lambda: HadamardResponse(10, 1.0, t=0), "t must be"),
    (lambda: HadamardResponse(10, 1.0, t=13), "t must be"),
    (lambda: HadamardResponse(10, 1.0, t=2.5), "t must be"),
    (lambda: HadamardResponse(10, 1.0, t="3"), "t must be"),
    (lambda: HadamardResponse(10, 1.0, variant="basic", t=2), "t must be 1"),
    (lambda: HadamardResponse(10 ** 6, 4.0, t=10), "needs 30-bit reports"),
    (lambda: registry.build("hadamard", {"k": 10, "eps": 1.0, "t": 2}), "t must be 1"),
    (lambda: HadamardResponse(10, 1.0).estimate(np.array([0, 64])), r"outside \[0, 64\)"),
])
def test_bad_parameters_refused_by_name(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# -- compression (FT21): rho = uniform report ----------------------------------------------

def test_compression_law_matches_the_client():
    o = HadamardResponse(6, 3.0, t=2)
    law = REF.output_law(REF.support_sets(6, 2, o.m), o.big_k, Fraction(o.a1))
    for x in range(o.k):
        for y in range(o.big_k):
            assert o.ratio(x, y) == pytest.approx(float(law[x][y]) * o.big_k, rel=1e-12)
    lo, hi = o.ratio_bounds()
    assert o.deletion_eps == pytest.approx(max(math.log(hi), -math.log(lo)), rel=1e-12)
    assert o.compression_refusal() is None
    assert "already shorter" in HadamardResponse(6, 3.0, variant="basic").compression_refusal()
    seeds = Entropy(deterministic_source(5)).seed_array(64)
    ys = o.decode_seeds(seeds)
    assert [o.sample(PRG(bytes(s))) for s in seeds] == ys.tolist()
    xs = np.arange(64) % o.k
    assert np.allclose(o.ratios_from_seeds(xs, seeds), [o.ratio(int(x), int(y))
                                                         for x, y in zip(xs, ys)])


# -- shuffle accounting against the exact shuffled law --------------------------------------

# (k, eps, t): m = 2t (every third item in the span of two: t3 = P(1,0)), the default t at
# eps = 2 (t = 3, K = 64) and m = 3t (three independent items: the natural-dataset attack
# applies; n = 4 there would take ~30 min of exact rationals, so n <= 3)
EXACT = [(3, 1.2, 2), (4, 0.7, 2), (4, 2.0, 3), (6, 1.0, 2)]
EXACT_N = [pytest.param(c, n, id=f"k{c[0]}-eps{c[1]}-t{c[2]}-n{n}",
                        marks=[pytest.mark.slow] if (c[0], n) in ((6, 3), (4, 4)) else [])
           for c in EXACT for n in (1, 2, 3, 4) if not (c[0] == 6 and n == 4)]
EPS = [0.0, 0.05, 0.2, 0.5, 0.9]


def exact_setup(k, eps, t):
    o = HadamardResponse(k, eps, t=t)
    sets = REF.support_sets(k, t, o.m)
    law = REF.output_law(sets, o.big_k, REF.realised_a1(o.a1c))
    return o, sets, law


@pytest.mark.parametrize("k,eps,t", EXACT)
def test_structure_is_the_exact_pair_law(k, eps, t):
    o, sets, law = exact_setup(k, eps, t)
    st = o.shuffle_structure()
    big_k = o.big_k
    assert st.a == Fraction(len(sets[0]), big_k) and st.a1 == sum(law[0][y] for y in sets[0])
    for x1 in range(k):
        for x2 in range(k):
            if x1 != x2:
                both = len(sets[x1] & sets[x2])
                assert (Fraction(both, big_k), Fraction(len(sets[x1]) - both, big_k)) \
                    == (st.p11, st.p10)
    t3 = Fraction(len(sets[0] - sets[1] - sets[2]), big_k)
    assert st.t3 == t3 and st.attack_items == (0, 1, 2)
    assert isinstance(st, ShuffleStructure) and st.independent


@pytest.mark.parametrize("case,n", EXACT_N)
def test_blanket_above_and_attack_below_the_exact_delta(case, n):
    check_exact(*case, n)


def check_exact(k, eps, t, n):
    o, sets, law = exact_setup(k, eps, t)
    worst = REF.worst_delta(law, sets, o.big_k, n, EPS)
    up, low = BL.blanket_profile(n, o), BL.lower_profile(n, o)
    view = REF.attack_view_delta(law, sets, o.big_k, n, low.items, EPS)
    for e, w, v in zip(EPS, worst, view):
        assert up.delta(e, TOL) >= float(w) * (1 - 1e-12) - 1e-15, (n, e)
        got = low.delta(e, TOL)
        assert got <= float(w) * (1 + 1e-12) + 1e-300 and got <= up.delta(e, TOL)
        assert got >= float(v) * (1 - 1e-9) - 1e-15  # at least its own view's exact delta
    if n == 1:  # one user: the blanket bound is the local hockey-stick divergence
        for e, w in zip(EPS, worst):
            assert up.delta(e, TOL) == pytest.approx(float(w), rel=1e-9, abs=1e-15)
