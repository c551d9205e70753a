"""Spherical-cap measures for PrivUnit2's shuffle structure (docs/theory.md §2.12).

PrivUnit2(u) has density p0/P_cap on the cap {v : <v, u> >= gamma} and (1 - p0)/(1 - P_cap) off
it, relative to the uniform law w on S^(d-1): a binary-support randomizer with b(v, u) =
[<v, u> >= gamma], a = P_cap and a1 = p0 (as the client's coin realises it). Cap measures are
not rational, so they are computed in mpmath (optional extra ``mpmath``) at two precisions
that must agree to 1e-30 relative: the rationals handed to the kernels are then far inside the
8-ulp input tolerance of their binomial weights (kernels/binomial.py, pmf_rel_err).

* ``cap_measure(d, gamma)`` = I_{1-gamma^2}((d-1)/2, 1/2) / 2 (t = <v, u> has (1-t^2) ~
  Beta((d-1)/2, 1/2) on each side).
* ``orthogonal_cap_bound(d, gamma)`` >= Pr[v in cap(u1) and in cap(u3)] for u3 orthogonal to u1,
  for the attack's third item (its t3 = P_cap minus this is then a lower value, which a lower
  bound may use): exact arcs for d = 2; for d >= 3, given <v, u1> = s >= gamma the component
  along u3 is sqrt(1 - s^2) times a coordinate of a uniform point of S^(d-2), so the
  conditional probability is at most the (d-1)-dimensional cap measure at
  gamma / sqrt(1 - gamma^2).
"""
from __future__ import annotations

from fractions import Fraction

from ..core.optional import require

__all__ = ["AGREE", "cap_measure", "orthogonal_cap_bound"]

AGREE = 1e-30  # the two precisions must agree to this relative difference
_DPS = (40, 60)


def _mp():
    return require("mpmath", "mpmath")


def _fraction(x) -> Fraction:
    """The exact rational value of an mpmath mpf."""
    man, exp = x.man_exp
    return Fraction(man) * (Fraction(2) ** exp)


def _cap(mp, d: int, gamma: float):
    if gamma >= 1.0:
        return mp.mpf(0)
    g = mp.mpf(gamma)
    return mp.betainc(mp.mpf(d - 1) / 2, mp.mpf(1) / 2, 0, 1 - g * g, regularized=True) / 2


def _two_precisions(fn) -> Fraction:
    mp = _mp()
    values = []
    for dps in _DPS:
        with mp.workdps(dps):
            values.append(fn(mp))
    lo, hi = values
    with mp.workdps(_DPS[1]):
        if abs(hi - lo) > AGREE * abs(hi):
            raise ArithmeticError(f"cap measure unstable across precisions ({lo} vs {hi})")
        return _fraction(+hi)


def cap_measure(d: int, gamma: float) -> Fraction:
    """Pr[<v, u> >= gamma] for v uniform on S^(d-1), gamma in [0, 1), as a rational within
    1e-30 relative of the exact value."""
    return _two_precisions(lambda mp: _cap(mp, d, gamma))


def orthogonal_cap_bound(d: int, gamma: float) -> Fraction:
    """An upper value of Pr[<v, u1> >= gamma, <v, u3> >= gamma] for orthogonal unit u1, u3
    (module docstring), raised by 1e-25 relative for the rounding of the evaluation."""
    def value(mp):
        if d == 2:  # arcs of half-angle acos(gamma), centres a quarter turn apart
            return max(mp.mpf(0), 2 * mp.acos(mp.mpf(gamma)) - mp.pi / 2) / (2 * mp.pi)
        g = mp.mpf(gamma)
        x = g / mp.sqrt(1 - g * g)
        if x >= 1:
            return mp.mpf(0)
        return _cap(mp, d, gamma) * _cap(mp, d - 1, x)
    v = _two_precisions(value)
    return v * (1 + Fraction(1, 10 ** 25))
