"""The solvers of accounting/solve.py: the eps(delta) solver (its answers and its number of
evaluations) and largest_below, the value-guided search of the largest certified parameter
(inverse.max_eps0 for oracles)."""
import math

import pytest

from ldpcompress.accounting.solve import epsilon_for_delta, largest_below, largest_feasible


def test_a_target_met_at_eps_zero_is_answered_in_a_few_evaluations():
    """delta(eps) = 1e-8 e^-eps is below 1e-6 everywhere: the answer is 0, found without walking
    the guess down to 1e-300 (about 340 evaluations before the eps = 0 probe; a near-identical
    table took 37 s that way)."""
    calls = []

    def delta_at(e):
        calls.append(e)
        return 1e-8 * math.exp(-e)
    assert epsilon_for_delta(delta_at, 1e-6, 1e-3, guess=1e-4) == 0.0
    assert len(calls) <= 8


def test_a_root_near_zero_is_still_bracketed():
    """delta(eps) = 2e-6 2^(-eps / 1e-12) crosses 1e-6 at eps = 1e-12, nine orders below the
    guess (delta(0) is above the target): the probe goes on past the eps = 0 check and the
    answer is the upper end of a bracket of the root."""
    def delta_at(e):
        return 2e-6 * 2.0 ** (-e / 1e-12)
    eps = epsilon_for_delta(delta_at, 1e-6, 1.0, guess=1e-3, rtol=1e-6)
    assert delta_at(eps) <= 1e-6 * (1 + 1e-14) and 1e-12 * (1 - 1e-14) <= eps <= 1e-12 * (1 + 2e-6)
    low = epsilon_for_delta(delta_at, 1e-6, 1.0, guess=1e-3, rtol=1e-6, upper=False)
    assert delta_at(low) > 1e-6 and 1e-12 * (1 - 2e-6) <= low <= 1e-12


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
