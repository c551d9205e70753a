"""Who reports in a shuffled round, and which datasets are neighbours (docs/theory.md §2.7):
Poisson participation (each user with probability gamma) or a fixed-size sample of m users,
under substitution or add/remove. :class:`Sampling` is the validated record the sampled events
(accounting/events.py) and bounds (accounting/participation.py) share; ``count_law`` gives the
law of the other reporting users that the bounds sum over."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..core import validate as V
from ..core.numerics import EXP_MAX, UNIT_ROUNDOFF
from ..kernels.mblocks import m_blocks

__all__ = ["RELATIONS", "N_BLOCK_FRAC", "GAMMA_MIN", "participation", "CountBlocks", "Sampling"]

RELATIONS = ("substitution", "add_remove")
N_BLOCK_FRAC = 0.125  # blocks of N' (Poisson): an eighth of a standard deviation of the count


GAMMA_MIN = 1e-300  # below, 1 - sigma = gamma (1 - q) leaves the normal doubles


def participation(gamma, name: str = "gamma") -> float:
    """A participation probability in (0, 1] (at least GAMMA_MIN)."""
    msg = (f"{name} must be in (0, 1] (the probability that a user reports; at least "
           f"{GAMMA_MIN:g}), got {gamma!r}")
    try:
        v = V.probability_in(gamma, name, 0.0, 1.0)  # TypeError for a non-number
    except ValueError:
        raise ValueError(msg) from None
    if not v >= GAMMA_MIN:
        raise ValueError(msg)
    return v


class CountBlocks(NamedTuple):
    """The law of the other clone-like users (Sampling.count_law): blocks i of the count N
    (smallest member ns[i], mass ws[i], x0s[i]), X_c = x0 + x1 c, the law Bin(N, s) (sc = 1 - s),
    q0_power (0 Poisson, 1 fixed size) and the mass left outside the blocks."""

    ns: np.ndarray
    ws: np.ndarray
    x0s: np.ndarray
    x1: float
    s: float
    sc: float
    q0_power: int
    outside: float


@dataclass(frozen=True)
class Sampling:
    """Who reports in a round and which datasets are neighbours.

    Exactly one of ``gamma`` (Poisson: each user independently, probability gamma in (0, 1]) and
    ``m`` (fixed size: m users drawn uniformly without replacement) is set; ``relation`` is
    "substitution" or "add_remove"; n is the number of users (of the larger dataset under
    add/remove)."""

    n: int
    gamma: float | None
    m: int | None
    relation: str

    @classmethod
    def of(cls, n, gamma=None, sample=None, relation=None, n_name: str = "n") -> "Sampling":
        """Validated sampling description; ValueError/TypeError name the parameter."""
        n = V.shuffle_users(n, n_name)
        relation = "substitution" if relation is None else relation
        if relation == "add/remove":  # the spelling of the accountant's event relations
            relation = "add_remove"
        if relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
        if (gamma is None) == (sample is None):
            raise ValueError("give exactly one of gamma= (Poisson participation) and sample= "
                             "(fixed-size sampling of m users)")
        if gamma is not None:
            return cls(n, participation(gamma), None, relation)
        top = n - 1 if relation == "add_remove" else n
        if top < 1:
            raise ValueError("fixed-size sampling under add/remove needs n >= 2 (the smaller "
                             "dataset has n - 1 users, from which m >= 1 are drawn)")
        m = V.integer_at_least(sample, "sample", 1, top)
        return cls(n, None, m, relation)

    @property
    def poisson(self) -> bool:
        return self.gamma is not None

    @property
    def rate(self) -> float:
        """gamma, the probability that a user reports (Poisson participation only)."""
        if self.gamma is None:
            raise ValueError("fixed-size sampling has no participation probability gamma")
        return self.gamma

    @property
    def size(self) -> int:
        """m, the number of users that report (fixed-size sampling only)."""
        if self.m is None:
            raise ValueError("Poisson participation has no fixed sample size m")
        return self.m

    @property
    def remove(self) -> bool:
        return self.relation == "add_remove"

    def weights(self) -> tuple[float, float]:
        """(wt, 1 - wt): probability that user 1 reports, and its complement."""
        if self.poisson:
            return self.rate, 1.0 - self.rate
        return self.size / self.n, (self.n - self.size) / self.n

    def cap(self, eps0: float) -> float:
        """eps from which every bound of this round is 0 (docs/theory.md §2.7): a fixed-size
        round is log(1 + wt (e^eps0 - 1))-DP under substitution (sampling without replacement,
        Balle, Barthe, Gaboardi 2018) and its add/remove loss lies in
        [log(1 - wt), log(1 + wt (e^eps0 - 1))]; a Poisson round is eps0-DP under substitution
        (one user reporting alone keeps the full ratio e^eps0) and has no cap under add/remove
        (inf: the report count has an unbounded loss)."""
        wt, wtc = self.weights()
        if self.poisson:
            return math.inf if self.remove else eps0
        up = math.log1p(wt * math.expm1(eps0)) if eps0 < EXP_MAX else eps0 + math.log(wt)
        up = math.nextafter(up * (1.0 + 8.0 * UNIT_ROUNDOFF), math.inf)
        if not self.remove:
            return up
        return max(up, -math.log(wtc) * (1.0 + 8.0 * UNIT_ROUNDOFF))

    def describe(self) -> dict:
        d: dict[str, object] = dict(relation=self.relation)
        if self.poisson:
            d["gamma"] = self.gamma
        else:
            d["sample"] = self.m
        return d

    def count_law(self, q: float, qc: float, tol: float,
                  frac: float = N_BLOCK_FRAC) -> CountBlocks:
        """The count N and the law Bin(N, s) of the other clone-like users besides user 1, for
        a reporting other being clone-like with probability q (qc = 1 - q), as CountBlocks
        (docs/theory.md §2.7). Poisson: N' ~ Bin(n-1, 1 - gamma + gamma q) in
        blocks carrying their smallest N' (the pair is non-increasing in N'), s = gamma q /
        (1 - gamma + gamma q), x0 = N' + 1, x1 = -1; fixed size: N = m - 1, s = q,
        x0 = n - m, x1 = 0."""
        if not self.poisson:
            return CountBlocks(np.array([self.size - 1], dtype=np.int64), np.ones(1),
                               np.array([float(self.n - self.size)]), 0.0, q, qc, 1, 0.0)
        g = self.rate
        sig_c = g * qc                     # 1 - sigma: reports, and is left-over
        sig = (1.0 - g) + g * q
        s, sc = g * q / sig, (1.0 - g) / sig
        if g == 1.0:
            s, sc = 1.0, 0.0
        big_n = self.n - 1
        # a block moves the law of the clone-like count by s x its width: keep that within
        # frac standard deviations of the count (marginally Bin(n-1, gamma q)), and blocks at
        # most four standard deviations of N' wide
        sd_n = math.sqrt(big_n * sig * sig_c)
        sd_k = math.sqrt(big_n * g * q * (1.0 - g * q))
        width = max(1, int(min(4.0 * sd_n, frac * sd_k / s) if s > 0.0 else 4.0 * sd_n))
        ms, ws, out = m_blocks(self.n, sig, sig_c, width, tol, True)
        return CountBlocks(ms - 1, ws, ms.astype(np.float64), -1.0, s, sc, 0, out)
