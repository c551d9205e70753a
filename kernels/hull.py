"""The lower convex hull of connect-the-dots points (docs/theory.md §3.2): the monotone chain
over points (e^eps_i, delta_i) sorted by eps, the x-differences formed as
e^eps_a expm1(eps_b - eps_a) so that points with e^eps near 1 keep their digits."""
import math

import numpy as np

from .decorator import kernel
from .numerics import EXP_MAX

__all__ = ["lower_hull"]


@kernel
def _dx(x, eps, a, b):
    gap = eps[b] - eps[a]
    if gap <= EXP_MAX:
        return x[a] * math.expm1(gap)
    return x[b] - x[a]  # expm1 would overflow; the difference loses nothing here


@kernel
def lower_hull(x, eps, dl):
    """Indices of the lower convex hull's vertices of the points (x_i = e^eps_i, dl_i), x
    strictly increasing: a point is dropped when the turn it makes is not strictly convex."""
    n = x.size
    hull = np.empty(n, dtype=np.int64)
    size = 0
    for i in range(n):
        while size >= 2:
            a = hull[size - 2]
            b = hull[size - 1]
            cross = _dx(x, eps, a, b) * (dl[i] - dl[a]) - (dl[b] - dl[a]) * _dx(x, eps, a, i)
            if cross <= 0.0:
                size -= 1
            else:
                break
        hull[size] = i
        size += 1
    return hull[:size].copy()
