"""The package's one chunk loop: consecutive slices of at most ``step`` rows covering
``range(n)`` in order, so that a batch's temporaries stay bounded whatever n is."""
from __future__ import annotations

from typing import Iterator

__all__ = ["spans"]


def spans(n: int, step: int) -> Iterator[slice]:
    """slice(lo, min(lo + step, n)) for lo = 0, step, 2 step, ... < n (nothing when n = 0).

    Parameters
    ----------
    n : int
        Rows to cover (>= 0).
    step : int
        Rows per slice (>= 1).
    """
    if step < 1:
        raise ValueError(f"step must be >= 1, got {step!r}")
    for lo in range(0, n, step):
        yield slice(lo, min(lo + step, n))
