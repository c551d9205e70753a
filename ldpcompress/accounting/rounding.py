"""Outward rounding at the last step of a bound (docs/theory.md §1).

A closed form evaluated in floating point is within a few ulps (relative) of its exact value,
on either side: float rounding must not decide on which side of the truth a bound lands. Upper
bounds are therefore rounded up past that error, lower bounds down.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["ROUND_UP", "round_up", "round_down", "fraction_up", "fraction_down"]

ROUND_UP = 1.0 + 2.0 ** -40  # covers a relative error of up to ~4000 ulps


def round_up(value):
    """An upper bound computed to a relative error of a few ulps, rounded up past that error
    (a float for a float, an array for an array; 0 and inf stay)."""
    out = np.nextafter(np.multiply(value, ROUND_UP), math.inf)
    out = np.where(np.asarray(value) == 0.0, 0.0, out)
    return float(out) if np.ndim(value) == 0 else out


def round_down(value):
    """A lower bound computed to a relative error of a few ulps, rounded down past that error
    (never below 0 for a non-negative value)."""
    v = np.asarray(value, dtype=float)
    out = np.nextafter(v / ROUND_UP, -math.inf)
    out = np.where(v >= 0.0, np.maximum(out, 0.0), out)
    return float(out) if np.ndim(value) == 0 else out


def fraction_up(x: Fraction) -> float:
    """The smallest float >= the exact rational x."""
    v = float(x)
    return v if Fraction(v) >= x else math.nextafter(v, math.inf)


def fraction_down(x: Fraction) -> float:
    """The largest float <= the exact rational x."""
    v = float(x)
    return v if Fraction(v) <= x else math.nextafter(v, -math.inf)
