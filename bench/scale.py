"""Benchmark of distributed aggregation (issue: 1e7 reports on the local cluster within 2x of
the in-memory kernel). Writes 1e7 PI-RAPPOR reports (k = 1000, eps = 4) as a 16-shard report
set, then times the in-memory aggregation (every shard read, checked and counted in this
process) and the Dask LocalCluster run (same set), the latter with a warm cluster, plus the
cluster's start-up. Also measures what the integrity checks cost: SHA-256 of every shard and
Parquet page-checksum verification, against a plain read of the same files."""
import hashlib
import tempfile
import time
from pathlib import Path

import numpy as np

from ldpcompress import distributed as D
from ldpcompress import report_files as RF
from ldpcompress.pirappor import PIRappor

N, K, EPS, SHARDS = 10 ** 7, 1000, 4.0, 16


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


def main():
    from dask.distributed import Client, LocalCluster
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set"
        oracle = PIRappor(K, EPS)
        xs = np.random.default_rng(0).integers(0, K, N)  # simulated users' data, not privacy coins
        t = time.perf_counter()
        RF.write_reports(out, oracle, oracle.randomize_many(xs), SHARDS)
        print(f"wrote {N:.0e} reports in {SHARDS} shards: {time.perf_counter() - t:.2f} s")
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
        print(f"in-memory (read + check + kernel): {t_mem:.2f} s; local cluster, warm: "
              f"{t_dist:.2f} s (ratio {t_dist / t_mem:.2f}); cluster start-up {t_start:.2f} s; "
              "same counts")


if __name__ == "__main__":
    main()
