"""Renyi differential privacy: curves of the basic mechanisms and conversion (docs/theory.md §3.1).

Curves are arrays over a vector of orders alpha > 1; they add under composition. Every curve
here is an upper bound on the mechanism's Renyi divergence at each order.
"""
from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
from scipy import optimize

from ..core import validate as V
from .pld import clone_pair_grid, general_split, profile_atoms
from .rounding import round_up

__all__ = ["DEFAULT_ORDERS", "log_exp_excess", "check_orders", "clone_pair_rdp", "shuffled_rdp", "shuffled_rdp_of", "atoms_rdp",
           "profile_rdp", "gaussian_rdp", "laplace_rdp", "pure_rdp",
           "randomized_response_rdp", "cks_epsilon",
           "rdp_to_epsilon"]


DEFAULT_ORDERS = np.concatenate([1.0 + np.geomspace(1e-3, 0.5, 12), np.arange(2.0, 12.0, 0.5),
                                 np.geomspace(12.0, 1e4, 40)])


def check_orders(orders) -> np.ndarray:
    """Orders as a float array; each must be finite and > 1."""
    try:
        arr = np.atleast_1d(np.asarray(orders, dtype=float))
    except OverflowError:  # an integer >= 2^1024
        raise ValueError(f"orders must be finite numbers > 1, got {V.shown(orders)}") from None
    except (TypeError, ValueError):
        raise TypeError(f"orders must be a list of numbers > 1, got {V.shown(orders)}") from None
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ValueError(f"orders must be finite numbers > 1, got {V.shown(orders)}")
    return arr


@functools.lru_cache(maxsize=32)
def _clone_loss_atoms(n: int, q: float, p: float, h: float, tol: float, qc: float, pc: float):
    """(losses, log masses) of the pessimistic loss grid of the §2.1 pair; the windows'
    left-out mass sits at the largest possible loss log(p/pc)."""
    lo, pmf, out = clone_pair_grid(n, q, p, h, "up", tol, qc, pc)
    keep = pmf > 0
    losses = np.append((lo + np.flatnonzero(keep)) * h, math.log(p) - math.log(pc))
    with np.errstate(divide="ignore"):
        log_mass = np.log(np.append(pmf[keep], out)) + 1e-12  # round the masses up
    return losses, log_mass


def clone_pair_rdp(n: int, q: float, p: float, orders=DEFAULT_ORDERS, h: float = 1e-5,
                   tol: float = 1e-30, qc: float | None = None,
                   pc: float | None = None) -> np.ndarray:
    """D_alpha of the §2.1 pair (symmetric, so both directions), an upper bound per order.

    D_alpha = log E_P[e^((alpha-1) L)] / (alpha-1) over the pessimistic loss grid of step h
    (losses rounded up, so every term is rounded up); capped by log(p/pc), pc = 1 - p (pass
    qc = 1 - q and pc when they are known accurately).
    """
    orders = check_orders(orders)
    return _clone_pair_rdp(V.users(n), q, p, orders, h, tol, qc, pc)


def _clone_pair_rdp(n: int, q: float, p: float, orders: np.ndarray, h: float, tol: float,
                    qc: float | None, pc: float | None) -> np.ndarray:
    """clone_pair_rdp of validated n and orders."""
    qc = 1.0 - float(q) if qc is None else float(qc)
    pc = 1.0 - float(p) if pc is None else float(pc)
    losses, log_mass = _clone_loss_atoms(n, float(q), float(p), float(h), float(tol), qc, pc)
    curve = np.array([np.logaddexp.reduce(log_mass + (a - 1.0) * losses) / (a - 1.0)
                      for a in orders])
    return np.minimum(curve, math.log(p) - math.log(pc))


def shuffled_rdp(n: int, eps0: float, orders=DEFAULT_ORDERS) -> np.ndarray:
    """RDP of n shuffled eps0-LDP reports via the FMT21 Thm 3.2 pair (docs/theory.md §2.1, §3.1); the curve
    is capped by eps0 itself (log(p/(1-p)) = eps0 exactly)."""
    eps0 = V.positive_finite(eps0, "eps0")
    orders = check_orders(orders)
    return shuffled_rdp_of(V.users(n), eps0, orders)


def shuffled_rdp_of(n: int, eps0: float, orders: np.ndarray) -> np.ndarray:
    """shuffled_rdp of validated arguments: the RDP backend's (accounting/event_rdp.py), whose
    event checked n and eps0 when it was made.

    Parameters
    ----------
    n : int
        Users (validated).
    eps0 : float
        The local randomizer's eps (validated, > 0).
    orders : numpy.ndarray
        The Renyi orders (checked, each > 1).
    """
    q, qc, p, pc = general_split(eps0)
    h = max(1e-5, 2.0 * eps0 / 2 ** 24)  # the grid covers [-eps0, eps0]: at most 2^24 points
    return np.minimum(_clone_pair_rdp(n, q, p, orders, h, 1e-30, qc, pc), eps0)


def atoms_rdp(losses, masses, inf_mass: float, orders=DEFAULT_ORDERS) -> np.ndarray:
    """D_alpha = log(sum_j m_j e^((alpha-1) L_j)) / (alpha-1) of a symmetric pair given by its
    loss atoms (L_j, m_j) under P; +inf at every order when the infinity atom has mass > 0.
    Masses are rounded up by a relative 1e-12 (every term is then an upper bound)."""
    orders = check_orders(orders)
    if inf_mass > 0.0:
        return np.full(orders.size, math.inf)
    losses = np.asarray(losses, float)
    masses = np.asarray(masses, float)
    keep = masses > 0.0
    log_mass = np.log(masses[keep]) + 1e-12
    return np.array([np.logaddexp.reduce(log_mass + (a - 1.0) * losses[keep]) / (a - 1.0)
                     for a in orders])


def profile_rdp(delta_fn: Callable[[float], float], eps_max: float, orders=DEFAULT_ORDERS,
                points: int = 240) -> np.ndarray:
    """Renyi curve of the connect-the-dots PLD of a symmetric privacy profile (Doroshenko et
    al. 2022). Its hockey-stick curve lies above the true pair's at every eps (both directions),
    so the dots pair dominates the true one (Blackwell): by data processing its Renyi
    divergences upper-bound the true ones. Capped by eps_max (the pair is eps_max-DP)."""
    losses, masses, inf_mass = profile_atoms(delta_fn, eps_max, points)
    return np.minimum(atoms_rdp(losses, masses, inf_mass, orders), eps_max)


_EXCESS_TERMS = 1.0 / np.array([math.factorial(j) for j in range(2, 24)])


def log_exp_excess(x):
    """log(e^x - 1 - x) for real x != 0 (-inf at 0), without cancellation: e^x - 1 - x =
    sum_{j>=2} x^j / j! for |x| < 1 (a series, log x^2 taken apart so tiny x do not underflow),
    x + log1p(-(1 + x) e^-x) for x >= 1, log((-x - 1) + e^x) (two non-negative terms) for
    x <= -1. Relative error a few ulps."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = np.abs(x) < 1.0
    xs = x[small]
    poly = np.zeros_like(xs)
    for c in _EXCESS_TERMS[::-1]:  # Horner: 1/2 + x/6 + x^2/24 + ... (>= 0.36 on |x| < 1)
        poly = poly * xs + c
    with np.errstate(divide="ignore"):
        out[small] = 2.0 * np.log(np.abs(xs)) + np.log(poly)
    big = x >= 1.0
    out[big] = x[big] + np.log1p(-(1.0 + x[big]) * np.exp(-x[big]))
    neg = x <= -1.0
    out[neg] = np.log((-x[neg] - 1.0) + np.exp(x[neg]))
    return out


def gaussian_rdp(sigma: float, orders=DEFAULT_ORDERS, sensitivity: float = 1.0) -> np.ndarray:
    """alpha s^2 / (2 sigma^2), rounded up."""
    sigma = V.positive_finite(sigma, "sigma")
    # (s / sigma)^2, not s^2 / sigma^2: sigma = 1e300 must give ~0, not an overflow
    return round_up(check_orders(orders) * (sensitivity / sigma) ** 2 / 2.0)


def laplace_rdp(scale: float, orders=DEFAULT_ORDERS, sensitivity: float = 1.0) -> np.ndarray:
    """log(a/(2a-1) e^((a-1)r) + (a-1)/(2a-1) e^(-a r)) / (a-1), r = |s|/b (docs/theory.md §4).

    The sum inside the log is 1 + f with f = (a E((a-1)r) + (a-1) E(-a r)) / (2a-1),
    E(x) = e^x - 1 - x >= 0 (the first-order terms a(a-1)r cancel exactly), so f is a sum of
    non-negative terms, formed in log space; D = log1p(f)/(a-1) = logaddexp(0, log f)/(a-1).
    No cancellation at any (a, r) (f ~ a(a-1)r^2/2 for small r); rounded up.
    """
    scale = V.positive_finite(scale, "scale")
    a = check_orders(orders)
    r = abs(float(sensitivity)) / scale
    if r == 0.0:
        return np.zeros(a.size)
    am1 = a - 1.0
    log_f = np.logaddexp(np.log(a) + log_exp_excess(am1 * r),
                         np.log(am1) + log_exp_excess(-a * r)) - np.log(2.0 * a - 1.0)
    return round_up(np.logaddexp(0.0, log_f) / am1)


def pure_rdp(eps: float, orders=DEFAULT_ORDERS) -> np.ndarray:
    """RDP of randomized response with parameter eps, which dominates every eps-DP mechanism:
    log((e^(a eps) + e^((1-a) eps)) / (1 + e^eps)) / (a - 1) (:func:`randomized_response_rdp`
    with b = 1 / (1 + e^eps))."""
    eps = V.positive_finite(eps, "eps")
    return randomized_response_rdp(eps, -float(np.logaddexp(0.0, eps)), orders)


def randomized_response_rdp(eps: float, log_b: float, orders=DEFAULT_ORDERS) -> np.ndarray:
    """RDP of a symmetric pair with losses +-eps on masses b e^eps and b, loss 0 on the rest
    (randomized response over k buckets: b = p / k, docs/theory.md §3.4):
    D_a = log(b (e^(a eps) + e^((1-a) eps)) + 1 - b (1 + e^eps)) / (a - 1).

    The argument of the log is 1 + b f, f = (e^(a eps) - 1)(1 - e^(-(a-1) eps)) (a product of
    positive factors: no cancellation at small eps or a near 1), formed in log space and
    rounded up: D = logaddexp(0, log b + log f) / (a - 1), at most eps. Increasing in eps and
    b, so an eps rounded up gives an upper bound."""
    a = check_orders(orders)
    am1 = a - 1.0
    log_f = log_b + _log_expm1(a * eps) + np.log(-np.expm1(-am1 * eps))
    return round_up(np.minimum(np.logaddexp(0.0, log_f) / am1, eps))


def _log_expm1(y):
    """log(e^y - 1) for y > 0: y + log(1 - e^-y), accurate at every y."""
    y = np.asarray(y, dtype=float)
    return y + np.log(-np.expm1(-y))


def cks_epsilon(alpha, rdp, delta: float):
    """CKS20 Prop. 12: rdp + log((a-1)/a) - (log delta + log a)/(a-1), floored at 0, rounded
    up: the terms have both signs, so the float sum's error is bounded by a few ulps of the sum
    of their magnitudes, and that much is added."""
    alpha = np.asarray(alpha, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    t1 = np.log1p(-1.0 / alpha)
    t2 = (math.log(delta) + np.log(alpha)) / (alpha - 1)
    value = rdp + t1 - t2
    slack = 8.0 * 2.0 ** -52 * (np.abs(rdp) + np.abs(t1) + np.abs(t2))
    return np.maximum(0.0, round_up(value + slack))


def rdp_to_epsilon(orders, rdp, delta: float,
                   rdp_fn: Callable[[float], float] | None = None) -> tuple[float, float]:
    """(eps, best order): CKS20 minimised over the grid, then refined by a scalar search on
    rdp_fn (any order gives a valid bound, so refinement only tightens). Every CKS20 value is
    rounded up (:func:`cks_epsilon`), so the minimum is too."""
    delta = V.probability_open(delta, "delta")
    orders = check_orders(orders)
    vals = cks_epsilon(orders, np.asarray(rdp, dtype=float), delta)
    i = int(np.argmin(vals))
    best, best_a = float(vals[i]), float(orders[i])
    if rdp_fn is not None and orders.size > 2:
        lo = float(orders[max(i - 1, 0)])
        hi = float(orders[min(i + 1, orders.size - 1)])
        res = optimize.minimize_scalar(lambda a: float(cks_epsilon(a, rdp_fn(a), delta)),
                                       bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-6 * hi})
        if res.success and res.fun < best:
            best, best_a = float(cks_epsilon(res.x, rdp_fn(res.x), delta)), float(res.x)
    return best, best_a
