"""The AES-CTR pseudo-random generator of compressed reports (docs/theory.md §5.1).

G(seed) = AES-128-CTR keyed by the 16-byte seed, nonce 8 zero bytes, 64-bit big-endian block
counter from 0, encrypting zeros. Words are little-endian uint64; uniform doubles are
(w >> 11) 2^-53; integers in [0, m) come from rejection on whole words (no modulo bias);
Gaussians are Box-Muller on consecutive pairs of uniforms (u1 -> 1 - u1 in (0, 1]); sphere
points are normalised Gaussian vectors. Every stream is a deterministic function of the seed.

The classes below draw single streams through pycryptodome (constant-time AES-NI where the
processor has it): the client's path. ``stream_words`` and ``stream_words_at`` expand many
public seeds at once in a Numba kernel (``kernels.aes``: AES-NI when the compilation target has
it, else T-tables that leak the key through cache timing): for the server, where a seed is
public once sent, and for simulations, never for a client's own seeds.
"""
from __future__ import annotations

import math

import numpy as np
from Crypto.Cipher import AES

from .lazy import lazy_module
from .limits import array_bytes, check_bytes

_aes = lazy_module("ldpcompress.kernels.aes")  # Numba: compiled at first use

__all__ = ["SEED_BYTES", "UNIFORM_BITS", "MAX_WORD", "check_seed", "check_seed_rows", "keystream",
           "word_at", "uniform_at", "coin_threshold", "uniform_limit", "stream_words", "stream_words_at", "WordStream", "PRG"]


SEED_BYTES = 16
UNIFORM_BITS = 53  # uniforms are (w >> 11) 2^-53: the top 53 bits of a word
_UNIFORM_SCALE = 2.0 ** -UNIFORM_BITS


def check_seed(seed) -> bytes:
    """The seed as bytes, exactly 16 of them."""
    if not isinstance(seed, (bytes, bytearray, memoryview)):
        raise TypeError(f"seed must be bytes, got {type(seed).__name__}")
    seed = bytes(seed)
    if len(seed) != SEED_BYTES:
        raise ValueError(f"seed must be {SEED_BYTES} bytes, got {len(seed)}")
    return seed


def keystream(seed: bytes, nbytes: int, offset_blocks: int = 0) -> bytes:
    """nbytes of the AES-CTR keystream of seed, starting at 16-byte block offset_blocks."""
    cipher = AES.new(check_seed(seed), AES.MODE_CTR, nonce=bytes(8), initial_value=offset_blocks)
    return cipher.encrypt(bytes(nbytes))


def word_at(seed: bytes, index: int) -> int:
    """The uint64 word number ``index`` of the stream, without generating the ones before it."""
    block, half = divmod(int(index), 2)
    chunk = keystream(seed, 16, block)
    return int.from_bytes(chunk[8 * half: 8 * half + 8], "little")


def uniform_at(seed: bytes, index: int) -> float:
    """The uniform double number ``index`` of the stream (random access)."""
    return (word_at(seed, index) >> 11) * _UNIFORM_SCALE


def coin_threshold(p: float) -> int:
    """c = ceil(p 2^53): ``uniform() < p`` holds iff j < c for the uniform's integer j in
    [0, 2^53), so the realised probability is c / 2^53 (p 2^53 is exact in floating point)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    return math.ceil(p * 2.0 ** UNIFORM_BITS)


def uniform_limit(p: float) -> np.uint64:
    """The word bound of a uniform comparison: [(w >> 11) 2^-53 < p] = [w < limit] for every
    uint64 word w, with limit = ceil(p 2^53) 2^11 (``coin_threshold``: an integer m is
    below a real t iff m < ceil(t)). p in [0, 1), so limit <= (2^53 - 1) 2^11 < 2^64."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"p must be in [0, 1), got {p!r}")
    return np.uint64(coin_threshold(p) << 11)


MAX_WORD = 2 ** 63 - 1  # word indices of a stream stay int64 in the kernels


def check_seed_rows(seeds) -> np.ndarray:
    """Seeds as a C-contiguous uint8 array of shape (n, 16) (ValueError otherwise)."""
    if not isinstance(seeds, np.ndarray) or seeds.dtype != np.uint8 or seeds.ndim != 2 \
            or seeds.shape[1] != SEED_BYTES:
        raise ValueError(f"seeds must be a (n, {SEED_BYTES}) uint8 array, got "
                         f"{getattr(seeds, 'dtype', type(seeds).__name__)} of shape "
                         f"{getattr(seeds, 'shape', None)}")
    return np.ascontiguousarray(seeds)


def _word_index(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or not 0 <= value <= MAX_WORD:
        raise ValueError(f"{name} must be an integer in [0, 2^63 - 1], got {value!r}")
    return int(value)


def stream_words(seeds: np.ndarray, first: int, count: int) -> np.ndarray:
    """Words first .. first + count - 1 of the stream of every seed (public seeds only: see the
    module docstring): uint64 (n, count) from (n, 16) uint8 seeds."""
    seeds = check_seed_rows(seeds)
    first, count = _word_index(first, "first"), _word_index(count, "count")
    if first + count > MAX_WORD:
        raise ValueError(f"words first .. first + count - 1 must stay below 2^63, got first = "
                         f"{first}, count = {count}")
    check_bytes(array_bytes((seeds.shape[0], count), np.uint64),
                f"{count} words of {seeds.shape[0]} streams", "count or the number of seeds")
    return _aes.keystream_words(seeds, first, count)


def stream_words_at(seeds: np.ndarray, index) -> np.ndarray:
    """Word index[i] of the stream of seed i, one AES block each (public seeds only)."""
    seeds = check_seed_rows(seeds)
    index = np.asarray(index)
    if index.shape != (seeds.shape[0],) or not np.issubdtype(index.dtype, np.integer):
        raise ValueError(f"index must be {seeds.shape[0]} integers (one per seed), got "
                         f"{index.dtype} of shape {index.shape}")
    if index.size and (index.min() < 0 or index.max() > MAX_WORD):
        raise ValueError(f"index must be in [0, 2^63 - 1], got values in [{index.min()}, "
                         f"{index.max()}]")
    return _aes.words_at(seeds, index.astype(np.int64))


class WordStream:
    """Uniforms, bounded integers, Gaussians and sphere points derived from ``words(count)``
    (little-endian uint64 words), as §5.1 fixes them; subclasses supply the words."""

    def words(self, count: int) -> np.ndarray:
        raise NotImplementedError

    def uniform(self, count: int) -> np.ndarray:
        """Uniform doubles in [0, 1) with 53 random bits."""
        return (self.words(count) >> np.uint64(11)).astype(np.float64) * _UNIFORM_SCALE

    def integers(self, m: int, count: int) -> np.ndarray:
        """Uniform integers in [0, m): words at or above the largest multiple of m are rejected."""
        if m < 1:
            raise ValueError(f"m must be >= 1, got {m}")
        limit = np.uint64((2 ** 64 // m) * m - 1)
        out = np.empty(count, dtype=np.int64)
        filled = 0
        while filled < count:
            w = self.words(count - filled)
            w = w[w <= limit]
            take = w[: count - filled]
            out[filled: filled + take.size] = (take % np.uint64(m)).astype(np.int64)
            filled += take.size
        return out

    def normal(self, count: int) -> np.ndarray:
        """Standard Gaussians by Box-Muller on pairs (u1, u2): sqrt(-2 log(1-u1)) cos/sin(2 pi u2)."""
        pairs = (count + 1) // 2
        u = self.uniform(2 * pairs)
        r = np.sqrt(-2.0 * np.log1p(-u[0::2]))
        t = 2.0 * math.pi * u[1::2]
        out = np.empty(2 * pairs)
        out[0::2] = r * np.cos(t)
        out[1::2] = r * np.sin(t)
        return out[:count]

    def sphere(self, d: int) -> np.ndarray:
        """A uniform point of the unit sphere S^(d-1)."""
        g = self.normal(d)
        return g / np.linalg.norm(g)


class PRG(WordStream):
    """A sequential stream of words from G(seed); each draw continues where the last stopped."""

    def __init__(self, seed: bytes):
        self._cipher = AES.new(check_seed(seed), AES.MODE_CTR, nonce=bytes(8), initial_value=0)

    def words(self, count: int) -> np.ndarray:
        return np.frombuffer(self._cipher.encrypt(bytes(8 * count)), dtype="<u8")
