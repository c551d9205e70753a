"""Subset selection (randomizers/subset.py) at its smallest domain, k = 2: binary randomized
response, whose blanket profile has no mass outside {(1,0), (0,1)}; against an mpmath brute
force of the worst neighbouring datasets, and through the CLI."""
import mpmath as mp

import ldpcompress as L
from ldpcompress.accounting.blanket import structure
from ldpcompress.cli import main
from reference import mp_krr_worst_delta


def test_subset_selection_with_two_items_against_brute_force():
    """SubsetSelection(k=2) raised ZeroDivisionError in the blanket profile: its (b1, b2) law
    has no mass outside {(1,0), (0,1)}. It is binary randomized response: compare with the
    exact worst case over all neighbouring datasets (mpmath)."""
    oracle = L.SubsetSelection(2, 1.0)
    st = structure(oracle)
    with mp.workdps(50):
        a1 = mp.mpf(st.a1.numerator) / st.a1.denominator
        e0 = mp.log(a1 / (1 - a1))
        for n in (1, 2, 3, 4):
            for eps in (0.0, 0.3, 0.9):
                res = L.delta(n, eps=eps, oracle=oracle)
                assert mp.mpf(res.value) >= mp_krr_worst_delta(n, 2, e0, eps), (n, eps)
    assert L.epsilon(1000, delta=1e-6, oracle=oracle).method in ("blanket", "krr_blanket", "binary_exact")
    # the blanket profile itself (its (b1, b2) law has no "rest" class) against brute force
    from ldpcompress.accounting.blanket import BlanketProfile
    with mp.workdps(50):
        for n in (2, 3):
            prof = BlanketProfile(n, st)
            for eps in (0.3, 0.9):
                assert mp.mpf(prof.delta_at(eps)) >= mp_krr_worst_delta(n, 2, e0, eps)


def test_cli_subset_with_two_items():
    assert main(["amplify", "--oracle", "subset", "--k", "2", "--n", "1000", "--eps0", "1",
                 "--delta", "1e-6"]) == 0
    assert main(["demo", "--oracle", "subset", "--k", "2", "--n", "2000"]) == 0
