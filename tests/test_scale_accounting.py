"""Shuffle accounting at internet scale (docs/theory.md §2.13): no bound grows with n, k-RR keeps
its own blanket bound past the size of its tables, and n = 1e9 answers (no timing asserted)."""
import numpy as np
import pytest

import ldpcompress as L
from ldpcompress.randomizers.hadamard import HadamardResponse
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.olh import OLH
from ldpcompress.randomizers.pirappor import PIRappor
from ldpcompress.randomizers.privunit import PrivUnit2
from ldpcompress.randomizers.rappor import OUE, RAPPOR
from ldpcompress.randomizers.subset import SubsetSelection

DELTA = 1e-6
ORACLES = {"oue": lambda e: OUE(100, e), "pi-rappor": lambda e: PIRappor(100, e),
           "rappor-sym": lambda e: RAPPOR(100, e / 2, symmetric=True),
           "hadamard": lambda e: HadamardResponse(100, e), "olh": lambda e: OLH(100, e),
           "subset": lambda e: SubsetSelection(100, e), "krr": lambda e: KRR(10, e),
           "privunit2": lambda e: PrivUnit2(20, e)}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "subset" else n
                                  for n in sorted(ORACLES)])  # subset: ~12 s in a full run
def test_oracle_bound_never_grows_with_n(name):
    """More users only hide more (docs/theory.md §2.13): eps(delta) must be non-increasing in n,
    densely where blocking and method choice change fastest (small n), coarsely beyond."""
    ns = sorted(set(int(x) for x in np.geomspace(2, 3000, 40)) | {10 ** 4, 10 ** 5})
    for eps0 in (1.0, 4.0, 8.0):
        o = ORACLES[name](eps0)
        values = [L.epsilon(n, delta=DELTA, oracle=o, lower=False).value for n in ns]
        for (n1, v1), (n2, v2) in zip(zip(ns, values), zip(ns[1:], values[1:])):
            assert v2 <= v1, (eps0, n1, v1, n2, v2)


def test_krr_keeps_its_own_bound_beyond_its_tables():
    """k-RR at n = 1e7, 1e8: the blanket by the pair kernel, not the generic bound, and the
    values keep falling with n (the §2.4(b) tables stop at ~1e8 terms)."""
    prev = None
    for n in (10 ** 6, 10 ** 7, 10 ** 8):
        r = L.epsilon(n, 2.0, DELTA, k=100)
        assert r.method in ("krr_blanket", "krr_pair"), (n, r.method)
        general = next(b.value for b in r.bounds if b.name == "general")
        assert r.value < 0.25 * general
        assert r.lower is not None and r.lower <= r.value <= r.lower * 1.001
        if prev is not None:
            assert r.value < prev
        prev = r.value


@pytest.mark.parametrize("make", [lambda: OUE(1000, 2.0), lambda: HadamardResponse(1000, 2.0),
                                  lambda: KRR(100, 2.0)], ids=["oue", "hadamard", "krr"])
def test_billion_users(make):
    """n = 1e9 answers with the oracle's own bound, below the generic bound, above its attack,
    and below its value at 1e8."""
    o = make()
    big = L.epsilon(10 ** 9, delta=DELTA, oracle=o)
    assert big.method in ("blanket", "krr_pair")
    assert big.lower <= big.value < L.epsilon(10 ** 8, delta=DELTA, oracle=o, lower=False).value
    general = next(b.value for b in big.bounds if b.name == "general")
    assert big.value < 0.6 * general
