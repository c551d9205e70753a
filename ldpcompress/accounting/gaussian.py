"""The exact privacy profile of the Gaussian mechanism (BW18, Thm 8), with every
value rounded outward (docs/theory.md §3.5).

A Gaussian of noise sigma and L2 sensitivity s has the profile of N(mu, 1) against N(0, 1) with
mu = s / sigma:

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).

Gaussians compose to a Gaussian: T mechanisms of (s_i, sigma_i) are exactly one of
mu = sqrt(sum_i (s_i/sigma_i)^2) (the privacy loss of each is N(mu_i^2/2, mu_i^2), and the sum
of independent normal losses is normal), so a ledger of Gaussians, homogeneous or mixed, has
a closed-form answer. Both tails are read in log space (``scipy.special.log_ndtr``) and the
difference is formed as A (-expm1(log B - log A)); ``delta_bracket`` widens it by a proven
allowance for the rounding of A and B, and ``epsilon_bracket`` bisects each end of the bracket
(the upper end of the upper curve, the lower end of the lower one).
"""
from __future__ import annotations

import math

from scipy import special

from ..core import validate as V

__all__ = ["compose_mu", "delta_bracket", "epsilon_bracket", "bisect"]

_U = 2.0 ** -53


def compose_mu(pairs) -> float:
    """mu of the composition of Gaussians given as (mu_i, times_i) pairs: sqrt(sum t_i mu_i^2),
    rounded up (a larger mu is a less private Gaussian, so rounding up is sound)."""
    total = math.fsum(float(t) * float(m) ** 2 for m, t in pairs)
    if not math.isfinite(total):
        raise ValueError("the composed Gaussian's mu^2 = sum times * (sensitivity/sigma)^2 "
                         "overflows: sigma is too small for the given sensitivity")
    return math.sqrt(total) * (1.0 + 4.0 * _U)


def _terms(mu: float, eps: float):
    """(log A, log B, allowance factor): delta = A - B with A = Phi(mu/2 - eps/mu),
    B = e^eps Phi(-mu/2 - eps/mu). log_ndtr(x) is accurate to a few ulps of its value and its
    argument's rounding moves it by |d log Phi/dx| |x| u <= (|x| + 1) |x| u, so each of A and B
    is within a relative 16 u (2 + x^2 + |eps|) of its value."""
    a = mu / 2.0 - eps / mu
    b = -mu / 2.0 - eps / mu
    log_a = float(special.log_ndtr(a))
    log_b = eps + float(special.log_ndtr(b))
    rel = 16.0 * _U * (2.0 + a * a + b * b + abs(eps) + abs(log_a) + abs(log_b))
    return log_a, log_b, rel


def delta_bracket(mu: float, eps: float) -> tuple[float, float]:
    """(lower, upper): a proven bracket of delta(eps) of the Gaussian with mu = s/sigma."""
    mu = V.positive_finite(mu, "mu")
    eps = V.nonnegative(eps, "eps")
    if math.isinf(eps):
        return 0.0, 0.0
    log_a, log_b, rel = _terms(mu, eps)
    if log_a == -math.inf:
        return 0.0, 1e-300  # A underflowed: delta <= A < 1e-300
    big_a = math.exp(log_a)
    diff = big_a * -math.expm1(log_b - log_a) if log_b < log_a else 0.0
    slack = rel * (big_a + math.exp(min(log_b, 0.0))) + 1e-300
    return max(0.0, diff - slack), min(1.0, diff + slack)


def epsilon_bracket(mu: float, delta: float) -> tuple[float, float]:
    """(lower, upper): the smallest eps with delta(eps) <= delta lies in [lower, upper]. upper is
    the upper end of a bisection on the upper curve (delta_up(upper) <= delta verified), lower
    the lower end of one on the lower curve (delta_low(lower) > delta, or lower = 0)."""
    mu = V.positive_finite(mu, "mu")
    delta = V.probability_open(delta, "delta")
    up = lambda e: delta_bracket(mu, e)[1]  # noqa: E731
    low = lambda e: delta_bracket(mu, e)[0]  # noqa: E731
    # a point where the upper curve is below delta: the Gaussian tail bound, then doublings
    hi = mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta)) + 1.0
    while up(hi) > delta:
        hi *= 2.0
        if hi > 1e300:
            raise ValueError(f"no eps reaches delta = {delta:g} for mu = {mu:g}")
    upper = 0.0 if up(0.0) <= delta else bisect(up, delta, 0.0, hi)[1]
    # every eps <= the lower end has delta >= delta_low(eps) > delta: refused
    lower = 0.0 if low(0.0) <= delta else bisect(low, delta, 0.0, hi)[0]
    return min(lower, upper), upper


def bisect(fn, target: float, lo: float, hi: float) -> tuple[float, float]:
    """(lo, hi) adjacent floats with fn(lo) > target >= fn(hi), for fn non-increasing with
    fn(lo) > target >= fn(hi) on entry: hi is a verified answer, lo a verified refusal."""
    for _ in range(2100):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if fn(mid) <= target:
            hi = mid
        else:
            lo = mid
    return lo, hi
