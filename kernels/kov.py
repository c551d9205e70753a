"""Kairouz-Oh-Viswanath optimal homogeneous composition in log space (docs/theory.md §3.3)."""
import math


from .decorator import kernel
from .binomial import TINY, binom_logpmf, binom_window, pmf_rel_err
from .numerics import SUBNORMAL_ULP, UNIT_ROUNDOFF

__all__ = ["KOV_TOL", "ANCHOR_EVERY", "kov_log_delta_i"]


KOV_TOL = 1e-300  # mass of Bin(k, 1/(1+e^eps)) left outside the summed window (added whole)
ANCHOR_EVERY = 4096


@kernel
def kov_log_delta_i(k, eps, i):
    """log of an upper bound on delta_i = sum_{l<i} C(k,l) (e^((k-l)eps) - e^((k-2i+l)eps)) / (1+e^eps)^k.

    Written as sum_{l<i} b(l) (1 - e^(-2(i-l) eps)) with b the pmf of Bin(k, 1/(1+e^eps)), the
    sum runs over the part of [0, i-1] inside a window of b (kernels/binomial.py) and adds the
    window's whole outside mass (each factor is <= 1), so it costs O(sqrt(k)) rather than O(i)
    and never falls below delta_i. The pmf comes from Loader's log-pmf (accurate at k = 1e9,
    where lgamma differences lose six digits) and consecutive-ratio recurrences, re-anchored
    every 4096 steps; the sum is inflated by the anchors' error bound and 4 ulps per step.
    Returns -inf for i = 0.
    """
    if i <= 0:
        return -math.inf
    x = math.exp(-eps)
    if x == 0.0:  # e^-eps underflows (eps > ~745): delta_i <= 1 is all a double can certify
        return 0.0
    pb, pbc = x / (1.0 + x), 1.0 / (1.0 + x)  # 1/(1+e^eps), e^eps/(1+e^eps)
    lo, hi, outside = binom_window(k, pb, pbc, KOV_TOL)
    top = min(hi, i - 1)
    total = 0.0
    rel = 0.0
    steps = 0
    if top >= lo:
        ratio_down = pbc / pb  # b(l-1)/b(l) = l/(k-l+1) * e^eps
        lp = binom_logpmf(top, k, pb, pbc)
        w = math.exp(lp)
        rel = pmf_rel_err(top, k, pb, lp)
        l = top
        while True:
            total += w * -math.expm1(-2.0 * (i - l) * eps)
            if l <= lo:
                break
            w *= l / (k - l + 1.0) * ratio_down
            l -= 1
            steps += 1
            if w < TINY or steps % ANCHOR_EVERY == 0:
                lp = binom_logpmf(l, k, pb, pbc)
                w = math.exp(lp)
                rel = max(rel, pmf_rel_err(l, k, pb, lp))
    total = total * (1.0 + rel) * (1.0 + 4.0 * (min(steps, ANCHOR_EVERY) + 8) * UNIT_ROUNDOFF)
    total = min(1.0, total + outside + (steps + 1) * SUBNORMAL_ULP)
    if total <= 0.0:
        return -math.inf
    lt = math.log(total)  # <= 0: shrinking it toward 0 rounds the bound up
    return lt * (1.0 - 4.0 * UNIT_ROUNDOFF) + 2.0 * UNIT_ROUNDOFF
