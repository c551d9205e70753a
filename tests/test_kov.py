"""accounting/kov.py: the optimal composition theorem's points compared exactly with eps_total."""
from fractions import Fraction

import mpmath as mp
import pytest

import ldpcompress as L
from ldpcompress.accounting.kov import kov_delta

# (eps0, k) whose float product k * eps0 rounds BELOW the exact product of the float eps0
CASES = [(e, k) for e in (0.1, 0.3, 0.7, 1.1, 0.01) for k in (3, 5, 7, 10, 30)
         if Fraction(k * e) < k * Fraction(e)]


def _exact_rr_delta(eps0: Fraction, k: int, eps: float) -> mp.mpf:
    """delta(eps) of k-fold binary randomized response with ratio e^eps0 (the worst eps0-DP pair),
    enumerated at 60 digits: losses (k - 2j) eps0 with binomial masses."""
    with mp.workdps(60):
        e0 = mp.mpf(eps0.numerator) / eps0.denominator
        p = mp.e ** e0 / (1 + mp.e ** e0)
        E = mp.e ** mp.mpf(eps)
        total = mp.mpf(0)
        for j in range(k + 1):
            loss = (k - 2 * j) * e0
            if loss > eps:
                P = mp.binomial(k, j) * p ** (k - j) * (1 - p) ** j
                Q = mp.binomial(k, j) * (1 - p) ** (k - j) * p ** j
                total += P - E * Q
        return total


def test_cases_exist():
    assert len(CASES) >= 5, CASES


@pytest.mark.parametrize("eps0,k", CASES)
def test_float_product_below_exact_certifies_nothing_at_eps_total(eps0, k):
    eps_total = k * eps0  # float product: an ulp below the exact one
    exact = _exact_rr_delta(Fraction(eps0), k, eps_total)
    assert exact > 0
    assert kov_delta(eps0, 0.0, k, eps_total) >= exact  # was 0.0
    res = L.Accountant().compose(L.PureDP(eps0), k).delta(eps_total)
    assert res.value >= exact
    for name, v in (res.others or {}).items():
        if v is not None:
            assert v >= exact, name
