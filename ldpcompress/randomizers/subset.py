"""Subset selection: a d-subset of the items (docs/theory.md §5.2).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..core import validate as V
from ..core.coins import client_stream, uniform_subsets
from ..core.limits import array_bytes, check_bytes
from ..core.lazy import lazy_module
from .base import FrequencyOracle, check_eps
from .threads import chunks_for
from . import cost as C
from .contract import (Column, Cost, LocalRandomizer, Privacy, fast_hook, int_dtype,
                       paired, seed_batch, seeds_array)
from .estimator import first_flagged_row, histogram_bytes, integer_reports
from .registry import register
from .structure import ShuffleStructure, kept

__all__ = ['SubsetSelection']

# imported at first use (Numba compiles the kernels then)
_field = lazy_module("ldpcompress.kernels.field")
_sample = lazy_module("ldpcompress.kernels.sample")
_seeds = lazy_module("ldpcompress.kernels.seeds")


@register
class SubsetSelection(FrequencyOracle):
    """d-subset of [k] containing x w.p. p = d e^eps/(d e^eps + k - d) (replacement eps).
    rho = uniform d-subset; ratio = p k/d if x in S else (1-p) k/(k-d). A user holding j' != j
    reports j w.p. a0 = (p (d-1) + (1-p) d)/(k-1). A report is d ceil(log2 k) bits.

    Parameters
    ----------
    k : int
        Domain size: inputs are items 0..k-1 (k >= 2).
    eps : float
        The local privacy parameter (> 0).
    d : int, optional
        The subset size, in [1, k - 1] (default: round(k / (e^eps + 1)), at least 1).
    """

    name, privacy = "subset", Privacy.REPLACEMENT

    def __init__(self, k: int, eps: float, d: int | None = None):
        self.k = V.domain_size(k)
        self.eps = check_eps(eps)
        if d is None:
            d = max(1, min(self.k - 1, round(self.k / (math.exp(eps) + 1))))
        self.d = V.integer_at_least(d, "d", 1, self.k - 1)
        self.bits_per_report = self.d * max(1, math.ceil(math.log2(self.k)))
        # in log space: d e^eps may overflow, and 1 - a1 = (k-d)/(d e^eps + k - d) must not be
        # computed as 1 - a1 (it rounds to 0 from eps ~ 37 on)
        log_total = float(np.logaddexp(math.log(self.d) + self.eps, math.log(self.k - self.d)))
        self.a1 = math.exp(math.log(self.d) + self.eps - log_total)
        self.q1 = math.exp(math.log(self.k - self.d) - log_total)  # 1 - a1
        self.a1c = self.q1  # clients draw 'exclude x' w.p. a1c (structure.kept)
        self.a0 = (self.a1 * (self.d - 1) + self.q1 * self.d) / (self.k - 1)
        self.deletion_eps = max(abs(self.eps + math.log(self.k) - log_total),
                                abs(math.log(self.k) - log_total))

    def params(self) -> dict:
        return {"k": self.k, "eps": self.eps, "d": self.d}

    def plateau(self) -> tuple:
        """(d,): the subset size round(k/(e^eps + 1)) jumps with eps."""
        return (self.d,)

    def _subset(self, ints: np.ndarray) -> np.ndarray:
        """Partial Fisher-Yates: the first d entries of a permutation of [k] driven by ints[i]
        in [0, k - i)."""
        perm = np.arange(self.k)
        for i in range(self.d):
            j = i + int(ints[i])
            perm[i], perm[j] = perm[j], perm[i]
        return np.sort(perm[: self.d])

    def ratio_bounds(self):
        return sorted((self.a1 * self.k / self.d, self.q1 * self.k / (self.k - self.d)))

    def shuffle_structure(self) -> ShuffleStructure:
        """w = uniform d-subset; R_x(S)/w(S) = a1 k/d if x in S else (1-a1) k/(k-d). Two items
        are both in S w.p. d(d-1)/(k(k-1)); t3 = Pr[x1 in S, x1', x3 not] =
        d (k-d)(k-d-1)/(k (k-1)(k-2))."""
        k, d = self.k, self.d
        t3 = Fraction(d * (k - d) * (k - d - 1), k * (k - 1) * (k - 2)) if k >= 3 and d < k - 1 \
            else None
        return ShuffleStructure("subset", (("k", k), ("d", d), ("a1", self.a1)), Fraction(d, k),
                                kept(self.a1c),
                                Fraction(d * (d - 1), k * (k - 1)),
                                Fraction(d * (k - d), k * (k - 1)), False, t3)

    def sample(self, prg):
        ints = np.array([prg.integers(self.k - i, 1)[0] for i in range(self.d)])
        return self._subset(ints)

    def ratio(self, x, y):
        inside = bool(np.any(np.asarray(y) == x))
        return self.a1 * self.k / self.d if inside else self.q1 * self.k / (self.k - self.d)

    # compressed reports in batches (public seeds: the server, simulations; kernels/seeds.py)
    @seed_batch
    def decode_seeds(self, seeds) -> np.ndarray:
        """The sorted d-subsets the seeds stand for: int64 (n, d)."""
        seeds = seeds_array(seeds)
        check_bytes(array_bytes((len(seeds), 2 * self.d)), f"{len(seeds)} decoded "
                    f"{self.d}-subsets", "the number of reports (decode in batches)")
        draws = _seeds.bounded_draws(seeds, np.arange(self.k, self.k - self.d, -1,
                                                      dtype=np.int64), chunks_for(len(seeds)))
        return np.sort(_sample.partial_shuffles(draws, self.k), axis=1)

    @seed_batch
    def summarize_seeds(self, seeds) -> np.ndarray:
        """How many decoded subsets hold each item, without materialising them: int64[k]."""
        seeds = seeds_array(seeds)
        chunks = chunks_for(len(seeds), self.k)
        histogram_bytes(self.k, chunks)
        return _seeds.subset_counts(seeds, self.k, self.d, chunks)

    @seed_batch
    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        xs, seeds = self.check_items(xs), seeds_array(seeds)
        paired(xs, seeds)
        inside = _seeds.subset_hits(seeds, xs, self.k, self.d, chunks_for(len(seeds), self.k))
        return np.where(inside, self.a1 * self.k / self.d, self.q1 * self.k / (self.k - self.d))

    def _randomize_many(self, xs, entropy):
        """Rows of sorted d-subsets: w.p. a1 (drawn as 'not excluded', ``uniform() >= a1c``,
        see structure.kept) x and a uniform (d-1)-subset of the k-1 other items, else a uniform
        d-subset of the others -- Floyd's algorithm with exact integer draws, from a fresh
        AES-CTR stream keyed by the entropy source (core.coins.uniform_subsets)."""
        n = xs.size
        # the reports, and the sampler's O(d) scratch (at most 4 rows' worth)
        check_bytes(array_bytes((n + 4, self.d)), f"subset-selection reports for n = {n} "
                    f"x d = {self.d}", "n (batch the inputs)")
        stream = client_stream(entropy)
        include = stream.uniform(n) >= self.a1c
        return uniform_subsets(stream, xs, self.k, self.d, include)

    def check_reports(self, reports) -> np.ndarray:
        """Reports are d-subsets: shape (n, d), entries in [0, k), distinct within a row (a
        repeated item would count one user several times)."""
        if (isinstance(reports, np.ndarray) and reports.dtype == np.int64
                and reports.shape[1:] == (self.d,) and reports.ndim == 2 and reports.shape[0]
                and _field.first_unsorted_row(reports, self.k) < 0):
            return reports  # the client's canonical form (sorted rows in [0, k)): one pass
        arr = integer_reports(reports, self.k, width=self.d, what="item")
        if self.d > 1 and arr.shape[0]:
            srt = np.sort(arr, axis=1)  # only for rows not already sorted (the client sorts)
            dup = srt[:, 1:] == srt[:, :-1]
            if dup.any():
                i = first_flagged_row(dup)
                raise ValueError(f"report {i}: items {arr[i].tolist()} repeat an item (a "
                                 f"{self.d}-subset has distinct items)")
        return arr

    def _count(self, ys) -> np.ndarray:
        histogram_bytes(self.k)
        return np.bincount(ys.ravel(), minlength=self.k).astype(np.int64)

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """Reports: d items each checked (sorted rows: one pass, else a sorted copy) and counted
        by ``bincount`` into k entries (scattered updates), n d steps, plus k per call; memory
        the table, its copy and the batch's copies. Seeds (``subset_counts``): d draws and
        swaps in a k-entry permutation per seed (scattered), per call every chunk's count row
        and permutation of k entries (made, added), held at once."""
        if seeds and not fast_hook(self, "summarize_seeds"):
            return LocalRandomizer.summary_cost(self, n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        k, d, table = self.k, self.d, 8 * self.k
        if not seeds:
            ops = n * d * (6 * C.SIMPLE + C.scattered(C.BINCOUNT, table)) \
                + calls * (C.CALL + k * (C.BINCOUNT + 3 * C.SIMPLE))
            return Cost(ops, 3 * table + b * d * 8 * 4,
                        f"n x d = {n} x {d} items counted into k = {k} entries")
        chunks = chunks_for(b, k)
        ops = n * (C.SEED + d * (C.DRAW + 3 * C.scattered(0.0, table))) \
            + calls * (C.CALL + 3 * chunks * k * C.SIMPLE)
        peak = (chunks + 1) * table + min(chunks, C.threads()) * (table + 16 * d) + b * 16
        return Cost(ops, peak, f"n x d = {n} x {d} draws decoded in a {k}-item permutation")

    def report_columns(self) -> tuple[Column, ...]:
        return (Column("items", int_dtype(self.k), self.d),)

    def _to_columns(self, reports) -> dict[str, np.ndarray]:
        items = reports.astype(int_dtype(self.k))
        return {"items": items[:, 0] if self.d == 1 else items}  # a width-1 column is 1-D

    def _from_columns(self, columns) -> np.ndarray:
        return np.asarray(columns["items"]).reshape(-1, self.d)  # check_reports follows
