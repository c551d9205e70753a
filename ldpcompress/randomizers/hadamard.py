"""Hadamard response (Acharya, Sun, Zhang, AISTATS 2019; docs/theory.md §2.5, §6.3): the basic
one-bit variant and the general-privacy code construction.

Both follow the paper's general framework: item x owns a set C_x of s of the K = 2^m reports,
and the client reports y with probability e^eps / (s e^eps + K - s) for y in C_x and
1 / (s e^eps + K - s) otherwise. The basic variant takes C_x = {y : H[x+1, y] = +1} (s = K/2),
whose variance is ((e^eps + 1)/(e^eps - 1))^2 per user: 14x OUE's at k = 1000, eps = 4. The
general variant takes sets of density 2^-t close to 1/(e^eps + 1) whose every two members meet
in exactly K/4^t reports: C_x = {y : <r, y> = 0 for r in g^x GF(2^t)} with g a primitive
element of GF(2^m) and t | m, the lines of a Desarguesian spread. Any two items' support bits
are then independent Bern(2^-t) under a uniform report, so a0 = 2^-t exactly and the variance
is OUE's up to the rounding of the density to a power of 2 (within 3%), with m <= log2 k + t +
t - 1 bits per report and counts from one Walsh-Hadamard transform of the K-cell histogram.
(The paper's own general-privacy construction, blocks of basic codes, keeps reports near
log2 k bits; a user measured an implementation of it at 2.9x OUE's error at k = 1000, eps = 4:
docs/theory.md §6.3.)
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from ..core import validate as V
from ..core.lazy import lazy_module
from .base import FrequencyOracle, check_eps
from .threads import chunks_for
from . import cost as C
from .contract import (Cost, LocalRandomizer, Privacy, fast_hook, paired, seed_batch,
                       seeds_array)
from .estimator import binary_variance, histogram_bytes, integer_reports
from .registry import register
from .structure import ShuffleStructure, independent_structure, kept

__all__ = ['HadamardResponse', 'VARIANTS', 'MAX_CODE_BITS', 'CODE_STEP', 'code_bits', 'primitive_poly']

_field = lazy_module("ldpcompress.kernels.field")  # Numba: compiled at first use
_had = lazy_module("ldpcompress.kernels.hadamard")
_seeds = lazy_module("ldpcompress.kernels.seeds")

VARIANTS = ("general", "basic")
MAX_CODE_BITS = 24  # the general code's reports (t >= 2): a 2^24-cell histogram is 128 MiB
BEST_T_SLACK = 1.02  # the default t: the shortest code within 2% of the least variance
CODE_STEP = 200.0  # summary_cost: ns per (item, row) building the code's rows and duals (~30)


def code_bits(k: int, t: int) -> int:
    """m: the smallest multiple of t with (2^m - 1)/(2^t - 1) >= k (a spread of GF(2^m) with a
    line for every item); t = 1 gives the basic code's ceil(log2(k + 1))."""
    m = t
    while ((1 << m) - 1) // ((1 << t) - 1) < k:
        m += t
    return m


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        if n % p == 0:
            out.append(p)
            while n % p == 0:
                n //= p
        p += 1
    return out + ([n] if n > 1 else [])


@lru_cache(maxsize=None)
def primitive_poly(m: int) -> int:
    """The numerically smallest polynomial of degree m (bit i = coefficient of z^i) in which z
    has multiplicative order exactly 2^m - 1: then GF(2)[z]/poly is a field (it has 2^m - 1
    units) and z generates its multiplicative group."""
    order = (1 << m) - 1
    factors = _prime_factors(order)
    for low in range(1, 1 << m, 2):
        poly = (1 << m) | low
        if _had.gf_pow(2, order, m, poly) == 1 and all(_had.gf_pow(2, order // q, m, poly) != 1
                                                       for q in factors):
            return poly
    raise ValueError(f"no primitive polynomial of degree {m}")  # never: one exists for m >= 1


def _rank(vectors) -> int:
    """Rank over GF(2) of integers read as bit vectors."""
    basis: list[int] = []
    for v in vectors:
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    return len(basis)


@register
class HadamardResponse(FrequencyOracle):
    """Hadamard response (replacement eps) on k items: reports are m-bit indices y in [K), K = 2^m.

    ``variant="general"`` (default): item x supports the reports of the codimension-t subspace
    C_x = {y : <r, y> = 0, r in g^x GF(2^t)} of GF(2)^m (t | m, the lines of a spread of
    GF(2^m)), s = K 2^-t; a1 = s e^eps/(s e^eps + K - s), a0 = 2^-t exactly. ``t`` (default:
    the variance's minimiser with m <= 24) fixes the density. ``variant="basic"``: t = 1 with
    row x + 1 of the Hadamard matrix H_K, K = 2^ceil(log2(k + 1)), a1 = e^eps/(e^eps + 1),
    a0 = 1/2 (the library's HadamardResponse before the general variant; saved parameters
    without a variant mean it). Counts by one fast Walsh-Hadamard transform.

    Parameters
    ----------
    k : int
        Domain size: inputs are items 0..k-1 (k >= 2).
    eps : float
        The local replacement eps (> 0).
    variant : {"general", "basic"}, default "general"
        The construction (see above).
    t : int, optional
        The codimension of the supported subspaces (general variant; default: the variance's
        minimiser); 1 or None for the basic variant.
    """

    name, privacy = "hadamard", Privacy.REPLACEMENT

    def __init__(self, k: int, eps: float, variant: str = "general", t: int | None = None):
        self.k = V.domain_size(k)
        self.eps = check_eps(eps)
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(map(repr, VARIANTS))}, got "
                             f"{V.shown(variant)}")
        self.variant = variant
        if variant == "basic":
            if t is not None and V.integer_at_least(t, "t", 1) != 1:
                raise ValueError(f"t must be 1 (or None) for the basic variant, got {t!r}")
            self.t = 1
        elif t is None:
            self.t = self._best_t()
        else:
            self.t = V.integer_at_least(t, "t", 1, MAX_CODE_BITS // 2)
        self.m = code_bits(self.k, self.t)
        if self.t > 1 and self.m > MAX_CODE_BITS:
            raise ValueError(f"t = {self.t} needs {self.m}-bit reports for k = {self.k} items "
                             f"(at most {MAX_CODE_BITS}): use a smaller t")
        self.big_k = 1 << self.m
        if variant == "basic":  # the basic variant's floats, unchanged (saved structures)
            self.a1, self.a0 = 1.0 / (1.0 + math.exp(-self.eps)), 0.5
            self.a1c = 1.0 / (1.0 + math.exp(self.eps))
        else:
            self.a0 = 1.0 / (1 << self.t)
            self.a1, self.a1c = self._coins(self.t, self.eps)
            if not self.a1 > self.a0:
                raise ValueError(f"eps = {self.eps!r} is too small for t = {self.t}: the "
                                 "coin a1 rounds to a0 = 2^-t (use a larger eps or t = 1)")
        self.bits_per_report = self.m
        self.report_high = self.big_k
        if variant == "general":  # deletion eps w.r.t. the uniform report (compression)
            self.deletion_eps = max(math.log(self.a1) + self.t * math.log(2.0),
                                    math.log1p(-self.a0) - math.log(self.a1c))
        self._code: tuple[np.ndarray, np.ndarray] | None = None

    @staticmethod
    def _coins(t: int, eps: float) -> tuple[float, float]:
        """(a1, 1 - a1) = (sigma, q)/(sigma + q), sigma = 2^-t, q = (1 - sigma) e^-eps (no
        overflow, no cancellation)."""
        sigma = 1.0 / (1 << t)
        q = (1.0 - sigma) * math.exp(-eps)
        return sigma / (sigma + q), q / (sigma + q)

    def _best_t(self) -> int:
        """The t of least report size among those within BEST_T_SLACK of the least variance
        (a count near 0) whose code fits MAX_CODE_BITS (t = 1 always fits: the basic code)."""
        cands = []
        for t in range(1, MAX_CODE_BITS // 2 + 1):
            m = code_bits(self.k, t)
            if t > 1 and m > MAX_CODE_BITS:
                continue
            a1, _ = self._coins(t, self.eps)
            if a1 > 1.0 / (1 << t):
                cands.append((float(binary_variance(1, 0.0, 1.0 / (1 << t), a1)), m, t))
        if not cands:
            raise ValueError(f"eps = {self.eps!r} is too small: every code's coin a1 rounds "
                             "to its a0")
        least = min(c[0] for c in cands)
        return min((m, var, t) for var, m, t in cands if var <= least * BEST_T_SLACK)[2]

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "HadamardResponse":
        """Parameters saved before the general variant existed ({k, eps}) mean the basic one."""
        if isinstance(params, Mapping) and "variant" not in params:
            params = {**params, "variant": "basic"}
        return super().from_params(params)  # type: ignore[return-value]

    def params(self) -> dict:
        """The basic variant's are exactly those it saved before the general one existed, so
        files written either way read back (scale.metadata compares the canonical spec)."""
        if self.variant == "basic":
            return {"k": self.k, "eps": self.eps}
        return {"k": self.k, "eps": self.eps, "variant": "general", "t": self.t}

    def plateau(self) -> tuple:
        """(t, m): the general code's density and size jump with eps; () for the basic one."""
        return (self.t, self.m) if self.variant == "general" else ()

    # -- the code: item rows and their duals ----------------------------------------------
    def rows(self) -> np.ndarray:
        """int64 (k, t): the vectors r with <r, y> = 0 for every report y supporting item x
        (row x: x + 1 when t = 1, else g^x, g^x omega, ..., g^x omega^(t-1) in GF(2^m))."""
        return self._tables()[0]

    def _tables(self) -> tuple[np.ndarray, np.ndarray]:
        if self._code is None:
            if self.t == 1:
                rows = np.arange(1, self.k + 1, dtype=np.int64)[:, None]
            else:
                rows = _had.spread_rows(self.k, self.t, self.m, primitive_poly(self.m))
            self._code = (rows, _had.dual_rows(rows, self.m))
        return self._code

    # -- accounting ----------------------------------------------------------------------
    def shuffle_structure(self) -> ShuffleStructure:
        """w = uniform report; b(y, x) = [y in C_x], a = s/K = 2^-t. The spans of two items' rows
        meet only in 0, so their 2t syndrome bits are independent fair bits: (b1, b2) are
        independent Bern(a). The attack's items 0, 1, 2: Pr[b1 = 1, b2 = 0, b3 = 0] =
        a - 2 a^2 + 2^-r with r the rank of their 3t rows (r = 3t: independent bits, t3 =
        a (1 - a)^2; the basic code's rows 1, 2, 3 = 1 ^ 2 have r = 2, t3 = 1/4)."""
        a = Fraction(1, 1 << self.t)
        t3 = None
        if self.k >= 3:
            r = _rank(int(v) for v in self.rows()[:3].ravel())
            t3 = a - 2 * a * a + Fraction(1, 1 << r)
        if self.variant == "basic":  # the identity saved ledgers hold
            ident: tuple = (("k", self.k), ("K", self.big_k), ("a1", self.a1))
        else:
            ident = (("k", self.k), ("K", self.big_k), ("t", self.t), ("a1", self.a1))
        return independent_structure("hadamard", ident, a, kept(self.a1c),
                                     triple_independent=False, t3=t3, attack_items=(0, 1, 2))

    # -- compression (the general variant): rho = uniform report -------------------------
    def compression_refusal(self) -> str | None:
        if self.variant == "basic":
            return (f"a Hadamard response report is {self.bits_per_report} bits, already "
                    "shorter than a 17-byte seed report")
        return super().compression_refusal()

    def ratio_bounds(self):
        return (self.a1c / (1.0 - self.a0), self.a1 / self.a0)

    def sample(self, prg):
        return int(prg.integers(self.big_k, 1)[0])

    def ratio(self, x, y):
        """R(x)(y) / rho(y) = a1 2^t on C_x, (1 - a1)/(1 - 2^-t) off it."""
        x = self.check_item(x)
        y = self.check_reports(np.asarray([y]))
        inside = _had.supports(self.rows(), np.asarray([x], dtype=np.int64), y)[0]
        return self.a1 / self.a0 if inside else self.a1c / (1.0 - self.a0)

    @seed_batch
    def decode_seeds(self, seeds) -> np.ndarray:
        """The reports the seeds stand for (the first accepted word mod K): int64 (n,)."""
        seeds = seeds_array(seeds)
        return _seeds.bounded_draws(seeds, np.array([self.big_k], dtype=np.int64),
                                    chunks_for(len(seeds)))[:, 0]

    @seed_batch
    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        xs, seeds = self.check_items(xs), seeds_array(seeds)
        paired(xs, seeds)
        inside = _had.supports(self.rows(), xs, self.decode_seeds(seeds))
        return np.where(inside, self.a1 / self.a0, self.a1c / (1.0 - self.a0))

    # -- client --------------------------------------------------------------------------
    @staticmethod
    def _parity(v: np.ndarray) -> np.ndarray:
        v = v.copy()
        out = np.zeros(v.shape, dtype=np.int64)
        while np.any(v):
            out ^= v & 1
            v >>= 1
        return out

    def _randomize_many(self, xs, entropy):
        """Supported (``uniform() >= a1c``, structure.kept) w.p. a1: a uniform point of C_x,
        else of its complement. General: a uniform report moved to the coset of syndrome 0,
        or of a uniform non-zero syndrome (each coset has s points). Basic: a uniform index
        with one bit of x + 1 flipped when its sign is the wrong one."""
        n = xs.size
        inside = entropy.uniform(n) >= self.a1c
        if self.variant == "general":
            ys = entropy.integers(self.big_k, n)
            targets = np.where(inside, 0, entropy.integers((1 << self.t) - 1, n) + 1)
            rows, duals = self._tables()
            return _had.respond(rows, duals, xs, ys, targets)
        xs = xs + 1
        i = entropy.integers(self.big_k, n)
        low = xs & -xs
        wrong = (self._parity(xs & i) == 0) != inside
        return np.where(wrong, i ^ low, i)

    # -- server --------------------------------------------------------------------------
    def check_reports(self, reports) -> np.ndarray:
        """Reports are code indices: a 1-D integer array, entries in [0, K)."""
        return integer_reports(reports, self.big_k, what="index")

    def _count(self, reports):
        """#{reports in C_x} for every x: histogram, one FWHT, the sum over each row span."""
        histogram_bytes(self.big_k, 2, what="the Hadamard histogram and transform")
        spec = _field.fwht(np.bincount(reports, minlength=self.big_k).astype(np.int64))
        return _had.span_counts(spec, self.rows())

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """Per report a check and a scattered update of the K-entry histogram (seeds: first
        the seed's bounded draw, ``decode_seeds``); per call the histogram and its int64 copy,
        one in-place Walsh-Hadamard transform (K log2 K butterflies) and the span sums
        (k (2^t - 1) scattered reads of the transform); once, the code's rows and duals
        (k t, ``CODE_STEP`` each). Memory: the histogram and its copy, the rows and duals,
        the counts, the (decoded) batch."""
        if seeds and not fast_hook(self, "decode_seeds"):
            return LocalRandomizer.summary_cost(self, n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        big, table = self.big_k, 8 * self.big_k
        spans = self.k * ((1 << self.t) - 1)
        per = 4 * C.SIMPLE + C.scattered(C.BINCOUNT, table) + (C.SEED if seeds else 0.0)
        per_call = C.CALL + big * (C.BINCOUNT + C.SIMPLE) + big * math.log2(big) * C.FWHT \
            + spans * C.scattered(C.SIMPLE, table) + 4 * self.k * C.SIMPLE
        code = 2 * 8 * self.k * self.t
        return Cost(n * per + calls * per_call + self.k * self.t * CODE_STEP,
                    2 * table + code + 3 * 8 * self.k + 8 * b * (3 if seeds else 1),
                    f"n = {n} indices into K = {big} entries, {calls} transform(s)")
