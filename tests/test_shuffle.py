"""The shuffler step (scale/shuffle.py): the two-pass order is a uniform permutation
(chi-square on positions and on whole permutations, tolerances from the variance formula),
the reports are kept exactly, and a crash mid-shuffle loses and duplicates nothing."""
from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ldpcompress import KRR
from ldpcompress.cli.main import main
from ldpcompress.core.entropy import simulation_entropy
from ldpcompress.scale import distributed
from ldpcompress.scale.manifest import read_info, read_manifest
from ldpcompress.scale.reader import read_shard
from ldpcompress.scale.shuffle import (Fingerprint, bucket_count, shuffle_report_set,
                                       two_pass_order, uniform_order)
from ldpcompress.scale.writer import write_reports

pytest.importorskip("pyarrow")


def _reports(folder):
    randomizer, shards = read_manifest(folder / "manifest.json")
    return np.concatenate([read_shard(s, randomizer) for s in shards])


@pytest.mark.parametrize("buckets", [1, 3])
def test_two_pass_order_is_uniform(buckets):
    """n = 4 items, T trials (test-only seeded bytes): every (position, item) cell has
    probability 1/4, count ~ Binomial(T, 1/4); every one of the 24 permutations 1/24. The
    chi-square statistics (df = 9 for positions after the margins, 23 for permutations) must
    stay below mean + 5 sd = df + 5 sqrt(2 df)."""
    n, trials = 4, 12_000
    stream = simulation_entropy(7 + buckets).expand()
    cells = np.zeros((n, n))
    perms = {p: 0 for p in itertools.permutations(range(n))}
    for _ in range(trials):
        order = two_pass_order(n, buckets, stream)
        assert sorted(order.tolist()) == list(range(n))
        cells[np.arange(n), order] += 1
        perms[tuple(order.tolist())] += 1
    expect = trials / n
    chi_cells = float(((cells - expect) ** 2 / expect).sum())
    assert chi_cells < 9 + 5 * math.sqrt(18), cells
    expect_p = trials / 24
    chi_perms = sum((c - expect_p) ** 2 / expect_p for c in perms.values())
    assert chi_perms < 23 + 5 * math.sqrt(46), perms


def test_uniform_order_redraws_ties():
    class Words:
        calls = 0

        def words(self, count):
            Words.calls += 1
            return np.array([5, 5, 1], np.uint64) if Words.calls == 1 else \
                np.array([3, 1, 2], np.uint64)
    assert uniform_order(3, Words()).tolist() == [1, 2, 0] and Words.calls == 2


def test_bucket_count_bounds_memory():
    assert bucket_count(10, 17) == 1
    # 1e7 reports of 17 bytes: (2 * 17 + 32) bytes each in pass 2, 660 MB in 1 MiB buckets
    assert bucket_count(10 ** 7, 17, 1 << 20) == 630
    assert bucket_count(10 ** 12, 17) == 1024


def test_fingerprint_sees_a_lost_or_duplicated_report():
    f = Fingerprint.fresh()
    cols = {"r": np.arange(10, dtype=np.uint32)}
    f.add(cols)
    same = f.like()
    same.add({"r": cols["r"][::-1].copy()})
    assert same == f
    for changed in (np.r_[cols["r"][:9], cols["r"][8]], np.r_[cols["r"][:9], 11]):
        other = f.like()
        other.add({"r": changed.astype(np.uint32)})
        assert other != f


def _set(tmp_path, n=3000, shards=3, name="in"):
    orc = KRR(50, 2.0)
    reports = np.arange(n, dtype=np.int64) % 50  # in input order: a visible pattern
    write_reports(tmp_path / name, orc, reports, shards=shards)
    return tmp_path / name, reports


def test_shuffle_keeps_every_report_and_permutes_across_shards(tmp_path, capsys):
    src, reports = _set(tmp_path)
    paths = shuffle_report_set(src, tmp_path / "out", shards=4, bucket_bytes=200)
    assert len(paths) == 4
    got = _reports(tmp_path / "out")
    assert sorted(got.tolist()) == sorted(reports.tolist())
    assert not np.array_equal(got, reports)
    # across shards: input position of... the first shard's reports are not the first 750
    assert np.array_equal(_reports(src), reports)  # the input is untouched
    assert main(["shuffle", str(src), str(tmp_path / "cli"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["results"]
    assert doc["reports"] == 3000 and len(doc["files"]) == 3
    a = distributed.aggregate(tmp_path / "cli", scheduler="memory")
    b = distributed.aggregate(src, scheduler="memory")
    assert np.array_equal(a.summary, b.summary)


def test_shuffle_refuses_before_writing(tmp_path, capsys):
    src, _ = _set(tmp_path, n=100, shards=1)
    assert main(["shuffle", str(src), str(src / "inside")]) == 2
    assert "must be written apart from the input" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert main(["shuffle", str(src), str(tmp_path / "full")]) == 2
    assert "is not empty" in capsys.readouterr().err
    shard = next(src.glob("*.parquet"))
    data = bytearray(shard.read_bytes())
    data[100] ^= 1
    shard.write_bytes(bytes(data))
    assert main(["shuffle", str(src), str(tmp_path / "o")]) == 2
    assert "SHA-256" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_names_and_coins_are_carried_over(tmp_path):
    dom = tmp_path / "dom.txt"
    dom.write_text("apple\nbanana\n")
    users = tmp_path / "u.csv"
    users.write_text("apple\nbanana\nkiwi\n" * 10)
    assert main(["encode", "--csv", str(users), "--domain", str(dom), "--catch-all", "--oracle",
                 "krr", "--eps", "1", "--out", str(tmp_path / "set")]) == 0
    shuffle_report_set(tmp_path / "set", tmp_path / "out")
    info = read_info(tmp_path / "out" / "manifest.json")
    src = read_info(tmp_path / "set" / "manifest.json")
    assert (info.coins, info.items) == (src.coins, src.items) and info.items.k == 3
    assert set(src.sources) < set(info.sources)  # its source's digest added (and theirs)


KILLER = textwrap.dedent("""
    import os, signal, sys
    from ldpcompress.scale import shuffle as S
    where = sys.argv[3]
    if where == "pass1":
        real = S._Buckets.add
        calls = []
        def add(self, cols, labels):
            calls.append(1)
            if len(calls) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(self, cols, labels)
        S._Buckets.add = add
    else:
        real = S.ReportSetWriter.write_shard
        def write_shard(self, batches):
            if len(self.entries) == 1:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(self, batches)
        S.ReportSetWriter.write_shard = write_shard
    S.shuffle_report_set(sys.argv[1], sys.argv[2], shards=3, bucket_bytes=64)
""")


@pytest.mark.parametrize("where", ["pass1", "writing"])
def test_a_crash_mid_shuffle_loses_and_duplicates_nothing(tmp_path, where):
    src, reports = _set(tmp_path, n=3000, shards=3)
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", KILLER, str(src), str(out), where],
                          capture_output=True, env=dict(os.environ, LDPCOMPRESS_NO_JIT_NOTE="1"))
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert {p.name: p.read_bytes() for p in src.iterdir()} == before  # input intact
    assert not out.exists()  # no partial output where the set was asked for
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]
    assert left  # the staging directories of the killed run ...
    for folder in left:  # ... are never taken for a set
        if (folder / "manifest.json").exists():
            with pytest.raises(ValueError, match="incomplete"):
                distributed.aggregate(folder, scheduler="memory")
    shuffle_report_set(src, out)  # a second run completes beside them
    assert sorted(_reports(out).tolist()) == sorted(reports.tolist())


def test_a_set_given_with_its_own_source_is_refused(tmp_path, capsys):
    # before the fix a shuffled set and its source were both counted (6,000 reports of 3,000)
    src, reports = _set(tmp_path)
    shuffle_report_set(src, tmp_path / "once")
    shuffle_report_set(tmp_path / "once", tmp_path / "twice")
    src_m, once_m = src / "manifest.json", tmp_path / "once" / "manifest.json"
    assert len(read_info(once_m).sources) == 1 and len(read_info(tmp_path / "twice" /
                                                                  "manifest.json").sources) == 2
    for given, shuffled in [([src, tmp_path / "once"], once_m),
                            ([tmp_path / "twice", src], tmp_path / "twice" / "manifest.json")]:
        with pytest.raises(ValueError, match="given together their reports would be counted "
                                             "twice") as err:
            distributed.aggregate(given, scheduler="memory")
        assert str(src_m) in str(err.value) and str(shuffled) in str(err.value)
        with pytest.raises(ValueError, match="counted twice"):
            shuffle_report_set(given, tmp_path / "x")
    code = main(["aggregate", str(src), str(tmp_path / "once")])
    assert code == 2 and "counted twice" in capsys.readouterr().err
    # a manifest written before the key existed (no 'sources') still reads, alone or with
    # its source
    doc = json.loads(once_m.read_text())
    assert doc.pop("sources")
    old = tmp_path / "old"
    old.mkdir()
    for f in (tmp_path / "once").iterdir():
        (old / f.name).write_bytes(f.read_bytes())
    (old / "manifest.json").write_text(json.dumps(doc))
    assert read_info(old / "manifest.json").sources == ()
    assert distributed.aggregate(old, scheduler="memory").n == 3000
