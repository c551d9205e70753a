"""Client coins in bulk, exactly, from a cryptographic word stream (docs/theory.md §6,
"Unary-encoding clients in bulk").

The unary-encoding clients (RAPPOR, OUE, subset selection) need ~1e8 coins for 1e5 users at
k = 1000. Drawing a 53-bit uniform per coin from os.urandom costs seconds; here each coin reads
few stream bits, from ``client_stream(entropy)``: ``Entropy.expand()`` (AES-128-CTR keyed by 16
fresh bytes of the entropy source: ~GB/s with AES-NI), or the source itself on a CPU without
constant-time AES:

* ``bernoulli_bits``: iid bits with Pr[1] = ceil(p 2^53) / 2^53 -- exactly the coin
  ``uniform() < p`` of ``WordStream.uniform`` (structure.coin) -- from one byte per bit plus a
  45-bit tail for the 1/256 of bits the byte leaves undecided;
* ``uniform_subsets``: exactly uniform subsets by Floyd's algorithm on Lemire's exact bounded
  integers (one 32-bit word per draw, rejection probability below k / 2^32).

Temporaries are bounded (``CHUNK_BYTES`` of stream at a time); only the output grows with n.
"""
from __future__ import annotations

import numpy as np

from .chunks import spans
from .lazy import lazy_module
from .prg import WordStream, coin_threshold

_kernels = lazy_module("ldpcompress.kernels.coins")  # Numba: compiled at first use

__all__ = ["CHUNK_BYTES", "TAIL_BITS", "HARDWARE_AES_ATTRIBUTES", "HARDWARE_AES", "client_stream", "coin_threshold",
           "bernoulli_bits", "uniform_subsets"]


CHUNK_BYTES = 1 << 18  # stream bytes per kernel call (cache-resident), and the tie buffer's slots
TAIL_BITS = 45         # 53-bit uniform = 8 bits of one byte, then 45 bits of a word's top


# where pycryptodome keeps the hardware AES library its AES.new uses (None without one):
# 4.x "_raw_aes_hw" (AES-NI or the ARMv8 crypto extensions), 3.x "_raw_aesni_lib" (AES-NI,
# loaded when Crypto.Util._cpu_features.have_aes_ni())
HARDWARE_AES_ATTRIBUTES = ("_raw_aes_hw", "_raw_aesni_lib")


def _hardware_aes() -> bool:
    """Whether pycryptodome runs AES on the CPU's AES instructions: constant time. Its fallback
    is a table-based AES whose cache timing can leak the key. Read from the library its
    ``AES.new`` uses (``HARDWARE_AES_ATTRIBUTES``, every version the dependency range allows);
    an unknown layout counts as no (the safe side: coins from the source)."""
    from Crypto.Cipher import AES
    return any(getattr(AES, name, None) is not None for name in HARDWARE_AES_ATTRIBUTES)


HARDWARE_AES = _hardware_aes()


def client_stream(entropy) -> WordStream:
    """The stream a client draws its bulk coins from: ``entropy.expand()``, a fresh AES-CTR
    stream keyed by 16 bytes of the entropy source, when AES runs in constant time (or the
    source is a seeded simulation one, reproducible on any machine); otherwise the source
    itself (os.urandom, one byte per coin: slower, but no key for a cache-timing attack to
    recover). ``entropy`` must be an ``Entropy`` (SYSTEM, or a seeded simulation source)."""
    expand = getattr(entropy, "expand", None)
    if not callable(expand):
        raise TypeError(f"entropy must be an ldpcompress Entropy (SYSTEM, or "
                        f"Entropy.seeded_for_simulation(seed) for simulations), got "
                        f"{type(entropy).__name__}")
    if HARDWARE_AES or getattr(entropy, "for_simulation", False):
        return expand()
    return entropy


def bernoulli_bits(stream: WordStream, count: int, p: float) -> np.ndarray:
    """``count`` iid bits with Pr[1] = coin_threshold(p) / 2^53, as a bool array.

    Bit i is [j_i < c] for j_i = (B_i << 45) | T_i uniform in [0, 2^53), B_i a uniform byte and
    T_i the top 45 bits of a uniform word: B_i < c >> 45 gives 1, B_i > c >> 45 gives 0, and
    only on B_i == c >> 45 is T_i drawn and compared with c mod 2^45 -- the same coin as
    ``stream.uniform() < p``, reading ~8.2 bits instead of 64. Bytes come CHUNK_BYTES at a
    time; each chunk's undecided bits draw their tails, in order, right after the chunk."""
    c = coin_threshold(p)
    hi, lo = c >> TAIL_BITS, c & ((1 << TAIL_BITS) - 1)
    out = np.empty(count, dtype=np.bool_)
    ties = np.empty(min(count, CHUNK_BYTES), dtype=np.int32)
    for span in spans(count, CHUNK_BYTES):
        size = span.stop - span.start
        raw = stream.words((size + 7) // 8).view(np.uint8)[:size]
        block = out[span]
        t = _kernels.bytes_below(raw, hi, block, ties)
        if t:
            tails = stream.words(t) >> np.uint64(64 - TAIL_BITS)
            block[ties[:t]] = tails < np.uint64(lo)
    return out


def uniform_subsets(stream: WordStream, xs: np.ndarray, k: int, d: int, include: np.ndarray,
                    scan: bool | None = None) -> np.ndarray:
    """Rows of d distinct items of [k] in increasing order, int64 (n x d): row r is xs[r]
    together with a uniform (d-1)-subset of the other k - 1 items if include[r], else a uniform
    d-subset of the other items (Floyd's algorithm, kernels.coins.floyd_subsets).

    xs must be int64 items in [0, k) and 1 <= d <= k - 1 (the caller validates). ``scan``
    picks how rows are ordered: a pass over a k-slot mark table (O(k) per row, the default when
    k <= 8 d) or numpy's sort with a hash set of O(d) slots (O(d log d)); the law is the same."""
    n = xs.size
    if scan is None:
        scan = k <= 8 * d
    out = np.empty((n, d), dtype=np.int64)
    taken = np.zeros(k, dtype=np.uint8) if scan else \
        np.zeros(1 << (2 * d - 1).bit_length(), dtype=np.int64)
    state = np.zeros(2, dtype=np.int64)
    include = np.ascontiguousarray(include, dtype=np.bool_)
    chunk_words = CHUNK_BYTES // 4
    while state[0] < n:
        draws_left = (n - int(state[0])) * d - int(state[1])
        want = min(chunk_words, draws_left + 16)  # rejections are rare: < k / 2^32 per draw
        words = stream.words((want + 1) // 2).view("<u4")
        _kernels.floyd_subsets(words, state, xs, include, k, d, taken, out, scan)
    if not scan:
        out.sort(axis=1)
    return out
