"""Discounted suffix sums of a grid pmf (docs/theory.md §3.2): R_i = p_i + r R_(i+1), the sum
of p_j r^(j - i) over j >= i, by the recurrence (no power of r is formed, so nothing over- or
underflows at any grid length). Non-negative terms: a relative error O(N u)."""
import numpy as np

from .decorator import kernel

__all__ = ["discounted_suffix"]


@kernel
def discounted_suffix(pmf, r):
    """R with R_i = pmf_i + r R_(i+1) and a trailing 0 (length pmf.size + 1)."""
    n = pmf.size
    out = np.zeros(n + 1)
    acc = 0.0
    for i in range(n - 1, -1, -1):
        acc = pmf[i] + r * acc
        out[i] = acc
    return out
