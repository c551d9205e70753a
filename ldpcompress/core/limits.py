"""Resource limits shared by the library and the CLI: refuse work that would not fit.

Every function that allocates memory proportional to an untrusted or operator-given size (n, k,
d, n*k ...) first estimates the bytes and calls :func:`check_bytes`, which raises a ValueError
stating the figure, the limit and the parameter to change. Rejection-sampling compression
(FT21 Alg. 1) needs e^eps_d expected trials per report; :func:`check_trials` refuses runs above
``MAX_EXPECTED_TRIALS`` and suggests the split of FT21 Lemma 5.1 (K copies at eps/K).
:func:`check_cost` refuses work whose stated cost (operations and peak memory, e.g. a report
set's ``summary_cost``) exceeds ``MAX_SECONDS`` or ``MAX_BYTES``, before any of it is done;
operations become seconds at ``SECONDS_PER_OPERATION``.
"""
from __future__ import annotations

import contextlib
import contextvars
import math

import numpy as np

from .numerics import EXP_MAX

__all__ = ["command_line", "in_command_line", "MAX_BYTES", "MAX_EXPECTED_TRIALS", "MAX_SECONDS",
           "SECONDS_PER_OPERATION", "format_bytes", "format_seconds", "array_bytes",
           "resolve_max_bytes", "check_bytes", "resolve_max_seconds", "check_cost",
           "resolve_max_trials", "expected_trials", "check_trials"]


# True while the command line runs: refusals then give the remedies its user has (options),
# not Python arguments (max_bytes, max_expected_trials) the command line does not expose
_COMMAND_LINE = contextvars.ContextVar("ldpcompress_command_line", default=False)


@contextlib.contextmanager
def command_line():
    """Within this block, limit errors are worded for the command line's user."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def in_command_line() -> bool:
    return _COMMAND_LINE.get()

MAX_BYTES = 4 * 2 ** 30          # default ceiling on one allocation (4 GiB)
MAX_EXPECTED_TRIALS = 1e4        # default ceiling on e^eps_d expected trials per report
# default ceiling on the stated time of one job (a report set's aggregation): about a minute,
# for a 2-core machine shared with other work (the default MAX_BYTES sized for its 24 GB)
MAX_SECONDS = 60.0
# one operation of a stated cost (randomizers/cost.py) is about a nanosecond of one core of the
# reference machine (2 cores shared with other jobs; the weights are measured ns rounded up):
# seconds = operations x SECONDS_PER_OPERATION, 1.5 ns to leave room for a busier machine, no
# parallelism assumed (bench/server_limits.py prints CPU / stated: 0.07-0.24 there)
SECONDS_PER_OPERATION = 1.5e-9


def format_bytes(nbytes: float) -> str:
    """Human-readable size in binary units (``14.9 GiB``)."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"  # pragma: no cover


def array_bytes(shape, dtype=np.int64) -> int:
    """Bytes of an array of the given shape and dtype (Python ints: no overflow)."""
    count = 1
    for s in np.atleast_1d(shape):
        count *= int(s)
    return count * np.dtype(dtype).itemsize


def format_seconds(seconds: float) -> str:
    """Human-readable duration (``42 s``, ``3.1 min``, ``7.1 h``, ``2.4e+03 days``)."""
    value = float(seconds)
    if value < 120:
        return f"{value:.3g} s"
    if value < 7200:
        return f"{value / 60:.3g} min"
    if value < 2 * 86400:
        return f"{value / 3600:.3g} h"
    return f"{value / 86400:.3g} days"


def _positive_limit(value, name: str, default: float) -> float:
    if value is None:
        return float(default)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    out = float(value)
    if math.isnan(out) or out <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return out


def resolve_max_seconds(max_seconds) -> float:
    """The time limit in force: ``MAX_SECONDS`` when None, else a number > 0 (inf: none)."""
    return _positive_limit(max_seconds, "max_seconds", MAX_SECONDS)


def check_cost(operations: float, peak_bytes: float, what: str, detail: str = "",
               max_seconds=None, max_bytes=None, options=("max_seconds", "max_bytes")) -> None:
    """Refuse work stated to take ``operations`` (seconds = operations x
    SECONDS_PER_OPERATION) and ``peak_bytes`` above the limits (None: MAX_SECONDS, MAX_BYTES),
    before any of it is done: the ValueError names what, the stated cost (``detail``: how it
    was counted), the limit and the option that raises it (``options``: the names of
    max_seconds and max_bytes where the caller takes them, e.g. the command line's)."""
    seconds_limit = resolve_max_seconds(max_seconds)
    bytes_limit = resolve_max_bytes(max_bytes)
    seconds = operations * SECONDS_PER_OPERATION
    how = f" ({detail})" if detail else ""
    if not seconds <= seconds_limit:
        raise ValueError(
            f"{what} is stated to take {operations:.3g} operations{how}, about "
            f"{format_seconds(seconds)} at {SECONDS_PER_OPERATION:g} s per operation, above the "
            f"limit of {format_seconds(seconds_limit)}: refused before any work; raise "
            f"{options[0]} to spend it")
    if not peak_bytes <= bytes_limit:
        raise ValueError(
            f"{what} is stated to need {format_bytes(peak_bytes)} ({int(peak_bytes)} bytes) of "
            f"memory at its peak{how}, above the limit of {format_bytes(bytes_limit)}: refused "
            f"before any work; raise {options[1]} to spend it")


def resolve_max_bytes(max_bytes) -> float:
    """The limit in force: ``MAX_BYTES`` when None, else a positive number (inf disables it)."""
    if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(
            max_bytes, (int, float, np.integer, np.floating))):
        raise TypeError(f"max_bytes must be a number of bytes, got {type(max_bytes).__name__}")
    return _positive_limit(max_bytes, "max_bytes", MAX_BYTES)


def check_bytes(nbytes: float, what: str, parameter: str, max_bytes=None) -> None:
    """Raise ValueError when ``nbytes`` exceeds the limit, naming the size, what needs it and the
    parameter to reduce (or ``max_bytes`` to raise)."""
    limit = resolve_max_bytes(max_bytes)
    if nbytes > limit:
        remedy = ("; the command line keeps this limit (the Python API's max_bytes argument "
                  "raises it)" if in_command_line() else " (or raise max_bytes)")
        raise ValueError(f"{what} would need {format_bytes(nbytes)} ({int(nbytes)} bytes), above "
                         f"the limit of {format_bytes(limit)}: reduce {parameter}{remedy}")


def resolve_max_trials(max_expected_trials) -> float:
    """The trial limit in force: ``MAX_EXPECTED_TRIALS`` when None, else a number >= 1."""
    if max_expected_trials is None:
        return float(MAX_EXPECTED_TRIALS)
    if isinstance(max_expected_trials, bool) or not isinstance(
            max_expected_trials, (int, float, np.integer, np.floating)):
        raise TypeError("max_expected_trials must be a number, got "
                        f"{type(max_expected_trials).__name__}")
    value = float(max_expected_trials)
    if math.isnan(value) or value < 1:
        raise ValueError(f"max_expected_trials must be >= 1, got {max_expected_trials!r}")
    return value


def expected_trials(eps_d: float) -> float:
    """e^eps_d, the expected trials per report of rejection sampling at deletion eps_d (FT21
    Alg. 1), formed at min(eps_d, EXP_MAX) so that it stays finite (any limit refuses it)."""
    return math.exp(min(eps_d, EXP_MAX))


def check_trials(expected: float, eps_d: float, max_expected_trials=None,
                 hint: str = "") -> None:
    """Refuse a rejection sampler whose expected trials per report (e^eps_d, FT21 Alg. 1) exceed
    the limit, with the figure and the remedy (a smaller eps, or K copies at eps/K: FT21 Lemma 5.1)."""
    limit = resolve_max_trials(max_expected_trials)
    if not expected <= limit:
        split = max(2, math.ceil(eps_d / max(math.log(limit), 1e-9)))
        if in_command_line():
            raise ValueError(
                f"compression needs e^eps_d = {expected:.4g} expected trials per report "
                f"(deletion eps_d = {eps_d:.4g}), above the limit of {limit:.4g}: use a smaller "
                f"--eps or a larger --split (K copies at eps/K, FT21 Lemma 5.1; about K >= "
                f"{split} here), or leave --split out to let the command choose K")
        raise ValueError(
            f"compression needs e^eps_d = {expected:.4g} expected trials per report "
            f"(deletion eps_d = {eps_d:.4g}), above max_expected_trials = {limit:.4g}: use a "
            f"smaller eps, or split the budget into K copies at eps/K (FT21 Lemma 5.1; about "
            f"K >= {split} here{hint}), or raise max_expected_trials")
