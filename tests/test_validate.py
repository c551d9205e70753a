"""Parameter validation (core/validate.py) as the public API uses it: integers beyond the double
range are clear errors, never a traceback or a silent rounding; huge integers are taken exactly."""
import numpy as np
import pytest

import ldpcompress as L
from ldpcompress.accounting import PureDP

BIG = (2 ** 1024, -(2 ** 1024), 10 ** 400)


@pytest.mark.parametrize("make", [
    lambda v: L.KRR(v, 1.0), lambda v: L.KRR(5, v), lambda v: L.PIRappor(5, v),
    lambda v: L.OLH(v, 1.0), lambda v: L.PrivUnit2(v, 1.0), lambda v: L.ShuffledRound(v, 1.0),
    lambda v: L.epsilon(v, 1.0, 1e-6), lambda v: L.epsilon(100, v, 1e-6),
    lambda v: L.Accountant(h=v), lambda v: L.Accountant(orders=[v]),
    lambda v: L.Accountant().compose(PureDP(1.0), times=v),
    lambda v: L.PIRappor(5, 1.0).intervals(np.zeros(5), 10, level=v),
    lambda v: L.compress(L.PrivUnit2(4, 1.0), v), lambda v: L.project_simplex(np.ones(3), v),
    lambda v: L.Gaussian(sigma=v), lambda v: L.Laplace(scale=1.0, sensitivity=v)])
def test_integers_beyond_the_double_range_are_clear_errors(make):
    for v in BIG:
        with pytest.raises((ValueError, TypeError), match=r"\b(must|got)\b") as err:
            make(v)
        assert len(str(err.value)) < 300  # the 400-digit number is not echoed whole


def test_huge_integer_parameters_are_taken_exactly():
    with pytest.raises(ValueError, match="blocks must be an integer in"):
        L.epsilon(100, 1.0, 1e-6, k=3, blocks=2 ** 62 + 1)
    from ldpcompress.core import validate as V
    assert V.integer_at_least(2 ** 62 - 1, "x", 0, 2 ** 62) == 2 ** 62 - 1
