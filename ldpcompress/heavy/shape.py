"""The public shape of a heavy-hitter campaign's prefix tree (docs/theory.md §2.17): alphabet,
symbols per round, rounds, survivors per round, longest word, and the oracle's domain
k = keep x blocks + 1 (bounded by ``prefix.MAX_K`` before any list is built)."""
from __future__ import annotations

from dataclasses import dataclass

from ..core import validate as V
from .prefix import MAX_K, Alphabet, block_count, check_shape

__all__ = ["TreeShape"]


@dataclass(frozen=True)
class TreeShape:
    """The public shape of the tree: alphabet, symbols per round (``step``), rounds, survivors
    per round (``keep``), the longest word (``max_len``) and the oracle's domain k.

    Attributes
    ----------
    alphabet : Alphabet
        The public alphabet (the terminator, code 0, is not a symbol).
    step : int
        Symbols asked per round, in [1, 8].
    rounds : int
        Rounds of the tree, in [1, 64].
    keep : int
        Candidates surviving each round, in [1, 10**5].
    max_len : int
        The longest word with a code, in [0, rounds x step - 1].
    """

    alphabet: Alphabet
    step: int
    rounds: int
    keep: int
    max_len: int

    @classmethod
    def of(cls, alphabet: Alphabet, step: int, rounds: int, keep: int,
           max_len: int | None = None) -> "TreeShape":
        """The shape checked: ValueError naming the parameter when out of range, or when the
        codes of rounds x step symbols overflow int64.

        Parameters
        ----------
        alphabet : Alphabet
            The public alphabet.
        step : int
            Symbols asked per round, in [1, 8].
        rounds : int
            Rounds of the tree, in [1, 64].
        keep : int
            Candidates surviving each round, in [1, 10**5].
        max_len : int or None, optional
            The longest word with a code, in [0, rounds x step - 1]; None: rounds x step - 1.
        """
        step = V.integer_at_least(step, "step", 1, 8)
        rounds = V.integer_at_least(rounds, "rounds", 1, 64)
        keep = V.integer_at_least(keep, "keep", 1, 10 ** 5)
        max_len = check_shape(alphabet, step, rounds, max_len)
        k = keep * block_count(alphabet, step) + 1
        if k > MAX_K:
            raise ValueError(f"keep x blocks + 1 = {keep} x {block_count(alphabet, step):,} + 1 "
                             f"= {k:,} candidate indices per round (alphabet of "
                             f"{alphabet.size} symbols, step {step}) exceeds the limit "
                             f"MAX_K = {MAX_K:,}: use a smaller step, keep or alphabet")
        return cls(alphabet, step, rounds, keep, max_len)

    @property
    def blocks(self) -> int:
        return block_count(self.alphabet, self.step)

    @property
    def k(self) -> int:
        return self.keep * self.blocks + 1
