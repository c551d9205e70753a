"""The RDP backend: an upper bound on each event's Renyi divergence at each order
(docs/theory.md §3.3), by dispatch on the event's type; None where the event has no finite
curve (an atom at infinity: Poisson add/remove, an approximate-DP step). ``supports(event)``
says whether the backend knows the event (the events defined beside their mathematics register
where they are defined).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from . import event_profiles as EP
from . import rdp as R
from .events import (Event, Gaussian, KRRShuffledRound, Laplace, OracleShuffledRound,
                     PoissonSampledGaussian, PoissonSampledLaplace, PureDP, ShuffledRound,
                     ShuffledSGDPass)

__all__ = ["rdp", "supports"]


@functools.singledispatch
def rdp(event: Event, orders: np.ndarray) -> np.ndarray | None:
    """An upper bound on the event's Renyi divergence at each order (None: no curve).

    Parameters
    ----------
    event : Event
        The mechanism.
    orders : numpy.ndarray
        The Renyi orders (each > 1).
    """
    return None  # no RDP curve


def supports(event: Event) -> bool:
    """Whether the backend gives a Renyi curve for this kind of event (it may still be None for
    one event of it, e.g. a shuffled SGD pass with delta0 > 0)."""
    return rdp.dispatch(type(event)) is not rdp.dispatch(object)


def _dots_rdp(event: Event, orders) -> np.ndarray:
    """Renyi curve of the event's connect-the-dots pair (see rdp.profile_rdp), capped by its
    largest loss."""
    eps_max = EP.dots_eps_max(event)
    losses, masses, inf_mass = EP.dots_atoms(event)
    return np.minimum(R.atoms_rdp(losses, masses, inf_mass, orders), eps_max)


def _shuffled_round_rdp(event, orders):
    """The curve of the exact loss grid when the pair has few atoms, the curve of the
    connect-the-dots pair otherwise (cheap at any n); below eps0 = DOTS_RDP_EPS0_MAX both,
    and their minimum (each is an upper bound). ``pld_method="dots"`` takes the dots curve
    alone there (the cheap construction a query chooses when the exact one would cost
    too much, accounting/plan.py)."""
    small = EP.exact_rdp(event)
    curve = R.shuffled_rdp_of(event.n, event.eps0, R.check_orders(orders)) if small else None
    if event.eps0 <= EP.DOTS_RDP_EPS0_MAX:
        dots = _dots_rdp(event, orders)
        curve = dots if curve is None else np.minimum(curve, dots)
    if curve is None:  # the dots are not checked this far: the exact pair at any n
        curve = R.shuffled_rdp_of(event.n, event.eps0, R.check_orders(orders))
    return curve


rdp.register(ShuffledRound, _shuffled_round_rdp)


def _shuffled_sgdpass_rdp(event, orders):
    if event.delta0 != 0.0:
        return None  # an atom at infinity
    return rdp.dispatch(ShuffledRound)(event, orders)


rdp.register(ShuffledSGDPass, _shuffled_sgdpass_rdp)


rdp.register(KRRShuffledRound, _dots_rdp)
rdp.register(OracleShuffledRound, _dots_rdp)


def _sampled_rdp(event, orders):
    cap = EP.sampled_cap(event)
    if not math.isfinite(cap):
        return None
    losses, masses, inf_mass = EP.sampled_atoms(event)
    return np.minimum(R.atoms_rdp(losses, masses, inf_mass, orders), cap)


for _cls in EP.SAMPLED_ROUNDS:
    rdp.register(_cls, _sampled_rdp)


def _gaussian_rdp(event, orders):
    return R.gaussian_rdp(event.sigma, orders, event.sensitivity)


rdp.register(Gaussian, _gaussian_rdp)


def _laplace_rdp(event, orders):
    return R.laplace_rdp(event.scale, orders, event.sensitivity)


rdp.register(Laplace, _laplace_rdp)


def _pure_dp_rdp(event, orders):
    return R.pure_rdp(event.eps, orders)


rdp.register(PureDP, _pure_dp_rdp)


def _grid_rdp(event, direction: str, orders: np.ndarray) -> np.ndarray:
    losses, log_mass = EP.grid_rdp_atoms(event, direction)
    return np.array([special.logsumexp(log_mass + (a - 1.0) * losses) / (a - 1.0)
                     for a in orders])


def _poisson_sampled_gaussian_rdp(event, orders):
    """max(remove: the integer-order sum at ceil(order); add: its rounded-up grid)."""
    orders = np.asarray(orders, dtype=float)
    remove = EP.noise_of(event).rdp_remove(orders)
    return np.maximum(remove, _grid_rdp(event, "add", orders))


rdp.register(PoissonSampledGaussian, _poisson_sampled_gaussian_rdp)


def _poisson_sampled_laplace_rdp(event, orders):
    orders = np.asarray(orders, dtype=float)
    return np.maximum(_grid_rdp(event, "remove", orders), _grid_rdp(event, "add", orders))


rdp.register(PoissonSampledLaplace, _poisson_sampled_laplace_rdp)

