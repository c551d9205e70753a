"""The error a deployment buys: the variance of one estimate from m reports, from the
randomizer's own variance formula (docs/guide.md, "Planning a campaign").

* A frequency oracle (support counts, :class:`~ldpcompress.randomizers.base.FrequencyOracle`):
  the variance of one estimated count at true count 0 (the tail: most items are rare), and the
  MSE of the whole histogram, sum_j Var_j = k Var(m, 0) + (Var(m, m) - Var(m, 0)), since
  Var(m, f) is linear in the true count f and the true counts of m one-item reports sum to m.
* A scalar randomizer (x + noise on [lo, hi]): the variance of the mean of m reports at the
  worst-case data variance ((hi - lo)^2 / 4).
* A vector mean estimator (PrivUnit2, the one-bit baseline): E|Z - u|^2 / m of the mean of m
  reports, from its stated per-report ``variance()``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core import validate as V
from ..randomizers.base import FrequencyOracle
from ..randomizers.contract import LocalRandomizer
from ..randomizers.scalar import ScalarRandomizer
from ..randomizers.vectors import VectorMeanEstimator

__all__ = ["ErrorFigure", "estimate_error"]


@dataclass(frozen=True)
class ErrorFigure:
    """``what`` is estimated ("count" or "mean") from ``reports`` reports: ``variance`` of one
    estimate (one count at true count 0, or the mean), ``mse`` of all of them (the histogram's
    sum over items; the mean vector's squared norm; equal to ``variance`` for a scalar).

    Attributes
    ----------
    what : {"count", "mean"}
        What is estimated.
    reports : float
        The number of reports (expected, may be fractional).
    variance : float
        Variance of one estimate.
    mse : float
        Mean squared error of all the estimates.
    """

    what: str
    reports: float
    variance: float
    mse: float

    @property
    def se(self) -> float:
        """Standard error of one estimate, sqrt(variance)."""
        return math.sqrt(self.variance)

    @property
    def scaled_se(self) -> float:
        """The standard error on the scale of the data: a count's divided by the reports (the
        SE of an item's frequency among them), a mean's as it is. Deployments with different
        reports per round (k reports per device) compare on this scale."""
        return self.se / self.reports if self.what == "count" else self.se


def estimate_error(randomizer: LocalRandomizer, reports: float) -> ErrorFigure:
    """The error of estimates from ``reports`` (> 0, may be fractional: an expected count) of
    ``randomizer`` (module docstring); ValueError for a randomizer that states no variance.

    Parameters
    ----------
    randomizer : LocalRandomizer
        A frequency oracle or a mean estimator that states its variance.
    reports : float
        The number of reports (> 0; an expected count may be fractional).
    """
    m = V.positive_finite(reports, "reports")
    if isinstance(randomizer, FrequencyOracle):
        # Var(m, f) = m Var(1, 0) + f (Var(1, 1) - Var(1, 0)): linear in m and in f
        one = float(randomizer.variance(1, 0.0))
        slope = float(randomizer.variance(1, 1.0)) - one  # the f-term, summed: f = m in all
        v0 = m * one
        return ErrorFigure("count", m, v0, randomizer.k * v0 + m * max(slope, 0.0))
    if isinstance(randomizer, ScalarRandomizer):
        v = float(randomizer.variance(1)) / m  # (Var(x) + noise variance) / m, exactly
        return ErrorFigure("mean", m, v, v)
    per_report = getattr(randomizer, "variance", None)
    if isinstance(randomizer, VectorMeanEstimator) and callable(per_report):
        v = float(per_report()) / m
        return ErrorFigure("mean", m, v / randomizer.d, v)
    raise ValueError(f"{randomizer.describe()} states no variance of its estimates: the "
                     "planner ranks frequency oracles (one count), scalar and vector mean "
                     "estimators (one mean)")
