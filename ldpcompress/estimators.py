"""Unbiased frequency estimators of binary-report oracles (SPEC S5.4, S6.1).

Every oracle whose report "supports" item j with probability a1 when the user holds j and a0
otherwise (RAPPOR, PI-RAPPOR, k-RR, subset selection, ...) has the estimator
f_j = (count_j - n a0) / (a1 - a0) and variance
(n a0 (1-a0) + f_j (a1 (1-a1) - a0 (1-a0))) / (a1 - a0)^2
(for RAPPOR this is S5.4's n a0(1-a0)/(a1-a0)^2 + f_j (1-a0-a1)/(a1-a0)).
"""
from __future__ import annotations

import numpy as np


def binary_estimate(counts, n: int, a0: float, a1: float) -> np.ndarray:
    """(count_j - n a0) / (a1 - a0) for every j."""
    return (np.asarray(counts, dtype=float) - n * a0) / (a1 - a0)


def binary_variance(n: int, f, a0: float, a1: float):
    """Variance of binary_estimate at true counts f (scalar or array)."""
    f = np.asarray(f, dtype=float)
    return (n * a0 * (1 - a0) + f * (a1 * (1 - a1) - a0 * (1 - a0))) / (a1 - a0) ** 2
