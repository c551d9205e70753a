"""Confidence intervals of every estimate (randomizers/estimator.py): coverage on simulated data
for every frequency oracle and PrivUnit2's mean, the variance they rest on, argument checks, and
the normal quantile behind them (against tables and mpmath, up to levels within one ulp of 1)."""
import math
import re
from statistics import NormalDist

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate
from scipy.stats import beta as beta_law
from estimates import K, ORACLES, simulated
from shipped import uncovered

import ldpcompress as L
from ldpcompress.randomizers import KRR, PrivUnit2, VectorPIRappor
from ldpcompress.randomizers.privunit import projection_second_moment

LEVEL = 0.95
Z95 = 1.959963984540054  # Pr[|N(0,1)| <= Z95] = 0.95 (tables)


def coverage_tolerance(trials: int, level: float = LEVEL, z: float = 4.0) -> float:
    """z standard deviations of a Binomial(trials, level) coverage count, as a fraction (the
    items' estimates are nearly independent; a fixed seed makes the check deterministic)."""
    return z * math.sqrt(level * (1 - level) / trials)


# -- 1. confidence intervals of frequency estimates ---------------------------------------------

def test_interval_cases_cover_every_shipped_oracle():
    # their own parameters (k = 1000: the coverage check counts items), every shipped oracle
    assert not uncovered([make() for make in ORACLES.values()])


@pytest.mark.parametrize("name", list(ORACLES))
def test_interval_coverage_on_simulated_data(name):
    oracle, n, f, est = simulated(name)
    low, high = oracle.intervals(est, n, level=LEVEL)
    cover = np.mean((low <= f) & (f <= high))
    tol = coverage_tolerance(K)
    assert abs(cover - LEVEL) <= tol, (name, cover, tol)
    # the conservative variant (worst-case variance over f in [0, n]) is never narrower and
    # covers at least as often
    clow, chigh = oracle.intervals(est, n, level=LEVEL, conservative=True)
    assert np.all(chigh - clow >= (high - low) * (1 - 1e-12))
    assert np.all(np.isclose(chigh - clow, chigh[0] - clow[0]))  # one width for every item
    assert np.mean((clow <= f) & (f <= chigh)) >= LEVEL - tol
    # a lower level gives narrower intervals around the same centre
    l80, h80 = oracle.intervals(est, n, level=0.8)
    assert np.all(h80 - l80 < high - low) and np.allclose((l80 + h80) / 2, est)


def test_intervals_by_hand():
    # KRR with k = 4, e^eps = 3: a1 = 3/6 = 1/2, a0 = 1/6, a1 - a0 = 1/3, so
    # Var(f) = 9 (n (1/6)(5/6) + f (1/4 - 5/36)) = 125 + f for n = 100
    oracle = KRR(4, math.log(3.0))
    est = np.array([10.0, -5.0, 200.0, 0.0])
    low, high = oracle.intervals(est, 100)
    var = np.array([135.0, 125.0, 225.0, 125.0])  # f = est clipped to [0, 100]
    assert np.allclose(high - est, Z95 * np.sqrt(var), rtol=1e-9)
    assert np.allclose(est - low, Z95 * np.sqrt(var), rtol=1e-9)
    low, high = oracle.intervals(est, 100, conservative=True)  # max(125 + 0, 125 + 100)
    assert np.allclose(high - est, Z95 * 15.0, rtol=1e-9)
    one_low, one_high = oracle.intervals(-5.0, 100, level=0.99)  # one estimate (estimate_one)
    z99 = 2.5758293035489004
    assert float(one_high) - (-5.0) == pytest.approx(z99 * math.sqrt(125.0), rel=1e-9)
    low, high = oracle.intervals(np.zeros(4), 0)  # no reports: the estimate is exact
    assert np.all(low == 0) and np.all(high == 0)


def test_every_frequency_oracle_has_intervals():
    from ldpcompress.randomizers import make_oracle, oracle_names
    for oracle in [*(make_oracle(name, 10, 1.0) for name in oracle_names()),
                   VectorPIRappor(10, 1.0, 5)]:
        low, high = oracle.intervals(np.zeros(10), 100)
        assert np.all(low < 0) and np.all(high > 0), oracle


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(est=[1.0, 2.0, 3.0]), ValueError, "shape (4,)"),
    (dict(est=[1.0, 2.0, 3.0, float("nan")]), ValueError, "finite"),
    (dict(est=[[1.0, 2.0, 3.0, 4.0]]), ValueError, "est"),
    (dict(est="1234"), TypeError, "est"),
    (dict(est=["1", "2", "3", "4"]), TypeError, "est"),
    (dict(est=None), TypeError, "est"),
    (dict(n=-1), ValueError, "n must be"),
    (dict(n=2.5), ValueError, "n must be"),
    (dict(level=1.0), ValueError, "level must be in (0, 1)"),
    (dict(level=0.0), ValueError, "level must be in (0, 1)"),
    (dict(level="0.95"), TypeError, "level"),
    (dict(conservative="yes"), TypeError, "conservative"),
])
def test_interval_arguments_are_validated(kwargs, exc, words):
    args = dict(est=[1.0, 2.0, 3.0, 4.0], n=10, level=0.9, conservative=False) | kwargs
    with pytest.raises(exc, match=re.escape(words)) as err:
        KRR(4, 1.0).intervals(**args)
    assert words in str(err.value)


# -- 1b. PrivUnit2 mean estimates ------------------------------------------------------------

@pytest.mark.parametrize("d, eps", [(2, 1.0), (5, 2.0), (16, 4.0), (100, 1.0), (1000, 8.0),
                                    (3, 20.0)])
def test_privunit_projection_moment_against_quadrature(d, eps):
    """A = E[<V, u>^2] by numerical integration of t's density ((1+t)/2 ~ Beta(a, a))."""
    par = PrivUnit2(d, eps).par
    a, g = (d - 1) / 2, par.gamma

    def dens(t):
        return beta_law.pdf((1 + t) / 2, a, a) / 2

    def quad(fun, lo, hi):
        return integrate.quad(fun, lo, hi, limit=200, epsabs=0, epsrel=1e-9)[0]

    cap = quad(dens, g, 1)
    on, off = quad(lambda t: t * t * dens(t), g, 1), quad(lambda t: t * t * dens(t), -1, g)
    want = par.p0 * on / cap + (1 - par.p0) * off / (1 - cap)
    assert projection_second_moment(par) == pytest.approx(want, rel=1e-8)
    # E[t] = m (unbiasedness) by the same quadrature: checks the density's parameters
    mean_t = (par.p0 * quad(lambda t: t * dens(t), g, 1) / cap
              + (1 - par.p0) * quad(lambda t: t * dens(t), -1, g) / (1 - cap))
    assert mean_t == pytest.approx(par.m, rel=1e-8)


def privunit_runs(pu, vectors, runs, seed):
    """``runs`` means of one report per row of ``vectors`` (seeded coins)."""
    ent = L.simulation_entropy(seed)
    return np.array([np.mean([pu.randomize(x, ent) for x in vectors], axis=0)
                     for _ in range(runs)])


def test_privunit_coordinate_variance_by_simulation():
    pu = PrivUnit2(8, 3.0)
    u = np.random.default_rng(4).normal(size=8)
    u /= np.linalg.norm(u)
    ent = L.simulation_entropy(6)
    zs = np.array([pu.randomize(u, ent) for _ in range(12_000)])
    var = pu.coordinate_variance(u)
    assert var.sum() == pytest.approx(pu.variance(), rel=1e-9)  # trace = E|Z - u|^2
    centred = zs - u
    s2 = np.mean(centred ** 2, axis=0)  # unbiased for Var(Z_i): the mean u is known
    sd_s2 = np.sqrt((np.mean(centred ** 4, axis=0) - s2 ** 2) / zs.shape[0])
    assert np.all(np.abs(s2 - var) <= 5 * sd_s2)
    assert pu.coordinate_variance() >= var.max()  # the worst case over unit inputs


def test_privunit_mean_interval_coverage():
    d, n, runs = 16, 400, 40
    pu = PrivUnit2(d, 4.0)
    u = np.random.default_rng(3).normal(size=d)
    u /= np.linalg.norm(u)
    means = privunit_runs(pu, [u] * n, runs, seed=5)  # every user holds u: plug-in is exact
    hits = chits = misses = 0
    for m in means:
        low, high = pu.mean_intervals(m, n, LEVEL)
        clow, chigh = pu.mean_intervals(m, n, LEVEL, conservative=True)
        assert np.all(chigh - clow >= high - low)
        hits += np.sum((low <= u) & (u <= high))
        chits += np.sum((clow <= u) & (u <= chigh))
        misses += np.linalg.norm(m - u) >= pu.error_radius(n, LEVEL)
    tol = coverage_tolerance(d * runs)
    assert abs(hits / (d * runs) - LEVEL) <= tol
    assert chits / (d * runs) >= LEVEL - tol
    assert misses / runs <= (1 - LEVEL) + coverage_tolerance(runs)


def test_privunit_conservative_intervals_cover_mixed_users():
    """Users with different vectors of norm <= 1 (rounded to the sphere by the client)."""
    d, n, runs = 6, 300, 30
    pu = PrivUnit2(d, 2.0)
    rng = np.random.default_rng(8)
    xs = rng.normal(size=(n, d))
    xs *= (rng.uniform(0, 1, size=(n, 1)) / np.linalg.norm(xs, axis=1, keepdims=True))
    truth = xs.mean(axis=0)
    means = privunit_runs(pu, xs, runs, seed=9)
    hits = sum(np.sum((lo <= truth) & (truth <= hi)) for lo, hi in
               (pu.mean_intervals(m, n, LEVEL, conservative=True) for m in means))
    assert hits / (d * runs) >= LEVEL - coverage_tolerance(d * runs)


def test_privunit_interval_arguments_are_validated():
    pu = PrivUnit2(4, 1.0)
    for call, exc, words in [
        (lambda: pu.mean_intervals(np.zeros(3), 10), ValueError,
         r"mean must be a non-empty array of shape \(4,\), got shape \(3,\)"),
        (lambda: pu.mean_intervals(np.zeros(4), 0), ValueError,
         r"n must be an integer in \[1, 9007199254740992\], got 0"),
        (lambda: pu.mean_intervals(np.zeros(4), 10, level=1.5), ValueError,
         r"level must be in \(0, 1\), got 1\.5"),
        (lambda: pu.mean_intervals(np.zeros(4), 10, conservative=1), TypeError,
         "conservative must be True or False, got 1"),
        (lambda: pu.coordinate_variance(1.5), ValueError,
         r"u must be in \[-1, 1\] \(a coordinate of a unit vector\), got 1\.5"),
        (lambda: pu.error_radius(10, level=0), ValueError, r"level must be in \(0, 1\), got 0"),
        (lambda: pu.error_radius(0), ValueError,
         r"n must be an integer in \[1, 9007199254740992\], got 0"),
    ]:
        with pytest.raises(exc, match=words):
            call()


def test_normal_quantile_used_by_intervals_is_the_textbook_one():
    from ldpcompress.randomizers.estimator import normal_quantile
    assert normal_quantile(0.95) == pytest.approx(Z95, rel=1e-12)
    assert normal_quantile(0.5) == pytest.approx(NormalDist().inv_cdf(0.75), rel=1e-12)


def test_level_near_one():
    from ldpcompress.randomizers.estimator import normal_quantile
    with mp.workdps(40):
        for level in (0.95, 0.9999999999999999, 0.5):
            assert abs(normal_quantile(level) - float(mp.sqrt(2) * mp.erfinv(level))) < 1e-12
    assert normal_quantile(0.9999999999999999) > 8.29
