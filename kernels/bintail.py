"""Binomial tails and expected excesses E[(K - theta)_+] for K ~ Bin(m, a), the inner brick of
the privacy-blanket kernels (Balle, Bell, Gascon, Nissim 2019; docs/theory.md §2.5).

    E[(K - theta)_+] = (m a - theta) U + t (1 - a) P,   U = Pr[K >= t], P = Pr[K = t],
    t = floor(theta) + 1   (since sum_{k>=t} (k - m a) b(k) = t (1-a) b(t)).

(U, P) move by O(1) recurrences when theta moves by a few units (sf_move), as in
kernels/clones.py; windows of a binomial (tight_window) leave out a proven mass.
"""
import math

from .binomial import (
    TINY,
    binom_logpmf,
    binom_window,
    lower_tail_bound,
    pmf_anchor,
    tail_rel_err,
    upper_tail_bound,
)
from .decorator import kernel
from .numerics import UNIT_ROUNDOFF

__all__ = ["MAX_JUMP", "bin_sf", "sf_anchor", "sf_move", "first_above", "excess",
           "pmf_step_down", "tight_window"]


MAX_JUMP = 64


@kernel
def bin_sf(t, m, a, b):
    """Pr[Bin(m, a) >= t]: the smaller side summed by pmf ratios, geometric remainder."""
    if t <= 0:
        return 1.0
    if t > m:
        return 0.0
    if a == 0.0:
        return 0.0
    if b == 0.0:
        return 1.0
    upper = t >= m * a
    k = t if upper else t - 1
    log_head = binom_logpmf(k, m, a, b)
    term = 1.0
    total = 1.0
    while True:
        if upper:
            if k >= m:
                break
            rho = (m - k) / (k + 1.0) * (a / b)
            k += 1
        else:
            if k <= 0:
                break
            rho = k / (m - k + 1.0) * (b / a)
            k -= 1
        term *= rho
        total += term
        nxt = ((m - k) / (k + 1.0) * (a / b)) if upper else (k / (m - k + 1.0) * (b / a))
        if nxt < 1.0 and term * nxt / (1.0 - nxt) <= 1e-18 * total:
            total += term * nxt / (1.0 - nxt)
            break
    s = math.exp(log_head + math.log(total))
    if upper:
        return min(1.0, s)
    return max(0.0, 1.0 - s)


@kernel(inline="always")
def sf_anchor(t, m, a, b):
    """(Pr[Bin(m, a) >= t], Pr[Bin(m, a) = t]) computed directly."""
    return bin_sf(t, m, a, b), math.exp(binom_logpmf(t, m, a, b))


@kernel
def sf_move(t, target, m, a, b, u, pk):
    """Move the state (u, pk) at t to target by pmf-ratio recurrences; re-anchor on long
    jumps, underflow, or when a subtraction would cancel half the value."""
    if abs(target - t) > MAX_JUMP or pk < TINY:
        return sf_anchor(target, m, a, b)
    while t > target:
        if t > m or t - 1 < 0:
            return sf_anchor(target, m, a, b)
        pk = pk * t * b / ((m - t + 1.0) * a)
        u = min(1.0, u + pk)
        t -= 1
        if pk < TINY:
            return sf_anchor(target, m, a, b)
    while t < target:
        if t < 0 or t >= m:
            return sf_anchor(target, m, a, b)
        nu = u - pk
        if nu < 0.5 * u:
            return sf_anchor(target, m, a, b)
        pk = pk * (m - t) * a / ((t + 1.0) * b)
        u = nu
        t += 1
        if pk < TINY:
            return sf_anchor(target, m, a, b)
    return u, pk


@kernel
def first_above(theta, m):
    """Smallest integer t > theta, clipped to [0, m + 1]."""
    if theta < 0.0:
        return 0
    if theta >= m:
        return m + 1
    t = int(math.floor(theta)) + 1
    if t - 1 > theta:
        t -= 1
    return t


@kernel
def excess(theta, t, m, a, b, u, pk):
    """(E[(K - theta)_+], rounding allowance) for K ~ Bin(m, a) from (u, pk) at t. The allowance
    includes the tail state's own error bound (log-pmf anchors and ratio sums: tail_rel_err)."""
    if t > m:
        return 0.0, 0.0
    lead = (m * a - theta) * u
    tail = t * b * pk
    v = lead + tail
    err = 8.0 * UNIT_ROUNDOFF * (abs(lead) + tail + abs(theta) * u + m * a * u) \
        + tail_rel_err(t, m, a) * (abs(lead) + tail)
    return max(v, 0.0), err


@kernel
def pmf_step_down(w, j, m, p, q, rel, since):
    """Bin(m, p) pmf at j -> at j - 1 by the ratio j/(m-j+1) q/p, re-anchored from the log-pmf
    when it underflows; returns (pmf, its anchor's relative error, steps since the anchor)."""
    w *= (j / (m - j + 1.0)) * (q / p)
    if w < TINY:
        w, rel = pmf_anchor(j - 1, m, p, q)
        return w, rel, 0
    return w, rel, since + 1


@kernel
def tight_window(n, p, q, tol):
    """binom_window narrowed to the smallest window whose geometric tail bounds (the same
    proven bounds) still sum to at most tol: binom_window starts 2 standard deviations wider
    than a Gaussian tail needs, and these windows multiply (J by N11 pieces, for every M')."""
    lo, hi, outside = binom_window(n, p, q, tol)
    if n <= 0 or p == 0.0 or q == 0.0:
        return lo, hi, outside
    mode = min(n, int(math.floor((n + 1.0) * p)))
    if hi < n and hi > mode:
        a, b = mode, hi  # the bound at b is <= tol/2; find the smallest such point
        while b - a > 1:
            mid = (a + b) // 2
            if upper_tail_bound(mid, n, p, q) <= 0.5 * tol:
                b = mid
            else:
                a = mid
        hi = b
    if lo > 0 and lo < mode:
        a, b = lo, mode
        while b - a > 1:
            mid = (a + b) // 2
            if lower_tail_bound(mid, n, p, q) <= 0.5 * tol:
                a = mid
            else:
                b = mid
        lo = a
    up = upper_tail_bound(hi, n, p, q) if hi < n else 0.0
    down = lower_tail_bound(lo, n, p, q) if lo > 0 else 0.0
    return lo, hi, up + down


# A moved tail state of Bin(J, 1/2) is re-anchored once the tracked relative error of
# Pr[V >= t] exceeds HALF_REL_MAX (the state carried from J to J - 1) or HALF_REL_MOVE (a state
# moved within one J), or 8 times an anchor's own error bound if larger (tail_rel_err grows with
# J), and its pmf is recomputed beyond PK_REL_MAX (above pmf_rel_err at p = 1/2, at most
