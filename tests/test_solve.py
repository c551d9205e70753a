"""accounting/solve.py: largest_below, the value-guided search of the largest certified
parameter (inverse.max_eps0 for oracles)."""
import math

import pytest

from ldpcompress.accounting.solve import largest_below, largest_feasible


def counted(fn):
    calls = []

    def wrapped(x):
        calls.append(x)
        return fn(x)
    return wrapped, calls


@pytest.mark.parametrize("target", [0.5, 2.0, 37.0])
def test_largest_below_smooth_value(target):
    # value x^3: the answer is target^(1/3), known in closed form
    value, calls = counted(lambda x: x ** 3)
    got = largest_below(value, target, 1e-3, 100.0, rtol=1e-9)
    root = target ** (1.0 / 3.0)
    assert got ** 3 <= target                     # the returned end is verified
    assert root - got <= 1e-9 * root * 1.01       # and within rtol of the boundary
    same, plain = counted(lambda x: x ** 3 <= target)
    ref = largest_feasible(same, 1e-3, 100.0, rtol=1e-9)
    assert abs(ref - got) <= 2e-9 * root
    assert len(calls) < len(plain)                # guided: fewer evaluations than bisection


def test_largest_below_infinite_values_and_steps():
    # a value that jumps to inf (a refused parameter) beyond 3.25, steps of 0.5 below it
    value = lambda x: math.inf if x > 3.25 else math.floor(2 * x) / 2  # noqa: E731
    got = largest_below(value, 2.0, 0.1, 50.0, rtol=1e-12)
    assert value(got) <= 2.0 and 2.5 - got <= 2.5 * 1e-11


def test_largest_below_cap_and_refusals():
    assert largest_below(lambda x: 0.0, 1.0, 0.5, 7.0) == 7.0
    with pytest.raises(ValueError, match=r"value\(lo = 2.0\) = 4.0 is above the target 1.0"):
        largest_below(lambda x: x * x, 1.0, 2.0, 10.0)
