"""Kairouz-Oh-Viswanath optimal homogeneous composition in log space (SPEC S3.3)."""
import math

from numba import njit


@njit(cache=True)
def kov_log_delta_i(k, eps, i):
    """log delta_i = log sum_{l<i} C(k,l) (e^((k-l)eps) - e^((k-2i+l)eps)) / (1+e^eps)^k.

    Each term is exp(log C(k,l) + (k-l) eps - k log(1+e^eps)) (1 - e^(-2(i-l) eps)), summed
    by a streaming log-sum-exp, so k eps far above 700 neither overflows nor underflows.
    Returns -inf for i = 0.
    """
    log_norm = k * (eps + math.log1p(math.exp(-eps)))
    mx = -math.inf
    acc = 0.0
    lgk = math.lgamma(k + 1.0)
    for l in range(i):
        v = (lgk - math.lgamma(l + 1.0) - math.lgamma(k - l + 1.0) + (k - l) * eps - log_norm
             + math.log(-math.expm1(-2.0 * (i - l) * eps)))
        if v > mx:
            acc = acc * math.exp(mx - v) + 1.0
            mx = v
        else:
            acc += math.exp(v - mx)
    if acc == 0.0:
        return -math.inf
    return mx + math.log(acc)
