"""The reference-law facet of the randomizer contract: what compression by rejection sampling
(FT21 Alg. 1; docs/theory.md §5.2) needs of a randomizer, with the helpers of its batch hooks.

A randomizer offers compression by stating ``deletion_eps``, a deterministic sampler of its
reference law rho (``sample(prg)``) and the density ratio R(x)(y) / rho(y) (``ratio``); the
per-seed and batch methods below follow from those two (slow defaults), and a randomizer may
give fast batch hooks (``decode_seeds``, ``ratios_from_seeds``, ``summarize_seeds``, decorated
with :class:`seed_batch`). ``compression_refusal()`` says why FT21 does not apply, or None.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..core.prg import PRG, check_seed, check_seed_rows

__all__ = ["ReferenceLaw", "seeds_array", "paired", "seed_batch", "PER_SEED"]


def seeds_array(seeds) -> np.ndarray:
    """Seeds as a C-contiguous (n, 16) uint8 array (from a list of 16-byte strings or such an
    array), ready for the batch kernels."""
    if isinstance(seeds, np.ndarray):
        return check_seed_rows(seeds)
    rows = [np.frombuffer(check_seed(s), dtype=np.uint8) for s in seeds]
    return np.stack(rows) if rows else np.zeros((0, 16), dtype=np.uint8)


def paired(xs: np.ndarray, seeds: np.ndarray) -> None:
    """One input per seed (ValueError naming both lengths: no silent truncation)."""
    if len(xs) != len(seeds):
        raise ValueError(f"ratios_from_seeds needs one input per seed, got {len(xs)} inputs "
                         f"and {len(seeds)} seeds")


PER_SEED = ("sample", "decode_seed", "ratio", "ratio_from_seed")


class seed_batch:
    """Decorator of a randomizer's fast batch hook (``decode_seeds``, ``ratios_from_seeds``,
    ``summarize_seeds``): the hook agrees with the per-seed methods (:data:`PER_SEED`) of the
    class that defines it, so a subclass that overrides one of those without redefining the
    hook gets the contract's slow default, which follows its own per-seed methods (a fast hook
    inherited past a new sampler would decode other outputs than the subclass's)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner, name):
        self.owner, self.name = owner, name

    def __get__(self, obj, objtype=None):
        cls = objtype if obj is None else type(obj)
        if all(getattr(cls, m) is getattr(self.owner, m) for m in PER_SEED):
            return self.fn.__get__(obj, cls)
        return getattr(ReferenceLaw, self.name).__get__(obj, cls)


class ReferenceLaw:
    """Compression facet (FT21 Alg. 1): the reference law, the density ratio to it and the
    seed decoders. Defaults say "not available" (``compression_refusal`` names why) until a
    randomizer states ``sample``, ``ratio`` and a finite ``deletion_eps``; it also uses the
    randomizer's ``name``, ``check_item``, ``check_reports``, ``concat`` and ``summarize``."""

    name: ClassVar[str] = ""
    deletion_eps: float | None = None  # w.r.t. the reference law of ``sample`` (compression)

    if TYPE_CHECKING:  # the other facets' methods this one calls (contract.LocalRandomizer)
        def check_item(self, x) -> Any: ...
        def check_reports(self, reports) -> Any: ...
        def concat(self, batches: list) -> Any: ...
        def _summarize(self, reports) -> np.ndarray: ...

    def compression_refusal(self) -> str | None:
        """Why ``compress()`` refuses this randomizer, or None when it accepts it: FT21
        Alg. 1 needs a reference law with a deterministic sampler (``sample``), the density
        ratio (``ratio``) and a finite deletion eps w.r.t. that law."""
        own = type(self)
        if own.sample is ReferenceLaw.sample or own.ratio is ReferenceLaw.ratio:
            return (f"{self.name} states no reference sampler and density ratio "
                    "(sample, ratio), which rejection sampling needs")
        if self.deletion_eps is None or not (0 < self.deletion_eps < math.inf):
            return f"{self.name} has no finite deletion eps w.r.t. its reference law"
        return None

    def sample(self, prg: PRG):
        """One output y ~ rho (the reference law) from the PRG stream.

        Parameters
        ----------
        prg : PRG
            The AES-CTR stream of one seed.
        """
        raise NotImplementedError(f"{self.name} has no reference sampler")

    def decode_seed(self, seed: bytes):
        """The output a compressed report's seed stands for: sample(G(seed)).

        Parameters
        ----------
        seed : bytes
            The 16-byte seed of a compressed report.
        """
        return self.sample(PRG(seed))

    def ratio(self, x, y) -> float:
        """R(x)(y) / rho(y).

        Parameters
        ----------
        x
            One user's input.
        y
            One output of the randomizer.
        """
        raise NotImplementedError(f"{self.name} has no density ratio")

    def ratio_from_seed(self, x, seed: bytes) -> float:
        """ratio(x, decode_seed(seed)); subclasses may compute it without the whole output.

        Parameters
        ----------
        x
            One user's input.
        seed : bytes
            The 16-byte seed of a compressed report.
        """
        return self.ratio(x, self.decode_seed(seed))

    def ratio_bounds(self) -> tuple[float, float] | None:
        """(min, max) of the ratio over all inputs and outputs, when known."""
        return None

    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        """ratio(x_i, decode_seed(seed_i)) for a batch (slow default: one at a time).

        Parameters
        ----------
        xs : array_like
            The users' inputs, one per report.
        seeds : sequence of bytes or numpy.ndarray
            16-byte seeds of compressed reports (a list of bytes or an (n, 16) uint8 array).
        """
        seeds = seeds_array(seeds)
        paired(xs, seeds)
        return np.array([self.ratio_from_seed(self.check_item(x), bytes(s))
                         for x, s in zip(xs, seeds)], dtype=float)

    def decode_seeds(self, seeds):
        """The outputs of a batch of seeds as one report batch (slow default).

        Parameters
        ----------
        seeds : sequence of bytes or numpy.ndarray
            16-byte seeds of compressed reports (a list of bytes or an (n, 16) uint8 array).
        """
        seeds = seeds_array(seeds)
        outs = [self.decode_seed(bytes(s)) for s in seeds]
        return self.check_reports(np.asarray(outs)) if outs else self.concat([])

    def summarize_seeds(self, seeds) -> np.ndarray:
        """summarize() of the outputs a batch of seeds stands for (slow default).

        Parameters
        ----------
        seeds : sequence of bytes or numpy.ndarray
            16-byte seeds of compressed reports (a list of bytes or an (n, 16) uint8 array).
        """
        return self._summarize(self.decode_seeds(seeds))  # decoded outputs: checked
