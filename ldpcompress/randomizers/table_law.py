"""A finite randomizer given by its probability table P[x][y]: validation of the table, the law
the client realises (exact alias tables), and what shuffle accounting needs (docs/theory.md
§2.15; docs/guide.md section 7, "A randomizer from its table").

``check_table`` takes the user's table (rows = inputs x in [k], columns = outputs y in [m];
ints, floats, ``fractions.Fraction`` or strings such as "1/3") and refuses what is not a
probability table, naming the row and column: entries outside [0, 1], rows whose sum is off 1
by more than ``ROW_TOL``, positive entries below ``MIN_ENTRY``, an output no input produces, a
zero where another row is positive (eps0 infinite), tables beyond ``MAX_CELLS`` entries.

The client draws exactly (``realise``): each row is rounded onto the grid 1/(m 2^62) (largest
remainders, so zeros stay zero and the row sums to exactly 1) and turned into an alias table
(Walker; Vose's construction on integers): column c uniform in [0, m) and a coin
u uniform in [0, 2^62), y = c if u < thr[c] else alias[c]. Every probability of that draw is
an exact rational, and the realised table, not the given one, is what the accounting, the
estimator and compression use.
"""
from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..core.numerics import UNIT_ROUNDOFF

__all__ = ["ROW_TOL", "MIN_ENTRY", "MAX_CELLS", "COIN_BITS", "EPS0_MIN", "MAX_TEXT", "check_table",
           "AliasTable", "realise", "log_up", "log_down", "TableStructure"]

ROW_TOL = 1e-9        # |sum of a row - 1| allowed (float rounding); the row is then normalised
MIN_ENTRY = 1e-12     # a positive entry at least this (the alias grid is 1/(m 2^62))
MAX_CELLS = 1 << 16   # k x m entries at most (e.g. 16 inputs x 4096 outputs)
COIN_BITS = 62        # the alias coin: u uniform in [0, 2^62), one stream word each
EPS0_MIN = 1e-12      # a table whose rows agree closer than this carries no information
MAX_TEXT = 1000       # characters of an entry written as text ('p/q' or a decimal)
_COIN = 1 << COIN_BITS
_RATIONAL = re.compile(r"^[+-]?\d+(/\d+)?$")
_DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$")


def _show(v: Fraction) -> str:
    """A short decimal form of an exact entry (a huge one does not overflow the message)."""
    try:
        return f"{float(v):.12g}"
    except OverflowError:
        return f"{'-' if v < 0 else ''}1e+308 or more"


def _entry(value, x: int, y: int) -> tuple[Fraction, object]:
    """(exact value, canonical JSON form) of one table entry; TypeError/ValueError naming it."""
    where = f"table[{x}][{y}]"
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where} is {value!r}: entries must be numbers, not booleans")
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_TEXT or not (_RATIONAL.match(text) or _DECIMAL.match(text)):
            raise ValueError(f"{where} is {value[:40]!r}: not a number (write '1/3' or "
                             f"'0.25', at most {MAX_TEXT} characters, exponents up to 999)")
        try:
            exact = Fraction(text)
        except ZeroDivisionError:
            raise ValueError(f"{where} is {value[:40]!r}: a zero denominator") from None
        return exact, str(exact)
    if isinstance(value, (numbers.Integral, np.integer)):
        return Fraction(int(value)), int(value)
    if isinstance(value, Fraction):
        return value, str(value)
    if isinstance(value, Decimal):
        if not value.is_finite() or abs(value.adjusted()) > 999:
            raise ValueError(f"{where} is {str(value)[:40]}: entries must be finite numbers "
                             "with exponents up to 999")
        return Fraction(value), str(Fraction(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{where} is {v!r}: entries must be finite")
        return Fraction(v), v
    raise TypeError(f"{where} is a {type(value).__name__}: entries must be ints, floats, "
                    "fractions.Fraction or strings such as '1/3'")


def _rows(table) -> list:
    """The table as a list of rows (sequences), or TypeError."""
    if isinstance(table, np.ndarray):
        if table.ndim != 2:
            raise ValueError(f"table must be 2-D (inputs x outputs), got shape {table.shape}")
        return [list(row) for row in table]
    if isinstance(table, (str, bytes, dict)) or not hasattr(table, "__len__") \
            or not hasattr(table, "__getitem__"):
        raise TypeError(f"table must be a list of rows (one per input), got "
                        f"{type(table).__name__}")
    return list(table)


def check_table(table) -> tuple[list[list[Fraction]], list[list]]:
    """(exact rows normalised to sum 1, canonical JSON rows) of a user's table, or
    TypeError/ValueError naming the row and column at fault (module docstring)."""
    rows = _rows(table)
    k = len(rows)
    if k < 2:
        raise ValueError(f"table must have at least 2 rows (inputs), got {k}")
    if k > MAX_CELLS // 2:
        raise ValueError(f"table has {k} rows: at most {MAX_CELLS // 2} (and {MAX_CELLS} entries)")
    m = 0
    for x, row in enumerate(rows):
        if isinstance(row, (str, bytes, dict)) or not hasattr(row, "__len__"):
            raise TypeError(f"table row {x} must be a list of probabilities, got "
                            f"{type(row).__name__}")
        if x == 0:
            m = len(row)
            if m < 2:
                raise ValueError(f"table must have at least 2 columns (outputs), got {m}")
            if k * m > MAX_CELLS:
                raise ValueError(f"table has {k} x {m} = {k * m} entries: at most {MAX_CELLS} "
                                 "(a randomizer this large deserves its own class)")
        elif len(row) != m:
            raise ValueError(f"table row {x} has {len(row)} entries, row 0 has {m}: every row "
                             "needs one probability per output")
    exact: list[list[Fraction]] = []
    canon: list[list] = []
    for x, row in enumerate(rows):
        pairs = [_entry(v, x, y) for y, v in enumerate(row)]
        vals = [p[0] for p in pairs]
        for y, v in enumerate(vals):
            if not 0 <= v <= 1:
                raise ValueError(f"table[{x}][{y}] = {_show(v)} is outside [0, 1]")
            if 0 < v < MIN_ENTRY:
                raise ValueError(f"table[{x}][{y}] = {float(v):.3g} is positive but below "
                                 f"{MIN_ENTRY:g}: write 0 or at least {MIN_ENTRY:g}")
        total = sum(vals, Fraction(0))
        if abs(total - 1) > ROW_TOL:
            raise ValueError(f"table row {x} sums to {_show(total)}, not 1 (tolerance "
                             f"{ROW_TOL:g}): not a probability table")
        exact.append([v / total for v in vals])
        canon.append([p[1] for p in pairs])
    for y in range(m):
        column = [row[y] for row in exact]
        if not any(column):
            raise ValueError(f"table column {y} is 0 in every row: no input produces output "
                             f"{y} (remove the column)")
        if not all(column):
            x0 = column.index(Fraction(0))
            x1 = next(x for x, v in enumerate(column) if v > 0)
            raise ValueError(f"table[{x0}][{y}] = 0 while table[{x1}][{y}] = "
                             f"{float(column[x1]):.6g} > 0: output {y} identifies the input "
                             "(eps0 is infinite); a table randomizer must be pure LDP")
    return exact, canon


@dataclass(frozen=True)
class AliasTable:
    """One row's exact sampler: column c uniform in [0, m) and u uniform in [0, 2^62);
    y = c if u < thr[c] else alias[c]. ``counts[y]`` = m 2^62 Pr[y] exactly."""

    thr: tuple
    alias: tuple
    counts: tuple


def _grid(probs: list[Fraction], total: int) -> list[int]:
    """Integers summing to ``total`` within 1 of probs[y] total (largest remainders, ties by
    index): zeros stay zero, every positive entry above 1/total stays positive."""
    scaled = [p * total for p in probs]
    base = [math.floor(s) for s in scaled]
    short = total - sum(base)
    order = sorted(range(len(probs)), key=lambda y: (-(scaled[y] - base[y]), y))
    for y in order[:short]:
        base[y] += 1
    return base


def realise(probs: list[Fraction]) -> AliasTable:
    """The alias table of one row (exact probabilities summing to 1), Vose's construction in
    integers: the realised law is the row rounded onto the grid 1/(m 2^62)."""
    m = len(probs)
    counts = _grid(probs, m * _COIN)
    work = list(counts)
    thr, alias = [_COIN] * m, list(range(m))
    small = [y for y in range(m) if work[y] < _COIN]
    large = [y for y in range(m) if work[y] >= _COIN]
    while small and large:
        s, big = small.pop(), large.pop()
        thr[s], alias[s] = work[s], big
        work[big] -= _COIN - work[s]
        (small if work[big] < _COIN else large).append(big)
    # what is left is exactly full (the total is m 2^62): a column that keeps its own output
    for y in small + large:
        if work[y] != _COIN:
            raise AssertionError("alias construction lost mass")  # integer arithmetic: never
    realised = [0] * m
    for c in range(m):
        realised[c] += thr[c]
        if thr[c] < _COIN:
            realised[alias[c]] += _COIN - thr[c]
    if realised != counts:
        raise AssertionError("alias table does not realise its counts")
    return AliasTable(tuple(thr), tuple(alias), tuple(counts))


_LOG_ERR = 4.0 * UNIT_ROUNDOFF


def _log(x: Fraction) -> float:
    """log of a positive rational within _LOG_ERR (1 + |log x|): x = y 2^e with y in (1/2, 2)."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    y = x / (1 << e) if e >= 0 else x * (1 << -e)
    return math.log(float(y)) + e * math.log(2.0)


def log_up(x: Fraction) -> float:
    """A double >= log x (x a positive rational)."""
    v = _log(x)
    return math.nextafter(v + _LOG_ERR * (1.0 + abs(v)), math.inf)


def log_down(x: Fraction) -> float:
    """A double <= log x (x a positive rational)."""
    v = _log(x)
    return math.nextafter(v - _LOG_ERR * (1.0 + abs(v)), -math.inf)


@dataclass(frozen=True)
class TableStructure:
    """What shuffle accounting needs of a table randomizer (docs/theory.md §2.15): its
    realised table, entry [x][y] = ``counts[x][y] / denominator`` (exact; every entry > 0,
    rows sum to 1), and its identity (``params``: (name, value) pairs).

    Parameters
    ----------
    params : tuple
        The randomizer's parameters as (name, value) pairs.
    counts : tuple of tuple of int
        The realised table's numerators (k x m, every entry > 0).
    denominator : int
        Their common denominator (each row sums to it).
    """

    params: tuple
    counts: tuple
    denominator: int

    def __post_init__(self):
        k = len(self.counts)
        m = len(self.counts[0]) if k else 0
        if k < 2 or m < 2 or any(len(r) != m for r in self.counts):
            raise ValueError("a table structure needs a k x m table, k, m >= 2")
        for x, row in enumerate(self.counts):
            if sum(row) != self.denominator or min(row) <= 0:
                raise ValueError(f"table structure row {x}: entries must be > 0 and sum to 1")

    @property
    def k(self) -> int:
        return len(self.counts)

    @property
    def m(self) -> int:
        return len(self.counts[0])

    def entry(self, x: int, y: int) -> Fraction:
        """P[x][y] of the realised table, exactly.

        Parameters
        ----------
        x : int
            The input, in [0, k).
        y : int
            The output, in [0, m).
        """
        return Fraction(self.counts[x][y], self.denominator)

    def rows(self) -> list[list[Fraction]]:
        return [[Fraction(c, self.denominator) for c in row] for row in self.counts]

    def floats(self) -> np.ndarray:
        """The realised table as doubles (each within half an ulp of the exact entry)."""
        return np.array([[c / self.denominator for c in row] for row in self.counts])

    def mins(self) -> list[Fraction]:
        """gamma w(y) = min_x P[x][y] (the blanket's mass at each output, docs/theory.md §2.15)."""
        return [Fraction(min(row[y] for row in self.counts), self.denominator)
                for y in range(self.m)]

    @property
    def gamma(self) -> Fraction:
        """Blanket weight sum_y min_x P[x][y]."""
        return sum(self.mins(), Fraction(0))

    def _max_ratio(self) -> Fraction:
        return max(Fraction(max(row[y] for row in self.counts), min(row[y] for row in self.counts))
                   for y in range(self.m))

    @property
    def eps0(self) -> float:
        """Replacement eps0 = max_y log(max_x P[x][y] / min_x P[x][y]), rounded up."""
        return log_up(self._max_ratio())

    @property
    def eps0_lower(self) -> float:
        """The same log rounded down (never below 0): the eps0 of a lower bound."""
        return max(0.0, log_down(self._max_ratio()))

    @property
    def identity(self) -> tuple:
        return ("table", self.params)

    def describe(self) -> str:
        return f"table({self.k} inputs x {self.m} outputs, eps0={self.eps0:.6g})"
