"""What summarising reports costs, stated before any is read: the record a randomizer's
``summary_cost`` returns and the weights its count of operations uses (docs/guide.md,
section 3, "What aggregation may spend").

A report set names its randomizer and parameters, so whoever writes the set chooses how much
work and memory the server spends on it (OLH on 2^26 items hashes every report at every item).
The server therefore asks the randomizer first: :class:`Cost` is the number of *operations*
(weighted steps of the summary's algorithm, one operation standing for about one nanosecond of
one core of the reference machine; ``core.limits.SECONDS_PER_OPERATION`` turns them into
seconds with room to spare) and the *peak bytes*
it holds at once (decode buffers, per-chunk count tables, the result), and the aggregation
refuses what exceeds its limits before reading a shard.

The weights are ns per step measured on the reference machine (2 cores shared with other jobs,
one thread: the kernels' own parallelism is not counted on) by bench/server_limits.py and
rounded up by about half. A kernel that walks a table larger than ``CACHE_BYTES`` for every
report (OLH, PI-RAPPOR, compressed RAPPOR at large k) is limited by memory bandwidth, not
arithmetic: its steps cost ``MEMORY`` more; one that updates a random entry of such a table
(PI-RAPPOR's enumeration, a histogram of random items) waits for memory at each step, more the
larger the table (``scattered``: about 28 ns at 8 MiB, 69 at 32 MiB, 185 at 128 MiB, 571 at
512 MiB measured).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Cost", "CACHE_BYTES", "SIMPLE", "BINCOUNT", "BOOL_SUM", "AFFINE", "OLH_HASH",
           "ENUM", "FERMAT", "INVERSE", "AES_WORD", "SEED", "DRAW", "SPHERE", "VECTOR_HIT",
           "FWHT", "FLOAT_ROW", "MEMORY", "CALL", "PY_SEED", "walk", "scattered", "threads",
           "entries_of", "batch_of", "calls", "cost_args"]

# ns per step on the reference machine (measured, then rounded up; module docstring)
SIMPLE = 2.0        # one value through a numpy pass (compare, add, copy, cast)
BINCOUNT = 10.0     # np.bincount per entry of its result or its input (6.4 measured)
BOOL_SUM = 3.0      # one bit of a (n, k) bool batch summed over reports (1.9)
AFFINE = 6.0        # PI-RAPPOR direct counting, one (report, item) (2.9 - 5.2)
OLH_HASH = 11.0     # OLH counting, one (report, item): a hash mod p and mod g (6.7 - 10.2)
ENUM = 8.0          # PI-RAPPOR enumeration, one (report, r < s) (5.2)
FERMAT = 600.0      # one inverse mod p by Fermat, p above the inverse table (440)
INVERSE = 20.0      # one entry of the table of inverses mod p (14)
AES_WORD = 6.0      # one 64-bit AES-CTR keystream word read and compared (3.4 - 4.5)
SEED = 1000.0       # one seed: key expansion, the first block, the batch's bookkeeping (600)
DRAW = 400.0        # one bounded draw and swap of a decoded d-subset (241)
SPHERE = 150.0      # one coordinate of a decoded sphere point (Box-Muller, AES words) (82-122)
VECTOR_HIT = 10.0   # vector PI-RAPPOR, one (distinct report, item, digit) (6.8)
FWHT = 5.0          # one butterfly of the Walsh-Hadamard transform, per K log2 K (3.1)
FLOAT_ROW = 60.0    # one coordinate of a stored vector report: finite, norm, sum (24 - 50)
MEMORY = 8.0        # surcharge per step of a table walk beyond CACHE_BYTES (+2 to +6)
CALL = 50_000.0     # one summarize (or kernel) call: Python, allocation, dispatch
PY_SEED = 100_000.0  # one seed decoded by Python (a PRG each: Laplace, the contract's default) (55 000)
CACHE_BYTES = 4 << 20  # a table walked per report above this streams from memory


@dataclass(frozen=True)
class Cost:
    """What a step of the server spends: ``operations`` (about ns of one core, see the module
    docstring) and ``peak_bytes`` (the most memory it holds at once, its result included);
    ``detail`` says how they were counted, e.g. "n x k = 1.3e12 hash steps"."""

    operations: float
    peak_bytes: float
    detail: str = ""

    def __post_init__(self):
        for name in ("operations", "peak_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                                  np.floating)) \
                    or math.isnan(value) or value < 0:
                raise ValueError(f"Cost.{name} must be a number >= 0, got {value!r}")


def walk(weight: float, table_bytes: float) -> float:
    """The weight of a step that walks a table of ``table_bytes`` per report: ``weight``, plus
    ``MEMORY`` when the table does not fit in the cache."""
    return weight + (MEMORY if table_bytes > CACHE_BYTES else 0.0)


def scattered(weight: float, table_bytes: float) -> float:
    """The weight of a step that updates a random entry of a table of ``table_bytes``:
    ``weight``, plus a wait for memory beyond the cache of 40 (table / 8 MiB)^0.75 ns (the
    measured waits in the module docstring, with room to spare)."""
    if table_bytes <= CACHE_BYTES:
        return weight
    return weight + 40.0 * (table_bytes / (8 << 20)) ** 0.75


def cost_args(n, batch) -> tuple[int, int, int]:
    """(n, reports in the largest call, calls) for ``summary_cost(n, batch)``, checked: n an
    integer >= 0, batch None or an integer >= 1 (TypeError/ValueError naming them)."""
    from ..core import validate as V
    n = V.integer_at_least(n, "n", 0)
    if batch is not None:
        batch = V.integer_at_least(batch, "batch", 1)
    return n, batch_of(n, batch), calls(n, batch)


def threads() -> int:
    """Threads the parallel kernels run on (each may hold its own buffers)."""
    from .threads import num_threads
    return max(1, num_threads())


def entries_of(shape) -> int:
    """The number of entries of an array of ``shape`` (Python ints: no overflow)."""
    return int(np.prod(shape, dtype=object))


def batch_of(n: int, batch: int | None) -> int:
    """Reports in the largest call: ``batch`` (None: all n), at most n, at least 1."""
    return max(1, min(int(n), int(batch) if batch is not None else int(n)))


def calls(n: int, batch: int | None) -> int:
    """summarize calls for n reports handed over ``batch`` at a time (at least one)."""
    return max(1, -(-int(n) // batch_of(n, batch)))
