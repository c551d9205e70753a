"""Helpers shared by the CLI commands: number parsing, option checks and plain-text tables.

Numeric options parse with ``type=number`` (so 1e6, 1_000_000 and 0.5 all parse); each command
then checks its options with :func:`count`, :func:`positive`, :func:`probability` and
:func:`nonempty`, which raise ValueError naming the option and the accepted range, so every
command refuses 1.5 users, inf, nan or an empty path the same way (exit status 2).
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Callable, Sequence, overload

from ..core import validate as V

__all__ = ["JSON_HELP", "Output", "envelope", "emit_json", "dump_json", "number", "byte_size",
           "count", "positive", "positive_limit", "probability", "nonempty", "read_domain", "fmt",
           "print_table", "add_sampling_options"]



JSON_HELP = ("print one JSON object on stdout instead of text: {command, version, params, "
             "results, timings}; progress and warnings go to stderr")


def envelope(command: str, params: dict, results: dict, timings: dict | None = None) -> dict:
    """The one ``--json`` schema of every command: the command, the package version, the
    parameters as the command understood them (validated values, never parser state), the
    results and the wall-clock timings in seconds."""
    from .. import __version__
    return dict(command=command, version=__version__, params=params, results=results,
                timings=dict(timings or {}))


def emit_json(command: str, params: dict, results: dict, timings: dict | None = None,
              indent: int | None = 2) -> None:
    """Print :func:`envelope` as strict JSON: stdout holds this object and nothing else."""
    print(dump_json(envelope(command, params, results, timings), indent=indent))


@dataclass(frozen=True)
class Output:
    """What a command answers, printed by the one runner (:func:`ldpcompress.cli.main`): under
    --json the :func:`envelope` of ``envelope()``'s (params, results, timings), on one line when
    ``indent`` is None (the large ones); as text, ``show()``. Both are called only when printed,
    so a command computes neither form it does not print."""

    command: str
    envelope: Callable[[], tuple[dict, dict, dict]]
    show: Callable[[], None]
    indent: int | None = 2

    def emit(self, json_out: bool) -> None:
        if json_out:
            emit_json(self.command, *self.envelope(), indent=self.indent)
        else:
            self.show()


def dump_json(obj, indent: int | None = 2) -> str:
    """Strict JSON: a non-finite number is an error, never the invalid token ``Infinity`` or
    ``NaN`` (a field that may legitimately have no finite value must be set to None first)."""
    try:
        return json.dumps(obj, indent=indent, allow_nan=False)
    except ValueError:
        raise ValueError("a result is not a finite number (inf or nan): refusing to print it; "
                         "check the inputs' ranges") from None


def number(text: str) -> float | int:
    """Parse 1e6, 1_000_000 or 0.5; an integer literal (digits, optional sign) is returned as
    an exact int, so 9007199254740993 is not rounded to a double (integers and ranges are
    checked by the API)."""
    plain = text.strip().replace("_", "")
    if plain.lstrip("+-").isdigit() and plain.isascii():
        if len(plain) > 4300:  # int() refuses longer decimal strings
            raise argparse.ArgumentTypeError(f"not a number of a sensible size: {len(plain)} "
                                             "digits")
        return int(plain)
    try:
        return float(plain)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {V.shown(text)}") from None


_UNITS = {"": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30,
          "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40}


def byte_size(text: str) -> float:
    """Parse a memory size: bytes (1e9, 4294967296), or with a binary unit (512MiB, 4GiB, 4G,
    1T), or inf (no limit)."""
    plain = text.strip().replace("_", "").lower()
    digits = plain.rstrip("kmgtib")
    unit = plain[len(digits):]
    if unit.endswith("b") and unit not in _UNITS and unit[:-1] in _UNITS:
        unit = unit[:-1]  # 4GB, 512MB: read as binary units too
    if unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"not a memory size: {V.shown(text)} (bytes, or a "
                                         "number with KiB, MiB, GiB or TiB)")
    try:
        return float(digits) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a memory size: {V.shown(text)}") from None


def positive_limit(value, option: str) -> float:
    """A limit option: a real > 0, inf for none (nan refused)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == float("inf"):
        return float("inf")
    return V.positive_finite(value, option)


@overload
def count(value: None, option: str, low: int = 1, high: int = V.MAX_N) -> None: ...
@overload
def count(value: int | float | str, option: str, low: int = 1, high: int = V.MAX_N) -> int: ...


def count(value, option: str, low: int = 1, high: int = V.MAX_N) -> int | None:
    """An integer option in [low, high] given as 10000, 1e4, 10_000 or 3.0; 1.5, inf and nan
    are refused naming the option (None passes through: an option not given)."""
    if value is None:
        return None
    if isinstance(value, float) and 2 ** 53 <= abs(value) <= high:
        raise ValueError(f"{option} {value:g}: an integer at or above 2^53 must be given as digits "
                         "(a number in exponent form is rounded to a double, not taken exactly)")
    try:
        return V.integer_at_least(value, option, low, high)
    except (ValueError, TypeError):
        shown = f"{value:g}" if isinstance(value, float) else V.shown(value)
        raise ValueError(f"{option} must be an integer in [{low}, {high}], got {shown}") from None


def positive(value, option: str) -> float:
    """A finite real option > 0 (eps, eps0)."""
    return V.positive_finite(value, option)


def probability(value, option: str) -> float:
    """A real option in the open interval (0, 1) (delta)."""
    return V.probability_open(value, option)


def nonempty(path, option: str):
    """A path option that is not empty ('' would silently mean the working directory)."""
    if path is not None and not str(path).strip():
        raise ValueError(f"{option} must be a non-empty path, got {path!r}")
    return path


def read_domain(path, option: str = "--domain", catch_all: bool = False,
                bad_lines: str = "error"):
    """The ItemDomain of a file of public item names (one per line; ``ItemDomain.from_file``
    with ``catch_all`` and ``bad_lines``); errors name the option."""
    from ..core.items import ItemDomain
    nonempty(path, option)
    try:
        return ItemDomain.from_file(path, catch_all=catch_all, bad_lines=bad_lines)
    except ValueError as err:  # "<file>: <what is wrong>" (never an OSError: the file is named)
        raise ValueError(f"{option} {err}") from None


def add_sampling_options(parser: argparse.ArgumentParser, sample_help: str) -> None:
    """--gamma, --sample and --relation: participation sampling (docs/theory.md §2.7)."""
    parser.add_argument("--gamma", type=number, default=None,
                        help="participation sampling: each user reports with this "
                             "probability, in (0, 1] (docs/theory.md §2.7)")
    parser.add_argument("--sample", type=number, default=None, help=sample_help)
    parser.add_argument("--relation", choices=("substitution", "add_remove"), default=None,
                        help="neighbouring datasets with --gamma/--sample: user 1's value "
                             "changes (substitution, the default) or user 1 is present or "
                             "absent (add_remove)")

def fmt(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return str(value)
    return f"{value:.6g}"


def print_table(rows: Sequence[Sequence[str]], head: Sequence[str], rule: bool = True) -> None:
    """Left-aligned columns as wide as their widest cell; a dashed rule under the head."""
    widths = [max(len(r[i]) for r in [*rows, head]) for i in range(len(head))]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
    print(line)
    if rule:
        print("-" * len(line))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
