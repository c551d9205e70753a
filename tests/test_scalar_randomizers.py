"""Laplace and Gaussian scalar randomizers through the contract: validation, unbiased means
within the variance formula (seeded), the Laplace density ratio and compression, Gaussian's
refusal, the registry round trip."""
import math

import numpy as np
import pytest
from scipy import stats

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
    with pytest.raises(TypeError):
        r.check_items(["a"])
    with pytest.raises(ValueError, match="report 0"):
        r.check_reports([1e6])
    with pytest.raises(ValueError, match="lo < hi"):
        LaplaceScalar(1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="eps"):
        LaplaceScalar(0.0, 1.0, -1.0)
    with pytest.raises(ValueError, match="sigma"):
        GaussianScalar(0.0, 1.0, 0.0)
    with pytest.raises(ValueError):
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
    with pytest.raises(ValueError):
        compress(g)
