"""Property-based fuzzing of report sets on disk (hypothesis): hostile files, manifests,
metadata, report values and path lists.

The property is the same everywhere: aggregation either returns exactly the counts of the
shards named (each counted once; counts computed here from the definition of PI-RAPPOR, not
by the library), or raises ValueError whose message names a file of the set. Never another
exception, never a different count. The outcomes are tallied per mutation kind and printed at
the end of the module (``pytest -s``; ``--hypothesis-show-statistics`` shows the inputs tried).
"""
import collections
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.distributed")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from reference import json_paths  # noqa: E402
from test_scale import counts_of, reseal  # noqa: E402

from ldpcompress.randomizers.pirappor import FieldReports, PIRappor  # noqa: E402
from ldpcompress.scale import distributed as D  # noqa: E402
from ldpcompress.scale import report_files as RF  # noqa: E402

# LDPC_FUZZ_EXAMPLES=N: a longer, randomised run (the CI run is short and derandomised)
SCALE = int(os.environ.get("LDPC_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=SCALE or 60, deadline=None, derandomize=not SCALE,
                database=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.function_scoped_fixture])
SHARDS, PER_SHARD, K = 3, 40, 12
TALLY = collections.Counter()


@pytest.fixture(scope="module", autouse=True)
def report_tally():
    yield
    print("\nfuzzed report-set inputs (kind, outcome): count")
    for key, value in sorted(TALLY.items()):
        print(f"  {key}: {value}")
    print(f"  total: {sum(TALLY.values())}")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A 3-shard set written once; each example works on a fresh copy. Per-shard counts come
    from the definition (counts_of), independently of the library's kernels."""
    root = tmp_path_factory.mktemp("base")
    oracle = PIRappor(K, 1.5)
    reports = oracle.randomize_many(np.random.default_rng(7).integers(0, K, SHARDS * PER_SHARD))
    RF.write_reports(root / "set", oracle, reports, shards=SHARDS)
    per = [counts_of(oracle, FieldReports(reports.a[i * PER_SHARD:(i + 1) * PER_SHARD],
                                          reports.b[i * PER_SHARD:(i + 1) * PER_SHARD], oracle.p))
           for i in range(SHARDS)]
    return root / "set", oracle, per


class Copy:
    """A fresh copy of the base set in a temporary directory."""

    def __init__(self, base):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.set = self.root / "set"
        shutil.copytree(base, self.set, symlinks=True)
        self.shards = sorted(self.set.glob("*.parquet"))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.tmp.cleanup()


def check(kind, args, expected, root):
    """Aggregate ``args``: either the expected (n, counts) exactly, or a ValueError naming a
    file under ``root``. ``expected`` None means an error is required."""
    try:
        res = D.aggregate_in_memory(args)
    except ValueError as err:
        assert str(root) in str(err) or any(str(a) in str(err) for a in args), str(err)
        TALLY[(kind, "refused")] += 1
        return "refused"
    assert expected is not None, f"{kind}: accepted {args}"
    n, counts = expected
    assert res["n"] == n and np.array_equal(res["summary"], counts), kind
    TALLY[(kind, "exact")] += 1
    return "exact"


# -- bytes of shards and manifests ------------------------------------------------------------
@FUZZ
@given(shard=st.integers(0, SHARDS - 1), where=st.floats(0, 1, exclude_max=True),
       bit=st.integers(0, 7), how=st.sampled_from(["flip", "truncate", "append", "zero"]))
def test_damaged_shard_bytes(base, shard, where, bit, how):
    with Copy(base[0]) as c:
        path = c.shards[shard]
        data = bytearray(path.read_bytes())
        at = int(where * len(data))
        if how == "flip":
            data[at] ^= 1 << bit
        elif how == "truncate":
            data = data[:at]
        elif how == "append":
            data += bytes([bit]) * (at % 17 + 1)
        else:
            data[at:at + 8] = bytes(len(data[at:at + 8]))
        changed = bytes(data) != path.read_bytes()
        path.write_bytes(bytes(data))
        outcome = check(f"shard {how}", [c.set], None if changed else (
            SHARDS * PER_SHARD, sum(base[2])), c.root)
        assert outcome == "refused" or not changed


@FUZZ
@given(where=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7),
       how=st.sampled_from(["flip", "truncate"]))
def test_damaged_manifest_bytes(base, where, bit, how):
    with Copy(base[0]) as c:
        path = c.set / RF.MANIFEST
        data = bytearray(path.read_bytes())
        at = int(where * len(data))
        if how == "flip":
            data[at] ^= 1 << bit
        else:
            data = data[:at]
        path.write_bytes(bytes(data))
        # a flip may keep the manifest's meaning (e.g. whitespace): then the exact counts
        check(f"manifest {how}", [c.set], (SHARDS * PER_SHARD, sum(base[2])), c.root)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70)
                    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
INTERESTING = st.sampled_from([None, 0, -1, 1, 2, 2 ** 31 - 1, 2 ** 31 - 2, 2 ** 63, 1e308,
                               float("nan"), float("inf"), "", "x", [], {}, True, False, 4.0,
                               "../x.parquet", "reports-00000.parquet", "/etc/passwd"])


def _mutate(doc, path, op, value):
    """Delete or replace the element at path (the root itself is replaced)."""
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if op == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


@FUZZ
@given(pick=st.integers(0, 10 ** 6), op=st.sampled_from(["delete", "replace"]),
       value=INTERESTING | JSON)
def test_hostile_manifest_fields(base, pick, op, value):
    with Copy(base[0]) as c:
        path = c.set / RF.MANIFEST
        doc = json.loads(path.read_text())
        paths = list(json_paths(doc))
        where = paths[pick % len(paths)]
        doc = _mutate(doc, where, op, value)
        path.write_text(json.dumps(doc))
        # replacing a field by its own value keeps the set valid: then the exact counts
        check("manifest field", [c.set], (SHARDS * PER_SHARD, sum(base[2])), c.root)


@FUZZ
@given(shard=st.integers(0, SHARDS - 1), pick=st.integers(0, 10 ** 6),
       op=st.sampled_from(["delete", "replace"]), value=INTERESTING | JSON)
def test_hostile_shard_metadata(base, shard, pick, op, value):
    # the manifest is resealed: the metadata checks behind the digest are what is fuzzed
    with Copy(base[0]) as c:
        path = c.shards[shard]
        table = pq.read_table(path)
        doc = json.loads(table.schema.metadata[RF.META_KEY])
        paths = list(json_paths(doc))
        doc = _mutate(doc, paths[pick % len(paths)], op, value)
        pq.write_table(table.replace_schema_metadata({RF.META_KEY: json.dumps(doc).encode()}),
                       path)
        reseal(path)
        check("shard metadata", [c.set], (SHARDS * PER_SHARD, sum(base[2])), c.root)


VALUES = st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1), st.integers(-3, 3),
                   st.integers(0, 200_000), st.sampled_from([0, 5562, 5563, 5564]))


@FUZZ
@given(shard=st.integers(0, SHARDS - 1), a=st.lists(VALUES, max_size=30),
       b=st.lists(VALUES, max_size=30), dtype=st.sampled_from(["uint16", "uint16", "int64",
                                                               "int32", "float64", "uint64",
                                                               "null"]))
def test_hostile_report_values(base, shard, a, b, dtype):
    # a consistent hostile writer: any column contents, resealed. Exact counts (of the new
    # values, from the definition) when the columns have the randomizer's type (uint16 for
    # this field) and every value is a valid field element, else refused.
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    oracle = base[1]
    assert oracle.report_columns()[0].dtype == "uint16"
    with Copy(base[0]) as c:
        path = c.shards[shard]
        meta = pq.read_schema(path).metadata
        if dtype == "null":
            cols = {"a": pa.array([None if v < 0 else v % 2 ** 16 for v in a], pa.uint16()),
                    "b": pa.array([v % 2 ** 16 for v in b], pa.uint16())}
        elif dtype == "uint16":
            cols = {"a": pa.array([v % 2 ** 16 for v in a], pa.uint16()),
                    "b": pa.array([v % 2 ** 16 for v in b], pa.uint16())}
        elif dtype == "uint64":
            cols = {"a": pa.array([abs(v) for v in a], pa.uint64()),
                    "b": pa.array([abs(v) for v in b], pa.uint64())}
        elif dtype == "float64":
            cols = {"a": pa.array([float(v) for v in a], pa.float64()),
                    "b": pa.array([float(v) for v in b], pa.float64())}
        else:
            kind = pa.int32() if dtype == "int32" else pa.int64()
            lim = 2 ** 31 if dtype == "int32" else 2 ** 63
            cols = {"a": pa.array([v % lim - (lim // 2 if v < 0 else 0) for v in a], kind),
                    "b": pa.array([v % lim - (lim // 2 if v < 0 else 0) for v in b], kind)}
        pq.write_table(pa.table(cols).replace_schema_metadata(meta), path)
        reseal(path)
        av = np.array(cols["a"].to_pylist(), dtype=object)
        bv = np.array(cols["b"].to_pylist(), dtype=object)
        valid = dtype == "uint16" and all(0 <= v < oracle.p for v in list(av) + list(bv))
        expected = None
        if valid:
            new = counts_of(oracle, FieldReports(av.astype(np.int64), bv.astype(np.int64),
                                                 oracle.p)) if n else np.zeros(K, np.int64)
            per = list(base[2])
            per[shard] = new
            expected = (SHARDS * PER_SHARD - PER_SHARD + n, sum(per))
        check(f"report values {dtype}", [c.set], expected, c.root)


# -- which files are named --------------------------------------------------------------------
NAMES = ["set", "set/0", "set/1", "set/2", "set/manifest", "link0", "linkset", "copyset",
         "copyset/1", "copy1", "set/copy2", "sub/0", "missing0", "stale"]


def _prepare(c, name):
    """Create what the name stands for; return (path, shards it covers or None if invalid)."""
    s = c.set
    if name == "set":
        return s, {0, 1, 2}
    if name.startswith("set/") and name[4:].isdigit():
        return c.shards[int(name[4:])], {int(name[4:])}
    if name == "set/manifest":
        return s / RF.MANIFEST, {0, 1, 2}
    if name == "link0":
        return c.root / "links" / "link0.parquet", {0}
    if name == "linkset":
        return c.root / "links" / "linkset", {0, 1, 2}
    if name == "copyset":
        return c.root / "copyset", {0, 1, 2}
    if name == "copyset/1":
        return c.root / "copyset" / c.shards[1].name, {1}
    if name == "copy1":
        copy = c.root / "elsewhere" / "copy1.parquet"
        copy.parent.mkdir(exist_ok=True)
        shutil.copy(c.shards[1], copy)
        return copy, None  # no manifest beside it
    if name == "set/copy2":
        shutil.copy(c.shards[2], s / "copy2.parquet")
        return s / "copy2.parquet", None  # not listed: also poisons "set"
    if name == "sub/0":
        (s / "sub").mkdir(exist_ok=True)
        shutil.copy(c.shards[0], s / "sub" / "x.parquet")
        return s / "sub" / "x.parquet", None
    if name == "missing0":
        return c.root / "nothing.parquet", None
    if name == "stale":  # a shard of an older, larger set with the same parameters
        old = c.root / "old"
        if not old.exists():
            RF.write_reports(old, c.oracle, c.oracle.randomize_many(np.arange(40) % K), 8)
        shutil.copy(old / "reports-00005.parquet", s / "reports-00005.parquet")
        return s / "reports-00005.parquet", None
    raise AssertionError(name)


@FUZZ
@given(picks=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4))
def test_any_list_of_paths_counts_each_shard_once(base, picks):
    # the same shard twice (d d, d + file, symlink, copy), a copy under another name, a shard
    # in a subdirectory, a missing path: refused; otherwise the exact counts of the shards named
    with Copy(base[0]) as c:
        c.oracle = base[1]
        shutil.copytree(c.set, c.root / "copyset")  # a copy of the whole set, made first
        (c.root / "links").mkdir()
        os.symlink(c.shards[0], c.root / "links" / "link0.parquet")
        os.symlink(c.set, c.root / "links" / "linkset")
        prepared = [_prepare(c, name) for name in picks]
        covered = collections.Counter()
        ok = True
        for _, cover in prepared:
            if cover is None:
                ok = False
            else:
                covered.update(cover)
        poisoned = any(n in ("set/copy2", "sub/0", "stale") for n in picks) and any(
            n in ("set", "linkset") for n in picks)  # an unlisted Parquet file in the set
        valid = ok and not poisoned and max(covered.values()) == 1
        expected = None
        if valid:
            expected = (PER_SHARD * len(covered), sum(base[2][i] for i in covered))
        outcome = check("path list", [p for p, _ in prepared], expected, c.root)
        assert outcome == ("exact" if valid else "refused"), picks


@settings(FUZZ, max_examples=SCALE or 25)
@given(first=st.integers(1, 6), second=st.integers(1, 6), overwrite=st.booleans())
def test_rewriting_a_set_never_leaves_stale_shards(base, first, second, overwrite):
    oracle = base[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "d"
        r1 = oracle.randomize_many(np.arange(60) % K)
        r2 = oracle.randomize_many(np.arange(30) % K)
        RF.write_reports(out, oracle, r1, shards=first)
        try:
            RF.write_reports(out, oracle, r2, shards=second, overwrite=overwrite)
            assert overwrite
            expected = (30, counts_of(oracle, r2))
        except ValueError as err:
            assert not overwrite and "not empty" in str(err)
            expected = (60, counts_of(oracle, r1))
        check(f"rewrite overwrite={overwrite}", [out], expected, Path(tmp))
