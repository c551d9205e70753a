"""Resource limits shared by the library and the CLI: refuse work that would not fit.

Every function that allocates memory proportional to an untrusted or operator-given size (n, k,
d, n*k ...) first estimates the bytes and calls :func:`check_bytes`, which raises a ValueError
stating the figure, the limit and the parameter to change. Rejection-sampling compression
(FT21 Alg. 1) needs e^eps_d expected trials per report; :func:`check_trials` refuses runs above
``MAX_EXPECTED_TRIALS`` and suggests the split of FT21 Lemma 5.1 (K copies at eps/K).
"""
from __future__ import annotations

import contextlib
import contextvars
import math

import numpy as np

from .numerics import EXP_MAX

__all__ = ["command_line", "in_command_line", "MAX_BYTES", "MAX_EXPECTED_TRIALS", "format_bytes",
           "array_bytes", "resolve_max_bytes", "check_bytes", "resolve_max_trials",
           "expected_trials", "check_trials"]


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


def resolve_max_bytes(max_bytes) -> float:
    """The limit in force: ``MAX_BYTES`` when None, else a positive number (inf disables it)."""
    if max_bytes is None:
        return float(MAX_BYTES)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, float, np.integer, np.floating)):
        raise TypeError(f"max_bytes must be a number of bytes, got {type(max_bytes).__name__}")
    value = float(max_bytes)
    if math.isnan(value) or value <= 0:
        raise ValueError(f"max_bytes must be > 0, got {max_bytes!r}")
    return value


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
