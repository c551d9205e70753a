"""Sampling kernels of the client randomizers (the coins come from the caller's CSPRNG draws)."""
import numpy as np

from .decorator import kernel

__all__ = ["partial_shuffles"]



@kernel
def partial_shuffles(draws, m):
    """First d entries of a partial Fisher-Yates shuffle of range(m), one per row of draws
    (n x d, draws[r, i] uniform in [0, m - i)): a uniformly random ordered d-subset per row.
    One scratch permutation is reused: each row's swaps are undone in reverse order, O(n d)."""
    n, d = draws.shape
    out = np.empty((n, d), dtype=np.int64)
    perm = np.arange(m)
    for r in range(n):
        for i in range(d):
            j = i + draws[r, i]
            tmp = perm[i]
            perm[i] = perm[j]
            perm[j] = tmp
            out[r, i] = perm[i]
        for i in range(d - 1, -1, -1):
            j = i + draws[r, i]
            tmp = perm[i]
            perm[i] = perm[j]
            perm[j] = tmp
    return out
