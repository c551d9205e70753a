"""RAPPOR (unary encoding with bit flips), symmetric and asymmetric (OUE)
(docs/theory.md §5.2, §6).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import validate as V
from ..core.coins import bernoulli_bits, client_stream
from ..core.prg import stream_words_at, uniform_at, uniform_limit
from ..core.lazy import lazy_module
from .base import FrequencyOracle, check_batch_bytes, check_eps, check_flag
from .threads import chunks_for
from . import cost as C
from .contract import (Column, Cost, LocalRandomizer, Privacy, fast_hook, paired,
                       seed_batch, seeds_array)
from .registry import register
from .estimator import integer_reports, rectangular_array
from .structure import ShuffleStructure, coin, independent_structure, kept

__all__ = ['RAPPOR', 'OUE', 'SYMMETRIC_EPS_MAX']

_seeds = lazy_module("ldpcompress.kernels.seeds")  # Numba: compiled at first use


SYMMETRIC_EPS_MAX = 36.0  # 1/(e^eps+1) must stay above 2^-53 (float 1 - a0 < 1)

@register
class RAPPOR(FrequencyOracle):
    """Unary encoding with independent bit flips: k bits per report. ``symmetric=True`` (the
    default, the classic RAPPOR): a1 = 1 - a0, a0 = 1/(e^eps+1), deletion eps-DP (replacement
    2 eps). ``symmetric=False`` (see :class:`OUE`): a1 = 1/2, a0 = 1/(e^eps+1), replacement
    eps-DP (deletion log((e^eps+1)/2) w.r.t. rho). rho = iid Bern(a0) bits; bit j of the sample
    is [u_j < a0] for the j-th uniform of the stream, so ratio needs one word. Stored as the
    k bits packed into ceil(k/8) bytes (the wire format).

    Parameters
    ----------
    k : int
        Domain size: inputs are items 0..k-1 (k >= 2).
    eps : float
        The local privacy parameter (> 0). (deletion eps when symmetric, else replacement eps).
    symmetric : bool, default True
        The classic symmetric RAPPOR (True) or the asymmetric one of OUE (False).
    """

    name = "rappor"

    def __init__(self, k: int, eps: float, symmetric: bool = True):
        self.k = V.domain_size(k)
        self.eps = check_eps(eps)
        self.bits_per_report = self.k
        self.symmetric = check_flag(symmetric, "symmetric")
        if symmetric and self.eps > SYMMETRIC_EPS_MAX:  # 1 - a0 would round to 1: no flips
            raise ValueError(f"eps must be at most {SYMMETRIC_EPS_MAX:g} for symmetric RAPPOR "
                             f"(a flip probability 1/(e^eps+1) below 2^-53 cannot be drawn by "
                             f"the client's 53-bit coins), got {eps!r}")
        self.a0 = 1.0 / (math.exp(self.eps) + 1.0)
        self.a1 = 1.0 - self.a0 if symmetric else 0.5
        self.a1c = self.a0 if symmetric else 0.5
        self.privacy = Privacy.DELETION if symmetric else Privacy.REPLACEMENT
        self.deletion_eps = max(math.log(self.a1 / self.a0),
                                math.log((1 - self.a0) / (1 - self.a1)))

    def params(self) -> dict:
        return {"k": self.k, "eps": self.eps, "symmetric": self.symmetric}

    @property
    def replacement_eps(self) -> float:
        """Symmetric: 2 eps (two bits differ); asymmetric: eps."""
        return 2.0 * self.eps if self.symmetric else self.eps

    def ratio_bounds(self):
        return sorted((self._bit_ratio(True), self._bit_ratio(False)))

    def shuffle_structure(self) -> ShuffleStructure:
        """w = iid Bern(a0) bits: bit x ~ Bern(a1) under R_x, every other bit Bern(a0), so the
        bits of any items are independent under w."""
        return independent_structure("rappor", (("k", self.k), ("a0", self.a0), ("a1", self.a1),
                                                ("symmetric", self.symmetric)),
                                     coin(self.a0), kept(self.a1c),
                                     triple_independent=self.k >= 3)

    def sample(self, prg):
        return prg.uniform(self.k) < self.a0

    def _bit_ratio(self, bit: bool) -> float:
        return self.a1 / self.a0 if bit else (1 - self.a1) / (1 - self.a0)

    def ratio(self, x, y):
        return self._bit_ratio(bool(y[x]))

    def ratio_from_seed(self, x, seed):
        return self._bit_ratio(uniform_at(seed, x) < self.a0)

    # compressed reports in batches (public seeds: the server, simulations; kernels/seeds.py)
    @seed_batch
    def decode_seeds(self, seeds) -> np.ndarray:
        """The k-bit rows the seeds stand for, bit j = [u_j < a0]: bool (n, k)."""
        seeds = seeds_array(seeds)
        check_batch_bytes(len(seeds), self.k, 1, "decoded RAPPOR bits")
        return _seeds.unary_bits(seeds, self.k, uniform_limit(self.a0),
                                 chunks_for(len(seeds)))

    @seed_batch
    def summarize_seeds(self, seeds) -> np.ndarray:
        """The bit counts of the decoded rows, straight from the keystream: int64[k]."""
        seeds = seeds_array(seeds)
        return _seeds.unary_counts(seeds, self.k, uniform_limit(self.a0),
                                   chunks_for(len(seeds), 2 * self.k))

    @seed_batch
    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        """ratio(x_i, decoded row i) from one keystream word each (word x_i)."""
        xs, seeds = self.check_items(xs), seeds_array(seeds)
        paired(xs, seeds)
        bits = stream_words_at(seeds, xs) < uniform_limit(self.a0)
        return np.where(bits, self._bit_ratio(True), self._bit_ratio(False))

    def _randomize_many(self, xs, entropy):
        """k-bit rows: every bit Bern(coin(a0)), then bit x replaced by Bern(kept(a1c)) --
        exactly ``uniform() < a0`` and ``uniform() >= a1c`` per bit (structure.coin, kept),
        drawn in bulk from a fresh AES-CTR stream keyed by the entropy source
        (core.coins.bernoulli_bits: ~8 stream bits per coin, temporaries bounded)."""
        check_batch_bytes(xs.size, self.k, 1, "RAPPOR client bits")
        stream = client_stream(entropy)
        bits = bernoulli_bits(stream, xs.size * self.k, self.a0).reshape(xs.size, self.k)
        bits[np.arange(xs.size), xs] = stream.uniform(xs.size) >= self.a1c
        return bits

    def check_reports(self, reports) -> np.ndarray:
        """Reports are k-bit rows: shape (n, k), bool or integers in {0, 1}."""
        arr = rectangular_array(reports)
        if arr.dtype == np.bool_:
            if arr.ndim == 2 and arr.shape[1] == self.k:
                return arr
            if arr.shape == (0,):
                return np.zeros((0, self.k), dtype=bool)
            raise ValueError(f"reports must be an array of shape (n, {self.k}), got shape {arr.shape}")
        return integer_reports(arr, 2, width=self.k, what="bit").astype(bool)

    def _count(self, ys) -> np.ndarray:
        return ys.sum(axis=0, dtype=np.int64)

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """Reports: the stored bytes unpacked into k bools and checked (``from_columns``), then
        every bit of the (n, k) batch summed over the reports: n k steps each; memory the k
        counts and (conservatively) one bool copy of the batch. Seeds (``unary_counts``):
        each seed's key, then k keystream words compared, streaming its chunk's k-entry count
        row (from memory when k is large), n k steps; per call the rows of every chunk are made
        and added (chunks x k); memory those rows, their sum and a span of words per thread."""
        if seeds and not fast_hook(self, "summarize_seeds"):
            return LocalRandomizer.summary_cost(self, n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        k, row = self.k, 8 * self.k
        if not seeds:
            ops = n * k * (C.BOOL_SUM + 2 * C.SIMPLE) + calls * (C.CALL + 2 * k * C.SIMPLE)
            return Cost(ops, 2 * row + b * k, f"n x k = {n} x {k} bits summed")
        chunks = chunks_for(b, 2 * k)
        ops = n * (C.SEED + k * C.walk(C.AES_WORD, row)) \
            + calls * (C.CALL + (2 * chunks + 1) * k * C.SIMPLE)
        peak = (chunks + 2) * row + C.threads() * 8 * 1024 + b * 16
        return Cost(ops, peak, f"n x k = {n} x {k} keystream words decoded")

    def report_columns(self) -> tuple[Column, ...]:
        return (Column("bits", "uint8", (self.k + 7) // 8),)

    def _to_columns(self, reports) -> dict[str, np.ndarray]:
        packed = np.packbits(reports, axis=1)
        return {"bits": packed[:, 0] if self.k <= 8 else packed}  # a width-1 column is 1-D

    def _from_columns(self, columns) -> np.ndarray:
        """Packed rows back to k bits; the padding bits after bit k must be zero."""
        packed = np.asarray(columns["bits"])
        packed = integer_reports(packed.reshape(-1, (self.k + 7) // 8), 256,
                                 width=(self.k + 7) // 8, what="byte")
        bits = np.unpackbits(packed.astype(np.uint8), axis=1)
        if bits.shape[0] and bits[:, self.k:].any():
            i = int(np.flatnonzero(bits[:, self.k:].any(axis=1))[0])
            raise ValueError(f"report {i}: padding bits after bit {self.k} must be zero")
        return bits[:, : self.k].astype(bool)


@register
class OUE(RAPPOR):
    """Optimized unary encoding (Wang et al. 2017): the asymmetric RAPPOR, a1 = 1/2,
    a0 = 1/(e^eps+1), replacement eps-DP; the frequency oracle with the smallest variance of
    the unary family, and PI-RAPPOR's model.

    Parameters
    ----------
    k : int
        Domain size: inputs are items 0..k-1 (k >= 2).
    eps : float
        The local privacy parameter (> 0). (replacement eps).
    """

    name = "oue"

    def __init__(self, k: int, eps: float):
        super().__init__(k, eps, symmetric=False)

    def params(self) -> dict:
        return {"k": self.k, "eps": self.eps}
