"""Central mechanisms in the ledger (issue 22): the exact Gaussian, Poisson-subsampled Gaussian
and Laplace events, dp_accounting both ways. Expected values come from mpmath at 50 digits,
closed forms or dp_accounting run here, never from this library's own output."""
import json
import math

import mpmath as mp
import numpy as np
import pytest

from ldpcompress.accounting import Accountant
from ldpcompress.accounting import events as E
from ldpcompress.accounting import gaussian as G
from ldpcompress.accounting import sampled as SM
from ldpcompress.accounting import event_profiles as EP
from ldpcompress.accounting import event_pld as EPLD
from ldpcompress.accounting import event_rdp as ERDP
from ldpcompress.accounting import kov as KOV

mp.mp.dps = 50


# -- the exact Gaussian ---------------------------------------------------------------------------

def mp_gauss_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


def mp_gauss_eps(mu, delta):
    return mp.findroot(lambda e: mp_gauss_delta(mu, e) - delta, (mp.mpf(0), mp.mpf(2000)),
                       solver="bisect", tol=mp.mpf(10) ** -40)


@pytest.mark.parametrize("mu", [1e-4, 0.05, 0.3, 1.0, 3.0, 12.0])
def test_gaussian_delta_bracket_contains_mpmath(mu):
    for eps in (0.0, 1e-3, 0.1, 1.0, 5.0, 30.0, 200.0):
        lo, hi = G.delta_bracket(mu, eps)
        exact = mp_gauss_delta(mu, eps)
        assert lo <= exact <= hi, (mu, eps)
        assert hi - lo <= 1e-11 * float(exact) + 1e-13  # cancellation of A - B near 0


@pytest.mark.parametrize("mu, delta", [(0.1, 1e-6), (1.0, 1e-5), (1.0, 1e-12), (5.0, 1e-9),
                                       (30.0, 0.5)])
def test_gaussian_epsilon_bracket_contains_mpmath(mu, delta):
    lo, hi = G.epsilon_bracket(mu, delta)
    exact = mp_gauss_eps(mu, delta)
    assert lo <= exact <= hi
    assert hi - lo <= 1e-9 * float(exact) + 1e-12


def test_hundred_gaussians_exact_and_dp_accounting():
    """The issue's case: 100 x sigma = 10 at delta = 1e-6 is one Gaussian of mu = 1
    (exact 4.886554117...), 4.906 through the grid before; dp_accounting gives 4.886554124."""
    res = Accountant().compose(E.Gaussian(10.0), times=100).epsilon(1e-6)
    exact = mp_gauss_eps(1, mp.mpf("1e-6"))
    assert res.method == "exact" and res.lower <= exact <= res.value
    assert res.value - res.lower < 1e-9
    dp = pytest.importorskip("dp_accounting")
    theirs = dp.pld.PLDAccountant().compose(
        dp.SelfComposedDpEvent(dp.GaussianDpEvent(10.0), 100)).get_epsilon(1e-6)
    assert abs(res.value - theirs) <= 5e-4 * theirs


def test_mixed_gaussians_compose_to_one():
    sigmas = [4.0 + 0.17 * i for i in range(100)]
    acct = Accountant()
    for s in sigmas:
        acct.compose(E.Gaussian(s, sensitivity=1.5))
    mu = mp.sqrt(mp.fsum((mp.mpf(1.5) / s) ** 2 for s in sigmas))
    res = acct.epsilon(1e-6)
    exact = mp_gauss_eps(mu, mp.mpf("1e-6"))
    assert res.method == "exact" and res.lower <= exact <= res.value
    # the PLD and RDP compose the same single Gaussian, never below the truth
    both = acct.epsilon(1e-6, compare=True)
    assert both.others["pld"] >= exact and both.others["rdp"] >= exact
    dp = pytest.importorskip("dp_accounting")
    tree = dp.ComposedDpEvent([dp.GaussianDpEvent(s / 1.5) for s in sigmas])
    theirs = dp.pld.PLDAccountant().compose(tree).get_epsilon(1e-6)
    assert abs(res.value - theirs) <= 5e-4 * theirs
    # delta queries take the same route
    d = acct.delta(float(exact))
    assert d.method == "exact" and d.lower <= 1e-6 * (1 + 1e-9) and d.value >= 1e-6 * (1 - 1e-9)


def test_gaussians_fold_beside_other_events():
    acct = Accountant(h=1e-3).compose(E.Gaussian(20.0), times=50).compose(E.Gaussian(30.0))
    acct.compose(E.PureDP(0.1), times=3)
    merged = acct._merged()
    assert len(merged) == 2 and merged[0][0].sensitivity / merged[0][0].sigma == pytest.approx(
        math.sqrt(50 / 400 + 1 / 900), rel=1e-14)
    assert merged[0][0].sensitivity / merged[0][0].sigma >= math.sqrt(50 / 400 + 1 / 900)
    res = acct.epsilon(1e-6)
    assert res.method != "exact" and math.isfinite(res.value)
    with pytest.raises(ValueError, match="Gaussian mechanisms only"):
        acct.epsilon(1e-6, method="exact")


# -- Poisson-subsampled Gaussian and Laplace -------------------------------------------------------

def mp_sampled_delta(kind, direction, s, q, eps):
    """H_{e^eps} of the direction by its closed form at 50 digits (threshold sets)."""
    s, q, eps = mp.mpf(s), mp.mpf(q), mp.mpf(eps)
    big_e = mp.exp(eps)
    if kind == "gauss":
        sf = lambda t, m: mp.ncdf(-(t - m) / s)  # noqa: E731
        cdf = lambda t, m: mp.ncdf((t - m) / s)  # noqa: E731
        thr = lambda lc: mp.mpf("0.5") + s * s * lc  # noqa: E731
    else:
        def sf(t, m):
            y = t - m
            return mp.exp(-y / s) / 2 if y >= 0 else 1 - mp.exp(y / s) / 2
        cdf = lambda t, m: 1 - sf(t, m)  # noqa: E731
        thr = lambda lc: min(max((1 + s * lc) / 2, mp.mpf(0)), mp.mpf(1))  # noqa: E731
    if direction == "remove":
        c = (big_e - (1 - q)) / q
        if c <= 0 or (kind == "lap" and mp.log(c) * s < -1):
            return max(mp.mpf(0), 1 - big_e)
        if kind == "lap" and mp.log(c) * s >= 1:
            return mp.mpf(0)
        t = thr(mp.log(c))
        return max(mp.mpf(0), (1 - q) * sf(t, 0) + q * sf(t, 1) - big_e * sf(t, 0))
    c = (1 / big_e - (1 - q)) / q
    if c <= 0 or (kind == "lap" and mp.log(c) * s <= -1):
        return mp.mpf(0)
    if kind == "lap" and mp.log(c) * s > 1:
        return max(mp.mpf(0), 1 - big_e)
    t = thr(mp.log(c))
    return max(mp.mpf(0), cdf(t, 0) - big_e * ((1 - q) * cdf(t, 0) + q * cdf(t, 1)))


@pytest.mark.parametrize("kind, s, q", [("gauss", 1.0, 0.01), ("gauss", 0.6, 0.2),
                                        ("gauss", 3.0, 0.5), ("lap", 0.5, 0.05),
                                        ("lap", 2.0, 0.3)])
def test_sampled_delta_against_mpmath(kind, s, q):
    noise = (SM.GaussianNoise if kind == "gauss" else SM.LaplaceNoise)(s, q)
    for direction in SM.DIRECTIONS:
        for eps in (-0.5, -0.01, 0.0, 0.003, 0.05, 0.3, 1.0, 2.5, 6.0):
            exact = mp_sampled_delta(kind, direction, s, q, eps)
            up = float(noise.delta(direction, eps, upper=True)[0])
            low = float(noise.delta(direction, eps, upper=False)[0])
            assert low <= exact <= up, (direction, eps)
            assert up - low <= 1e-9 * float(exact) + 1e-15, (direction, eps)


def test_sampled_pld_grids_bracket_the_exact_profile():
    """One subsampled Gaussian: the connect-the-dots grid is above the exact profile at grid and
    off-grid eps (and close), the round-down grid below it."""
    event = E.PoissonSampledGaussian(0.8, 0.05)
    h = 1e-3
    up, down = EPLD.pld(event, h, "up"), EPLD.pld(event, h, "down")
    for eps in (0.0, 0.0105, 0.1, 0.37, 1.0, 2.2, 4.0):
        exact = max(mp_sampled_delta("gauss", d, 0.8, 0.05, eps) for d in SM.DIRECTIONS)
        assert down.delta(eps) <= exact <= up.delta(eps), eps
        assert up.delta(eps) - exact <= 2e-3 * float(exact) + 1e-12
    assert up.dirs[0].pmf.sum() + up.dirs[0].inf_mass == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("s, q", [(1.0, 0.01), (0.7, 0.1), (2.0, 0.5)])
def test_sampled_gaussian_rdp_against_mpmath(s, q):
    """Both directions' Renyi divergences by quadrature at 50 digits: the event's curve is
    above each (the integer-order sum is exact at integer orders)."""
    event = E.PoissonSampledGaussian(s, q)
    orders = np.array([1.5, 2.0, 3.0, 8.0])
    curve = ERDP.rdp(event, orders)
    mp.mp.dps = 25  # quadrature at 25 digits is ample for a 1e-12 comparison
    sm, qm = mp.mpf(s), mp.mpf(q)
    mix = lambda x: (1 - qm) * mp.npdf(x, 0, sm) + qm * mp.npdf(x, 1, sm)  # noqa: E731
    for a, got in zip(orders, curve):
        am = mp.mpf(a)
        rem = mp.quad(lambda x: mix(x) ** am * mp.npdf(x, 0, sm) ** (1 - am), [-mp.inf, 0, 1, mp.inf])
        add = mp.quad(lambda x: mp.npdf(x, 0, sm) ** am * mix(x) ** (1 - am), [-mp.inf, 0, 1, mp.inf])
        exact = max(mp.log(rem), mp.log(add)) / (am - 1)
        assert got >= exact * (1 - 1e-12)
        if a == int(a):  # exact there up to the add direction's grid (h = 1e-5)
            assert got <= exact + 2e-5 * a + 1e-12
    a = 4.0
    am = mp.mpf(a)
    # Mironov-Talwar-Zhang's sum equals the remove direction's integral at integer orders
    rem = mp.quad(lambda x: mix(x) ** am * mp.npdf(x, 0, sm) ** (1 - am), [-mp.inf, 0, 1, mp.inf])
    got = EP.noise_of(event).rdp_remove(np.array([a]))[0]
    assert 0 <= got - float(mp.log(rem) / (am - 1)) <= 1e-10
    mp.mp.dps = 50


def test_sampled_laplace_is_pure_dp_and_has_a_bounded_curve():
    event = E.PoissonSampledLaplace(0.5, 0.1)
    eps, d = KOV.approx_dp(event)
    exact = mp.log(1 + mp.mpf("0.1") * (mp.exp(2) - 1))
    assert d == 0.0 and eps >= exact and eps - exact < 1e-14
    curve = ERDP.rdp(event, np.array([2.0, 50.0, 1e4]))
    assert np.all(curve <= eps + 1e-5) and np.all(np.diff(curve) >= 0)


def test_dp_sgd_agrees_with_dp_accounting():
    """q = 0.01, sigma = 1, 1000 steps, delta = 1e-5: our value at dp_accounting's grid step
    (1e-4) is within its own discretisation bracket (its optimistic and pessimistic values) and
    never below the exact lower bracket (the round-down grid composed)."""
    dpa = pytest.importorskip("dp_accounting")
    event = E.PoissonSampledGaussian(1.0, 0.01)
    res = Accountant(h=1e-4).compose(event, times=1000).epsilon(1e-5)
    lower = EPLD.pld(event, 1e-4, "down").self_compose(1000).epsilon(1e-5)
    from dp_accounting.pld import privacy_loss_distribution as PLD
    theirs = dpa.pld.PLDAccountant(value_discretization_interval=1e-4).compose(
        dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 1000)
    ).get_epsilon(1e-5)
    their_low = PLD.from_gaussian_mechanism(1.0, sampling_prob=0.01, use_connect_dots=False,
                                            pessimistic_estimate=False).self_compose(
        1000).get_epsilon_for_delta(1e-5)
    assert res.method == "pld" and lower <= res.value
    assert their_low <= res.value and abs(res.value - theirs) <= 1e-4 * theirs
    assert res.lower <= lower + 1e-9  # the stated bracket contains the round-down value


def test_sampled_laplace_agrees_with_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    tree = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.LaplaceDpEvent(2.0)), 100)
    res = Accountant(h=1e-4).compose_dp_event(tree).epsilon(1e-5)
    theirs = dpa.pld.PLDAccountant(value_discretization_interval=1e-4).compose(tree).get_epsilon(1e-5)
    lower = EPLD.pld(E.PoissonSampledLaplace(2.0, 0.1), 1e-4, "down").self_compose(100).epsilon(1e-5)
    assert lower <= res.value and abs(res.value - theirs) <= 1e-4 * theirs


# -- dp_accounting both ways -----------------------------------------------------------------------

def test_dp_event_tree_round_trip():
    dp = pytest.importorskip("dp_accounting")
    tree = dp.ComposedDpEvent([
        dp.SelfComposedDpEvent(dp.PoissonSampledDpEvent(0.02, dp.GaussianDpEvent(1.1)), 300),
        dp.ComposedDpEvent([dp.LaplaceDpEvent(4.0), dp.NoOpDpEvent(),
                            dp.PoissonSampledDpEvent(0.0, dp.GaussianDpEvent(1.0)),
                            dp.PoissonSampledDpEvent(1.0, dp.GaussianDpEvent(30.0))]),
        dp.SelfComposedDpEvent(dp.PoissonSampledDpEvent(0.1, dp.LaplaceDpEvent(3.0)), 20),
        dp.SelfComposedDpEvent(dp.LaplaceDpEvent(4.0), 2),
    ])
    acct = Accountant(h=1e-3).compose_dp_event(tree)
    assert acct.events == [(E.PoissonSampledGaussian(1.1, 0.02), 300), (E.Laplace(4.0), 3),
                           (E.Gaussian(30.0), 1), (E.PoissonSampledLaplace(3.0, 0.1), 20)]
    back = acct.to_dp_event()
    again = Accountant(h=1e-3).compose_dp_event(back)
    assert again.events == acct.events
    assert again.epsilon(1e-6).value == acct.epsilon(1e-6).value
    acc = lambda t: dp.pld.PLDAccountant(value_discretization_interval=1e-3).compose(t)  # noqa
    theirs, theirs_back = acc(tree).get_epsilon(1e-6), acc(back).get_epsilon(1e-6)
    assert theirs_back == pytest.approx(theirs, rel=1e-3)
    ours = acct.epsilon(1e-6)
    assert ours.lower <= theirs_back * (1 + 1e-3) and theirs_back <= ours.value * (1 + 1e-3)
    # the ledger's saved form round-trips the new events too
    assert Accountant.from_json(acct.to_json()).events == acct.events


def test_ledger_pld_exported_to_dp_accounting():
    pytest.importorskip("dp_accounting")
    acct = Accountant().compose(E.PoissonSampledGaussian(1.0, 0.05), times=50)
    acct.compose(E.ShuffledRound(10_000, 1.0), times=5)
    pld = acct.pld(1e-3)
    theirs = acct.to_dp_accounting(1e-3)
    for delta in (1e-5, 1e-8):
        assert theirs.get_epsilon_for_delta(delta) == pytest.approx(pld.epsilon(delta), rel=1e-6)
    with pytest.raises(ValueError, match=r"events\[1\] \(ShuffledRound\) has no dp_accounting"):
        acct.to_dp_event()
    # a user continues there: composing more in dp_accounting never lowers the value
    more = theirs.compose(theirs)
    assert more.get_epsilon_for_delta(1e-5) >= theirs.get_epsilon_for_delta(1e-5)


def test_a_5000_deep_composed_tree_imports_without_recursion():
    dp = pytest.importorskip("dp_accounting")
    deep = dp.GaussianDpEvent(50.0)
    for _ in range(5000):
        deep = dp.ComposedDpEvent([deep, dp.SelfComposedDpEvent(dp.GaussianDpEvent(50.0), 2)])
    acct = Accountant().compose_dp_event(deep)
    assert acct.events == [(E.Gaussian(50.0), 10001)]
    assert acct.epsilon(1e-6).lower <= mp_gauss_eps(mp.sqrt(10001) / 50, mp.mpf("1e-6"))


@pytest.mark.parametrize("build, message", [
    (lambda dp: dp.NonPrivateDpEvent(), "not differentially private"),
    (lambda dp: dp.ComposedDpEvent([dp.GaussianDpEvent(1.0), dp.UnsupportedDpEvent()]),
     r"dp_event.events\[1\]: UnsupportedDpEvent is not supported"),
    (lambda dp: dp.PoissonSampledDpEvent(0.1, dp.RandomizedResponseDpEvent(0.5, 2)),
     "PoissonSampledDpEvent of RandomizedResponseDpEvent"),
    (lambda dp: dp.SampledWithoutReplacementDpEvent(100, 10, dp.GaussianDpEvent(1.0)),
     "SampledWithoutReplacementDpEvent is not supported"),
    (lambda dp: dp.GaussianDpEvent(0.0), "adds no noise"),
    (lambda dp: dp.GaussianDpEvent(float("nan")), "finite and > 0"),
    (lambda dp: dp.PoissonSampledDpEvent(1.5, dp.GaussianDpEvent(1.0)), r"\[0, 1\]"),
    (lambda dp: dp.SelfComposedDpEvent(dp.GaussianDpEvent(1.0), -1), "integer >= 0"),
    (lambda dp: dp.SelfComposedDpEvent(dp.SelfComposedDpEvent(dp.GaussianDpEvent(1.0), 10**5),
                                       10**5), "at most"),
])
def test_dp_events_refused_with_their_place(build, message):
    dp = pytest.importorskip("dp_accounting")
    with pytest.raises(ValueError, match=message):
        Accountant().compose_dp_event(build(dp))


def test_import_is_all_or_nothing_and_checks_types():
    dp = pytest.importorskip("dp_accounting")
    acct = Accountant()
    with pytest.raises(ValueError, match="is not differentially private"):
        acct.compose_dp_event(dp.ComposedDpEvent([dp.GaussianDpEvent(1.0), dp.NonPrivateDpEvent()]))
    assert acct.events == []
    with pytest.raises(TypeError, match="DpEvent"):
        acct.compose_dp_event("GaussianDpEvent(1.0)")


@pytest.mark.parametrize("call, message", [
    (lambda: E.PoissonSampledGaussian(1.0, 1.0), "q = 1 is the mechanism itself"),
    (lambda: E.PoissonSampledGaussian(1.0, 0.0), "q must be in"),
    (lambda: E.PoissonSampledGaussian(0.0, 0.1), "sigma"),
    (lambda: E.PoissonSampledLaplace(1.0, float("nan")), "q must be in"),
    (lambda: E.PoissonSampledLaplace(1.0, True), "real number"),
])
def test_sampled_events_validate(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_relations_are_named_when_a_ledger_mixes_them():
    acct = Accountant(h=1e-3).compose(E.PoissonSampledGaussian(2.0, 0.01), times=10)
    acct.compose(E.ShuffledRound(10_000, 1.0))
    res = acct.epsilon(1e-6)
    assert any("add/remove, substitution" in n for n in res.notes)
    state = json.loads(acct.to_json())
    assert [e["event"] for e in state["events"]] == ["PoissonSampledGaussian", "ShuffledRound"]


def test_extreme_gaussians_answer_or_refuse_clearly():
    """Found by fuzzing: mu^2 overflowing raised OverflowError; a huge mu gave lower = 0."""
    with pytest.raises(ValueError, match="overflows"):
        Accountant().compose(E.Gaussian(1e-300), times=10).epsilon(1e-6)
    res = Accountant().compose(E.Gaussian(1e-60), times=10).epsilon(1e-6)
    assert res.lower <= res.value and res.lower >= 0.99 * res.value  # ~ mu^2 / 2 = 5e120
    tiny = Accountant().compose(E.Gaussian(1e12), times=10).epsilon(1e-6)
    mu = mp.sqrt(10) / mp.mpf(10) ** 12  # the bracket checked directly: delta crosses 1e-6 in it
    assert tiny.value == 0.0 and mp_gauss_delta(mu, 0) <= 1e-6  # delta(0) = 1.3e-12
    small = Accountant().compose(E.Gaussian(1e5), times=10).epsilon(1e-6)
    mu = mp.sqrt(10) / mp.mpf(10) ** 5
    assert mp_gauss_delta(mu, small.value) <= 1e-6 <= mp_gauss_delta(mu, small.lower)
