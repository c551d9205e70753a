"""Local randomizers with what compression needs (SPEC S5.2-S5.4).

Each randomizer states its privacy (``kind`` = "deletion" or "replacement", ``eps``), a
reference law rho with a deterministic sampler ``sample(prg)``, the density ratio
``ratio(x, y) = R(x)(y) / rho(y)`` and ``deletion_eps`` = log max ratio (the acceptance
normaliser of S5.2), plus ``randomize(x)`` with true randomness and the server estimator.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import validate as V
from .entropy import SYSTEM, Entropy
from .estimators import BinaryEstimator, _first_bad, _as_array, histogram_bytes, integer_reports
from .kernels.field import first_unsorted_row
from .kernels.sample import partial_shuffles
from .limits import array_bytes, check_bytes
from .prg import PRG, uniform_at, word_at
from .structure import ShuffleStructure, coin, independent_structure, kept


class Randomizer:
    """Base: subclasses set k, eps, kind, deletion_eps and implement the methods below."""

    k: int
    eps: float
    kind: str
    deletion_eps: float

    def check_item(self, x) -> int:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            raise TypeError(f"x must be an integer item, got {type(x).__name__}")
        if not 0 <= x < self.k:
            raise ValueError(f"x must be in [0, {self.k}), got {x}")
        return int(x)

    def ratio_bounds(self) -> tuple[float, float] | None:
        """(min, max) of ratio(x, y) over all x, y when known (checked by compress())."""
        return None

    def sample(self, prg: PRG):
        """y ~ rho from the PRG stream."""
        raise NotImplementedError

    def decode_seed(self, seed: bytes):
        return self.sample(PRG(seed))

    def ratio(self, x: int, y) -> float:
        raise NotImplementedError

    def ratio_from_seed(self, x: int, seed: bytes) -> float:
        """ratio(x, decode_seed(seed)); subclasses may compute it without the whole y."""
        return self.ratio(x, self.decode_seed(seed))

    def randomize(self, x: int, entropy: Entropy = SYSTEM):
        """R(x) with true randomness: the batch randomizer on one item."""
        return self.randomize_many(np.array([self.check_item(x)]), entropy)[0]

    def randomize_many(self, xs, entropy: Entropy = SYSTEM):
        raise NotImplementedError


EPS_MAX = 700.0  # e^eps must stay a finite double


def _check_eps(eps) -> float:
    """eps in (0, EPS_MAX]."""
    v = V.positive_finite(eps, "eps")
    if v > EPS_MAX:
        raise ValueError(f"eps must be in (0, {EPS_MAX:g}] (e^eps must be finite), got {eps!r}")
    return v


def check_flag(value, name: str) -> bool:
    """A genuine bool (no silent truthiness of strings or numbers)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_batch_bytes(n: int, k: int, itemsize: int, what: str, max_bytes=None) -> None:
    """Refuse an n x k client-side table (RAPPOR bits, subset keys) above the memory limit."""
    check_bytes(array_bytes((n, k), np.float64) * itemsize // 8,
                f"{what} for n = {n} reports x k = {k}", "n (batch the inputs) or k", max_bytes)


class KRR(Randomizer, BinaryEstimator):
    """k-ary randomized response (replacement eps): y = x w.p. e^eps/(e^eps+k-1), else uniform
    other. rho = Uniform[k]; ratio = k e^eps/(e^eps+k-1) at y = x, k/(e^eps+k-1) otherwise."""

    kind = "replacement"

    def __init__(self, k: int, eps: float):
        self.k = V.domain_size(k)
        self.eps = _check_eps(eps)
        z = math.exp(eps) + self.k - 1
        self.a1, self.a0 = math.exp(eps) / z, 1.0 / z
        x = math.exp(-self.eps)
        self.a1c = (self.k - 1) * x / (1.0 + (self.k - 1) * x)  # 1 - a1, no cancellation
        self.deletion_eps = max(math.log(self.k * self.a1), -math.log(self.k * self.a0))

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

    def randomize_many(self, xs, entropy=SYSTEM):
        xs = V.items(xs, self.k)
        keep = entropy.uniform(xs.size) >= self.a1c
        other = entropy.integers(self.k - 1, xs.size)
        other = other + (other >= xs)
        return np.where(keep, xs, other)

    def check_reports(self, reports) -> np.ndarray:
        """Reports are items: a 1-D integer array with every entry in [0, k)."""
        return integer_reports(reports, self.k, what="item")

    def _count(self, ys) -> np.ndarray:
        histogram_bytes(self.k)
        return np.bincount(ys, minlength=self.k).astype(np.int64)


SYMMETRIC_EPS_MAX = 36.0  # 1/(e^eps+1) must stay above 2^-53 (float 1 - a0 < 1)


class RAPPOR(Randomizer, BinaryEstimator):
    """Unary encoding with independent bit flips (S5.4). ``symmetric=True``: a1 = 1 - a0,
    a0 = 1/(e^eps+1), deletion eps-DP. ``symmetric=False``: a1 = 1/2, a0 = 1/(e^eps+1),
    replacement eps-DP (deletion log((e^eps+1)/2) w.r.t. rho). rho = iid Bern(a0) bits; bit j
    of the sample is [u_j < a0] for the j-th uniform of the stream, so ratio needs one word."""

    def __init__(self, k: int, eps: float, symmetric: bool = True):
        self.k = V.domain_size(k)
        self.eps = _check_eps(eps)
        self.symmetric = check_flag(symmetric, "symmetric")
        if symmetric and self.eps > SYMMETRIC_EPS_MAX:  # 1 - a0 would round to 1: no flips
            raise ValueError(f"eps must be at most {SYMMETRIC_EPS_MAX:g} for symmetric RAPPOR "
                             f"(a flip probability 1/(e^eps+1) below 2^-53 cannot be drawn by "
                             f"the client's 53-bit coins), got {eps!r}")
        self.a0 = 1.0 / (math.exp(self.eps) + 1.0)
        self.a1 = 1.0 - self.a0 if symmetric else 0.5
        self.a1c = self.a0 if symmetric else 0.5
        self.kind = "deletion" if symmetric else "replacement"
        self.deletion_eps = max(math.log(self.a1 / self.a0),
                                math.log((1 - self.a0) / (1 - self.a1)))

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

    def randomize_many(self, xs, entropy=SYSTEM):
        xs = V.items(xs, self.k)
        check_batch_bytes(xs.size, self.k, 8 + 1, "RAPPOR client coins and bits")
        bits = entropy.uniform(xs.size * self.k).reshape(xs.size, self.k) < self.a0
        bits[np.arange(xs.size), xs] = entropy.uniform(xs.size) >= self.a1c
        return bits

    def check_reports(self, reports) -> np.ndarray:
        """Reports are k-bit rows: shape (n, k), bool or integers in {0, 1}."""
        arr = _as_array(reports)
        if arr.dtype == np.bool_:
            if arr.ndim == 2 and arr.shape[1] == self.k:
                return arr
            if arr.shape == (0,):
                return np.zeros((0, self.k), dtype=bool)
            raise ValueError(f"reports must be an array of shape (n, {self.k}), got shape {arr.shape}")
        return integer_reports(arr, 2, width=self.k, what="bit").astype(bool)

    def _count(self, ys) -> np.ndarray:
        return ys.sum(axis=0, dtype=np.int64)


class SubsetSelection(Randomizer, BinaryEstimator):
    """d-subset of [k] containing x w.p. p = d e^eps/(d e^eps + k - d) (replacement eps).
    rho = uniform d-subset; ratio = p k/d if x in S else (1-p) k/(k-d). A user holding j' != j
    reports j w.p. a0 = (p (d-1) + (1-p) d)/(k-1)."""

    kind = "replacement"

    def __init__(self, k: int, eps: float, d: int | None = None):
        self.k = V.domain_size(k)
        self.eps = _check_eps(eps)
        if d is None:
            d = max(1, min(self.k - 1, round(self.k / (math.exp(eps) + 1))))
        self.d = V.integer_at_least(d, "d", 1, self.k - 1)
        # in log space: d e^eps may overflow, and 1 - a1 = (k-d)/(d e^eps + k - d) must not be
        # computed as 1 - a1 (it rounds to 0 from eps ~ 37 on)
        log_total = float(np.logaddexp(math.log(self.d) + self.eps, math.log(self.k - self.d)))
        self.a1 = math.exp(math.log(self.d) + self.eps - log_total)
        self.q1 = math.exp(math.log(self.k - self.d) - log_total)  # 1 - a1
        self.a1c = self.q1  # clients draw 'exclude x' w.p. a1c (structure.kept)
        self.a0 = (self.a1 * (self.d - 1) + self.q1 * self.d) / (self.k - 1)
        self.deletion_eps = max(abs(self.eps + math.log(self.k) - log_total),
                                abs(math.log(self.k) - log_total))

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

    def randomize_many(self, xs, entropy=SYSTEM):
        """Rows of sorted d-subsets: a partial Fisher-Yates shuffle (exact integer draws, so the
        subset law is exactly uniform) of the k-1 items other than x; keep the first d of them,
        or the first d-1 and x (w.p. a1, drawn as 'not excluded', see structure.kept)."""
        xs = V.items(xs, self.k)
        n = xs.size
        check_bytes(array_bytes((n, 2 * self.d)), f"subset-selection draws for n = {n} reports "
                    f"x d = {self.d}", "n (batch the inputs)")
        draws = np.empty((n, self.d), dtype=np.int64)
        for i in range(self.d):  # column i uniform in [0, k - 1 - i), from the CSPRNG
            draws[:, i] = entropy.integers(self.k - 1 - i, n)
        chosen = partial_shuffles(draws, self.k - 1)
        chosen += chosen >= xs[:, None]  # index among the others -> item (skipping x)
        include = entropy.uniform(n) >= self.a1c
        chosen[include, self.d - 1] = xs[include]
        return np.sort(chosen, axis=1)

    def check_reports(self, reports) -> np.ndarray:
        """Reports are d-subsets: shape (n, d), entries in [0, k), distinct within a row (a
        repeated item would count one user several times)."""
        if (isinstance(reports, np.ndarray) and reports.dtype == np.int64
                and reports.shape[1:] == (self.d,) and reports.ndim == 2 and reports.shape[0]
                and first_unsorted_row(reports, self.k) < 0):
            return reports  # the client's canonical form (sorted rows in [0, k)): one pass
        arr = integer_reports(reports, self.k, width=self.d, what="item")
        if self.d > 1 and arr.shape[0]:
            srt = np.sort(arr, axis=1)  # only for rows not already sorted (the client sorts)
            dup = srt[:, 1:] == srt[:, :-1]
            if dup.any():
                i = _first_bad(dup)
                raise ValueError(f"report {i}: items {arr[i].tolist()} repeat an item (a "
                                 f"{self.d}-subset has distinct items)")
        return arr

    def _count(self, ys) -> np.ndarray:
        histogram_bytes(self.k)
        return np.bincount(ys.ravel(), minlength=self.k).astype(np.int64)
