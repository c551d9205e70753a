"""AES-128 in CTR mode for many keys at once: the keystream of compressed reports (FT21;
docs/theory.md §5.1).

G(seed) = AES-128-CTR keyed by the 16-byte seed, nonce 8 zero bytes, 64-bit big-endian block
counter from 0 (FIPS-197; NIST SP 800-38A). Block ``b`` of the stream gives the little-endian
uint64 words ``2b`` and ``2b + 1``. A 128-bit value is kept as two uint64 halves (lo = bytes
0-7, hi = bytes 8-15, little-endian), the layout of an x86 XMM register loaded from memory.

Two implementations of one block encryption, chosen by the flag ``ni`` of the block functions:

* AES-NI (the ``aesenc`` / ``aesenclast`` instructions, emitted through LLVM intrinsics; four
  counter blocks at a time so the processor overlaps them): constant-time, several GB/s per
  core; used when the compilation target has the x86 ``aes`` feature (:func:`aes_ni_target`).
* A table implementation (the four 1 KiB T-tables of Daemen and Rijmen's AES proposal: SubBytes,
  ShiftRows and MixColumns in four lookups per column; tables computed here from GF(2^8)). Its
  memory accesses depend on the key, so it leaks the key through cache timing: it serves only
  public seeds (the server: a seed is public once sent) and simulations, never a client's
  rejected seeds.

The batch kernels pass the constant :data:`AES_NI` (fixed when they compile, so the other branch
is compiled away; Numba's cache is keyed by the target's CPU features) to :func:`expand_key`,
:func:`encrypt_counter`, :func:`encrypt_group` and :func:`read_words`; the seeds are a uint8
array of shape (n, 16) validated by the caller.
"""
import platform

import numpy as np
from llvmlite import ir
from numba import config, prange, types
from numba.core import cgutils
from numba.core.codegen import get_host_cpu_features
from numba.extending import intrinsic

from .decorator import kernel

__all__ = ["SBOX", "aes_ni_target", "AES_NI", "GROUP_BLOCKS", "GROUP_WORDS", "expand_key",
           "encrypt_counter", "encrypt_group", "read_words", "keystream_words", "words_at"]


def _gf_mul(a: int, b: int) -> int:
    """a b in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1 (FIPS-197 §4.2)."""
    out = 0
    while b:
        if b & 1:
            out ^= a
        a = ((a << 1) ^ 0x11B) if a & 0x80 else a << 1
        b >>= 1
    return out


def _sbox() -> np.ndarray:
    """S(a) = affine(a^-1) (FIPS-197 §5.1.1): bit i of S is b_i ^ b_{i+4} ^ b_{i+5} ^ b_{i+6}
    ^ b_{i+7} ^ c_i with c = 0x63 and b = a^-1 (0^-1 = 0); inverses from the powers of the
    generator 3 (a^-1 = 3^(255 - log_3 a))."""
    power, log = [0] * 255, [0] * 256
    x = 1
    for e in range(255):
        power[e], log[x] = x, e
        x = _gf_mul(x, 3)
    out = np.empty(256, dtype=np.uint8)
    for a in range(256):
        b = power[(255 - log[a]) % 255] if a else 0
        s = 0x63
        for i in range(8):
            bit = (b >> i) ^ (b >> ((i + 4) % 8)) ^ (b >> ((i + 5) % 8)) \
                ^ (b >> ((i + 6) % 8)) ^ (b >> ((i + 7) % 8))
            s ^= (bit & 1) << i
        out[a] = s
    return out


SBOX = _sbox()
# T0[a]: the MixColumns column (2s, s, s, 3s) of s = S(a), bytes packed little-endian (row r
# in bits 8r..8r+7); T_r[a] = T0[a] rotated left by 8r bits (the byte entering from row r).
_T0 = np.array([_gf_mul(s, 2) | (s << 8) | (s << 16) | (_gf_mul(s, 3) << 24)
                for s in SBOX.tolist()], dtype=np.uint32)
_T64 = _T0.astype(np.uint64)
TTAB = np.stack([((_T64 << np.uint64(8 * r)) | (_T64 >> np.uint64(32 - 8 * r))).astype(np.uint32)
                 for r in range(4)])
SBOX32 = SBOX.astype(np.uint32)
RCON = np.array([0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1B, 0x36], dtype=np.uint32)


def aes_ni_target() -> bool:
    """Whether Numba compiles for an x86-64 target with the AES instructions (the features
    Numba itself uses: NUMBA_CPU_FEATURES when set, else the host's). Off under
    NUMBA_DISABLE_JIT (the intrinsics exist only in compiled code)."""
    if config.DISABLE_JIT or platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    features = config.CPU_FEATURES if config.CPU_FEATURES is not None \
        else get_host_cpu_features()
    return "+aes" in str(features).split(",")


AES_NI = aes_ni_target()
GROUP_BLOCKS = 4               # blocks encrypted together (4 chains fill the AES unit)
GROUP_WORDS = 2 * GROUP_BLOCKS  # keystream words of one group

_I64 = ir.IntType(64)
_V2 = ir.VectorType(_I64, 2)


def _vector(builder, lo, hi):
    v = builder.insert_element(ir.Constant(_V2, None), lo, ir.Constant(ir.IntType(32), 0))
    return builder.insert_element(v, hi, ir.Constant(ir.IntType(32), 1))


def _pair(context, builder, sig, v):
    lo = builder.extract_element(v, ir.Constant(ir.IntType(32), 0))
    hi = builder.extract_element(v, ir.Constant(ir.IntType(32), 1))
    return context.make_tuple(builder, sig.return_type, [lo, hi])


def _round_function(builder, name):
    fnty = ir.FunctionType(_V2, [_V2, _V2])
    return cgutils.get_or_insert_function(builder.module, fnty, f"llvm.x86.aesni.{name}")


@intrinsic
def _ni_sub_bytes(typingctx, lo, hi):
    """SubBytes(ShiftRows(state)) by ``aesenclast`` with a zero round key (constant time)."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        if not AES_NI:  # never called: the callers test AES_NI first
            return _pair(context, builder, signature, ir.Constant(_V2, None))
        out = builder.call(_round_function(builder, "aesenclast"),
                           [_vector(builder, *args), ir.Constant(_V2, None)])
        return _pair(context, builder, signature, out)
    return sig, codegen


def _ni_encrypt_blocks(count):
    """An intrinsic (rk, block) -> 2 count uint64: the 10 rounds of AES-128 (whitening, 9
    ``aesenc``, one ``aesenclast``) on the counter blocks block .. block + count - 1 at once
    (independent chains the processor overlaps), with the round keys rk (uint64[22], round r in
    rk[2r], rk[2r + 1])."""
    @intrinsic
    def encrypt(typingctx, rk, block):
        sig = types.UniTuple(types.uint64, 2 * count)(rk, types.uint64)

        def codegen(context, builder, signature, args):
            if not AES_NI:  # never called: the callers test AES_NI first
                zero = ir.Constant(_I64, 0)
                return context.make_tuple(builder, signature.return_type, [zero] * (2 * count))
            keys = context.make_array(signature.args[0])(context, builder, args[0])
            base = builder.bitcast(keys.data, _V2.as_pointer())
            rks = [builder.load(builder.gep(base, [ir.Constant(ir.IntType(32), r)]), align=8)
                   for r in range(11)]
            bswap = builder.module.declare_intrinsic("llvm.bswap", [_I64])
            states = []
            for j in range(count):  # nonce 0 || counter big-endian
                ctr = builder.call(bswap, [builder.add(args[1], ir.Constant(_I64, j))])
                states.append(builder.xor(_vector(builder, ir.Constant(_I64, 0), ctr), rks[0]))
            enc = _round_function(builder, "aesenc")
            for r in range(1, 10):
                states = [builder.call(enc, [s, rks[r]]) for s in states]
            last = _round_function(builder, "aesenclast")
            states = [builder.call(last, [s, rks[10]]) for s in states]
            words = []
            for s in states:
                words += [builder.extract_element(s, ir.Constant(ir.IntType(32), h))
                          for h in (0, 1)]
            return context.make_tuple(builder, signature.return_type, words)
        return sig, codegen
    return encrypt


_ni_encrypt1 = _ni_encrypt_blocks(1)
_ni_encrypt4 = _ni_encrypt_blocks(GROUP_BLOCKS)


@kernel
def _sub_word(w, ni):
    """S-box applied to each byte of the uint32 w."""
    if ni:
        b = np.uint64(w) | (np.uint64(w) << np.uint64(32))  # four equal columns: ShiftRows is
        out = _ni_sub_bytes(b, b)[0]                       # the identity on them
        return np.uint32(out & np.uint64(0xFFFFFFFF))
    return (SBOX32[w & 255] | (SBOX32[(w >> 8) & 255] << 8) | (SBOX32[(w >> 16) & 255] << 16)
            | (SBOX32[(w >> 24) & 255] << 24))


@kernel
def expand_key(seed, rk, ni):
    """The 11 round keys of AES-128 (FIPS-197 §5.2) of the 16 key bytes ``seed`` into rk
    (uint64[22]): w_i = w_{i-4} ^ SubWord(RotWord(w_{i-1})) ^ Rcon for i = 0 mod 4, else
    w_{i-4} ^ w_{i-1}, words little-endian (RotWord = rotate right by 8 bits)."""
    w = np.empty(4, dtype=np.uint32)
    for c in range(4):
        w[c] = (np.uint32(seed[4 * c]) | (np.uint32(seed[4 * c + 1]) << 8)
                | (np.uint32(seed[4 * c + 2]) << 16) | (np.uint32(seed[4 * c + 3]) << 24))
    rk[0] = np.uint64(w[0]) | (np.uint64(w[1]) << np.uint64(32))
    rk[1] = np.uint64(w[2]) | (np.uint64(w[3]) << np.uint64(32))
    for r in range(10):
        t = _sub_word(w[3], ni)
        t = ((t >> 8) | (t << 24)) ^ RCON[r]
        w[0] ^= t
        w[1] ^= w[0]
        w[2] ^= w[1]
        w[3] ^= w[2]
        rk[2 * r + 2] = np.uint64(w[0]) | (np.uint64(w[1]) << np.uint64(32))
        rk[2 * r + 3] = np.uint64(w[2]) | (np.uint64(w[3]) << np.uint64(32))


@kernel
def _bswap64(x):
    out = np.uint64(0)
    for _ in range(8):
        out = (out << np.uint64(8)) | (x & np.uint64(255))
        x >>= np.uint64(8)
    return out


@kernel
def _last_column(a, b, c, d):
    """Column of the last round (SubBytes, ShiftRows; no MixColumns): row r from the column
    r to the right."""
    return (SBOX32[a & 255] | (SBOX32[(b >> 8) & 255] << 8) | (SBOX32[(c >> 16) & 255] << 16)
            | (SBOX32[d >> 24] << 24))


@kernel
def _soft_encrypt(rk, lo, hi):
    """FIPS-197 Cipher with T-tables on the columns c_j (uint32, bytes little-endian): each
    round c'_j = T0[c_j b0] ^ T1[c_{j+1} b1] ^ T2[c_{j+2} b2] ^ T3[c_{j+3} b3] ^ k_j (ShiftRows,
    SubBytes and MixColumns at once); the last round without MixColumns."""
    m32 = np.uint64(0xFFFFFFFF)
    s0 = np.uint32((lo & m32) ^ (rk[0] & m32))
    s1 = np.uint32((lo >> np.uint64(32)) ^ (rk[0] >> np.uint64(32)))
    s2 = np.uint32((hi & m32) ^ (rk[1] & m32))
    s3 = np.uint32((hi >> np.uint64(32)) ^ (rk[1] >> np.uint64(32)))
    t0, t1, t2, t3 = TTAB[0], TTAB[1], TTAB[2], TTAB[3]
    for r in range(1, 10):
        k0 = rk[2 * r]
        k1 = rk[2 * r + 1]
        n0 = (t0[s0 & 255] ^ t1[(s1 >> 8) & 255] ^ t2[(s2 >> 16) & 255] ^ t3[s3 >> 24]
              ^ np.uint32(k0 & m32))
        n1 = (t0[s1 & 255] ^ t1[(s2 >> 8) & 255] ^ t2[(s3 >> 16) & 255] ^ t3[s0 >> 24]
              ^ np.uint32(k0 >> np.uint64(32)))
        n2 = (t0[s2 & 255] ^ t1[(s3 >> 8) & 255] ^ t2[(s0 >> 16) & 255] ^ t3[s1 >> 24]
              ^ np.uint32(k1 & m32))
        n3 = (t0[s3 & 255] ^ t1[(s0 >> 8) & 255] ^ t2[(s1 >> 16) & 255] ^ t3[s2 >> 24]
              ^ np.uint32(k1 >> np.uint64(32)))
        s0, s1, s2, s3 = n0, n1, n2, n3
    f0 = _last_column(s0, s1, s2, s3)
    f1 = _last_column(s1, s2, s3, s0)
    f2 = _last_column(s2, s3, s0, s1)
    f3 = _last_column(s3, s0, s1, s2)
    out_lo = (np.uint64(f0) | (np.uint64(f1) << np.uint64(32))) ^ rk[20]
    out_hi = (np.uint64(f2) | (np.uint64(f3) << np.uint64(32))) ^ rk[21]
    return out_lo, out_hi


@kernel
def encrypt_counter(rk, block, ni):
    """Keystream block number ``block`` (words 2 block and 2 block + 1): the encryption of
    nonce (8 zero bytes) || block as 64-bit big-endian."""
    if ni:
        return _ni_encrypt1(rk, np.uint64(block))
    return _soft_encrypt(rk, np.uint64(0), _bswap64(np.uint64(block)))


@kernel
def encrypt_group(rk, group, ni):
    """Keystream words GROUP_WORDS group .. GROUP_WORDS (group + 1) - 1 (blocks
    GROUP_BLOCKS group ..) as a tuple of GROUP_WORDS uint64."""
    first = np.uint64(group) * np.uint64(GROUP_BLOCKS)
    if ni:
        return _ni_encrypt4(rk, first)
    a0, a1 = _soft_encrypt(rk, np.uint64(0), _bswap64(first))
    b0, b1 = _soft_encrypt(rk, np.uint64(0), _bswap64(first + np.uint64(1)))
    c0, c1 = _soft_encrypt(rk, np.uint64(0), _bswap64(first + np.uint64(2)))
    d0, d1 = _soft_encrypt(rk, np.uint64(0), _bswap64(first + np.uint64(3)))
    return a0, a1, b0, b1, c0, c1, d0, d1


@kernel
def read_words(rk, first, out, ni):
    """Words first .. first + out.size - 1 of the stream keyed by rk into out."""
    count = out.size
    j = 0
    while j < count:
        w = first + j
        group = w // GROUP_WORDS
        if w % GROUP_WORDS == 0 and count - j >= GROUP_WORDS:
            words = encrypt_group(rk, group, ni)
            for t in range(GROUP_WORDS):
                out[j + t] = words[t]
            j += GROUP_WORDS
        else:
            lo, hi = encrypt_counter(rk, w >> 1, ni)
            out[j] = hi if w & 1 else lo
            j += 1


@kernel(parallel=True)
def keystream_words(seeds, first, count):
    """Words first .. first + count - 1 of every seed's stream: uint64 (n, count)."""
    n = seeds.shape[0]
    out = np.empty((n, count), dtype=np.uint64)
    for i in prange(n):
        rk = np.empty(22, dtype=np.uint64)
        expand_key(seeds[i], rk, AES_NI)
        read_words(rk, first, out[i], AES_NI)
    return out


@kernel(parallel=True)
def words_at(seeds, index):
    """Word index[i] of seed i's stream (random access: one block each): uint64 (n,)."""
    n = seeds.shape[0]
    out = np.empty(n, dtype=np.uint64)
    for i in prange(n):
        rk = np.empty(22, dtype=np.uint64)
        expand_key(seeds[i], rk, AES_NI)
        lo, hi = encrypt_counter(rk, index[i] >> 1, AES_NI)
        out[i] = hi if index[i] & 1 else lo
    return out
