"""Server at scale (issues 7 and 13): report sets, aggregation in memory and on Dask, CLI, plots.

Issue 13's regressions each have a test here that fails on the code before it: stale shards,
the same shard counted twice, silent bit flips, skipped subdirectories, lost reports (--shards
0, --out ''), CSV rows dropped by header guessing, unbounded memory, tracebacks on malformed
metadata, worker deaths ending in KilledWorker and plain-TCP schedulers.
"""
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tracemalloc

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.distributed")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from ldpcompress.accounting import amplification as A  # noqa: E402
from ldpcompress.cli import main  # noqa: E402
from ldpcompress.randomizers.pirappor import FieldReports, PIRappor  # noqa: E402
from ldpcompress.scale import distributed as D  # noqa: E402
from ldpcompress.scale import report_files as RF  # noqa: E402
from ldpcompress.scale import items_csv, reader, writer  # noqa: E402


def reseal(shard):
    """Make the manifest agree with a rewritten shard (size, digest, rows): a consistent but
    hostile writer, so that the checks behind the digest are reached."""
    manifest = shard.parent / RF.MANIFEST
    doc = json.loads(manifest.read_text())
    data = shard.read_bytes()
    for e in doc["shards"]:
        if e["file"] == shard.name:
            e.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
            try:
                e["rows"] = pq.ParquetFile(shard).metadata.num_rows
            except Exception:  # unreadable on purpose: keep the old row count
                pass
    doc["reports"] = sum(e["rows"] for e in doc["shards"])
    manifest.write_text(json.dumps(doc))


def counts_of(oracle, reports):
    """Support counts by the definition: report (a, b) supports j iff (a (j+1) + b) mod p < s."""
    j = np.arange(oracle.k, dtype=np.int64) + 1
    hits = (reports.a[:, None] * j[None, :] + reports.b[:, None]) % oracle.p < oracle.s
    return hits.sum(axis=0)


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports") / "set"
    oracle = PIRappor(300, 3.0)
    xs = np.random.default_rng(0).integers(0, 300, 50_000)  # simulated data
    reports = oracle.randomize_many(xs)
    RF.write_reports(out, oracle, reports, shards=5)
    return out, oracle, xs, counts_of(oracle, reports)


@pytest.fixture
def small_set(tmp_path):
    """A fresh 4-shard set of 400 reports and its counts by definition, per shard."""
    oracle = PIRappor(20, 2.0)
    reports = oracle.randomize_many(np.random.default_rng(1).integers(0, 20, 400))
    out = tmp_path / "set"
    RF.write_reports(out, oracle, reports, shards=4)
    per = [counts_of(oracle, FieldReports(reports.a[i * 100:(i + 1) * 100],
                                          reports.b[i * 100:(i + 1) * 100], oracle.p))
           for i in range(4)]
    return out, oracle, per


def shard_paths(out):
    return sorted(out.glob("*.parquet"))


# -- aggregation ------------------------------------------------------------------------------
@pytest.mark.slow
def test_dask_equals_in_memory(report_dir):
    out, oracle, xs, truth = report_dir
    dist = D.aggregate([str(out)], scheduler="local", n_workers=2)
    mem = D.aggregate_in_memory([str(out)])
    assert dist["method"] == "dask" and mem["method"] == "memory"
    assert dist["n"] == mem["n"] == xs.size
    assert np.array_equal(dist["summary"], truth) and np.array_equal(mem["summary"], truth)
    f = np.bincount(xs, minlength=300)
    z = (dist["estimate"] - f) / np.sqrt(oracle.variance(xs.size, f))
    assert np.max(np.abs(z)) < 5


def test_small_input_needs_no_cluster(report_dir):
    out, _, xs, truth = report_dir
    res = D.aggregate([out])  # "auto": 50,000 reports are counted in this process
    assert res["method"] == "memory" and res["n"] == xs.size and res["shards"] == 5
    assert np.array_equal(res["summary"], truth)


def test_bad_files_are_named(report_dir, tmp_path):
    out, oracle, _, _ = report_dir
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match="corrupt.parquet"):
        D.aggregate_in_memory([str(out), str(corrupt)])
    other = PIRappor(300, 1.0)
    RF.write_reports(tmp_path / "other", other, other.randomize_many(np.arange(10)), 1)
    with pytest.raises(ValueError, match="other"):
        D.aggregate_in_memory([str(out), str(tmp_path / "other")])
    RF.write_reports(tmp_path / "outside", oracle, FieldReports(np.array([1]), np.array([0]),
                                                                oracle.p), 1)
    path = tmp_path / "outside" / "reports-00000.parquet"
    schema = pq.read_schema(path)
    pq.write_table(pa.table({"a": [oracle.p + 1], "b": [0]}, schema=schema), path)
    reseal(path)
    with pytest.raises(ValueError, match=r"reports-00000.parquet: .*outside \[0, "):
        D.aggregate_in_memory([str(path)])


def test_stale_shards_are_refused_then_replaced(tmp_path, capsys):
    # before: the second run left 4 stale shards of 8 and aggregate reported 900 reports
    d = str(tmp_path / "d")
    assert main(["simulate", "--n", "1000", "--k", "20", "--shards", "8", "--out", d]) == 0
    assert main(["simulate", "--n", "400", "--k", "20", "--shards", "4", "--out", d]) == 2
    assert "not empty" in capsys.readouterr().err
    (tmp_path / "d" / "notes.txt").write_text("kept")
    assert main(["simulate", "--n", "400", "--k", "20", "--shards", "4", "--out", d,
                 "--overwrite"]) == 0
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [
        "manifest.json", "notes.txt", "reports-00000.parquet", "reports-00001.parquet",
        "reports-00002.parquet", "reports-00003.parquet", "true_counts.npy"]
    capsys.readouterr()
    assert main(["aggregate", d, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]["n"] == 400
    truth = np.load(tmp_path / "d" / "true_counts.npy")
    assert truth.sum() == 400 and truth.size == 20
    # --overwrite removes only a report set's own files: a foreign shard stops it
    shutil.copy(tmp_path / "d" / "reports-00000.parquet", tmp_path / "d" / "mine.parquet")
    assert main(["simulate", "--n", "50", "--k", "20", "--shards", "2", "--out", d,
                 "--overwrite"]) == 2
    assert "mine.parquet: not part of the report set" in capsys.readouterr().err
    assert (tmp_path / "d" / "reports-00003.parquet").exists()  # nothing was removed


def test_same_shard_twice_is_refused(small_set, tmp_path):
    out, oracle, per = small_set
    first = shard_paths(out)[1]
    os.symlink(first, tmp_path / "link.parquet")
    os.symlink(out, tmp_path / "linkdir")
    shutil.copytree(out, tmp_path / "copy")
    cases = [[out, out], [out, first], [first, first], [out, tmp_path / "link.parquet"],
             [out, tmp_path / "linkdir"], [out, tmp_path / "copy"],
             [first, tmp_path / "copy" / first.name]]
    for args in cases:
        with pytest.raises(ValueError, match=r"given twice|same contents|same directory"):
            D.aggregate_in_memory(args)
    with pytest.raises(ValueError, match="link.parquet: no manifest.json beside it"):
        D.aggregate_in_memory([tmp_path])  # the stray symlink is not part of any set
    os.remove(tmp_path / "link.parquet")
    with pytest.raises(ValueError, match="same directory|same contents"):
        D.aggregate_in_memory([tmp_path])  # linkdir and copy repeat the set
    # a copy under a new name inside the set is an extra shard
    shutil.copy(first, out / "reports-00001-copy.parquet")
    with pytest.raises(ValueError, match="reports-00001-copy.parquet: not listed"):
        D.aggregate_in_memory([out])
    os.remove(out / "reports-00001-copy.parquet")
    # each shard once, in any spelling: exact
    res = D.aggregate_in_memory([first, tmp_path / "copy" / shard_paths(out)[0].name,
                                 shard_paths(out)[2],
                                 tmp_path / "linkdir" / "reports-00003.parquet"])
    assert res["n"] == 400 and np.array_equal(res["summary"], sum(per))


def test_subdirectories(small_set, tmp_path):
    out, oracle, per = small_set
    (out / "sub").mkdir()
    shutil.move(shard_paths(out)[2], out / "sub" / "reports-00002.parquet")
    with pytest.raises(ValueError, match=re.escape(str(out / "sub" / "reports-00002.parquet"))):
        D.aggregate_in_memory([out])  # before: the shard was skipped without a word
    with pytest.raises(ValueError, match="reports-00002.parquet: missing"):
        D.aggregate_in_memory([out / RF.MANIFEST])
    shutil.move(out / "sub" / "reports-00002.parquet", out / "reports-00002.parquet")
    # report sets in subdirectories are counted, each checked against its own manifest
    RF.write_reports(out / "sub", oracle, FieldReports(np.array([1, 2]), np.array([3, 4]),
                                                       oracle.p), 1)
    res = D.aggregate_in_memory([tmp_path])
    assert res["n"] == 402 and res["shards"] == 5


def test_altered_truncated_missing_shards(small_set):
    out, _, _ = small_set
    target = shard_paths(out)[2]
    good = target.read_bytes()
    for k in range(30):  # before: 19 of 30 flips changed the counts silently
        data = bytearray(good)
        data[(k * 7919) % len(data)] ^= 1 << (k % 8)
        target.write_bytes(bytes(data))
        with pytest.raises(ValueError, match=re.escape(target.name) + ".*SHA-256"):
            D.aggregate_in_memory([out])
    target.write_bytes(good[:-10])
    with pytest.raises(ValueError, match=re.escape(target.name) + ".*truncated"):
        D.aggregate_in_memory([out])
    target.unlink()
    with pytest.raises(ValueError, match=re.escape(target.name) + ": missing"):
        D.aggregate_in_memory([out])


def params(m):
    return m["randomizer"]["params"]


MANIFEST_MUTATIONS = [
    (lambda m: params(m).pop("k"), r"key 'randomizer': .*missing .*'k'"),
    (lambda m: params(m).update(k=None), r"key 'randomizer': .*k must be"),
    (lambda m: params(m).update(k="20"), r"key 'randomizer': .*k must be"),
    (lambda m: params(m).update(eps=None), r"key 'randomizer': .*eps must be"),
    (lambda m: params(m).update(symmetric=1), r"key 'randomizer': .*symmetric"),
    (lambda m: params(m).update(k=2 ** 31 - 2, p=2 ** 31 - 1),
     r"aggregating 400 reports .* is stated to take .* above the limit of 60 s: refused before "
     r"any work; raise max_seconds"),
    (lambda m: params(m).update(p=2 ** 31 - 1, k=20),
     r"reports-00000.parquet: key 'randomizer' is .*manifest.json says"),
    (lambda m: params(m).update(colour=3), r"key 'randomizer': .*colour"),
    (lambda m: m["randomizer"].update(randomizer="nope"),
     r"key 'randomizer': unknown randomizer 'nope'"),
    (lambda m: m["randomizer"].update(randomizer="krr"), r"key 'randomizer': .*"),
    (lambda m: m["randomizer"].pop("params"), r"key 'randomizer' must be an object with "),
    (lambda m: m.update(randomizer=None), "'randomizer' must be dict"),
    (lambda m: m.pop("randomizer"), "missing key 'randomizer'"),
    (lambda m: m.pop("shards"), "missing key 'shards'"),
    (lambda m: m.update(shards=[]), "1 to"),
    (lambda m: m["shards"][0].update(rows=-1), r"'shards\[0\].rows' must be an integer"),
    (lambda m: m["shards"][0].update(rows=101), "key 'reports'"),
    (lambda m: m["shards"][0].update(sha256="00"), "SHA-256 hex digest"),
    (lambda m: m["shards"][0].update(file="../x.parquet"), "plain file name"),
    (lambda m: m["shards"].append(dict(m["shards"][0])), "listed twice"),
    (lambda m: m.update(format=99), "unknown report set format"),
    (lambda m: m.update(format=2), "format 2 holds PI-RAPPOR reports written by ldpcompress 0.2"),
    (lambda m: m.update(complete=False), "incomplete"),
    (lambda m: m.update(set="x"), "key 'set'"),
    (lambda m: m.update(kind=None), "key 'kind'"),
]


@pytest.mark.parametrize("mutate, message", MANIFEST_MUTATIONS)
def test_malformed_manifest_is_named(small_set, mutate, message):
    # before: KeyError / AttributeError tracebacks, or a 16 GiB allocation for k ~ 2^31
    out, _, _ = small_set
    manifest = out / RF.MANIFEST
    doc = json.loads(manifest.read_text())
    mutate(doc)
    manifest.write_text(json.dumps(doc))
    where = re.escape(str(out)) + "/reports-00000" if message.startswith("reports") \
        else re.escape(str(manifest))
    with pytest.raises(ValueError, match=where + ".*" + message.removeprefix("reports-00000")):
        D.aggregate_in_memory([out])


@pytest.mark.parametrize("meta, message", [
    ({}, "missing key 'format'"),
    ({"format": 3, "set": None}, "key 'set'"),
    ({"format": 2}, "unknown report file format 2"),
    (None, "must be a JSON object"),
    ("{", "not valid JSON"),
    ({"format": 3, "shard": 0, "randomizer": {"k": 20}}, "missing key 'set'"),
])
def test_malformed_shard_metadata_is_named(small_set, meta, message):
    out, _, _ = small_set
    path = shard_paths(out)[0]
    raw = meta if isinstance(meta, str) else json.dumps(meta)
    table = pq.read_table(path).replace_schema_metadata({RF.META_KEY: raw.encode()})
    pq.write_table(table, path)
    reseal(path)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + message):
        D.aggregate_in_memory([out])


def test_null_and_float_columns_are_refused(small_set):
    out, oracle, _ = small_set
    path = shard_paths(out)[0]
    meta = pq.read_schema(path).metadata
    kind = pa.from_numpy_dtype(np.dtype(oracle.report_columns()[0].dtype))  # uint16
    pq.write_table(pa.table({"a": pa.array([1, None] * 50, kind),
                             "b": pa.array([1] * 100, kind)}).replace_schema_metadata(meta),
                   path)
    reseal(path)
    with pytest.raises(ValueError, match=r"column 'a' has a missing value \(null\) in row 1"):
        D.aggregate_in_memory([out])
    for cols in ({"a": [1.5] * 100, "b": [1.0] * 100}, {"a": [1] * 100, "b": [1] * 100},
                 {"b": pa.array([1] * 100, kind), "a": pa.array([1] * 100, kind)},
                 {"a": pa.array([1] * 100, kind)}):
        pq.write_table(pa.table(cols).replace_schema_metadata(meta), path)
        reseal(path)
        with pytest.raises(ValueError, match="columns must be a uint16, b uint16 .*, got"):
            D.aggregate_in_memory([out])


# -- writing ----------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--shards", "0"], "--shards must be an integer in [1, 100000], got 0"),
    (["--shards", "-1"], "--shards must be an integer in [1, 100000], got -1"),
    (["--shards", "2.5"], "--shards must be an integer"),
    (["--shards", "101"], "more than the 100 reports"),
    (["--n", "inf"], "--n must be an integer in [1, "),
    (["--n", "1.5"], "--n must be an integer in [1, "),
    (["--n", "nan"], "--n must be an integer"),
    (["--k", "2.7"], "--k must be an integer in [2, "),
    (["--k", "1"], "--k must be an integer in [2, "),
    (["--eps", "inf"], "--eps must be finite"),
    (["--eps", "0"], "--eps must be finite"),
    (["--seed", "-1"], "--seed must be an integer in [0, "),
    (["--out", ""], "--out must be a non-empty path"),
])
def test_simulate_refuses_bad_options(tmp_path, capsys, argv, message):
    # before: "100 reports in 0 files", truncation of 1.5, OverflowError on inf, shards in the
    # working directory and true_counts.npy in / for --out ''
    base = {"--n": "100", "--k": "10", "--out": str(tmp_path / "o")}
    base.update(dict(zip(argv[::2], argv[1::2])))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["simulate"] + [x for kv in base.items() for x in kv]) == 2
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) in ([], ["o"]) and not list(tmp_path.rglob("*.parquet"))


def test_simulate_writes_exactly_n_reports(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["simulate", "--n", "1e3", "--k", "30", "--shards", "7", "--out", str(d)]) == 0
    res = D.aggregate_in_memory([d])
    assert res["n"] == 1000 and res["shards"] == 7
    rows = [e["rows"] for e in json.loads((d / RF.MANIFEST).read_text())["shards"]]
    assert sum(rows) == 1000 and max(rows) - min(rows) <= 1


def test_writers_stream_in_bounded_memory(tmp_path, monkeypatch):
    # before: simulate held every report and encode read the CSV into Python lists (661 MB for
    # 2e6 rows); now both stream CHUNK rows at a time
    monkeypatch.setattr(writer, "CHUNK", 2048)
    monkeypatch.setattr(items_csv, "CSV_CHUNK", 1024)
    # encode's shuffler step holds one bucket and one read batch: both small here too
    from ldpcompress.scale import reader, shuffle
    monkeypatch.setattr(shuffle, "BUCKET_BYTES", 1 << 16)
    monkeypatch.setattr(reader, "READ_BATCH_BYTES", 1 << 16)
    csv = tmp_path / "items.csv"
    csv.write_text("\n".join(str(i % 97) for i in range(20_000)) + "\n")
    peaks = {}
    assert main(["simulate", "--n", "10", "--k", "100", "--out", str(tmp_path / "w"),
                 "--shards", "1"]) == 0  # imports and compilation outside the measurement
    for name, argv in [("simulate", ["simulate", "--n", "1e5", "--k", "100", "--shards", "2",
                                     "--out", str(tmp_path / "s")]),
                       ("encode", ["encode", "--csv", str(csv), "--k", "100", "--eps", "2",
                                   "--shards", "3", "--in-order", "--out", str(tmp_path / "e")]),
                       ("shuffled", ["encode", "--csv", str(csv), "--k", "100", "--eps", "2",
                                     "--shards", "3", "--out", str(tmp_path / "f")])]:
        tracemalloc.start()
        assert main(argv) == 0
        peaks[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # before: 1e5 reports alone took 1.6 MB, 2e4 CSV rows as lists of strings 2.5 MB
    assert peaks["simulate"] < 0.8e6 and peaks["encode"] < 0.4e6, peaks
    # the shuffler step adds one bucket, one read batch and the reader's hash blocks (1 MiB)
    assert peaks["shuffled"] < 0.4e6 + 2 * reader.VERIFY_BLOCK, peaks
    assert D.aggregate_in_memory([tmp_path / "e"])["n"] == 20_000
    assert D.aggregate_in_memory([tmp_path / "f"])["n"] == 20_000
    assert D.aggregate_in_memory([tmp_path / "s"])["n"] == 100_000


def test_cli_encode_and_aggregate(tmp_path, capsys):
    items = tmp_path / "items.csv"
    items.write_text("item\n" + "\n".join(str(i % 7) for i in range(3000)) + "\n")
    assert main(["encode", "--csv", str(items), "--k", "10", "--eps", "2", "--header",
                 "--out", str(tmp_path / "enc")]) == 0
    res = D.aggregate_in_memory([str(tmp_path / "enc")])
    assert res["n"] == 3000
    assert not (tmp_path / "enc" / "true_counts.npy").exists()  # real users' data: never stored
    bad = tmp_path / "bad.csv"
    bad.write_text("3\n12\n")
    assert main(["encode", "--csv", str(bad), "--k", "10", "--eps", "2",
                 "--out", str(tmp_path / "x")]) == 2
    assert "line 2: item 12 is outside [0, 10)" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() or not list((tmp_path / "x").iterdir())


@pytest.mark.parametrize("content, header, message", [
    ("item\n1\n", False, "line 1: 'item' is not an item"),   # before: guessed a header
    ("3.0\n4\n", False, "line 1: '3.0' is not an item"),      # before: dropped as a header
    ("1\n1e3\n", False, "line 2: '1e3' is not an item"),
    ("0x10\n", False, "line 1: '0x10' is not an item"),
    ("\ufeff1.0\n", False, "line 1: '1.0' is not an item"),
    ("1\n99999999999999999999\n", False, "line 2: item 99999999999999999999 is outside"),
    ("1\n-1\n", False, "line 2: item -1 is outside"),
    ("1\n\n2\n", False, "line 2 is empty"),
    ("1,2\n", False, "line 1 has 2 cells"),
    ("1\n,\n", False, "line 2 has 2 cells"),
    ('""\n', False, "line 1: '' is not an item"),
    ("1\n١\n", False, "line 2: '١' is not an item"),          # a non-ASCII digit
    ("1\n1_0\n", False, "line 2: '1_0' is not an item"),
    ("5\n6\n", True, "line 1: '5' is an item, not a header"),
    ("", False, "no items"),
    ("item\n", True, "no items"),
    ("x" * 200_000 + "\n", False, "malformed CSV"),
])
def test_encode_parses_strictly(tmp_path, capsys, content, header, message):
    path = tmp_path / "items.csv"
    path.write_text(content, encoding="utf-8")
    argv = ["encode", "--csv", str(path), "--k", "10", "--eps", "2", "--out", str(tmp_path / "o")]
    assert main(argv + (["--header"] if header else [])) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err


def test_encode_keeps_every_item(tmp_path):
    # a BOM before the first item, a sign, leading zeros and blanks around a cell: every item
    # counts. At eps = 20 with deletion DP (a1 = 1 - a0, a0 ~ 1e-9) the counts equal the true
    # histogram unless one of the 5 x 10 report/item pairs flips (probability < 1e-7).
    path = tmp_path / "items.csv"
    path.write_bytes("\ufeff3\n+4\n007\n 4 \n3\n".encode())
    assert main(["encode", "--csv", str(path), "--k", "10", "--eps", "20", "--symmetric",
                 "--shards", "2", "--out", str(tmp_path / "o")]) == 0
    res = D.aggregate_in_memory([tmp_path / "o"])
    assert res["n"] == 5
    assert res["summary"].tolist() == [0, 0, 0, 2, 2, 0, 0, 1, 0, 0]
    bad = tmp_path / "latin1.csv"
    bad.write_bytes(b"1\n\xff\n")
    with pytest.raises(ValueError, match="not UTF-8"):
        RF.count_csv_items(bad, 10)


def test_write_api_refuses_bad_output(tmp_path):
    oracle = PIRappor(10, 1.0)
    reports = oracle.randomize_many(np.arange(10))
    with pytest.raises(ValueError, match="out must name a directory"):
        RF.write_reports("", oracle, reports)
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        RF.write_reports(tmp_path / "f", oracle, reports)
    with pytest.raises(ValueError, match="shards must be an integer"):
        RF.write_reports(tmp_path / "o", oracle, reports, shards=0)
    with pytest.raises(TypeError, match="overwrite"):
        RF.write_reports(tmp_path / "o", oracle, reports, overwrite="yes")
    with pytest.raises(ValueError, match="check the disk|on disk"):
        RF.write_items(tmp_path / "o", oracle, iter([np.arange(10)]), 10, 1, free_bytes=1)

    def failing():
        yield np.arange(10)
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        RF.write_items(tmp_path / "o", oracle, failing(), 20, 2)
    assert list((tmp_path / "o").iterdir()) == []  # a failed write leaves nothing behind
    with pytest.raises(ValueError, match="fewer than counted"):
        RF.write_items(tmp_path / "o", oracle, iter([np.arange(5)]), 10, 1)
    with pytest.raises(ValueError, match="more items than"):
        RF.write_items(tmp_path / "o", oracle, iter([np.arange(10), np.arange(2)]), 10, 1)


@pytest.mark.parametrize("argv, message", [
    (["mean", "--n", "0", "--d", "4"], "--n must be an integer in [1, "),       # ZeroDivisionError
    (["mean", "--split", "0", "--d", "4", "--n", "5"], "--split must be an integer in [1, 1000]"),
    (["mean", "--d", "inf"], "--d must be an integer in [2, "),                   # OverflowError
    (["mean", "--n", "1e9", "--d", "1e6"], "PiB"),
    (["mean", "--eps", "nan"], "--eps must be finite"),
    (["demo", "--n", "1.5"], "--n must be an integer"),                           # ran 1 user
    (["demo", "--k", "2.7"], "--k must be an integer"),                           # became 2
    (["demo", "--n", "inf"], "--n must be an integer"),
    (["demo", "--delta", "1"], "--delta must be in (0, 1)"),
    (["demo", "--seed", "0.5"], "--seed must be an integer"),
    (["demo", "--k", "2e9", "--n", "10"], "GiB"),
    (["demo", "--oracle", "rappor", "--k", "1e6", "--n", "1e4"], "GiB"),
    (["plot", "amplification", "--n-range", "1e5", "1e3", "--out", "x.png"], "LOW <= HIGH"),
    (["plot", "amplification", "--n-range", "1", "1e300", "--out", "x.png"], "--n-range"),
    (["plot", "amplification", "--points", "0", "--out", "x.png"], "--points"),
    (["plot", "amplification", "--delta", "0", "--out", "x.png"], "--delta"),
    (["plot", "frequency", "--n", "-5", "--out", "x.png"], "--n must be"),
    (["plot", "frequency", "--out", ""], "--out must be a non-empty path"),
    (["aggregate", "nowhere"], "nowhere: no such file or directory"),
    (["aggregate", ""], "non-empty paths"),
    (["aggregate", ".", "--retries", "-1"], "--retries must be an integer in [0, 100]"),
    (["aggregate", ".", "--scheduler", "tcp://10.1.2.3:8786"], "must be trusted"),
    (["aggregate", ".", "--scheduler", "tls://10.1.2.3:8786"], "tls:// needs security"),
    (["aggregate", ".", "--scheduler", "ucx://10.1.2.3:8786"], "unsupported protocol"),
    (["aggregate", ".", "--tls-cert", "nope.pem"], "--tls-ca-file and --tls-cert"),
    (["aggregate", ".", "--tls-cert", "nope.pem", "--tls-ca-file", "ca.pem",
      "--scheduler", "tls://h:1"], "--tls-ca-file ca.pem: cannot read"),
])
def test_commands_refuse_bad_options(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_scheduler_address_checks():
    assert D.check_scheduler("tcp://127.0.0.1:8786") and D.check_scheduler("localhost:8786")
    assert D.check_scheduler("tcp://[::1]:8786") and D.check_scheduler("inproc://x/1/2")
    assert D.check_scheduler("tcp://10.0.0.1:8786", allow_insecure=True)
    for bad in ["tcp://10.0.0.1:8786", "10.0.0.1:8786", "ws://example.org:80",
                "tcp://localhost.example.org:1", "tcp://127.0.0.1.nip.io:1"]:
        with pytest.raises(ValueError, match="must be trusted"):
            D.check_scheduler(bad)
    with pytest.raises(ValueError, match="needs security"):
        D.check_scheduler("tls://10.0.0.1:8786")


def test_cluster_results_are_checked(small_set):
    out, _, _ = small_set
    shard = RF.collect([out])[1][0]  # 100 reports, k = 20
    oracle = RF.collect([out])[0]
    counts, n = D._checked_result((np.arange(20), 100), shard, oracle)
    assert n == 100 and counts.tolist() == list(range(20))
    for bad in [(np.arange(20), 99), (np.arange(19), 100), (np.arange(20) * 10, 100),
                (np.arange(20) - 1, 100), (np.arange(20.0), 100), None, (1, 2, 3),
                (np.arange(20), 100.0), (np.arange(20), True), (np.full(20, np.nan), 100)]:
        with pytest.raises(D.ClusterError, match="reports-00000.parquet: .*malformed"):
            D._checked_result(bad, shard, oracle)


# -- Dask: worker deaths and TLS --------------------------------------------------------------
def _killer_plugin(tokens_dir, shard_key):
    """A worker plugin that kills its worker process when it starts the task of one shard,
    once per token file it manages to remove (the nanny restarts the worker)."""
    from distributed import WorkerPlugin

    class Killer(WorkerPlugin):
        def transition(self, key, start, finish, **kwargs):
            if finish == "executing" and shard_key in str(key):
                for token in sorted(os.listdir(tokens_dir)):
                    try:
                        os.remove(os.path.join(tokens_dir, token))
                    except FileNotFoundError:
                        continue
                    os._exit(1)
    return Killer()


@pytest.mark.slow
def test_dask_retries_worker_deaths_then_names_the_shard(small_set, tmp_path):
    # before: repeated worker deaths ended in KilledWorker
    import dask
    from distributed import Client, LocalCluster
    out, _, per = small_set
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            client.register_plugin(_killer_plugin(str(tokens), "ldpcompress-shard-1-"))
            for i in range(2):
                (tokens / f"t{i}").touch()
            res = D.aggregate([out], client=client, retries=2)
            assert not list(tokens.iterdir())  # two deaths, two resubmissions, exact counts
            assert res["n"] == 400 and np.array_equal(res["summary"], sum(per))
            for i in range(5):
                (tokens / f"u{i}").touch()
            with pytest.raises(D.ClusterError, match=r"reports-0000\d.parquet: .*lost 1 times"):
                D.aggregate([out], client=client, retries=0)


def _self_signed(tmp_path):
    """A throw-away self-signed certificate and key (PEM) from the openssl command line."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
                       check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("needs the openssl command line tool")
    return str(cert), str(key)


@pytest.mark.slow
def test_dask_over_tls(small_set, tmp_path, capsys):
    from distributed import LocalCluster
    from distributed.security import Security
    out, _, per = small_set
    cert, key = _self_signed(tmp_path)
    roles = {f"tls_{r}_{kind}": v for r in ("scheduler", "worker", "client")
             for kind, v in (("cert", cert), ("key", key))}
    sec = Security(tls_ca_file=cert, require_encryption=True, **roles)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tls://",
                      security=sec, dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        res = D.aggregate([out], scheduler=address, security=sec)
        assert res["method"] == "dask" and np.array_equal(res["summary"], sum(per))
        with pytest.raises(ValueError, match="needs security"):
            D.aggregate([out], scheduler=address)
        capsys.readouterr()
        assert main(["aggregate", str(out), "--scheduler", address, "--tls-ca-file", cert,
                     "--tls-cert", cert, "--tls-key", key, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["results"]["n"] == 400


# -- plots ------------------------------------------------------------------------------------
def test_amplification_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "amp.png"
    assert main(["plot", "amplification", "--eps0", "3", "--n-range", "1e3", "1e5",
                 "--points", "3", "--k", "20", "--out", str(png), "--json"]) == 0
    assert png.stat().st_size > 1000
    data = json.loads(capsys.readouterr().out)["results"]
    assert data["n"] == [1000, 10000, 100000]
    for n, g, c in zip(data["n"], data["general"], data["closed_form"]):
        assert g == A.general_epsilon(n, 3.0, 1e-6).value
        assert c == A.closed_form_epsilon(n, 3.0, 1e-6).value


def test_frequency_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "freq.png"
    assert main(["plot", "frequency", "--n", "5000", "--k", "50", "--out", str(png), "--json"]) == 0
    assert png.stat().st_size > 1000
    data = json.loads(capsys.readouterr().out)["results"]
    assert data["true"] == sorted(data["true"], reverse=True)


# -- bounded reading, FIFOs, concurrent writers, output paths (issue 13 follow-up) -------------

def _one_shard_set(tmp_path, n, monkeypatch=None, row_group=None, k=50):
    if row_group is not None:
        monkeypatch.setattr(writer, "ROW_GROUP_ROWS", row_group)
    oracle = PIRappor(k, 2.0)
    reports = oracle.randomize_many(np.random.default_rng(5).integers(0, k, n))
    out = tmp_path / "one"
    RF.write_reports(out, oracle, reports, shards=1)
    return out, oracle, reports


@pytest.mark.slow  # > 20 s: seven batch sizes, each through every reader
def test_a_shard_read_in_several_batches_gives_the_exact_counts(tmp_path, monkeypatch):
    out, oracle, reports = _one_shard_set(tmp_path, 1000, monkeypatch, row_group=64)
    shard = RF.collect([out])[1][0]
    assert pq.ParquetFile(shard.path).num_row_groups == 16  # writers bound their row groups
    want = counts_of(oracle, reports)
    for batch_rows in (1, 7, 64, 100, 999, 1000, 10 ** 6):
        counts, n = RF.summarize_shard(shard, oracle, batch_rows)
        assert n == 1000 and counts.tolist() == want.tolist(), batch_rows
        assert max(len(r) for r in RF.iter_shard(shard, oracle, batch_rows)) <= batch_rows
        res = D.aggregate_in_memory([out], batch_rows=batch_rows)
        assert res["n"] == 1000 and res["summary"].tolist() == want.tolist()
        worker = D.shard_summary(shard, oracle, batch_rows)  # what a Dask worker runs
        assert worker[1] == 1000 and worker[0].tolist() == want.tolist()


def test_a_shard_larger_than_the_memory_limit_is_aggregated(tmp_path, monkeypatch):
    # was: `simulate --n 9e7 --shards 1` wrote a set that `aggregate` refused forever (reading the
    # one shard needed 4.3 GiB > 4 GiB); now memory is bounded by the batch, not the shard
    from ldpcompress.core import limits
    out, oracle, reports = _one_shard_set(tmp_path, 300_000, k=20)
    monkeypatch.setattr(limits, "MAX_BYTES", 12 * 2 ** 20)  # 300,000 rows need 13.7 MiB at once
    with pytest.raises(ValueError, match="reading all 300000 reports at once"):
        RF.read_shard(RF.collect([out])[1][0], oracle)
    # the aggregation's own stated peak (reader buffers included) has its own limit
    res = D.aggregate(out, scheduler="memory", batch_rows=20_000, max_bytes=2 ** 30)
    assert res["n"] == 300_000 and res["summary"].tolist() == counts_of(oracle, reports).tolist()
    with pytest.raises(ValueError, match="batch_rows"):  # the batch itself is bounded
        D.aggregate(out, scheduler="memory", batch_rows=10 ** 6, max_bytes=2 ** 30)


def test_aggregation_memory_does_not_grow_with_the_shard(tmp_path):
    out, oracle, _ = _one_shard_set(tmp_path, 400_000, k=20)
    shard = RF.collect([out])[1][0]
    tracemalloc.start()
    try:
        RF.summarize_shard(shard, oracle, 10_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the shard's reports alone are 6.4 MB (two int64 columns); numpy buffers are traced
    assert peak < 4 * 2 ** 20, peak


def test_a_shard_changed_between_hashing_and_parsing_is_refused(tmp_path, monkeypatch):
    out, oracle, _ = _one_shard_set(tmp_path, 5000)
    shard = RF.collect([out])[1][0]
    original = reader._hash_blocks

    def hash_then_alter(fh, s):
        digests = original(fh, s)
        data = bytearray(s.path.read_bytes())
        data[len(data) // 2] ^= 1
        with open(s.path, "r+b") as f:  # in place: the open descriptor sees the change
            f.write(data)
        return digests

    monkeypatch.setattr(reader, "_hash_blocks", hash_then_alter)
    with pytest.raises(ValueError, match=re.escape(shard.path.name) + ".*changed while being read"):
        RF.summarize_shard(shard, oracle)


class Hung(BaseException):
    """Not an OSError: the CLI must not turn it into an exit status."""


@contextlib.contextmanager
def no_hang(seconds=20):
    """SIGALRM interrupts a blocking open() of a FIFO: the old code hung there."""
    def alarm(signum, frame):
        raise Hung(f"hung for {seconds} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("victim", ["reports-00001.parquet", "manifest.json"])
def test_a_fifo_in_place_of_a_listed_file_is_refused_not_read(small_set, capsys, victim):
    out, _, _ = small_set
    (out / victim).unlink()
    os.mkfifo(out / victim)
    with no_hang():
        assert main(["aggregate", str(out)]) == 2
        with pytest.raises(ValueError, match=re.escape(victim) + ": is a FIFO, not a regular "
                                             "file"):
            D.aggregate_in_memory([out / "manifest.json" if victim != "manifest.json" else out])
        if victim != "manifest.json":  # named directly, too
            with pytest.raises(ValueError, match="is a FIFO"):
                D.aggregate_in_memory([out / victim])
    err = capsys.readouterr().err
    assert victim in err and "FIFO" in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_inputs_of_other_commands_are_refused(tmp_path, capsys):
    os.mkfifo(tmp_path / "fifo")
    with no_hang():
        assert main(["encode", "--csv", str(tmp_path / "fifo"), "--k", "5", "--eps", "1",
                     "--out", str(tmp_path / "e")]) == 2
        assert main(["aggregate", str(tmp_path), "--scheduler", "tls://127.0.0.1:1",
                     "--tls-ca-file", str(tmp_path / "fifo"), "--tls-cert",
                     str(tmp_path / "fifo")]) == 2
    err = capsys.readouterr().err
    assert err.count("is a FIFO, not a regular file") == 2


def test_a_second_writer_is_refused_and_the_first_set_survives(tmp_path):
    # was: two writers into one new directory; the loser printed a raw "[Errno 2] ...
    # '.manifest.json.tmp' -> 'manifest.json'" and its clean-up could delete the winner's shards
    oracle = PIRappor(10, 1.0)
    reports = oracle.randomize_many(np.arange(40) % 10)
    out = tmp_path / "race"
    with RF.ReportSetWriter(out, oracle, shards=2) as first:
        first.write_shard([FieldReports(reports.a[:20], reports.b[:20], oracle.p)])
        for overwrite in (False, True):  # even --overwrite must not remove a set being written
            with pytest.raises(ValueError, match="another writer") as err:
                RF.write_reports(out, oracle, reports, shards=2, overwrite=overwrite)
            assert str(out) in str(err.value) and "another writer" in str(err.value)
        first.write_shard([FieldReports(reports.a[20:], reports.b[20:], oracle.p)])
    assert not (out / RF.LOCK).exists()
    assert D.aggregate_in_memory([out])["summary"].tolist() == counts_of(oracle, reports).tolist()
    RF.write_reports(out, oracle, reports, shards=4, overwrite=True)  # the lock was released
    assert D.aggregate_in_memory([out])["shards"] == 4


def test_an_aborted_writer_removes_only_its_own_files(tmp_path):
    oracle = PIRappor(10, 1.0)
    reports = oracle.randomize_many(np.arange(40) % 10)
    out = tmp_path / "set"
    with pytest.raises(ValueError, match="reports-00001.parquet: appeared while"):
        with RF.ReportSetWriter(out, oracle, shards=2) as w:
            w.write_shard([FieldReports(reports.a[:20], reports.b[:20], oracle.p)])
            (out / "reports-00001.parquet").write_bytes(b"another program's file")
            w.write_shard([FieldReports(reports.a[20:], reports.b[20:], oracle.p)])
    assert sorted(p.name for p in out.iterdir()) == ["reports-00001.parquet"]
    assert (out / "reports-00001.parquet").read_bytes() == b"another program's file"


def test_concurrent_simulations_into_one_directory(tmp_path):
    import threading
    for trial in range(4):
        out = tmp_path / f"race{trial}"
        results = []

        def simulate():
            try:
                RF.write_items(out, PIRappor(20, 1.0), [np.arange(50_000) % 20], 50_000, 4)
                results.append("ok")
            except ValueError as err:
                results.append(str(err))

        threads = [threading.Thread(target=simulate) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results.count("ok") == 1, results
        loser = next(r for r in results if r != "ok")
        assert str(out) in loser and ("another writer" in loser or "not empty" in loser)
        assert D.aggregate_in_memory([out])["n"] == 50_000
        assert not (out / RF.LOCK).exists()


def test_aggregate_checks_its_output_file_before_aggregating(tmp_path, capsys, monkeypatch):
    # was: `aggregate d --out nodir/x.csv` failed after the whole aggregation with [Errno 2]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(D, "aggregate", lambda *a, **k: pytest.fail("aggregated first"))
    (tmp_path / "d").mkdir()
    for out, message in (("nodir/x.csv", "--out nodir/x.csv: the directory nodir does not exist"),
                         ("d", "--out d: is a directory")):
        assert main(["aggregate", "d", "--out", out]) == 2
        assert message in capsys.readouterr().err


def test_a_set_is_readable_wherever_it_was_written(tmp_path, monkeypatch):
    """Found by the issue-13 audit: `simulate --n 10 --k 5e7` wrote 382 MB that `aggregate`
    then refused (the reader sized its table by (4 x threads + 3) x k), and a k = 3e6 set read
    on 2 threads was refused with NUMBA_NUM_THREADS=64. The kernels' per-chunk rows are now
    capped by memory, not threads, and a writer refuses a set the server could not read."""
    from ldpcompress.randomizers import base, threads
    monkeypatch.setattr(threads, "num_threads", lambda: 64)
    orc = PIRappor(3_000_000, 2.0)
    spec = {"randomizer": "pi-rappor", "params": orc.params()}
    assert RF.randomizer_from_spec(spec, "m").k == 3_000_000  # was: 259 x k ... 5.8 GiB
    assert base.chunks_for(1 << 40, 3_000_000) * 3_000_000 * 8 <= base.CHUNK_TABLE_BYTES
    big = PIRappor(2 ** 31 - 2, 2.0)
    with pytest.raises(ValueError, match="GiB"):
        RF.ReportSetWriter(tmp_path / "big", big, shards=1)
    assert not any((tmp_path / "big").glob("*.parquet"))
