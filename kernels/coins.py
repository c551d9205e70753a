"""Kernels of the bulk client coins (ldpcompress.core.coins): exact Bernoulli bits and uniform
subsets from words of a cryptographic stream (docs/theory.md §6, "Unary-encoding clients in
bulk").

Each coin reads few stream bits and keeps its exact law: a Bernoulli(c 2^-53)
coin, c an integer, is the comparison j < c of a 53-bit uniform j = (byte << 45) | tail, and the
45-bit tail is drawn only when the byte equals the top byte of c (probability 1/256); a
uniform integer in [0, b) is Lemire's multiply-and-reject on one 32-bit word.
"""
import numpy as np

from .decorator import kernel

__all__ = ["bytes_below", "bounded_draw", "floyd_subsets"]


@kernel
def bytes_below(raw, hi, out, ties):
    """out[i] = raw[i] < hi for the uint8 bytes raw; the positions i with raw[i] == hi (coins
    the byte leaves undecided) are written to ties[:t] and t is returned."""
    t = 0
    for i in range(raw.size):
        b = raw[i]
        out[i] = b < hi
        if b == hi:
            ties[t] = i
            t += 1
    return t


@kernel
def bounded_draw(word, bound, width):
    """Lemire (2019), "Fast random integer generation in an interval": for a uniform
    ``width``-bit word and 1 <= bound <= 2^width, m = word * bound; the draw is accepted iff
    m mod 2^width >= 2^width mod bound, and then m >> width is exactly uniform in [0, bound)
    (each value keeps floor(2^width / bound) words). Returns the value, or -1 (rejected)."""
    m = np.uint64(word) * np.uint64(bound)
    low = m & np.uint64((1 << width) - 1)
    if low < np.uint64(bound):  # the threshold 2^width mod bound is below bound
        if low < np.uint64(((1 << width) - bound) % bound):
            return -1
    return np.int64(m >> np.uint64(width))


@kernel
def _slot(table, item):
    """The slot of item in an open-addressing table (items stored as item + 1, 0 = empty,
    size a power of two, linear probing), or the empty slot where it would go."""
    mask = table.size - 1
    h = np.int64((np.uint64(item) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)) & mask
    while table[h] != 0 and table[h] != item + 1:
        h = (h + 1) & mask
    return h


@kernel
def floyd_subsets(words, state, xs, include, k, d, taken, out, scan):
    """Row r of out (n x d): x = xs[r] and a uniform (d-1)-subset of [k] minus {x} if
    include[r], else a uniform d-subset of [k] minus {x}; in increasing order when ``scan``.

    Floyd's algorithm (Bentley and Floyd, "A sample of brilliance", CACM 1987) on the m = k - 1
    items other than x (index t -> item t + (t >= x)): for j = m - s, ..., m - 1 draw t uniform
    in [0, j] and add t, or j (never chosen before) if t is already chosen: a uniform s-subset.
    Integers by ``bounded_draw`` on the uint32 ``words``. Resumable: ``state`` = (row, draws
    done in it) is saved when the words run out and the call returns; the caller passes the
    next words. ``taken`` (zeros, left zero after every finished row) records the chosen items:
    with ``scan`` it is a k-slot mark table, read in one branch-free pass to write the row in
    increasing order (O(k) per row; k slots); otherwise an
    open-addressing set of a power of two >= 2 d slots (O(d) per row, memory O(d) whatever k)
    and the row is left unsorted for the caller to sort."""
    n = xs.size
    m = k - 1
    r = state[0]
    i = state[1]
    pos = 0
    nw = words.size
    while r < n:
        x = xs[r]
        s = d - 1 if include[r] else d
        while i < s:
            j = m - s + i
            t = np.int64(-1)
            while t < 0:
                if pos >= nw:
                    state[0] = r
                    state[1] = i
                    return
                t = bounded_draw(words[pos], j + 1, 32)
                pos += 1
            item = t + (t >= x)
            if scan:
                if taken[item]:
                    item = j + (j >= x)
                taken[item] = 1
            else:
                h = _slot(taken, item)
                if taken[h] != 0:
                    item = j + (j >= x)
                    h = _slot(taken, item)
                taken[h] = item + 1
            out[r, i] = item
            i += 1
        if include[r]:
            out[r, d - 1] = x
        if scan:
            taken[x] = include[r]
            c = 0
            for v in range(k):  # branch-free but for the exit: the d marks end at the last
                out[r, c] = v
                c += taken[v]
                taken[v] = 0
                if c == d:
                    break
        else:
            taken[:] = 0
        r += 1
        i = 0
    state[0] = n
    state[1] = 0
