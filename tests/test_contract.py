"""The randomizer contract (randomizers/contract.py), checked on every shipped randomizer and on
the worked example of a user's own (docs/examples/yes_no.py): each job works through the
contract alone."""
import json

import numpy as np
import pytest
from shipped import EXAMPLES, SHIPPED

import ldpcompress as L
from ldpcompress.accounting import Accountant, OracleShuffledRound
from ldpcompress.core.entropy import simulation_entropy
from ldpcompress.randomizers import LocalRandomizer, Privacy, ShuffleStructure, registry

CASES = SHIPPED + EXAMPLES
IDS = [c[0] for c in CASES]


def reports_of(make, inputs, n=64, seed=1):
    r = make()
    xs = inputs(n, np.random.default_rng(seed))
    return r, xs, r.randomize_many(xs, simulation_entropy(seed))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_identity_rebuilds_through_the_registry(case):
    r = case[1]()
    assert isinstance(r, LocalRandomizer) and isinstance(r.privacy, Privacy)
    assert 0 < r.eps < np.inf and 0 < r.replacement_eps < np.inf
    spec = registry.spec(r)
    again = registry.check_spec(json.loads(json.dumps(spec)), "test")
    assert again == r and hash(again) == hash(r) and again is not r
    assert r.name in registry.names() and r.name in r.describe() and repr(r)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_summaries_add_and_estimate(case):
    r, xs, rep = reports_of(case[1], case[2])
    rep = r.check_reports(rep)
    n = r.n_reports(rep)
    assert n == len(xs)
    spec = r.summary_spec()
    s = r.summarize(rep)
    assert s.shape == spec.shape and s.dtype == np.dtype(spec.dtype)
    a, b = r.from_columns({k: v[:20] for k, v in r.to_columns(rep).items()}), \
        r.from_columns({k: v[20:] for k, v in r.to_columns(rep).items()})
    np.testing.assert_allclose(r.summarize(a) + r.summarize(b), s, rtol=1e-12)
    np.testing.assert_allclose(r.summarize(r.concat([a, b])), s, rtol=1e-12)
    est = r.estimate_from_summary(s, n)
    np.testing.assert_allclose(est, r.estimate(rep), rtol=1e-12)
    low, high = r.intervals(est, n)
    assert low.shape == est.shape and np.all(low <= est) and np.all(est <= high)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_storage_round_trip_and_refusals(case):
    r, _, rep = reports_of(case[1], case[2])
    cols = r.to_columns(rep)
    spec = r.report_columns()
    assert [c.name for c in spec] == list(cols)
    for c in spec:
        assert cols[c.name].dtype == np.dtype(c.dtype)
        assert cols[c.name].shape[1:] == ((c.width,) if c.width > 1 else ())
    back = r.from_columns(cols)
    np.testing.assert_array_equal(r.summarize(back), r.summarize(rep))
    with pytest.raises(ValueError, match="columns"):
        r.from_columns({**cols, "extra": cols[spec[0].name]})
    first = spec[0]
    bad = dict(cols)
    bad[first.name] = cols[first.name][:-1]  # one column shorter
    if len(spec) > 1:
        with pytest.raises(ValueError, match="rows"):
            r.from_columns(bad)
    with pytest.raises((ValueError, TypeError)):
        r.from_columns({**cols, first.name: np.full_like(cols[first.name], np.nan, dtype=float)})


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_compression_accepts_or_says_why(case):
    r, xs, _ = reports_of(case[1], case[2], n=4)
    reason = r.compression_refusal()
    if reason is not None:
        assert isinstance(reason, str) and reason
        with pytest.raises(ValueError, match="does not take"):
            L.compress(r)
        return
    pr = L.compress(r, entropy=simulation_entropy(3))
    seeds = [pr.encode(x)[1:] for x in xs]
    decoded = r.decode_seeds(seeds)
    for s, y in zip(seeds, decoded):
        np.testing.assert_array_equal(r.decode_seed(s), y)
    np.testing.assert_allclose(r.summarize_seeds(seeds), r.summarize(decoded))
    ratios = r.ratios_from_seeds(xs, seeds)
    assert np.all(ratios > 0) and np.all(ratios <= np.exp(r.deletion_eps) * (1 + 1e-9))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_accounting_through_the_contract(case):
    r = case[1]()
    st = r.shuffle_structure()
    assert st is None or isinstance(st, ShuffleStructure)
    res = L.epsilon(2000, delta=1e-6, oracle=r)
    generic = L.epsilon(2000, r.replacement_eps, 1e-6, lower=False).value
    assert 0 <= res.value <= generic * (1 + 1e-9)
    acct = Accountant().compose(OracleShuffledRound(2000, r), times=2)
    again = Accountant.from_json(acct.to_json())
    assert again.events == acct.events
    assert again.epsilon(1e-6).value == acct.epsilon(1e-6).value


def test_the_worked_example_gets_the_krr_bounds():
    """The yes/no example's blanket law is k-RR's with k = 2: its bound is exact k = 2 RR's."""
    r = EXAMPLES[0][1]()
    ours = L.epsilon(10 ** 4, delta=1e-6, oracle=r)
    krr = L.epsilon(10 ** 4, delta=1e-6, oracle=L.KRR(2, 1.0))
    assert ours.value == pytest.approx(krr.value, rel=1e-9)
    assert ours.lower <= ours.value


def test_a_user_randomizer_missing_a_part_cannot_be_built():
    class Half(LocalRandomizer):
        name = "half"

        def params(self):
            return {}

    with pytest.raises(TypeError, match="abstract"):
        Half()


def test_registry_refuses_clashes_and_unknown_names():
    with pytest.raises(ValueError, match="taken"):
        @registry.register
        class Clash(L.KRR):
            name = "krr"
    with pytest.raises(ValueError, match="unknown randomizer 'nope'"):
        registry.build("nope", {})
    with pytest.raises(ValueError, match="where: .*k"):
        registry.build("krr", {"k": 1, "eps": 1.0}, "where")
    with pytest.raises(ValueError, match="where"):
        registry.build("krr", {"k": 10, "eps": 1.0, "colour": 3}, "where")


def test_the_guide_shows_the_example_file_verbatim():
    import re
    from pathlib import Path
    from shipped import EXAMPLE
    guide = (Path(EXAMPLE).parent.parent / "guide.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    assert any(b.strip() == Path(EXAMPLE).read_text().strip() for b in blocks)


@pytest.mark.parametrize("case", SHIPPED[:9], ids=IDS[:9])
def test_an_empty_list_is_an_empty_batch(case):
    """numpy reads [] as float64: every frequency oracle refused an empty Python list."""
    r = case[1]()
    rep = r.randomize_many([])
    assert r.n_reports(rep) == 0
    assert np.all(r.estimate(rep) == 0)
