"""Frequency oracles behind one interface (SPEC S5.4, S6).

    oracle = PIRappor(k=1000, eps=4)            # or RAPPOROracle, KRROracle, SubsetOracle,
    reports = oracle.randomize_many(xs)          #    OLHOracle, HadamardOracle
    oracle.estimate(reports)                     # unbiased counts of every item
    oracle.estimate_one(reports, j), oracle.variance(n), oracle.bits_per_report, oracle.kind

Every oracle here is a "binary support" oracle: a report supports item j with probability a1
when its user holds j and a0 otherwise, so one estimator and one variance formula serve all
(``ldpcompress.estimators``). Client coins come from the OS CSPRNG (``ldpcompress.entropy``).

Reports are untrusted: ``oracle.check_reports(reports)`` validates dtype, shape and the range
of every field before any kernel runs (counts, estimate, count_one and estimate_one all call
it) and names the first bad report; an empty batch is valid and estimates all zeros (n = 0).
Server allocations proportional to k are checked against ``limits.MAX_BYTES`` first.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numba import get_num_threads

from . import randomizers as RZ
from . import validate as V
from .entropy import SYSTEM, Entropy
from .estimators import BinaryEstimator, histogram_bytes, integer_reports
from .kernels.field import affine_hist, affine_mod_triples, fwht, next_prime
from .structure import ShuffleStructure, independent_structure, kept

MAX_FIELD = 2 ** 31 - 1  # hashes a (x+1) + b stay below 2^62 in int64
OLH_MAX_EPS = 20.0       # g = round(e^eps + 1) buckets with 4 g < p < 2^31
OLH_ATTACK_MAX_P = 1 << 24  # the exact attack counts hash triples in O(p) (~30 ms at 2^24)


def chunks_for(n: int) -> int:
    """Report chunks for the parallel kernels: a few per thread, at least 4096 reports each."""
    return max(1, min(4 * get_num_threads(), n // 4096 + 1))


class FrequencyOracle(BinaryEstimator):
    """Interface; subclasses set name, k, eps, kind, a0, a1, bits_per_report and define
    ``randomize_many`` (client) and ``counts`` (server)."""

    name = ""
    eps: float
    kind: str  # "deletion" or "replacement"
    bits_per_report: int

    def randomize_many(self, xs, entropy: Entropy = SYSTEM):
        raise NotImplementedError

    def check_reports(self, reports):
        raise NotImplementedError


class KRROracle(RZ.KRR, FrequencyOracle):
    """k-ary randomized response (replacement eps): ceil(log2 k) bits."""

    name = "krr"

    def __init__(self, k: int, eps: float):
        super().__init__(k, eps)
        self.bits_per_report = max(1, math.ceil(math.log2(self.k)))


class RAPPOROracle(RZ.RAPPOR, FrequencyOracle):
    """RAPPOR unary encoding (S5.4), symmetric (deletion) or asymmetric (replacement): k bits."""

    name = "rappor"

    def __init__(self, k: int, eps: float, symmetric: bool = False):
        super().__init__(k, eps, symmetric)
        self.bits_per_report = self.k


class SubsetOracle(RZ.SubsetSelection, FrequencyOracle):
    """Subset selection (replacement eps): a d-subset, d ceil(log2 k) bits."""

    name = "subset"

    def __init__(self, k: int, eps: float, d: int | None = None):
        super().__init__(k, eps, d)
        self.bits_per_report = self.d * max(1, math.ceil(math.log2(self.k)))


class OLHOracle(FrequencyOracle):
    """Optimized local hashing (replacement eps): h(x) = ((a x + b) mod p) mod g with the affine
    family over a prime p > k, g = round(e^eps + 1) buckets, k-RR on the bucket. a0 is exact
    for the non-uniform bucket sizes of F_p mod g."""

    name, kind = "olh", "replacement"

    def __init__(self, k: int, eps: float):
        self.k = V.domain_size(k)
        self.eps = V.positive_finite(eps, "eps")
        if self.eps > OLH_MAX_EPS:
            raise ValueError(f"eps must be in (0, {OLH_MAX_EPS}] for OLH (g = e^eps + 1 buckets "
                             f"in a field below 2^31), got {eps!r}")
        eps = self.eps
        self.g = max(2, int(round(math.exp(eps) + 1)))
        start = max(self.k + 2, 4 * self.g)
        if start >= MAX_FIELD:
            raise ValueError(f"k must be below {MAX_FIELD - 2} for OLH (a field below 2^31), got {k!r}")
        self.p = int(next_prime(start))
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

    def randomize_many(self, xs, entropy=SYSTEM):
        xs = V.items(xs, self.k)
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
            p3 = Fraction(int(affine_mod_triples(p, g)), p * p)
            t3 = (1 - 2 * coll + p3) / g
        return ShuffleStructure("olh", (("k", self.k), ("p", p), ("g", g), ("a1", self.a1)),
                                Fraction(1, g), kept(self.a1c), p11, Fraction(1, g) - p11, False, t3,
                                (0, 2, 1))

    def check_reports(self, reports) -> np.ndarray:
        """Reports are rows (a, b, y): shape (n, 3), a and b in [0, p), y in [0, g)."""
        return integer_reports(reports, [self.p, self.p, self.g], width=3)

    def _count(self, r):
        chunks = chunks_for(r.shape[0])
        histogram_bytes(self.k, chunks)
        return affine_hist(np.ascontiguousarray(r[:, 0]), np.ascontiguousarray(r[:, 1]),
                           np.ascontiguousarray(r[:, 2]), self.k, self.p, 0, self.g, chunks)


class HadamardOracle(FrequencyOracle):
    """Hadamard response (replacement eps): item x is row x+1 of H_K (K = 2^ceil(log2(k+1)));
    the report is an index i in [K], uniform over {i : H[x+1, i] = +1} w.p. e^eps/(e^eps+1) and
    over the complement otherwise. a1 = e^eps/(e^eps+1), a0 = 1/2; counts by one FWHT."""

    name, kind = "hadamard", "replacement"

    def __init__(self, k: int, eps: float):
        self.k = V.domain_size(k)
        self.eps = RZ._check_eps(eps)
        self.big_k = 1 << math.ceil(math.log2(self.k + 1))
        self.a1, self.a0 = 1.0 / (1.0 + math.exp(-self.eps)), 0.5
        self.a1c = 1.0 / (1.0 + math.exp(self.eps))  # 1 - a1 (0 only beyond eps ~ 745)
        self.bits_per_report = int(math.log2(self.big_k))

    def shuffle_structure(self) -> ShuffleStructure:
        """w = uniform column i of H_K; rows x+1 are distinct and non-zero, so the signs of two
        rows are independent fair coins (a = 1/2). The attack's third item has row 3 = 1 ^ 2:
        its sign is the product of the other two, so b3 = [b1 = b2] and t3 = Pr[b1 != b2 ...]
        = Pr[b1 = 1, b2 = 0] = 1/4."""
        t3 = Fraction(1, 4) if self.k >= 3 else None
        return independent_structure("hadamard", (("k", self.k), ("K", self.big_k), ("a1", self.a1)),
                                     Fraction(1, 2), kept(self.a1c), triple_independent=False, t3=t3,
                                     attack_items=(0, 1, 2))

    @staticmethod
    def _parity(v: np.ndarray) -> np.ndarray:
        v = v.copy()
        out = np.zeros(v.shape, dtype=np.int64)
        while np.any(v):
            out ^= v & 1
            v >>= 1
        return out

    def randomize_many(self, xs, entropy=SYSTEM):
        xs = V.items(xs, self.k) + 1
        n = xs.size
        want_plus = entropy.uniform(n) >= self.a1c
        i = entropy.integers(self.big_k, n)
        # flip one bit of i where x has a set bit whenever the sign is the wrong one
        low = xs & -xs
        wrong = (self._parity(xs & i) == 0) != want_plus
        return np.where(wrong, i ^ low, i)

    def check_reports(self, reports) -> np.ndarray:
        """Reports are Hadamard column indices: a 1-D integer array, entries in [0, K)."""
        return integer_reports(reports, self.big_k, what="index")

    def _count(self, reports):
        histogram_bytes(self.big_k, 2, what="the Hadamard histogram and transform")
        hist = np.bincount(reports, minlength=self.big_k)
        signed = fwht(hist.astype(np.int64))  # sum_i (-1)^popcount(i & j) hist[i]
        n = len(reports)
        return ((n + signed[1: self.k + 1]) // 2).astype(np.int64)
