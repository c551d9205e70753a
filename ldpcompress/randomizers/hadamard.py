"""Hadamard response (docs/theory.md §2.5, §6).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM
from ..core.lazy import lazy_module
from .base import FrequencyOracle, check_eps
from . import cost as C
from .contract import Cost, Privacy
from .registry import register
from .estimator import histogram_bytes, integer_reports
from .structure import ShuffleStructure, independent_structure, kept

__all__ = ['HadamardResponse']

_field = lazy_module("ldpcompress.kernels.field")  # Numba: compiled at first use


@register
class HadamardResponse(FrequencyOracle):
    """Hadamard response (replacement eps): item x is row x+1 of H_K (K = 2^ceil(log2(k+1)));
    the report is an index i in [K], uniform over {i : H[x+1, i] = +1} w.p. e^eps/(e^eps+1) and
    over the complement otherwise. a1 = e^eps/(e^eps+1), a0 = 1/2; counts by one FWHT."""

    name, privacy = "hadamard", Privacy.REPLACEMENT

    def __init__(self, k: int, eps: float):
        self.k = V.domain_size(k)
        self.eps = check_eps(eps)
        self.big_k = 1 << math.ceil(math.log2(self.k + 1))
        self.a1, self.a0 = 1.0 / (1.0 + math.exp(-self.eps)), 0.5
        self.a1c = 1.0 / (1.0 + math.exp(self.eps))  # 1 - a1 (0 only beyond eps ~ 745)
        self.bits_per_report = int(math.log2(self.big_k))
        self.report_high = self.big_k

    def params(self) -> dict:
        return {"k": self.k, "eps": self.eps}

    def compression_refusal(self) -> str:
        return (f"a Hadamard response report is {self.bits_per_report} bits, already shorter "
                "than a 17-byte seed report")

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
        signed = _field.fwht(hist.astype(np.int64))  # sum_i (-1)^popcount(i & j) hist[i]
        n = len(reports)
        return ((n + signed[1: self.k + 1]) // 2).astype(np.int64)

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """Per report a check and a scattered update of the K-entry histogram; per call the
        histogram, one Walsh-Hadamard transform (K log2 K butterflies) and the k counts;
        memory the histogram, its int64 copy and the counts (never compressed: ``seeds``
        takes the contract's default)."""
        if seeds:
            return super().summary_cost(n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        big, table = self.big_k, 8 * self.big_k
        per_call = C.CALL + big * (C.BINCOUNT + C.SIMPLE) + big * math.log2(big) * C.FWHT \
            + 4 * self.k * C.SIMPLE
        return Cost(n * (4 * C.SIMPLE + C.scattered(C.BINCOUNT, table)) + calls * per_call,
                    2 * table + 3 * 8 * self.k + 8 * b,
                    f"n = {n} indices into K = {big} entries, {calls} transform(s)")
