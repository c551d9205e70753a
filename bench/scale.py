"""Benchmark of writing and aggregating report sets: time, storage and memory.

1. PI-RAPPOR timing (issue: 1e7 reports on the local cluster within 2x of the in-memory
   kernel): writes 1e7 PI-RAPPOR reports (k = 1000, eps = 4) as a 16-shard report set with the
   streaming writer (``report_files.write_items``), then times the in-memory aggregation (every
   shard hashed, read in batches, checked and summarized in this process) against the bare
   summary of the same reports held in memory (the kernel alone), the Dask LocalCluster run
   (same set, warm cluster) and "auto" (which chooses by measured speed, cores and memory:
   ``distributed.dask_workers``), plus the cluster's start-up and what the integrity checks
   cost (SHA-256, Parquet page checksums) against a plain read of the same files.

   Timings are the fastest of 3 interleaved runs: the machine is shared and its load varies.

2. Other randomizers at scale, each against its in-memory aggregation in the same run: a
   compressed RAPPOR (k = 1024, eps = 2) set of 1e6 17-byte reports (uniform items encoded by
   FT21 Alg. 1 with the batch simulator, a seeded source) and a PrivUnit2 (d = 100, eps = 4)
   set, whose reports are drawn directly: uniform directions of norm 1/m (the server checks
   the norm and adds, whatever the inputs).

3. Storage: bytes per report on disk (Parquet shards, all overheads) against the wire size
   (``bits_per_report``) for every shipped randomizer and the compressed wrappers, and
   PI-RAPPOR at large p in the format-2 layout (int64 a, b, dictionary + snappy) for contrast.

4. Memory: peak resident set size of ``simulate`` (write_items) and of aggregation, in memory
   and on a 2-worker LocalCluster, for one-shard sets of 1e3 to 9e7 reports (9e7 in one shard
   is the set the old reader refused: 4.3 GiB at once). Each figure is measured in a fresh
   subprocess: its own peak RSS (VmHWM from /proc/self/status; not ``ru_maxrss``, which Linux
   carries over fork and exec from the parent) and, for the cluster, the largest worker's
   (``client.run`` on every worker). The 1e3 row is the floor (libraries and compiled
   kernels). Flat figures across shard sizes mean memory is bounded by the batch, not by the
   shard; the "whole shard" column reads the shard at once (``read_shard``) for contrast.

5. ``simulate --compressed`` (issue 32, item 6; target: 1e6 compressed RAPPOR(k = 1024)
   reports in <= 60 s on 2 cores): the command as a user runs it, in a fresh process, through
   the batch simulation encoder (the default: seeded coins, said in the manifest) and, before,
   through the clients' own path (``--client-coins``: OS CSPRNG coins, what the command did
   until then) on fewer reports; rates and their ratio in the same run.

6. The shuffler step (issue 32, item 2): ``shuffle_report_set`` on a k-RR (k = 1024) set of
   1e7 reports in 8 shards (1e6 with ``--quick``), in a fresh process: wall time, reports/s and
   peak RSS, against the in-memory aggregation of the same set (one verified read) in the same
   run; and the same with 1e6 reports, to show memory does not grow with n.

Usage: ``python bench/scale.py`` (a few minutes on 2 cores); ``--quick`` for smaller sizes;
``--simulate`` runs section 5 only, ``--shuffle`` section 6 only.
"""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ldpcompress.compression import CompressedRandomizer  # noqa: E402
from ldpcompress.core.entropy import simulation_entropy  # noqa: E402
from ldpcompress.randomizers import (  # noqa: E402
    KRR, OLH, OUE, RAPPOR, HadamardResponse, OneBitSphere, PIRappor, PrivUnit2, SubsetSelection,
    VectorPIRappor)
from ldpcompress.scale import distributed as D  # noqa: E402
from ldpcompress.scale import report_files as RF  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from compression import seconds  # noqa: E402  (fastest of a few runs: the machine is shared)

N, K, EPS, SHARDS = 10 ** 7, 1000, 4.0, 16
MEMORY_SIZES = (10 ** 3, 10 ** 6, 10 ** 7, 3 * 10 ** 7, 9 * 10 ** 7)


def items(n: int, k: int, seed: int = 0, chunk: int = RF.CHUNK):
    """Simulated users' items, chunk by chunk (numpy is fine: not privacy randomness)."""
    rng = np.random.default_rng(seed)
    for lo in range(0, n, chunk):
        yield rng.integers(0, k, min(chunk, n - lo))


def write(out: Path, n: int, shards: int) -> None:
    RF.write_items(out, PIRappor(K, EPS), items(n, K), n, shards)


def integrity_costs(folder: Path) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq
    files = sorted(folder.glob("*.parquet"))
    data = [f.read_bytes() for f in files]
    t = time.perf_counter()
    for d in data:
        hashlib.sha256(d).hexdigest()
    t_sha = time.perf_counter() - t
    reads = {}
    for verify in (False, True):
        t = time.perf_counter()
        for d in data:
            pq.ParquetFile(pa.BufferReader(d), page_checksum_verification=verify).read()
        reads[verify] = time.perf_counter() - t
    size = sum(len(d) for d in data)
    return (f"{size / 2 ** 20:.0f} MiB of shards: SHA-256 {t_sha:.3f} s; Parquet read "
            f"{reads[False]:.3f} s plain, {reads[True]:.3f} s with page checksums")


def same(a, b) -> bool:
    exact = np.dtype(a["summary"].dtype).kind in "iu"
    return a["n"] == b["n"] and (np.array_equal(a["summary"], b["summary"]) if exact else
                                 np.allclose(a["estimate"], b["estimate"], rtol=0, atol=1e-12))


def against_memory(label: str, out: Path, client, floor: float | None = None,
                   repeats: int = 3) -> None:
    """In-memory aggregation (warm) against Dask (warm cluster) and auto, same run, each the
    fastest of ``repeats`` runs, the three interleaved (the machine's load varies)."""
    D.aggregate_in_memory([out])  # warm the kernels
    D.aggregate([out], client=client)  # workers load the cached kernels
    t_mem = t_dist = t_auto = float("inf")
    for _ in range(repeats):
        t, mem = seconds(lambda: D.aggregate_in_memory([out]), 1)
        t_mem = min(t_mem, t)
        t, dist = seconds(lambda: D.aggregate([out], client=client), 1)
        t_dist = min(t_dist, t)
        t, auto = seconds(lambda: D.aggregate([out]), 1)
        t_auto = min(t_auto, t)
    assert same(mem, dist) and same(mem, auto)
    n = mem["n"]
    plan = auto["auto"]
    why = "" if plan is None else (f", measured {plan['rate'] / 2 ** 20:.0f} MiB/s on "
                                   f"{plan['parallelism']:.2f} cores")
    line = (f"{label}: in memory {t_mem:.2f} s ({n / t_mem:,.0f} reports/s); local cluster, "
            f"warm {t_dist:.2f} s (ratio {t_dist / t_mem:.2f}); auto chose {auto['method']}"
            f"{why}: {t_auto:.2f} s (ratio {t_auto / t_mem:.2f}); same results")
    if floor is not None:
        line += f"; the summary of the reports held in memory {floor:.2f} s (in memory / it " \
                f"{t_mem / floor:.2f})"
    print(line)


def pirappor_timing(client, n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set"
        t, _ = seconds(lambda: write(out, n, SHARDS), 1)
        print(f"PI-RAPPOR (k = {K}, eps = {EPS:g}): wrote {n:.0e} reports in {SHARDS} shards "
              f"(streaming): {t:.2f} s")
        print(integrity_costs(out))
        oracle, shards = RF.collect([out])
        reports = oracle.concat([RF.read_shard(s, oracle) for s in shards])
        oracle.summarize(reports)
        floor, _ = seconds(lambda: oracle.summarize(reports), 3)
        reports = None  # free the memory before the aggregations
        against_memory("PI-RAPPOR", out, client, floor)


def encoded(r: CompressedRandomizer, k: int, n: int) -> np.ndarray:
    """n compressed reports of uniform items in [0, k), encoded by FT21 Alg. 1 with the batch
    simulator (a seeded simulation source: these reports give no privacy)."""
    return r.randomize_many(np.random.default_rng(5).integers(0, k, n), simulation_entropy(6))


def sphere_reports(r: PrivUnit2, n: int) -> np.ndarray:
    """n valid PrivUnit2 reports: uniform directions of the reports' norm 1/m."""
    z = np.random.default_rng(3).standard_normal((n, r.d))
    return z / np.linalg.norm(z, axis=1, keepdims=True) * r.report_norm


def other_sets(client, n_compressed: int, n_privunit: int) -> None:
    comp = CompressedRandomizer(RAPPOR(1024, 2.0))
    pu = PrivUnit2(100, 4.0)
    t, seeds = seconds(lambda: encoded(comp, 1024, n_compressed), 1)
    print(f"compressed RAPPOR (k = 1024, eps = 2): {n_compressed:.0e} reports encoded (batch "
          f"simulator) in {t:.2f} s")
    for name, label, r, rep, repeats in (
            ("compressed RAPPOR", f"compressed RAPPOR (k = 1024, eps = 2), {n_compressed:.0e} "
             "x 17 bytes", comp, seeds, 3),
            ("PrivUnit2", f"PrivUnit2 (d = 100, eps = 4), {n_privunit:.0e} x "
             f"{pu.bits_per_report // 8} bytes", pu, sphere_reports(pu, n_privunit), 3)):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "set"
            t, _ = seconds(lambda: RF.write_reports(out, r, rep, shards=8), 1)
            print(f"{label}: written in {t:.2f} s")
            small = rep[: max(1, len(rep) // 10)]
            r.summarize(small[:10])
            floor, _ = seconds(lambda: r.summarize(small), repeats)
            print(f"  summarize() of {len(small):,} reports held in memory: {floor:.2f} s "
                  f"({len(small) / floor:,.0f} reports/s)")
            rep = small = None  # free the memory before the aggregations
            against_memory("  " + name, out, client, repeats=repeats)


def randomized(k: int):
    """Reports of k items drawn uniformly (simulated users) by the randomizer's own client."""
    return lambda r, n, i: r.randomize_many(np.random.default_rng(i).integers(0, k, n),
                                            simulation_entropy(i))


# (label, randomizer, its reports (randomizer, n, seed)) for the storage table
STORAGE = [
    ("k-RR k=1000 eps=4", lambda: KRR(1000, 4.0), randomized(1000)),
    ("RAPPOR k=1024 eps=2", lambda: RAPPOR(1024, 2.0), randomized(1024)),
    ("OUE k=1024 eps=4", lambda: OUE(1024, 4.0), randomized(1024)),
    ("subset k=1000 eps=2", lambda: SubsetSelection(1000, 2.0), randomized(1000)),
    ("OLH k=1000 eps=4", lambda: OLH(1000, 4.0), randomized(1000)),
    ("Hadamard (basic) k=1000 eps=4", lambda: HadamardResponse(1000, 4.0, variant="basic"),
     randomized(1000)),
    ("PI-RAPPOR k=1000 eps=4", lambda: PIRappor(1000, 4.0), randomized(1000)),
    ("PI-RAPPOR k=1e6 eps=9 (large p)", lambda: PIRappor(10 ** 6, 9.0), randomized(10 ** 6)),
    ("vector PI-RAPPOR k=1000 eps=4 q=101", lambda: VectorPIRappor(1000, 4.0, 101),
     randomized(1000)),
    ("PrivUnit2 d=100 eps=4", lambda: PrivUnit2(100, 4.0), lambda r, n, i: sphere_reports(r, n)),
    ("one-bit sphere d=100 eps=4", lambda: OneBitSphere(100, 4.0),
     lambda r, n, i: r.randomize_many(sphere_reports(PrivUnit2(100, 4.0), n)
                                      * PrivUnit2(100, 4.0).par.m, simulation_entropy(i))),
    ("compressed k-RR k=1000 eps=4", lambda: CompressedRandomizer(KRR(1000, 4.0)),
     lambda r, n, i: encoded(r, 1000, n)),
    ("compressed RAPPOR k=1024 eps=2", lambda: CompressedRandomizer(RAPPOR(1024, 2.0)),
     lambda r, n, i: encoded(r, 1024, n)),
]


def storage(n: int) -> None:
    """Bytes per report on disk against the wire size, every randomizer (PrivUnit2: uniform
    directions; its stored bytes do not depend on the inputs)."""
    from ldpcompress.scale.columns import describe_columns
    print(f"\nbytes per report: a {n:,}-report set on disk (all Parquet overheads) against the "
          "wire size (bits_per_report / 8)")
    print(f"{'randomizer':<38} {'columns':<28} {'wire':>8} {'disk':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, make, reports) in enumerate(STORAGE):
            r = make()
            rep = reports(r, n, i)
            out = Path(tmp) / f"s{i}"
            RF.write_reports(out, r, rep, shards=1)
            disk = sum(p.stat().st_size for p in out.glob("*.parquet")) / n
            wire = r.bits_per_report / 8
            print(f"{label:<38} {describe_columns(r)[:28]:<28} {wire:>8.2f} {disk:>8.2f} "
                  f"{disk / wire:>6.2f}")
            if label.endswith("(large p)"):
                old = format2_bytes(rep) / n
                print(f"{'  the same in format 2 (before)':<38} {'a int64, b int64':<28} "
                      f"{wire:>8.2f} {old:>8.2f} {old / wire:>6.2f}")


def format2_bytes(rep) -> int:
    """Size of PI-RAPPOR reports in the layout of format 2: int64 a, b, pyarrow's defaults
    (dictionary, snappy) and page checksums, as ldpcompress 0.2 wrote them."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    buf = io.BytesIO()
    pq.write_table(pa.table({"a": rep.a.astype(np.int64), "b": rep.b.astype(np.int64)}), buf,
                   write_page_checksum=True, data_page_size=1 << 20)
    return len(buf.getvalue())


PEAK = """
def peak_kib():
    # VmHWM: this process's peak RSS. Not ru_maxrss: Linux carries it over fork and execve,
    # so a child started by a large parent would report the parent's peak.
    try:
        with open("/proc/self/status") as fh:
            return int(fh.read().split("VmHWM:")[1].split()[0])
    except (OSError, IndexError, ValueError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""
CHILD_END = """
import json
if __name__ == "__main__":
    print(json.dumps(dict(self=peak_kib(), **globals().get("extra", {}))))
"""


def child(code: str) -> dict:
    """Run code in a fresh interpreter; its peak RSS in KiB (and what it puts in ``extra``)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK + code + CHILD_END], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child failed:\n{done.stderr[-2000:]}")
    res = json.loads(done.stdout.strip().splitlines()[-1])
    res["seconds"] = time.perf_counter() - t
    return res


def mib(kib: int) -> str:
    return f"{kib / 1024:7.0f} MiB"


SIMULATE = """
import numpy as np
from ldpcompress.scale import report_files as RF
from ldpcompress.randomizers.pirappor import PIRappor
def items(n, k, chunk=RF.CHUNK):  # simulated users' data, chunk by chunk (not privacy coins)
    rng = np.random.default_rng(0)
    for lo in range(0, n, chunk):
        yield rng.integers(0, k, min(chunk, n - lo))
RF.write_items({out!r}, PIRappor({k}, {eps}), items({n}, {k}), {n}, 1)
"""
AGGREGATE = """
from ldpcompress.scale import distributed as D
extra = dict(n=D.aggregate({out!r}, scheduler="memory")["n"])
"""
WHOLE = """
from ldpcompress.scale import report_files as RF
oracle, shards = RF.collect({out!r})
extra = dict(n=oracle.n_reports(RF.read_shard(shards[0], oracle, max_bytes=float("inf"))))
"""
DASK = """
from dask.distributed import Client, LocalCluster
from ldpcompress.scale import distributed as D
if __name__ == "__main__":
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    with Client(cluster) as client:
        extra = dict(n=D.aggregate({out!r}, client=client)["n"])
        extra["workers"] = max(client.run(peak_kib).values())  # the largest worker's peak
    cluster.close()
"""


def memory(sizes) -> None:
    print("\npeak RSS, each in a fresh process (the first row is the floor: libraries, compiled "
          "kernels);\n'whole shard' reads the shard at once (read_shard), as aggregation did "
          "before, for contrast")
    head = ("reports (1 shard)", "shard", "simulate", "aggregate", "whole shard", "dask client",
            "dask worker")
    print(f"{head[0]:>18} {head[1]:>9}" + "".join(f" {h:>12}" for h in head[2:]))
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            out = str(Path(tmp) / f"set{n}")
            sim = child(SIMULATE.format(out=out, n=n, k=K, eps=EPS))
            size = sum(p.stat().st_size for p in Path(out).glob("*.parquet"))
            agg = child(AGGREGATE.format(out=out))
            whole = child(WHOLE.format(out=out))
            dask = child(DASK.format(out=out))
            assert agg["n"] == whole["n"] == dask["n"] == n
            print(f"{n:>18,} {size / 2 ** 20:5.0f} MiB" + "".join(
                f" {mib(r[key])}" for r, key in ((sim, "self"), (agg, "self"), (whole, "self"),
                                                 (dask, "self"), (dask, "workers"))))
            shutil.rmtree(out)


def simulate_compressed(n_batch: int, n_client: int) -> None:
    """Section 5: ``ldpcompress simulate --compressed`` timed whole (start-up included)."""
    print(f"\nsimulate --oracle rappor --k 1024 --eps 4 --compressed (wall time of the command, "
          f"{D._usable_cores()} usable cores)")
    rates = {}
    for label, n, extra in (("client path (--client-coins, before)", n_client,
                             ["--client-coins"]), ("batch simulation encoder (now)", n_batch, [])):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "ldpcompress", "simulate", "--oracle", "rappor", "--k",
                   "1024", "--eps", "4", "--compressed", "--n", str(n), "--out",
                   str(Path(tmp) / "set")] + extra
            subprocess.run(cmd[:-2 - len(extra)] + ["--n", "100", "--out", str(Path(tmp) / "w")]
                           + extra, check=True, capture_output=True)  # compile, warm caches
            t = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            secs = time.perf_counter() - t
        rates[label] = n / secs
        print(f"  {label:<40} n = {n:>9,}: {secs:7.1f} s, {n / secs:>9,.0f} reports/s")
    before, now = rates.values()
    print(f"  ratio (batch / client path): {now / before:.1f}x; 1e6 reports: "
          f"{1e6 / now:.0f} s now (target <= 60 s), {1e6 / before:.0f} s before (extrapolated)")


SHUFFLE_SET = """
import numpy as np
from ldpcompress.randomizers import KRR
from ldpcompress.scale.writer import write_items
def items(n, k, chunk=1 << 20):  # simulated users' data (not privacy coins)
    rng = np.random.default_rng(0)
    for lo in range(0, n, chunk):
        yield rng.integers(0, k, min(chunk, n - lo))
write_items({out!r}, KRR(1024, 4.0), items({n}, 1024), {n}, 8)
"""
SHUFFLE = """
from ldpcompress.scale.shuffle import shuffle_report_set
extra = dict(files=len(shuffle_report_set({src!r}, {out!r})))
"""


def shuffle_figures(sizes) -> None:
    """Section 6: shuffle throughput and peak memory against one verified read."""
    print("\nshuffle_report_set, k-RR(k = 1024) sets in 8 shards, each in a fresh process "
          "(peak RSS); baseline: aggregate (one verified read) of the same set")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            src, out = str(Path(tmp) / "in"), str(Path(tmp) / "out")
            child(SHUFFLE_SET.format(out=src, n=n))
            agg = child(AGGREGATE.format(out=src))
            shuf = child(SHUFFLE.format(src=src, out=out))
            print(f"  n = {n:>11,}: shuffle {shuf['seconds']:6.1f} s ({n / shuf['seconds']:>10,.0f} "
                  f"reports/s), peak {mib(shuf['self'])}; aggregate {agg['seconds']:5.1f} s, "
                  f"peak {mib(agg['self'])}; ratio {shuf['seconds'] / agg['seconds']:.1f}x")


def main():
    quick = "--quick" in sys.argv
    if "--shuffle" in sys.argv:
        shuffle_figures([10 ** 5, 10 ** 6] if quick else [10 ** 6, 10 ** 7])
        return
    if "--simulate" in sys.argv:
        simulate_compressed(10 ** 5 if quick else 10 ** 6, 2000 if quick else 20_000)
        return
    from dask.distributed import Client, LocalCluster
    t = time.perf_counter()
    cluster = LocalCluster(threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    print(f"local cluster of {len(cluster.workers)} worker processes started in "
          f"{time.perf_counter() - t:.2f} s; this machine: {D._usable_cores()} usable cores")
    try:
        pirappor_timing(client, N // 10 if quick else N)
        other_sets(client, 10 ** 5 if quick else 10 ** 6, 2 * 10 ** 4 if quick else 2 * 10 ** 5)
    finally:
        client.close()
        cluster.close()
    storage(2 * 10 ** 4 if quick else 2 * 10 ** 5)
    memory(MEMORY_SIZES[:3] if quick else MEMORY_SIZES)


if __name__ == "__main__":
    main()
