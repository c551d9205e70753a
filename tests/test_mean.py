"""Mean estimation (docs/theory.md §7): PrivUnit2 exactness, compression, baseline, bad input."""
import json
import math
import re

import numpy as np
import pytest
from scipy import special, stats

import ldpcompress as L
from hang import no_hang
from ldpcompress.compression import split as SP
from ldpcompress.core.entropy import Entropy, deterministic_source
from ldpcompress.core.numerics import EXP_MAX
from ldpcompress.randomizers import privunit as PU
from ldpcompress.randomizers.onebit import OneBitSphere


def unit(d, seed=0):
    v = np.random.default_rng(seed).normal(size=d)
    return v / np.linalg.norm(v)


def test_cap_probability_two_ways_and_monte_carlo():
    d, gamma = 50, 0.2
    cap = PU.p_cap(d, gamma)
    a = (d - 1) / 2
    assert cap == pytest.approx(special.betainc(a, a, (1 - gamma) / 2), rel=1e-10)
    g = np.random.default_rng(4).normal(size=(200_000, d))
    frac = np.mean(g[:, 0] / np.linalg.norm(g, axis=1) >= gamma)
    assert abs(frac - cap) < 5 * math.sqrt(cap * (1 - cap) / 200_000)


@pytest.mark.parametrize("d, eps", [(20, 1.0), (200, 4.0), (100_000, 8.0)])
def test_privacy_formula_and_optimised_split(d, eps):
    par = PU.optimal_params(d, eps)
    assert par.eps == pytest.approx(eps, rel=1e-9) and par.eps <= eps * (1 + 1e-9)
    assert math.isfinite(par.m) and par.m > 0
    # the optimum beats nearby splits of the same budget
    for shift in (-0.05, 0.05):
        eps1 = math.log(par.p0 / (1 - par.p0)) + shift * eps
        p0 = 1 / (1 + math.exp(-eps1))
        other = PU.params(d, p0, max(0.0, PU.gamma_for_cap(d, 1 / (1 + math.exp(eps - eps1)))))
        assert other.m <= par.m * (1 + 1e-6)


def test_privunit_is_unbiased_and_norm_is_one_over_m():
    d, n = 30, 20_000
    mech = PU.PrivUnit2(d, 2.0)
    u = unit(d)
    ent = Entropy(deterministic_source(1))
    zs = np.array([mech.randomize(u, ent) for _ in range(n)])
    assert np.allclose(np.sum(zs ** 2, axis=1), 1 / mech.par.m ** 2, rtol=1e-9)
    cov_diag = np.var(zs, axis=0)
    z = (zs.mean(axis=0) - u) / np.sqrt(cov_diag / n)
    assert np.max(np.abs(z)) < 5
    # the cap is hit with probability p0
    inside = (zs @ u) * mech.par.m >= mech.par.gamma
    assert abs(inside.mean() - mech.par.p0) < 5 * math.sqrt(mech.par.p0 * (1 - mech.par.p0) / n)


def test_compressed_matches_uncompressed():
    d, n = 40, 3000
    u = unit(d, 2)
    ent = Entropy(deterministic_source(9))
    comp = SP.CompressedPrivUnit2(d, 3.0, entropy=ent)
    plain = PU.PrivUnit2(d, 3.0)
    zc = comp.decode_many(comp.encode_many([u] * n))
    zp = np.array([plain.randomize(u, ent) for _ in range(n)])
    assert stats.ks_2samp(zc @ u, zp @ u).pvalue > 1e-4
    assert np.allclose(np.linalg.norm(zc, axis=1), 1 / comp.inner.par.m)
    z = (zc.mean(axis=0) - u) / np.sqrt(np.var(zc, axis=0) / n)
    assert np.max(np.abs(z)) < 5


def test_split_copies_and_trials():
    d, eps = 100, 8.0
    k = SP.choose_split(d, eps, max_trials=50)
    comp = SP.CompressedPrivUnit2(d, eps, split=k)
    assert comp.expected_trials <= 50 and len(comp.encode(unit(d))) == k
    assert k == 1 or (k - 1) * math.exp(PU.PrivUnit2(d, eps / (k - 1)).deletion_eps) > 50


def test_decoding_is_deterministic():
    comp = SP.CompressedPrivUnit2(16, 2.0)
    rep = comp.encode(unit(16))
    assert np.array_equal(comp.decode(rep), comp.decode(list(rep)))
    assert np.array_equal(comp.decode(rep), SP.CompressedPrivUnit2(16, 2.0).decode(rep))


def test_short_vectors_are_rounded_unbiasedly():
    d, n = 10, 20_000
    x = 0.3 * unit(d, 5)
    ob = OneBitSphere(d, 1.0)
    ent = Entropy(deterministic_source(3))
    zs = np.array([ob.randomize(x, ent) for _ in range(n)])
    z = (zs.mean(axis=0) - x) / np.sqrt(np.var(zs, axis=0) / n)
    assert np.max(np.abs(z)) < 5


@pytest.mark.parametrize("call, words", [
    (lambda: PU.PrivUnit2(10, 1.0).randomize(np.ones(10)),
     r"input vector 0 has norm 3\.16228, above 1"),
    (lambda: PU.PrivUnit2(10, 1.0).randomize(np.ones(9) / 3),
     r"input vectors must be an array of shape \(n, 10\), got shape \(1, 9\)"),
    (lambda: PU.PrivUnit2(10, 0.0), r"eps must be finite and > 0, got 0\.0"),
    (lambda: PU.PrivUnit2(1, 1.0), r"d must be an integer in \[2, 9007199254740992\], got 1"),
    (lambda: SP.CompressedPrivUnit2(10, 1.0).encode(np.full(10, np.nan)),
     r"input vector 0 is not finite"),
    (lambda: SP.CompressedPrivUnit2(10, 1.0, split=2).decode([bytes(17)]),
     r"a report has 2 seeds, got 1"),
    (lambda: PU.params(10, 0.4, 0.1), r"p0 must be in \[1/2, 1\), got 0\.4"),
])
def test_bad_input(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_mean_cli(capsys):
    import json

    from ldpcompress.cli import main
    assert main(["mean", "--d", "50", "--n", "500", "--eps", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["results"]
    for name in ("privunit2", "privunit2-compressed"):
        assert out[name]["mse"] < 5 * out[name]["predicted"]
    assert out["privunit2-compressed"]["bytes"] == 17 * out["split"]


# -- hangs, memory and parameters (issue 13) ------------------------------------------------------

def test_split_one_at_large_eps_refused_with_the_remedy():
    # was: `mean --eps 14 --split 1` ran for minutes (e^eps_d expected trials per report)
    with no_hang("CompressedPrivUnit2(100, 14, split=1)"), pytest.raises(ValueError, match="expected trials per report") as err:
        SP.CompressedPrivUnit2(100, 14.0, split=1)
    msg = str(err.value)
    assert "expected trials" in msg and "choose_split" in msg and "eps/K" in msg
    k = SP.choose_split(100, 14.0)
    comp = SP.CompressedPrivUnit2(100, 14.0, split=k)
    assert comp.expected_trials <= 1000.0
    # choose_split never goes above the library cap on expected trials
    k_cap = SP.choose_split(100, 14.0, max_trials=1e9)
    assert k_cap * math.exp(PU.PrivUnit2(100, 14.0 / k_cap).deletion_eps) <= 1e4


@pytest.mark.parametrize("call, words", [
    (lambda: PU.PrivUnit2(float("inf"), 2.0), r"d must be an integer in \[2, .*\], got inf"),
    (lambda: PU.PrivUnit2(2.7, 2.0), r"d must be an integer in \[2, .*\], got 2\.7"),
    (lambda: PU.PrivUnit2(10, float("nan")), r"eps must be finite and > 0, got nan"),
    (lambda: PU.PrivUnit2(1, 2.0), r"d must be an integer in \[2, .*\], got 1"),
    (lambda: PU.PrivUnit2(10, 2.0, p0="0.7"), r"p0 must be a real number, got str"),
    (lambda: PU.PrivUnit2(10, 2.0, gamma=0.1), r"gamma is given without p0: give both or neither"),
    (lambda: SP.CompressedPrivUnit2(10, 2.0, split=1.5),
     r"split must be an integer in \[1, 1000\], got 1\.5"),
    (lambda: SP.CompressedPrivUnit2(10, 2.0, split=0),
     r"split must be an integer in \[1, 1000\], got 0"),
    (lambda: OneBitSphere(10, 1e4), r"eps must be in \[1e-09, 700\] .*, got 10000\.0"),
    (lambda: SP.choose_split(float("inf"), 2.0), r"d must be an integer in \[2, .*\], got inf"),
])
def test_mean_parameters_refused(call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()


def test_integral_float_dimension_accepted():
    assert PU.PrivUnit2(1e2, 2.0).d == 100


def test_dimension_memory_refused_with_the_figure():
    with pytest.raises(ValueError, match="would need") as err:
        PU.PrivUnit2(10 ** 10, 2.0)
    assert "GiB" in str(err.value) and "reduce d" in str(err.value)


def test_zero_vector_in_high_dimension_does_not_allocate_d_squared():
    # was np.eye(d)[0]: d = 1e6 needs 7.3 TiB
    u = PU.round_to_sphere(np.zeros(10 ** 6), Entropy(deterministic_source(1)))
    assert abs(abs(u[0]) - 1) < 1e-15 and np.count_nonzero(u) == 1


def test_decode_many_empty_and_malformed():
    comp = SP.CompressedPrivUnit2(8, 2.0, split=2)
    assert comp.decode_many([]).shape == (0, 8)
    with pytest.raises(TypeError, match="a report is a list of 2 seeds"):
        comp.decode(b"\x01" * 2)
    with pytest.raises(ValueError, match="a report has 2 seeds"):
        comp.decode([b"\x01" + bytes(16)])


# -- eps range, tiny eps, long runs (issue 13 follow-up) ------------------------------------------

GRID_D = [2, 3, 5, 10, 1000]
GRID_EPS = [1e-6, 1e-3, 1, 8, 14, 20, 32, 50, 100, 300, 700]


@pytest.mark.parametrize("d", GRID_D)
def test_privunit_over_the_eps_grid_works_or_names_the_range(d):
    # was: ZeroDivisionError in log_m for PrivUnit2(2, 32), (3, 50), (5, 300), ... and
    # "parameter search exceeded eps (1.0004e-06 > 1e-06)" at eps = 1e-6; d = 10, eps = 100
    # gave m > 1 (a negative variance)
    lo, hi = PU.eps_range(d)
    assert lo == PU.MIN_EPS and hi <= EXP_MAX
    for eps in GRID_EPS:
        if eps > hi:
            with pytest.raises(ValueError, match="for PrivUnit2 in dimension") as err:
                PU.PrivUnit2(d, eps)
            msg = str(err.value)
            assert msg.startswith("eps must be in [1e-09, ") and f"d = {d}" in msg
            assert f"got {eps:g}" in msg
            continue
        mech = PU.PrivUnit2(d, eps)
        assert eps * (1 - 1e-6) <= mech.eps <= eps  # never above the budget
        assert 0 < mech.par.m <= 1 and math.isfinite(mech.variance()) and mech.variance() >= 0
        assert 0 < mech.deletion_eps < math.inf


def test_privunit_supported_range_is_stated_and_its_ends_work():
    assert PU.eps_range(2)[1] == pytest.approx(31.64, abs=0.01)
    assert PU.eps_range(3)[1] == pytest.approx(41.58, abs=0.01)
    assert PU.eps_range(1000)[1] == 700.0
    for d in (2, 3, 5, 10, 52, 1000, 10 ** 5):
        lo, hi = PU.eps_range(d)
        for eps in (lo, hi):
            assert PU.PrivUnit2(d, eps).eps <= eps
        with pytest.raises(ValueError, match=r"eps must be in \["):
            PU.PrivUnit2(d, hi * (1 + 1e-9))
        with pytest.raises(ValueError, match=r"eps must be in \["):
            PU.PrivUnit2(d, lo / 2)
    for call in (lambda: PU.PrivUnit2(2, 32), lambda: SP.CompressedPrivUnit2(2, 32, 1),
                 lambda: PU.PrivUnit2(3, 50), lambda: PU.PrivUnit2(5, 300),
                 lambda: PU.PrivUnit2(2, 1e-300), lambda: OneBitSphere(2, 1e-300)):
        with pytest.raises(ValueError, match=r"eps"):
            call()


def test_tiny_eps_is_exact_and_unbiased():
    for d in GRID_D:
        mech = PU.PrivUnit2(d, 1e-6)
        assert 1e-6 * (1 - 1e-9) <= mech.eps <= 1e-6
        assert mech.deletion_eps == pytest.approx(5e-7, rel=1e-3)
    comp = SP.CompressedPrivUnit2(2, 1e-6)
    assert comp.expected_trials == pytest.approx(1.0, abs=1e-5)


def test_split_below_the_range_is_refused_naming_eps_and_split():
    assert SP.CompressedPrivUnit2(2, 1e-6, split=1000).split == 1000  # 1e-9 each: in range
    with pytest.raises(ValueError, match="for PrivUnit2") as err:
        SP.CompressedPrivUnit2(2, 1e-7, split=1000)
    msg = str(err.value)
    assert "eps/split = 1e-10" in msg and "choose split in [1, 100]" in msg
    assert SP.choose_split(1000, 700.0, max_trials=1e4) <= 1000
    with pytest.raises(ValueError, match=r"eps = 700: no split K up to 1000"):
        SP.choose_split(1000, 700.0)  # 1000 trials per report cannot be met


def _mean_cli(argv, capsys):
    from ldpcompress.cli import main
    code = main(["mean"] + argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv, message", [
    (["--eps", "50", "--d", "2", "--n", "2"], "--eps must be in [1e-09, 31.64] for PrivUnit2 in "
                                              "dimension d = 2"),
    (["--eps", "1e-300", "--d", "2", "--n", "2"], "--eps must be in [1e-09, 31.64]"),
    (["--eps", "1e-9", "--d", "2", "--n", "2", "--split", "2"], "choose --split in [1, 1]"),
    (["--eps", "30", "--d", "3", "--n", "5", "--split", "1"], "a larger --split"),
])
def test_mean_cli_eps_range_refused_naming_the_option(capsys, argv, message):
    code, _, err = _mean_cli(argv, capsys)
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1
    # the command line has no max_bytes / max_expected_trials / choose_split: never advised
    assert "max_expected_trials" not in err and "choose_split" not in err


@pytest.mark.parametrize("eps", ["1e-6", "1e-9", "31", "0.001"])
def test_mean_cli_tiny_and_large_eps_run(capsys, eps):
    code, out, err = _mean_cli(["--eps", eps, "--d", "2", "--n", "2", "--json"], capsys)
    assert code == 0, err
    res = json.loads(out)["results"]
    assert all(math.isfinite(r["predicted"]) and r["predicted"] >= 0
               for r in res.values() if isinstance(r, dict))


def test_mean_cli_warns_before_a_long_run(capsys, monkeypatch):
    # was: `mean --eps 14` ran 136 s (255.7 expected trials x 10,000 reports) without a word
    from ldpcompress.estimation import mean as job  # the command imports it when it runs
    calls = []
    monkeypatch.setattr(job, "run", lambda d, n, eps, split, **kw: calls.append(split) or {
        "split": split, "expected_trials": 1.0})
    code, _, err = _mean_cli(["--eps", "14"], capsys)
    assert code == 0 and calls == [SP.choose_split(1000, 14.0)]
    line = err.strip()
    assert line.startswith("ldpcompress: warning:") and len(line.splitlines()) == 1
    assert "255.7 expected trials per report" in line and "2.56e+06 in all" in line
    suggested = int(re.search(r"--split (\d+) needs", line).group(1))
    assert suggested > calls[0]
    # the suggested split does bring the estimate under the warning threshold
    assert job.work_warning(1000, 10_000, 14.0, suggested, False) is None
    # the per-report cap is unchanged: the default split still allows up to 1000 trials
    assert SP.CompressedPrivUnit2(1000, 14.0, calls[0]).expected_trials <= 1000


def test_mean_cli_small_run_has_no_warning(capsys):
    code, _, err = _mean_cli(["--d", "50", "--n", "200", "--eps", "4"], capsys)
    assert code == 0 and err == ""


def test_split_hint_names_a_function_that_exists_and_runs():
    # was: the hint named `mean.choose_split(...)`, which no module has
    import importlib
    with pytest.raises(ValueError, match="expected trials per report") as err:
        SP.CompressedPrivUnit2(100, 14.0, split=1)
    found = re.search(r"([\w.]+)\.(\w+)\((\d+), ([\d.e+-]+)\) finds K", str(err.value))
    assert found, str(err.value)
    module, name, d, eps = found.groups()
    fn = getattr(importlib.import_module(module), name)
    k = fn(int(d), float(eps))
    assert (int(d), float(eps)) == (100, 14.0)
    assert SP.CompressedPrivUnit2(100, 14.0, split=k).expected_trials <= 1000.0


def test_complex_vectors_are_refused():
    pu = L.PrivUnit2(4, 1.0)
    v = np.array([0.5 + 0.1j, 0.5, 0.5, 0.1])
    with pytest.raises(TypeError, match="complex"):
        pu.randomize(v)
    with pytest.raises(TypeError, match="complex"):
        L.compress(pu).encode(v)
    with pytest.raises(TypeError, match="bool"):
        pu.randomize(np.array([True, False, False, False]))
