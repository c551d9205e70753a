"""Prime-field kernels of the frequency oracles (docs/theory.md §6).

PI-RAPPOR reports (a_i, b_i) in F_p^2 support item j (the field element j + 1) when
(a_i (j+1) + b_i) mod p < s. All products stay below p^2 < 2^62 (p < 2^31), so int64 is exact.
Histograms are serial kernels that release the GIL: the caller runs report chunks on threads,
each chunk with its own count row (``randomizers.base.chunked_counts``); Numba's parallel=True
cost about 3 s more to compile, on the first run of every installation.
The kernels trust their inputs: the Python side validates every report (range, dtype, shape)
first, so no array is indexed by an unchecked value. Inside kernels, products mod n >= 2^31 go
through ``mul_mod`` (double-and-add, no int64 overflow). Primality (Miller-Rabin, exact for every
n < 2^62) runs in plain Python: it is cheap, and compiling it cost the first run about a second.
"""
import numpy as np

from .decorator import kernel

__all__ = ["SMALL_MODULUS", "MAX_MODULUS", "MR_BASES", "mul_mod", "pow_mod",
           "is_prime", "next_prime", "prime", "pi_count_one", "sum_rows", "affine_hist",
           "pi_hist_enum", "inverse_table", "fwht", "vector_hits", "first_unsorted_row",
           "affine_mod_triples"]


SMALL_MODULUS = 1 << 31   # below this, a * b with a, b < n fits in int64
MAX_MODULUS = 1 << 62     # mul_mod needs 2 n < 2^63
MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)  # Miller-Rabin: exact below 3.3e24


@kernel
def mul_mod(a, b, n):
    """a b mod n for 0 <= a, b < n < 2^62 without overflow: direct below 2^31, else
    double-and-add (every intermediate stays below 2 n < 2^63)."""
    if n < SMALL_MODULUS:
        return a * b % n
    result = 0
    a %= n
    b %= n
    while b > 0:
        if b & 1:
            result += a
            if result >= n:
                result -= n
        a += a
        if a >= n:
            a -= n
        b >>= 1
    return result


@kernel
def pow_mod(a, e, p):
    """a^e mod p by squaring (int64, p < 2^62)."""
    result = np.int64(1)  # not the literal 1: that would compile a second mul_mod
    a %= p
    while e > 0:
        if e & 1:
            result = mul_mod(result, a, p)
        a = mul_mod(a, a, p)
        e >>= 1
    return result


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for n < 3.3e24 (bases 2..41); exact for every n < 2^62.
    Plain Python: its integers are exact and the built-in three-argument pow is fast, so a
    field's prime costs microseconds and no compilation on the first run."""
    n = int(n)
    if n < 2:
        return False
    for sp in MR_BASES:
        if n % sp == 0:
            return n == sp
    d = n - 1
    r = 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in MR_BASES:
        x = pow(a, d, n)
        if x == 1 or x == n - 1:
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def next_prime(n, high: int = MAX_MODULUS - 1) -> int:
    """Smallest prime >= n; ValueError when it would exceed ``high`` (at most 2^62 - 1, the
    kernels' int64 range). Prime gaps below 2^62 are < 1500, so this is fast."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an integer, got {type(n).__name__}")
    n, high = int(n), min(int(high), MAX_MODULUS - 1)
    if n > high:
        raise ValueError(f"no prime in [{n}, {high}]: the field size must stay below {high + 1}")
    p = max(n, 2)
    while not is_prime(p):
        p += 1
    if p > high:
        raise ValueError(f"the smallest prime >= {n} is {p}, above the limit {high}")
    return p


def prime(n) -> bool:
    """Whether the integer n is prime (exact for n < 2^62; ValueError above)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an integer, got {type(n).__name__}")
    if int(n) >= MAX_MODULUS:
        raise ValueError(f"primality is supported below 2^62, got {n}")
    return is_prime(int(n))


@kernel
def pi_count_one(a, b, j, p, s):
    """#{i : (a_i (j+1) + b_i) mod p < s}: the single-item frequency oracle, O(n)."""
    x = j + 1
    count = 0
    for i in range(a.shape[0]):
        if (a[i] * x + b[i]) % p < s:
            count += 1
    return count


@kernel
def sum_rows(rows):
    """Column sums of a 2-D int64 array (exact). A loop rather than ``rows.sum(axis=0)``,
    whose implementation (axis checks with formatted error messages) took over 2 s to compile."""
    out = np.zeros(rows.shape[1], dtype=np.int64)
    for c in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            out[j] += rows[c, j]
    return out


@kernel(nogil=True)
def affine_hist(a, b, y, k, p, s, g, out):
    """Adds to out[j] the reports supporting item j, by evaluating v = (a_i (j+1) + b_i) mod p
    at every j: O(n k). Serial, without the GIL: the caller runs report chunks on threads, each
    into its own row.

    g = 0: PI-RAPPOR, report i supports j when v < s. g > 0: optimized local hashing, report i
    supports j when v mod g == y_i.
    """
    for i in range(a.shape[0]):
        ai = a[i]
        v = (ai + b[i]) % p  # h_i(1); h_i(x + 1) = h_i(x) + a_i
        yi = y[i] if g > 0 else 0
        for j in range(k):
            if (v < s) if g == 0 else (v % g == yi):
                out[j] += 1
            v += ai
            if v >= p:
                v -= p


@kernel(nogil=True)
def pi_hist_enum(a, b, k, p, s, inv, out):
    """Adds to out[j] the reports supporting item j by enumerating each report's hits:
    j + 1 = c r + d (mod p) for r < s with c = a^-1, d = -c b; a = 0 hits every j when b < s.
    O(n s). ``inv`` is the table of inverses mod p (or empty: Fermat per report). Serial,
    without the GIL, as affine_hist."""
    zeros = 0
    for i in range(a.shape[0]):
        ai = a[i]
        if ai == 0:
            if b[i] < s:
                zeros += 1
            continue
        c = inv[ai] if inv.shape[0] > 0 else pow_mod(ai, p - 2, p)
        x = (p - c * b[i] % p) % p  # r = 0
        for r in range(s):
            if 1 <= x <= k:
                out[x - 1] += 1
            x += c
            if x >= p:
                x -= p
    for j in range(k):
        out[j] += zeros


@kernel
def inverse_table(p):
    """inv[x] = x^-1 mod p for x in [1, p) by inv[x] = -(p // x) inv[p % x] (inv[0] = 0)."""
    inv = np.zeros(p, dtype=np.int64)
    if p > 1:
        inv[1] = 1
    for x in range(2, p):
        inv[x] = (p - (p // x) * inv[p % x] % p) % p
    return inv


@kernel
def fwht(v):
    """In-place fast Walsh-Hadamard transform of an int64 vector whose length is a power of 2:
    out[j] = sum_i (-1)^popcount(i & j) v[i]."""
    h = 1
    n = v.shape[0]
    while h < n:
        for i in range(0, n, 2 * h):
            for j in range(i, i + h):
                x = v[j]
                y = v[j + h]
                v[j] = x + y
                v[j + h] = x - y
        h *= 2
    return v


@kernel
def vector_hits(codes, counts, items, q, t, s, k):
    """Generalised PI-RAPPOR (§6): codes are distinct reports a_0..a_{t-1}, b packed in base q;
    items[j] the vector of item j (t digits). Adds counts[u] to every j with <a, x_j> + b < s."""
    out = np.zeros(k, dtype=np.int64)
    a = np.empty(t, dtype=np.int64)
    for u in range(codes.shape[0]):
        code = codes[u]
        b = code % q
        code //= q
        for d in range(t):
            a[d] = code % q
            code //= q
        for j in range(k):
            v = b
            for d in range(t):
                v += a[d] * items[j, d]
            if v % q < s:
                out[j] += counts[u]
    return out


@kernel
def first_unsorted_row(rows, high):
    """Index of the first row of a 2-D int64 array that is not strictly increasing within
    [0, high), or -1 (sorted rows of distinct items in range: one pass)."""
    w = rows.shape[1]
    for i in range(rows.shape[0]):
        bad = rows[i, 0] < 0 or rows[i, w - 1] >= high
        for c in range(1, w):  # branch-free inner loop (vectorises)
            bad |= rows[i, c] <= rows[i, c - 1]
        if bad:
            return i
    return -1


@kernel
def affine_mod_triples(p, g):
    """#{(v, d) in F_p^2 : v, (v + d) mod p, (v + 2d) mod p all equal mod g} (OLH's hash of
    three items in arithmetic progression, docs/theory.md §2.6(c)). For fixed d the two
    wrap-arounds split [0, p) into at most three runs on which (v + d) mod p - v and
    (v + 2d) mod p - v are constant, so each run counts whole or not at all: O(p)."""
    total = 0
    for d in range(p):
        d2 = (2 * d) % p
        t1 = p - d   # v >= t1: v + d wraps
        t2 = p - d2  # v >= t2: v + 2d wraps
        lo, hi = min(t1, t2), max(t1, t2)
        ok00 = (d % g == 0) and (d2 % g == 0)
        ok11 = ((d - p) % g == 0) and ((d2 - p) % g == 0)
        if t1 < t2:   # on [t1, t2) only v + d wraps
            okmid = ((d - p) % g == 0) and (d2 % g == 0)
        else:         # on [t2, t1) only v + 2d wraps
            okmid = (d % g == 0) and ((d2 - p) % g == 0)
        if ok00:
            total += lo
        if okmid:
            total += hi - lo
        if ok11:
            total += p - hi
    return total
