"""Client-side randomness from the OS CSPRNG (os.urandom), never numpy's or Python's PRNGs.

``Entropy`` is the one source of client coins and seeds; tests may pass a deterministic byte
source to make statistical checks reproducible, production code never does.
"""
from __future__ import annotations

import os
from typing import Callable

import numpy as np

from .prg import SEED_BYTES

_TWO53 = 2.0 ** -53


class Entropy:
    """Uniforms, integers and seeds drawn from ``source(nbytes)`` (default os.urandom)."""

    def __init__(self, source: Callable[[int], bytes] = os.urandom):
        self.source = source

    def seeds(self, count: int) -> list[bytes]:
        raw = self.source(SEED_BYTES * count)
        return [raw[i * SEED_BYTES:(i + 1) * SEED_BYTES] for i in range(count)]

    def uniform(self, count: int) -> np.ndarray:
        w = np.frombuffer(self.source(8 * count), dtype="<u8")
        return (w >> np.uint64(11)).astype(np.float64) * _TWO53

    def integers(self, m: int, count: int) -> np.ndarray:
        """Uniform integers in [0, m) by rejection on 64-bit words (no modulo bias)."""
        limit = np.uint64((2 ** 64 // m) * m - 1)
        out = np.empty(0, dtype=np.int64)
        while out.size < count:
            w = np.frombuffer(self.source(8 * (count - out.size)), dtype="<u8")
            out = np.concatenate([out, (w[w <= limit] % np.uint64(m)).astype(np.int64)])
        return out[:count]


SYSTEM = Entropy()


def deterministic_source(seed: int) -> Callable[[int], bytes]:
    """A reproducible byte source for tests only (numpy's generator: NOT for privacy)."""
    gen = np.random.default_rng(seed)
    return lambda nbytes: gen.bytes(nbytes)
