"""Benchmark of distributed aggregation (issue: 1e7 reports on the local cluster within 2x of
the in-memory kernel). Writes 1e7 PI-RAPPOR reports (k = 1000, eps = 4) in 16 shards, then times
the in-memory reference (read + one kernel call) and the Dask LocalCluster run (same files),
the latter both with a warm cluster and including cluster start-up."""
import tempfile
import time

import numpy as np

from ldpcompress import distributed as D
from ldpcompress import report_files as RF
from ldpcompress.pirappor import PIRappor

N, K, EPS, SHARDS = 10 ** 7, 1000, 4.0, 16


def main():
    from dask.distributed import Client, LocalCluster
    with tempfile.TemporaryDirectory() as tmp:
        oracle = PIRappor(K, EPS)
        xs = np.random.default_rng(0).integers(0, K, N)  # simulated users' data, not privacy coins
        t = time.perf_counter()
        RF.write_reports(tmp, oracle, oracle.randomize_many(xs), SHARDS)
        print(f"wrote {N:.0e} reports in {SHARDS} shards: {time.perf_counter() - t:.2f} s")
        D.aggregate_in_memory([tmp])  # warm the kernels
        t = time.perf_counter()
        mem = D.aggregate_in_memory([tmp])
        t_mem = time.perf_counter() - t
        t = time.perf_counter()
        cluster = LocalCluster(threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        t_start = time.perf_counter() - t
        D.aggregate([tmp], client=client)  # workers load the cached kernels
        t = time.perf_counter()
        dist = D.aggregate([tmp], client=client)
        t_dist = time.perf_counter() - t
        client.close()
        cluster.close()
        assert np.array_equal(mem["counts"], dist["counts"])
        print(f"in-memory (read + kernel): {t_mem:.2f} s; local cluster, warm: {t_dist:.2f} s "
              f"(ratio {t_dist / t_mem:.2f}); cluster start-up {t_start:.2f} s; same counts")


if __name__ == "__main__":
    main()
