"""Kernels of the general Hadamard response (docs/theory.md §6.3): codes over GF(2^m) and the
server's counts from one Walsh-Hadamard transform.

A report y is an m-bit vector. Item x owns t vectors rows[x, 0..t-1] (linearly independent
over GF(2)); its syndrome is the t bits parity(rows[x, i] & y), and y supports x when every bit
is 0. GF(2^m) elements are integers in the polynomial basis modulo ``poly`` (degree m, with its
x^m bit set). Every kernel trusts its inputs: the Python side validated the items, the
reports and the parameters (m <= 30, t <= m) first.
"""
import numpy as np

from .decorator import kernel

__all__ = ["gf_mul", "gf_pow", "spread_rows", "dual_rows", "respond", "span_counts",
           "supports"]


@kernel
def parity(v):
    """popcount(v) mod 2 for 0 <= v < 2^32."""
    v ^= v >> 16
    v ^= v >> 8
    v ^= v >> 4
    v ^= v >> 2
    v ^= v >> 1
    return v & 1


@kernel
def gf_mul(a, b, m, poly):
    """a b in GF(2^m) = GF(2)[z] / poly (shift-and-add; a, b < 2^m)."""
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if (a >> m) & 1:
            a ^= poly
    return r


@kernel
def gf_pow(a, e, m, poly):
    """a^e in GF(2^m) (square and multiply, e >= 0)."""
    r = 1
    while e:
        if e & 1:
            r = gf_mul(r, a, m, poly)
        a = gf_mul(a, a, m, poly)
        e >>= 1
    return r


@kernel
def spread_rows(k, t, m, poly):
    """rows[x, i] = g^(x + i N), N = (2^m - 1)/(2^t - 1), g = z a primitive element: the span of
    row x is g^x GF(2^t) (omega = g^N generates GF(2^t)^*, so 1, omega, .., omega^(t-1) is a
    GF(2)-basis of the subfield), and the spans of x < N meet only in 0 (a Desarguesian spread).
    Column i starts at omega^i and steps by g = z: a shift and a reduction, O(k t)."""
    omega = gf_pow(2, ((1 << m) - 1) // ((1 << t) - 1), m, poly)
    rows = np.empty((k, t), dtype=np.int64)
    v = 1
    for i in range(t):
        a = v
        for x in range(k):
            rows[x, i] = a
            a <<= 1
            if (a >> m) & 1:
                a ^= poly
        v = gf_mul(v, omega, m, poly)
    return rows


@kernel
def dual_rows(rows, m):
    """duals[x, j] with parity(rows[x, i] & duals[x, j]) = [i == j]: pivot bits P of the rows
    (Gaussian elimination), then the inverse of the t x t matrix A[i, l] = bit P_l of row i, so
    dual j = sum_l (A^-1)[l, j] 2^P_l. Adding dual j to a report flips syndrome bit j alone."""
    k, t = rows.shape
    duals = np.zeros((k, t), dtype=np.int64)
    work = np.empty(t, dtype=np.int64)
    piv = np.empty(t, dtype=np.int64)
    amat = np.empty(t, dtype=np.int64)   # row i: the bits of row i at the pivots (bit l)
    inv = np.empty(t, dtype=np.int64)    # Gauss-Jordan companion, starts as the identity
    for x in range(k):
        for i in range(t):
            work[i] = rows[x, i]
        for i in range(t):  # echelon form: pivot of work[i] is its highest bit
            best = i
            for j in range(i + 1, t):
                if work[j] > work[best]:
                    best = j
            work[i], work[best] = work[best], work[i]
            p = m - 1
            while p >= 0 and not (work[i] >> p) & 1:
                p -= 1
            piv[i] = p
            for j in range(i + 1, t):
                if (work[j] >> p) & 1:
                    work[j] ^= work[i]
        for i in range(t):
            bits = 0
            for l in range(t):
                bits |= ((rows[x, i] >> piv[l]) & 1) << l
            amat[i] = bits
            inv[i] = 1 << i
        for col in range(t):  # A inv-rows: reduce A to I, apply the same row operations to I
            r = col
            while not (amat[r] >> col) & 1:
                r += 1
            amat[col], amat[r] = amat[r], amat[col]
            inv[col], inv[r] = inv[r], inv[col]
            for j in range(t):
                if j != col and (amat[j] >> col) & 1:
                    amat[j] ^= amat[col]
                    inv[j] ^= inv[col]
        # inv now holds A^-1 by rows: bit j of inv[l] is (A^-1)[l, j]
        for j in range(t):
            d = 0
            for l in range(t):
                if (inv[l] >> j) & 1:
                    d |= 1 << piv[l]
            duals[x, j] = d
    return duals


@kernel
def respond(rows, duals, xs, ys, targets):
    """Reports: y_u moved into the coset {y : syndrome_x(y) = targets[u]} of x = xs[u] by adding
    the duals of the wrong syndrome bits (a uniform y gives a uniform point of the coset)."""
    t = rows.shape[1]
    out = np.empty(xs.shape[0], dtype=np.int64)
    for u in range(xs.shape[0]):
        x = xs[u]
        y = ys[u]
        for i in range(t):
            if parity(rows[x, i] & y) != (targets[u] >> i) & 1:
                y ^= duals[x, i]
        out[u] = y
    return out


@kernel
def span_counts(spec, rows):
    """Support counts from the Walsh-Hadamard transform spec[v] = sum_y (-1)^(v.y) hist[y]:
    #{reports with syndrome_x = 0} = 2^-t sum of spec over the 2^t vectors of span(rows[x])
    (the span walked in Gray-code order)."""
    k, t = rows.shape
    out = np.empty(k, dtype=np.int64)
    for x in range(k):
        s = spec[0]
        v = 0
        for g in range(1, 1 << t):
            i = 0
            while not (g >> i) & 1:
                i += 1
            v ^= rows[x, i]
            s += spec[v]
        out[x] = s >> t
    return out


@kernel
def supports(rows, xs, ys):
    """Whether report ys[u] supports item xs[u] (every syndrome bit 0)."""
    t = rows.shape[1]
    out = np.empty(xs.shape[0], dtype=np.bool_)
    for u in range(xs.shape[0]):
        ok = True
        for i in range(t):
            if parity(rows[xs[u], i] & ys[u]):
                ok = False
        out[u] = ok
    return out
