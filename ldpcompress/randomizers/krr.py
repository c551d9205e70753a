"""k-ary randomized response (docs/theory.md §2.4, §5.2).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..core import validate as V
from ..core.prg import word_at
from ..core.lazy import lazy_module
from .base import FrequencyOracle, check_eps
from .threads import chunks_for
from . import cost as C
from .contract import Cost, LocalRandomizer, Privacy, fast_hook, paired, seed_batch, seeds_array
from .registry import register
from .estimator import integer_reports
from .structure import ShuffleStructure, kept

__all__ = ['KRR']

_seeds = lazy_module("ldpcompress.kernels.seeds")  # Numba: compiled at first use


@register
class KRR(FrequencyOracle):
    """k-ary randomized response (replacement eps): y = x w.p. e^eps/(e^eps+k-1), else uniform
    other. rho = Uniform[k]; ratio = k e^eps/(e^eps+k-1) at y = x, k/(e^eps+k-1) otherwise.
    A report is the item it names (ceil(log2 k) bits).

    Parameters
    ----------
    k : int
        Domain size: inputs are items 0..k-1 (k >= 2).
    eps : float
        The local privacy parameter (> 0).
    """

    name, privacy = "krr", Privacy.REPLACEMENT

    def __init__(self, k: int, eps: float):
        self.k = V.domain_size(k)
        self.eps = check_eps(eps)
        self.bits_per_report = max(1, math.ceil(math.log2(self.k)))
        z = math.exp(eps) + self.k - 1
        self.a1, self.a0 = math.exp(eps) / z, 1.0 / z
        x = math.exp(-self.eps)
        self.a1c = (self.k - 1) * x / (1.0 + (self.k - 1) * x)  # 1 - a1, no cancellation
        self.deletion_eps = max(math.log(self.k * self.a1), -math.log(self.k * self.a0))

    def params(self) -> dict:
        return {"k": self.k, "eps": self.eps}

    def ratio_bounds(self):
        return self.k * self.a0, self.k * self.a1

    def shuffle_structure(self) -> ShuffleStructure:
        """w = uniform item; b(y, x) = [y = x]: Pr[y = x] = a1, every other item
        (1 - a1)/(k - 1) as implemented; two items are never both supported; t3 = 1/k."""
        k = self.k
        return ShuffleStructure("krr", (("k", k), ("a1", self.a1)), Fraction(1, k), kept(self.a1c),
                                Fraction(0), Fraction(1, k), False,
                                Fraction(1, k) if k >= 3 else None)

    def sample(self, prg):
        return int(prg.integers(self.k, 1)[0])

    def ratio(self, x, y):
        return self.k * (self.a1 if y == x else self.a0)

    def ratio_from_seed(self, x, seed):
        w = word_at(seed, 0)  # the sampler's first word decides y unless it is rejected
        if w < (2 ** 64 // self.k) * self.k:
            return self.ratio(x, w % self.k)
        return self.ratio(x, self.decode_seed(seed))

    # compressed reports in batches (public seeds: the server, simulations; kernels/seeds.py)
    @seed_batch
    def decode_seeds(self, seeds) -> np.ndarray:
        """The items the seeds stand for (the first accepted word mod k): int64 (n,)."""
        seeds = seeds_array(seeds)
        return _seeds.bounded_draws(seeds, np.array([self.k], dtype=np.int64),
                                    chunks_for(len(seeds)))[:, 0]

    @seed_batch
    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        xs, seeds = self.check_items(xs), seeds_array(seeds)
        paired(xs, seeds)
        return np.where(self.decode_seeds(seeds) == xs, self.k * self.a1, self.k * self.a0)

    def _randomize_many(self, xs, entropy):
        keep = entropy.uniform(xs.size) >= self.a1c
        other = entropy.integers(self.k - 1, xs.size)
        other = other + (other >= xs)
        return np.where(keep, xs, other)

    def check_reports(self, reports) -> np.ndarray:
        """Reports are items: a 1-D integer array with every entry in [0, k)."""
        return integer_reports(reports, self.k, what="item")

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """Per call: the reports checked (a few passes) and one ``bincount`` into k entries
        (random updates of a k-entry table), then its int64 copy: n (checks + one scattered
        update) + calls x k (the table made, copied, added). Seeds: first the seed's draw
        (``decode_seeds``: a key expansion and a word each). Memory: the table and its copy,
        the validated (and decoded) items."""
        if seeds and not fast_hook(self, "decode_seeds"):
            return LocalRandomizer.summary_cost(self, n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        table = 8 * self.k
        per = 4 * C.SIMPLE + C.scattered(C.BINCOUNT, table) + (C.SEED if seeds else 0.0)
        ops = n * per + calls * (C.CALL + self.k * (C.BINCOUNT + 4 * C.SIMPLE))
        return Cost(ops, 3 * table + b * 8 * (3 if seeds else 2),
                    f"n = {n} items counted into k = {self.k} entries, {calls} call(s)")
