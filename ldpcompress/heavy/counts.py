"""Reading a simulation's population: a UTF-8 CSV of ``word,count`` rows (untrusted: every row
checked, errors name the file and the line)."""
from __future__ import annotations

import csv
import io
import math

from ..core.regular_files import read_regular

__all__ = ["MAX_COUNTS_BYTES", "read_counts"]

MAX_COUNTS_BYTES = 1 << 28


def read_counts(path, what: str = "--counts") -> dict[str, float]:
    """word -> count (a finite number >= 0) from a CSV file of ``word,count`` rows; a first
    row whose count is not a number is a header and skipped; an empty word, a repeated word, a
    row of other than two fields or invalid UTF-8 is refused naming the line."""
    raw = read_regular(path, f"{what} (word,count CSV)", MAX_COUNTS_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{what} {path}: not UTF-8 ({err.reason} at byte {err.start})") \
            from None
    out: dict[str, float] = {}
    for line, row in enumerate(csv.reader(io.StringIO(text.lstrip("\ufeff"))), 1):
        if not row:
            continue
        if len(row) != 2:
            raise ValueError(f"{what} {path}, line {line}: expected 2 fields (word,count), got "
                             f"{len(row)}")
        word, value = row
        try:
            c = float(value)
        except ValueError:
            if line == 1:
                continue  # a header
            raise ValueError(f"{what} {path}, line {line}: count {value!r} is not a number") \
                from None
        if not (math.isfinite(c) and c >= 0):
            raise ValueError(f"{what} {path}, line {line}: count must be a finite number >= 0, "
                             f"got {value!r}")
        if word == "":
            raise ValueError(f"{what} {path}, line {line}: empty word")
        if word in out:
            raise ValueError(f"{what} {path}, line {line}: word {word!r} appears twice")
        out[word] = c
    if not out or sum(out.values()) <= 0:
        raise ValueError(f"{what} {path}: no word with a positive count")
    return out
