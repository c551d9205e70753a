"""The PLD backend: each event's privacy loss distribution on a grid of step h
(docs/theory.md §3.1-§3.2), by dispatch on the event's type. ``rounding`` is "up" (pessimistic),
"down" (optimistic) or "mean" (mean-preserving, GLW21); an event that cannot round
mean-preservingly returns its "up" grid for "mean" (the PLD records how it was rounded, and
``mean_grid(event)`` is False), and None where a rounding is unavailable (connect-the-dots
events have no optimistic grid). ``supports(event)`` says whether the backend knows the event. The events defined beside their
mathematics (accounting/pure.py, allocation.py, allocation_central.py) register here where
they are defined.
"""
from __future__ import annotations

import functools

from . import event_profiles as EP
from . import pld as P
from . import sampled as SM
from .events import (ApproxDP, Event, Gaussian, KRRShuffledRound, Laplace, OracleShuffledRound,
                     PairOfPmfs, PoissonSampledGaussian, PoissonSampledLaplace, PureDP,
                     ShuffledRound, ShuffledSGDPass)

__all__ = ["pld", "supports", "mean_grid"]


def _up(rounding: str) -> bool:
    return rounding != "down"


def _mean(rounding: str) -> bool:
    return rounding == "mean"


@functools.singledispatch
def pld(event: Event, h: float, rounding: str) -> P.PLD | None:
    """The event's privacy loss distribution on the grid of step h (None: unavailable).

    Parameters
    ----------
    event : Event
        The mechanism.
    h : float
        The grid step of the losses (> 0).
    rounding : {"up", "down", "mean"}
        Pessimistic, optimistic or mean-preserving rounding onto the grid.
    """
    raise TypeError(f"{type(event).__name__} has no PLD")


def supports(event: Event) -> bool:
    """Whether the backend builds a PLD for this kind of event."""
    return pld.dispatch(type(event)) is not pld.dispatch(object)


_ROUNDED_MEAN = (Gaussian, Laplace, PoissonSampledGaussian, PoissonSampledLaplace)


def mean_grid(event: Event) -> bool:
    """Whether ``pld(event, h, "mean")`` rounds mean-preservingly (GLW21: a composed gap
    ~ h sqrt(T)); False where it falls back to a round-up or an on-grid connect-the-dots grid
    (a certified gap ~ T h)."""
    return not isinstance(event, _ROUNDED_MEAN)


def _dots_pld(event: Event, h: float, rounding: str) -> P.PLD | None:
    """Connect-the-dots PLD (Doroshenko et al. 2022) of the event's profile on the grid: from
    above only (no round-down grid)."""
    if not _up(rounding):
        return None
    losses, masses, inf_mass = EP.dots_atoms(event)
    return P.symmetric_atoms(losses, masses, h, True, inf_mass, mean=_mean(rounding))


def _shuffled_round_pld(event, h, rounding):
    """FMT21 Thm 3.2 pair: every atom binned ("exact", upper and lower grids) or the dots."""
    if EP.pld_method(event) == "dots":
        return _dots_pld(event, h, rounding)
    q, qc, p, pc = P.general_split(event.eps0)
    return P.clone_pair(event.n, q, p, h, _up(rounding), mean=_mean(rounding), qc=qc, pc=pc)


pld.register(ShuffledRound, _shuffled_round_pld)


def _shuffled_sgdpass_pld(event, h, rounding):
    if event.delta0 == 0.0:
        return pld.dispatch(ShuffledRound)(event, h, rounding)
    return _dots_pld(event, h, rounding)


pld.register(ShuffledSGDPass, _shuffled_sgdpass_pld)


pld.register(KRRShuffledRound, _dots_pld)
pld.register(OracleShuffledRound, _dots_pld)


def _sampled_pld(event, h, rounding):
    if not _up(rounding):  # connect-the-dots bounds from above only: no round-down grid
        return None
    losses, masses, inf_mass = EP.sampled_atoms(event)
    return P.symmetric_atoms(losses, masses, h, True, inf_mass, mean=_mean(rounding))


for _cls in EP.SAMPLED_ROUNDS:
    pld.register(_cls, _sampled_pld)


def _gaussian_pld(event, h, rounding):  # "mean" falls back to the round-up grid
    return P.gaussian(event.sigma, event.sensitivity, h, _up(rounding))


pld.register(Gaussian, _gaussian_pld)


def _laplace_pld(event, h, rounding):  # "mean" falls back to the round-up grid
    return P.laplace(event.scale, event.sensitivity, h, _up(rounding))


pld.register(Laplace, _laplace_pld)


def _pure_dp_pld(event, h, rounding):
    return P.pure_dp(event.eps, h, _up(rounding), _mean(rounding))


pld.register(PureDP, _pure_dp_pld)


def _approx_dp_pld(event, h, rounding):
    return P.approx_dp(event.eps, event.delta, h, _up(rounding), _mean(rounding))


pld.register(ApproxDP, _approx_dp_pld)


def _pair_of_pmfs_pld(event, h, rounding):
    return P.from_pmfs(event.p, event.q, h, _up(rounding), _mean(rounding))


pld.register(PairOfPmfs, _pair_of_pmfs_pld)


def _poisson_pld(event, h, rounding):
    noise = EP.noise_of(event)
    if _up(rounding):  # "mean" takes the connect-the-dots grid too
        dirs = tuple(noise.dots_direction(d, h) for d in SM.DIRECTIONS)
    else:
        dirs = tuple(noise.lower_direction(d, h) for d in SM.DIRECTIONS)
    return P.PLD(h, _up(rounding), dirs)


pld.register(PoissonSampledGaussian, _poisson_pld)
pld.register(PoissonSampledLaplace, _poisson_pld)
