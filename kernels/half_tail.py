"""Tail states of V ~ Bin(j, 1/2) for the correlated-pair blanket and the oracle attack
(docs/theory.md §2.5, §2.6(c)): (Pr[V >= t], Pr[V = t]) moved in t and in the order j by O(1)
recurrences, with absolute error bounds carried along (half_step, half_order_down) and
re-anchoring from the log-pmf when they grow; E[(V - theta)_+] from a state (half_excess).
"""
import math

from .binomial import TINY, binom_logpmf, pmf_anchor, tail_rel_err
from .bintail import MAX_JUMP, sf_anchor
from .decorator import kernel
from .numerics import UNIT_ROUNDOFF

__all__ = ["HALF_REL_MAX", "HALF_REL_MOVE", "PK_REL_MAX", "half_dec_order", "half_anchor",
           "half_refresh", "half_step", "half_order_down", "half_excess", "half_tail_below"]


# A moved tail state of Bin(J, 1/2) is re-anchored once the tracked relative error of
# Pr[V >= t] exceeds HALF_REL_MAX (the state carried from J to J - 1) or HALF_REL_MOVE (a state
# moved within one J), or 8 times an anchor's own error bound if larger (tail_rel_err grows with
# J), and its pmf is recomputed beyond PK_REL_MAX (above pmf_rel_err at p = 1/2, at most
# 1.2e-11). Larger values are cheaper and only loosen the allowance.
HALF_REL_MAX = 1e-9
HALF_REL_MOVE = 1e-7
PK_REL_MAX = 5e-11


@kernel
def half_dec_order(j, t, u, pk):
    """State (Pr[X >= t], Pr[X = t]) of X ~ Bin(j, 1/2) -> the same for Bin(j - 1, 1/2):
    U_{j-1}(t) = U_j(t) - B_j(t) t / j and B_{j-1}(t) = B_j(t) 2 (j - t) / j (re-anchors when
    the subtraction would cancel half the value or the pmf underflows)."""
    if t <= 0 or t >= j or pk < TINY:
        return sf_anchor(t, j - 1, 0.5, 0.5)
    nu = u - pk * t / j
    if nu < 0.5 * u:
        return sf_anchor(t, j - 1, 0.5, 0.5)
    return nu, pk * 2.0 * (j - t) / j


@kernel
def half_anchor(t, j):
    """(u, pk, eu, ep): u = Pr[V >= t], pk = Pr[V = t] for V ~ Bin(j, 1/2), with absolute error
    bounds eu, ep (tail_rel_err of a direct anchor)."""
    u, pk = sf_anchor(t, j, 0.5, 0.5)
    rel = tail_rel_err(t, j, 0.5)
    return u, pk, rel * u, rel * pk


@kernel
def half_refresh(t, j, u, pk, eu, ep, rel_max):
    """Recompute pk from its log-pmf once its tracked error exceeds PK_REL_MAX (otherwise the
    error of u, fed by pk's, would grow quadratically in the steps); re-anchor the whole state
    once eu exceeds rel_max u, or on an underflow."""
    if u <= 0.0 or eu > rel_max * u or pk < TINY:
        return half_anchor(t, j)
    if ep > PK_REL_MAX * pk:
        pk, rel = pmf_anchor(t, j, 0.5, 0.5)
        ep = rel * pk
    return u, pk, eu, ep


@kernel
def half_step(t, target, j, u, pk, eu, ep, rel_max):
    """Move the state (u, pk) of Bin(j, 1/2) from t to target, carrying absolute error bounds:
    downward u <- u + pk(t-1), upward u <- u - pk(t) (the absolute errors add, so no
    cancellation test is needed: half_refresh re-anchors once the relative error of u exceeds
    rel_max; a long jump or an edge re-anchors at once)."""
    ur = UNIT_ROUNDOFF
    if abs(target - t) > MAX_JUMP or pk < TINY or target < 0 or target > j or t < 0 or t > j:
        return half_anchor(target, j)
    while t > target:
        ratio = t / (j - t + 1.0)
        ep = (ep + 3.0 * ur * pk) * ratio
        pk = pk * ratio
        u = u + pk
        eu = eu + ep + ur * u
        t -= 1
    while t < target:
        ratio = (j - t) / (t + 1.0)
        u = u - pk
        eu = eu + ep + ur * abs(u)
        ep = (ep + 3.0 * ur * pk) * ratio
        pk = pk * ratio
        t += 1
    return half_refresh(target, j, u, pk, eu, ep, rel_max)


@kernel
def half_order_down(j, t, u, pk, eu, ep, rel_max):
    """The state at t of Bin(j, 1/2) -> the same for Bin(j - 1, 1/2) (see half_dec_order),
    carrying absolute error bounds (refreshed as in half_step)."""
    ur = UNIT_ROUNDOFF
    if t <= 0 or t >= j or pk < TINY:
        return half_anchor(t, j - 1)
    u = u - pk * t / j
    eu = eu + (ep + 3.0 * ur * pk) * t / j + ur * abs(u)
    ratio = 2.0 * (j - t) / j
    ep = (ep + 3.0 * ur * pk) * ratio
    pk = pk * ratio
    return half_refresh(t, j - 1, u, pk, eu, ep, rel_max)


@kernel
def half_excess(theta, t, j, u, pk, eu, ep):
    """(E[(V - theta)_+], allowance) for V ~ Bin(j, 1/2) and theta in [t - 1, t], from the state
    at t: (j/2 - theta) u + (t/2) pk (see excess), linear in theta on that piece. The allowance
    carries the state's absolute errors and the rounding of the formula."""
    if t > j:
        return 0.0, 0.0
    d = 0.5 * j - theta
    lead = d * u
    tail = 0.5 * t * pk
    v = lead + tail
    err = abs(d) * eu + 0.5 * t * ep \
        + 4.0 * UNIT_ROUNDOFF * (abs(lead) + tail + (abs(theta) + 0.5 * j) * u)
    return max(v, 0.0), err


@kernel
def half_tail_below(t, j, log_bound):
    """Whether Pr[Bin(j, 1/2) >= t] < e^log_bound, by the geometric bound
    pmf(t) / (1 - rho), rho = (j - t)/(t + 1) (t above the median; else False)."""
    if t > j:
        return True
    if 2 * t <= j + 1:
        return False
    rho = (j - t) / (t + 1.0)
    return binom_logpmf(t, j, 0.5, 0.5) - math.log1p(-rho) < log_bound
