"""Users' inputs from a CSV file with one input per line, parsed strictly and streamed.

Strict, so that no line is ever dropped or misread: line 1 is a header only when the caller
says so (and must then not be an input); every other line holds one item -- exactly one cell,
a decimal integer in [0, k) (``+4``, ``007``, surrounding blanks and a UTF-8 BOM are fine;
``3.0``, ``1e3``, ``0x10``, empty lines and extra columns are not) or, with a public item
domain, one of its names -- or, for mean estimation, one vector: exactly d cells, each a
decimal number (``-0.25``, ``1e-3``; not ``nan``, ``inf`` or ``0x1p-2``). Anything else is a
ValueError naming the line and the value. Inputs are streamed as arrays of at most
``CSV_CHUNK`` rows, so memory does not grow with the file; the file is read twice (counted,
then read), so it must be a regular file. See docs/guide.md, section 3, "Report sets and
aggregation" (``encode``).
"""
from __future__ import annotations

import codecs
import csv
import io
import os
import re
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from ..core import validate as V
from ..core.regular_files import open_regular
from ..randomizers.estimator import check_flag

if TYPE_CHECKING:
    from ..core.items import ItemDomain

__all__ = ["CSV_CHUNK", "csv_items", "count_csv_items", "count_csv_items_mapped", "csv_vectors",
           "count_csv_vectors"]


CSV_CHUNK = 1 << 16           # CSV lines parsed into Python ints before becoming an array


def _parse_item(text: str, k: int, line: int, source: str) -> int:
    s = text.strip()
    digits = s[1:] if s[:1] in ("+", "-") else s
    if not (digits and digits.isascii() and digits.isdigit()):
        raise ValueError(f"{source}, line {line}: {text!r} is not an item: items are integers "
                         f"in [0, {k}) written in decimal digits (no '.', exponent or prefix); "
                         "if line 1 is a header, pass --header")
    if len(digits.lstrip("0")) > 12 or not 0 <= int(s) < k:
        raise ValueError(f"{source}, line {line}: item {s} is outside [0, {k})")
    return int(s)


def _name_parser(domain, source: str):
    """Cell -> index of a name in the public ItemDomain (core.items): an unknown name is the
    catch-all item when the domain has one, else refused."""
    def parse(text: str, k: int, line: int, _source: str) -> int:
        j = domain.lookup(text.strip())
        if j is None:
            raise ValueError(f"{source}, line {line}: {text.strip()[:60]!r} is not in the item "
                             f"domain (k = {k}); the domain is fixed in advance, never "
                             "extended from users' data (a domain with the catch-all item, "
                             "--catch-all, counts such inputs there)")
        return j
    return parse


def _rows(path, header: bool, parse_row: Callable[[list, int], object],
          is_input: Callable[[list], bool], what: str, dtype) -> Iterator[np.ndarray]:
    """The parsed rows of a CSV file, CSV_CHUNK at a time (see the module docstring):
    ``parse_row(cells, line)`` raises ValueError naming the line; with ``header``, line 1 is
    skipped but must not be an input (``is_input``)."""
    header = check_flag(header, "header")
    source = str(path)
    buf: list = []
    line = 0
    try:
        with io.TextIOWrapper(open_regular(path, f"a CSV of {what}s (it is read twice)"),
                              newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            for row in reader:
                line = reader.line_num
                if header and line == 1:
                    if is_input(row):
                        raise ValueError(f"{source}, line 1: {','.join(row)!r} is an {what}, "
                                         "not a header: drop --header")
                    continue
                buf.append(parse_row(row, line))
                if len(buf) >= CSV_CHUNK:
                    yield np.array(buf, dtype=dtype)
                    buf = []
    except UnicodeDecodeError as err:
        # the text layer decodes ahead of the rows: find the line of the bad byte itself
        where = _bad_utf8(path)
        raise ValueError(f"{source}, {where or f'after line {line}'}: not UTF-8 text "
                         f"({err.reason})") from None
    except csv.Error as err:
        raise ValueError(f"{source}, line {line + 1}: malformed CSV ({err})") from None
    except OSError as err:
        raise ValueError(f"{source}: cannot read ({err.strerror or err})") from None
    if header and line == 0:
        raise ValueError(f"{source}: empty file, no header line")
    if buf:
        yield np.array(buf, dtype=dtype)


def csv_items(path: str | os.PathLike, k: int, header: bool = False,
              domain: ItemDomain | None = None) -> Iterator[np.ndarray]:
    """The items of a CSV file with one item per line, streamed as int64 arrays of at most
    CSV_CHUNK items.

    Strict, so that no line is ever dropped: a UTF-8 BOM is allowed; line 1 is skipped only
    with ``header`` (and must then not be an item); every other line must hold exactly one cell,
    a decimal integer in [0, k), or with ``domain`` (a public ``core.items.ItemDomain`` of k
    names) one of its names (any other name: the domain's catch-all item when it has one).
    Anything else is a ValueError naming the line and the value.
    """
    k = V.domain_size(k)
    if domain is not None and domain.k != k:
        raise ValueError(f"the item domain holds {domain.k} names, not k = {k}")
    parse = _parse_item if domain is None else _name_parser(domain, str(path))
    source = str(path)

    def parse_row(row, line):
        if len(row) != 1:
            what = "is empty" if not row else f"has {len(row)} cells"
            raise ValueError(f"{source}, line {line} {what}: expected exactly one item per line")
        return parse(row[0], k, line, source)

    yield from _rows(path, header, parse_row,
                     lambda row: len(row) == 1 and _is_item(row[0], k, parse), "item", np.int64)


_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _parse_number(text: str, line: int, source: str) -> float:
    s = text.strip()
    if not (s.isascii() and _NUMBER.fullmatch(s)):
        raise ValueError(f"{source}, line {line}: {text[:40]!r} is not a decimal number (a "
                         "vector's coordinates are written like -0.25 or 1e-3); if line 1 is a "
                         "header, pass --header")
    value = float(s)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{source}, line {line}: {text[:40]!r} is not a finite number")
    return value


def csv_vectors(path: str | os.PathLike, d: int, header: bool = False
                ) -> Iterator[np.ndarray]:
    """The vectors of a CSV file with one vector per line (exactly d decimal numbers), streamed
    as (rows, d) float64 arrays of at most CSV_CHUNK rows; strict as :func:`csv_items` (their
    norms are the randomizer's to check)."""
    d = V.integer_at_least(d, "d", 1, 1 << 20)
    source = str(path)

    def parse_row(row, line):
        if len(row) != d:
            what = "is empty" if not row else f"has {len(row)} cells"
            raise ValueError(f"{source}, line {line} {what}: expected the {d} coordinates of "
                             "one vector per line")
        return [_parse_number(c, line, source) for c in row]

    def is_vector(row):
        try:
            parse_row(row, 1)
            return True
        except ValueError:
            return False

    for chunk in _rows(path, header, parse_row, is_vector, "input vector", np.float64):
        yield chunk.reshape(-1, d)


def count_csv_vectors(path: str | os.PathLike, d: int, header: bool = False,
                      check: Callable[[np.ndarray], object] | None = None) -> int:
    """Check every line of the CSV (as :func:`csv_vectors`) and count the vectors; ``check``
    (e.g. the randomizer's ``check_items``) is applied to every chunk, and a refusal names the
    first line it refuses."""
    n, lines = 0, 1 if header else 0
    for chunk in csv_vectors(path, d, header):
        if check is not None:
            _check_lines(chunk, check, lines, path)
        n += len(chunk)
        lines += len(chunk)
    if n == 0:
        raise ValueError(f"{path}: no input vectors")
    return n


def _check_lines(chunk: np.ndarray, check, before: int, path) -> None:
    try:
        check(chunk)
    except (ValueError, TypeError):
        for i in range(len(chunk)):  # the first refused row, named by its line
            try:
                check(chunk[i:i + 1])
            except (ValueError, TypeError) as err:
                raise ValueError(f"{path}, line {before + i + 1}: {err}") from None
        raise


def _bad_utf8(path) -> str | None:
    """'line L, byte B' of the first byte that is not UTF-8 (lines split at newlines, a BOM
    at the start allowed); None when none is found (the file changed)."""
    try:
        with open_regular(path, "a CSV of inputs") as fh:
            decoder = codecs.getincrementaldecoder("utf-8-sig")()
            for number, raw in enumerate(fh, 1):
                try:
                    decoder.decode(raw)
                except UnicodeDecodeError as err:
                    return f"line {number}, byte {err.start + 1}"
    except (OSError, ValueError):
        return None
    return None


def _is_item(text: str, k: int, parse=_parse_item) -> bool:
    try:
        parse(text, k, 1, "")
        return True
    except ValueError:
        return False


def count_csv_items(path: str | os.PathLike, k: int, header: bool = False,
                    domain: ItemDomain | None = None) -> int:
    """Check every line of the CSV (as :func:`csv_items`) and count the items."""
    return count_csv_items_mapped(path, k, header, domain)[0]


def count_csv_items_mapped(path: str | os.PathLike, k: int, header: bool = False,
                           domain: ItemDomain | None = None) -> tuple[int, int]:
    """(items, items counted in the domain's catch-all item: 0 without one), every line
    checked as :func:`csv_items` does."""
    other = None if domain is None else domain.catch_all_index
    n = mapped = 0
    for c in csv_items(path, k, header, domain):
        n += c.size
        if other is not None:
            mapped += int(np.count_nonzero(c == other))
    if n == 0:
        raise ValueError(f"{path}: no items")
    return n, mapped

