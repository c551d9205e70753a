"""Root finding on monotone privacy profiles (docs/theory.md §1, §2.1-2.3, §2.10).

eps(delta) = inf{eps >= 0 : delta(eps) <= delta}. A bracket [lo, hi] with delta(lo) > target
>= delta(hi) is shrunk by Illinois steps on log delta (bisection when they stall) to a relative
width of rtol. An upper bound returns hi (a verified point), a lower bound returns lo.
"""
from __future__ import annotations

import math
from typing import Callable

__all__ = ["RTOL", "epsilon_for_delta", "largest_feasible", "largest_below", "shrink_bracket",
           "smallest_feasible_int", "golden_min", "bisect_int"]


RTOL = 1e-10


def _log_gap(d: float, target: float) -> float:
    # log(d) - log(target), not log(d / target): the ratio overflows for a denormal target
    return math.log(d) - math.log(target) if d > 0.0 else -math.inf


def epsilon_for_delta(delta_at: Callable[[float], float], target: float, eps_max: float,
                      *, upper: bool = True, rtol: float = RTOL, guess: float | None = None) -> float:
    """Smallest eps in [0, eps_max] with delta_at(eps) <= target, to relative width rtol.

    delta_at must be non-increasing with delta_at(eps_max) <= target. Secant steps on
    log(delta/target) through the last two points, kept inside the bracket (bisection when they
    leave it); once the root is pinned, one step just past it closes the bracket. Returns the
    upper end of the final bracket when ``upper`` (never optimistic), else the lower end.
    """
    lo, hi = 0.0, eps_max
    x = eps_max if guess is None else min(max(guess, 0.0), eps_max)
    # Probe downward geometrically from the guess until delta exceeds the target; after a few
    # probes, eps = 0 is tried once (an almost useless randomizer, e.g. two rows of a table
    # equal to 1e-7, would otherwise walk down to 1e-300 over hundreds of evaluations).
    probes = 0
    while True:
        probes += 1
        if probes == 6 and x > 1e-300 and delta_at(0.0) <= target:
            return 0.0
        if x <= 1e-300:
            d0 = delta_at(0.0)
            if d0 <= target:
                return 0.0
            x, fx = 0.0, _log_gap(d0, target)  # the bracket is [0, hi] (eps_max may be tiny)
            break
        fx = _log_gap(delta_at(x), target)
        if fx > 0.0:
            lo = x
            break
        hi = x
        x = x / 8.0
    pts = [(x, fx)] if x > 0.0 else []
    for it in range(200):
        width = hi - lo
        if width <= rtol * hi:
            break
        x = 0.5 * (lo + hi)
        if len(pts) == 2 and it < 60:
            (x1, f1), (x2, f2) = pts
            if math.isfinite(f1) and math.isfinite(f2) and f1 != f2:
                sec = x2 - f2 * (x2 - x1) / (f2 - f1)
                step = 0.3 * rtol * hi
                if abs(sec - x2) < step:  # pinned: step just past the root to close the bracket
                    sec = x2 + step if f2 > 0.0 else x2 - step
                if lo < sec < hi:
                    x = sec
        fx = _log_gap(delta_at(x), target)
        if fx > 0.0:
            lo = x
        else:
            hi = x
        pts = (pts + [(x, fx)])[-2:]
    return hi if upper else lo


def largest_feasible(feasible: Callable[[float], bool], lo: float, hi_cap: float,
                     rtol: float = 1e-9) -> float:
    """Largest x in [lo, hi_cap] with feasible(x), for a predicate true up to a point.

    feasible(lo) must hold. Doubling then bisection; returns the verified (lower) end.
    """
    if feasible(hi_cap):
        return hi_cap
    hi = min(max(2.0 * lo, lo + 1e-3), hi_cap)
    while feasible(hi):
        lo = hi
        hi = min(2.0 * hi, hi_cap)
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return lo


def largest_below(value: Callable[[float], float], target: float, lo: float, hi_cap: float,
                  rtol: float = 1e-9) -> float:
    """Largest x in [lo, hi_cap] with value(x) <= target, for a value non-decreasing in x
    (inf where x is refused): :func:`largest_feasible` of that predicate, its bracket shrunk
    by Illinois steps on value - target (kept inside the bracket; bisection when a value is
    infinite or a step stalls), so a smooth value needs ~8 evaluations where bisection needs
    ~35. value(lo) <= target must hold; returns the verified (lower) end. Callers memoise
    ``value``: the lower end's is asked for again."""
    if value(hi_cap) <= target:
        return hi_cap
    f_lo = value(lo) - target
    if not f_lo <= 0.0:
        raise ValueError(f"largest_below: value(lo = {lo!r}) = {f_lo + target!r} is above the "
                         f"target {target!r}")
    hi = min(max(2.0 * lo, lo + 1e-3), hi_cap)
    f_hi = value(hi) - target
    while f_hi <= 0.0:
        lo, f_lo = hi, f_hi
        hi = min(2.0 * hi, hi_cap)
        f_hi = value(hi) - target
    return shrink_bracket(lambda x: value(x) - target, lo, f_lo, hi, f_hi,
                          lambda lo_, hi_, gap: hi_ - lo_ <= rtol * hi_)


def shrink_bracket(f: Callable[[float], float], lo: float, f_lo: float, hi: float,
                   f_hi: float, done: Callable[[float, float, float], bool]) -> float:
    """Illinois steps on f inside a bracket with f(lo) <= 0 < f(hi) (bisection when an end's
    value is infinite or the last step shrank the bracket by less than a quarter) until
    ``done(lo, hi, -f(lo))``; returns lo, a point where f was computed and is <= 0."""
    side, width, gap = 0, hi - lo, -f_lo  # gap: -f(lo) as computed (f_lo is halved below)
    while not done(lo, hi, gap):
        w = hi - lo
        if math.isfinite(f_hi) and f_hi > f_lo and w < 0.75 * width:
            x = lo + w * (-f_lo) / (f_hi - f_lo)
            x = min(max(x, lo + 1e-3 * w), hi - 1e-3 * w)
        else:
            x = lo + 0.5 * w
        width = w
        fx = f(x)
        if fx <= 0.0:
            lo, f_lo, gap = x, fx, -fx
            if side == -1:
                f_hi *= 0.5  # Illinois: the end kept twice has its value halved
            side = -1
        else:
            hi, f_hi = x, fx
            if side == 1:
                f_lo *= 0.5
            side = 1
    return lo


def smallest_feasible_int(feasible: Callable[[int], bool], cap: int) -> int | None:
    """Smallest integer n >= 1 with feasible(n) for a predicate monotone in n (galloping)."""
    if feasible(1):
        return 1
    lo, hi = 1, 2
    while not feasible(hi):
        lo = hi
        if hi >= cap:
            return None
        hi = min(2 * hi, cap)
    return bisect_int(feasible, lo, hi)


def bisect_int(feasible: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest integer in (lo, hi] with feasible(x), for a predicate monotone on [lo, hi] with
    feasible(lo) False and feasible(hi) True."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    return hi


def golden_min(f: Callable[[float], float], a: float, b: float,
               iterations: int = 60) -> tuple[float, float]:
    """(x, f(x)) at the minimum of a unimodal (e.g. convex) f on [a, b] by golden-section search:
    the bracket shrinks by 0.618 per step; the better of the two final probes is returned."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(iterations):
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1 = f(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2 = f(x2)
    return (x1, f1) if f1 <= f2 else (x2, f2)
