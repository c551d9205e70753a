"""The batch AES-128-CTR kernels of compressed reports (kernels/aes.py, docs/theory.md §5.1)
against pycryptodome and FIPS-197, bit for bit, for both implementations."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from Crypto.Cipher import AES

from numba import njit
from numba.core.codegen import get_host_cpu_features

from ldpcompress.core.prg import PRG, stream_words, stream_words_at, uniform_limit
from ldpcompress.kernels import aes as K

IMPLEMENTATIONS = [pytest.param(False, id="tables"),
                   pytest.param(True, id="aes-ni", marks=pytest.mark.skipif(
                       not K.AES_NI, reason="the compilation target has no AES instructions"))]


@njit
def words_with(seeds, first, count, ni):
    """The batch kernels' stream reader with the implementation chosen by ``ni``."""
    out = np.empty((seeds.shape[0], count), dtype=np.uint64)
    rk = np.empty(22, dtype=np.uint64)
    for i in range(seeds.shape[0]):
        K.expand_key(seeds[i], rk, ni)
        K.read_words(rk, first, out[i], ni)
    return out


@njit
def words_at_with(seeds, index, ni):
    out = np.empty(seeds.shape[0], dtype=np.uint64)
    rk = np.empty(22, dtype=np.uint64)
    for i in range(seeds.shape[0]):
        K.expand_key(seeds[i], rk, ni)
        lo, hi = K.encrypt_counter(rk, index[i] >> 1, ni)
        out[i] = hi if index[i] & 1 else lo
    return out


def reference_words(seed: bytes, first: int, count: int) -> np.ndarray:
    """Words first .. first + count - 1 of pycryptodome's CTR stream (nonce 8 zero bytes,
    64-bit big-endian counter)."""
    block, skip = divmod(first, 2)
    cipher = AES.new(seed, AES.MODE_CTR, nonce=bytes(8), initial_value=block)
    return np.frombuffer(cipher.encrypt(bytes(8 * (count + skip))), dtype="<u8")[skip:]


def test_sbox_and_known_answers():
    # FIPS-197 Fig. 7 entries, and the S-box is a permutation
    assert (K.SBOX[0x00], K.SBOX[0x01], K.SBOX[0x53], K.SBOX[0xFF]) == (0x63, 0x7C, 0xED, 0x16)
    assert sorted(K.SBOX.tolist()) == list(range(256))
    # FIPS-197 Appendix C.1 (key 00..0f, plaintext 00112233..ff), table implementation
    rk = np.empty(22, dtype=np.uint64)
    K.expand_key(np.arange(16, dtype=np.uint8), rk, False)
    plain = np.frombuffer(bytes.fromhex("00112233445566778899aabbccddeeff"), dtype="<u8")
    out = K._soft_encrypt(rk, plain[0], plain[1])
    assert np.array(out, dtype="<u8").tobytes().hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"


@pytest.mark.parametrize("ni", IMPLEMENTATIONS)
def test_key_schedule_and_counter_block_known_answers(ni):
    rk = np.empty(22, dtype=np.uint64)
    # FIPS-197 Appendix A.1: the last round key of 2b7e1516 28aed2a6 abf71588 09cf4f3c
    K.expand_key(np.frombuffer(bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"),
                               dtype=np.uint8), rk, ni)
    assert rk[20:22].tobytes().hex() == "d014f9a8c9ee2589e13f0cc8b6630ca6"
    # AES-128 of the zero block under the zero key: counter block 0 of the zero seed
    K.expand_key(np.zeros(16, dtype=np.uint8), rk, ni)
    out = K.encrypt_counter(rk, 0, ni)
    assert np.array(out, dtype="<u8").tobytes().hex() == "66e94bd4ef8a2c3b884cfa59ca342b2e"


@pytest.mark.parametrize("ni", IMPLEMENTATIONS)
def test_keystream_matches_pycryptodome_on_random_seeds_and_offsets(ni):
    rng = np.random.default_rng(20240521)
    seeds = rng.integers(0, 256, (4000, 16), dtype=np.uint8)
    seeds[0] = 0
    seeds[1] = 255
    # offsets: the start, odd words, group boundaries, far into the stream (2^40, 2^62 words)
    for first, count in ((0, 1), (0, 8), (1, 7), (5, 19), (7, 2), (8, 9), (2 ** 40 + 3, 11),
                         (2 ** 62 - 6, 6)):
        got = words_with(seeds, first, count, ni)
        for i in range(0, seeds.shape[0], 1 if count == 1 else 13):
            assert np.array_equal(got[i], reference_words(seeds[i].tobytes(), first, count)), \
                (i, first, count)
    index = rng.integers(0, 2 ** 63 - 1, seeds.shape[0], dtype=np.int64)
    index[:8] = np.arange(8)
    got = words_at_with(seeds, index, ni)
    want = [reference_words(s.tobytes(), int(j), 1)[0] for s, j in zip(seeds, index)]
    assert np.array_equal(got, np.array(want, dtype=np.uint64))


def test_the_batch_kernels_and_the_public_wrappers():
    rng = np.random.default_rng(5)
    seeds = rng.integers(0, 256, (2000, 16), dtype=np.uint8)
    soft = words_with(seeds, 3, 40, False)
    assert np.array_equal(K.keystream_words(seeds, 3, 40), soft)
    assert np.array_equal(stream_words(seeds, 3, 40), soft)
    assert np.array_equal(stream_words_at(seeds, np.full(2000, 7)), soft[:, 4])
    assert np.array_equal(PRG(seeds[9].tobytes()).words(43)[3:], soft[9])


NO_AES = """
import numpy as np
from Crypto.Cipher import AES
from ldpcompress.kernels import aes, seeds as S
assert not aes.AES_NI
rng = np.random.default_rng(1)
seeds = rng.integers(0, 256, (300, 16), dtype=np.uint8)
words = aes.keystream_words(seeds, 5, 30)
for i, s in enumerate(seeds):
    ref = np.frombuffer(AES.new(s.tobytes(), AES.MODE_CTR, nonce=bytes(8), initial_value=2)
                        .encrypt(bytes(8 * 31)), dtype="<u8")[1:]
    assert np.array_equal(words[i], ref)
limit = np.uint64(1 << 62)
bits = np.array([np.frombuffer(AES.new(s.tobytes(), AES.MODE_CTR, nonce=bytes(8))
                               .encrypt(bytes(8 * 35)), dtype="<u8") < limit for s in seeds])
assert np.array_equal(S.unary_counts(seeds, 35, limit, 3), bits.sum(axis=0))
print("tables")
"""


@pytest.mark.slow
@pytest.mark.skipif(not K.AES_NI, reason="already the table implementation")
def test_a_target_without_aes_instructions_compiles_the_tables(tmp_path):
    """As on a processor without AES-NI: NUMBA_CPU_FEATURES without +aes, a fresh cache."""
    features = ",".join(f for f in str(get_host_cpu_features()).split(",") if f != "+aes")
    env = dict(os.environ, NUMBA_CPU_FEATURES=features, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", NO_AES], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "tables"


def test_uniform_limit_is_the_exact_comparison():
    rng = np.random.default_rng(3)
    words = rng.integers(0, 2 ** 64, 200_000, dtype=np.uint64, endpoint=False)
    for p in (0.0, 2.0 ** -60, 1e-300, 1 / (math.e ** 2 + 1), 0.5, 0.3, 1 - 2.0 ** -53):
        limit = uniform_limit(p)
        # the words on either side of the bound, and random ones
        edge = np.array([max(int(limit) - 1, 0), int(limit), min(int(limit) + 1, 2 ** 64 - 1)],
                        dtype=np.uint64)
        for w in (words, edge):
            u = (w >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
            assert np.array_equal(u < p, w < limit), p
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ValueError, match="p must be in"):
            uniform_limit(bad)


def test_aes_ni_target_follows_numba_features():
    code = ("from ldpcompress.kernels import aes; print(aes.aes_ni_target())")
    env = dict(os.environ, NUMBA_CPU_FEATURES="+64bit,+sse2")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "False"


@pytest.mark.parametrize("call, words", [
    (lambda s: stream_words(s[:, :15], 0, 1),
     r"seeds must be a \(n, 16\) uint8 array, got uint8 of shape \(4, 15\)"),
    (lambda s: stream_words(s.astype(np.int64), 0, 1),
     r"seeds must be a \(n, 16\) uint8 array, got int64"),
    (lambda s: stream_words([bytes(16)], 0, 1), r"seeds must be a \(n, 16\) uint8 array, got list"),
    (lambda s: stream_words(s, -1, 2), r"first must be an integer in \[0, 2\^63 - 1\], got -1"),
    (lambda s: stream_words(s, 0, -2), r"count must be an integer in \[0, 2\^63 - 1\], got -2"),
    (lambda s: stream_words(s, 2 ** 63 - 2, 5),
     r"first \.\. first \+ count - 1 must stay below 2\^63"),
    (lambda s: stream_words(s, 1.5, 2), r"first must be an integer in \[0, 2\^63 - 1\], got 1\.5"),
    (lambda s: stream_words(s, True, 2), r"first must be an integer in \[0, 2\^63 - 1\], got True"),
    (lambda s: stream_words(s, 0, 10 ** 15), r"above the limit of 4\.0 GiB: reduce count"),
    (lambda s: stream_words_at(s, np.arange(3)),
     r"index must be 4 integers \(one per seed\), got int64 of shape \(3,\)"),
    (lambda s: stream_words_at(s, np.full(4, -1)),
     r"index must be in \[0, 2\^63 - 1\], got values in \[-1, -1\]"),
    (lambda s: stream_words_at(s, np.full(4, 0.5)),
     r"index must be 4 integers \(one per seed\), got float64"),
    (lambda s: stream_words_at(s, np.full(4, 2 ** 64 - 1, dtype=np.uint64)),
     r"index must be in \[0, 2\^63 - 1\], got values in \[18446744073709551615"),
])
def test_public_stream_wrappers_validate(call, words):
    seeds = np.zeros((4, 16), dtype=np.uint8)
    with pytest.raises(ValueError, match=words):
        call(seeds)
