"""Blocks of the blanket count M' = 1 + Bin(n-1, gamma) for the privacy-blanket bounds
(docs/theory.md §2.5): a block may carry g at its smallest M' since g is non-increasing in m.
"""
import math

import numpy as np

from .binomial import TINY, binom_window, pmf_anchor
from .decorator import kernel
from .numerics import UNIT_ROUNDOFF

__all__ = ["TAIL_ZONES", "MERGE_REL", "m_blocks"]


TAIL_ZONES = ((5.0, 16), (3.0, 4))  # (|z| beyond which, merge factor) for m_blocks' tails
MERGE_REL = 20  # a merged block spans at most 1/MERGE_REL of its smallest M'


@kernel
def m_blocks(n, gamma, gammac, width, tol, merge_tails=False):
    """Blocks of M' = 1 + C, C ~ Bin(n-1, gamma), over a window of C, aligned at multiples of
    width: returns (smallest M' of each block, Pr[M' in block] rounded up, outside mass of the
    window). Rounding up covers the block sum, the weights' log-pmf anchors (pmf_rel_err) and
    8 ulps per recurrence step since the last anchor.

    merge_tails: a block lying wholly beyond 3 (5) standard deviations of C from its mean
    merges 4 (16) base blocks, aligned at multiples of its own width (TAIL_ZONES). Any block may
    carry g at its smallest M' (g is non-increasing in m, docs/theory.md §2.5); wide blocks only
    where Pr[block] is tiny keep the cost in tightness small and cut the blocks by about 3x."""
    big_n = n - 1
    lo, hi, outside = binom_window(big_n, gamma, gammac, tol)
    # blocks start at multiples of width whatever the window, so a wider window (smaller tol)
    # only adds blocks: the bound is then non-increasing as tol shrinks
    lo = (lo // width) * width
    nb_max = (hi - lo) // width + 1
    ms = np.empty(nb_max, dtype=np.int64)
    ws = np.zeros(nb_max)
    mean = big_n * gamma
    sd = math.sqrt(big_n * gamma * gammac)
    c = lo
    w, rel_w = pmf_anchor(c, big_n, gamma, gammac)
    since = 0
    nb = 0
    while c <= hi:
        size = width
        if merge_tails and sd > 0.0:
            for zone in range(len(TAIL_ZONES)):
                z_min, factor = TAIL_ZONES[zone]
                wide = width * factor
                end = c + wide - 1
                # and only where the merged block is a small fraction of its M' (at small n
                # g(c + 1) falls fast in c: a merged low block would carry a far larger g)
                if c % wide == 0 and wide * MERGE_REL <= c + 1 \
                        and (c - mean >= z_min * sd or mean - end >= z_min * sd):
                    size = wide
                    break
        ms[nb] = c + 1
        top = min(hi, c + size - 1)
        acc = 0.0
        rel_b = 0.0
        while c <= top:
            acc += w
            rel_b = max(rel_b, rel_w + 8.0 * (since + 1) * UNIT_ROUNDOFF)
            if c < big_n:
                w *= (big_n - c) / (c + 1.0) * (gamma / gammac)
                since += 1
                if w < TINY:
                    w, rel_w = pmf_anchor(c + 1, big_n, gamma, gammac)
                    since = 0
            c += 1
        ws[nb] = acc * (1.0 + 4.0 * (size + 4) * UNIT_ROUNDOFF) * (1.0 + rel_b)
        nb += 1
    return ms[:nb].copy(), ws[:nb].copy(), outside
