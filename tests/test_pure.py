"""Pure DP through composition (accounting/pure.py, docs/theory.md §3.4 "Pure events"):
ledgers of (eps_i, 0)-DP events answered in closed form, randomized response over k buckets,
and dp_accounting's RandomizedResponseDpEvent both ways."""
import math

import mpmath as mp
import numpy as np
import pytest
from reference import product_delta
from reference.composition import (mp_krr_pair, mp_renyi, mp_rr_composition_delta,
                                   mp_rr_composition_epsilon)

from ldpcompress.accounting import (Accountant, ApproxDP, Gaussian, Laplace, PoissonSampledLaplace, PureDP,
                                    RandomizedResponse, ShuffledRound)
from ldpcompress.accounting import pure as PU
from ldpcompress.accounting import event_rdp as ERDP
from ldpcompress.accounting import interop as IO


def test_laplace_compositions_are_exactly_pure():
    """Four Laplace events of eps 1 are (4, 0)-DP: delta(4) = 0 exactly and eps(1e-14) <= 4
    (fails before: 4.0019 by RDP at delta = 1e-14, delta(4) = 2.3e-6)."""
    acct = Accountant().compose(Laplace(scale=1.0), times=4)
    res = acct.delta(4.0)
    assert res.value == 0.0 and res.method == "pure"
    eps = acct.epsilon(1e-14)
    assert eps.method == "pure" and 4.0 - 1e-12 <= eps.value <= 4.0
    # thirds sum exactly to 1: three Laplace(scale 3) are (1, 0)-DP, not (1 + 1 ulp, 0)
    assert Accountant().compose(Laplace(scale=3.0), times=3).delta(1.0).value == 0.0
    # mixed pure events: Laplace, PureDP, randomized response, Poisson-sampled Laplace
    mixed = (Accountant().compose(Laplace(scale=2.0, sensitivity=1.0), times=2)
             .compose(PureDP(0.25)).compose(RandomizedResponse(0.5, 3))
             .compose(PoissonSampledLaplace(scale=1.0, q=0.01)))
    total = 1.0 + 0.25 + math.log(4.0) + math.log1p(0.01 * math.expm1(1.0))
    assert mixed.delta(total * (1 + 1e-12)).value == 0.0
    assert mixed.epsilon(1e-300).value <= total * (1 + 1e-12)


def test_where_the_pld_or_rdp_is_smaller_it_is_reported():
    """At moderate delta the concentration of many Laplace losses beats the pure bound."""
    acct = Accountant().compose(Laplace(scale=10.0), times=100)
    res = acct.epsilon(1e-6, compare=True)
    assert 10.0 - 2e-6 <= res.others["pure"] <= 10.0  # (10, 0)-DP
    assert res.method != "pure" and res.value < 0.6 * res.others["pure"]


@pytest.mark.parametrize("eps,times", [(0.3, 4), (1.0, 3), (2.5, 2)])
def test_pure_bound_dominates_exact_composed_randomized_response(eps, times):
    """Brute force: T-fold binary randomized response with parameter eps is (T eps, 0)-DP; the
    closed form is >= its exact delta (mpmath) at every eps, and equal to it at T = 1."""
    total = times * eps
    for x in np.linspace(0.0, total, 9):
        exact = mp_rr_composition_delta(eps, times, x)
        assert PU.pure_delta(total, float(x)) >= exact
    for delta in (1e-12, 1e-6, 1e-2):
        assert PU.pure_epsilon(total, delta) >= mp_rr_composition_epsilon(eps, times, delta)


@pytest.mark.parametrize("total", [1e-6, 0.5, 4.0, 40.0, 700.0])
def test_closed_forms_against_mpmath(total):
    """The kernel: delta = (1 - e^(x - E)) / (1 + e^-E) and its inverse, rounded up, within
    1e-12 (relative) of mpmath."""
    with mp.workdps(50):
        E = mp.mpf(total)
        for frac in (0.0, 0.5, 0.999, 1.0 - 1e-9):
            x = float(total * frac)
            exact = (1 - mp.e ** (mp.mpf(x) - E)) / (1 + mp.e ** -E)
            got = PU.pure_delta(total, x)
            assert exact <= got <= exact * (1 + 1e-12)
        for delta in (1e-15, 1e-6, 0.1):
            inner = 1 - mp.mpf(delta) * (1 + mp.e ** -E)
            exact = max(mp.mpf(0), E + mp.log(inner)) if inner > 0 else mp.mpf(0)
            got = PU.pure_epsilon(total, delta)
            assert exact <= got <= exact * (1 + 1e-12) + 1e-300
    assert PU.pure_delta(total, total) == 0.0 and PU.pure_epsilon(total, 1e-300) <= total


@pytest.mark.parametrize("p,k", [(0.5, 3), (0.2, 10), (0.9, 2), (0.01, 1000)])
def test_randomized_response_pld_and_rdp_against_brute_force(p, k):
    """The event's PLD (composed 3 times) is >= the exact product pair's delta, enumerated in
    mpmath, and close to it; its Renyi curve is >= the exact divergence and within 1e-9."""
    event = RandomizedResponse(p, k)
    law_p, law_q = mp_krr_pair(p, k)
    acct = Accountant(h=1e-4).compose(event, times=3)
    assert PU.pure_eps(event) >= math.log1p(k * (1 - p) / p)
    for x in (0.1, 1.0, 0.9 * 3 * PU.pure_eps(event)):
        exact = product_delta(law_p, law_q, 3, x)
        got = acct.delta(x, method="pld").value
        assert exact <= got <= exact + 3e-3 * max(exact, 1e-3) + 1e-9
    orders = np.array([1.01, 2.0, 7.5, 64.0])
    curve = ERDP.rdp(event, orders)
    for a, c in zip(orders, curve):
        exact = mp_renyi(law_p, law_q, a)
        assert exact <= c <= exact * (1 + 1e-9) + 1e-300


def test_a_non_pure_ledger_has_no_pure_method():
    acct = Accountant().compose(Laplace(1.0)).compose(Gaussian(3.0))
    assert "pure" not in acct.epsilon(1e-6, compare=True).others
    with pytest.raises(ValueError, match="method 'pure' needs a ledger of pure"):
        acct.epsilon(1e-6, method="pure")
    approx = Accountant().compose(PureDP(1.0)).compose(ApproxDP(1.0, 1e-9))
    with pytest.raises(ValueError, match="method 'pure' needs"):
        approx.delta(1.0, method="pure")
    # a shuffled round is eps0-DP (post-processing of one report): pure too
    assert Accountant().compose(ShuffledRound(10 ** 4, 1.0), times=3).delta(3.0).value == 0.0


@pytest.mark.parametrize("kwargs,match", [
    (dict(noise_parameter=0.0, num_buckets=3), r"noise_parameter must be in \(0, 1\)"),
    (dict(noise_parameter=1.0, num_buckets=3), r"noise_parameter must be in \(0, 1\)"),
    (dict(noise_parameter=float("nan"), num_buckets=3), "noise_parameter"),
    (dict(noise_parameter=0.5, num_buckets=1), "num_buckets"),
    (dict(noise_parameter=0.5, num_buckets=2.5), "num_buckets"),
    (dict(noise_parameter=1e-320, num_buckets=2 ** 40), "use a larger noise_parameter"),
])
def test_randomized_response_refuses_bad_parameters(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        RandomizedResponse(**kwargs)


def test_randomized_response_dp_event_both_ways():
    """dp_accounting's RandomizedResponseDpEvent is read with its count (dp_accounting 0.6.0's
    own PLD accountant composes it once whatever the count: 2.398 for three at delta 1e-6,
    where three events of eps log 11 need about 7.19) and written back."""
    dp = pytest.importorskip("dp_accounting")
    rr = dp.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=10)
    tree = dp.ComposedDpEvent([dp.SelfComposedDpEvent(rr, 3),
                               dp.RandomizedResponseDpEvent(1.0, 5),     # uniform: nothing
                               dp.RandomizedResponseDpEvent(0.3, 1)])    # one bucket: nothing
    acct = Accountant().compose_dp_event(tree)
    assert acct.events == [(RandomizedResponse(0.5, 10), 3)]
    assert acct.to_dp_event() == dp.SelfComposedDpEvent(rr, 3)
    # brute force of the three-fold pair: the reported eps is at least its exact eps
    law_p, law_q = mp_krr_pair(0.5, 10)
    eps = acct.epsilon(1e-6).value
    assert product_delta(law_p, law_q, 3, eps) <= 1e-6 < product_delta(law_p, law_q, 3, 7.0)
    rdp = dp.rdp.RdpAccountant(neighboring_relation=dp.NeighboringRelation.REPLACE_ONE)
    rdp.compose(tree)
    assert eps <= rdp.get_epsilon(1e-6)
    # PureDP is exported as randomized response over 2 buckets of at least its eps
    out = IO.dp_event_of(PureDP(1.3), dp)
    assert out.num_buckets == 2
    assert math.log1p(2 * (1 - out.noise_parameter) / out.noise_parameter) >= 1.3


@pytest.mark.parametrize("node,match", [
    (dict(noise_parameter=0.0, num_buckets=4), "noise_parameter = 0 releases the input"),
    (dict(noise_parameter=1.5, num_buckets=4), r"noise_parameter must be a number in \[0, 1\]"),
    (dict(noise_parameter=0.5, num_buckets=0), "num_buckets must be an integer >= 1"),
    (dict(noise_parameter=0.5, num_buckets=True), "num_buckets must be an integer >= 1"),
    (dict(noise_parameter="0.5", num_buckets=4), "noise_parameter must be a number"),
])
def test_randomized_response_dp_event_refusals_name_the_place(node, match):
    dp = pytest.importorskip("dp_accounting")
    tree = dp.ComposedDpEvent([dp.GaussianDpEvent(1.0), dp.RandomizedResponseDpEvent(**node)])
    with pytest.raises(ValueError, match=r"dp_event\.events\[1\].*" + match):
        Accountant().compose_dp_event(tree)
