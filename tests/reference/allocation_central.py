"""mpmath references for central mechanisms under random allocation (docs/theory.md §3.8).

One record in one of T steps (or k of T); step pair P_t = N(1, s^2) or Laplace(1, b) against
Q_t = the same at 0. With Z_t = dP_t/dQ_t (i.i.d. under Q, E Z = 1) the epoch's likelihood
ratio is S = (1/T) sum_t Z_t (k = 1) or the mean over k-subsets of the products of their Z_t;
delta_remove(eps) = E_Q[(S - e^eps)_+] and delta_add(eps) = E_Q[(1 - e^eps S)_+].

The last Z is integrated in closed form (the Gaussian: a lognormal call/put price, the Laplace:
atoms plus an integral), the others by mpmath quadrature for T <= 2; the 2-D integrals (T = 3,
2 of 3) by a dense float64 Gauss-Legendre product rule (checked against mp.quad in 2-D, which
takes twenty minutes: 0.156615725 at sigma 1, eps 0.3, remove; 0.315715709 for 2 of 3 at eps
0.5). Written from these formulas,
sharing nothing with the library.
"""
import math

import mpmath as mp
import numpy as np
from scipy import special

__all__ = ["gaussian_delta", "gaussian_k_of_t_delta", "laplace_delta"]

X_RANGE = [-14, -6, -2, 0, 2, 6, 14]  # N(0, 1) outside +-14 has mass < 1e-44


def _dense_rule(width=0.5, points=16):
    """Composite Gauss-Legendre nodes and N(0, 1)-weighted weights on [-14, 14] (panels of
    `width`): float64, for the 2-D integrals (mp.quad in 2-D takes twenty minutes)."""
    x, w = np.polynomial.legendre.leggauss(points)
    edges = np.arange(-14.0, 14.0 + width / 2, width)
    a, b = edges[:-1, None], edges[1:, None]
    nodes = (a + (b - a) / 2 * (x + 1)).ravel()
    weights = ((b - a) / 2 * w).ravel() * np.exp(-nodes ** 2 / 2) / math.sqrt(2 * math.pi)
    return nodes, weights


def _call(c, strike):
    """float64 lognormal call E[(Z - strike)_+] (vectorised; strike <= 0: 1 - strike)."""
    pos = strike > 0
    k = np.where(pos, strike, 1.0)
    d2 = (-np.log(k) - c * c / 2) / c
    return np.where(pos, special.ndtr(d2 + c) - k * special.ndtr(d2), 1.0 - strike)


def _put(c, strike):
    pos = strike > 0
    k = np.where(pos, strike, 1.0)
    d2 = (-np.log(k) - c * c / 2) / c
    return np.where(pos, k * special.ndtr(-d2) - special.ndtr(-d2 - c), 0.0)


def _lognormal_call(c, strike):
    """E[(Z - strike)_+], Z = exp(c X - c^2/2), X ~ N(0, 1)."""
    if strike <= 0:
        return 1 - strike
    d2 = (-mp.log(strike) - c * c / 2) / c
    return mp.ncdf(d2 + c) - strike * mp.ncdf(d2)


def _lognormal_put(c, strike):
    """E[(strike - Z)_+]."""
    if strike <= 0:
        return mp.mpf(0)
    d2 = (-mp.log(strike) - c * c / 2) / c
    return strike * mp.ncdf(-d2) - mp.ncdf(-d2 - c)


def gaussian_delta(sigma, steps, eps, direction="remove", dps=20):
    """delta of one allocation of a record to one of `steps` (1..3) Gaussian steps."""
    with mp.workdps(dps):
        c = 1 / mp.mpf(sigma)
        e = mp.e ** mp.mpf(eps)
        t = mp.mpf(steps)

        def z(x):
            return mp.exp(c * x - c * c / 2)

        def inner(a):  # a = (1/T) sum of the first T - 1 ratios
            if direction == "remove":
                return _lognormal_call(c, t * (e - a)) / t
            return e / t * _lognormal_put(c, t * (1 / e - a))

        if steps == 1:
            return float(inner(mp.mpf(0)))
        if steps == 2:
            return float(mp.quad(lambda x: mp.npdf(x) * inner(z(x) / t), X_RANGE))
    return _gaussian_delta_3(float(sigma), float(eps), direction)


def _gaussian_delta_3(sigma, eps, direction):
    """T = 3 in float64: the product rule over the first two ratios, the third in closed form
    (accurate to ~1e-13)."""
    c = 1.0 / sigma
    e = math.exp(eps)
    nodes, weights = _dense_rule()
    zs = np.exp(c * nodes - c * c / 2)
    a = (zs[:, None] + zs[None, :]) / 3.0
    if direction == "remove":
        inner = _call(c, 3.0 * (e - a)) / 3.0
    else:
        inner = e / 3.0 * _put(c, 3.0 * (1.0 / e - a))
    return float(weights @ inner @ weights)


def gaussian_k_of_t_delta(sigma, eps, direction="remove"):
    """delta of a record in 2 of 3 Gaussian steps: S = (Z1 Z2 + Z1 Z3 + Z2 Z3) / 3, linear in
    Z3 given Z1, Z2: S = Z1 Z2 / 3 + Z3 (Z1 + Z2) / 3 (float64 product rule, as T = 3)."""
    c = 1.0 / sigma
    e = math.exp(eps)
    nodes, weights = _dense_rule()
    zs = np.exp(c * nodes - c * c / 2)
    prod = zs[:, None] * zs[None, :] / 3.0
    slope = (zs[:, None] + zs[None, :]) / 3.0
    if direction == "remove":
        inner = slope * _call(c, (e - prod) / slope)
    else:
        inner = e * slope * _put(c, (1.0 / e - prod) / slope)
    return float(weights @ inner @ weights)


def _laplace_parts(b):
    """The law of Z for Laplace(b): [(mass, value)] atoms and the continuous part's
    (density in x on (0, 1), value(x))."""
    a = 1 / b
    atoms = [(mp.mpf(1) / 2, mp.e ** -a), (mp.e ** -a / 2, mp.e ** a)]
    return atoms, (lambda x: mp.exp(-x / b) / (2 * b)), (lambda x: mp.exp((2 * x - 1) / b))


def _laplace_expect(b, g):
    """E[g(Z)] for Laplace(b)'s Z, g piecewise smooth (breakpoints found by the quadrature's
    splitting at 1/2)."""
    atoms, dens, value = _laplace_parts(b)
    total = sum(m * g(v) for m, v in atoms)
    return total + mp.quad(lambda x: dens(x) * g(value(x)), [0, mp.mpf(1) / 4, mp.mpf(1) / 2,
                                                             mp.mpf(3) / 4, 1])


def laplace_delta(b, steps, eps, direction="remove", dps=20):
    """delta of one allocation of a record to one of `steps` (1 or 2) Laplace steps; the kink
    of (.)_+ is located and the integral split there."""
    with mp.workdps(dps):
        b = mp.mpf(b)
        e = mp.e ** mp.mpf(eps)
        t = mp.mpf(steps)
        atoms, dens, value = _laplace_parts(b)

        def inner(a):  # E[phi(a + Z/T)] with the kink at Z = T (e - a) or T (1/e - a)
            kink = t * ((e if direction == "remove" else 1 / e) - a)
            if direction == "remove":
                def g(v):
                    return max(a + v / t - e, 0)
            else:
                def g(v):
                    return max(1 - e * (a + v / t), 0)
            total = sum(m * g(v) for m, v in atoms)
            pts = [mp.mpf(0), mp.mpf(1)]
            if kink > 0:
                xk = (1 + b * mp.log(kink)) / 2
                if 0 < xk < 1:
                    pts = [mp.mpf(0), xk, mp.mpf(1)]
            return total + mp.quad(lambda x: dens(x) * g(value(x)), pts)

        if steps == 1:
            return float(inner(mp.mpf(0)))
        atoms_outer = sum(m * inner(v / t) for m, v in atoms)
        return float(atoms_outer + mp.quad(lambda x: dens(x) * inner(value(x) / t),
                                           [0, mp.mpf(1) / 2, 1]))
