"""Poisson-subsampled additive-noise mechanisms (Gaussian, Laplace) under add/remove neighbours:
their exact privacy profile, PLD grids and Renyi curves (docs/theory.md §3.6).

Each record is included with probability q, then noise of scale s (sigma or b, in units of the
sensitivity) is added to the sum. With mu0 the noise law and mu1 the same law shifted by 1,
the two directions of the add/remove relation are the pairs

    remove: P = (1 - q) mu0 + q mu1  against  Q = mu0
    add:    P = mu0                  against  Q = (1 - q) mu0 + q mu1

(dp_accounting's ``pmf_remove`` and ``pmf_add``). The likelihood ratio r(x) = mu1(x)/mu0(x) is
non-decreasing in x for both noises, so the privacy loss is monotone in x, every set
{loss > eps} is a half-line {x > t} (remove) or {x < t} (add), and

    delta_dir(eps) = P(set) - e^eps Q(set)

is a difference of two noise tails, read in log space. The threshold solves
1 - q + q r(t) = e^eps (remove) or e^-eps (add): log c = log((e^eps - (1 - q))/q), formed
without cancellation on either side of eps = 0.

* ``pld(h, "up")``: the connect-the-dots PLD of each direction (DGKKM22) from delta at every
  grid loss, each value rounded up: its profile is the lower convex hull of points above a
  convex profile, hence above it (a dominating pair). "mean" returns the same grid.
* ``pld(h, "down")``: each direction's balanced lower grid (accounting/lower_grid.py): a
  post-processing of the pair with its losses rounded down, tails dropped, so every composition
  of it is a proven lower bound (the lower bracket), without an h-per-step drift.
* ``rdp(orders)``: the larger of the two directions' Renyi divergences, each an upper bound:
  the Gaussian's remove direction by the integer-order sum of MTZ19
  (at ceil(alpha): D_alpha is non-decreasing in alpha), every other direction (bounded losses)
  from its survival function rounded up onto the grid.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..core.numerics import SUBNORMAL_ULP
from ..core.numerics import UNIT_ROUNDOFF as _U
from . import lower_grid as LG
from . import pld as P

__all__ = ["TAIL", "SampledNoise", "GaussianNoise", "LaplaceNoise", "DIRECTIONS"]

TAIL = 1e-30  # mass of each noise tail left out of the loss range (moved pessimistically)
DIRECTIONS = ("remove", "add")


def _log_c(eps: np.ndarray, q: float) -> np.ndarray:
    """log((e^eps - (1 - q)) / q), -inf where e^eps <= 1 - q; no cancellation: for eps > 0 it is
    eps + log1p(-(1-q) e^-eps), else log(1-q) + log(expm1(eps - log(1-q)))."""
    log1mq = math.log1p(-q)
    eps = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        pos = eps + np.log1p(-(1.0 - q) * np.exp(-np.maximum(eps, 0.0)))
        neg = log1mq + np.log(np.expm1(np.minimum(eps, 0.0) - log1mq))
        out = np.where(eps > 0.0, pos, neg) - math.log(q)
    return np.where(eps > log1mq, out, -np.inf)


class SampledNoise:
    """One noise family, Poisson-subsampled with probability q, scale s (per unit sensitivity).

    Subclasses give the noise's log tails at t - shift and the thresholds t(log c) of the
    sets {r > c} = {x > t} and {r < c} = {x < t} (t = -inf: every x, +inf: none)."""

    def __init__(self, scale: float, q: float):
        self.s = float(scale)
        self.q = float(q)

    # -- the noise ------------------------------------------------------------------------------
    def log_sf(self, t: np.ndarray, shift: float) -> np.ndarray:
        raise NotImplementedError

    def log_cdf(self, t: np.ndarray, shift: float) -> np.ndarray:
        raise NotImplementedError

    def t_upper(self, log_c: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def t_lower(self, log_c: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def log_ratio(self, x: np.ndarray) -> np.ndarray:
        """log r(x) = log(mu1(x) / mu0(x))."""
        raise NotImplementedError

    def x_range(self) -> tuple[float, float]:
        """x outside which each component has at most TAIL of its mass."""
        raise NotImplementedError

    # -- the two directions -----------------------------------------------------------------------
    def loss(self, direction: str, x: np.ndarray) -> np.ndarray:
        lr = np.logaddexp(math.log1p(-self.q), math.log(self.q) + self.log_ratio(x))
        return lr if direction == "remove" else -lr

    def loss_range(self, direction: str) -> tuple[float, float]:
        lo, hi = self.x_range()
        ends = self.loss(direction, np.array([lo, hi]))
        return float(ends.min()), float(ends.max())

    def _logs(self, direction: str, eps: np.ndarray):
        """(log P(set), log Q(set), log P(complement)) of set = {loss > eps}."""
        q, log1mq, logq = self.q, math.log1p(-self.q), math.log(self.q)
        with np.errstate(divide="ignore", invalid="ignore"):
            if direction == "remove":
                t = self.t_upper(_log_c(eps, q))
                s0, s1 = self.log_sf(t, 0.0), self.log_sf(t, 1.0)
                log_p = np.logaddexp(log1mq + s0, logq + s1)
                log_q = s0
                c0, c1 = self.log_cdf(t, 0.0), self.log_cdf(t, 1.0)
                log_pc = np.logaddexp(log1mq + c0, logq + c1)
            else:
                t = self.t_lower(_log_c(-np.asarray(eps, float), q))
                c0, c1 = self.log_cdf(t, 0.0), self.log_cdf(t, 1.0)
                log_p = c0
                log_q = np.logaddexp(log1mq + c0, logq + c1)
                log_pc = self.log_sf(t, 0.0)
        return log_p, log_q, log_pc

    def delta(self, direction: str, eps, upper: bool = True) -> np.ndarray:
        """H_{e^eps}(P || Q) of the direction, rounded up (or down): A - e^eps B with A, B the
        tails, each within a relative 64 u (1 + |log|) of its value (log_ndtr / log1p are
        accurate to a few ulps; the threshold's rounding moves P(set) - e^eps Q(set) only to
        second order, as the set is the maximiser)."""
        eps = np.atleast_1d(np.asarray(eps, dtype=float))
        log_p, log_q, _ = self._logs(direction, eps)
        log_b = eps + log_q
        with np.errstate(over="ignore", invalid="ignore"):
            big_a = np.exp(log_p)
            diff = np.where(log_b < log_p, big_a * -np.expm1(log_b - log_p), 0.0)
            size = big_a + np.exp(np.minimum(log_b, 0.0))
        rel = 64.0 * _U * (1.0 + np.abs(np.nan_to_num(log_p, neginf=0.0))
                           + np.abs(np.nan_to_num(log_b, neginf=0.0)) + np.abs(eps))
        if not upper:
            return np.clip(np.nan_to_num(diff - rel * size, nan=0.0), 0.0, 1.0)
        out = np.clip(np.nan_to_num(diff + rel * size, nan=1.0), 0.0, 1.0)
        # a non-empty set has loss > eps throughout, so delta > 0: an underflow is reported as
        # the smallest double (only an empty set, log P(set) = -inf, proves delta = 0)
        return np.where(log_p > -np.inf, np.maximum(out, SUBNORMAL_ULP), out)

    def survival(self, direction: str, eps, upper: bool) -> np.ndarray:
        """P(loss > eps) of the direction, rounded up (or down), accurate on both sides of the
        median: where it exceeds 1/2 it is 1 - P(loss <= eps), the complement read directly."""
        eps = np.atleast_1d(np.asarray(eps, dtype=float))
        log_p, _, log_pc = self._logs(direction, eps)
        rel = 64.0 * _U * (1.0 + np.abs(np.nan_to_num(log_p, neginf=0.0)))
        relc = 64.0 * _U * (1.0 + np.abs(np.nan_to_num(log_pc, neginf=0.0)))
        sign = 1.0 if upper else -1.0
        with np.errstate(over="ignore"):
            direct = np.exp(log_p) * (1.0 + sign * rel)
            comp = 1.0 - np.exp(log_pc) * (1.0 - sign * relc) + sign * _U
        out = np.where(log_p > math.log(0.5), comp, direct)
        return np.clip(out, 0.0, 1.0)

    # -- grids ------------------------------------------------------------------------------------
    def _grid(self, direction: str, h: float) -> np.ndarray:
        lo, hi = self.loss_range(direction)
        points = (hi - lo) / h + 3.0
        if points > P.ALLOC_CAP:
            raise P.GridTooLarge(points, P.ALLOC_CAP, "the subsampled mechanism's PLD")
        return np.arange(math.floor(lo / h) - 1, math.ceil(hi / h) + 2, dtype=np.int64)

    def dots_direction(self, direction: str, h: float) -> P.Direction:
        """Connect-the-dots (pessimistic) grid of one direction: delta at every grid loss,
        rounded up, and the PLD whose profile is their lower convex hull."""
        idx = self._grid(direction, h)
        deltas = self.delta(direction, idx * h, upper=True)
        # a round-up grid would move the mass below the first point (lower estimates use it)
        below = 1.0 - float(self.survival(direction, idx[:1] * h, upper=True)[0])
        return P.dots_direction(idx, deltas, h, pushed=max(below, 0.0))

    def lower_direction(self, direction: str, h: float) -> P.Direction:
        """Balanced lower grid of one direction (accounting/lower_grid.py): a post-processing
        of the pair on the grid, its losses rounded down, from S and D bounded at every point."""
        idx = self._grid(direction, h)
        losses = idx * h
        return LG.balanced_direction(idx, self.survival(direction, losses, False),
                                     self.survival(direction, losses, True),
                                     self.delta(direction, losses, False),
                                     self.delta(direction, losses, True), h)

    def cells_direction(self, direction: str, h: float, upper: bool,
                        bounded_top: bool = False) -> P.Direction:
        """The loss law rounded to the grid from bounds on its survival function S: up, the
        mass S(l_(i-1)) - S(l_i) sits at l_i with S rounded up (stochastically above the true
        law); down, at l_(i-1) with S rounded down. Up: the mass below the grid joins its first
        point and the mass above it the infinity atom (or, with bounded_top, the last point,
        when the grid reaches the largest loss); down: both are dropped."""
        idx = self._grid(direction, h)
        surv = np.minimum.accumulate(self.survival(direction, idx * h, upper))
        cells = np.maximum(surv[:-1] - surv[1:], 0.0)
        if upper:
            pmf = np.concatenate([[1.0 - surv[0]], cells])
            pmf[0] = max(pmf[0], 0.0)
            top = float(surv[-1])
            if bounded_top:
                pmf[-1] += top
                top = 0.0
            return P.Direction(int(idx[0]), pmf, top, pushed=float(1.0 - surv[0]) + top)
        return P.Direction(int(idx[0]), cells, 0.0)


class GaussianNoise(SampledNoise):
    """N(0, s^2) against N(1, s^2): r(x) = exp((x - 1/2) / s^2)."""

    def log_sf(self, t, shift):
        return special.log_ndtr(-(t - shift) / self.s)

    def log_cdf(self, t, shift):
        return special.log_ndtr((t - shift) / self.s)

    def t_upper(self, log_c):
        return 0.5 + self.s * self.s * log_c

    t_lower = t_upper

    def log_ratio(self, x):
        return (x - 0.5) / (self.s * self.s)

    def x_range(self):
        z = -float(special.ndtri(TAIL))
        return -z * self.s, 1.0 + z * self.s

    def rdp_remove(self, orders: np.ndarray) -> np.ndarray:
        """D_alpha((1-q) mu0 + q mu1 || mu0) at integer alpha = ceil(order) (Mironov, Talwar,
        Zhang 2019): log sum_k C(a,k) (1-q)^(a-k) q^k e^((k^2-k)/(2 s^2)) / (a-1), each term
        positive, summed in log space and rounded up. D_alpha is non-decreasing in alpha, so
        the value at ceil(order) bounds the one at the order."""
        out = np.empty(orders.size)
        log1mq, logq = math.log1p(-self.q), math.log(self.q)
        for i, order in enumerate(orders):
            a = float(math.ceil(order)) if order >= 2.0 else 2.0
            k = np.arange(int(a) + 1, dtype=float)
            log_binom = special.gammaln(a + 1) - special.gammaln(k + 1) - special.gammaln(a - k + 1)
            terms = log_binom + (a - k) * log1mq + k * logq + (k * k - k) / (2.0 * self.s * self.s)
            total = float(special.logsumexp(terms))
            slack = 1e-12 * (1.0 + float(np.max(np.abs(terms))))
            out[i] = (total + slack) / (a - 1.0)
        return np.maximum(out, 0.0)


class LaplaceNoise(SampledNoise):
    """Laplace(0, b) against Laplace(1, b): log r(x) = (|x| - |x - 1|) / b, in [-1/b, 1/b]."""

    def _log_sf0(self, y):
        y = np.asarray(y, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            right = -y / self.s - math.log(2.0)
            left = np.log1p(-0.5 * np.exp(np.minimum(y, 0.0) / self.s))
        return np.where(y >= 0.0, right, left)

    def log_sf(self, t, shift):
        return self._log_sf0(np.asarray(t, float) - shift)

    def log_cdf(self, t, shift):
        return self._log_sf0(shift - np.asarray(t, float))

    def _t(self, log_c, lower: bool):
        b = self.s
        t = np.clip((1.0 + b * np.asarray(log_c, float)) / 2.0, 0.0, 1.0)
        if lower:  # {r < c}: empty for log c <= -1/b, everything for log c > 1/b
            return np.where(log_c * b <= -1.0, -np.inf, np.where(log_c * b > 1.0, np.inf, t))
        # {r > c}: everything for log c < -1/b, empty for log c >= 1/b
        return np.where(log_c * b < -1.0, -np.inf, np.where(log_c * b >= 1.0, np.inf, t))

    def t_upper(self, log_c):
        return self._t(log_c, False)

    def t_lower(self, log_c):
        return self._t(log_c, True)

    def log_ratio(self, x):
        x = np.asarray(x, dtype=float)
        return (np.abs(x) - np.abs(x - 1.0)) / self.s

    def x_range(self):
        return -1.0, 2.0  # the loss is constant outside [0, 1]
