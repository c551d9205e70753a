"""String and categorical items: a fixed, public list of names and their indices 0 .. k-1.

The frequency oracles count integer items in [0, k). :class:`ItemDomain` maps item names to
those indices on the client (``index``, before ``randomize_many``) and labels the server's
estimates with the names (``label``). It lives in ``core`` because both sides use it and it
depends on no randomizer.

Privacy: the domain must be fixed in advance and public (shipped with the client, identical on
the server). It must never be built from the users' data (for example from the set of values
seen in the raw data, or by adding a name when a user reports it): the list itself would then
reveal which items some user holds, outside any privacy guarantee. Unknown names are refused,
never skipped (skipping would bias every estimate silently); to count them, put an explicit
name such as "(other)" in the public list and map unknown values to it before ``index``.
"""
from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable

import numpy as np

from .regular_files import read_regular
from .validate import MAX_K

__all__ = ["ItemDomain", "MAX_DOMAIN_FILE_BYTES"]

MAX_DOMAIN_FILE_BYTES = 2 ** 28  # 256 MiB: a public list of names, read whole into memory

# Characters that render as nothing, as a line break or like another character: a name holding
# one could look identical to another name while being a different item. Refused (with its
# code point) rather than removed: a silent edit would change which item a report counts.
_INVISIBLE = {"Cc": "a control character", "Cf": "an invisible format character",
              "Zl": "a line separator", "Zp": "a paragraph separator",
              "Cs": "a lone surrogate", "Cn": "an unassigned code point"}


def _bad_char(name: str) -> str | None:
    """Why ``name`` may render like another name (None when it cannot): a control, format
    (zero-width, BOM, direction mark), separator or unassigned character, or a space other than
    U+0020."""
    if name.isascii() and name.isprintable():
        return None
    for ch in name:
        if ch == " " or (ch.isascii() and ch.isprintable()):
            continue
        cat = unicodedata.category(ch)
        if cat in _INVISIBLE:
            return f"{_INVISIBLE[cat]} U+{ord(ch):04X}"
        if cat == "Zs":
            return f"the space U+{ord(ch):04X} (only U+0020 is allowed: spaces look alike)"
    return None


def _show(name: str, limit: int = 60) -> str:
    text = repr(name)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


class ItemDomain:
    """A fixed public list of k >= 2 distinct, non-empty item names; item ``names[j]`` is
    index j of every frequency oracle built with this k (``oracle = KRR(domain.k, eps)``).

    Parameters
    ----------
    names : iterable of str
        The item names in index order (k >= 2 distinct, non-empty names).
    """

    def __init__(self, names: Iterable[str]):
        if isinstance(names, (str, bytes)):
            raise TypeError("names must be a list of item names, got a single "
                            f"{type(names).__name__} (wrap it in a list)")
        try:
            seq = list(names)
        except TypeError:
            raise TypeError(f"names must be an iterable of str, got {type(names).__name__}") \
                from None
        self._where: dict[str, int] = {}
        canonical: dict[str, int] = {}
        for i, name in enumerate(seq):
            self._check_name(name, f"names[{i}]")
            key = unicodedata.normalize("NFC", name)
            if key in canonical:
                j = canonical[key]
                same = "repeats" if seq[j] == name else "is canonically equivalent to (NFC)"
                raise ValueError(f"names[{i}] = {_show(name)} {same} names[{j}]: item names "
                                 "must be distinct and must not render alike")
            canonical[key] = i
            self._where[str(name)] = i
        if not 2 <= len(seq) <= MAX_K:  # the oracles' largest k
            raise ValueError(f"names must hold at least 2 items (at most {MAX_K}), got "
                             f"{len(seq)}")
        self._names = tuple(self._where)

    @staticmethod
    def _check_name(name, where: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{where} must be a str item name, got {type(name).__name__}")
        if not name:
            raise ValueError(f"{where} is empty: item names must be non-empty")
        if "\n" in name or "\r" in name:
            raise ValueError(f"{where} = {_show(name)} holds a line break (a name is one line)")
        if name != name.strip():
            raise ValueError(f"{where} = {_show(name)} has leading or trailing whitespace "
                             "(names that look alike must not differ)")
        why = _bad_char(name)
        if why is not None:
            raise ValueError(f"{where} = {_show(name)} holds {why}: such names render like "
                             "other names; remove it")

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> ItemDomain:
        """One name per line, UTF-8 (a byte-order mark at the start of the file is stripped),
        spaces, tabs and the CR of a CRLF around each line ignored; a final newline is
        optional. A regular file of at most ``MAX_DOMAIN_FILE_BYTES``: a FIFO, device or
        directory is refused before it is opened (it could block or never end). An empty line,
        a duplicate name (also under Unicode canonical equivalence, NFC), a name holding a
        character that renders as nothing or like another (control and format characters such
        as NUL, VT, zero-width spaces or a BOM past the start, U+2028/U+2029, spaces other than
        U+0020) or bytes that are not UTF-8 are ValueErrors naming the file and the line."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a file path, got {type(path).__name__}")
        raw = read_regular(path, "an item domain file", MAX_DOMAIN_FILE_BYTES)
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        lines = raw.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()  # the final newline ends the last line; it does not start a new one
        names: list[str] = []
        seen: dict[str, int] = {}  # NFC name -> its line
        for number, line in enumerate(lines, 1):
            try:
                name = line.decode("utf-8").strip(" \t\r")
            except UnicodeDecodeError as err:
                raise ValueError(f"{path}: line {number} is not UTF-8 ({err.reason} at byte "
                                 f"{err.start})") from None
            if not name:
                raise ValueError(f"{path}: line {number} is empty: every line must hold one "
                                 "item name")
            cls._check_name(name, f"{path}: line {number}")
            key = unicodedata.normalize("NFC", name)
            if key in seen:
                same = "repeats the name" if names[seen[key] - 1] == name else \
                    "is canonically equivalent (NFC) to the name"
                raise ValueError(f"{path}: line {number} {same} {_show(names[seen[key] - 1])} "
                                 f"of line {seen[key]}: item names must be distinct and must "
                                 "not render alike")
            seen[key] = number
            names.append(name)
        if len(names) < 2:
            raise ValueError(f"{path}: holds {len(names)} item names, a domain needs at least 2")
        return cls(names)

    @property
    def k(self) -> int:
        """The number of items (the k of the oracles)."""
        return len(self._names)

    @property
    def names(self) -> tuple[str, ...]:
        """The names in index order: names[j] is item j."""
        return self._names

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and name in self._where

    def position(self, name: str) -> int | None:
        """The index of one name, None when it is not in the domain."""
        return self._where.get(name) if isinstance(name, str) else None

    def __repr__(self) -> str:
        head = ", ".join(_show(n, 20) for n in self._names[:3])
        return f"ItemDomain(k={self.k}: {head}{', ...' if self.k > 3 else ''})"

    def index(self, items: Iterable[str]) -> np.ndarray:
        """The indices (int64 array) of a sequence of names; a name outside the domain is a
        ValueError naming it and its position, a non-str a TypeError (nothing is skipped)."""
        if isinstance(items, (str, bytes)):
            raise TypeError("items must be a sequence of item names, got a single "
                            f"{type(items).__name__} (wrap one name in a list)")
        try:
            seq = items if isinstance(items, np.ndarray) else list(items)
        except TypeError:
            raise TypeError(f"items must be an iterable of str, got {type(items).__name__}") \
                from None
        if isinstance(seq, np.ndarray) and seq.ndim != 1:
            raise ValueError(f"items must be 1-D, got an array of shape {seq.shape}")
        out = np.empty(len(seq), dtype=np.int64)
        where = self._where
        for i, name in enumerate(seq):
            j = where.get(name) if isinstance(name, str) else None
            if j is None:
                if not isinstance(name, str):
                    raise TypeError(f"items[{i}] must be a str item name, got "
                                    f"{type(name).__name__}")
                raise ValueError(f"items[{i}] = {_show(name)} is not in the item domain "
                                 f"(k = {self.k}); the domain is fixed in advance, never "
                                 "extended from users' data")
            out[i] = j
        return out

    def label(self, *columns) -> dict:
        """{name: value} for one length-k column (an estimate), {name: (v1, v2, ...)} for
        several (an estimate and its interval ends), in index order, values as Python
        numbers."""
        if not columns:
            raise TypeError("label needs at least one column of k values")
        cols = []
        for c, col in enumerate(columns):
            arr = np.asarray(col)
            if arr.shape != (self.k,):
                raise ValueError(f"column {c} must hold k = {self.k} values (shape ({self.k},)), "
                                 f"got shape {arr.shape}")
            cols.append(arr.tolist())
        if len(cols) == 1:
            return dict(zip(self._names, cols[0]))
        return dict(zip(self._names, zip(*cols)))
