"""The eps(delta) solver (accounting/solve.py): its answers and its number of evaluations."""
import math

from ldpcompress.accounting.solve import epsilon_for_delta


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
