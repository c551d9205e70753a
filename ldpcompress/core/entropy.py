"""Client-side randomness from the OS CSPRNG (os.urandom), never numpy's or Python's PRNGs.

``Entropy`` is the one source of client coins and seeds; tests may pass a deterministic byte
source to make statistical checks reproducible, production code never does.
"""
from __future__ import annotations

import os
from typing import Callable

import numpy as np

from .prg import SEED_BYTES, WordStream

__all__ = ["Entropy", "SYSTEM", "deterministic_source"]



class Entropy(WordStream):
    """Seeds, and the uniforms, integers, Gaussians of ``WordStream``, drawn from
    ``source(nbytes)`` (default os.urandom)."""

    def __init__(self, source: Callable[[int], bytes] = os.urandom):
        self.source = source

    def words(self, count: int) -> np.ndarray:
        return np.frombuffer(self.source(8 * count), dtype="<u8")

    def seeds(self, count: int) -> list[bytes]:
        raw = self.source(SEED_BYTES * count)
        return [raw[i * SEED_BYTES:(i + 1) * SEED_BYTES] for i in range(count)]


SYSTEM = Entropy()


def deterministic_source(seed: int) -> Callable[[int], bytes]:
    """A reproducible byte source for tests only (numpy's generator: NOT for privacy)."""
    gen = np.random.default_rng(seed)
    return lambda nbytes: gen.bytes(nbytes)
