"""Laplace and Gaussian scalar randomizers through the contract: validation, unbiased means
within the variance formula (seeded), the Laplace density ratio and compression, Gaussian's
refusal, the registry round trip."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import ldpcompress.accounting.amplification as L

from ldpcompress.core.entropy import Entropy
from ldpcompress.randomizers import GaussianScalar, LaplaceScalar
from ldpcompress.randomizers import registry
from ldpcompress.randomizers.scalar import laplace_from_uniforms


@pytest.mark.parametrize("r", [LaplaceScalar(-1.0, 3.0, 1.5), GaussianScalar(-1.0, 3.0, 0.7)])
def test_mean_is_unbiased_within_its_variance(r):
    ent = Entropy.seeded_for_simulation(11)
    n = 200_000
    xs = np.linspace(-1.0, 3.0, n)
    reports = r.randomize_many(xs, ent)
    est = r.estimate_from_summary(r.summarize(reports), n)[0]
    sd = math.sqrt(r.noise_variance() / n)
    assert abs(est - xs.mean()) < 5 * sd
    lo, hi = r.intervals([est], n)
    assert lo[0] < xs.mean() < hi[0]
    assert registry.build(r.name, r.params()) == r
    assert np.array_equal(r.from_columns(r.to_columns(reports)), reports)


def test_laplace_sampler_matches_its_law():
    u = (np.arange(2 ** 16) + 0.0) / 2 ** 16
    z = laplace_from_uniforms(u)
    assert np.all(np.isfinite(z)) and abs(z.mean()) < 1e-3
    ent = Entropy.seeded_for_simulation(3)
    noise = LaplaceScalar(0.0, 1.0, 2.0).randomize_many(np.zeros(50_000), ent)
    assert stats.kstest(noise / 0.5, "laplace").pvalue > 1e-3


def test_inputs_and_reports_are_validated():
    r = LaplaceScalar(0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="input 1"):
        r.check_items([0.5, 1.5])
    with pytest.raises(ValueError, match="input 0"):
        r.check_items([float("nan")])
    with pytest.raises(TypeError, match="inputs must be real numbers"):
        r.check_items(["a"])
    with pytest.raises(ValueError, match="report 0"):
        r.check_reports([1e6])
    with pytest.raises(ValueError, match="lo < hi"):
        LaplaceScalar(1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="eps"):
        LaplaceScalar(0.0, 1.0, -1.0)
    with pytest.raises(ValueError, match="sigma"):
        GaussianScalar(0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="summary is a finite"):
        r.estimate_from_summary(np.array([np.inf]), 3)


def test_laplace_ratio_and_compression_contract():
    r = LaplaceScalar(0.0, 2.0, 3.0)
    b = 2.0 / 3.0
    for x, y in [(0.0, -1.0), (2.0, 0.3), (0.7, 5.0)]:
        want = stats.laplace.pdf(y, loc=x, scale=b) / stats.laplace.pdf(y, loc=1.0, scale=b)
        assert r.ratio(x, y) == pytest.approx(want, rel=1e-12)
    lo, hi = r.ratio_bounds()
    assert lo == pytest.approx(math.exp(-1.5)) and hi == pytest.approx(math.exp(1.5))
    assert r.deletion_eps == pytest.approx(1.5)
    assert r.compression_refusal() is None
    seeds = np.frombuffer(bytes(range(64)), dtype=np.uint8).reshape(4, 16)
    got = r.ratios_from_seeds(np.array([0.0, 1.0, 2.0, 0.5]), seeds)
    want = [r.ratio(x, r.decode_seed(bytes(s))) for x, s in zip([0.0, 1.0, 2.0, 0.5], seeds)]
    assert np.allclose(got, want, rtol=1e-12)


def test_gaussian_refuses_compression():
    g = GaussianScalar(0.0, 1.0, 1.0)
    assert "not pure" in g.compression_refusal()
    from ldpcompress.compression.sampler import compress
    with pytest.raises(ValueError, match="does not take"):
        compress(g)


def test_ranges_whose_estimator_overflows_are_refused_at_construction():
    # before: LaplaceScalar(-1e200, 1e200, 1) built and its variance raised OverflowError, and
    # GaussianScalar(0, 1, 1.7e308) clients sent +-inf reports
    with pytest.raises(ValueError, match=r"\[lo, hi\] = \[-1e\+200, 1e\+200\].*eps = 1.0"):
        LaplaceScalar(-1e200, 1e200, 1.0)
    with pytest.raises(ValueError, match="sigma = 1.7e"):
        GaussianScalar(0.0, 1.0, 1.7e308)
    with pytest.raises(ValueError, match="eps = 1e-290"):
        LaplaceScalar(0.0, 1.0, 1e-290)   # b = 1e290: its variance 2 b^2 overflows
    with pytest.raises(ValueError, match="below 1e-300.*sigma"):
        GaussianScalar(0.0, 5e-324, 1.0)  # the half-width underflows to 0
    r = LaplaceScalar(-1e100, 1e100, 1.0)  # within the limit: every estimate is finite
    assert math.isfinite(r.variance(1)) and math.isfinite(r.randomize(1e100))


_REALS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(-10.0, 10.0),
                   st.sampled_from([0.0, 1.0, 5e-324, 1e-300, 1e150, 1e200, -1e200, 1.7e308]))


@settings(max_examples=400, deadline=None, database=None)
@given(cls=st.sampled_from([LaplaceScalar, GaussianScalar]), lo=_REALS, hi=_REALS, p=_REALS,
       frac=st.floats(0.0, 1.0), n=st.sampled_from([1, 3, 10 ** 6, 10 ** 15]))
def test_any_parameters_build_and_estimate_or_are_refused(cls, lo, hi, p, frac, n):
    """Construction, client, summary, estimator, intervals and the structure: a clear error
    (ValueError/TypeError naming a parameter) or finite answers, never another exception."""
    try:
        r = cls(lo, hi, p)
    except (ValueError, TypeError) as err:
        assert any(w in str(err) for w in ("lo", "hi", "eps", "sigma")), err
        return
    xs = np.array([r.lo, r.hi, min(max(r.lo + frac * (r.hi - r.lo), r.lo), r.hi)])
    reports = r.randomize_many(xs, Entropy.seeded_for_simulation(1))
    assert np.all(np.isfinite(reports))
    assert np.array_equal(r.from_columns(r.to_columns(reports)), reports)
    est = r.estimate_from_summary(r.summarize(reports), 3)
    assert np.all(np.isfinite(est)) and math.isfinite(r.variance(n))
    a, b = r.intervals(est, n)
    assert np.all(np.isfinite(a)) and np.all(a <= b) and np.all(np.isfinite(b))
    st_ = r.shuffle_structure()
    assert st_.half_width > 0.0 and registry.build(r.name, r.params()) == r


@pytest.mark.slow
@settings(max_examples=120, deadline=None, database=None)
@given(cls=st.sampled_from([LaplaceScalar, GaussianScalar]), lo=st.floats(-1e6, 1e6),
       width=st.floats(1e-6, 1e6), ratio=st.floats(1e-3, 1e3),
       n=st.sampled_from([1, 2, 5, 16, 1000]), eps=st.sampled_from([0.01, 0.5, 2.0]))
def test_any_scalar_query_answers_soundly_or_refuses(cls, lo, width, ratio, n, eps):
    """Accounting of any buildable scalar randomizer: a delta in [0, 1] with lower <= upper,
    or a ValueError naming what is out of range."""
    try:
        r = cls(lo, lo + width, ratio)
    except ValueError as err:
        assert "eps" in str(err) or "sigma" in str(err) or "hi" in str(err), err
        return
    res = L.delta(n, eps=eps, oracle=r)
    assert 0.0 <= res.value <= 1.0
    assert res.lower is None or 0.0 <= res.lower <= res.value
