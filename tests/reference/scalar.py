"""Exact delta of the scalar randomizers' attack datasets, bracketed (docs/theory.md §2.11).

x + noise on [lo, hi], in noise units: lo = -a, hi = a, noise density f (Laplace or standard
normal). Datasets (x1, z, ..., z) vs (x1', z, ..., z) with z = lo (others at lo; at hi is the
mirror image): with Y_j ~ R_z and r = R_hi/R_lo (Laplace exp(|y + a| - |y - a|), Gaussian
exp(2 a y)), the density of the first dataset's multiset w.r.t. R_lo^n is (1/n) sum r(Y_j), so

    delta(hi, lo) = E[(sum_j (r(Y_j) - E))_+]/n,   delta(lo, hi) = E[(sum_j (1 - E r(Y_j)))_+]/n,

E = e^eps. The exact attack is the larger of the two. Each is computed on its own, independently
of the library's lattice code: one draw X = g(Y) is exactly clipped (above at (n - 1)(-x_min),
its excess added back; below at -(n - 1) top, which leaves (S)_+ unchanged), the clipped range
cut into K cells of width h whose mass and first moment are cdf differences (closed forms,
each side in its accurate form), and the n-fold law summed by one FFT:

* upper: each cell's mass split onto its two ends keeping its mean (X <=_cx X', so the sum's
  positive part can only grow);
* lower: each cell's mass at its lower end (every value only moves down).

The two differ by at most h P(S > 0); the FFT's rounding (~1e-15 of the mass) is far below.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

__all__ = ["attack_bracket", "exact_attack"]


def _lap_cdf_diff(c, y1, y2):
    """Pr[y1 <= Y < y2], Y ~ Lap(c, 1), each side in its accurate form (vectorised)."""
    y1, y2 = np.asarray(y1, float) - c, np.asarray(y2, float) - c
    left = 0.5 * (np.exp(np.minimum(y2, 0.0)) - np.exp(np.minimum(y1, 0.0)))
    right = 0.5 * (np.exp(-np.maximum(y1, 0.0)) - np.exp(-np.maximum(y2, 0.0)))
    return left + right  # the part below c plus the part above it


def _norm_cdf_diff(c, y1, y2):
    """Pr[y1 <= Y < y2], Y ~ N(c, 1), each side in its accurate form (vectorised)."""
    y1, y2 = np.asarray(y1, float) - c, np.asarray(y2, float) - c
    left = ndtr(np.minimum(y2, 0.0)) - ndtr(np.minimum(y1, 0.0))
    right = ndtr(-np.maximum(y1, 0.0)) - ndtr(-np.maximum(y2, 0.0))
    return left + right


class _Draw:
    """One draw's loss X = g(Y), Y ~ R_lo: cells of X as (mass, first moment) and its atoms."""

    def __init__(self, noise: str, a: float, e: float, orient: str):
        self.noise, self.a, self.e, self.orient = noise, a, e, orient
        self.diff = _lap_cdf_diff if noise == "laplace" else _norm_cdf_diff

    def x_of_r(self, r):
        return r - self.e if self.orient == "hi_lo" else 1.0 - self.e * r

    def r_of_x(self, x):
        return x + self.e if self.orient == "hi_lo" else (1.0 - x) / self.e

    def y_of_r(self, r):
        """The y with r(y) = r on the continuous part (Laplace: clamped to [-a, a])."""
        with np.errstate(divide="ignore"):
            lr = np.log(np.maximum(r, 0.0))
        y = 0.5 * lr if self.noise == "laplace" else lr / (2.0 * self.a)
        return np.clip(y, -self.a, self.a) if self.noise == "laplace" else y

    def range(self) -> tuple[float, float]:
        if self.noise == "laplace":
            r_lo, r_hi = math.exp(-2 * self.a), math.exp(2 * self.a)
        else:
            r_lo, r_hi = 0.0, math.inf
        xs = sorted([self.x_of_r(r_lo), self.x_of_r(r_hi)])
        return xs[0], xs[1]

    def moments(self, x1, x2):
        """(mass, first moment) of X on the continuous part with X in [x1, x2)."""
        ya, yb = self.y_of_r(self.r_of_x(x1)), self.y_of_r(self.r_of_x(x2))
        y1, y2 = np.minimum(ya, yb), np.maximum(ya, yb)
        mass = self.diff(-self.a, y1, y2)           # R_lo
        rmom = self.diff(self.a, y1, y2)            # E[r; cell] = R_hi's mass
        if self.noise == "laplace":                 # the atoms lie outside (-a, a)
            inside = (y2 > y1)
            mass, rmom = np.where(inside, mass, 0.0), np.where(inside, rmom, 0.0)
        first = rmom - self.e * mass if self.orient == "hi_lo" else mass - self.e * rmom
        return mass, first

    def atoms(self) -> list[tuple[float, float]]:
        """(value, mass) of Laplace's two atoms (y <= -a: r = e^-2a; y >= a: r = e^2a)."""
        if self.noise != "laplace":
            return []
        return [(self.x_of_r(math.exp(-2 * self.a)), 0.5),
                (self.x_of_r(math.exp(2 * self.a)), 0.5 * math.exp(-2 * self.a))]


def _excess(draw: _Draw, top: float) -> float:
    """E[(X - top)_+] for one draw."""
    x_min, x_max = draw.range()
    if top >= x_max:
        return 0.0
    m, t = draw.moments(np.array([top]), np.array([x_max if math.isfinite(x_max) else 1e300]))
    out = float(t[0] - top * m[0])
    for v, w in draw.atoms():
        if v > top:
            out += w * (v - top)
    if not math.isfinite(x_max) and draw.orient == "hi_lo":
        # X = r - E above 1e300: its mass is far below 1e-300 of anything here
        pass
    return max(out, 0.0)


def _one(noise: str, a: float, eps: float, n: int, orient: str, cells: int):
    """(lower, upper) of E[(sum of n draws)_+]/n for one orientation."""
    draw = _Draw(noise, a, math.exp(eps), orient)
    x_min, x_max = draw.range()
    if x_max <= 0.0:
        return 0.0, 0.0
    top = min(x_max, (n - 1) * -x_min) if x_min < 0.0 else x_max
    excess = _excess(draw, top)
    bot = max(x_min, -(n - 1) * top)
    h = (top - bot) / cells
    edges = bot + h * np.arange(cells + 1)
    m, t = draw.moments(edges[:-1], edges[1:])
    # below bot: raised to bot (exact); above top: at top, the excess added back (exact)
    m_below, t_below = draw.moments(np.array([x_min if math.isfinite(x_min) else -1e300]),
                                    np.array([bot]))
    m_above, _ = draw.moments(np.array([top]), np.array([x_max if math.isfinite(x_max)
                                                         else 1e300]))
    up = np.zeros(cells + 1)
    lo = np.zeros(cells + 1)
    frac = np.clip((t - m * edges[:-1]) / h, 0.0, m)   # mass moved to the upper end
    up[:-1] += m - frac
    up[1:] += frac
    lo[:-1] += m
    for pmf in (up, lo):
        pmf[0] += m_below[0]
        pmf[-1] += m_above[0]
    for v, w in draw.atoms():
        if v <= bot:
            up[0] += w
            lo[0] += w
        elif v >= top:
            up[-1] += w
            lo[-1] += w
        else:
            k = min(int((v - bot) // h), cells - 1)
            f = (v - edges[k]) / h
            up[k] += w * (1 - f)
            up[k + 1] += w * f
            lo[k] += w
    out = []
    size = 1 << int(math.ceil(math.log2(n * cells + 1)))
    j = np.arange(size)
    vals = np.maximum(n * bot + h * j, 0.0)
    for pmf in (lo, up):
        law = np.fft.irfft(np.fft.rfft(pmf, size) ** n, size)
        law = np.maximum(law[: n * cells + 1], 0.0)
        out.append(float(law @ vals[: n * cells + 1]) / n + excess)
    slack = 1e-12 * (abs(n * bot) + abs(n * top) + 1.0)
    return max(out[0] - slack, 0.0), out[1] + slack


def attack_bracket(noise: str, a: float, eps: float, n: int,
                   cells: int = 1 << 15) -> tuple[float, float]:
    """(lower, upper) bracket of the exact delta(eps) of the attack datasets (user 1 at the two
    ends, every other user at lo; the larger orientation), noise "laplace" or "gaussian",
    a = (hi - lo)/2 in noise scales, n >= 2."""
    both = [_one(noise, a, eps, n, o, cells) for o in ("hi_lo", "lo_hi")]
    return max(b[0] for b in both), max(b[1] for b in both)


def exact_attack(noise: str, a: float, eps: float, n: int) -> float:
    """The bracket's upper end (the exact value is within the bracket's width below it)."""
    return attack_bracket(noise, a, eps, n)[1]
