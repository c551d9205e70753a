"""One shuffled pass of private SGD (FMT21 §5.2) as an accountant event: brute force of the
adaptive protocol it bounds (every permutation, every history), worst case over the data."""
import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from ldpcompress.accounting import Accountant, ShuffledRound
from ldpcompress.accounting import amplification as amp
from ldpcompress.accounting import event_profiles as EP
from ldpcompress.accounting import events as E
from ldpcompress.accounting.profiles import GeneralProfile
from ldpcompress.accounting import event_pld as EPLD
from ldpcompress.accounting import event_rdp as ERDP
from ldpcompress.accounting import kov as KOV
from reference.shuffle import hockey


def _random_ldp(rng, eps0, k, outs):
    """A k-input eps0-DP randomizer (rows: inputs): log-weights within eps0/2 of each other per
    output, so after normalising each column's ratio is at most e^eps0."""
    w = rng.uniform(0.2, 1.0, outs) * np.exp(rng.uniform(0.0, eps0 / 2, (k, outs)))
    return w / w.sum(axis=1, keepdims=True)


def _rr(eps0, k):
    """Binary RR on input parity (the tight eps0-DP randomizer), k inputs."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    return np.array([[p, 1 - p] if x % 2 == 0 else [1 - p, p] for x in range(k)])


def _leaky(eps0, delta0, k):
    """(eps0, delta0)-DP: with probability delta0 the input itself, else binary RR."""
    rr = _rr(eps0, k) * (1 - delta0)
    return np.hstack([rr, delta0 * np.eye(k)])


def _law(data, mats, choose):
    """P(z_1..z_n) of the adaptive protocol on a uniformly random order of data: step i applies
    mats[choose(history)] to the i-th record of the permutation."""
    n = len(data)
    outs = mats[0].shape[1]
    law = {}
    perms = list(itertools.permutations(range(n)))
    for z in itertools.product(range(outs), repeat=n):
        total = 0.0
        for perm in perms:
            prob = 1.0
            for i in range(n):
                prob *= mats[choose(z[:i])][data[perm[i]], z[i]]
            total += prob
        law[z] = total / len(perms)
    return law


def _worst(mats, choose, k, n, eps):
    worst = 0.0
    for x1, x1b in itertools.combinations(range(k), 2):
        for rest in itertools.product(range(k), repeat=n - 1):
            p = _law((x1,) + rest, mats, choose)
            q = _law((x1b,) + rest, mats, choose)
            worst = max(worst, hockey(p, q, math.exp(eps), kind="float"))
    return worst


@pytest.mark.parametrize("eps0, seed", [(0.5, 1), (1.0, 2), (2.0, 3)])
def test_pass_bound_above_brute_force_of_adaptive_protocols(eps0, seed):
    """n = 3 records, 3 inputs: each step's randomizer is picked from the history (among
    random eps0-DP randomizers and binary RR); the exact worst-case delta of the ordered
    updates stays below the pass's bound at every eps."""
    rng = np.random.default_rng(seed)
    k, n = 3, 3
    mats = [_rr(eps0, k), _random_ldp(rng, eps0, k, 2), _random_ldp(rng, eps0, k, 2)]
    choices = [lambda h: 0, lambda h: sum(h) % 3, lambda h: (len(h) + 2 * sum(h)) % 3]
    profile = GeneralProfile(n, eps0)
    event = E.ShuffledSGDPass(n, eps0)
    pld = EPLD.pld(event, 1e-3, "up")
    for choose in choices:
        for eps in (0.0, 0.1 * eps0, 0.3 * eps0, 0.6 * eps0):
            exact = _worst(mats, choose, k, n, eps)
            assert exact <= profile.delta(eps, 1e-30) * (1 + 1e-12) + 1e-15
            assert exact <= pld.delta(eps) + 1e-15


def test_pass_with_delta0_above_brute_force():
    """A step that leaks its record with probability delta0 (else binary RR): the pass's
    bound (FMT21 Thm 3.8 term included) stays above the exact worst case."""
    eps0, delta0, k, n = 1.0, 0.01, 2, 3
    mats = [_leaky(eps0, delta0, k)]
    event = E.ShuffledSGDPass(n, eps0, delta0=delta0)
    pld = EPLD.pld(event, 1e-3, "up")
    for eps in (0.0, 0.2, 0.5, 0.9, 1.0, 1.5):
        exact = _worst(mats, lambda h: 0, k, n, eps)
        assert exact <= pld.delta(eps) + 1e-15
        assert exact <= EP.profile(event)(eps) + 1e-15


def test_pure_pass_is_the_shuffled_round():
    a = Accountant().compose(E.ShuffledSGDPass(50_000, 2.0), times=4).epsilon(1e-6)
    b = Accountant().compose(ShuffledRound(50_000, 2.0), times=4).epsilon(1e-6)
    assert a.value == b.value and a.method == b.method


def test_delta0_profile_is_the_running_minimum_of_thm_3_8():
    event = E.ShuffledSGDPass(10_000, 1.5, delta0=1e-10)
    prof = EP.profile(event)
    for eps in (0.05, 0.2, 0.6, 1.2):
        thm = min(amp.approx_delta(10_000, 1.5, 1e-10, e).value
                  for e in np.linspace(0.0, eps, 200))
        assert prof(eps) >= thm * (1 - 1e-6)
    assert prof(1.5) == 1e-10 and prof(3.0) == 1e-10
    res = Accountant().compose(event, times=10).epsilon(1e-6)
    assert res.method in ("pld", "kov") and res.value <= 10 * 1.5
    assert ERDP.rdp(event, np.array([2.0])) is None and KOV.approx_dp(event) == (1.5, 1e-10)


def test_gaussian_steps_set_eps0_from_the_exact_gaussian():
    """sigma = 4 (noise multiplier of the clip norm), replacement sensitivity 2: eps0 is the
    Gaussian's eps at delta0 with mu = 2/4, checked at 50 digits."""
    event = E.ShuffledSGDPass.gaussian(60_000, sigma=4.0, delta0=1e-8)
    mp.mp.dps = 50
    mu = mp.mpf(2) / 4
    delta = lambda e: mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu)  # noqa
    exact = mp.findroot(lambda e: delta(e) - mp.mpf("1e-8"), (mp.mpf(0), mp.mpf(50)),
                        solver="bisect", tol=mp.mpf(10) ** -40)
    assert exact <= event.eps0 <= exact * (1 + 1e-9)
    assert event.delta0 == 1e-8 and event.n == 60_000
    passes = Accountant().compose(event, times=3).epsilon(1e-6)
    assert 0 < passes.value < 3 * event.eps0
    saved = Accountant.from_json(Accountant().compose(event, times=3).to_json())
    assert saved.events == [(event, 3)]
    with pytest.raises(ValueError, match="delta0"):
        E.ShuffledSGDPass.gaussian(100, sigma=4.0, delta0=0.0)
