"""Pure differential privacy through composition (docs/theory.md §3.4, "Pure events").

A ledger whose every event is (eps_i, 0)-DP (Laplace, PureDP, randomized response, a
Poisson-sampled Laplace) is (E, 0)-DP with E = sum_i t_i eps_i (basic composition, Dwork and
Roth 2014, Thm 3.14). Every (E, 0)-DP pair is a post-processing of binary randomized response
with parameter E (Kairouz, Oh, Viswanath 2015), so its hockey-stick divergence is at most
that of randomized response, in closed form:

    delta(eps) = (1 - e^(eps - E)) / (1 + e^-E)     for eps < E, and exactly 0 for eps >= E;
    eps(delta) = max(0, E + log(1 - delta (1 + e^-E)))  <= E for every delta.

The accountant reports this as the method "pure" where it is the smallest sound bound (at small
delta the composed PLD's grid and the Renyi conversion cannot reach delta = 0; at moderate
delta they are smaller, and win). Randomized response over k buckets (dp_accounting's
``RandomizedResponseDpEvent``) is an event here with its exact PLD and Renyi curve.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special

from ..core import validate as V
from ..core.numerics import EXP_MAX, UNIT_ROUNDOFF
from . import pld as P
from . import rdp as R
from .events import EVENTS, Event
from .rounding import fraction_up, round_up

__all__ = ["RandomizedResponse", "composed_eps", "pure_epsilon", "pure_delta"]

MAX_BUCKETS = 2 ** 53  # k exactly representable as a float


def composed_eps(pairs) -> float | None:
    """E = sum of times x eps over (event, times) pairs, summed exactly and rounded up to a
    float (four Laplace events of eps 1 give exactly 4); None when an event is not
    pure (its ``pure_eps()`` is None)."""
    total = Fraction(0)
    for event, times in pairs:
        eps = event.pure_eps()
        if eps is None:
            return None
        total += times * Fraction(eps)  # exact: floats are rationals
    return fraction_up(total)


def pure_delta(total: float, eps: float) -> float:
    """delta(eps) of an (total, 0)-DP mechanism: 0 from eps = total on, else randomized
    response's (1 - e^(eps - total)) expit(total), rounded up."""
    if eps >= total:
        return 0.0
    return min(1.0, round_up(-math.expm1(eps - total) * float(special.expit(total))))


def pure_epsilon(total: float, delta: float) -> float:
    """eps(delta) of an (total, 0)-DP mechanism: total + log1p(-delta (1 + e^-total)), at least
    0 and at most total, rounded up."""
    x = delta * (1.0 + math.exp(-total))
    if x >= 1.0:
        return 0.0
    log = math.log1p(-x)
    # the sum's float error (a few ulps of its terms) is added before the clamp at 0, so a
    # true value just above 0 is never reported as 0
    slack = 4.0 * UNIT_ROUNDOFF * (total - log)
    return min(total, round_up(max(0.0, total + log + slack)))


@dataclass(frozen=True)
class RandomizedResponse(Event):
    """Randomized response over k buckets with noise parameter p: the true bucket with
    probability 1 - p, else a uniformly random one of the k (dp_accounting's
    ``RandomizedResponseDpEvent(noise_parameter=p, num_buckets=k)``). Substitution neighbours
    (one input changed to another bucket; dp_accounting's REPLACE_ONE, which dominates its
    REPLACE_SPECIAL): pure eps-DP with eps = log(1 + k (1 - p) / p), and its exact PLD and Renyi
    curve are those of the pair (a, b, rest) vs (b, a, rest), a = 1 - p + p/k, b = p/k.

    Parameters
    ----------
    noise_parameter : float
        p, the probability of answering a uniformly random bucket, in (0, 1).
    num_buckets : int
        k, the number of buckets (>= 2).
    """

    noise_parameter: float
    num_buckets: int

    relation = "substitution"

    def __post_init__(self):
        p = V.probability_in(self.noise_parameter, "noise_parameter", 0.0, 1.0)
        if not 0.0 < p < 1.0:
            raise ValueError(f"noise_parameter must be in (0, 1), got {V.shown(p)}: p = 0 "
                             "releases the input (not private), p = 1 releases nothing")
        k = V.integer_at_least(self.num_buckets, "num_buckets", 2, MAX_BUCKETS)
        object.__setattr__(self, "noise_parameter", p)
        object.__setattr__(self, "num_buckets", k)
        if not self._eps() <= EXP_MAX:
            raise ValueError(f"noise_parameter = {p!r} with num_buckets = {k} gives eps = "
                             f"log(1 + k (1 - p) / p) > {EXP_MAX:g}: use a larger noise_parameter")

    def _eps(self) -> float:
        p, k = self.noise_parameter, self.num_buckets
        return round_up(math.log1p(k * ((1.0 - p) / p)))

    def _masses(self) -> tuple[float, float, float]:
        p, k = self.noise_parameter, self.num_buckets
        b = p / k
        return 1.0 - p + b, b, p * ((k - 2) / k)

    def pure_eps(self):
        return self._eps()

    def approx_dp(self):
        return self._eps(), 0.0

    def pld(self, h, rounding):
        a, b, rest = self._masses()
        return P.from_pmfs((a, b, rest), (b, a, rest), h, rounding != "down", rounding == "mean")

    def rdp(self, orders):
        return R.randomized_response_rdp(self._eps(), math.log(self.noise_parameter)
                                         - math.log(self.num_buckets), np.asarray(orders))

    def to_dp_event(self, dp):
        return dp.RandomizedResponseDpEvent(noise_parameter=self.noise_parameter,
                                            num_buckets=self.num_buckets)


EVENTS.update({RandomizedResponse.__name__: RandomizedResponse})
