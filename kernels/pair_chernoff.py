"""Chernoff bound on the correlated-pair blanket sum (docs/theory.md §2.5): where it is already
below the windows' tolerance it stands for the exact (J, N11) sum (kernels/blanket_pair.py).
"""
import math


from .decorator import kernel
from .numerics import EXP_MAX, UNIT_ROUNDOFF


__all__ = ["pair_log_mgf", "pair_chernoff_at", "pair_chernoff_log"]


@kernel
def pair_log_mgf(lam, p11, p10, p00, e, r):
    """(log E[e^(lam X)], bound on its rounding error) for one draw's X = b1 - E b2 - r."""
    ur = UNIT_ROUNDOFF
    phi = p11 * math.exp(lam * (1.0 - e)) + p10 * math.exp(lam) + p10 * math.exp(-lam * e) + p00
    lp = math.log(phi) - lam * r
    return lp, 16.0 * ur * (2.0 + lam * (1.0 + e + r) + abs(lp))


@kernel
def pair_chernoff_at(x, m, p11, p10, p00, e, r):
    """(m log E[e^(lam X)] - 1 - log lam at lam = e^x, the same rounded up)."""
    lp, err = pair_log_mgf(math.exp(x), p11, p10, p00, e, r)
    v = m * lp - 1.0 - x
    return v, v + m * err + 16.0 * UNIT_ROUNDOFF * (abs(v) + abs(x) + 2.0)


@kernel
def pair_chernoff_log(m, p11, p10, p00, e, r):
    """log of an upper bound on E[(sum_{i<=m} X_i)_+], X = b1 - E b2 - r for m iid draws (the
    blanket sum over c, docs/theory.md §2.5): x_+ <= e^(lam x)/(e lam) for every lam > 0, so
    E[(S)_+] <= E[e^(lam S)]/(e lam) = exp(m log E[e^(lam X)] - 1 - log lam); lam by
    golden-section search on log lam (the exponent is convex in lam, so unimodal in log lam);
    every probe's value, rounded up, is a bound, and the smallest is returned."""
    a, b = math.log(1e-8), math.log(EXP_MAX / (1.0 + e + r))
    g = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, up1 = pair_chernoff_at(x1, m, p11, p10, p00, e, r)
    f2, up2 = pair_chernoff_at(x2, m, p11, p10, p00, e, r)
    best = min(up1, up2)
    for _ in range(48):
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1, up = pair_chernoff_at(x1, m, p11, p10, p00, e, r)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2, up = pair_chernoff_at(x2, m, p11, p10, p00, e, r)
        best = min(best, up)
    return best
