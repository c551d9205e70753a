"""Shuffle accounting of table randomizers (accounting/table.py, kernels/table.py;
docs/theory.md §2.15): the blanket bound and the attack bracket the exact worst case of the
shuffled reports (brute force over every dataset of the other users, exact rationals), the
kernel agrees with mpmath, tables of the shipped oracles give their dedicated bounds, and the
queries, inverse queries and the accountant work through the contract."""
import math
from fractions import Fraction

import numpy as np
import pytest
from reference.table import (dataset_delta, krr_table, mp_attack, mp_blanket, random_table,
                             subset_table, unary_table, worst_delta, yes_no_table)

import ldpcompress as L
import ldpcompress.accounting.table as T
from ldpcompress.kernels.table import exact_excess
from ldpcompress.randomizers import KRR, OUE, SubsetSelection, TableRandomizer


def _tables(count, seed=3):
    rng = np.random.default_rng(seed)
    shapes = [(2, 2), (2, 3), (3, 3), (3, 4), (2, 4)]
    return [TableRandomizer(random_table(rng, *shapes[i % 5], (0.5, 1.5, 3.0)[i % 3]))
            for i in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize("r", _tables(10), ids=lambda r: r.describe())
def test_bounds_bracket_the_exact_worst_case_of_the_shuffled_reports(r, monkeypatch):
    st = r.table_structure
    rows = st.rows()
    for n in (1, 2, 3, 4, 5) if st.k * st.m <= 9 else (1, 2, 3, 4):
        for eps in (0.02, 0.3, 1.0):
            if eps >= st.eps0:
                continue
            worst, _ = worst_delta(rows, n, eps)
            up = T.TableBlanketProfile(n, st).delta(eps, 1e-30)
            lo = T.TableLowerProfile(n, st).delta(eps, 1e-30)
            assert lo <= worst <= up, (n, eps)
            if n == 1:  # one report: the blanket is the local divergence, the attack exact
                assert up == pytest.approx(float(worst), rel=1e-12)
                assert lo == pytest.approx(float(worst), rel=1e-12)
            with monkeypatch.context() as mp:  # the lattice routes, at the same n
                mp.setattr(T, "EXACT_TERMS", -1)
                assert T.TableLowerProfile(n, st).delta(eps, 1e-30) <= worst \
                    <= T.TableBlanketProfile(n, st).delta(eps, 1e-30), (n, eps)


@pytest.mark.parametrize("r", _tables(5, seed=8), ids=lambda r: r.describe())
def test_the_exact_kernel_agrees_with_mpmath(r):
    st = r.table_structure
    rows = st.rows()
    up_p, lo_p = T.TableBlanketProfile(7, st), T.TableLowerProfile(7, st)
    for n in (1, 3, 7, 20):
        for eps in (0.05, 0.4):
            for i, law in enumerate(up_p.laws()[:3]):
                a, b = _pair_of(law, st)
                want = float(mp_blanket(rows, n, eps, a, b))
                got_up = exact_excess(*law.atoms(eps, True), n, True) / n
                got_lo = exact_excess(*law.atoms(eps, False), n, False) / n
                assert got_lo <= want <= got_up
                assert got_up == pytest.approx(want, rel=1e-9, abs=1e-300)
            for law in lo_p.laws()[:4]:
                a, b, c = _triple_of(law, st)
                want = float(mp_attack(rows, n, eps, a, b, c))
                got_lo = exact_excess(*law.atoms(eps, False), n, False) / n
                assert got_lo <= want and got_lo == pytest.approx(want, rel=1e-9, abs=1e-300)


def _pair_of(law, st):
    """The ordered pair (a, b) whose blanket law ``law`` is (by its density ratios)."""
    t = st.floats()
    mu = np.array([float(v) for v in st.mins()])
    for a in range(st.k):
        for b in range(st.k):
            if a != b and T.TableBlanketProfile(1, st).laws() and \
                    T._Law(t[a] / mu, t[b] / mu, mu, float(1 - sum(st.mins()))).key == law.key:
                return a, b
    raise AssertionError("no pair has this law")


def _triple_of(law, st):
    t = st.floats()
    for c in range(st.k):
        for a in range(st.k):
            for b in range(st.k):
                if a != b and T._Law(t[a] / t[c], t[b] / t[c], t[c], 0.0).key == law.key:
                    return a, b, c
    raise AssertionError("no triple has this law")


@pytest.mark.parametrize("r", _tables(3, seed=11), ids=lambda r: r.describe())
def test_the_lattice_routes_bracket_mpmath_at_moderate_n(r, monkeypatch):
    """Forced onto the lattice (split for the blanket, lumps for the attack), the bounds stay on
    their side of the exact multinomial sum and close to it."""
    monkeypatch.setattr(T, "EXACT_TERMS", -1)
    st = r.table_structure
    rows = st.rows()
    n, eps = 40, 0.1
    up_law = T.TableBlanketProfile(n, st).laws()[0]
    a, b = _pair_of(up_law, st)
    want = float(mp_blanket(rows, n, eps, a, b, dps=30))
    got = T._upper_excess(up_law, n, eps, T.RESOLUTION)
    assert want <= got <= want * 1.05 + 1e-12
    lo_law = T.TableLowerProfile(n, st).laws()[0]
    a, b, c = _triple_of(lo_law, st)
    want = float(mp_attack(rows, n, eps, a, b, c, dps=30))
    got = T._lower_excess(lo_law, n, eps, T.ATTACK_RESOLUTION)
    assert want * 0.9 - 1e-12 <= got <= want
    assert 0.0 <= T._jensen(lo_law, n, lo_law.atoms(eps, False)[0]) <= want


@pytest.mark.slow
def test_a_rare_far_output_keeps_both_bounds_sound_and_finite():
    """Entries at the 1e-12 floor: a far atom of tiny mass that no lattice step resolves.
    The upper bound falls back to one report's divergence or the generic bound, the attack
    keeps the far atom by Jensen given its count; both stay on their sides (brute force at
    n = 3) and answer at n = 1e5."""
    r = TableRandomizer([[0.5, 0.5 - 1e-12, 1e-12], [1e-12, 0.5, 0.5 - 1e-12], [0.3, 0.3, 0.4]])
    st = r.table_structure
    worst, _ = worst_delta(st.rows(), 3, 5.0)
    assert T.TableLowerProfile(3, st).delta(5.0, 1e-30) <= worst \
        <= T.TableBlanketProfile(3, st).delta(5.0, 1e-30)
    res = L.epsilon(10 ** 5, delta=1e-6, oracle=r)
    assert 0.0 < res.lower <= res.value <= r.eps


def test_the_attack_is_the_exact_delta_of_its_datasets():
    r = _tables(3, seed=5)[2]
    st = r.table_structure
    rows = st.rows()
    for n, eps in ((3, 0.1), (4, 0.3)):
        lo = T.TableLowerProfile(n, st).delta(eps, 1e-30)
        exact = [float(dataset_delta(rows, n, eps, a, b, c)) for a in range(st.k)
                 for b in range(st.k) for c in range(st.k) if a != b]
        assert lo <= max(exact) * (1 + 1e-12)
        assert any(v == pytest.approx(lo, rel=1e-10) for v in exact)


# -- worked checks: tables of the shipped oracles give their dedicated bounds -------------------

def _worked(name, eps0):
    """(table randomizer, the shipped randomizer it copies, exactly as realised)."""
    if name == "yes-no":
        from shipped import load_example
        r = load_example()(eps0)
        return TableRandomizer(yes_no_table(r.shuffle_structure().a1)), r
    if name == "krr":
        r = KRR(5, eps0)
        return TableRandomizer(krr_table(5, r.shuffle_structure().a1)), r
    if name == "oue":
        r = OUE(4, eps0)
        st = r.shuffle_structure()
        return TableRandomizer(unary_table(4, st.a, st.a1)), r
    r = SubsetSelection(6, eps0, d=2)
    return TableRandomizer(subset_table(6, 2, r.shuffle_structure().a1)), r


@pytest.mark.slow
@pytest.mark.parametrize("name", ["yes-no", "krr", "oue", "subset"])
@pytest.mark.parametrize("eps0", [1.0, 4.0])
def test_tables_of_the_oracles_give_their_dedicated_bounds(name, eps0):
    table, oracle = _worked(name, eps0)
    assert table.eps == pytest.approx(oracle.shuffle_structure().eps0, rel=1e-12)
    for n in (10 ** 4, 10 ** 5):
        ours = L.epsilon(n, delta=1e-6, oracle=table)
        theirs = L.epsilon(n, delta=1e-6, oracle=oracle, lower=False)
        # a 2 x 2 table (yes/no) is binary RR: the exact count, as its dedicated oracle
        assert ours.method == ("binary_exact" if table.m == 2 else "blanket_table")
        assert ours.value == pytest.approx(theirs.value, rel=1e-3), (n, ours, theirs)
        assert ours.lower <= ours.value


def test_the_table_blanket_is_never_below_the_unblocked_krr_blanket():
    """Both are the same blanket of k-RR, the k-RR one summed exactly (blocks=None): the
    table's lattice may only add to it, and little."""
    r = KRR(3, 2.0)
    table = TableRandomizer(krr_table(3, r.shuffle_structure().a1))
    st = table.table_structure
    for n in (50, 2000):
        for eps in (0.1, 0.4):
            exact = L.accounting.amplification.krr_blanket_delta(n, st.eps0, 3, eps,
                                                                 blocks=None).value
            ours = T.TableBlanketProfile(n, st).delta(eps, 1e-30)
            assert exact * (1 - 1e-9) <= ours <= exact * 1.01 + 1e-15


def test_a_random_table_beats_the_generic_bound_with_its_attack_below():
    rng = np.random.default_rng(5)
    p = np.exp(rng.uniform(0, 2.0, size=(5, 7)))
    r = TableRandomizer((p / p.sum(axis=1, keepdims=True)).tolist())
    res = L.epsilon(10 ** 5, delta=1e-6, oracle=r)
    generic = L.epsilon(10 ** 5, r.eps, 1e-6, lower=False).value
    assert res.method == "blanket_table" and res.value < 0.7 * generic
    # the blanket reveals every non-blanket user: for a generic table it stays above the attack
    # by about sqrt(chi2 of the blanket / chi2 of the attack) (docs/theory.md §2.15)
    t = r.table
    mu = t.min(axis=0)
    chi_b = max(((t[a] - t[b]) ** 2 / mu).sum() for a in range(5) for b in range(5) if a != b)
    chi_c = max(((t[a] - t[b]) ** 2 / t[c]).sum() for a in range(5) for b in range(5)
                for c in range(5) if a != b)
    assert res.lower < res.value
    assert res.value / res.lower == pytest.approx(math.sqrt(chi_b / chi_c), rel=0.05)


# -- through the contract: delta, inverse queries, the accountant, sampled rounds ---------------

@pytest.mark.slow
def test_queries_inverse_and_accountant_through_the_contract():
    def table_of(eps0):
        a1 = KRR(3, eps0).shuffle_structure().a1
        return TableRandomizer(krr_table(3, a1))
    n = 10 ** 4
    d = L.delta(n, eps=0.3, oracle=table_of(2.0))
    assert d.method == "blanket_table" and 0 < d.lower <= d.value
    ours = L.max_eps0(n, 0.5, 1e-6, table_of)
    theirs = L.max_eps0(n, 0.5, 1e-6, lambda e: KRR(3, e))
    assert ours == pytest.approx(theirs, rel=2e-3)
    acct = L.Accountant().compose(L.OracleShuffledRound(n, table_of(2.0)), times=5)
    krr = L.Accountant().compose(L.OracleShuffledRound(n, KRR(3, 2.0)), times=5)
    assert acct.epsilon(1e-6).value == pytest.approx(krr.epsilon(1e-6).value, rel=0.02)
    again = L.Accountant.from_json(acct.to_json())
    assert again.events == acct.events
    sampled = L.epsilon(n, delta=1e-6, oracle=table_of(2.0), gamma=0.1)
    generic = L.epsilon(n, table_of(2.0).eps, 1e-6, gamma=0.1)
    assert sampled.value == pytest.approx(generic.value, rel=1e-12)


def test_a_table_too_large_for_the_pair_scan_gets_the_generic_bound():
    k, m = 20, 16  # k (k-1) m = 6080 > 4096, m within 64
    rng = np.random.default_rng(2)
    p = rng.uniform(1.0, 2.0, size=(k, m))
    r = TableRandomizer((p / p.sum(axis=1, keepdims=True)).tolist())
    res = L.epsilon(10 ** 4, delta=1e-6, oracle=r)
    assert res.method == "general"
    note = [b.note for b in res.bounds if b.name == "blanket_table"][0]
    assert "k (k-1) m" in note


def test_profiles_refuse_other_structures():
    with pytest.raises(TypeError, match="TableStructure"):
        T.TableBlanketProfile(100, KRR(3, 1.0).shuffle_structure())


def test_a_two_by_two_table_is_accounted_as_a_binary_randomizer():
    """A 2 x 2 table is binary randomized response (possibly asymmetric): its shuffled count is
    accounted exactly over the others' datasets (§2.14), as KRR(2) is, not by the table's
    looser min-blanket (0.0432 against the exact 0.0357 for yes/no at eps0 = 1, n = 1e4)."""
    import ldpcompress as L
    from ldpcompress.randomizers.structure import BinaryStructure
    p = Fraction(3, 4)
    sym = TableRandomizer([[p, 1 - p], [1 - p, p]])
    st = sym.shuffle_structure()
    assert isinstance(st, BinaryStructure) and (st.p1, st.q0) == (sym.table_structure.entry(1, 1),
                                                                 sym.table_structure.entry(0, 1))
    res = L.epsilon(10**4, delta=1e-6, oracle=sym)
    krr = L.epsilon(10**4, delta=1e-6, oracle=L.KRR(2, sym.eps))
    assert res.method == "binary_exact" and res.lower <= res.value <= krr.value * (1 + 1e-9)
    asym = TableRandomizer([[Fraction(9, 10), Fraction(1, 10)], [Fraction(4, 5), Fraction(1, 5)]])
    res = L.epsilon(10**4, delta=1e-6, oracle=asym)
    assert res.method == "binary_exact" and res.lower <= res.value
