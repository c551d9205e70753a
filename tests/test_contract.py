"""The randomizer contract (randomizers/contract.py), checked on every shipped randomizer, on
the worked example of a user's own (docs/examples/yes_no.py) and on the compressed wrapper
(17-byte seed reports) of every one that compresses: each job works through the contract
alone, report sets on disk and their aggregation in memory and on Dask included."""
import json
import re

import numpy as np
import pytest
from shipped import EXAMPLES, SCALARS, SHIPPED, compressed_cases

import ldpcompress as L
from ldpcompress.accounting import Accountant, OracleShuffledRound
from ldpcompress.core.entropy import simulation_entropy
from ldpcompress.randomizers import (LocalRandomizer, Privacy, ShuffleStructure, TableStructure,
                                     registry)

CASES = SHIPPED + EXAMPLES
CASES += compressed_cases(CASES)
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
    with pytest.raises((ValueError, TypeError), match="report"):
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


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c[0] == "oue" else c
                                  for c in CASES], ids=IDS)  # oue: ~20 s in a full run
def test_accounting_through_the_contract(case):
    r = case[1]()
    st = r.shuffle_structure()
    assert st is None or isinstance(st, (ShuffleStructure, TableStructure))
    res = L.epsilon(2000, delta=1e-6, oracle=r)
    generic = L.epsilon(2000, r.replacement_eps, 1e-6, lower=False).value
    assert 0 <= res.value <= generic * (1 + 1e-9)
    acct = Accountant().compose(OracleShuffledRound(2000, r), times=2)
    again = Accountant.from_json(acct.to_json())
    assert again.events == acct.events
    assert again.epsilon(1e-6).value == acct.epsilon(1e-6).value


# the contract's public methods that check once and call a private hook
CHECKED_ONCE = ("randomize_many", "randomize", "summarize", "estimate", "to_columns",
                "from_columns", "concat")


@pytest.mark.parametrize("case", CASES + SCALARS, ids=IDS + [c[0] for c in SCALARS])
def test_randomizers_implement_hooks_not_the_public_methods(case):
    """Every shipped randomizer, the worked example and the compressed wrapper use the
    contract's own public methods (which check once, then call the hooks); main at a3144db
    had 39 overrides of them in randomizers/ and compression/ (each with its own checks)."""
    cls = type(case[1]())
    own = [name for name in CHECKED_ONCE if getattr(cls, name) is not getattr(LocalRandomizer, name)]
    assert own == [], f"{cls.__name__} overrides {own}: implement the hooks instead"


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


# -- report sets: every case on disk, aggregated in memory and on Dask -------------------------
SET_CASES = CASES + SCALARS + compressed_cases(SCALARS)
SET_IDS = [c[0] for c in SET_CASES]


@pytest.fixture(scope="module")
def client():
    """One small in-process Dask cluster for the module."""
    dist = pytest.importorskip("distributed")
    pytest.importorskip("pyarrow")
    with dist.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                           dashboard_address=":0") as cluster, dist.Client(cluster) as c:
        yield c


def _exact(r) -> bool:
    return np.dtype(r.summary_spec().dtype).kind in "iu"


def _written(case, tmp_path, n=240, shards=3):
    from ldpcompress.scale import report_files as RF
    r, xs, rep = reports_of(case[1], case[2], n=n)
    RF.write_reports(tmp_path / "set", r, rep, shards=shards)
    return r, rep, tmp_path / "set"


@pytest.mark.parametrize("case", SET_CASES, ids=SET_IDS)
def test_report_set_aggregates_in_memory_and_on_dask(case, tmp_path, client, capsys):
    from ldpcompress.cli import main
    from ldpcompress.scale import distributed as D
    r, rep, out = _written(case, tmp_path)
    n = r.n_reports(r.check_reports(rep))
    truth_summary, truth = r.summarize(rep), r.estimate(rep)     # the reports, never on disk
    mem = D.aggregate([out], scheduler="memory")
    dask = D.aggregate([out], client=client)
    assert mem["method"] == "memory" and dask["method"] == "dask"
    assert mem["randomizer"] == r == dask["randomizer"] and mem["n"] == dask["n"] == n
    assert mem["shards"] == dask["shards"] == 3
    if _exact(r):  # integer summaries: the same counts, whatever the order of the additions
        for res in (mem, dask):
            np.testing.assert_array_equal(res["summary"], truth_summary)
            np.testing.assert_array_equal(res["estimate"], truth)
    else:  # float sums of reports: the order of the additions may move the last bits
        for res in (mem, dask):
            np.testing.assert_allclose(res["estimate"], truth, rtol=0, atol=1e-12)
    low, high = r.intervals(mem["estimate"], n)
    assert low.shape == truth.shape and np.all(low <= mem["estimate"]) \
        and np.all(mem["estimate"] <= high)
    capsys.readouterr()
    assert main(["aggregate", str(out), "--json", "--level", "0.9"]) == 0
    doc = json.loads(capsys.readouterr().out)["results"]
    assert doc["n"] == n and doc["randomizer"] == registry.spec(r)
    np.testing.assert_allclose(doc["estimate"], mem["estimate"], rtol=0, atol=1e-12)
    low90, high90 = r.intervals(mem["estimate"], n, 0.9)
    np.testing.assert_allclose(doc["low"], low90, rtol=0, atol=1e-12)
    np.testing.assert_allclose(doc["high"], high90, rtol=0, atol=1e-12)


def _reseal(path):
    import hashlib
    import pyarrow.parquet as pq
    manifest = path.parent / "manifest.json"
    doc = json.loads(manifest.read_text())
    data = path.read_bytes()
    for e in doc["shards"]:
        if e["file"] == path.name:
            e.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
            e["rows"] = pq.ParquetFile(path).metadata.num_rows
    doc["reports"] = sum(e["rows"] for e in doc["shards"])
    manifest.write_text(json.dumps(doc))


def _other_case(r):
    """A case whose report columns differ from r's."""
    from ldpcompress.scale.columns import arrow_schema
    return next(c for c in SET_CASES if arrow_schema(c[1]()) != arrow_schema(r))


def _refused(out, where, *patterns):
    from ldpcompress.scale import distributed as D
    with pytest.raises(ValueError, match=re.escape(str(where))) as err:
        D.aggregate([out], scheduler="memory")
    message = str(err.value)
    assert str(where) in message, message
    for p in patterns:
        assert re.search(p, message), (p, message)


@pytest.mark.parametrize("case", SET_CASES, ids=SET_IDS)
def test_hostile_report_sets_are_refused_naming_file_and_key(case, tmp_path):
    import shutil

    import pyarrow.parquet as pq

    from ldpcompress.scale import columns as C
    from ldpcompress.scale import report_files as RF
    r, rep, good = _written(case, tmp_path, n=60)
    manifest, shards = good / "manifest.json", sorted(good.glob("*.parquet"))

    def fresh():
        out = tmp_path / f"copy{len(list(tmp_path.iterdir()))}"
        shutil.copytree(good, out)
        return out, out / "manifest.json", sorted(out.glob("*.parquet"))

    # edited parameters in the manifest: refused by the constructor, or unlike every shard's
    for name, value in registry.spec(r)["params"].items():
        out, m, s = fresh()
        doc = json.loads(m.read_text())
        edited = value + 1 if isinstance(value, (int, float)) and not isinstance(value, bool) \
            else (not value if isinstance(value, bool) else {"randomizer": "krr",
                                                            "params": {"k": 3, "eps": 1.0}})
        doc["randomizer"]["params"][name] = edited
        m.write_text(json.dumps(doc))
        _refused(out, out, "key 'randomizer'")
    # an unknown randomizer; a spec that is not one
    for spec, message in (({"randomizer": "no-such", "params": {}}, "unknown randomizer"),
                          ({"randomizer": r.name}, "exactly the keys"),
                          ([r.name], "must be dict")):
        out, m, s = fresh()
        doc = json.loads(m.read_text())
        doc["randomizer"] = spec
        m.write_text(json.dumps(doc))
        _refused(out, m, "key 'randomizer'", message)
    # one shard's metadata names another randomizer (resealed: the digests agree)
    out, m, s = fresh()
    other = _other_case(r)[1]()
    table = pq.read_table(s[1])
    meta = json.loads(table.schema.metadata[RF.META_KEY])
    meta["randomizer"] = registry.spec(other)
    pq.write_table(table.replace_schema_metadata({RF.META_KEY: json.dumps(meta).encode()}), s[1])
    _reseal(s[1])
    _refused(out, s[1], "key 'randomizer' is .* says ")
    # a shard holding another randomizer's columns under this set's metadata
    out, m, s = fresh()
    o_rep = other.randomize_many(_other_case(r)[2](20, np.random.default_rng(3)))
    schema = C.arrow_schema(other, pq.read_schema(s[0]).metadata)
    pq.write_table(C.to_table(other, other.to_columns(o_rep), schema), s[0])
    _reseal(s[0])
    _refused(out, s[0], "columns must be ")
    # garbage in the right columns (every byte 0xff); fewer rows than the manifest says
    out, m, s = fresh()
    schema = pq.read_schema(s[2])
    garbage = {}
    for c in r.report_columns():
        shape = (20, c.width) if c.width > 1 else (20,)
        nbytes = int(np.prod(shape)) * np.dtype(c.dtype).itemsize
        garbage[c.name] = np.frombuffer(b"\xff" * nbytes, np.dtype(c.dtype)).reshape(shape)
    pq.write_table(C.to_table(r, garbage, schema), s[2])
    _reseal(s[2])
    _refused(out, s[2], r"rows 0 to 19: ")
    out, m, s = fresh()
    pq.write_table(pq.read_table(s[2]).slice(0, 5), s[2])
    rows = json.loads(m.read_text())["shards"][2]["rows"]
    _reseal(s[2])
    doc = json.loads(m.read_text())
    doc["shards"][2]["rows"], doc["reports"] = rows, doc["reports"] - 5 + rows
    m.write_text(json.dumps(doc))
    _refused(out, s[2], f"5 rows, .*manifest.json says {rows}")
    out, m, s = fresh()
    s[0].write_bytes(s[0].read_bytes()[:-7])
    _refused(out, s[0], "truncated or altered")
    assert manifest.exists() and all(p.exists() for p in shards)  # the original is untouched
