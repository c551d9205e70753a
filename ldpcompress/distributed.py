"""Histogram of PI-RAPPOR report files on Dask (optional extra ``[dask]``).

Map: each file's counts by the Numba kernel on a worker; reduce: a binary tree of partial count
sums. ``scheduler="local"`` starts a ``dask.distributed.LocalCluster``; any other value is the
address of a running scheduler. ``aggregate_in_memory`` is the single-process reference.
"""
from __future__ import annotations

import numpy as np

from . import report_files as RF
from .estimators import binary_estimate
from .optional import require
from .pirappor import FieldReports


def _dask():
    dask, dist = require("dask", "dask", "dask.distributed")
    return dask, dist.Client, dist.LocalCluster


def file_counts(path: str, meta: dict) -> tuple[np.ndarray, int]:
    """(support counts, number of reports) of one file."""
    oracle = RF.oracle_from_metadata(meta)
    reports = RF.read_reports(path, oracle)
    return oracle.counts(reports), len(reports)


def _add(x, y):
    return x[0] + y[0], x[1] + y[1]


def tree_sum(parts, add):
    """Pairwise (tree) reduction of a list of delayed parts."""
    while len(parts) > 1:
        parts = [add(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def aggregate(paths, oracle: str = "pi-rappor", scheduler: str = "local",
              n_workers: int | None = None, client=None) -> dict:
    """Counts and unbiased estimates of every item over all report files.

    Every file's metadata is checked before any work starts; a mismatched or corrupt file is
    reported by name. Returns dict(counts, estimate, n, oracle).
    """
    if oracle != "pi-rappor":
        raise ValueError(f"only 'pi-rappor' report files are supported, got {oracle!r}")
    dask, Client, LocalCluster = _dask()
    files = RF.expand(paths)
    orc = RF.common_oracle(files)
    meta = RF.oracle_metadata(orc)
    own = None
    if client is None:
        if scheduler == "local":
            own = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
            client = Client(own)
        else:
            client = Client(scheduler)
    try:
        parts = [dask.delayed(file_counts)(f, meta) for f in files]
        total = tree_sum(parts, dask.delayed(_add))
        counts, n = client.compute(total).result()
    finally:
        if own is not None:
            client.close()
            own.close()
    return dict(counts=counts, n=n, oracle=orc,
                estimate=binary_estimate(counts, n, orc.a0, orc.a1))


def aggregate_in_memory(paths) -> dict:
    """The same result in this process: read every file, one kernel call."""
    files = RF.expand(paths)
    orc = RF.common_oracle(files)
    reps = [RF.read_reports(f, orc) for f in files]
    a = np.concatenate([r.a for r in reps])
    b = np.concatenate([r.b for r in reps])
    counts = orc.counts(FieldReports(a, b, orc.p))
    return dict(counts=counts, n=a.size, oracle=orc,
                estimate=binary_estimate(counts, a.size, orc.a0, orc.a1))
