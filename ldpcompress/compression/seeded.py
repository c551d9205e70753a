"""What the three kinds of compressed reports share (FT21 Alg. 1; docs/theory.md §5.1-§5.3):
a report is K 17-byte seed reports (``wire``) of an inner randomizer, and the server
decodes, summarises and estimates from their seeds through the inner randomizer's batch hooks
(``decode_seeds``, ``summarize_seeds``, ``estimate_from_summary``).

:class:`SeedReports` is the base of the pseudo-randomizer (``sampler.PseudoRandomizer``, one
seed a report), the K-copy PrivUnit2 (``split.CompressedPrivUnit2``, K seeds a report, the
decoded vector the mean of the copies) and the compressed randomizer of the contract
(``compressed.CompressedRandomizer``, one seed a report, summarised ``SEED_BATCH`` seeds at
a time); their differences are the data below.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.chunks import spans
from . import wire

__all__ = ["SeedReports"]


class SeedReports:
    """The server verbs of compressed reports: ``seeds``, ``decode_many``, ``summarize`` and
    ``estimate``, every report validated once (in ``seeds``).

    A subclass sets ``inner`` (the randomizer whose outputs the seeds stand for), and may set
    ``group`` (K: a report is a list of K seed reports, an (n, K, 17) array; default None,
    one seed a report) and ``seeds_per_call`` (seeds handed to the inner
    ``summarize_seeds`` at a time; None: all at once).
    """

    inner: Any
    group: int | None = None  # K when a report is a list of K seed reports (even K = 1)
    seeds_per_call: int | None = None

    @property
    def copies(self) -> int:
        """K, the seeds per report."""
        return 1 if self.group is None else self.group

    def seeds(self, reports) -> np.ndarray:
        """The (n K, 16) uint8 seeds of a batch of n reports, every report validated
        (``wire.seed_rows``: a blob of n K 17 bytes, an (n, 17) or (n, K, 17) uint8 array, or
        a sequence of reports, each a list of K when K > 1).

        Parameters
        ----------
        reports
            A batch of compressed reports (untrusted: validated).
        """
        return wire.seed_rows(reports, self.group)

    def decode_many(self, reports):
        """The inner randomizer's outputs the reports stand for, as one batch (with K copies:
        the mean of each report's K outputs).

        Parameters
        ----------
        reports
            A batch of compressed reports (untrusted: validated).
        """
        return self._decode_seed_rows(self.seeds(reports))

    def _decode_seed_rows(self, seeds: np.ndarray):
        """The outputs of validated seeds (``seeds``' result), K copies averaged."""
        out = self.inner.decode_seeds(seeds)
        if self.group is None:
            return out
        return out.reshape(len(seeds) // self.group, self.group, *out.shape[1:]).mean(axis=1)

    def summarize(self, reports) -> np.ndarray:
        """The inner randomizer's additive summary of the outputs the reports stand for,
        without materialising them where it has a batch hook (K copies: divided by K).

        Parameters
        ----------
        reports
            A batch of compressed reports (untrusted: validated).
        """
        return self._summarize_seed_rows(self.seeds(reports))

    def _summarize_seed_rows(self, seeds: np.ndarray) -> np.ndarray:
        """The summary of validated seeds (``seeds``' result)."""
        if self.seeds_per_call is None:
            total = self.inner.summarize_seeds(seeds)
        else:
            spec = self.inner.summary_spec()
            total = np.zeros(spec.shape, spec.dtype)
            for span in spans(seeds.shape[0], self.seeds_per_call):
                total += self.inner.summarize_seeds(seeds[span])
        return total if self.group is None else total / self.group

    def estimate(self, reports) -> np.ndarray:
        """The inner randomizer's unbiased estimates from a batch of reports.

        Parameters
        ----------
        reports
            A batch of compressed reports (untrusted: validated).
        """
        seeds = self.seeds(reports)
        return self.inner.estimate_from_summary(self._summarize_seed_rows(seeds),
                                                len(seeds) // self.copies)
