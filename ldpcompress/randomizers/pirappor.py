"""PI-RAPPOR: pairwise-independent RAPPOR over a prime field and over F_q^t (docs/theory.md §6).

A report is (a, b) with h(x) = a x + b; it encodes the bit vector bit_j = [h(j) < s]. For
uniform (a, b) the bits of distinct items are pairwise independent Bern(s/p), so the server's
estimator has exactly RAPPOR's mean and variance, while the client sends 2 ceil(log2 p) bits.
Item x in [0, k) is the field element x + 1.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core import validate as V
from ..core.chunks import spans
from ..core.entropy import Entropy
from ..core.limits import array_bytes, check_bytes
from ..core.numerics import EXP_MAX, MAX_FIELD
from ..core.lazy import lazy_module
from .base import FrequencyOracle, check_flag
from .threads import chunked_counts, chunks_for
from . import cost as C
from .contract import Column, Cost, Privacy, int_dtype
from .registry import register
from .estimator import histogram_bytes, integer_reports
from .structure import ShuffleStructure, ap3_count, independent_structure, kept

__all__ = ["MAX_EPS", "COUNT_WORK_LIMIT", "COUNT_WORK_PER_CALL", "INVERSE_TABLE_MAX", "FieldReports", "choose_field",
           "PIRappor", "VectorPIRappor"]

_field = lazy_module("ldpcompress.kernels.field")  # Numba: compiled at first use


# the largest realisable eps: s = 1 in F_p with p = MAX_FIELD gives log(p - 1) (a1 = 1/2)
MAX_EPS = math.log(MAX_FIELD - 1)
COUNT_WORK_LIMIT = 10 ** 10    # steps of an explicitly chosen counting algorithm (~10 s)
COUNT_WORK_PER_CALL = 2 ** 28  # steps per kernel call (~0.3 s): Ctrl-C is seen between calls
INVERSE_TABLE_MAX = 1 << 24  # above this p, inverses come from Fermat per report


@dataclass(frozen=True)
class FieldReports:
    """A batch of PI-RAPPOR reports over F_p: report i is the pair (a[i], b[i]), both in [0, p).

    This is what :meth:`PIRappor.randomize_many` returns and what :meth:`PIRappor.estimate`,
    ``counts``, ``estimate_one`` and ``pack`` take (docs/theory.md §6): report i supports item
    j when ``(a[i] j + b[i]) mod p < s``. Build one from stored or received columns with
    ``FieldReports(a, b, oracle.p)``; the oracle checks it as untrusted input (integer arrays
    of equal length, every element in [0, p), the oracle's own p) before counting.

    Attributes
    ----------
    a, b : numpy.ndarray
        1-D integer arrays of equal length n.
    p : int
        The prime of the field; must equal the oracle's ``p``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpcompress import FieldReports, PIRappor
    >>> oracle = PIRappor(k=100, eps=3.0)
    >>> reports = oracle.randomize_many(np.array([1, 2, 3]))
    >>> isinstance(reports, FieldReports), len(reports), reports.p == oracle.p
    (True, 3, True)
    >>> again = FieldReports(np.asarray(reports.a), np.asarray(reports.b), oracle.p)
    >>> bool(np.array_equal(oracle.counts(again), oracle.counts(reports)))
    True
    """

    a: np.ndarray
    b: np.ndarray
    p: int

    def __len__(self) -> int:
        return int(self.a.shape[0])

    def __getitem__(self, index) -> "FieldReports":
        """The reports at ``index`` (a slice or an index array), e.g. a shuffler's permutation."""
        if np.ndim(index) == 0 and not isinstance(index, slice):
            raise TypeError("index FieldReports with a slice or an index array (one report is "
                            "the pair (a[i], b[i]))")
        return FieldReports(self.a[index], self.b[index], self.p)

    @property
    def nbytes(self) -> int:
        return int(self.a.nbytes + self.b.nbytes)


def choose_field(k: int, eps: float) -> tuple[int, int]:
    """(p, s): the smallest prime p >= max(k+1, ceil(100 (e^eps + 1))), capped at the largest
    prime below 2^31, s = ceil(p alpha0) with alpha0 = 1/(e^eps + 1), so the realised alpha0 =
    s/p >= alpha0 (§6) and the realised eps is never above the requested one. Above eps ~ 16.9
    the cap binds and s is rounded up more coarsely (realised eps at most log(2^31 - 2) ~ 21.5).
    When rounding s up would reach s/p >= 1/2 (tiny eps: no privacy loss left to spend on the
    rounding), p grows to the next prime until 2 s < p."""
    def s_for(p):
        return math.ceil(p / (math.exp(eps) + 1.0)) if eps < EXP_MAX else 1

    target = math.ceil(100 * (math.exp(eps) + 1)) if eps < 30 else MAX_FIELD
    p = _field.next_prime(min(max(k + 1, target), MAX_FIELD), MAX_FIELD)
    while 2 * s_for(p) >= p:
        if p >= MAX_FIELD:
            raise ValueError(f"no field below 2^31 serves k={k}, eps={eps}: eps is too small")
        p = _field.next_prime(min(max(p + 1, int(p * 1.1)), MAX_FIELD), MAX_FIELD)
    return p, s_for(p)


@register
class PIRappor(FrequencyOracle):
    """PI-RAPPOR over F_p. ``symmetric=False`` (default): a1 = 1/2, replacement eps-DP;
    ``symmetric=True``: a1 = 1 - a0, deletion eps-DP. ``eps`` is the realised value, never
    above the requested one; ``p`` may be given (it must be a prime > k).

    Parameters
    ----------
    k : int
        Domain size: inputs are items 0..k-1 (k >= 2).
    eps : float
        The requested local eps (> 0); the realised ``eps`` is at most this.
    symmetric : bool, default False
        a1 = 1/2 with replacement eps (False) or a1 = 1 - a0 with deletion eps (True).
    p : int, optional
        The field's prime (> k); chosen from k and eps when omitted.
    """

    name = "pi-rappor"

    def __init__(self, k: int, eps: float, symmetric: bool = False, p: int | None = None):
        self.k = V.domain_size(k)
        requested = V.positive_finite(eps, "eps")
        symmetric = check_flag(symmetric, "symmetric")
        if requested > MAX_EPS:
            raise ValueError(f"eps must be in (0, {MAX_EPS:.4f}] for PI-RAPPOR (fields below 2^31 "
                             f"cannot realise more: s/p >= 1/(2^31 - 1)), got {eps!r}")
        if self.k >= MAX_FIELD:
            raise ValueError(f"k must be below {MAX_FIELD} for PI-RAPPOR (a field below 2^31), "
                             f"got {k!r}")
        if p is None:
            self.p, self.s = choose_field(self.k, requested)
        else:
            self.p = V.integer_at_least(p, "p", self.k + 1, MAX_FIELD)
            if not _field.prime(self.p):
                raise ValueError(f"p must be a prime > k, got {p}")
            self.s = math.ceil(self.p / (math.exp(min(requested, EXP_MAX)) + 1.0))
            if 2 * self.s >= self.p:
                raise ValueError(f"p={p} is too small for eps={eps}: s = ceil(p/(e^eps+1)) "
                                 f"must stay below p/2")
        self.symmetric = bool(symmetric)
        self.requested_eps = requested
        self.a0 = self.s / self.p
        self.a1 = 1.0 - self.a0 if symmetric else 0.5
        self.a1c = self.a0 if symmetric else 0.5  # clients draw z = 0 w.p. a1c (see kept())
        self.privacy = Privacy.DELETION if symmetric else Privacy.REPLACEMENT
        # realised eps: log of the largest likelihood ratio between two inputs
        self.eps = math.log(self.a1 * (1 - self.a0) / (self.a0 * (1 - self.a1)))
        if symmetric:  # deletion eps w.r.t. rho = uniform (a, b)
            self.eps = math.log(self.a1 / self.a0)
        self.bits_per_report = 2 * math.ceil(math.log2(self.p))

    def params(self) -> dict:
        return {"k": self.k, "eps": self.requested_eps, "symmetric": self.symmetric, "p": self.p}

    @property
    def replacement_eps(self) -> float:
        """Symmetric: log(a1 (1 - a0) / (a0 (1 - a1))) = 2 log((1 - a0)/a0); else eps."""
        return math.log(self.a1 * (1 - self.a0) / (self.a0 * (1 - self.a1)))

    def compression_refusal(self) -> str:
        return (f"a PI-RAPPOR report is {self.bits_per_report} bits, already shorter than a "
                "17-byte seed report")

    def plateau(self) -> tuple:
        """(p, s): the realised law depends on eps only through them (integers)."""
        return (self.p, self.s)

    # -- client -------------------------------------------------------------------------------
    def _randomize_many(self, xs, entropy: Entropy) -> FieldReports:
        """For each x: z ~ Bern(a1), a uniform in F_p, r uniform in [0, s) if z else [s, p),
        b = (r - a (x+1)) mod p. O(1) per report."""
        n = xs.size
        a = entropy.integers(self.p, n)
        z = entropy.uniform(n) >= self.a1c
        r = np.where(z, entropy.integers(self.s, n), self.s + entropy.integers(self.p - self.s, n))
        b = (r - a * (xs + 1)) % self.p
        return FieldReports(a, b, self.p)

    def _randomize_one(self, x: int, entropy: Entropy) -> tuple[int, int]:
        """One report as the pair (a, b)."""
        rep = self._randomize_many(np.array([x], dtype=np.int64), entropy)
        return int(rep.a[0]), int(rep.b[0])

    def shuffle_structure(self) -> ShuffleStructure:
        """w = uniform (a, b) in F_p^2: (h(x1), h(x2)) is uniform on F_p^2 for x1 != x2, so the
        bits of two items are independent Bern(s/p). Three items are not independent (two
        parameters): the attack's items 0, 2, 1 are the field elements 1, 3, 2, whose hashes
        v, v + 2a, v + a form an arithmetic progression, so
        t3 = s/p - 2 (s/p)^2 + AP3(s)/p^2 (inclusion-exclusion; AP3 from :func:`ap3_count`)."""
        return _field_structure("pi-rappor", (("k", self.k), ("p", self.p), ("s", self.s),
                                              ("a1", self.a1), ("symmetric", self.symmetric)),
                                self.p, self.s, self.a1c, self.k)

    # -- server -------------------------------------------------------------------------------
    def check_reports(self, reports) -> FieldReports:
        """FieldReports over this oracle's F_p with a, b 1-D integer arrays of equal length and
        every element in [0, p); returns them as int64 (errors name the first bad report)."""
        if not isinstance(reports, FieldReports):
            raise TypeError(f"reports must be FieldReports, got {type(reports).__name__}")
        if isinstance(reports.p, bool) or not isinstance(reports.p, (int, np.integer)) \
                or reports.p != self.p:
            raise ValueError(f"reports are over F_{reports.p}, this oracle uses F_{self.p}")
        a = integer_reports(reports.a, self.p, what="field element a")
        b = integer_reports(reports.b, self.p, what="field element b")
        if a.shape != b.shape:
            raise ValueError(f"reports.a and reports.b must have the same length, got "
                             f"{a.shape[0]} and {b.shape[0]}")
        if a is not reports.a or b is not reports.b:
            reports = FieldReports(a, b, self.p)
        return reports

    def _count_one(self, reports, j):
        return int(_field.pi_count_one(reports.a, reports.b, j, self.p, self.s))

    def counts(self, reports, algorithm: str = "auto") -> np.ndarray:
        """Support counts of every item: 'direct' O(n k), 'enum' O(n s), 'auto' the cheaper.

        An explicit choice costing more than ``COUNT_WORK_LIMIT`` steps while the other
        algorithm is at least twice cheaper is refused (ValueError naming both costs): it
        could run for hours (e.g. 'enum' at tiny eps, where s ~ p/2). The work is done in
        calls of about ``COUNT_WORK_PER_CALL`` steps, so Ctrl-C stops it between two calls.

        Parameters
        ----------
        reports : FieldReports
            A batch of reports (untrusted: validated).
        algorithm : {"auto", "direct", "enum"}, default "auto"
            The counting algorithm (see above).
        """
        if algorithm not in ("auto", "direct", "enum"):
            raise ValueError(f"algorithm must be 'auto', 'direct' or 'enum', got {algorithm!r}")
        r = self.check_reports(reports)
        if algorithm != "auto":
            cost = {"direct": len(r) * self.k, "enum": len(r) * self.s}
            other = "enum" if algorithm == "direct" else "direct"
            if cost[algorithm] > COUNT_WORK_LIMIT and cost[algorithm] > 2 * cost[other]:
                raise ValueError(
                    f"algorithm={algorithm!r} costs n x {'k' if algorithm == 'direct' else 's'}"
                    f" = {cost[algorithm]:.3g} steps here (limit {COUNT_WORK_LIMIT:.0e} when "
                    f"the other algorithm is cheaper), {other!r} costs {cost[other]:.3g}: use "
                    f"algorithm='auto' (or {other!r})")
        return self._count(r, algorithm)

    def _algorithm(self) -> str:
        """The counting algorithm 'auto' takes: enumeration when s is well below k."""
        return "enum" if 1.5 * self.s < self.k else "direct"

    def _step(self, algorithm: str) -> int:
        """Reports per kernel call: about COUNT_WORK_PER_CALL steps."""
        return max(1, COUNT_WORK_PER_CALL // max(self.k if algorithm == "direct" else self.s, 1))

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """The counting ``auto`` picks (:meth:`counts`): 'direct' evaluates every report at
        every item, streaming a k-entry row (n k steps); 'enum' walks each report's s hits,
        each a scattered update of a k-entry row (n s steps, their wait for memory growing
        with k), after an inverse mod p per report (a table of p entries built once when p <=
        ``INVERSE_TABLE_MAX``, else Fermat). Kernel calls take about ``COUNT_WORK_PER_CALL``
        steps; each makes and adds its chunks' rows (chunks x k). Memory: the table of
        inverses, the rows, their sum and the running counts (never compressed: ``seeds``
        takes the contract's default)."""
        if seeds:
            return super().summary_cost(n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        algorithm = self._algorithm()
        step = self._step(algorithm)
        k, row = self.k, 8 * self.k
        slices = C.calls(n, min(b, step)) + calls
        chunks = chunks_for(min(b, step), k)
        table = 0
        if algorithm == "direct":
            per, what = k * C.walk(C.AFFINE, row), f"n x k = {n} x {k} field evaluations"
        else:
            table = 8 * self.p if self.p <= INVERSE_TABLE_MAX else 0
            per = self.s * C.scattered(C.ENUM, row) + (0.0 if table else C.FERMAT)
            what = f"n x s = {n} x {self.s} enumerated hits into k = {k} entries"
        ops = n * (per + 8 * C.SIMPLE) + slices * (C.CALL + (2 * chunks + 2) * k * C.SIMPLE) \
            + (self.p * C.INVERSE if table else 0.0)
        return Cost(ops, table + (chunks + 3) * row + b * 16 * 2, what)

    def _count(self, r, algorithm: str = "auto") -> np.ndarray:
        if algorithm == "auto":
            algorithm = self._algorithm()
        step = self._step(algorithm)
        if len(r) <= step:
            return self._count_slice(r.a, r.b, algorithm)
        out = np.zeros(self.k, dtype=np.int64)
        for span in spans(len(r), step):  # Python between calls: Ctrl-C is seen
            out += self._count_slice(r.a[span], r.b[span], algorithm)
        return out

    def _count_slice(self, a, b, algorithm: str) -> np.ndarray:
        chunks = chunks_for(a.shape[0], self.k)
        histogram_bytes(self.k, chunks)
        if algorithm == "direct":
            return chunked_counts(_field.affine_hist, (a, b, a), self.k, chunks, self.k, self.p,
                                  self.s, 0)
        return chunked_counts(_field.pi_hist_enum, (a, b), self.k, chunks, self.k, self.p,
                              self.s, self._inverses)

    @functools.cached_property
    def _inverses(self) -> np.ndarray:
        """Inverses mod p, built once per oracle (empty above INVERSE_TABLE_MAX: Fermat)."""
        if self.p > INVERSE_TABLE_MAX:
            return np.zeros(0, np.int64)
        return _field.inverse_table(self.p)

    # -- storage and wire format ------------------------------------------------------------
    def report_columns(self) -> tuple[Column, ...]:
        return (Column("a", int_dtype(self.p)), Column("b", int_dtype(self.p)))

    def _to_columns(self, r) -> dict[str, np.ndarray]:
        return {"a": r.a.astype(int_dtype(self.p)), "b": r.b.astype(int_dtype(self.p))}

    def _from_columns(self, cols) -> FieldReports:
        return FieldReports(cols["a"], cols["b"], self.p)

    def _concat(self, batches: list) -> FieldReports:
        return FieldReports(np.concatenate([b.a for b in batches]),
                            np.concatenate([b.b for b in batches]), self.p)

    @property
    def field_bits(self) -> int:
        return math.ceil(math.log2(self.p))

    def pack(self, reports: FieldReports) -> bytes:
        """2 ceil(log2 p) bits per report, (a, b) big-endian bit order, zero-padded to a byte.

        Parameters
        ----------
        reports : FieldReports
            A batch of reports (untrusted: validated).
        """
        r = self.check_reports(reports)
        L = self.field_bits
        v = (r.a.astype(np.uint64) << np.uint64(L)) | r.b.astype(np.uint64)
        shifts = np.arange(2 * L - 1, -1, -1, dtype=np.uint64)
        bits = ((v[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.uint8)
        return np.packbits(bits.ravel()).tobytes()

    def unpack(self, data: bytes, n: int) -> FieldReports:
        """Inverse of pack for n reports; rejects a wrong length, non-zero padding bits and
        field elements >= p (naming the first bad report).

        Parameters
        ----------
        data : bytes
            What ``pack`` wrote (untrusted).
        n : int
            The number of reports it holds.
        """
        L = self.field_bits
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        n = V.integer_at_least(n, "n", 0)
        need = -(-n * 2 * L // 8)
        if len(data) != need:
            raise ValueError(f"{n} reports over F_{self.p} take {need} bytes, got {len(data)}")
        if n == 0:
            return FieldReports(np.zeros(0, np.int64), np.zeros(0, np.int64), self.p)
        check_bytes(array_bytes((n, 2 * L), np.uint64) * 2, f"unpacking {n} reports", "n")
        raw = np.unpackbits(np.frombuffer(bytes(data), dtype=np.uint8))
        if raw[n * 2 * L:].any():
            raise ValueError(f"malformed report data: the {raw.size - n * 2 * L} padding bits "
                             "after the last report must be zero")
        bits = raw[: n * 2 * L].reshape(n, 2 * L).astype(np.uint64)
        weights = np.uint64(1) << np.arange(2 * L - 1, -1, -1, dtype=np.uint64)
        v = (bits * weights).sum(axis=1, dtype=np.uint64)
        a = (v >> np.uint64(L)).astype(np.int64)
        b = (v & np.uint64((1 << L) - 1)).astype(np.int64)
        return self.check_reports(FieldReports(a, b, self.p))


@register
class VectorPIRappor(FrequencyOracle):
    """Generalised PI-RAPPOR over F_q^t (§6): h(x) = <a, x> + b, item j = base-q digits of j,
    s = ceil(q alpha0); (t+1) ceil(log2 q) bits. The server groups identical reports first.

    Parameters
    ----------
    k : int
        Domain size: inputs are items 0..k-1 (k >= 2).
    eps : float
        The requested local eps (> 0); the realised ``eps`` is at most this.
    q : int
        The field's prime (>= 3).
    t : int, optional
        The dimension of the item vectors (default: the smallest t with q^t >= k).
    symmetric : bool, default False
        a1 = 1/2 with replacement eps (False) or a1 = 1 - a0 with deletion eps (True).
    """

    name = "pi-rappor-vector"

    def __init__(self, k: int, eps: float, q: int, t: int | None = None, symmetric: bool = False):
        self.k = V.domain_size(k)
        requested = V.positive_finite(eps, "eps")
        symmetric = check_flag(symmetric, "symmetric")
        self.q = V.integer_at_least(q, "q", 3, MAX_FIELD)
        if not _field.prime(self.q):
            raise ValueError(f"q must be prime, got {q}")
        need_t = max(1, math.ceil(math.log(self.k) / math.log(self.q) - 1e-12))
        while self.q ** need_t < self.k:
            need_t += 1
        self.t = need_t if t is None else V.integer_at_least(t, "t", need_t, 64)
        if self.q ** (self.t + 1) >= 2 ** 62:
            raise ValueError("q^(t+1) must stay below 2^62 (reports are packed in one int64)")
        self.s = math.ceil(self.q / (math.exp(min(requested, EXP_MAX)) + 1.0))
        if 2 * self.s >= self.q:
            raise ValueError(f"q={q} is too small for eps={eps}: need s = ceil(q alpha0) < q/2")
        self.a0 = self.s / self.q
        self.a1 = 1.0 - self.a0 if symmetric else 0.5
        self.a1c = self.a0 if symmetric else 0.5
        self.privacy = Privacy.DELETION if symmetric else Privacy.REPLACEMENT
        self.requested_eps = requested
        self.eps = (math.log(self.a1 / self.a0) if symmetric
                    else math.log(self.a1 * (1 - self.a0) / (self.a0 * (1 - self.a1))))
        check_bytes(array_bytes((self.k, self.t)), f"the item table (k x t = {self.k} x {self.t} "
                    "int64)", "k")
        self.bits_per_report = (self.t + 1) * math.ceil(math.log2(self.q))

    @functools.cached_property
    def items(self) -> np.ndarray:
        """The base-q digits of every item, (k, t) int64, built at first use (a server states
        its cost before building it: ``summary_cost``)."""
        powers = np.array([self.q ** d for d in range(self.t)], dtype=np.int64)
        return (np.arange(self.k, dtype=np.int64)[:, None] // powers[None, :]) % self.q

    def params(self) -> dict:
        return {"k": self.k, "eps": self.requested_eps, "q": self.q, "t": self.t,
                "symmetric": self.privacy is Privacy.DELETION}

    @property
    def replacement_eps(self) -> float:
        return math.log(self.a1 * (1 - self.a0) / (self.a0 * (1 - self.a1)))

    def compression_refusal(self) -> str:
        return (f"a vector PI-RAPPOR report is {self.bits_per_report} bits, already shorter "
                "than a 17-byte seed report")

    def report_columns(self) -> tuple[Column, ...]:
        return (Column("a", int_dtype(self.q), self.t), Column("b", int_dtype(self.q)))

    def _to_columns(self, r) -> dict[str, np.ndarray]:
        dt = int_dtype(self.q)
        a = r[:, : self.t] if self.t > 1 else r[:, 0]  # a width-1 column is 1-D
        return {"a": a.astype(dt), "b": r[:, self.t].astype(dt)}

    def _from_columns(self, cols) -> np.ndarray:
        a = np.asarray(cols["a"]).reshape(-1, self.t).astype(np.int64)
        return np.column_stack([a, np.asarray(cols["b"], dtype=np.int64)])

    def _randomize_many(self, xs, entropy: Entropy) -> np.ndarray:
        """Reports as an (n, t+1) array: a_0..a_{t-1}, b."""
        n = xs.size
        a = entropy.integers(self.q, n * self.t).reshape(n, self.t)
        z = entropy.uniform(n) >= self.a1c
        r = np.where(z, entropy.integers(self.s, n), self.s + entropy.integers(self.q - self.s, n))
        b = (r - (a * self.items[xs]).sum(axis=1)) % self.q
        return np.column_stack([a, b])

    def shuffle_structure(self) -> ShuffleStructure:
        """w = uniform (a, b) in F_q^(t+1): two distinct items give independent Bern(s/q) bits.
        With t >= 2 and k > q the attack uses items 0, 1, q (the vectors 0, e_0, e_1, affinely
        independent), whose three bits are independent; with t = 1 it is PI-RAPPOR over F_q
        (items 0, 2, 1 in arithmetic progression)."""
        params = (("k", self.k), ("q", self.q), ("t", self.t), ("s", self.s), ("a1", self.a1))
        if self.t >= 2 and self.k > self.q:
            return independent_structure("pi-rappor-vector", params, Fraction(self.s, self.q),
                                         kept(self.a1c), attack_items=(0, self.q, 1))
        return _field_structure("pi-rappor-vector", params, self.q, self.s, self.a1c, self.k)

    def check_reports(self, reports) -> np.ndarray:
        """Reports are rows (a_0, ..., a_{t-1}, b): shape (n, t+1), every entry in [0, q)."""
        return integer_reports(reports, self.q, width=self.t + 1, what="field element")

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """The reports packed into codes and made unique (a sort: n log2 n), then every
        distinct report evaluated at every item, t digits each (at most n k t steps), reading
        the k x t item table (built once, held). Memory: that table, the codes, the counts
        (never compressed: ``seeds`` takes the contract's default)."""
        if seeds:
            return super().summary_cost(n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        k, t = self.k, self.t
        items = 8 * k * t
        ops = n * (k * t * C.walk(C.VECTOR_HIT, items) + (t + 2) * 4 * C.SIMPLE
                   + 4 * C.SIMPLE * math.log2(b + 1)) \
            + calls * (C.CALL + k * C.SIMPLE) + k * t * 4 * C.SIMPLE
        return Cost(ops, items + 8 * k * 2 + b * 8 * 6,
                    f"n x k x t = {n} x {k} x {t} digit products")

    def _count(self, rep) -> np.ndarray:
        # code = b + q (a_0 + q a_1 + ...): identical reports are decoded once
        code = np.zeros(rep.shape[0], dtype=np.int64)
        for d in range(self.t - 1, -1, -1):
            code = code * self.q + rep[:, d]
        code = code * self.q + rep[:, self.t]
        codes, counts = np.unique(code, return_counts=True)
        return _field.vector_hits(codes, counts.astype(np.int64), self.items, self.q, self.t,
                                  self.s, self.k)


def _field_structure(name: str, params: tuple, p: int, s: int, a1c: float,
                     k: int) -> ShuffleStructure:
    """Independent Bern(s/p) bits for two items; the attack's items 0, 2, 1 (field elements in
    arithmetic progression: c, c + 2, c + 1) give
    t3 = (s p - 2 s^2 + AP3(s)) / p^2 by inclusion-exclusion (all pairs are independent)."""
    t3 = Fraction(s * p - 2 * s * s + ap3_count(s), p * p) if k >= 3 else None
    return independent_structure(name, params, Fraction(s, p), kept(a1c), triple_independent=False,
                                 t3=t3, attack_items=(0, 2, 1))
