"""Grid operations shared by the PLDs (docs/theory.md §3.2): linear convolution by zero-padded
real FFT with a proven bound on its rounding error, and the window left once tails are cut."""
from __future__ import annotations

import math

import numpy as np
from scipy import fft as sfft

from ..core.numerics import UNIT_ROUNDOFF

__all__ = ["fft_convolve", "tail_window"]


def tail_window(pmf: np.ndarray, tail: float) -> tuple[int, int]:
    """(first, last): the indices kept once the ends of a non-negative pmf, each of mass at most
    tail, are cut (at least one entry is kept)."""
    cum = np.cumsum(pmf)
    first = int(np.searchsorted(cum, tail, side="right"))
    rev = np.cumsum(pmf[::-1])
    last = pmf.size - 1 - int(np.searchsorted(rev, tail, side="right"))
    first = min(first, pmf.size - 1)
    return first, max(last, first)


def fft_convolve(a: np.ndarray, b: np.ndarray):
    """Linear convolution of two non-negative arrays by zero-padded real FFT, and a bound on
    the L1 norm of its rounding error."""
    size = a.size + b.size - 1
    nfft = sfft.next_fast_len(size, real=True)
    fa = sfft.rfft(a, nfft)
    # a squaring (self-composition by repeated squaring) transforms its operand once
    fb = fa if b is a else sfft.rfft(b, nfft)
    out = sfft.irfft(fa * fb, nfft)[:size]
    # ||fl(a*b) - a*b||_2 <= 5 u log2(N) ||a||_2 ||b||_2, and L1 <= sqrt(N) L2; clipping the
    # negative noise to zero moves each entry by at most its own error.
    err = 2.0 * math.sqrt(nfft) * 5.0 * UNIT_ROUNDOFF * math.log2(nfft) * \
        math.sqrt(float(np.sum(a * a)) * float(np.sum(b * b)))  # (no BLAS: threads thrash)
    return out, err
