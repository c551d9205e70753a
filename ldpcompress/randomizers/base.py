"""The local randomizer, the hub of the library (docs/theory.md §1, §5, §6).

A randomizer states
* its privacy: ``kind`` ("replacement" or "deletion") and ``eps``;
* its client: ``randomize_many(xs, entropy)`` with coins from the OS CSPRNG;
* what compression needs (FT21 Alg. 1; docs/theory.md §5.2): a reference law rho with a
  deterministic sampler ``sample(prg)``, the density ratio ``ratio(x, y) = R(x)(y) / rho(y)``
  and ``deletion_eps`` = log max ratio;
* for frequency oracles (``FrequencyOracle``): its server (support counts, the unbiased
  estimator, its variance and confidence intervals ``intervals``, docs/theory.md §6) and what
  shuffle accounting needs, its blanket structure ``shuffle_structure()`` (docs/theory.md §2.5).
"""
from __future__ import annotations

import numpy as np
from numba import get_num_threads

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..core.limits import array_bytes, check_bytes
from ..core.prg import PRG
from .estimator import BinaryEstimator, check_flag

__all__ = ['Randomizer', 'FrequencyOracle', 'EPS_MAX', 'check_eps', 'check_flag', 'check_batch_bytes', 'chunks_for']


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

def check_eps(eps) -> float:
    """eps in (0, EPS_MAX]."""
    v = V.positive_finite(eps, "eps")
    if v > EPS_MAX:
        raise ValueError(f"eps must be in (0, {EPS_MAX:g}] (e^eps must be finite), got {eps!r}")
    return v

def check_batch_bytes(n: int, k: int, itemsize: int, what: str, max_bytes=None) -> None:
    """Refuse an n x k client-side table (RAPPOR bits, subset keys) above the memory limit."""
    check_bytes(array_bytes((n, k), np.float64) * itemsize // 8,
                f"{what} for n = {n} reports x k = {k}", "n (batch the inputs) or k", max_bytes)


CHUNK_TABLE_BYTES = 1 << 30  # the parallel kernels' per-chunk count rows, all chunks together


def chunks_for(n: int, k: int = 1) -> int:
    """Report chunks for the parallel kernels: a few per thread, at least 4096 reports each,
    and few enough that their per-chunk rows of k int64 counts stay within CHUNK_TABLE_BYTES
    (so the server's memory for a given k does not grow with the machine's thread count)."""
    by_memory = max(1, CHUNK_TABLE_BYTES // (8 * max(int(k), 1)))
    return max(1, min(4 * get_num_threads(), n // 4096 + 1, by_memory))

class FrequencyOracle(BinaryEstimator):
    """Interface; subclasses set name, k, eps, kind, a0, a1, bits_per_report and define
    ``randomize_many`` (client) and ``counts`` (server)."""

    name = ""
    eps: float
    kind: str  # "deletion" or "replacement"
    bits_per_report: int

    def randomize_many(self, xs, entropy: Entropy = SYSTEM):
        raise NotImplementedError

    def check_reports(self, reports):
        raise NotImplementedError

    def plateau(self) -> tuple:
        """The discrete choices made from the eps parameter (bucket count, field, subset size
        ...): the realised law jumps where they change, so its privacy is not monotone in the
        parameter across them. () when there are none (the law is continuous in eps)."""
        return ()
