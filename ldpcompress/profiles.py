"""Privacy profiles delta(eps) of shuffled randomizers (SPEC S2.1-S2.4), one class per bound.

Each profile wraps one kernel. ``delta(eps, tol)`` is a proven upper bound (or, for the
``LOWER`` profiles, an exact lower bound) whose windows leave out at most ``tol`` of mass.
Every upper profile is 0 for eps >= eps0: the shuffled output is eps0-DP by post-processing.
"""
from __future__ import annotations

import math

import numpy as np

from .kernels.clones import clone_delta
from .kernels.krr import blanket_delta, blanket_tables
from .kernels.lower import binary_rr_delta, binary_rr_table, krr_lower_delta

TOL_FLOOR = 1e-300


def window_tol(target: float) -> float:
    """Mass a window may leave out when solving for delta = target: 1e-10 of it (SPEC S2.1)."""
    return max(target * 1e-10, TOL_FLOOR)


class Profile:
    """delta(eps) of one bound; subclasses set ``name``, ``label``, ``upper`` and ``_delta``."""

    name = ""
    label = ""
    upper = True

    def __init__(self, n: int, eps0: float):
        self.n = n
        self.eps0 = eps0

    def delta(self, eps: float, tol: float) -> float:
        if eps >= self.eps0:
            return 0.0
        return self._delta(eps, tol)

    def _delta(self, eps: float, tol: float) -> float:
        raise NotImplementedError

    def delta_at(self, eps: float) -> float:
        """delta(eps) with the window tolerance refined to 1e-10 of the answer."""
        d = self.delta(eps, 1e-30)
        if 0.0 < d < 1e-20:
            d = self.delta(eps, window_tol(d))
        return d


def general_pair(eps0: float) -> tuple[float, float]:
    """(q, p) = (e^-eps0, e^eps0/(e^eps0+1)) of FMT21 Thm 3.2 (SPEC S2.2)."""
    return math.exp(-eps0), 1.0 / (1.0 + math.exp(-eps0))


class GeneralProfile(Profile):
    """Any eps0-LDP randomizer (FMT21 Thm 3.2): the S2.1 pair with q = e^-eps0."""

    name, label = "general", "general numerical (FMT21 Thm 3.2)"

    def _delta(self, eps, tol):
        q, p = general_pair(self.eps0)
        return clone_delta(self.n, q, p, eps, tol)


class KRRSplitProfile(Profile):
    """k-RR split pair (SPEC S2.3(a)): ((e^eps0+1)/Z) H(pair(n, 2/Z, e^eps0/(e^eps0+1)))."""

    name, label = "krr_split", "k-RR split pair (S2.3a)"

    def __init__(self, n, eps0, k):
        super().__init__(n, eps0)
        self.k = k

    def _delta(self, eps, tol):
        e0 = math.exp(self.eps0)
        z = e0 + self.k - 1.0
        scale = (e0 + 1.0) / z
        return min(1.0, scale * clone_delta(self.n, 2.0 / z, e0 / (e0 + 1.0), eps, tol))


class KRRBlanketProfile(Profile):
    """k-RR blanket pair with the blanket count revealed (SPEC S2.3(b)), blocked over m.

    ``blocks=None`` sums every m on its own (the unblocked, tightest form).
    """

    name, label = "krr_blanket", "k-RR blanket pair (S2.3b)"

    def __init__(self, n, eps0, k, blocks: int | None = 64):
        super().__init__(n, eps0)
        self.k = k
        self.blocks = blocks if blocks is not None else 2 ** 62
        self._tables: dict[float, tuple] = {}

    def tables(self, tol: float):
        # Tables built for a smaller tolerance serve any larger one.
        for built_tol, tab in self._tables.items():
            if built_tol <= tol:
                return tab
        tab = blanket_tables(self.n, self.k, self.eps0, self.blocks, tol)
        self._tables[tol] = tab
        return tab

    def _delta(self, eps, tol):
        tables, m_first, s_lo, outside = self.tables(tol)
        return blanket_delta(tables, m_first, s_lo, self.k, self.eps0, eps, outside)


class BinaryLowerProfile(Profile):
    """Exact attack on binary RR (SPEC S2.4(a)): lower-bounds every eps0-LDP randomizer."""

    name, label, upper = "lower_binary", "lower bound: binary RR (S2.4a)", False

    def __init__(self, n, eps0):
        super().__init__(n, eps0)
        self._table: tuple | None = None

    def _delta(self, eps, tol):
        if self._table is None:
            self._table = binary_rr_table(self.n, self.eps0, 1e-40)
        lo, b = self._table
        return binary_rr_delta(lo, b, self.eps0, eps)


class KRRLowerProfile(Profile):
    """Exact attack on k-RR with all other users on a third value (SPEC S2.4(b)), k >= 3."""

    name, label, upper = "lower_krr", "lower bound: k-RR attack (S2.4b)", False

    def __init__(self, n, eps0, k):
        super().__init__(n, eps0)
        self.k = k

    def _delta(self, eps, tol):
        return krr_lower_delta(self.n, self.k, self.eps0, eps, max(tol, 1e-40))


def as_array_delta(profile: Profile, eps: np.ndarray) -> np.ndarray:
    """profile.delta_at over an array of eps."""
    return np.array([profile.delta_at(float(e)) for e in eps])
