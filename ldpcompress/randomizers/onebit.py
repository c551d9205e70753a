"""Duchi et al.'s one-bit sphere randomizer: the mean-estimation baseline (docs/theory.md §7).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from .privunit import MAX_EPS, MIN_EPS, check_dimension, check_vector, round_to_sphere

__all__ = ['OneBitSphere']


class OneBitSphere:
    """Duchi et al.'s sphere randomizer (replacement eps): Z uniform on the hemisphere around u
    w.p. e^eps/(e^eps+1) (else the opposite one), scaled by B = (e^eps+1)/((e^eps-1) c_d) with
    c_d = E|<z, u>| = Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)), so E[Z] = u; |Z|^2 = B^2."""

    kind = "replacement"

    def __init__(self, d: int, eps: float):
        self.d = check_dimension(d)
        self.eps = V.positive_finite(eps, "eps")
        if not MIN_EPS <= self.eps <= MAX_EPS:
            raise ValueError(f"eps must be in [{MIN_EPS:g}, {MAX_EPS:g}] (e^eps finite, a "
                             f"finite variance), got {eps!r}")
        c_d = math.exp(special.gammaln(self.d / 2) - special.gammaln((self.d + 1) / 2)) \
            / math.sqrt(math.pi)
        self.scale = (math.exp(self.eps) + 1) / (math.expm1(self.eps) * c_d)

    def randomize(self, x, entropy: Entropy = SYSTEM) -> np.ndarray:
        u = round_to_sphere(check_vector(x, self.d), entropy)
        z = entropy.sphere(self.d)
        toward = entropy.uniform(1)[0] < math.exp(self.eps) / (math.exp(self.eps) + 1)
        if (np.dot(z, u) >= 0) != toward:
            z = -z
        return self.scale * z

    def variance(self) -> float:
        return self.scale ** 2 - 1.0
