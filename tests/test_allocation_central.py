"""Central noise under random allocation (accounting/allocation_central.py, docs/theory.md §3.8):
the upper PLD's delta >= the mpmath reference >= the lower PLD's, the k-of-T reduction, the
balls-and-bins DP-SGD target against Poisson sampling, validation, ledgers and dp_accounting."""
import math

import numpy as np
import pytest

from reference.allocation_central import gaussian_delta, gaussian_k_of_t_delta, laplace_delta

from ldpcompress.accounting import (Accountant, AllocatedGaussian, AllocatedLaplace, Gaussian,
                                    PoissonSampledGaussian)
from ldpcompress.accounting import pld as P
from ldpcompress.accounting import event_pld as EPLD
from ldpcompress.accounting.allocation_central import (GaussianStep, LaplaceStep,
                                                       allocation_pld)

H = 2e-5


def _bracket(law, steps, eps, per_record=1, h=H):
    """(upper delta, lower delta) of each direction: dirs[0] remove, dirs[1] add."""
    up = allocation_pld(law, steps, per_record, 1, h, "up")
    down = allocation_pld(law, steps, per_record, 1, h, "down")
    out = []
    for i in (0, 1):
        one_up = P.PLD(h, True, (up.dirs[i],), up.steps)
        one_down = P.PLD(h, False, (down.dirs[i],), down.steps)
        out.append((one_up.delta(eps), one_down.delta(eps)))
    return out


@pytest.mark.parametrize("sigma,steps", [(1.0, 2), (2.0, 2), (0.7, 2), (1.0, 3), (3.0, 3)])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.4, 1.0])
def test_gaussian_pld_brackets_mpmath(sigma, steps, eps):
    brackets = _bracket(GaussianStep(1.0 / sigma), steps, eps)
    for (up, low), direction in zip(brackets, ("remove", "add")):
        exact = gaussian_delta(sigma, steps, eps, direction)
        assert low <= exact + 1e-10 <= up + 2e-10, (direction, low, exact, up)
        # tight, not just sound; below sigma = 1 the heavy tail of Z coarsens the lattice
        assert up - low < (0.02 if sigma >= 1.0 else 0.1) * exact + 1e-6


@pytest.mark.slow  # nested mpmath quadrature: ~10 s a case
@pytest.mark.parametrize("b,steps", [(1.0, 2), (0.5, 2), (2.0, 2)])
@pytest.mark.parametrize("eps", [0.0, 0.6])
def test_laplace_pld_brackets_mpmath(b, steps, eps):
    brackets = _bracket(LaplaceStep(b), steps, eps)
    for (up, low), direction in zip(brackets, ("remove", "add")):
        exact = laplace_delta(b, steps, eps, direction, dps=15)
        assert low <= exact + 1e-10 <= up + 2e-10, (direction, low, exact, up)
        assert up - low < 0.02 * exact + 1e-6


@pytest.mark.parametrize("eps", [0.0, 0.3, 0.8])
def test_two_of_three_reduction_bounds_exact(eps):
    """2 of 3 steps <= one Gaussian composed with 1 of 2 (the block-partition reduction)."""
    (rem_up, _), (add_up, _) = _bracket(GaussianStep(1.0), 3, eps, per_record=2, h=1e-4)
    assert rem_up >= gaussian_k_of_t_delta(1.0, eps, "remove") - 1e-10
    assert add_up >= gaussian_k_of_t_delta(1.0, eps, "add") - 1e-10


def test_one_step_is_the_mechanism():
    a = Accountant(h=1e-4).compose(AllocatedGaussian(2.0, steps=1)).epsilon(1e-6).value
    b = Accountant(h=1e-4).compose(Gaussian(2.0)).epsilon(1e-6, method="pld").value
    assert a == pytest.approx(b, rel=1e-12)


def test_heavy_tail_falls_back_to_the_mechanism():
    """sigma 0.3: the lattice would be coarser than Z's spread; the one-step Gaussian bounds
    the allocation (joint convexity) and there is no round-down grid."""
    event = AllocatedGaussian(0.3, steps=100)
    assert EPLD.pld(event, 1e-3, "down") is None
    alloc = Accountant(h=1e-3).compose(event).epsilon(1e-6).value
    alone = Accountant(h=1e-3).compose(Gaussian(0.3)).epsilon(1e-6, method="pld").value
    assert alone <= alloc <= alone * (1 + 1e-12)  # (its sigma rounded down by 4 ulps)


def test_monte_carlo_sanity():
    """A seeded simulation of S (test-only randomness) lands between the grids' deltas, within
    5 standard errors: not a proof, a check that the law is the right one."""
    rng = np.random.default_rng(7)  # test-only
    steps, sigma, eps = 50, 1.5, 0.3
    z = np.exp(rng.standard_normal((200_000, steps)) / sigma - 0.5 / sigma ** 2)
    vals = np.maximum(z.mean(axis=1) - math.exp(eps), 0.0)
    est, se = vals.mean(), vals.std() / math.sqrt(vals.size)
    (up, low), _ = _bracket(GaussianStep(1.0 / sigma), steps, eps)
    assert low - 5 * se <= est <= up + 5 * se


@pytest.mark.slow
def test_balls_and_bins_target_against_poisson():
    """60,000 records, 3 epochs, sigma 4, one record per step: at most the random-allocation
    package's 0.0281 (arXiv 2602.17284) and within 10% of Poisson sampling at 1/60,000."""
    alloc = Accountant().compose(AllocatedGaussian(4.0, steps=60_000, epochs=3)).epsilon(1e-6)
    poisson = Accountant().compose(PoissonSampledGaussian(4.0, 1 / 60_000),
                                   times=180_000).epsilon(1e-6)
    assert alloc.value <= 0.0281
    assert alloc.value <= 1.1 * poisson.value
    assert alloc.lower is not None and 0.98 * alloc.value <= alloc.lower <= alloc.value


def test_composes_with_other_events_and_round_trips():
    acct = Accountant()
    acct.compose(AllocatedGaussian(3.0, steps=500, per_record=2, epochs=2))
    acct.compose(AllocatedLaplace(5.0, steps=100), times=2)
    acct.compose(Gaussian(10.0))
    res = acct.epsilon(1e-6)
    again = Accountant.from_json(acct.to_json())
    assert again.events == acct.events
    assert again.epsilon(1e-6).value == res.value
    alone = Accountant().compose(AllocatedGaussian(3.0, steps=500, per_record=2, epochs=2))
    assert res.value > alone.epsilon(1e-6).value  # more events, more privacy spent


@pytest.mark.parametrize("kwargs,match", [
    (dict(sigma=4.0, steps=0), r"steps must be an integer in \[1, 100000000\]"),
    (dict(sigma=4.0, steps=10, per_record=11), r"per_record \(at most steps = 10\).*\[1, 10\]"),
    (dict(sigma=4.0, steps=10, per_record=0), r"per_record .*\[1, 10\]"),
    (dict(sigma=4.0, steps=10, epochs=0), r"epochs must be an integer in \[1, 1000000\]"),
    (dict(sigma=4.0, steps=2.5), r"steps must be an integer"),
    (dict(sigma=0.1, steps=10), r"sigma / sensitivity must be in \[0.25, 10000\]"),
    (dict(sigma=-1.0, steps=10), r"sigma"),
    (dict(sigma=float("nan"), steps=10), r"sigma"),
])
def test_bad_parameters_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        AllocatedGaussian(**kwargs)


def test_laplace_bad_scale_is_refused():
    with pytest.raises(ValueError, match=r"scale / sensitivity must be in \[0.1, 10000\]"):
        AllocatedLaplace(0.01, steps=10)


def test_edited_ledger_is_refused(tmp_path):
    acct = Accountant().compose(AllocatedGaussian(4.0, steps=100))
    path = tmp_path / "ledger.json"
    acct.save(path)
    path.write_text(path.read_text().replace('"per_record": 1', '"per_record": 101'))
    with pytest.raises(ValueError, match=r"per_record .*\[1, 100\]"):
        Accountant.load(path)


# ------------------------------------------------------------------------------------------------
# dp_accounting's RandomAllocationDpEvent (absent from 0.6.0: a stand-in with its fields)
# ------------------------------------------------------------------------------------------------

@pytest.fixture
def dp_with_allocation(monkeypatch):
    """dp_accounting with a stand-in RandomAllocationDpEvent mirroring the main branch's
    fields (event, num_selected, num_steps) when the installed one lacks it."""
    dp = pytest.importorskip("dp_accounting")
    if not hasattr(dp, "RandomAllocationDpEvent"):
        import dataclasses

        @dataclasses.dataclass(frozen=True)
        class RandomAllocationDpEvent(dp.DpEvent):
            event: object
            num_selected: int
            num_steps: int
        monkeypatch.setattr(dp, "RandomAllocationDpEvent", RandomAllocationDpEvent,
                            raising=False)
    return dp


def test_dp_event_export_and_import(dp_with_allocation):
    dp = dp_with_allocation
    acct = Accountant()
    acct.compose(AllocatedGaussian(4.0, steps=600, per_record=2, epochs=3))
    acct.compose(AllocatedLaplace(2.0, steps=50))
    tree = acct.to_dp_event()
    first = tree.events[0]
    assert isinstance(first, dp.SelfComposedDpEvent) and first.count == 3
    assert isinstance(first.event, dp.RandomAllocationDpEvent)
    assert (first.event.num_steps, first.event.num_selected) == (600, 2)
    assert first.event.event == dp.GaussianDpEvent(4.0)
    back = Accountant().compose_dp_event(tree)
    assert back.events == [(AllocatedGaussian(4.0, steps=600, per_record=2), 3),
                           (AllocatedLaplace(2.0, steps=50), 1)]
    assert back.epsilon(1e-6).value == pytest.approx(acct.epsilon(1e-6).value, rel=1e-3)


@pytest.mark.parametrize("fields,match", [
    (dict(num_selected=5, num_steps=4), r"dp_event: per_record .*\[1, 4\]"),
    (dict(num_selected=1, num_steps=0), r"dp_event: steps must be an integer in"),
    (dict(num_selected=1.5, num_steps=4), r"dp_event.num_selected must be an integer"),
])
def test_dp_event_import_refuses_bad_fields(dp_with_allocation, fields, match):
    dp = dp_with_allocation
    node = dp.RandomAllocationDpEvent(event=dp.GaussianDpEvent(2.0), **fields)
    with pytest.raises(ValueError, match=match):
        Accountant().compose_dp_event(node)


def test_dp_event_import_refuses_other_inner_events(dp_with_allocation):
    dp = dp_with_allocation
    node = dp.RandomAllocationDpEvent(event=dp.PoissonSampledDpEvent(0.5, dp.GaussianDpEvent(1.0)),
                                      num_selected=1, num_steps=4)
    with pytest.raises(ValueError, match=r"dp_event.event: RandomAllocationDpEvent of "
                                         r"PoissonSampledDpEvent is not supported"):
        Accountant().compose_dp_event(node)


def test_export_without_the_event_says_which_dp_accounting(monkeypatch):
    dp = pytest.importorskip("dp_accounting")
    monkeypatch.delattr(dp, "RandomAllocationDpEvent", raising=False)
    acct = Accountant().compose(AllocatedGaussian(4.0, steps=100))
    with pytest.raises(ValueError, match=r"RandomAllocationDpEvent, which the installed "
                                         r"dp_accounting .* lacks .*after release 0.6.0"):
        acct.to_dp_event()
