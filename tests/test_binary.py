"""Binary randomized response accounted exactly over every dataset (accounting/binary.py,
kernels/binary_count.py; docs/theory.md §2.14), and the generic bracket's lower end.

References: tests/reference/binary.py (exact rationals over every bit vector of the other
users; mpmath sums of the count pair), tests/reference (k-RR enumerations).
"""
import math
from fractions import Fraction

import numpy as np
import pytest

from ldpcompress.accounting import amplification as A
from ldpcompress.accounting.binary import (
    BinaryCount,
    BinaryCountLowerProfile,
    BinaryLaw,
    GenericLowerProfile,
)
from ldpcompress.accounting.profiles import GeneralProfile
from ldpcompress.kernels.binary_count import (
    ROWS,
    CountLaw,
    count_capacity,
    count_delta,
    count_tables,
)
from reference.binary import count_law, dataset_delta, mp_pair_delta, mp_rr, worst_delta


def _tables(n1, n2, law, tol=1e-30, sweeps=1):
    cl = CountLaw(n1, n2, law.a, law.ac, law.b, law.bc, tol, 1e-6, sweeps)
    buf = np.zeros((ROWS, count_capacity(cl)))
    k0, w, left, right = count_tables(cl, buf)
    return k0, w, left, right, buf


def _pair(n1, n2, law, eps, upper, **kw):
    k0, w, left, right, buf = _tables(n1, n2, law, **kw)
    return count_delta(k0, w, left, right, buf, law.a, law.ac, law.b, law.bc, eps, upper)


LAWS = [BinaryLaw.rr(0.5), BinaryLaw.rr(4.0), BinaryLaw.rr(20.0),
        BinaryLaw.of(Fraction(9, 10), Fraction(3, 10)), BinaryLaw.of(Fraction(1, 50), Fraction(1, 3))]


# ---------------------------------------------------------------------------------------------
# The kernel: one count pair
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("n1,n2", [(0, 0), (1, 0), (0, 1), (3, 6), (0, 60), (40, 41), (150, 20)])
def test_pair_brackets_mpmath(law, n1, n2):
    """Upper >= the mpmath sum >= lower, both within 1e-9 of it (the sweeps' tight ratios)."""
    for frac in (0.0, 0.05, 0.3, 0.7, 0.98):
        eps = frac * law.eps0
        exact = float(mp_pair_delta(n1, n2, law.a, law.ac, law.b, law.bc, eps))
        up = _pair(n1, n2, law, eps, True)
        lo = _pair(n1, n2, law, eps, False)
        assert lo <= exact * (1 + 1e-13) + 1e-300
        assert up >= exact * (1 - 1e-13)
        if exact > 1e-25:  # windows leave out 1e-30
            assert up <= exact * (1 + 1e-9) and lo >= exact * (1 - 1e-9)


@pytest.mark.parametrize("law", LAWS[:4])
def test_pair_a_priori_only_is_sound(law):
    """Without the recurrence sweeps the ratio bounds are loose at small n but still bounds."""
    for n1, n2 in [(0, 60), (40, 41), (5, 150)]:
        for frac in (0.05, 0.3, 0.7):
            eps = frac * law.eps0
            exact = float(mp_pair_delta(n1, n2, law.a, law.ac, law.b, law.bc, eps))
            assert _pair(n1, n2, law, eps, True, sweeps=0) >= exact * (1 - 1e-13)
            assert _pair(n1, n2, law, eps, False, sweeps=0) <= exact * (1 + 1e-13) + 1e-300


def test_pair_pmf_bounds_against_exact_law():
    """The pmf and ratio bounds of the tables enclose the exact law (rationals)."""
    law = BinaryLaw.of(Fraction(7, 10), Fraction(1, 5))
    n1, n2 = 13, 17
    exact = count_law((1,) * n1 + (0,) * n2, Fraction(7, 10), Fraction(1, 5))
    k0, w, _, _, buf = _tables(n1, n2, law)
    for i in range(w):
        x = exact[k0 + i]
        assert buf[2, i] <= x * (1 + Fraction(1, 10**12)) and buf[3, i] >= x * (1 - Fraction(1, 10**12))
    for i in range(w + 1):
        k = k0 - 1 + i
        if 0 <= k < n1 + n2:
            r = exact[k + 1] / exact[k]
            assert buf[0, i] <= r * (1 + Fraction(1, 10**12)) and buf[1, i] >= r * (1 - Fraction(1, 10**12))


# ---------------------------------------------------------------------------------------------
# The worst case over datasets: brute force over every bit vector of the others
# ---------------------------------------------------------------------------------------------

RATIONAL_LAWS = [(Fraction(3, 4), Fraction(1, 4)), (Fraction(19, 20), Fraction(1, 20)),
                 (Fraction(3, 5), Fraction(2, 5)), (Fraction(9, 10), Fraction(3, 10)),
                 (Fraction(1, 3), Fraction(1, 50))]


@pytest.mark.parametrize("p1,q0", RATIONAL_LAWS)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_worst_case_brute_force(p1, q0, n):
    """upper >= the exact worst case over all 2^(n-1) datasets of the others >= lower, at
    rational e^eps (rationals throughout the reference)."""
    law = BinaryLaw.of(p1, q0)
    eng = BinaryCount(n, law)
    for e in (Fraction(1), Fraction(11, 10), Fraction(3, 2), Fraction(3), Fraction(9)):
        eps = math.log(e)
        worst, _ = worst_delta(n, p1, q0, e)
        up = eng.delta_upper(eps, 1e-30)
        lo = eng.delta_lower(eps, 1e-30)
        assert up >= float(worst) * (1 - 1e-14)
        assert lo <= float(worst) * (1 + 1e-14)
        if worst > 0:  # at small n every dataset is evaluated alone: exact to rounding
            assert up <= float(worst) * (1 + 1e-9) + 1e-15


def test_worst_dataset_is_not_always_the_extreme():
    """The brute force finds a middle dataset worst at small eps (why the search covers every m,
    docs/theory.md §2.14), and the profile follows it."""
    p1, q0 = Fraction(3, 4), Fraction(1, 4)
    worst, arg = worst_delta(3, p1, q0, Fraction(1))
    assert sum(arg) == 1  # one of the two others holds 1
    assert worst > dataset_delta(3, 0, p1, q0, Fraction(1))
    eng = BinaryCount(3, BinaryLaw.of(p1, q0))
    assert eng.delta_upper(0.0, 1e-30) >= float(worst) * (1 - 1e-14)


@pytest.mark.parametrize("eps0", [0.5, 2.0, 4.0, 17.0, 30.0])
def test_profile_brackets_mpmath_worst_case(eps0):
    """k = 2 through amplification.delta at n = 6: upper >= the mpmath worst case over all
    datasets (randomized response at eps0 formed at 50 digits) >= lower."""
    n = 6
    p, pc = mp_rr(eps0)
    for frac in (0.02, 0.2, 0.6, 0.95):
        eps = frac * eps0
        worst, _ = worst_delta(n, p, pc, math.e ** eps)  # mpmath numbers throughout
        res = A.delta(n, eps0, eps, k=2)
        assert res.method == "binary_exact" or res.value <= float(worst) * (1 + 1e-9)
        assert res.value >= float(worst) * (1 - 1e-12)
        assert res.lower <= float(worst) * (1 + 1e-12)


@pytest.mark.parametrize("law", [BinaryLaw.rr(1.0), BinaryLaw.rr(4.0),
                                 BinaryLaw.of(Fraction(4, 5), Fraction(1, 4))])
def test_block_bound_covers_each_dataset(law):
    """A block's bound (the revealed split of its middle users) is above the exact delta of
    every dataset in it (mpmath), n = 40."""
    n = 40
    eng = BinaryCount(n, law)
    for m1, m2 in [(0, 7), (5, 19), (12, 39)]:
        t = eng.block(m1, m2, 1e-30)
        t = eng._keep(t)
        for frac in (0.05, 0.3):
            eps = frac * law.eps0
            bound = eng._value(t, eps, True)
            for m in range(m1, m2 + 1):
                d = float(mp_pair_delta(m, n - 1 - m, law.a, law.ac, law.b, law.bc, eps))
                assert bound >= d * (1 - 1e-13)


@pytest.mark.parametrize("n,eps0", [(100, 1.0),
                                    pytest.param(240, 4.0, marks=pytest.mark.slow),
                                    pytest.param(300, 0.5, marks=pytest.mark.slow)])
def test_search_covers_every_dataset(n, eps0):
    """The eps search's upper value certifies delta at every dataset m (mpmath), and its lower
    value is the eps of one of them (so below the worst)."""
    law = BinaryLaw.rr(eps0)
    eng = BinaryCount(n, law)
    delta = 1e-6
    up, lo = eng.solve_epsilon(delta)
    assert lo <= up <= lo * (1 + 2e-3)
    # the solved upper eps makes delta at most 1e-6 for every dataset
    for m in list(range(6)) + list(range(6, n // 2 + 1, max(1, n // 16))):
        d = float(mp_pair_delta(m, n - 1 - m, law.a, law.ac, law.b, law.bc, up, dps=25))
        assert d <= delta * (1 + 1e-9)


def test_exact_beats_split_pair_at_the_issue_point():
    """n = 1e6, eps0 = 4, delta = 1e-6: the split pair gave 0.034280, the exact attack 0.024014;
    the exact count over datasets now answers within 0.2% of the attack."""
    res = A.epsilon(10**6, 4.0, 1e-6, k=2)
    assert res.method == "binary_exact"
    assert res.lower <= res.value <= res.lower * 1.002
    assert 0.0240 < res.lower < 0.02402  # the §2.6(a) attack's figure, 0.024014
    split = next(b for b in res.bounds if b.name == "krr_split")
    assert split.value > 1.4 * res.value


def test_oracles_with_the_law_of_binary_rr_pick_it():
    """KRR(2, eps0) and the yes/no example (a structure with krr_k == 2) are accounted by the
    exact count, their lower bounds with the realised eps0 rounded down."""
    from ldpcompress.randomizers import KRR
    from shipped import load_example
    for oracle in (KRR(2, 3.0), load_example()(3.0)):
        res = A.epsilon(10**5, delta=1e-6, oracle=oracle)
        assert res.method == "binary_exact"
        assert res.lower <= res.value <= res.lower * 1.002


@pytest.mark.slow
def test_max_eps0_uses_the_exact_count():
    """The inverse query of k = 2 calls the forward query, so it allows a larger eps0 than the
    split pair would."""
    from ldpcompress.accounting.inverse import max_eps0
    got = max_eps0(10**5, 0.1, 1e-6, k=2)
    assert A.epsilon(10**5, got, 1e-6, k=2).value <= 0.1
    assert A.krr_split_epsilon(10**5, got, 2, 1e-6).value > 0.1


def test_accountant_rounds_of_binary_rr_above_the_exact_composition():
    """Composed rounds of binary RR (KRRShuffledRound, k = 2: the exact count's connect-the-dots
    PLD, no blanket pair) certify at least the exact delta of the same rounds on every dataset m
    (products of the count laws, mpmath at 50 digits), n = 6, 1 and 2 rounds."""
    import itertools

    import mpmath as mp

    from ldpcompress.accounting.accountant import Accountant
    from ldpcompress.accounting.events import KRRShuffledRound
    from reference.binary import count_law, hockey
    n, eps0 = 6, 1.0
    p, pc = mp_rr(eps0)
    for times, eps in ((1, 0.3), (1, 0.7), (2, 0.5), (2, 1.2)):
        e = mp.e ** mp.mpf(eps)
        worst = mp.mpf(0)
        for m in range(n):
            others = (1,) * m + (0,) * (n - 1 - m)
            pl, ql = count_law((1,) + others, p, pc), count_law((0,) + others, p, pc)
            pp = [math.prod(t) for t in itertools.product(pl, repeat=times)]
            qq = [math.prod(t) for t in itertools.product(ql, repeat=times)]
            worst = max(worst, hockey(pp, qq, e))
        got = Accountant().compose(KRRShuffledRound(n, eps0, 2), times).delta(eps).value
        assert got >= float(worst), (times, eps, got, worst)
        # not far above (a different dataset per round can only add; the profile is a max)
        assert got <= float(worst) * 1.25, (times, eps, got, worst)


# ---------------------------------------------------------------------------------------------
# Asymmetric binary randomizers
# ---------------------------------------------------------------------------------------------

def test_law_rounds_toward_the_more_revealing_randomizer():
    law = BinaryLaw.of(Fraction(1, 3), Fraction(9, 10))  # relabelled: a = 2/3, b = 1/10
    assert law.a > law.b
    assert Fraction(law.a) >= Fraction(2, 3) and Fraction(law.b) <= Fraction(1, 10)
    assert Fraction(law.ac) <= Fraction(1, 3) and Fraction(law.bc) >= Fraction(9, 10)
    assert not law.symmetric and BinaryLaw.of(Fraction(3, 4), Fraction(1, 4)).symmetric
    with pytest.raises(ValueError, match="Pr\\[1\\|1\\] != Pr\\[1\\|0\\]"):
        BinaryLaw.of(Fraction(1, 2), Fraction(1, 2))
    with pytest.raises(ValueError, match="0 < Pr"):
        BinaryLaw.of(Fraction(1), Fraction(1, 2))


def test_asymmetric_checks_both_ends_of_the_datasets():
    """Without the mirror symmetry the worst dataset may be at either end; the search covers
    [0, n - 1] (brute force at n = 8 and an mpmath check of every m at n = 120)."""
    law = BinaryLaw.of(Fraction(1, 2), Fraction(1, 20))
    eng = BinaryCount(120, law)
    up, lo = eng.solve_epsilon(1e-5)
    for m in range(0, 120, 9):
        d = float(mp_pair_delta(m, 119 - m, law.a, law.ac, law.b, law.bc, up, dps=25))
        assert d <= 1e-5 * (1 + 1e-9)
    assert lo <= up


@pytest.mark.parametrize("p1,q0", [(Fraction(9, 10), Fraction(1, 5)),
                                   (Fraction(1, 2), Fraction(1, 100)),
                                   (Fraction(99, 100), Fraction(1, 2))])
def test_asymmetric_search_covers_every_dataset(p1, q0):
    """The blocks widen where the count's variance is large (far from the worst dataset): the
    upper eps still certifies delta at the datasets m (mpmath: both ends, every block's ends
    and a spread), n = 120."""
    law = BinaryLaw.of(p1, q0)
    n, delta = 120, 1e-6
    eng = BinaryCount(n, law)
    up, lo = eng.solve_epsilon(delta)
    assert lo <= up <= lo * (1 + 2e-3)
    assert len(eng.last_blocks) < n // 3  # blocks, not every dataset alone
    ms = {m for block in eng.last_blocks for m in block} | set(range(0, n, 30))
    for m in sorted(ms)[:: max(1, len(ms) // 12)] + [1, n - 2]:
        d = float(mp_pair_delta(m, n - 1 - m, law.a, law.ac, law.b, law.bc, up, dps=25))
        assert d <= delta * (1 + 1e-9)


def test_asymmetric_gap_at_huge_n():
    """n = 1e9, Pr[1|1] = 9/10, Pr[1|0] = 1/5: the upper eps within 1% of the attack (blocks of
    one width everywhere left 1.05%; fails before blocks followed the count's variance)."""
    up, lo = BinaryCount(10**9, BinaryLaw.of(Fraction(9, 10), Fraction(1, 5))).solve_epsilon(1e-6)
    assert lo <= up <= lo * 1.005


# ---------------------------------------------------------------------------------------------
# The generic bracket
# ---------------------------------------------------------------------------------------------

def test_generic_lower_is_the_most_vulnerable_krr():
    """n = 1e6, eps0 = 4: 3-RR's exact attack (0.03395) is above binary RR's (0.02401) and
    below FMT21's bound; the lower bound reports it and names k = 3."""
    res = A.epsilon(10**6, 4.0, 1e-6)
    low = next(b for b in res.bounds if not b.upper)
    assert "k = 3" in low.label
    assert 0.03394 < res.lower < 0.033953
    assert res.lower < res.value  # FMT21 Thm 3.2, unchanged


def test_generic_lower_takes_binary_where_it_is_larger():
    """Small eps0: binary RR's worst dataset beats 3-RR (n = 1e4, eps0 = 0.5)."""
    prof = GenericLowerProfile(10**4, 0.5)
    eps = A._eps_bound(prof, 1e-6).value
    assert prof.k_best == 2
    binary = A._eps_bound(BinaryCountLowerProfile(10**4, 0.5), 1e-6).value
    assert eps == pytest.approx(binary, rel=1e-9)


@pytest.mark.parametrize("n,eps0", [(2, 1.0), (3, 2.0), (4, 0.7)])
def test_generic_lower_below_every_general_bound(n, eps0):
    """Each candidate is an achievable value: never above FMT21's upper bound for any
    eps0-LDP randomizer, and never above the exact worst case of the k-RR it came from."""
    from reference import krr_worst_delta
    prof = GenericLowerProfile(n, eps0)
    for eps in (0.05, 0.3 * eps0, 0.8 * eps0):
        d = prof.delta(eps, 1e-30)
        assert d <= GeneralProfile(n, eps0).delta(eps, 1e-30)
        worst = krr_worst_delta(n, max(prof.k_best, 2), eps0, [eps])[0] if prof.k_best > 2 \
            else float(worst_delta(n, *mp_rr(eps0), math.e ** eps)[0])
        assert d <= worst * (1 + 1e-9)


def _asymmetric(p1, q0):
    """A binary randomizer stating its two probabilities (the yes/no example, relabelled)."""
    from shipped import load_example
    from ldpcompress.randomizers import BinaryStructure

    class Asym(load_example()):
        name = "asym-test"

        def __init__(self):
            super().__init__(1.0)
            self.eps = max(math.log(p1 / q0), math.log((1 - q0) / (1 - p1)))

        def shuffle_structure(self):
            return BinaryStructure("asym", (("p1", float(p1)), ("q0", float(q0))), p1, q0)
    return Asym()


def test_asymmetric_randomizer_through_every_query():
    """epsilon/delta, participation sampling and the accountant accept a BinaryStructure; the
    exact count beats the generic bound and sits on its attack; brute force at n = 7."""
    from ldpcompress.accounting.accountant import Accountant
    from ldpcompress.accounting.events import OracleShuffledRound
    p1, q0 = Fraction(1, 2), Fraction(1, 50)
    o = _asymmetric(p1, q0)
    res = A.epsilon(10**5, delta=1e-6, oracle=o)
    assert res.method == "binary_exact" and res.lower <= res.value <= res.lower * 1.002
    general = next(b for b in res.bounds if b.name == "general")
    assert general.value > 2 * res.value
    for e in (Fraction(11, 10), Fraction(2), Fraction(7)):
        worst, _ = worst_delta(7, p1, q0, e)
        small = A.delta(7, eps=math.log(e), oracle=o)
        assert small.value >= float(worst) * (1 - 1e-14) and small.lower <= float(worst) * (1 + 1e-14)
    sampled = A.epsilon(10**5, delta=1e-6, oracle=o, gamma=0.1, relation="add_remove")
    assert sampled.lower <= sampled.value
    acc = Accountant().compose(OracleShuffledRound(10**5, o), 5)
    assert acc.epsilon(1e-6).value < 5 * res.value


def test_binary_structure_is_validated():
    from ldpcompress.randomizers import BinaryStructure
    with pytest.raises(ValueError, match="p1 must be a Fraction in \\(0, 1\\)"):
        BinaryStructure("x", (), Fraction(1), Fraction(1, 2))
    with pytest.raises(ValueError, match="does not depend on the bit"):
        BinaryStructure("x", (), Fraction(1, 3), Fraction(1, 3))
    with pytest.raises(ValueError, match="q0 must be a Fraction"):
        BinaryStructure("x", (), Fraction(1, 3), 0.5)


def test_generic_lower_end_answers_when_binary_rr_needs_no_eps():
    """n = 200, eps0 = 3, delta = 0.14: binary RR's total variation (0.121) is below delta, so
    its eps is 0, while 3-RR's (0.161) is above: the upward bracket of 3-RR started at 0 and
    multiplied 0 by 1.5 forever (a hang, found by the hypothesis test of amplify). The lower end
    is now 3-RR's exact eps, at most the general upper bound."""
    from hang import no_hang

    import ldpcompress as L
    with no_hang("generic lower bound at n = 200, eps0 = 3, delta = 0.14", seconds=60):
        res = L.epsilon(200, 3.0, 0.14)
    assert 0 < res.lower <= res.value <= 3.0
    # the lower end is a k-RR attack's eps: its delta there is at least the target
    from ldpcompress.accounting.binary import GenericLowerProfile, window_tol
    g = GenericLowerProfile(200, 3.0)
    assert g.krr_profile(3).delta(res.lower * (1 - 1e-9), window_tol(0.14)) >= 0.14 * (1 - 1e-9)
