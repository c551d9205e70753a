"""Unbiased frequency estimators of binary-report oracles and their confidence intervals
(docs/theory.md §6).

Every oracle whose report "supports" item j with probability a1 when the user holds j and a0
otherwise (RAPPOR, PI-RAPPOR, k-RR, subset selection, ...) has the estimator
f_j = (count_j - n a0) / (a1 - a0) and variance
(n a0 (1-a0) + f_j (a1 (1-a1) - a0 (1-a0))) / (a1 - a0)^2
(for RAPPOR this is §6's n a0(1-a0)/(a1-a0)^2 + f_j (1-a0-a1)/(a1-a0)).
count_j is a sum of n independent Bernoulli reports, so f_j is asymptotically normal and
f_j +- z_{(1+level)/2} sqrt(variance) is an approximate per-item confidence interval.
"""
from __future__ import annotations

from statistics import NormalDist

import numpy as np

from ..core.limits import array_bytes, check_bytes
from ..core.validate import integer_at_least, probability_open, real

__all__ = ["integer_reports", "histogram_bytes", "check_separated", "check_flag",
           "check_estimates", "normal_quantile", "binary_estimate", "binary_variance",
           "plugin_variance", "binary_intervals", "BinaryEstimator", "first_flagged_row",
           "rectangular_array"]



def first_flagged_row(mask: np.ndarray) -> int:
    """Index of the first report (row) flagged in mask (1-D or 2-D)."""
    rows = mask if mask.ndim == 1 else mask.any(axis=tuple(range(1, mask.ndim)))
    return int(np.flatnonzero(rows)[0])


def rectangular_array(reports) -> np.ndarray:
    """Untrusted reports as a numpy array (an array is returned as is); ValueError when nested
    lists are ragged, before any dtype or range check."""
    if isinstance(reports, np.ndarray):
        return reports
    try:
        return np.asarray(reports)
    except (ValueError, TypeError) as err:  # ragged nested lists
        raise ValueError(f"reports must form a rectangular array ({err})") from None


def integer_reports(reports, high, width: int | None = None, what: str = "value") -> np.ndarray:
    """Untrusted reports as a validated int64 array, before any kernel sees them.

    1-D when ``width`` is None, else shape (n, width); every entry of column c must be an integer
    in [0, high[c]) (``high`` a scalar or one bound per column). An empty batch (size 0) is
    accepted and gives n = 0. Errors name the first bad report and the accepted range.
    """
    arr = rectangular_array(reports)
    want = "(n,)" if width is None else f"(n, {width})"
    if arr.shape == (0,) or (width is not None and arr.shape == (0, width)):
        return np.zeros((0,) if width is None else (0, width), dtype=np.int64)
    if arr.ndim != (1 if width is None else 2) or (width is not None and arr.shape[1] != width):
        raise ValueError(f"reports must be an array of shape {want}, got shape {arr.shape}")
    highs = np.broadcast_to(np.asarray(high, dtype=object), (1,) if width is None else (width,))
    if arr.dtype == object:  # Python ints of any size: check each, then convert
        flat = arr.reshape(arr.shape[0], -1)
        for i, row in enumerate(flat):
            for c, v in enumerate(row):
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                    raise TypeError(f"report {i} holds {v!r} ({type(v).__name__}): reports must "
                                    "be integers")
                if not 0 <= v < highs[c % highs.size]:
                    raise ValueError(f"report {i}: {what} {v} is outside [0, {highs[c % highs.size]})")
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        hint = ""
        if np.issubdtype(arr.dtype, np.number):
            with np.errstate(invalid="ignore"):
                bad = ~np.isfinite(arr) | (arr != np.round(arr.real))
            if bad.any():
                i = first_flagged_row(bad)
                hint = f" (report {i} is {arr[i].tolist()})"
        raise TypeError(f"reports must be an integer array, got dtype {arr.dtype}{hint}")
    uniform = np.ndim(high) == 0 or len(set(np.ravel(high).tolist())) == 1
    h = int(np.ravel(high)[0]) if uniform else np.asarray(high, dtype=np.int64)
    if uniform:  # one pass each over the whole batch
        out_of_range = arr.min() < 0 or arr.max() >= h
    else:
        out_of_range = np.any(arr.min(axis=0) < 0) or np.any(arr.max(axis=0) >= h)
    if out_of_range:
        bad = (arr < 0) | (arr >= h)
        i = first_flagged_row(bad)
        row = arr[i]
        if width is None:
            raise ValueError(f"report {i}: {what} {row} is outside [0, {high}) "
                             f"(a malformed or hostile report)")
        c = int(np.flatnonzero(bad[i])[0])
        raise ValueError(f"report {i}: column {c} is {row[c]}, outside [0, {highs[c]}) "
                         f"(a malformed or hostile report)")
    return arr.astype(np.int64, copy=False)


def histogram_bytes(k: int, rows: int = 1, max_bytes=None, what: str = "the server histogram"):
    """Refuse a rows x k int64 count table above the memory limit (it would name k)."""
    check_bytes(array_bytes((rows, k)), f"{what} ({rows} x k = {rows} x {k} int64)", "k",
                max_bytes)


def check_separated(a0: float, a1: float) -> None:
    """a1 > a0: else no estimator exists (a tiny eps rounds a1 and a0 to the same double, and
    the estimates would be infinite or NaN)."""
    if not a1 > a0:
        raise ValueError(f"the oracle's report probabilities a1 = {a1!r} and a0 = {a0!r} are not "
                         "a1 > a0 in double precision (eps too small): its estimates would be "
                         "infinite; use a larger eps")


def check_flag(value, name: str) -> bool:
    """A genuine bool (no silent truthiness of strings or numbers)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_estimates(est, name: str = "est", length: int | None = None,
                    scalar: bool = False) -> np.ndarray:
    """Estimates as a float array: 1-D of finite reals (of ``length`` entries when given; a
    single real too when ``scalar``); TypeError/ValueError naming ``name``."""
    if isinstance(est, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got {type(est).__name__}")
    if np.ndim(est) == 0 and scalar:
        return np.asarray(real(est, name), dtype=float)
    try:
        arr = np.asarray(est)
    except (ValueError, TypeError) as err:  # ragged nested lists
        raise ValueError(f"{name} must be a 1-D array of real numbers ({err})") from None
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer)
                                     or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    want = f"({length},)" if length is not None else "(k,)"
    if arr.ndim != 1 or (length is not None and arr.shape[0] != length) or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty array of shape {want}"
                         f"{' or a single real' if scalar else ''}, got shape {arr.shape}")
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)):
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite, got {arr[i]} at index {i}")
    return arr


def normal_quantile(level) -> float:
    """z with Pr[|N(0, 1)| <= z] = level, for a two-sided level in (0, 1)."""
    level = probability_open(level, "level")
    # the upper tail (1 - level)/2 is exact (1 - level is, for level in [1/2, 1)); 0.5 + level/2
    # rounds to 1 for level = 1 - 2^-53 and the quantile would be infinite
    tail = (1.0 - level) / 2.0 if level >= 0.5 else 0.5 - level / 2.0
    if tail < 1e-300:
        raise ValueError(f"level must be at most 1 - 2e-300, got {level!r}")
    return -NormalDist().inv_cdf(tail)


def binary_estimate(counts, n: int, a0: float, a1: float) -> np.ndarray:
    """(count_j - n a0) / (a1 - a0) for every j."""
    check_separated(a0, a1)
    return (np.asarray(counts, dtype=float) - n * a0) / (a1 - a0)


def binary_variance(n: int, f, a0: float, a1: float):
    """Variance of binary_estimate at true counts f (scalar or array)."""
    check_separated(a0, a1)
    f = np.asarray(f, dtype=float)
    return (n * a0 * (1 - a0) + f * (a1 * (1 - a1) - a0 * (1 - a0))) / (a1 - a0) ** 2


def plugin_variance(est, n: int, a0: float, a1: float):
    """binary_variance at the plug-in true count: the estimate clipped to [0, n]."""
    return binary_variance(n, np.clip(est, 0.0, float(n)), a0, a1)


def binary_intervals(est, n: int, a0: float, a1: float, level=0.95,
                     conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """est +- z sqrt(binary_variance(n, f)) with z the two-sided normal quantile of ``level``;
    f = est clipped to [0, n] (plug-in), or the worst case over f in [0, n] when
    ``conservative`` (the variance is linear in f: the larger of f = 0 and f = n)."""
    z = normal_quantile(level)
    conservative = check_flag(conservative, "conservative")
    est = np.asarray(est, dtype=float)
    if conservative:
        var = np.full(est.shape, float(np.max(binary_variance(n, [0.0, float(n)], a0, a1))))
    else:
        var = plugin_variance(est, n, a0, a1)
    half = z * np.sqrt(np.maximum(var, 0.0))
    return est - half, est + half


class BinaryEstimator:
    """Server side of a binary-support oracle: subclasses give k, a0, a1, ``check_reports``
    (validation of untrusted reports) and ``_count`` (support counts of validated reports);
    estimates and variances follow from the formulas above. Every public entry point validates
    the reports before a kernel touches them. An empty batch is valid: counts and estimates are
    all zeros with n = 0 (the unbiased estimate from no reports)."""

    k: int
    a0: float
    a1: float

    def check_reports(self, reports):
        """The reports validated (dtype, shape, every field in range) and normalised for the
        kernels; ValueError/TypeError naming the first bad report. Subclasses define it.

        Parameters
        ----------
        reports
            A batch of reports (untrusted: validated).
        """
        raise NotImplementedError

    def _count(self, reports) -> np.ndarray:
        """Support counts of every item from reports already passed by check_reports."""
        raise NotImplementedError

    def counts(self, reports) -> np.ndarray:
        """How many reports support each item (length k, int64).

        Parameters
        ----------
        reports
            A batch of reports (untrusted: validated).
        """
        return self._count(self.check_reports(reports))

    def n_reports(self, reports) -> int:
        """The number of reports in a validated batch.

        Parameters
        ----------
        reports
            A batch of validated reports.
        """
        return len(reports)

    def check_item_index(self, j) -> int:
        """An item index j in [0, k) (integral floats such as 3.0 accepted).

        Parameters
        ----------
        j : int
            The index to check.
        """
        return integer_at_least(j, "j", 0, self.k - 1)

    def _count_one(self, reports, j: int) -> int:
        return int(self._count(reports)[j])

    def count_one(self, reports, j: int) -> int:
        """How many reports support item j.

        Parameters
        ----------
        reports
            A batch of reports (untrusted: validated).
        j : int
            An item index in [0, k).
        """
        j = self.check_item_index(j)
        return self._count_one(self.check_reports(reports), j)

    def estimate_one(self, reports, j: int) -> float:
        """The unbiased count of item j alone.

        Parameters
        ----------
        reports
            A batch of reports (untrusted: validated).
        j : int
            An item index in [0, k).
        """
        j = self.check_item_index(j)
        reports = self.check_reports(reports)
        return float(binary_estimate(self._count_one(reports, j), self.n_reports(reports),
                                     self.a0, self.a1))

    def variance(self, n: int, f=0.0):
        """Variance of the estimate of an item with true count f among n reports.

        Parameters
        ----------
        n : int
            The number of reports.
        f : float or array of float, default 0
            The item's true count, in [0, n].
        """
        return binary_variance(n, f, self.a0, self.a1)

    def intervals(self, est, n: int, level: float = 0.95,
                  conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(low, high): approximate per-item confidence intervals est_j +- z sqrt(Var) at
        ``level`` (two-sided normal quantile z), from the estimate ``est`` (length k, or one
        value of ``estimate_one``) of n reports.

        Var is ``variance(n, f)`` at the plug-in f = est_j clipped to [0, n]; with
        ``conservative=True`` it is the worst case over every true count f in [0, n] (the
        variance is linear in f, so the larger of f = 0 and f = n), the same width for every
        item. The normal approximation is asymptotic (a count is a sum of n independent
        Bernoulli reports), so coverage is close to ``level`` when n a0 and the counts are not
        tiny; it is per item, not simultaneous: among k items about (1 - level) k intervals
        miss (for all items at once use level 1 - alpha/k). The true count lies in [0, n]:
        intersecting an interval with it keeps its coverage.

        Parameters
        ----------
        est : float or numpy.ndarray
            The estimate (length k, or one value of ``estimate_one``).
        n : int
            The number of reports it comes from.
        level : float, default 0.95
            The confidence level, in (0, 1).
        conservative : bool, default False
            Use the worst-case variance over every true count (see above).
        """
        est = check_estimates(est, "est", self.k, scalar=True)
        n = integer_at_least(n, "n", 0)
        return binary_intervals(est, n, self.a0, self.a1, level, conservative)
