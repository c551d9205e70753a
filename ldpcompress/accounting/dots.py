"""Connect-the-dots (DGKKM22, docs/theory.md §3.2): the PLD atoms whose privacy profile is the
lower convex hull of points (e^eps, delta) above a convex profile, hence above the profile
itself (a dominating pair). Arrays in, arrays out: accounting/pld.py wraps them in grids.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..core.numerics import EXP_MAX
from ..kernels.hull import lower_hull

__all__ = ["profile_atoms", "profile_atoms_at", "hull_atoms", "grid_masses"]


def profile_atoms(delta_fn: Callable[[float], float], eps_max: float, points: int = 200):
    """(losses, masses, inf_mass) of the connect-the-dots PLD of a symmetric profile, before
    any grid: atoms at the hull vertices eps_j in [-eps_max, eps_max] (see from_profile)."""
    if not (math.isfinite(eps_max) and 0.0 < eps_max <= EXP_MAX):
        raise ValueError(f"eps_max must be in (0, {EXP_MAX:g}], got {eps_max!r}")
    return _atoms_at(delta_fn, eps_max * (np.linspace(0.0, 1.0, points) ** 2))


def profile_atoms_at(delta_fn: Callable[[float], float], eps_points):
    """profile_atoms with the profile evaluated at the given points: increasing, from 0, at
    most EXP_MAX (e.g. a grid fine where the profile varies, closed by a point where it is 0)."""
    pos = np.asarray(eps_points, dtype=float)
    if pos.ndim != 1 or pos.size < 2 or pos[0] != 0.0 or not np.all(np.diff(pos) > 0) \
            or not pos[-1] <= EXP_MAX:
        raise ValueError(f"eps_points must be increasing from 0 to at most {EXP_MAX:g}")
    return _atoms_at(delta_fn, pos)


def _atoms_at(delta_fn: Callable[[float], float], pos: np.ndarray):
    d_pos = np.array([min(1.0, max(0.0, delta_fn(float(e)))) for e in pos])
    neg = -pos[:0:-1]
    d_neg = -np.expm1(neg) + np.exp(neg) * d_pos[:0:-1]  # 1 - e^neg: no cancellation near 0
    eps = np.concatenate([neg, pos])
    dl = np.concatenate([d_neg, d_pos])
    losses, masses = hull_atoms(eps, dl)
    return losses, masses, float(dl[-1])


def hull_atoms(eps: np.ndarray, dl: np.ndarray):
    """(losses, masses) of the PLD whose profile is the lower convex hull of (e^eps, delta)."""
    x = np.exp(eps)
    # eps a hair apart (eps_max ~ 1e-300) share one e^eps: of such points the lower hull keeps
    # the last (largest eps, smallest delta) -- without this, its slopes would be 0/0
    last = np.append(np.diff(x) > 0, True)
    x, dl, eps = x[last], dl[last], eps[last]
    # the hull in a Numba kernel (a Python loop took 3.8 s on 2e5 points): x-differences as
    # e^a expm1(b - a), so the rounded e^eps near 1 (tiny eps) keep their digits
    hull = lower_hull(x, eps, dl)
    hx, hd, he = x[hull], dl[hull], eps[hull]
    gaps = hx[:-1] * np.expm1(np.diff(he))
    slopes = np.append(-np.diff(hd) / gaps, 0.0)  # S_j = -slope right of vertex j
    masses = np.empty(hx.size)
    masses[1:] = hx[1:] * (slopes[:-1] - slopes[1:])
    masses[0] = max(0.0, 1.0 - dl[-1] - masses[1:].sum())
    return he, np.maximum(masses, 0.0)


def grid_masses(idx: np.ndarray, deltas: np.ndarray, h: float):
    """(masses, inf_mass) of one direction's connect-the-dots grid from upper bounds on its
    profile at the consecutive grid losses idx * h (see pld.dots_direction)."""
    idx = np.asarray(idx, dtype=np.int64)
    deltas = np.minimum.accumulate(np.clip(np.asarray(deltas, dtype=float), 0.0, 1.0))
    diffs = np.diff(deltas)  # <= 0
    masses = np.empty(idx.size)
    masses[1:-1] = (diffs[1:] - math.exp(h) * diffs[:-1]) / math.expm1(h)
    masses[-1] = -math.exp(h) * diffs[-1] / math.expm1(h)
    if np.any(masses[1:] < 0.0):  # not convex to rounding: the hull, its vertices on the grid
        eps = idx * h
        shift = float(eps.max())
        he, hm = hull_atoms(eps - shift, deltas)
        masses = np.zeros(idx.size)
        masses[np.rint((he + shift) / h).astype(np.int64) - idx[0]] = hm
    inf_mass = float(deltas[-1])
    masses[0] = max(0.0, 1.0 - inf_mass - float(np.sum(masses[1:])))
    return masses, inf_mass
