"""Composition and accounting (docs/theory.md §3, §4): PLD, RDP, KOV, noise amplification."""
import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import product_delta
from scipy import optimize, stats

from ldpcompress.accounting import accountant as A
from ldpcompress.accounting import events as E
from ldpcompress.accounting import kov as K
from ldpcompress.accounting import noise as N
from ldpcompress.accounting import pld as P
from ldpcompress.accounting import rdp as R
from ldpcompress.accounting.profiles import GeneralProfile, general_pair


@pytest.fixture(autouse=True)
def fp_errors():
    """numpy floating-point warnings are errors in the accounting tests."""
    with np.errstate(over="raise", invalid="raise", divide="raise"), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


@pytest.mark.parametrize("times", [1, 2, 3, 5])
def test_pld_composition_brackets_enumeration(times):
    p, q = [0.5, 0.3, 0.2, 0.0], [0.2, 0.3, 0.4, 0.1]
    h = 1e-3
    up = P.from_pmfs(p, q, h).self_compose(times)
    lo = P.from_pmfs(p, q, h, upper=False).self_compose(times)
    for eps in (0.0, 0.3, 0.9, 2.0):
        exact = product_delta(p, q, times, eps)
        assert lo.delta(eps) <= exact + 1e-12 <= up.delta(eps) + 2e-12
        # the gap is the grid's: a loss shift of at most T h
        assert up.delta(eps) <= product_delta(p, q, times, eps - times * h) + 1e-9


def test_gaussian_pld_matches_analytic():
    sigma, times = 2.0, 16
    up = P.gaussian(sigma).self_compose(times)
    lo = P.gaussian(sigma, upper=False).self_compose(times)
    mu = math.sqrt(times) / sigma  # T-fold Gaussian = one Gaussian with sigma / sqrt(T)
    for eps in (0.0, 1.0, 3.0):
        exact = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
        assert lo.delta(eps) <= exact <= up.delta(eps)
        assert up.delta(eps) - lo.delta(eps) < 5e-3
    e_up, e_lo = up.epsilon(1e-6), lo.epsilon(1e-6)
    exact_eps = optimize.brentq(lambda e: stats.norm.cdf(-e / mu + mu / 2) - math.exp(e)
                                * stats.norm.cdf(-e / mu - mu / 2) - 1e-6, 0.0, 50.0, xtol=1e-12)
    assert e_lo <= exact_eps <= e_up <= e_lo + times * 1e-4 * 1.01


def test_laplace_pld_matches_laplace_profile():
    # Laplace with scale b: delta(eps) = 1 - e^((eps - 1/b)/2) for eps in [0, 1/b] (s = 1)
    b = 1.0
    up, lo = P.laplace(b), P.laplace(b, upper=False)
    for eps in (0.0, 0.5, 0.9):
        exact = 1 - math.exp((eps - 1 / b) / 2)
        assert lo.delta(eps) <= exact <= up.delta(eps) <= exact + 1e-3


def test_clone_pld_brackets_profile_and_rdp_is_looser():
    n, eps0 = 2000, 1.0
    q, p = general_pair(eps0)
    up, lo = P.clone_pair(n, q, p), P.clone_pair(n, q, p, upper=False)
    prof = GeneralProfile(n, eps0)
    for eps in (0.02, 0.1, 0.2):
        exact = prof.delta_at(eps)
        assert lo.delta(eps) <= exact * (1 + 1e-9) and exact <= up.delta(eps)
    acct = A.Accountant().compose(E.ShuffledRound(n, eps0), times=50)
    res = acct.epsilon(1e-6, method="pld", compare=True)
    assert res.method == "pld" and res.lower <= res.value
    assert res.value <= res.others["rdp"]  # PLD is the tighter accountant


def brute_rdp(n, q, p, alpha):
    """D_alpha of the §2.1 pair by direct mpmath enumeration over (c, x)."""
    mp.mp.dps = 30
    total = mp.mpf(0)
    for c in range(n):
        w = mp.binomial(n - 1, c) * mp.mpf(q) ** c * (1 - mp.mpf(q)) ** (n - 1 - c)
        m = c + 1
        for x in range(m + 1):
            b = mp.binomial(m, x) / mp.mpf(2) ** m * 2 / m
            pp = w * b * (p * x + (1 - p) * (m - x))
            qq = w * b * ((1 - p) * x + p * (m - x))
            total += pp ** alpha * qq ** (1 - alpha)
    return float(mp.log(total) / (alpha - 1))


@pytest.mark.parametrize("n", [2, 6, 20])
def test_clone_rdp_upper_bounds_enumeration(n):
    q, p = general_pair(1.5)
    orders = np.array([1.5, 2.0, 8.0])
    got = R.clone_pair_rdp(n, q, p, orders)
    for a, g in zip(orders, got):
        exact = brute_rdp(n, q, p, a)
        assert exact <= g <= exact + 1e-4 * a + 1e-9


def test_pure_rdp_is_exact_for_randomized_response():
    eps, a = 0.7, 3.0
    pp = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
    exact = math.log(np.sum(pp ** a * pp[::-1] ** (1 - a))) / (a - 1)
    assert R.pure_rdp(eps, [a])[0] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 5, 10])
def test_kov_matches_brute_force(k):
    """k-fold RR(eps): the exact profile at eps_g = (k - 2i) eps is delta_i (KOV Thm 3.3)."""
    mp.mp.dps = 40
    eps = 0.4
    a = mp.e ** eps / (1 + mp.e ** eps)
    for i in range(k // 2 + 1):
        e, d = K.kov_point(eps, 0.0, k, i)
        assert e == pytest.approx((k - 2 * i) * eps, rel=1e-15) and e >= (k - 2 * i) * eps
        eg = mp.mpf(e)  # the profile at the eps we claim must not exceed the delta we claim
        exact = float(sum(mp.binomial(k, j) * max(0, a ** j * (1 - a) ** (k - j)
                                                  - mp.e ** eg * a ** (k - j) * (1 - a) ** j)
                          for j in range(k + 1)))
        assert d == pytest.approx(exact, rel=1e-9, abs=1e-15)
        assert d >= exact


def test_kov_in_log_space_does_not_overflow():
    e = K.kov_epsilon(1.0, 0.0, 100_000, 1e-6)
    assert math.isfinite(e) and 0 < e < 100_000
    assert K.kov_delta(1.0, 0.0, 100_000, e) <= 1e-6


def test_pld_agrees_with_kov_for_pure_dp():
    acct = A.Accountant().compose(E.PureDP(0.1), times=200)
    res = acct.epsilon(1e-6, method="pld", compare=True)
    # KOV is exact at its grid points, PLD interpolates: both are valid upper bounds
    assert res.lower <= res.others["kov"] + 1e-9
    assert res.value <= res.others["kov"] * 1.01
    auto = acct.epsilon(1e-6)
    assert auto.value == min(res.value, res.others["kov"], res.others["rdp"])


def test_krr_round_is_tighter_than_general_round():
    general = A.Accountant().compose(E.ShuffledRound(10_000, 3.0), times=10).epsilon(1e-6)
    krr = A.Accountant().compose(E.KRRShuffledRound(10_000, 3.0, 50), times=10).epsilon(1e-6)
    assert krr.value <= general.value + 1e-9 and krr.lower <= krr.value


def test_connect_the_dots_dominates_profile():
    prof = GeneralProfile(3000, 2.0)
    dots = P.from_profile(lambda e: prof.delta_at(e), 2.0, points=60)
    for eps in np.linspace(0.0, 1.9, 17):
        assert dots.delta(eps) >= prof.delta_at(eps) * (1 - 1e-12)


def test_noise_amplification():
    orders = np.array([1.5, 2.0, 5.0])
    # Gaussian: shift reduction equals the exact RDP of N(0, n sigma^2) shifted by s
    assert np.allclose(N.gaussian_sum_rdp(10, 2.0, orders), orders / (2 * 10 * 4.0))
    assert np.allclose(N.shift_reduction_rdp(stats.norm(scale=2.0), 10, orders),
                       orders / (2 * 10 * 4.0), rtol=1e-7)
    # Laplace: numerical integration reproduces the closed form; the bound dominates the exact
    assert np.allclose(N.shift_rdp(stats.laplace(scale=1.0), 1.0, orders),
                       R.laplace_rdp(1.0, orders), rtol=1e-7)
    assert np.allclose(N.laplace_sum_exact_rdp(1, 1.0, orders), R.laplace_rdp(1.0, orders),
                       rtol=1e-5)
    exact = N.laplace_sum_exact_rdp(20, 1.0, orders)
    assert np.all(exact <= N.laplace_sum_rdp(20, 1.0, orders))


def test_dp_accounting_export_agrees():
    dpa = pytest.importorskip("dp_accounting")
    from ldpcompress.accounting.interop import to_dp_accounting
    p, q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    ours = P.from_pmfs(p, q, 1e-3).self_compose(20)
    theirs = to_dp_accounting(P.from_pmfs(p, q, 1e-3)).self_compose(20)
    built = dpa.pld.privacy_loss_distribution.from_two_probability_mass_functions(
        {i: math.log(v) for i, v in enumerate(p)}, {i: math.log(v) for i, v in enumerate(q)},
        value_discretization_interval=1e-3)
    ref = built.self_compose(20)
    for eps in (0.5, 1.5):
        assert theirs.get_delta_for_epsilon(eps) == pytest.approx(ours.delta(eps), rel=1e-6, abs=1e-12)
        assert abs(ref.get_delta_for_epsilon(eps) - ours.delta(eps)) <= 20 * 1e-3


@pytest.mark.parametrize("call, words", [
    (lambda: E.Gaussian(-1.0), r"sigma must be finite and > 0, got -1\.0"),
    (lambda: R.gaussian_rdp(1.0, [0.5, 2.0]),
     r"orders must be finite numbers > 1, got \[0\.5, 2\.0\]"),
    (lambda: R.check_orders([1.0]), r"orders must be finite numbers > 1, got \[1\.0\]"),
    (lambda: A.Accountant().compose(E.PureDP(1.0)).epsilon(0.0),
     r"delta must be in \(0, 1\), got 0\.0"),
    (lambda: A.Accountant().compose(E.PureDP(1.0)).epsilon(1.5),
     r"delta must be in \(0, 1\), got 1\.5"),
    (lambda: A.Accountant().compose(E.PureDP(1.0), times=0),
     r"times must be an integer in \[1, 1000000000\], got 0"),
    (lambda: A.Accountant().compose(E.ApproxDP(1.0, 1e-6)).epsilon(1e-5, method="rdp"),
     r"ApproxDP has no RDP curve; use method='pld'"),
    (lambda: A.Accountant().compose(E.PureDP(1.0)).compose(E.Gaussian(1.0)).epsilon(1e-5, method="kov"),
     r"KOV composition needs every event to be the same \(eps, delta\)-DP event"),
    (lambda: A.Accountant().epsilon(1e-6), r"the accountant has no events: call compose\(\) first"),
    (lambda: A.Accountant().compose(E.PureDP(1.0)).epsilon(1e-6, method="magic"),
     r"method must be one of \(.*\), got 'magic'"),
    (lambda: E.ShuffledRound(0, 1.0), r"n must be an integer in \[1, 10000000000\], got 0"),
    (lambda: P.from_pmfs([0.5, 0.5], [0.9, 0.2]),
     r"q must be a probability vector \(non-negative, sum 1\)"),
])
def test_bad_input_is_rejected(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_non_event_is_a_type_error():
    with pytest.raises(TypeError, match="event"):
        A.Accountant().compose("gaussian")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=3, max_size=3),
       st.lists(st.floats(0.01, 1.0), min_size=3, max_size=3),
       st.integers(1, 4), st.floats(0.0, 2.0))
def test_pld_brackets_exact_on_random_pairs(pw, qw, times, eps):
    p = np.array(pw) / sum(pw)
    q = np.array(qw) / sum(qw)
    exact = product_delta(list(p), list(q), times, eps)
    up = P.from_pmfs(p, q, 1e-3).self_compose(times)
    lo = P.from_pmfs(p, q, 1e-3, upper=False).self_compose(times)
    assert lo.delta(eps) <= exact + 1e-12 and exact <= up.delta(eps) + 1e-12
