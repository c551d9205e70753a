"""Accounting asked of an oracle: the forward queries with oracle=, the inverse queries with an
oracle factory, the accountant's oracle rounds and the command line (docs/theory.md §2.5-2.6).
Expected values come from brute-force enumeration or from the oracle-free queries' own
definitions (e.g. the forward query at the inverse answer), never from recorded output."""
import itertools
import json
import math

import numpy as np
import pytest
from reference.blanket import classes, law_rappor, shuffled
from shipped import uncovered

import ldpcompress as L
from ldpcompress.accounting import blanket as BL
from ldpcompress.accounting import Accountant, OracleShuffledRound, ShuffledRound
from ldpcompress.cli import main
from ldpcompress.randomizers.hadamard import HadamardResponse
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.olh import OLH
from ldpcompress.randomizers.pirappor import PIRappor, VectorPIRappor
from ldpcompress.randomizers.rappor import OUE, RAPPOR
from ldpcompress.randomizers.subset import SubsetSelection

ORACLES = [lambda e: PIRappor(1000, e), lambda e: OUE(1000, e),
           lambda e: OLH(1000, e), lambda e: HadamardResponse(1000, e),
           lambda e: SubsetSelection(200, e), lambda e: PIRappor(1000, e, symmetric=True),
           lambda e: VectorPIRappor(1000, e, q=37),
           lambda e: RAPPOR(1000, e / 2),  # symmetric: replacement eps0 = 2 eps
           lambda e: HadamardResponse(1000, e, variant="basic")]
IDS = ["pi-rappor", "oue", "olh", "hadamard", "subset", "pi-rappor-sym", "pi-rappor-vector",
       "rappor-sym", "hadamard-basic"]
# the bound's distance to the exact attack: within 3 %, 7.1 % for symmetric RAPPOR (bound
# 0.10415, attack 0.09722 at n = 1e5, eps0 = 4)
GAP = {"rappor-sym": 1.08}


def test_cases_cover_every_shipped_oracle():
    # k-RR's oracle bounds are the k-RR ones (test_krr_oracle_keeps_its_own_bounds)
    assert not uncovered([make(4.0) for make in ORACLES] + [KRR(100, 4.0)])


@pytest.mark.parametrize("make,gap", [(m, GAP.get(i, 1.03)) for m, i in zip(ORACLES, IDS)],
                         ids=IDS)
def test_epsilon_lists_every_bound_and_reports_the_smallest(make, gap):
    o = make(4.0)
    res = L.epsilon(10 ** 5, delta=1e-6, oracle=o)
    st = BL.structure(o)
    names = [b.name for b in res.bounds]
    assert names[:3] == ["closed_form", "general", "blanket"] and names[-1] == "lower_oracle"
    ups = [b.value for b in res.bounds if b.upper and b.value is not None]
    assert res.value == min(ups) and res.method == "blanket"
    generic = L.epsilon(10 ** 5, st.eps0, 1e-6, lower=False).value
    assert res.value < 0.75 * generic                      # the oracle's own bound is tighter
    assert res.lower <= res.value <= res.lower * gap       # and close to its exact attack
    assert res.params["oracle"] == st.describe() and res.params["eps0"] == st.eps0
    d = L.delta(10 ** 5, eps=res.value, oracle=o)
    # each query sizes its windows for its own answer (both proven bounds): they agree to 1e-9
    assert d.value <= 1e-6 * (1 + 1e-9) and d.lower <= d.value


def test_reference_figures_through_the_api():
    """Independently computed (delta = 1e-6, k = 1000, n = 1e6, eps0 = 4)."""
    res = L.epsilon(10 ** 6, delta=1e-6, oracle=OUE(1000, 4.0))
    assert res.value == pytest.approx(0.02357, abs=1e-5)
    assert res.lower == pytest.approx(0.02333, abs=2e-5)  # 0.023344: the reference rounds down
    assert [b.value for b in res.bounds if b.name == "general"][0] == pytest.approx(0.04931, abs=1e-5)


def test_krr_oracle_keeps_its_own_bounds():
    o = KRR(100, 4.0)
    res = L.epsilon(10 ** 4, delta=1e-6, oracle=o)
    same = L.epsilon(10 ** 4, BL.structure(o).eps0, 1e-6, k=100)
    assert res.value == same.value and res.method == "krr_blanket"
    # the oracle's attack uses its realised eps0 rounded down (a lower bound), not up
    assert same.lower * (1 - 1e-9) <= res.lower <= same.lower


def test_oracle_arguments_are_checked():
    o = PIRappor(100, 2.0)
    with pytest.raises(ValueError, match="oracle"):
        L.epsilon(1000, 2.0, 1e-6, oracle=o)
    with pytest.raises(ValueError, match="oracle"):
        L.epsilon(1000, delta=1e-6, oracle=o, k=100)
    with pytest.raises(TypeError, match="oracle"):
        L.epsilon(1000, delta=1e-6, oracle="pi-rappor")
    with pytest.raises(TypeError, match="delta"):
        L.epsilon(1000, oracle=o)
    res = L.epsilon(1000, delta=1e-6, oracle=PIRappor(2, 2.0))  # two items: no attack, said so
    assert res.lower is None and any(b.name == "lower" and "3 items" in b.note for b in res.bounds)


@pytest.mark.parametrize("make", ORACLES[:3], ids=IDS[:3])
def test_max_eps0_with_a_factory_is_certified_and_maximal(make):
    n, eps, delta = 10 ** 5, 1.0, 1e-6
    e0 = L.max_eps0(n, eps, delta, make)
    assert L.epsilon(n, delta=delta, oracle=make(e0), lower=False).value <= eps
    assert L.epsilon(n, delta=delta, oracle=make(e0 * 1.01), lower=False).value > eps
    assert e0 > L.max_eps0(n, eps, delta)  # the oracle's own bound allows more than the generic


def test_max_eps0_deletion_oracle_and_refusing_factory():
    """A symmetric (deletion) RAPPOR's replacement eps0 is twice its parameter: the search starts
    below eps; a factory that refuses large parameters bounds the search."""
    make = lambda e: RAPPOR(100, e, symmetric=True)  # noqa: E731
    e0 = L.max_eps0(10 ** 4, 0.5, 1e-6, make)
    assert L.epsilon(10 ** 4, delta=1e-6, oracle=make(e0), lower=False).value <= 0.5
    olh = L.max_eps0(5, 30.0, 1e-6, lambda e: OLH(50, e))  # OLH refuses eps > 20
    assert olh <= 20.0


def test_min_n_with_an_oracle():
    o = PIRappor(1000, 8.0)
    n = L.min_n(None, 1.0, 1e-6, oracle=o)
    assert L.epsilon(n, delta=1e-6, oracle=o, lower=False).value <= 1.0
    assert L.epsilon(n - 1, delta=1e-6, oracle=o, lower=False).value > 1.0
    assert n < L.min_n(BL.structure(o).eps0, 1.0, 1e-6)


# ---------------------------------------------------------------------------------------------
# The accountant's oracle rounds
# ---------------------------------------------------------------------------------------------

def test_oracle_round_dominates_one_round_and_beats_the_generic_round():
    o = PIRappor(1000, 4.0)
    one = Accountant().compose(OracleShuffledRound(10 ** 5, o)).epsilon(1e-6)
    single = L.epsilon(10 ** 5, delta=1e-6, oracle=o)
    assert single.value <= one.value <= 1.05 * single.value
    many = Accountant().compose(OracleShuffledRound(10 ** 5, o), times=50).epsilon(1e-6)
    generic = Accountant().compose(ShuffledRound(10 ** 5, o.eps), times=50).epsilon(1e-6)
    assert many.value < 0.6 * generic.value
    assert OracleShuffledRound(10 ** 5, o) == OracleShuffledRound(10 ** 5, PIRappor(1000, 4.0))


def test_two_oracle_rounds_above_brute_force():
    """Two shuffled rounds of OUE on 3 items with n = 3: the composed bound is at least the exact
    delta of the 2-fold product of the shuffled laws, worst case over datasets."""
    o = OUE(3, 1.2)
    R, _ = law_rappor(o)
    C, _ = classes(R)
    acct = Accountant().compose(OracleShuffledRound(3, o), times=2)
    for eps in (0.3, 1.0, 1.8):
        worst = 0.0
        for x1, x2 in itertools.permutations(range(3), 2):
            for z in itertools.combinations_with_replacement(range(3), 2):
                P, Q = shuffled(C, (x1,) + z), shuffled(C, (x2,) + z)
                keys = sorted(set(P) | set(Q))
                p = np.array([P.get(s, 0.0) for s in keys])
                q = np.array([Q.get(s, 0.0) for s in keys])
                pp, qq = np.outer(p, p).ravel(), np.outer(q, q).ravel()
                e = math.exp(eps)
                worst = max(worst, np.maximum(pp - e * qq, 0).sum(), np.maximum(qq - e * pp, 0).sum())
        assert acct.delta(eps).value >= worst * (1 - 1e-9)


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

def test_cli_amplify_oracle(capsys):
    assert main(["amplify", "--oracle", "pi-rappor", "--k", "1000", "--eps0", "4", "--n", "1e5",
                 "--delta", "1e-6", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    out = doc["results"]
    direct = L.epsilon(10 ** 5, delta=1e-6, oracle=PIRappor(1000, 4.0))
    assert out["value"] == direct.value and out["method"] == "blanket"
    assert doc["params"]["oracle"].startswith("pi-rappor(k=1000")
    assert main(["amplify", "--oracle", "oue", "--k", "1000", "--n", "1e5", "--eps", "1",
                 "--delta", "1e-6", "--inverse", "--json"]) == 0
    inv = json.loads(capsys.readouterr().out)["results"]
    assert inv["value"] == L.max_eps0(10 ** 5, 1.0, 1e-6, lambda e: OUE(1000, e))


@pytest.mark.parametrize("argv, message", [
    (["--oracle", "pi-rappor", "--eps0", "4", "--n", "1e5", "--delta", "1e-6"], "--k"),
    (["--oracle", "pi-rappor", "--k", "100", "--eps0", "4", "--n", "1e5", "--delta", "1e-6",
      "--delta0", "1e-9"], "--delta0"),
    (["--oracle", "olh", "--k", "100", "--eps0", "25", "--n", "1e5", "--delta", "1e-6"], "eps"),
])
def test_cli_amplify_oracle_refusals(capsys, argv, message):
    assert main(["amplify"] + argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ldpcompress: error:") and message in err
