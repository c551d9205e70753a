"""Client-side randomness from the OS CSPRNG (os.urandom), never numpy's or Python's PRNGs.

``Entropy`` is the one source of client coins and seeds. ``SYSTEM`` (os.urandom) is the
default of every client. For reproducible experiments and tests only,
:meth:`Entropy.seeded_for_simulation` (``ldpcompress.simulation_entropy``) gives a seeded,
predictable source: anyone who knows the seed can undo the randomization, so it gives no
privacy at all and must never reach a client.
"""
from __future__ import annotations

import numbers
import os
from typing import Callable

import numpy as np

from .prg import PRG, SEED_BYTES, WordStream

__all__ = ["Entropy", "SYSTEM", "deterministic_source", "simulation_entropy", "simulation_only"]


class Entropy(WordStream):
    """Seeds, and the uniforms, integers, Gaussians of ``WordStream``, drawn from
    ``source(nbytes)`` (default os.urandom). ``for_simulation`` is True for the seeded
    sources of :meth:`seeded_for_simulation` (no privacy: reproducible experiments only)."""

    def __init__(self, source: Callable[[int], bytes] = os.urandom):
        self.source = source
        self.for_simulation = False
        self.seed: int | None = None

    @classmethod
    def seeded_for_simulation(cls, seed: int) -> Entropy:
        """A reproducible source for simulations and tests ONLY, never for clients: the bytes
        come from numpy's PCG64 seeded with ``seed`` (an integer >= 0), so the same seed gives
        the same reports, and anyone who knows the seed can invert the randomization."""
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
            raise TypeError(f"seed must be an integer >= 0, got {type(seed).__name__}")
        if seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        out = cls(deterministic_source(int(seed)))
        out.for_simulation = True
        out.seed = int(seed)
        return out

    def __repr__(self) -> str:
        if self.for_simulation:
            return f"Entropy.seeded_for_simulation({self.seed}) (SIMULATION ONLY: no privacy)"
        if self.source is os.urandom:
            return "Entropy(os.urandom)"
        return f"Entropy({self.source!r})"

    def words(self, count: int) -> np.ndarray:
        return np.frombuffer(self.source(8 * count), dtype="<u8")

    def expand(self) -> PRG:
        """A fresh AES-128-CTR stream (the PRG of docs/theory.md §5.1) keyed by 16 bytes drawn
        from this source, for clients that need many coins at once (ldpcompress.core.coins):
        pycryptodome's AES with AES-NI (constant time) gives ~GB/s, against ~0.5 GB/s for
        os.urandom. Each call draws a new key that lives only in the returned stream; its words
        are computationally indistinguishable from the source's for anyone without the key.
        A seeded simulation source gives the same key, hence the same stream, for a seed."""
        return PRG(self.words(2).tobytes())

    def seeds(self, count: int) -> list[bytes]:
        raw = self.source(SEED_BYTES * count)
        return [raw[i * SEED_BYTES:(i + 1) * SEED_BYTES] for i in range(count)]

    def seed_array(self, count: int) -> np.ndarray:
        """``count`` seeds as a uint8 array of shape (count, 16) (the batch encoder's form)."""
        raw = self.source(SEED_BYTES * count)
        return np.frombuffer(raw, dtype=np.uint8).reshape(count, SEED_BYTES).copy()


SYSTEM = Entropy()


def simulation_only(entropy, what: str) -> Entropy:
    """``entropy`` when it is a seeded simulation source (``Entropy.seeded_for_simulation``),
    else ValueError: ``what`` (a simulation path) must never encode a real client's input."""
    if not isinstance(entropy, Entropy) or not entropy.for_simulation:
        raise ValueError(f"{what} is for simulations, benchmarks and load tests only: pass "
                         "Entropy.seeded_for_simulation(seed) (real clients use encode_many, "
                         f"whose coins come from os.urandom), got {entropy!r}")
    return entropy


def deterministic_source(seed: int) -> Callable[[int], bytes]:
    """A reproducible byte source for tests only (numpy's generator: NOT for privacy)."""
    gen = np.random.default_rng(seed)  # simulation and test bytes only, never a client's coins
    return lambda nbytes: gen.bytes(nbytes)


def simulation_entropy(seed: int) -> Entropy:
    """``Entropy.seeded_for_simulation(seed)``: seeded coins for reproducible simulations and
    tests ONLY (the same seed gives identical reports; no privacy), never for clients.

    Parameters
    ----------
    seed : int
        The simulation's seed (equal seeds give equal coins).
    """
    return Entropy.seeded_for_simulation(seed)
