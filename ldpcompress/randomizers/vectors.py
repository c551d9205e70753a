"""The common server of mean estimators on the unit ball (docs/theory.md §7): inputs are
vectors of norm <= 1 in dimension d, reports are vectors of one known norm (PrivUnit2: 1/m;
the one-bit baseline: B), each an unbiased estimate of its input. The summary of a batch is the
sum of its reports (float64[d]); the estimate of the mean is summary / n.
"""
from __future__ import annotations

import numpy as np

from ..core import validate as V
from . import cost as C
from .contract import Column, Cost, LocalRandomizer, SummarySpec

__all__ = ["NORM_SLACK", "REPORT_NORM_RTOL", "check_vectors", "VectorMeanEstimator"]

NORM_SLACK = 1e-9        # an input of norm 1 + NORM_SLACK still counts as a unit vector
REPORT_NORM_RTOL = 1e-9  # a report's norm may differ from the stated one by this (rounding)


def check_vectors(xs, d: int, what: str = "input vector", max_norm: float = 1.0 + NORM_SLACK,
                  exact_norm: float | None = None) -> np.ndarray:
    """A (n, d) array of finite real vectors, each of norm <= max_norm (or of norm exact_norm,
    within REPORT_NORM_RTOL); TypeError/ValueError naming the first bad row. Complex,
    boolean, object or string data are refused (never silently cast)."""
    arr = np.asarray(xs)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{what}s must be real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(f"{what}s must be an array of shape (n, {d}), got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if arr.shape[0] == 0:
        return arr
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise ValueError(f"{what} {i} is not finite")
    norms = np.sqrt(np.einsum("ij,ij->i", arr, arr))
    if exact_norm is not None:
        bad = np.abs(norms - exact_norm) > REPORT_NORM_RTOL * exact_norm
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{what} {i} has norm {norms[i]:.12g}; every report of this "
                             f"randomizer has norm {exact_norm:.12g} (a malformed or hostile "
                             "report)")
    elif (norms > max_norm).any():
        i = int(np.flatnonzero(norms > max_norm)[0])
        raise ValueError(f"{what} {i} has norm {norms[i]:.6g}, above 1")
    return arr


class VectorMeanEstimator(LocalRandomizer):
    """Server of a mean estimator with reports of norm ``report_norm`` (subclasses set d and
    report_norm and give the client, intervals and identity)."""

    d: int
    report_norm: float

    def check_items(self, xs) -> np.ndarray:
        """Inputs as a (n, d) float array, each of norm <= 1."""
        return check_vectors(xs, self.d)

    def check_item(self, x) -> np.ndarray:
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ValueError(f"input must be a vector of dimension {self.d}, got shape "
                             f"{arr.shape}")
        return check_vectors(arr[None], self.d)[0]

    def check_reports(self, reports) -> np.ndarray:
        """Reports as a (n, d) float64 array, every row finite and of norm report_norm."""
        return check_vectors(reports, self.d, "report", exact_norm=self.report_norm)

    def summary_spec(self) -> SummarySpec:
        return SummarySpec((self.d,), "float64")

    def _summarize(self, reports) -> np.ndarray:
        """The sum of the reports (float64[d])."""
        return reports.sum(axis=0)

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """Every coordinate of every report checked (finite, norm) and summed: n d steps;
        memory a mask and a copy of the batch, the sum. Seeds: the contract's default unless
        a subclass states better."""
        if seeds:
            return super().summary_cost(n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        d = self.d
        return Cost(n * d * C.FLOAT_ROW + calls * (C.CALL + 2 * d * C.SIMPLE),
                    b * d * 9 + b * 16 + 3 * 8 * d, f"n x d = {n} x {d} coordinates summed")

    def estimate_from_summary(self, summary, n: int) -> np.ndarray:
        """summary / n; the summary of n reports has norm <= n report_norm (checked)."""
        n = V.users(n)
        s = np.asarray(summary)
        if s.shape != (self.d,) or s.dtype.kind != "f" or not np.isfinite(s).all():
            raise ValueError(f"a {self.name} summary is a finite float64[{self.d}] sum of "
                             f"reports, got {s.dtype}{list(s.shape)}")
        if float(np.linalg.norm(s)) > n * self.report_norm * (1 + 1e-9):
            raise ValueError(f"a sum of {n} reports has norm at most {n} x {self.report_norm:.6g}")
        return s / n

    def report_columns(self) -> tuple[Column, ...]:
        return (Column("z", "float64", self.d),)

    def _to_columns(self, reports) -> dict[str, np.ndarray]:
        return {"z": reports}

    def _from_columns(self, columns) -> np.ndarray:
        return columns["z"]

    def _randomize_many(self, xs, entropy) -> np.ndarray:
        """One report per checked row of xs (the one-input hook ``_randomize_one`` in a loop)."""
        out = np.empty((xs.shape[0], self.d))
        for i, x in enumerate(xs):
            out[i] = self._randomize_one(x, entropy)
        return out
