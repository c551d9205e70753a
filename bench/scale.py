"""Benchmark of writing and aggregating report sets: time and memory.

1. Timing (issue: 1e7 reports on the local cluster within 2x of the in-memory kernel): writes
   1e7 PI-RAPPOR reports (k = 1000, eps = 4) as a 16-shard report set with the streaming writer
   (``report_files.write_items``: CHUNK reports randomized and written at a time, never all of
   them in memory), then times the in-memory aggregation (every shard hashed, read in batches,
   checked and counted in this process) and the Dask LocalCluster run (same set, warm
   cluster), plus the cluster's start-up and what the integrity checks cost (SHA-256 of every
   shard, Parquet page-checksum verification) against a plain read of the same files.

2. Memory: peak resident set size of ``simulate`` (write_items) and of aggregation, in memory
   and on a 2-worker LocalCluster, for one-shard sets of 1e3 to 9e7 reports (9e7 in one shard
   is the set the old reader refused: 4.3 GiB at once). Each figure is measured in a fresh
   subprocess: its own peak RSS (VmHWM from /proc/self/status; not ``ru_maxrss``, which Linux
   carries over fork and exec from the parent) and, for the cluster, the largest worker's
   (``client.run`` on every worker). The 1e3 row is the floor (libraries and compiled
   kernels). Flat figures across shard sizes mean memory is bounded by the batch, not by the
   shard; the "whole shard" column reads the shard at once (``read_shard``), as aggregation
   did before, for contrast.

Usage: ``python bench/scale.py`` (about 90 s on 2 cores); ``--quick`` for sizes up to 1e7.
"""
import hashlib
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

from ldpcompress.randomizers.pirappor import PIRappor  # noqa: E402
from ldpcompress.scale import distributed as D  # noqa: E402
from ldpcompress.scale import report_files as RF  # noqa: E402

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


def timing() -> None:
    from dask.distributed import Client, LocalCluster
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set"
        t = time.perf_counter()
        write(out, N, SHARDS)
        print(f"wrote {N:.0e} reports in {SHARDS} shards (streaming): "
              f"{time.perf_counter() - t:.2f} s")
        print(integrity_costs(out))
        D.aggregate_in_memory([out])  # warm the kernels
        t = time.perf_counter()
        mem = D.aggregate_in_memory([out])
        t_mem = time.perf_counter() - t
        t = time.perf_counter()
        cluster = LocalCluster(threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        t_start = time.perf_counter() - t
        D.aggregate([out], client=client)  # workers load the cached kernels
        t = time.perf_counter()
        dist = D.aggregate([out], client=client)
        t_dist = time.perf_counter() - t
        client.close()
        cluster.close()
        assert np.array_equal(mem["counts"], dist["counts"]) and mem["n"] == dist["n"] == N
        print(f"in-memory (hash + read in batches + check + kernel): {t_mem:.2f} s; local "
              f"cluster, warm: {t_dist:.2f} s (ratio {t_dist / t_mem:.2f}); cluster start-up "
              f"{t_start:.2f} s; same counts")


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
extra = dict(n=len(RF.read_shard(shards[0], oracle, max_bytes=float("inf"))))
"""
DASK = """
from dask.distributed import Client, LocalCluster
from ldpcompress.scale import distributed as D
if __name__ == "__main__":
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
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


def main():
    quick = "--quick" in sys.argv
    if not quick:
        timing()
    memory(MEMORY_SIZES[:3] if quick else MEMORY_SIZES)


if __name__ == "__main__":
    main()
