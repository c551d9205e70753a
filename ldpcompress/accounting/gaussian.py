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
from ..core.numerics import SUBNORMAL_ULP as _TINY
from ..core.numerics import UNIT_ROUNDOFF as _U

__all__ = ["compose_mu", "delta_bracket", "epsilon_bracket", "bisect"]



def compose_mu(pairs) -> float:
    """mu of the composition of Gaussians given as (mu_i, times_i) pairs: sqrt(sum t_i mu_i^2),
    rounded up (a larger mu is a less private Gaussian, so rounding up is sound)."""
    try:
        total = math.fsum(float(t) * float(m) ** 2 for m, t in pairs)
    except OverflowError:
        total = math.inf
    if not total <= 1e300:
        raise ValueError("the composed Gaussian's mu^2 = sum times * (sensitivity/sigma)^2 "
                         "overflows: sigma is too small for the given sensitivity")
    return math.sqrt(total) * (1.0 + 4.0 * _U)


def _log_tail(x: float, err: float, up: bool) -> float:
    """A bound on log Phi(x') for every x' within err of x: log Phi is increasing, so it is
    read at x + err (up) or x - err, and moved by 4 ulps of its value (log_ndtr's accuracy)."""
    v = float(special.log_ndtr(x + err if up else x - err))
    return v + 4.0 * _U * abs(v) if up else v - 4.0 * _U * abs(v)


def _difference(log_a: float, log_b: float, up: bool) -> float:
    """A - B from log A, log B, rounded up (or down): A (-expm1(d)) with d = log B - log A moved
    by its own rounding, the exp and the product by 8 ulps."""
    if log_a == -math.inf or log_b >= log_a:
        return _TINY if up and log_a > -math.inf else 0.0
    d = log_b - log_a
    d = d - 2.0 * _U * abs(d) if up else d + 2.0 * _U * abs(d)
    value = math.exp(log_a) * -math.expm1(d)
    if not up:
        return min(1.0, max(0.0, value * (1.0 - 8.0 * _U)))
    # in the subnormal range exp and the product each lose up to one absolute ulp (2^-1074):
    # 4 of them are added, so an underflowed difference is reported as a positive double,
    # never 0 (the Gaussian's delta is positive at every finite eps)
    return min(1.0, value * (1.0 + 8.0 * _U) + 4.0 * _TINY)


def delta_bracket(mu: float, eps: float) -> tuple[float, float]:
    """(lower, upper): a proven bracket of delta(eps) of the Gaussian with mu = s/sigma.

    delta = A - B, A = Phi(a), B = e^eps Phi(b), a, b = +-mu/2 - eps/mu, each within
    4 u (mu/2 + eps/mu) of its rounded value: log A and log B are bracketed by reading the
    increasing log Phi at the ends of the arguments' intervals, and the difference
    A (-expm1(log B - log A)) is taken at the bracket's far ends, rounded outward."""
    mu = V.positive_finite(mu, "mu")
    eps = V.nonnegative(eps, "eps")
    if math.isinf(eps):
        return 0.0, 0.0
    a = mu / 2.0 - eps / mu
    b = -mu / 2.0 - eps / mu
    err = 4.0 * _U * (mu / 2.0 + eps / mu) + 1e-300
    grow = 4.0 * _U * eps  # the rounding of eps + log Phi(b)
    la_hi, la_lo = _log_tail(a, err, True), _log_tail(a, err, False)
    lb_hi = eps + _log_tail(b, err, True) + grow
    lb_lo = eps + _log_tail(b, err, False) - grow
    return _difference(la_lo, lb_hi, False), _difference(la_hi, lb_lo, True)


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
