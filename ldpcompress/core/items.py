"""String and categorical items: a fixed, public list of names and their indices 0 .. k-1.

The frequency oracles count integer items in [0, k). :class:`ItemDomain` maps item names to
those indices on the client (``index``, before ``randomize_many``) and labels the server's
estimates with the names (``label``). It lives in ``core`` because both sides use it and it
depends on no randomizer.

Privacy: the domain must be fixed in advance and public (shipped with the client, identical on
the server). It must never be built from the users' data (for example from the set of values
seen in the raw data, or by adding a name when a user reports it): the list itself would then
reveal which items some user holds, outside any privacy guarantee. Unknown names are refused,
never skipped (skipping would bias every estimate silently), unless the domain has a catch-all
item (``catch_all=True``): item k - 1, named ``CATCH_ALL`` ("(out of domain)" written with
no-break spaces, a name no valid domain line can spell), to which every name outside the list
is mapped and which is estimated like any other item. See docs/guide.md, "Item domains".
"""
from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .regular_files import read_regular
from .validate import MAX_K

__all__ = ["ItemDomain", "MAX_DOMAIN_FILE_BYTES", "CATCH_ALL", "BAD_LINES", "BadLines"]

MAX_DOMAIN_FILE_BYTES = 2 ** 28  # 256 MiB: a public list of names, read whole into memory
# The catch-all item's name: "(out of domain)" with U+00A0 no-break spaces. Every valid name
# refuses spaces other than U+0020, so no domain line or list can spell it; a name that would
# render like it ("(out of domain)" with any spaces) is refused as reserved.
CATCH_ALL = "(out\u00a0of\u00a0domain)"
_RESERVED = "(out of domain)"
BAD_LINES = ("error", "drop", "catch-all")  # what from_file does with bad lines
NAMED_BAD_LINES = 5  # bad lines named in an error or a report (all are counted)
MAX_NAME_CHARS = 4096  # a longer item name is a bad line (names are labels, not documents)

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


def _reserved(name: str) -> bool:
    """True when ``name`` renders like the catch-all's name (any spaces, any case)."""
    return " ".join(unicodedata.normalize("NFKC", name).split()).casefold() == _RESERVED


@dataclass(frozen=True)
class BadLines:
    """The bad lines of a domain file that ``from_file`` dropped or mapped: ``count`` (all of
    them), ``named`` ((line number, reason) of the first ``NAMED_BAD_LINES``) and ``action``
    ("drop", "catch-all", or "error" when there were none). Iterating gives ``named``."""

    named: tuple[tuple[int, str], ...] = ()
    count: int = 0
    action: str = "error"

    def __iter__(self):
        return iter(self.named)

    def __len__(self) -> int:
        return len(self.named)

    def __getitem__(self, i):
        return self.named[i]

    def describe(self) -> str:
        """'N bad lines (dropped|mapped to the catch-all): line L: why; ...'."""
        if not self.count:
            return "no bad lines"
        did = "dropped" if self.action == "drop" else "mapped to the catch-all"
        more = f"; ... {self.count - len(self)} more" if self.count > len(self) else ""
        return (f"{self.count} bad line{'s' if self.count > 1 else ''} {did}: "
                + "; ".join(f"line {n}: {why}" for n, why in self) + more)


def _show(name: str, limit: int = 60) -> str:
    text = repr(name)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


class ItemDomain:
    """A fixed public list of distinct, non-empty item names; item ``names[j]`` is index j of
    every frequency oracle built with this k (``oracle = KRR(domain.k, eps)``).

    ``catch_all=True`` adds one item after the listed names, ``CATCH_ALL`` (index k - 1):
    ``index`` maps every name outside the list to it instead of refusing it, and the oracle
    estimates it like any item (k = len(names) + 1). ``bad_lines``: what ``from_file`` left
    out (a :class:`BadLines`, empty for a domain built from a list).

    Parameters
    ----------
    names : iterable of str
        The item names in index order (distinct, non-empty).
    catch_all : bool, default False
        Add the catch-all item ``CATCH_ALL`` after them (see above).
    """

    def __init__(self, names: Iterable[str], catch_all: bool = False):
        if not isinstance(catch_all, (bool, np.bool_)):
            raise TypeError(f"catch_all must be True or False, got {type(catch_all).__name__}")
        self.catch_all = bool(catch_all)
        self.bad_lines = BadLines()
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
        least = 1 if self.catch_all else 2
        if not least <= len(seq) + self.catch_all <= MAX_K:  # the oracles' largest k
            raise ValueError(f"names must hold at least {least} item(s) (at most "
                             f"{MAX_K - self.catch_all} with the catch-all), got {len(seq)}")
        if self.catch_all:
            self._where[CATCH_ALL] = len(seq)
        self._names = tuple(self._where)

    @staticmethod
    def _check_name(name, where: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{where} must be a str item name, got {type(name).__name__}")
        why = ItemDomain._name_problem(name)
        if why is not None:
            raise ValueError(f"{where} {why}")

    @staticmethod
    def _name_problem(name: str) -> str | None:
        """Why a str cannot be an item name (None when it can), as 'is empty', '= 'x' holds
        ...'."""
        if not name:
            return "is empty: item names must be non-empty"
        if len(name) > MAX_NAME_CHARS:
            return (f"= {_show(name)} has {len(name):,} characters (at most "
                    f"{MAX_NAME_CHARS:,}: item names are labels)")
        if "\n" in name or "\r" in name:
            return f"= {_show(name)} holds a line break (a name is one line)"
        if name != name.strip():
            return (f"= {_show(name)} has leading or trailing whitespace (names that look "
                    "alike must not differ)")
        why = _bad_char(name)
        if why is not None:
            return f"= {_show(name)} holds {why}: such names render like other names; remove it"
        if _reserved(name):
            return (f"= {_show(name)} spells the catch-all item's reserved name (use "
                    "catch_all=True, or another name)")
        return None

    @classmethod
    def from_file(cls, path: str | os.PathLike, catch_all: bool = False,
                  bad_lines: str = "error") -> ItemDomain:
        """One name per line, UTF-8 (a byte-order mark at the start of the file is stripped),
        spaces, tabs and the CR of a CRLF around each line ignored; a final newline is
        optional. A regular file of at most ``MAX_DOMAIN_FILE_BYTES``: a FIFO, device or
        directory is refused before it is opened (it could block or never end).

        Bad lines: an empty line, a duplicate name (also under Unicode canonical equivalence,
        NFC: the first stays), a name holding a character that renders as nothing or like
        another (control and format characters such as NUL, VT, zero-width spaces, joiners or
        a BOM past the start, U+2028/U+2029, spaces other than U+0020), a name longer than
        ``MAX_NAME_CHARS``, one spelling the catch-all's reserved name, or bytes that are not
        UTF-8. Every one is counted; ``bad_lines`` says what happens to them: "error" (the
        default) raises a ValueError naming the file, the count and the first
        ``NAMED_BAD_LINES`` lines with their reasons; "drop" leaves them out of the domain;
        "catch-all" leaves them out and adds the catch-all item (``catch_all=True``), to which
        inputs outside the domain are mapped. Either way ``domain.bad_lines`` keeps the count
        and the first lines (:class:`BadLines`).

        Parameters
        ----------
        path : str or path
            The domain file (untrusted).
        catch_all : bool, default False
            Add the catch-all item after the names.
        bad_lines : {"error", "drop", "catch-all"}, default "error"
            What happens to bad lines (see above).
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a file path, got {type(path).__name__}")
        if bad_lines not in BAD_LINES:
            raise ValueError(f"bad_lines must be one of {', '.join(map(repr, BAD_LINES))}, got "
                             f"{bad_lines!r}")
        raw = read_regular(path, "an item domain file", MAX_DOMAIN_FILE_BYTES)
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        lines = raw.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()  # the final newline ends the last line; it does not start a new one
        names: list[str] = []
        seen: dict[str, tuple[int, str]] = {}  # NFC name -> its line and name
        bad: list[tuple[int, str]] = []
        count = 0
        for number, line in enumerate(lines, 1):
            why = cls._line_problem(line, seen)
            if why is None:
                name = line.decode("utf-8").strip(" \t\r")
                seen[unicodedata.normalize("NFC", name)] = (number, name)
                names.append(name)
                continue
            count += 1
            if len(bad) < NAMED_BAD_LINES:
                bad.append((number, why))
        if count and bad_lines == "error":
            first, why = bad[0]
            more = "; ".join(f"line {n}: {w}" for n, w in bad[1:])
            raise ValueError(
                f"{path}: line {first} {why} ({count:,} bad line{'s' if count > 1 else ''} in "
                f"all{'; also ' + more if more else ''}{'; ...' if count > len(bad) else ''}): "
                "fix them, or drop them (bad_lines='drop', --bad-lines drop) or map them to "
                "the catch-all item (bad_lines='catch-all', --bad-lines catch-all)")
        with_catch_all = bool(catch_all) or bad_lines == "catch-all"
        if len(names) + with_catch_all < 2:
            raise ValueError(f"{path}: holds {len(names)} valid item names, a domain needs at "
                             "least 2 items (the catch-all counts as one)")
        out = cls(names, catch_all=with_catch_all)
        out.bad_lines = BadLines(tuple(bad), count, bad_lines if count else "error")
        return out

    @classmethod
    def _line_problem(cls, line: bytes, seen: dict[str, tuple[int, str]]) -> str | None:
        """Why one line of a domain file is bad (None when it holds a new valid name)."""
        try:
            name = line.decode("utf-8").strip(" \t\r")
        except UnicodeDecodeError as err:
            return f"is not UTF-8 ({err.reason} at byte {err.start})"
        if not name:
            return "is empty: every line must hold one item name"
        why = cls._name_problem(name)
        if why is not None:
            return why
        key = unicodedata.normalize("NFC", name)
        if key in seen:
            where, first = seen[key]
            same = "repeats the name" if first == name else \
                "is canonically equivalent (NFC) to the name"
            return (f"{same} {_show(first)} of line {where}: item names must be distinct "
                    "and must not render alike")
        return None

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
        """The index of one name, None when it is not in the domain (the catch-all's index
        only for ``CATCH_ALL`` itself).

        Parameters
        ----------
        name : str
            An item name.
        """
        return self._where.get(name) if isinstance(name, str) else None

    def lookup(self, name: str) -> int | None:
        """The index ``index`` gives one str name: its own, else the catch-all's (None when
        the domain has no catch-all).

        Parameters
        ----------
        name : str
            An item name.
        """
        j = self._where.get(name)
        return self.catch_all_index if j is None else j

    @property
    def catch_all_index(self) -> int | None:
        """k - 1 when the domain has the catch-all item, else None."""
        return self.k - 1 if self.catch_all else None

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the names in index order, each UTF-8 and ending in a newline, the
        catch-all's included: equal for equal domains, and the manifest's check."""
        sha = hashlib.sha256()
        for name in self._names:
            sha.update(name.encode("utf-8") + b"\n")
        return sha.hexdigest()

    def __eq__(self, other) -> bool:
        return isinstance(other, ItemDomain) and other._names == self._names \
            and other.catch_all == self.catch_all

    def __hash__(self) -> int:
        return hash((self._names, self.catch_all))

    def to_record(self) -> dict:
        """{"names": the listed names (the catch-all's not among them), "catch_all": bool,
        "sha256": ``digest``}: what a report set's manifest keeps (``from_record``)."""
        listed = self._names[:-1] if self.catch_all else self._names
        return dict(names=list(listed), catch_all=self.catch_all, sha256=self.digest)

    @classmethod
    def from_record(cls, record, source: str) -> ItemDomain:
        """The domain of a manifest's record (``to_record``), every field checked: a
        ValueError names ``source`` (the file) and the key.

        Parameters
        ----------
        record : dict
            The manifest's record (untrusted).
        source : str
            The file it was read from, for the errors.
        """
        if not isinstance(record, dict) or set(record) != {"names", "catch_all", "sha256"}:
            raise ValueError(f"{source}: key 'items' must be an object with the keys names, "
                             "catch_all and sha256")
        names, flag, digest = record["names"], record["catch_all"], record["sha256"]
        if not isinstance(names, list) or not isinstance(flag, bool) or \
                not isinstance(digest, str):
            raise ValueError(f"{source}: key 'items' must hold a list of names, a boolean "
                             "catch_all and a sha256 string")
        try:
            out = cls(names, catch_all=flag)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{source}: key 'items': {err}") from None
        if out.digest != digest:
            raise ValueError(f"{source}: key 'items': the names do not match their sha256 "
                             "(edited after the set was written?)")
        return out

    def __repr__(self) -> str:
        head = ", ".join(_show(n, 20) for n in self._names[:3])
        extra = ", with the catch-all" if self.catch_all else ""
        return f"ItemDomain(k={self.k}: {head}{', ...' if self.k > 3 else ''}{extra})"

    def index(self, items: Iterable[str]) -> np.ndarray:
        """The indices (int64 array) of a sequence of names; a name outside the domain is the
        catch-all item when the domain has one (count them with ``catch_all_index``), else a
        ValueError naming it and its position; a non-str is a TypeError (nothing is
        skipped).

        Parameters
        ----------
        items : iterable of str
            The names to index.
        """
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
        where, other = self._where, self.catch_all_index
        for i, name in enumerate(seq):
            j = where.get(name, other) if isinstance(name, str) else None
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
        numbers.

        Parameters
        ----------
        *columns : array_like
            One or more columns of k values each.
        """
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
