"""The frequency oracles' common server and helpers shared by the randomizers
(docs/theory.md §1, §5, §6).

:class:`FrequencyOracle` is the contract (``contract.LocalRandomizer``) for randomizers whose
reports *support* items (RAPPOR, k-RR, subset selection, OLH, Hadamard, PI-RAPPOR): their
summary is the support counts of the k items, their estimator and variance follow from
(a0, a1) (``estimator.BinaryEstimator``). A subclass states its identity, privacy, client,
report validation and storage, and counts.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import validate as V
from ..core.limits import array_bytes, check_bytes
from ..core.numerics import EXP_MAX
from .contract import Column, LocalRandomizer, Privacy, SummarySpec, int_dtype
from .threads import CHUNK_TABLE_BYTES, chunked_counts, chunks_for, num_threads
from .estimator import BinaryEstimator, check_flag, histogram_bytes, integer_reports

__all__ = ['EPS_MIN', 'FrequencyOracle', 'check_eps', 'check_flag', 'check_batch_bytes',
           'chunks_for', 'num_threads', 'chunked_counts', 'CHUNK_TABLE_BYTES']


EPS_MIN = 1e-12  # below ~1e-16 the coins e^eps/(e^eps + c) round to their eps = 0 values


def check_eps(eps) -> float:
    """eps in [EPS_MIN, EXP_MAX]: e^eps must stay a finite double, and the coins' probabilities
    must differ from those of eps = 0 (HadamardResponse(2, 1e-17) had a1 == a0: reports with no
    information and an estimator dividing by 0; subset selection's rounded a1 fell below a0)."""
    v = V.positive_finite(eps, "eps")
    if not EPS_MIN <= v <= EXP_MAX:
        raise ValueError(f"eps must be in [{EPS_MIN:g}, {EXP_MAX:g}] (below, the coins round to "
                         f"those of eps = 0; above, e^eps is not finite), got {eps!r}")
    return v


def check_batch_bytes(n: int, k: int, itemsize: int, what: str, max_bytes=None) -> None:
    """Refuse an n x k client-side table (RAPPOR bits, subset keys) above the memory limit."""
    check_bytes(array_bytes((n, k), np.float64) * itemsize // 8,
                f"{what} for n = {n} reports x k = {k}", "n (batch the inputs) or k", max_bytes)


class FrequencyOracle(LocalRandomizer, BinaryEstimator):
    """A randomizer over items [0, k) whose report supports item j with probability a1 when
    the user holds j and a0 otherwise. Summary: the support counts (int64[k]); estimates and
    intervals from ``BinaryEstimator``. Subclasses set name, k, eps, privacy, a0, a1,
    bits_per_report and define ``params`` and the client hook ``_randomize_many``; by default
    a report is the item it supports (an integer in [0, k), counted by the hook ``_count``'s
    histogram), stored in one column ``report``. Other reports set ``report_high`` (integers
    in [0, report_high)) or override ``check_reports`` and the storage hooks, and implement
    ``_count`` (support counts of checked reports)."""

    k: int
    privacy: Privacy

    def check_items(self, xs) -> np.ndarray:
        """Items as an int64 array, each in [0, k)."""
        return V.items(xs, self.k)

    def check_item(self, x) -> int:
        return V.item(x, self.k)

    # -- server ------------------------------------------------------------------------------
    intervals = BinaryEstimator.intervals

    def summary_spec(self) -> SummarySpec:
        return SummarySpec((self.k,), "int64")

    def _summarize(self, reports) -> np.ndarray:
        if type(self).summarize is not LocalRandomizer.summarize:  # a subclass's own summarize
            return self.summarize(reports)
        return self._count(reports)

    def estimate_from_summary(self, summary, n: int) -> np.ndarray:
        """(count_j - n a0) / (a1 - a0); the counts must be integers in [0, n] (a summary
        from another process or file is untrusted too)."""
        n = V.integer_at_least(n, "n", 0)
        counts = np.asarray(summary)
        if counts.shape != (self.k,) or counts.dtype.kind not in "iu":
            raise ValueError(f"a {self.name} summary is int64[{self.k}] support counts, got "
                             f"{counts.dtype}{list(counts.shape)}")
        if counts.size and (counts.min() < 0 or counts.max() > n):
            raise ValueError(f"support counts must be in [0, n = {n}], got values in "
                             f"[{counts.min()}, {counts.max()}]")
        return self._estimate_from_summary(counts, n)

    def _estimate_from_summary(self, summary: np.ndarray, n: int) -> np.ndarray:
        """Hook: the estimates of support counts of n checked reports, unchecked."""
        from .estimator import binary_estimate
        return binary_estimate(summary, n, self.a0, self.a1)

    def _count(self, reports) -> np.ndarray:
        """Hook: support counts of checked reports. Default: a report is the one item it
        supports (k-RR, yes/no), so the counts are its histogram over [0, k); a subclass whose
        reports are not items (``report_high`` != k, or other report shapes) implements it."""
        if self.report_high != self.k:
            raise NotImplementedError(f"{type(self).__name__}: its reports are not items "
                                      "(report_high != k): implement _count(reports)")
        histogram_bytes(self.k)
        return np.bincount(reports, minlength=self.k).astype(np.int64)

    # -- storage: one integer column by default (reports are integers in [0, report_high)) ---
    @property
    def report_high(self) -> int:
        """Reports are integers in [0, report_high): k (reports are items) unless a subclass
        sets it (Hadamard: the code length K)."""
        return self.__dict__.get("_report_high", self.k)

    @report_high.setter
    def report_high(self, value: int) -> None:
        self.__dict__["_report_high"] = value

    def report_columns(self) -> tuple[Column, ...]:
        return (Column("report", int_dtype(self.report_high)),)

    def check_reports(self, reports) -> Any:
        """Reports as int64, each in [0, report_high) (subclasses with other reports
        override it)."""
        return integer_reports(reports, self.report_high, what="report")

    def _to_columns(self, reports) -> dict[str, np.ndarray]:
        return {"report": reports.astype(self.report_columns()[0].dtype)}

    def _from_columns(self, columns) -> Any:  # an array here; PIRappor's FieldReports
        return columns["report"]  # check_reports follows
