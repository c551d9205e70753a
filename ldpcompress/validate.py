"""Input checks shared by the public API: clear ValueError/TypeError naming the parameter."""
from __future__ import annotations

import math
import numbers

import numpy as np

MAX_N = 2 ** 53


def _real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def positive_finite(value, name: str) -> float:
    """A finite real > 0 (eps0, sigma, scale ...)."""
    v = _real(value, name)
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def nonnegative(value, name: str) -> float:
    """A real >= 0 (an eps at which delta is asked; +inf allowed)."""
    v = _real(value, name)
    if math.isnan(v) or v < 0.0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return v


def probability_open(value, name: str) -> float:
    """A real in the open interval (0, 1) (delta)."""
    v = _real(value, name)
    if not (0.0 < v < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return v


def probability_closed_open(value, name: str) -> float:
    """A real in [0, 1) (delta0 of an approximate-DP randomizer)."""
    v = _real(value, name)
    if not (0.0 <= v < 1.0):
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return v


def integer_at_least(value, name: str, low: int, high: int = MAX_N) -> int:
    """An integer (or an integral float such as 1e6) in [low, high]."""
    v = _real(value, name)
    if not math.isfinite(v) or v != math.floor(v):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not (low <= v <= high):
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return int(v)


def users(n) -> int:
    """Number of users n >= 1."""
    return integer_at_least(n, "n", 1)


def domain_size(k) -> int:
    """Domain size k >= 2."""
    return integer_at_least(k, "k", 2, 2 ** 31 - 1)


def eps_array(eps, name: str = "eps") -> tuple[np.ndarray, bool]:
    """eps as a 1-d float array (all >= 0) and whether the input was a scalar."""
    if np.isscalar(eps):
        return np.array([nonnegative(eps, name)]), True
    arr = np.asarray(eps, dtype=float).ravel()
    if arr.size == 0 or np.isnan(arr).any() or (arr < 0).any():
        raise ValueError(f"{name} must be a non-empty array of values >= 0")
    return arr, False


def items(xs, k: int) -> np.ndarray:
    """A batch of items as an int64 array, each in [0, k)."""
    arr = np.asarray(xs)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError("xs must be a 1-D array of integer items")
    if arr.size and (arr.min() < 0 or arr.max() >= k):
        raise ValueError(f"every item must be in [0, {k}); got values in [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)
