"""Unbiased frequency estimators of binary-report oracles (docs/theory.md §6, §6).

Every oracle whose report "supports" item j with probability a1 when the user holds j and a0
otherwise (RAPPOR, PI-RAPPOR, k-RR, subset selection, ...) has the estimator
f_j = (count_j - n a0) / (a1 - a0) and variance
(n a0 (1-a0) + f_j (a1 (1-a1) - a0 (1-a0))) / (a1 - a0)^2
(for RAPPOR this is §6's n a0(1-a0)/(a1-a0)^2 + f_j (1-a0-a1)/(a1-a0)).
"""
from __future__ import annotations

import numpy as np

from ..core.limits import array_bytes, check_bytes
from ..core.validate import integer_at_least

__all__ = ["integer_reports", "histogram_bytes", "check_separated", "binary_estimate",
           "binary_variance", "BinaryEstimator"]



def _first_bad(mask: np.ndarray) -> int:
    """Index of the first report (row) flagged in mask (1-D or 2-D)."""
    rows = mask if mask.ndim == 1 else mask.any(axis=tuple(range(1, mask.ndim)))
    return int(np.flatnonzero(rows)[0])


def _as_array(reports) -> np.ndarray:
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
    arr = _as_array(reports)
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
                i = _first_bad(bad)
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
        i = _first_bad(bad)
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


def binary_estimate(counts, n: int, a0: float, a1: float) -> np.ndarray:
    """(count_j - n a0) / (a1 - a0) for every j."""
    check_separated(a0, a1)
    return (np.asarray(counts, dtype=float) - n * a0) / (a1 - a0)


def binary_variance(n: int, f, a0: float, a1: float):
    """Variance of binary_estimate at true counts f (scalar or array)."""
    check_separated(a0, a1)
    f = np.asarray(f, dtype=float)
    return (n * a0 * (1 - a0) + f * (a1 * (1 - a1) - a0 * (1 - a0))) / (a1 - a0) ** 2


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
        kernels; ValueError/TypeError naming the first bad report. Subclasses define it."""
        raise NotImplementedError

    def _count(self, reports) -> np.ndarray:
        """Support counts of every item from reports already passed by check_reports."""
        raise NotImplementedError

    def counts(self, reports) -> np.ndarray:
        """How many reports support each item (length k, int64)."""
        return self._count(self.check_reports(reports))

    def n_reports(self, reports) -> int:
        return len(reports)

    def check_item_index(self, j) -> int:
        """An item index j in [0, k) (integral floats such as 3.0 accepted)."""
        return integer_at_least(j, "j", 0, self.k - 1)

    def _count_one(self, reports, j: int) -> int:
        return int(self._count(reports)[j])

    def count_one(self, reports, j: int) -> int:
        """How many reports support item j."""
        j = self.check_item_index(j)
        return self._count_one(self.check_reports(reports), j)

    def estimate(self, reports) -> np.ndarray:
        """Unbiased counts of every item (an empty batch gives all zeros, n = 0)."""
        reports = self.check_reports(reports)
        return binary_estimate(self._count(reports), self.n_reports(reports), self.a0, self.a1)

    def estimate_one(self, reports, j: int) -> float:
        j = self.check_item_index(j)
        reports = self.check_reports(reports)
        return float(binary_estimate(self._count_one(reports, j), self.n_reports(reports),
                                     self.a0, self.a1))

    def variance(self, n: int, f=0.0):
        """Variance of the estimate of an item with true count f among n reports."""
        return binary_variance(n, f, self.a0, self.a1)
