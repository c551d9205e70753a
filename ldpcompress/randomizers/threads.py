"""Thread counts and report chunks for the randomizers' parallel counting kernels (shared by
the contract's cost statements and every oracle's server; imports nothing of the contract)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["CHUNK_TABLE_BYTES", "num_threads", "chunks_for", "chunked_counts"]

CHUNK_TABLE_BYTES = 1 << 30  # the parallel kernels' per-chunk count rows, all chunks together


def num_threads() -> int:
    """Numba's thread count (numba is imported when a kernel runs, not with the package)."""
    from numba import get_num_threads
    return get_num_threads()


def chunks_for(n: int, k: int = 1) -> int:
    """Report chunks for the parallel kernels: a few per thread, at least 4096 reports each,
    and few enough that their per-chunk rows of k int64 counts stay within CHUNK_TABLE_BYTES
    (so the server's memory for a given k does not grow with the machine's thread count)."""
    by_memory = max(1, CHUNK_TABLE_BYTES // (8 * max(int(k), 1)))
    return max(1, min(4 * num_threads(), n // 4096 + 1, by_memory))


def chunked_counts(kernel, columns, k: int, chunks: int, *args) -> np.ndarray:
    """int64[k] counts of a serial histogram kernel over ``chunks`` contiguous slices of the
    report columns: ``kernel(*column_slices, *args, row)`` adds one slice's counts into its own
    row; the slices run on up to ``num_threads()`` threads (the kernels release the GIL), and the
    rows are summed exactly."""
    n = len(columns[0])
    rows = np.zeros((chunks, k), dtype=np.int64)

    def one(c: int) -> None:
        lo, hi = c * n // chunks, (c + 1) * n // chunks
        kernel(*(col[lo:hi] for col in columns), *args, rows[c])

    workers = min(chunks, num_threads())
    if workers <= 1:
        for c in range(chunks):
            one(c)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, range(chunks)))  # re-raises a chunk's error
    return rows.sum(axis=0)
