"""Optimized local hashing over an affine family mod a prime (docs/theory.md §2.5, §6).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..core import validate as V
from ..core.lazy import lazy_module
from ..core.numerics import MAX_FIELD
from .base import EPS_MIN, FrequencyOracle
from .threads import chunked_counts, chunks_for
from . import cost as C
from .contract import Column, Cost, Privacy, int_dtype
from .estimator import histogram_bytes, integer_reports
from .registry import register
from .structure import ShuffleStructure, kept

__all__ = ['OLH', 'OLH_MAX_EPS']

_field = lazy_module("ldpcompress.kernels.field")  # Numba: compiled at first use



OLH_MAX_EPS = 20.0       # g = round(e^eps + 1) buckets with 4 g < p < 2^31

OLH_ATTACK_MAX_P = 1 << 24  # the exact attack counts hash triples in O(p) (~30 ms at 2^24)

@register
class OLH(FrequencyOracle):
    """Optimized local hashing (replacement eps): h(x) = ((a x + b) mod p) mod g with the affine
    family over a prime p > k, g = round(e^eps + 1) buckets, k-RR on the bucket. a0 is exact
    for the non-uniform bucket sizes of F_p mod g.

    Parameters
    ----------
    k : int
        Domain size: inputs are items 0..k-1 (k >= 2).
    eps : float
        The local privacy parameter (> 0).
    """

    name, privacy = "olh", Privacy.REPLACEMENT

    def __init__(self, k: int, eps: float):
        self.k = V.domain_size(k)
        self.eps = V.positive_finite(eps, "eps")
        if not EPS_MIN <= self.eps <= OLH_MAX_EPS:
            raise ValueError(f"eps must be in [{EPS_MIN:g}, {OLH_MAX_EPS}] for OLH (below, its "
                             "coins round to those of eps = 0; above, g = e^eps + 1 buckets do "
                             f"not fit a field below 2^31), got {eps!r}")
        eps = self.eps
        self.g = max(2, int(round(math.exp(eps) + 1)))
        start = max(self.k + 2, 4 * self.g)
        if start >= MAX_FIELD:
            raise ValueError(f"k must be below {MAX_FIELD - 2} for OLH (a field below 2^31), got {k!r}")
        self.p = int(_field.next_prime(start))
        if self.p > MAX_FIELD:
            raise ValueError(f"no prime field below 2^31 serves OLH with k={k}, eps={eps}")
        e = math.exp(eps)
        keep = e / (e + self.g - 1)
        # bucket y of F_p mod g has size q + 1 for y < p mod g, q = p // g otherwise
        q, rem = divmod(self.p, self.g)
        sizes = np.array([(q + 1) / self.p, q / self.p])
        weights = np.array([rem, self.g - rem])
        prob_y = sizes * keep + (1 - sizes) * (1 - keep) / (self.g - 1)  # law of the report y
        self.a1, self.a0 = keep, float(np.sum(weights * prob_y * sizes))
        x = math.exp(-eps)
        self.a1c = (self.g - 1) * x / (1.0 + (self.g - 1) * x)  # 1 - keep, no cancellation
        self.bits_per_report = 2 * math.ceil(math.log2(self.p)) + math.ceil(math.log2(self.g))

    def params(self) -> dict:
        return {"k": self.k, "eps": self.eps}

    def compression_refusal(self) -> str:
        return (f"an OLH report is {self.bits_per_report} bits, already shorter than a "
                "17-byte seed report")

    def plateau(self) -> tuple:
        """(g, p): both jump with eps (g = round(e^eps + 1), p the next prime above 4 g)."""
        return (self.g, self.p)

    def _randomize_many(self, xs, entropy):
        n = xs.size
        a = entropy.integers(self.p, n)
        b = entropy.integers(self.p, n)
        bucket = (a * (xs + 1) + b) % self.p % self.g
        other = entropy.integers(self.g - 1, n)
        other = other + (other >= bucket)
        y = np.where(entropy.uniform(n) >= self.a1c, bucket, other)
        return np.stack([a, b, y], axis=1)

    def shuffle_structure(self) -> ShuffleStructure:
        """w = uniform on F_p^2 x [g]. For x1 != x2 the hashes (u, v) = (a(x1+1)+b, a(x2+1)+b)
        mod p are uniform on F_p^2, so with y uniform and independent: Pr[b1 = 1] = 1/g and
        Pr[b1 = b2 = 1] = (1/g) Pr[u = v mod g] = (1/g) sum_c (size_c/p)^2 >= 1/g^2 (bucket sizes
        of F_p mod g: q+1 for rem of them, q for the rest). The attack's items 0, 1, 2 hash to
        v, v + a, v + 2a (v = a + b uniform): t3 = (1/g)(1 - 2 coll + P3) with P3 the
        probability that all three agree mod g (counted exactly, O(p))."""
        p, g = self.p, self.g
        q, rem = divmod(p, g)
        coll = Fraction(rem * (q + 1) ** 2 + (g - rem) * q ** 2, p * p)
        p11 = coll / g
        t3 = None
        if self.k >= 3 and p <= OLH_ATTACK_MAX_P:  # the count is O(p): skipped for huge fields
            p3 = Fraction(int(_field.affine_mod_triples(p, g)), p * p)
            t3 = (1 - 2 * coll + p3) / g
        return ShuffleStructure("olh", (("k", self.k), ("p", p), ("g", g), ("a1", self.a1)),
                                Fraction(1, g), kept(self.a1c), p11, Fraction(1, g) - p11, False, t3,
                                (0, 2, 1))

    def check_reports(self, reports) -> np.ndarray:
        """Reports are rows (a, b, y): shape (n, 3), a and b in [0, p), y in [0, g)."""
        return integer_reports(reports, [self.p, self.p, self.g], width=3)

    def report_columns(self) -> tuple[Column, ...]:
        return (Column("a", int_dtype(self.p)), Column("b", int_dtype(self.p)),
                Column("y", int_dtype(self.g)))

    def _to_columns(self, r) -> dict[str, np.ndarray]:
        return {c.name: r[:, i].astype(c.dtype) for i, c in enumerate(self.report_columns())}

    def _from_columns(self, cols) -> np.ndarray:
        return np.stack([cols["a"], cols["b"], cols["y"]], axis=1).astype(np.int64)

    def _count(self, r):
        chunks = chunks_for(r.shape[0], self.k)
        histogram_bytes(self.k, chunks)
        columns = tuple(np.ascontiguousarray(r[:, i]) for i in range(3))
        return chunked_counts(_field.affine_hist, columns, self.k, chunks, self.k, self.p, 0,
                              self.g)

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """``affine_hist``: every report hashed at every item, ((a (j+1) + b) mod p) mod g
        against y, streaming its chunk's k-entry count row: n k steps (from memory when k is
        large), plus the reports checked and copied into three columns; per call every chunk's
        row made and added. Memory: the rows (chunks x k, at most ``threads.CHUNK_TABLE_BYTES``),
        their sum, the columns (never compressed: ``seeds`` takes the contract's default)."""
        if seeds:
            return super().summary_cost(n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        k, row = self.k, 8 * self.k
        chunks = chunks_for(b, k)
        ops = n * (k * C.walk(C.OLH_HASH, row) + 12 * C.SIMPLE) \
            + calls * (C.CALL + (2 * chunks + 1) * k * C.SIMPLE)
        return Cost(ops, (chunks + 2) * row + b * 3 * 8 * 3,
                    f"n x k = {n} x {k} hash evaluations")
