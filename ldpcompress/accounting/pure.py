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

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special

from ..core import validate as V
from ..core.numerics import EXP_MAX, UNIT_ROUNDOFF
from .events import EVENTS, Event, Laplace
from . import event_pld as EPLD
from . import event_rdp as ERDP
from . import pld as P
from . import rdp as R
from .interop import dp_event_of
from .kov import approx_dp
from .rounding import fraction_up, round_up

__all__ = ["RandomizedResponse", "composed_eps", "pure_epsilon", "pure_delta", "rr_eps",
           "rr_masses", "pure_eps", "supports"]

MAX_BUCKETS = 2 ** 53  # k exactly representable as a float


def composed_eps(pairs) -> float | None:
    """E = sum of times x eps over (event, times) pairs, summed exactly and rounded up to a
    float (four Laplace events of eps 1 give exactly 4); None when an event is not
    pure (its ``pure_eps()`` is None)."""
    total = Fraction(0)
    for event, times in pairs:
        eps = pure_eps(event)
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
        if not _rr_eps(p, k) <= EXP_MAX:
            raise ValueError(f"noise_parameter = {p!r} with num_buckets = {k} gives eps = "
                             f"log(1 + k (1 - p) / p) > {EXP_MAX:g}: use a larger noise_parameter")


EVENTS.update({RandomizedResponse.__name__: RandomizedResponse})


def _rr_eps(p: float, k: int) -> float:
    return round_up(math.log1p(k * ((1.0 - p) / p)))


def rr_eps(event: RandomizedResponse) -> float:
    """eps = log(1 + k (1 - p) / p) of randomized response, rounded up."""
    return _rr_eps(event.noise_parameter, event.num_buckets)


def rr_masses(event: RandomizedResponse) -> tuple[float, float, float]:
    """(a, b, rest) of the pair (a, b, rest) vs (b, a, rest): a = 1 - p + p/k, b = p/k."""
    p, k = event.noise_parameter, event.num_buckets
    b = p / k
    return 1.0 - p + b, b, p * ((k - 2) / k)


# -- the pure backend: each event's eps when it is pure (eps, 0)-DP -------------------------------

@functools.singledispatch
def pure_eps(event: Event) -> float | Fraction | None:
    """eps (a float rounded up, or an exact rational) when the event is pure (eps, 0)-DP, else
    None (``composed_eps`` sums them exactly): by default from its KOV pair (accounting/kov.py).

    Parameters
    ----------
    event : Event
        The mechanism.
    """
    pair = approx_dp(event)
    return pair[0] if pair is not None and pair[1] == 0.0 else None


def supports(event: Event) -> bool:
    """Whether the event is pure (eps, 0)-DP."""
    return pure_eps(event) is not None


def _laplace_pure_eps(event):
    """sensitivity / scale (the largest privacy loss) as an exact rational."""
    return Fraction(event.sensitivity) / Fraction(event.scale)


pure_eps.register(Laplace, _laplace_pure_eps)


def _randomized_response_pure_eps(event):
    return rr_eps(event)


pure_eps.register(RandomizedResponse, _randomized_response_pure_eps)


def _randomized_response_approx_dp(event):
    return rr_eps(event), 0.0


approx_dp.register(RandomizedResponse, _randomized_response_approx_dp)  # the KOV backend's entry for the event defined here


def _randomized_response_pld(event, h, rounding):
    a, b, rest = rr_masses(event)
    return P.from_pmfs((a, b, rest), (b, a, rest), h, rounding != "down", rounding == "mean")


EPLD.pld.register(RandomizedResponse, _randomized_response_pld)


def _randomized_response_rdp(event, orders):
    return R.randomized_response_rdp(rr_eps(event), math.log(event.noise_parameter)
                                     - math.log(event.num_buckets), np.asarray(orders))


ERDP.rdp.register(RandomizedResponse, _randomized_response_rdp)


def _randomized_response_dp_event_of(event, dp):
    return dp.RandomizedResponseDpEvent(noise_parameter=event.noise_parameter,
                                        num_buckets=event.num_buckets)


dp_event_of.register(RandomizedResponse, _randomized_response_dp_event_of)

