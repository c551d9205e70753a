"""Duchi et al.'s one-bit sphere randomizer: the mean-estimation baseline (docs/theory.md §7).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import validate as V
from ..core.entropy import Entropy
from ..core.numerics import EXP_MAX
from ..core.lazy import lazy_module
from .contract import Privacy
from .estimator import check_flag, normal_quantile
from .privunit import MIN_EPS, check_dimension, round_to_sphere
from .registry import register
from .vectors import VectorMeanEstimator

__all__ = ['OneBitSphere']

special = lazy_module("scipy.special")  # imported at first use


@register
class OneBitSphere(VectorMeanEstimator):
    """Duchi et al.'s sphere randomizer (replacement eps): Z uniform on the hemisphere around u
    w.p. e^eps/(e^eps+1) (else the opposite one), scaled by B = (e^eps+1)/((e^eps-1) c_d) with
    c_d = E|<z, u>| = Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)), so E[Z] = u; |Z|^2 = B^2.

    Parameters
    ----------
    d : int
        Dimension of the input vectors (d >= 2).
    eps : float
        The local replacement eps (> 0).
    """

    name, privacy = "onebit-sphere", Privacy.REPLACEMENT

    def __init__(self, d: int, eps: float):
        self.d = check_dimension(d)
        self.eps = V.positive_finite(eps, "eps")
        if not MIN_EPS <= self.eps <= EXP_MAX:
            raise ValueError(f"eps must be in [{MIN_EPS:g}, {EXP_MAX:g}] (e^eps finite, a "
                             f"finite variance), got {eps!r}")
        c_d = math.exp(special.gammaln(self.d / 2) - special.gammaln((self.d + 1) / 2)) \
            / math.sqrt(math.pi)
        self.scale = (math.exp(self.eps) + 1) / (math.expm1(self.eps) * c_d)
        self.report_norm = self.scale
        self.bits_per_report = 64 * self.d

    def params(self) -> dict:
        return {"d": self.d, "eps": self.eps}

    def compression_refusal(self) -> str:
        return "the one-bit baseline states no reference sampler and density ratio"

    def _randomize_one(self, x, entropy: Entropy) -> np.ndarray:
        u = round_to_sphere(x, entropy)
        z = entropy.sphere(self.d)
        toward = entropy.uniform(1)[0] < math.exp(self.eps) / (math.exp(self.eps) + 1)
        if (np.dot(z, u) >= 0) != toward:
            z = -z
        return self.scale * z

    def variance(self) -> float:
        return self.scale ** 2 - 1.0

    def intervals(self, est, n: int, level: float = 0.95,
                  conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Per-coordinate mean +- z sqrt(B^2 / (d n)): E[Z_i^2] = B^2/d for any input, so
        Var(Z_i) <= B^2/d (conservative either way)."""
        check_flag(conservative, "conservative")
        est = np.asarray(est, dtype=float)
        n = V.users(n)
        half = normal_quantile(level) * self.scale / math.sqrt(self.d * n)
        return est - half, est + half
