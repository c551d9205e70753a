"""Unbiased frequency estimators of binary-report oracles (SPEC S5.4, S6.1).

Every oracle whose report "supports" item j with probability a1 when the user holds j and a0
otherwise (RAPPOR, PI-RAPPOR, k-RR, subset selection, ...) has the estimator
f_j = (count_j - n a0) / (a1 - a0) and variance
(n a0 (1-a0) + f_j (a1 (1-a1) - a0 (1-a0))) / (a1 - a0)^2
(for RAPPOR this is S5.4's n a0(1-a0)/(a1-a0)^2 + f_j (1-a0-a1)/(a1-a0)).
"""
from __future__ import annotations

import numpy as np

from .validate import integer_at_least


def binary_estimate(counts, n: int, a0: float, a1: float) -> np.ndarray:
    """(count_j - n a0) / (a1 - a0) for every j."""
    return (np.asarray(counts, dtype=float) - n * a0) / (a1 - a0)


def binary_variance(n: int, f, a0: float, a1: float):
    """Variance of binary_estimate at true counts f (scalar or array)."""
    f = np.asarray(f, dtype=float)
    return (n * a0 * (1 - a0) + f * (a1 * (1 - a1) - a0 * (1 - a0))) / (a1 - a0) ** 2


class BinaryEstimator:
    """Server side of a binary-support oracle: subclasses give k, a0, a1 and ``counts(reports)``
    (how many reports support each item); estimates and variances follow from the formulas above."""

    k: int
    a0: float
    a1: float

    def counts(self, reports) -> np.ndarray:
        raise NotImplementedError

    def n_reports(self, reports) -> int:
        return len(reports)

    def count_one(self, reports, j: int) -> int:
        return int(self.counts(reports)[j])

    def estimate(self, reports) -> np.ndarray:
        """Unbiased counts of every item."""
        return binary_estimate(self.counts(reports), self.n_reports(reports), self.a0, self.a1)

    def estimate_one(self, reports, j: int) -> float:
        j = integer_at_least(j, "j", 0, self.k - 1)
        return float(binary_estimate(self.count_one(reports, j), self.n_reports(reports),
                                     self.a0, self.a1))

    def variance(self, n: int, f=0.0):
        """Variance of the estimate of an item with true count f among n reports."""
        return binary_variance(n, f, self.a0, self.a1)
