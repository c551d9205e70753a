"""Frequency oracles behind one interface (SPEC S5.4, S6).

    oracle = PIRappor(k=1000, eps=4)            # or RAPPOROracle, KRROracle, SubsetOracle,
    reports = oracle.randomize_many(xs)          #    OLHOracle, HadamardOracle
    oracle.estimate(reports)                     # unbiased counts of every item
    oracle.estimate_one(reports, j), oracle.variance(n), oracle.bits_per_report, oracle.kind

Every oracle here is a "binary support" oracle: a report supports item j with probability a1
when its user holds j and a0 otherwise, so one estimator and one variance formula serve all
(``ldpcompress.estimators``). Client coins come from the OS CSPRNG (``ldpcompress.entropy``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import get_num_threads

from . import randomizers as RZ
from . import validate as V
from .entropy import SYSTEM, Entropy
from .estimators import BinaryEstimator
from .kernels.field import affine_hist, fwht, next_prime


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
        self.g = max(2, int(round(math.exp(eps) + 1)))
        self.p = int(next_prime(max(self.k + 2, 4 * self.g)))
        e = math.exp(eps)
        keep = e / (e + self.g - 1)
        sizes = np.array([len(range(y, self.p, self.g)) for y in range(self.g)]) / self.p
        prob_y = sizes * keep + (1 - sizes) * (1 - keep) / (self.g - 1)  # law of the report y
        self.a1, self.a0 = keep, float(np.sum(prob_y * sizes))
        self._keep = keep
        self.bits_per_report = 2 * math.ceil(math.log2(self.p)) + math.ceil(math.log2(self.g))

    def randomize_many(self, xs, entropy=SYSTEM):
        xs = V.items(xs, self.k)
        n = xs.size
        a = entropy.integers(self.p, n)
        b = entropy.integers(self.p, n)
        bucket = (a * (xs + 1) + b) % self.p % self.g
        other = entropy.integers(self.g - 1, n)
        other = other + (other >= bucket)
        y = np.where(entropy.uniform(n) < self._keep, bucket, other)
        return np.stack([a, b, y], axis=1)

    def counts(self, reports):
        r = np.ascontiguousarray(reports, dtype=np.int64)
        return affine_hist(r[:, 0].copy(), r[:, 1].copy(), r[:, 2].copy(), self.k, self.p, 0,
                           self.g, chunks_for(r.shape[0]))


class HadamardOracle(FrequencyOracle):
    """Hadamard response (replacement eps): item x is row x+1 of H_K (K = 2^ceil(log2(k+1)));
    the report is an index i in [K], uniform over {i : H[x+1, i] = +1} w.p. e^eps/(e^eps+1) and
    over the complement otherwise. a1 = e^eps/(e^eps+1), a0 = 1/2; counts by one FWHT."""

    name, kind = "hadamard", "replacement"

    def __init__(self, k: int, eps: float):
        self.k = V.domain_size(k)
        self.eps = V.positive_finite(eps, "eps")
        self.big_k = 1 << math.ceil(math.log2(self.k + 1))
        self.a1, self.a0 = math.exp(eps) / (math.exp(eps) + 1), 0.5
        self.bits_per_report = int(math.log2(self.big_k))

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
        want_plus = entropy.uniform(n) < self.a1
        i = entropy.integers(self.big_k, n)
        # flip one bit of i where x has a set bit whenever the sign is the wrong one
        low = xs & -xs
        wrong = (self._parity(xs & i) == 0) != want_plus
        return np.where(wrong, i ^ low, i)

    def counts(self, reports):
        hist = np.bincount(np.asarray(reports, dtype=np.int64), minlength=self.big_k)
        signed = fwht(hist.astype(np.int64))  # sum_i (-1)^popcount(i & j) hist[i]
        n = len(reports)
        return ((n + signed[1: self.k + 1]) // 2).astype(np.int64)
