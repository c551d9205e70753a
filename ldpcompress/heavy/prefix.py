"""The prefix tree of the heavy-hitter job: a public alphabet with an explicit terminator, words
as padded symbol strings, prefixes as integer codes, and each round's candidate list
(docs/guide.md, "Heavy hitters over unknown domains"; docs/theory.md §2.17).

A word of at most ``max_len`` symbols is padded with the terminator (code 0) to ``length``
symbols; symbol i of the alphabet has code i + 1, so a prefix of l symbols is the integer
sum_i c_i B^(l-1-i) with B = |alphabet| + 1. A word with a symbol outside the alphabet or longer
than ``max_len`` has no code: its device reports the catch-all "other" in every round.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

__all__ = ["BYTES", "MAX_K", "Alphabet", "Encoded", "children", "valid_blocks",
           "block_count", "candidate_indices"]

BYTES = "bytes"  # the alphabet of the 256 byte values of a word's UTF-8 encoding
MAX_CODE = 2 ** 62  # prefix codes stay well inside int64
# largest oracle domain of a round (keep x blocks + 1): 4,194,304 candidate indices, about
# 32 MiB per array of codes or estimates; checked before any list is built
MAX_K = 1 << 22


@dataclass(frozen=True)
class Alphabet:
    """The public alphabet: ``symbols`` a string of distinct characters (a symbol table), or
    ``"bytes"`` (a word is its UTF-8 bytes). The terminator is code 0, not a symbol.

    Attributes
    ----------
    symbols : str
        Distinct characters (symbol i has code i + 1; non-empty), or "bytes" (256 symbols);
        default lower-case a-z and "'".
    """

    symbols: str = "abcdefghijklmnopqrstuvwxyz'"

    def __post_init__(self):
        if not isinstance(self.symbols, str):
            raise TypeError(f"alphabet must be a string of symbols or {BYTES!r}, got "
                            f"{type(self.symbols).__name__}")
        if self.symbols != BYTES:
            if not self.symbols:
                raise ValueError("alphabet: give at least one symbol")
            if len(set(self.symbols)) != len(self.symbols):
                dup = sorted({c for c in self.symbols if self.symbols.count(c) > 1})
                raise ValueError(f"alphabet: symbols must be distinct, repeated: {dup!r}")

    @property
    def size(self) -> int:
        return 256 if self.symbols == BYTES else len(self.symbols)

    @property
    def base(self) -> int:
        return self.size + 1

    def digits(self, word: str) -> list[int] | None:
        """The word's symbol codes (1..size), or None when a symbol is outside the alphabet.

        Parameters
        ----------
        word : str
            The word to encode (TypeError for a non-str).
        """
        if not isinstance(word, str):
            raise TypeError(f"words must be str, got {type(word).__name__}")
        if self.symbols == BYTES:
            return [b + 1 for b in word.encode("utf-8", errors="surrogatepass")]
        table = {c: i + 1 for i, c in enumerate(self.symbols)}
        out = []
        for c in word:
            code = table.get(c)
            if code is None:
                return None
            out.append(code)
        return out

    def word(self, digits: Iterable[int]) -> str:
        """The word of a padded code string (terminators dropped).

        Parameters
        ----------
        digits : iterable of int
            Symbol codes in [0, size] (0: the terminator, dropped).
        """
        ds = [int(d) for d in digits if int(d) != 0]
        if self.symbols == BYTES:
            return bytes(d - 1 for d in ds).decode("utf-8", errors="replace")
        return "".join(self.symbols[d - 1] for d in ds)


def check_shape(alphabet: Alphabet, step: int, rounds: int, max_len: int | None) -> int:
    """``max_len`` checked (default rounds * step - 1: every word ends with a terminator inside
    the tree); ValueError when the codes of rounds * step symbols overflow int64."""
    length = rounds * step
    if alphabet.base ** length >= MAX_CODE:
        raise ValueError(f"rounds x step = {length} symbols over an alphabet of {alphabet.size} "
                         f"symbols: prefix codes above 2^62; use fewer rounds or a smaller step")
    if max_len is None:
        return length - 1
    if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) \
            or not 0 <= max_len <= length - 1:
        raise ValueError(f"max_len must be an integer in [0, rounds x step - 1 = {length - 1}] "
                         f"(a word ends with its terminator inside the tree), got {max_len!r}")
    return int(max_len)


@dataclass(frozen=True)
class Encoded:
    """Distinct words as padded codes: ``digits`` (m, length) int64, ``known`` (m,) bool (False:
    outside the alphabet or too long; such a device reports "other")."""

    words: tuple[str, ...]
    digits: np.ndarray
    known: np.ndarray

    @classmethod
    def of(cls, words: Sequence[str], alphabet: Alphabet, length: int,
           max_len: int) -> "Encoded":
        # each distinct word encoded once (devices' words repeat: 1e6 words, a few thousand
        # distinct), then every device's row taken from its word's
        index: dict[str, int] = {}
        inverse = np.fromiter((index.setdefault(w, len(index)) for w in words),
                              dtype=np.int64, count=len(words))
        digits = np.zeros((len(index), length), dtype=np.int64)
        known = np.zeros(len(index), dtype=bool)
        for i, w in enumerate(index):
            ds = alphabet.digits(w)
            if ds is None or len(ds) > max_len:
                continue
            digits[i, :len(ds)] = ds
            known[i] = True
        return cls(tuple(words), digits[inverse], known[inverse])

    def prefix_codes(self, symbols: int, base: int) -> np.ndarray:
        """int64 code of each word's first ``symbols`` symbols (-1 for unknown words)."""
        code = np.zeros(len(self.words), dtype=np.int64)
        for i in range(symbols):
            code = code * base + self.digits[:, i]
        return np.where(self.known, code, -1)


def block_count(alphabet: Alphabet, step: int) -> int:
    """How many blocks :func:`valid_blocks` lists: sum_{i=0}^{step} size^i (exact integer)."""
    return sum(alphabet.size ** i for i in range(step + 1))


def valid_blocks(alphabet: Alphabet, step: int) -> np.ndarray:
    """Codes of the ``step``-symbol blocks a padded word can continue with: i symbols then
    step - i terminators, i = 0..step (sum_i size^i blocks), sorted."""
    base, out = alphabet.base, [np.zeros(1, dtype=np.int64)]
    for i in range(1, step + 1):
        heads = np.zeros(1, dtype=np.int64)
        for _ in range(i):
            heads = (heads[:, None] * base + np.arange(1, base, dtype=np.int64)[None, :]).ravel()
        out.append(heads * base ** (step - i))
    return np.sort(np.concatenate(out))


def children(parents: np.ndarray, alphabet: Alphabet, step: int, root: bool) -> np.ndarray:
    """The sorted candidate codes one round extends ``parents`` (prefix codes) to: a prefix
    that ended (its last symbol the terminator) continues only with terminators; the others
    with every valid block. ``root``: round 1, one parent, the empty prefix."""
    base = alphabet.base
    blocks = valid_blocks(alphabet, step)
    parents = np.asarray(parents, dtype=np.int64)
    shift = np.int64(base ** step)
    if root:
        return blocks
    ended = (parents % base) == 0
    open_ = parents[~ended]
    grown = (open_[:, None] * shift + blocks[None, :]).ravel()
    return np.sort(np.concatenate([grown, parents[ended] * shift]))


def candidate_indices(codes: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Each device's candidate index (its prefix code's position in the sorted list), or
    len(candidates), the catch-all "other", for a prefix not listed or an unknown word (-1)."""
    other = len(candidates)
    if other == 0:
        return np.full(len(codes), 0, dtype=np.int64)
    pos = np.searchsorted(candidates, codes)
    pos_c = np.minimum(pos, other - 1)
    hit = (candidates[pos_c] == codes) & (codes >= 0)
    return np.where(hit, pos_c, other).astype(np.int64)
