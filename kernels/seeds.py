"""Decoders of compressed reports in batches: the reference samplers of the AES-CTR stream
(docs/theory.md §5.1, §5.3) run on many seeds at once, and the server's statistics taken
straight from the keystream without materialising the decoded outputs (FT21 Alg. 1 decode).

The stream of a seed is fixed by docs/theory.md §5.1: little-endian uint64 words w; a uniform is
(w >> 11) 2^-53, so [u < p] = [w < limit] with limit = ceil(p 2^53) 2^11 (exact integer
comparison, ``core.prg.uniform_limit``); integers in [0, m) are the words at or below 2^64 -
(2^64 mod m) - 1 reduced mod m, rejected words skipped; Gaussians are Box-Muller on consecutive
pairs (u1, u2): sqrt(-2 log(1 - u1)) (cos, sin)(2 pi u2); sphere points are normalised Gaussian
vectors. Seeds arrive validated as uint8 (n, 16); the AES implementation is
``kernels.aes.AES_NI``, fixed when the kernels compile. Every parallel kernel splits the seeds
into ``nchunks`` chunks, each with its own statistic row.
"""
import math

import numpy as np
from numba import prange

from .decorator import kernel
from .aes import AES_NI, GROUP_WORDS, encrypt_group, expand_key, read_words
from .field import sum_rows

__all__ = ["SPAN", "UNIFORM_BITS", "UNIFORM_SCALE", "rejection_limit", "unary_counts", "unary_bits", "bounded_draws",
           "subset_counts", "subset_hits", "sphere_from_words", "sphere_words", "sphere_rows", "sphere_sum",
           "sphere_dots", "dot"]


@kernel
def rejection_limit(m):
    """The largest word accepted for integers in [0, m): 2^64 - (2^64 mod m) - 1 (every word
    when m divides 2^64), in uint64 arithmetic (m >= 1)."""
    m = np.uint64(m)
    top = np.uint64(0xFFFFFFFFFFFFFFFF)
    rem = (top % m + np.uint64(1)) % m  # 2^64 mod m
    return top - rem


@kernel
def _chunk(n, nchunks, c):
    return c * n // nchunks, (c + 1) * n // nchunks


SPAN = 1024  # stream words generated at a time, then compared in one vectorised loop
UNIFORM_BITS = 53  # uniforms are (w >> 11) 2^-53 (core.prg.UNIFORM_BITS, docs/theory.md §5.1)
UNIFORM_SCALE = 2.0 ** -UNIFORM_BITS


@kernel(parallel=True)
def unary_counts(seeds, k, limit, nchunks):
    """sum_i [w_j(seed_i) < limit] for every j < k: the bit counts of decoded unary reports
    (RAPPOR: bit j = [u_j < a0]). int64[k]."""
    n, limit = seeds.shape[0], np.uint64(limit)
    rows = np.zeros((nchunks, k), dtype=np.int64)
    for c in prange(nchunks):
        rk = np.empty(22, dtype=np.uint64)
        words = np.empty(min(k, SPAN), dtype=np.uint64)
        row = rows[c]
        lo, hi = _chunk(n, nchunks, c)
        for i in range(lo, hi):
            expand_key(seeds[i], rk, AES_NI)
            for first in range(0, k, SPAN):
                m = min(SPAN, k - first)
                read_words(rk, first, words[:m], AES_NI)
                part = row[first:first + m]
                for j in range(m):
                    part[j] += words[j] < limit
    return sum_rows(rows)


@kernel(parallel=True)
def unary_bits(seeds, k, limit, nchunks):
    """The decoded unary reports: bits[i, j] = [w_j(seed_i) < limit], bool (n, k)."""
    n, limit = seeds.shape[0], np.uint64(limit)
    out = np.empty((n, k), dtype=np.bool_)
    for c in prange(nchunks):
        rk = np.empty(22, dtype=np.uint64)
        words = np.empty(k, dtype=np.uint64)
        lo, hi = _chunk(n, nchunks, c)
        for i in range(lo, hi):
            expand_key(seeds[i], rk, AES_NI)
            read_words(rk, 0, words, AES_NI)
            for j in range(k):
                out[i, j] = words[j] < limit
    return out


@kernel
def _next_word(rk, buf, pos):
    """Word ``pos`` of a stream read in order from 0 (buf caches its group)."""
    if pos % GROUP_WORDS == 0:
        w = encrypt_group(rk, pos // GROUP_WORDS, AES_NI)
        for t in range(GROUP_WORDS):
            buf[t] = w[t]
    return buf[pos % GROUP_WORDS]


@kernel
def _draw(rk, buf, pos, m):
    """(integer in [0, m), next position): the first word at or after ``pos`` that rejection
    accepts, reduced mod m."""
    limit = rejection_limit(m)
    while True:
        w = _next_word(rk, buf, pos)
        pos += 1
        if w <= limit:
            return np.int64(w % np.uint64(m)), pos


@kernel(parallel=True)
def bounded_draws(seeds, moduli, nchunks):
    """Integers drawn in turn from each seed's stream, draw t in [0, moduli[t]): int64
    (n, len(moduli)) (k-RR: one draw in [0, k))."""
    n, d = seeds.shape[0], moduli.size
    out = np.empty((n, d), dtype=np.int64)
    for c in prange(nchunks):
        rk = np.empty(22, dtype=np.uint64)
        buf = np.empty(GROUP_WORDS, dtype=np.uint64)
        lo, hi = _chunk(n, nchunks, c)
        for i in range(lo, hi):
            expand_key(seeds[i], rk, AES_NI)
            pos = 0
            for t in range(d):
                out[i, t], pos = _draw(rk, buf, pos, moduli[t])
    return out


@kernel
def _subset_of_seed(seed, rk, buf, perm, draws, k, d):
    """The first d entries of perm after the partial Fisher-Yates shuffle driven by the seed's
    draws (draw t in [0, k - t) swaps positions t and t + draw); perm is restored by the
    caller with :func:`_undo`."""
    expand_key(seed, rk, AES_NI)
    pos = 0
    for t in range(d):
        draws[t], pos = _draw(rk, buf, pos, k - t)
        j = t + draws[t]
        tmp = perm[t]
        perm[t] = perm[j]
        perm[j] = tmp


@kernel
def _undo(perm, draws, d):
    for t in range(d - 1, -1, -1):
        j = t + draws[t]
        tmp = perm[t]
        perm[t] = perm[j]
        perm[j] = tmp


@kernel(parallel=True)
def subset_counts(seeds, k, d, nchunks):
    """How many decoded d-subsets (partial Fisher-Yates on the draws in [0, k - t)) hold each
    item: int64[k]."""
    n = seeds.shape[0]
    rows = np.zeros((nchunks, k), dtype=np.int64)
    for c in prange(nchunks):
        rk = np.empty(22, dtype=np.uint64)
        buf = np.empty(GROUP_WORDS, dtype=np.uint64)
        perm = np.arange(k)
        draws = np.empty(d, dtype=np.int64)
        row = rows[c]
        lo, hi = _chunk(n, nchunks, c)
        for i in range(lo, hi):
            _subset_of_seed(seeds[i], rk, buf, perm, draws, k, d)
            for t in range(d):
                row[perm[t]] += 1
            _undo(perm, draws, d)
    return sum_rows(rows)


@kernel(parallel=True)
def subset_hits(seeds, xs, k, d, nchunks):
    """[xs[i] in the d-subset decoded from seed i]: bool (n,)."""
    n = seeds.shape[0]
    out = np.empty(n, dtype=np.bool_)
    for c in prange(nchunks):
        rk = np.empty(22, dtype=np.uint64)
        buf = np.empty(GROUP_WORDS, dtype=np.uint64)
        perm = np.arange(k)
        draws = np.empty(d, dtype=np.int64)
        lo, hi = _chunk(n, nchunks, c)
        for i in range(lo, hi):
            _subset_of_seed(seeds[i], rk, buf, perm, draws, k, d)
            hit = False
            for t in range(d):
                hit |= perm[t] == xs[i]
            out[i] = hit
            _undo(perm, draws, d)
    return out


@kernel
def sphere_words(d):
    """Words a sphere point of dimension d reads: two per Box-Muller pair."""
    return 2 * ((d + 1) // 2)


@kernel
def dot(a, b):
    """sum_i a_i b_i, in index order (the same rounding everywhere it is used)."""
    s = 0.0
    for i in range(a.size):
        s += a[i] * b[i]
    return s


@kernel
def sphere_from_words(words, out):
    """The unit vector out (dimension d) from sphere_words(d) stream words: Gaussians by
    Box-Muller on consecutive uniform pairs, divided by their Euclidean norm; e_0 when that
    norm is 0 (a hostile seed must not stop the server with a division by zero)."""
    d = out.size
    for p in range((d + 1) // 2):
        u1 = np.float64(words[2 * p] >> np.uint64(11)) * UNIFORM_SCALE
        u2 = np.float64(words[2 * p + 1] >> np.uint64(11)) * UNIFORM_SCALE
        r = math.sqrt(-2.0 * math.log1p(-u1))
        t = 2.0 * math.pi * u2
        out[2 * p] = r * math.cos(t)
        if 2 * p + 1 < d:
            out[2 * p + 1] = r * math.sin(t)
    norm = math.sqrt(dot(out, out))
    if norm == 0.0:  # every u1 = 0: probability 2^-53 in d = 2, yet a seed one could search for
        out[:] = 0.0
        out[0] = 1.0
        return
    for j in range(d):
        out[j] /= norm


@kernel
def _sphere_of_seed(seed, rk, words, v):
    expand_key(seed, rk, AES_NI)
    read_words(rk, 0, words, AES_NI)
    sphere_from_words(words, v)


@kernel(parallel=True)
def sphere_rows(seeds, d, divisor, nchunks):
    """The decoded sphere points divided by ``divisor``: float64 (n, d)."""
    n = seeds.shape[0]
    out = np.empty((n, d))
    for c in prange(nchunks):
        rk = np.empty(22, dtype=np.uint64)
        words = np.empty(sphere_words(d), dtype=np.uint64)
        lo, hi = _chunk(n, nchunks, c)
        for i in range(lo, hi):
            _sphere_of_seed(seeds[i], rk, words, out[i])
            for j in range(d):
                out[i, j] /= divisor
    return out


@kernel(parallel=True)
def sphere_sum(seeds, d, divisor, nchunks):
    """sum_i v(seed_i) / divisor over the decoded sphere points (each divided before the sum,
    as the rows of :func:`sphere_rows`): float64[d]."""
    n = seeds.shape[0]
    rows = np.zeros((nchunks, d))
    for c in prange(nchunks):
        rk = np.empty(22, dtype=np.uint64)
        words = np.empty(sphere_words(d), dtype=np.uint64)
        v = np.empty(d)
        lo, hi = _chunk(n, nchunks, c)
        for i in range(lo, hi):
            _sphere_of_seed(seeds[i], rk, words, v)
            for j in range(d):
                rows[c, j] += v[j] / divisor
    out = np.zeros(d)
    for c in range(nchunks):
        out += rows[c]
    return out


@kernel(parallel=True)
def sphere_dots(seeds, us, nchunks):
    """<v(seed_i), us[i]> (index-order sums, as :func:`dot`): float64 (n,)."""
    n, d = us.shape
    out = np.empty(n)
    for c in prange(nchunks):
        rk = np.empty(22, dtype=np.uint64)
        words = np.empty(sphere_words(d), dtype=np.uint64)
        v = np.empty(d)
        lo, hi = _chunk(n, nchunks, c)
        for i in range(lo, hi):
            _sphere_of_seed(seeds[i], rk, words, v)
            out[i] = dot(v, us[i])
    return out
