"""The density of a sum of n iid Laplace(1) noises, and Rényi integrals on a uniform grid
(docs/theory.md §4).

S = G1 - G2 with G1, G2 ~ Gamma(n, 1) has, with y = 2|x|,
f(x) = e^(-|x|) / (2^(2n-1) (n-1)!) sum_{j<n} t_j,  t_j = (2n-2-j)! / (j! (n-1-j)!) y^j.
The ratio r_j = t_{j+1} / t_j = y (n-1-j) / ((j+1) (2n-2-j)) decreases in j, so the terms rise
to one largest term t_{j*} (j* the first j with r_j < 1) and fall on both sides. The sum is read
from t_{j*} outwards by these ratios (no log or exp in the loop) and each side stops at the
first term below STOP t_{j*}: every term past it is smaller and there are fewer than n of them,
so the sum left out is below n STOP of the sum kept. From the ratios' decrease, a side stops
within m terms once m(m-1) >= 4 (n-1) log(1/STOP) (right) or 2 (n-1) log(1/STOP) (left): at
most min(n, 29 sqrt(n) + 4) terms per point (``MAX_TERMS_PER_SQRT_N``).
"""
import math

import numpy as np

from .decorator import kernel

__all__ = ["STOP", "MAX_TERMS_PER_SQRT_N", "laplace_sum_logpdf_into", "log_trapezoid_mix"]


STOP = 1e-30               # relative size of the first term left out, on each side
MAX_TERMS_PER_SQRT_N = 29  # sqrt(4 log 1e30) + sqrt(2 log 1e30) = 28.4: terms per point / sqrt(n)


@kernel
def _peak(y, n):
    """The first j in [0, n-1] with r_j < 1 (the largest term): bisection on the decreasing
    ratio; r_{n-1} = 0, so it exists."""
    lo, hi = 0, n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if y * (n - 1.0 - mid) < (mid + 1.0) * (2.0 * n - 2.0 - mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


@kernel
def laplace_sum_logpdf_into(x, shift, scale, n, out):
    """out[i] = log density at x[i] - shift of the sum of n iid Laplace(scale) noises (the
    module's formula at |x[i] - shift| / scale, less log(scale)); returns the number of terms
    summed over all points (the work done)."""
    norm = (2.0 * n - 1.0) * math.log(2.0) + math.lgamma(n) + math.log(scale)
    steps = 0
    for i in range(x.shape[0]):
        ax = abs(x[i] - shift) / scale
        y = 2.0 * ax
        top = _peak(y, n) if y > 0.0 else 0
        log_top = math.lgamma(2.0 * n - 1.0 - top) - math.lgamma(top + 1.0) \
            - math.lgamma(n - 1.0 * top)
        if top > 0:
            log_top += top * math.log(y)
        total = 1.0
        term = 1.0
        j = top
        while j < n - 1:  # right of the peak: t_{j+1} = t_j r_j
            term *= y * (n - 1.0 - j) / ((j + 1.0) * (2.0 * n - 2.0 - j))
            j += 1
            total += term
            if term < STOP:
                break
        steps += j - top
        term = 1.0
        j = top
        while j > 0:  # left of the peak: t_{j-1} = t_j / r_{j-1}
            term *= (j * (2.0 * n - 1.0 - j)) / (y * (n - j))
            j -= 1
            total += term
            if term < STOP:
                break
        steps += top - j + 1
        out[i] = log_top + math.log(total) - ax - norm
    return steps


@kernel
def log_trapezoid_mix(lp, lq, a, step):
    """log of the trapezoid rule for the integral of exp(a lp + (1 - a) lq) on a uniform grid of
    spacing ``step`` (a = 0: of exp(lq)), formed in log space: max + log sum exp(v - max)."""
    m = -np.inf
    for i in range(lp.shape[0]):
        v = a * lp[i] + (1.0 - a) * lq[i] if a != 0.0 else lq[i]
        if v > m:
            m = v
    if m == -np.inf:
        return -np.inf
    total = 0.0
    last = lp.shape[0] - 1
    for i in range(lp.shape[0]):
        v = a * lp[i] + (1.0 - a) * lq[i] if a != 0.0 else lq[i]
        w = 0.5 if i == 0 or i == last else 1.0
        total += w * math.exp(v - m)
    return m + math.log(total * step)
