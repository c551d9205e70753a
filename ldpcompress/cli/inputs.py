"""Users' inputs for ``simulate`` and ``encode``, whatever the randomizer: what it takes is
learnt from its contract alone (``check_items``), never from its name.

- Items in [0, k) (frequency oracles): ``check_items`` accepts the integer 0; k is the smallest
  integer it refuses (found by doubling, then bisection). ``simulate`` draws Zipf(1.1) items
  and stores their histogram as ``true_counts.npy``; ``encode`` reads one item per line.
- Vectors of norm <= 1 in dimension d (mean estimation): ``check_items`` accepts the zero
  vector of the summary's length d. ``simulate`` draws x_i = v_i / max(1, |v_i|) with
  v_i = u + g_i / sqrt(d), u = (1, ..., 1) / sqrt(d) a fixed unit direction and g_i standard
  Gaussian noise (so the inputs spread around u, most of norm 1), and stores their mean as
  ``true_mean.npy``; ``encode`` reads one vector (d numbers) per line.
- Real values in [lo, hi] (scalar means): ``check_items`` accepts a value that is not an
  integer (looked for at 0 and +-m 2^j, m in {1, 1.25, 1.5, 1.75}: a range narrower than a
  quarter of its distance from 0 is not found); lo and hi are found by doubling away from an
  accepted value, then bisection.
  ``simulate`` draws x_i = clip(c + (hi - lo) g_i / 4, lo, hi), c = (lo + hi) / 2 and g_i
  standard Gaussian, and stores their mean as ``true_mean.npy``; ``encode`` reads one number
  per line.

Simulated data come from numpy's generator seeded by ``--seed``: they stand for users' data,
they are not privacy coins (the reports' coins come from the OS CSPRNG).
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass

import numpy as np

from ..core import validate as V
from ..core.chunks import spans
from ..randomizers.contract import LocalRandomizer

__all__ = ["ZIPF_EXPONENT", "Inputs", "inputs_of", "simulated"]

ZIPF_EXPONENT = 1.1
_MAX_ITEM_PROBE = 1 << 62


@dataclass(frozen=True)
class Inputs:
    """What a randomizer takes: ``kind`` "items" (``size`` = k), "vectors" (``size`` = d) or
    "reals" (``size`` = 1, in [``lo``, ``hi``])."""

    kind: str
    size: int
    lo: float = 0.0
    hi: float = 0.0

    @property
    def truth_file(self) -> str:
        return "true_counts.npy" if self.kind == "items" else "true_mean.npy"


def _accepts(randomizer: LocalRandomizer, xs) -> bool:
    try:
        randomizer.check_items(xs)
        return True
    except (ValueError, TypeError, OverflowError):
        return False


# where real inputs are looked for: 0 and +-m 2^j (m = 1, 1.25, 1.5, 1.75; j = -20 .. 63), so
# any range [lo, hi] wider than 25% of its distance from 0 holds one
_ANCHORS = (0.0,) + tuple(sign * m * 2.0 ** j for j in range(-20, 64)
                          for m in (1.0, 1.25, 1.5, 1.75) for sign in (1.0, -1.0))
_NOT_INTEGER = 2.0 ** -20


def _edge(randomizer: LocalRandomizer, inside: float, direction: float) -> float:
    """The last accepted real from ``inside`` towards ``direction`` (doubling, bisection)."""
    step = 1.0
    while _accepts(randomizer, np.array([inside + direction * step])):
        step *= 2.0
        if step > 1e300:
            raise ValueError(f"{randomizer.describe()} accepts unbounded real inputs: no range "
                             "to draw simulated inputs from")
    good, bad = inside + direction * step / 2 if step > 1 else inside, inside + direction * step
    for _ in range(200):
        mid = 0.5 * (good + bad)
        if mid in (good, bad):
            break
        good, bad = (mid, bad) if _accepts(randomizer, np.array([mid])) else (good, mid)
    return good


def inputs_of(randomizer: LocalRandomizer) -> Inputs:
    """Items, vectors or real values, and their domain size, dimension or range (module
    docstring)."""
    for anchor in _ANCHORS:  # real values: a value that is no integer is accepted
        if _accepts(randomizer, np.array([anchor])) and \
                _accepts(randomizer, np.array([anchor + _NOT_INTEGER])):
            return Inputs("reals", 1, _edge(randomizer, anchor, -1.0),
                          _edge(randomizer, anchor, 1.0))
    if _accepts(randomizer, np.zeros(1, np.int64)):
        low, high = 0, 1
        while _accepts(randomizer, np.array([high], np.int64)):
            low, high = high, 2 * high
            if high > _MAX_ITEM_PROBE:
                raise ValueError(f"{randomizer.describe()} accepts every integer item: no "
                                 "finite domain to draw or read items from")
        while high - low > 1:  # low accepted, high refused
            mid = (low + high) // 2
            low, high = (mid, high) if _accepts(randomizer, np.array([mid], np.int64)) \
                else (low, mid)
        return Inputs("items", high)
    shape = tuple(randomizer.summary_spec().shape)
    if len(shape) == 1 and _accepts(randomizer, np.zeros((1, shape[0]))):
        return Inputs("vectors", shape[0])
    raise ValueError(f"{randomizer.describe()} takes neither integer items, vectors of its "
                     "summary's dimension nor real values: simulate and encode cannot make its "
                     "inputs")


def simulated(inputs: Inputs, n: int, seed: int, chunk: int):
    """(chunks of n simulated inputs, a function giving the truth file's bytes once every chunk
    was drawn): Zipf items and their counts, or vectors and their mean (module docstring)."""
    n = V.integer_at_least(n, "n", 1)
    if inputs.kind == "items":
        from ..estimation import demo
        truth = np.zeros(inputs.size, np.int64)
        source = demo.zipf_chunks(n, inputs.size, ZIPF_EXPONENT, seed, chunk=chunk)
    elif inputs.kind == "vectors":
        truth = np.zeros(inputs.size, np.float64)
        source = _vectors(n, inputs.size, seed, chunk)
    else:
        truth = np.zeros(1, np.float64)
        source = _reals(n, inputs.lo, inputs.hi, seed, chunk)

    def chunks():
        for xs in source:
            truth[:] += np.bincount(xs, minlength=inputs.size) if inputs.kind == "items" \
                else xs.sum(axis=0)
            yield xs

    def truth_bytes() -> bytes:
        buf = io.BytesIO()
        np.save(buf, truth if inputs.kind == "items" else truth / n)
        return buf.getvalue()

    return chunks(), truth_bytes


VECTOR_CHUNK_BYTES = 32 << 20  # simulated vectors drawn at a time


def _vectors(n: int, d: int, seed: int, chunk: int):
    rng = np.random.default_rng(seed)  # simulated users' data, not privacy coins
    u = np.full(d, 1.0 / math.sqrt(d))
    chunk = max(1, min(chunk, VECTOR_CHUNK_BYTES // (8 * d)))
    for span in spans(n, chunk):
        v = u + rng.standard_normal((span.stop - span.start, d)) / math.sqrt(d)
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        yield v / np.maximum(1.0, norms)


def _reals(n: int, lo: float, hi: float, seed: int, chunk: int):
    rng = np.random.default_rng(seed)  # simulated users' data, not privacy coins
    centre, spread = 0.5 * lo + 0.5 * hi, (hi - lo) / 4
    for span in spans(n, chunk):
        yield np.clip(centre + spread * rng.standard_normal(span.stop - span.start), lo, hi)
