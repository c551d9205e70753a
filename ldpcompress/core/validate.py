"""Input checks shared by the public API: clear ValueError/TypeError naming the parameter."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .numerics import EXP_MAX, TOL_MIN

__all__ = ["shown", "real", "MAX_N", "MAX_K", "MAX_SHUFFLE_N", "positive_finite", "local_eps0",
           "tolerance",
           "probability_in", "nonnegative", "probability_open", "probability_closed_open",
           "integer_at_least", "users", "shuffle_users", "blocks", "domain_size", "eps_array",
           "items", "item"]


MAX_N = 2 ** 53
MAX_K = 2 ** 31 - 1  # the oracles' largest domain (int32 item indices)
MAX_SHUFFLE_N = 10 ** 10  # amplification kernels cost O(sqrt(n)) per evaluation: ~1 s at 1e10


def shown(value, limit: int = 60) -> str:
    """repr(value) cut to ``limit`` characters (a 10^400 integer is not echoed whole)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 12]}...({len(text)} chars)"


def real(value, name: str) -> float:
    """float(value) for a real number; an integer beyond the double range (>= 2^1024) is +-inf
    (then refused by the range checks with the parameter's name), not an OverflowError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        return -math.inf if value < 0 else math.inf


def positive_finite(value, name: str) -> float:
    """A finite real > 0 (eps0, sigma, scale ...)."""
    v = real(value, name)
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {shown(value)}")
    return v


def local_eps0(value, name: str = "eps0") -> float:
    """A local epsilon in (0, EXP_MAX] (beyond it e^eps0 leaves the double range)."""
    v = positive_finite(value, name)
    if v > EXP_MAX:
        raise ValueError(f"{name} must be in (0, {EXP_MAX:g}], got {shown(value)}")
    return v


def tolerance(value, name: str = "tol") -> float:
    """A window tolerance (mass a window may leave out) in [TOL_MIN, 1) = [1e-300, 1)."""
    v = real(value, name)
    if not (TOL_MIN <= v < 1.0):
        raise ValueError(f"{name} must be in [{TOL_MIN:g}, 1), got {shown(value)}")
    return v


def probability_in(value, name: str, low: float, high: float, high_open: bool = False) -> float:
    """A real in [low, high] (or [low, high) when high_open)."""
    v = real(value, name)
    ok = low <= v < high if high_open else low <= v <= high
    if not ok:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}{')' if high_open else ']'}, "
                         f"got {shown(value)}")
    return v


def nonnegative(value, name: str) -> float:
    """A real >= 0 (an eps at which delta is asked; +inf allowed)."""
    v = real(value, name)
    if math.isnan(v) or v < 0.0:
        raise ValueError(f"{name} must be >= 0, got {shown(value)}")
    return v


def probability_open(value, name: str) -> float:
    """A real in the open interval (0, 1) (delta)."""
    v = real(value, name)
    if not (0.0 < v < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {shown(value)}")
    return v


def probability_closed_open(value, name: str) -> float:
    """A real in [0, 1) (delta0 of an approximate-DP randomizer)."""
    v = real(value, name)
    if not (0.0 <= v < 1.0):
        raise ValueError(f"{name} must be in [0, 1), got {shown(value)}")
    return v


def integer_at_least(value, name: str, low: int, high: int = MAX_N) -> int:
    """An integer (or an integral float such as 1e6) in [low, high]; a Python or numpy integer
    is taken exactly (never through a float)."""
    return _integer_in(value, real(value, name), name, low, high)


def _integer_in(value, v: float, name: str, low: int, high: int) -> int:
    """integer_at_least of value, whose float v = real(value, name) is already formed."""
    if isinstance(value, numbers.Integral):
        iv = int(value)
        if not (low <= iv <= high):
            raise ValueError(f"{name} must be an integer in [{low}, {high}], got "
                             f"{shown(value)}")
        return iv
    if not math.isfinite(v) or v != math.floor(v):
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {shown(value)}")
    if not (low <= v <= high):
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {shown(value)}")
    return int(v)


def users(n) -> int:
    """Number of users n >= 1."""
    return integer_at_least(n, "n", 1)


def shuffle_users(n, name: str = "n") -> int:
    """Number of users of a shuffled round, 1 <= n <= MAX_SHUFFLE_N (the amplification kernels
    sum a window of O(sqrt(n)) terms per evaluation; larger n is refused, not left to run).
    ``name`` is the parameter named in the error (``--n`` for the CLI)."""
    v = real(n, name)
    if math.isfinite(v) and v == math.floor(v) and v > MAX_SHUFFLE_N:
        raise ValueError(f"{name} must be an integer in [1, {MAX_SHUFFLE_N}] for amplification "
                         f"bounds (the cost grows as sqrt(n)); got {shown(n)}. The bound at n = "
                         f"{MAX_SHUFFLE_N} is also sound for any larger n.")
    return _integer_in(n, v, name, 1, MAX_SHUFFLE_N)


def blocks(value) -> int | None:
    """Number of m-blocks of the k-RR blanket bound: None (unblocked) or an integer >= 1."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"blocks must be None or an integer >= 1, got {type(value).__name__}")
    return integer_at_least(value, "blocks", 1, 2 ** 62)


def domain_size(k) -> int:
    """Domain size k >= 2."""
    return integer_at_least(k, "k", 2, MAX_K)


def eps_array(eps, name: str = "eps") -> tuple[np.ndarray, bool]:
    """eps as a 1-d float array (all >= 0) and whether the input was a scalar."""
    if np.isscalar(eps):
        return np.array([nonnegative(eps, name)]), True
    try:
        arr = np.asarray(eps, dtype=float).ravel()
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a real number or an array of reals") from err
    if arr.size == 0 or np.isnan(arr).any() or (arr < 0).any():
        raise ValueError(f"{name} must be a non-empty array of values >= 0")
    return arr, False


def items(xs, k: int) -> np.ndarray:
    """A batch of items as an int64 array, each in [0, k) (an empty list is an empty batch:
    numpy reads ``[]`` as float64)."""
    arr = np.asarray(xs)
    if arr.shape == (0,):
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError("xs must be a 1-D array of integer items")
    if arr.size and (arr.min() < 0 or arr.max() >= k):
        raise ValueError(f"every item must be in [0, {k}); got values in [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)


def item(x, k: int, what: str = "item") -> int:
    """One integer ``what`` (item, input) in [0, k) (TypeError for a non-integer or a bool)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"x must be an integer {what}, got {type(x).__name__}")
    if not 0 <= x < k:
        raise ValueError(f"x must be in [0, {k}), got {x}")
    return int(x)
