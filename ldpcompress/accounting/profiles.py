"""Privacy profiles delta(eps) of shuffled randomizers (docs/theory.md §2.1-§2.6), one class per bound.

Each profile wraps one kernel. ``delta(eps, tol)`` is a proven upper bound (or, for the
``LOWER`` profiles, an exact lower bound) whose windows leave out at most ``tol`` of mass.
Every upper profile is 0 for eps >= eps0: the shuffled output is eps0-DP by post-processing.
"""
from __future__ import annotations

import math

from ..core import validate as V
from ..core.numerics import TOL_MIN, UNIT_ROUNDOFF
from ..kernels.binomial import binom_window
from ..kernels.clones import clone_delta, rr_split
from ..kernels.krr import blanket_delta, blanket_tables, krr_probs
from ..kernels.lower import binary_rr_delta, binary_rr_table, krr_lower_delta
from .rounding import round_down

__all__ = ["window_tol", "Profile", "general_pair", "general_split",
           "krr_split_pair", "GeneralProfile", "KRRSplitProfile", "KRRBlanketProfile",
           "BinaryLowerProfile", "KRRLowerProfile"]




def window_tol(target: float) -> float:
    """Mass a window may leave out when solving for delta = target: 1e-10 of it (docs/theory.md §2.1)."""
    return max(target * 1e-10, TOL_MIN)


class Profile:
    """delta(eps) of one bound; subclasses set ``name``, ``label``, ``upper`` and ``_delta``."""

    name = ""
    label = ""
    upper = True

    def __init__(self, n: int, eps0: float):
        self.n = n
        self.eps0 = eps0

    rtol = 1e-10  # relative width of the eps(delta) bracket the solver stops at

    def unsupported(self) -> str | None:
        """Why this bound is not computed at these parameters (None when it is)."""
        return None

    def eps_max(self, delta: float) -> float:
        """An eps with delta(eps) <= delta verified: eps0 (delta is 0 from there on)."""
        return self.eps0

    def guess(self, delta: float) -> float | None:
        """Where the eps(delta) solver starts probing (None: the caller's default)."""
        return None

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
    """(q, p) = (e^-eps0, e^eps0/(e^eps0+1)) of FMT21 Thm 3.2. Callers that need 1 - q or
    1 - p must use :func:`general_split` (forming 1 - p by subtraction loses its digits)."""
    q, _, p, _ = general_split(eps0)
    return q, p


def general_split(eps0: float) -> tuple[float, float, float, float]:
    """(q, 1 - q, p, 1 - p) of the FMT21 Thm 3.2 pair, q = e^-eps0, p = e^eps0/(e^eps0+1), each
    without subtraction: 1 - q = -expm1(-eps0), 1 - p = 1/(e^eps0+1) = e^-eps0/(1+e^-eps0)."""
    p, pc = rr_split(eps0)
    return math.exp(-eps0), -math.expm1(-eps0), p, pc


def krr_split_pair(eps0: float, k: int) -> tuple[float, float, float, float, float]:
    """(scale, q, 1 - q, p, 1 - p) of the k-RR split pair (docs/theory.md): the adversary is
    told whether user 1 fell outside {x1, x1'}; scale = (e^eps0+1)/Z, q = 2/Z, Z = e^eps0+k-1.
    Formed from x = e^-eps0: (e^eps0+1)/Z = (1+x)/(1+(k-1)x)."""
    x = math.exp(-eps0)
    _, _, q, qc, _, _ = krr_probs(k, eps0)
    p, pc = rr_split(eps0)
    return (1.0 + x) / (1.0 + (k - 1.0) * x), q, qc, p, pc


class GeneralProfile(Profile):
    """Any eps0-LDP randomizer (FMT21 Thm 3.2): the clone pair with q = e^-eps0."""

    name, label = "general", "general numerical (FMT21 Thm 3.2)"

    def _delta(self, eps, tol):
        return clone_delta(self.n, *general_split(self.eps0), eps, tol)


class KRRSplitProfile(Profile):
    """k-RR split pair: ((e^eps0+1)/Z) H(pair(n, 2/Z, e^eps0/(e^eps0+1))) (docs/theory.md)."""

    name, label = "krr_split", "k-RR split pair (§2.4(a))"

    def __init__(self, n, eps0, k):
        super().__init__(n, eps0)
        self.k = k

    def _delta(self, eps, tol):
        scale, q, qc, p, pc = krr_split_pair(self.eps0, self.k)
        return min(1.0, scale * clone_delta(self.n, q, qc, p, pc, eps, tol)
                   * (1.0 + 4.0 * UNIT_ROUNDOFF))


class KRRBlanketProfile(Profile):
    """k-RR blanket pair with the blanket count revealed (docs/theory.md §2.4(b)), blocked over m.

    ``blocks=None`` sums every m on its own (the unblocked, tightest form).
    """

    name, label = "krr_blanket", "k-RR blanket pair (§2.4(b))"
    MAX_WORK = 1e8  # (m window) x (s window): about 3 s of table building
    MAX_ENTRIES = 2.5e7  # table cells (200 MB)

    def __init__(self, n, eps0, k, blocks: int | None = 64):
        super().__init__(n, eps0)
        self.k = k
        blocks = V.blocks(blocks)  # the kernel indexes blocks: at least one
        self.blocks = blocks if blocks is not None else 2 ** 62
        self._tables: dict[float, tuple] = {}

    def unsupported(self) -> str | None:
        """The tables cost (m window) x (s window) work and blocks x (s window) memory: above
        MAX_WORK / MAX_ENTRIES the bound is skipped (the general and split bounds still answer)."""
        g, gc, r, rc, _, _ = krr_probs(self.k, self.eps0)
        m_lo, m_hi, _ = binom_window(self.n - 1, g, gc, 1e-30)
        s_lo, s_hi, _ = binom_window(self.n - 1, r, rc, 1e-30)
        m_width, s_width = m_hi - m_lo + 1, s_hi - s_lo + 1
        if m_width * s_width > self.MAX_WORK:
            return (f"blanket tables need {m_width} x {s_width} terms at n={self.n} "
                    f"(limit {self.MAX_WORK:.0e})")
        if min(self.blocks, m_width) * s_width > self.MAX_ENTRIES:
            return (f"blanket tables need {min(self.blocks, m_width)} x {s_width} cells "
                    f"(limit {self.MAX_ENTRIES:.0e}); pass a smaller blocks")
        return None

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
    """Exact attack on binary RR (docs/theory.md §2.6(a)): lower-bounds every eps0-LDP randomizer."""

    name, label, upper = "lower_binary", "lower bound: binary RR (§2.6(a))", False

    def __init__(self, n, eps0):
        super().__init__(n, eps0)
        self._table: tuple | None = None

    def _delta(self, eps, tol):
        if self._table is None:
            self._table = binary_rr_table(self.n, self.eps0, 1e-40)
        lo, b, rel = self._table
        return round_down(binary_rr_delta(lo, b, rel, self.n - 1, self.eps0, eps))


class KRRLowerProfile(Profile):
    """Exact attack on k-RR with all other users on a third value (docs/theory.md §2.6(b)), k >= 3."""

    name, label, upper = "lower_krr", "lower bound: k-RR attack (§2.6(b))", False
    MAX_WORK = 1e8  # (T window) x (V_z window) terms per evaluation

    def __init__(self, n, eps0, k):
        super().__init__(n, eps0)
        self.k = k

    def unsupported(self) -> str | None:
        _, _, r, rc, _, _ = krr_probs(self.k, self.eps0)
        x = math.exp(-self.eps0)
        piz, pizc = 1.0 / (1.0 + (self.k - 3.0) * x), (self.k - 3.0) * x / (1.0 + (self.k - 3.0) * x)
        t_lo, t_hi, _ = binom_window(self.n, r, rc, 1e-30)
        v_lo, v_hi, _ = binom_window(self.n - t_lo, piz, pizc, 1e-30)
        work = (t_hi - t_lo + 1) * (v_hi - v_lo + 1)
        if work > self.MAX_WORK:
            return f"the exact k-RR attack sums {work:.2g} terms at n={self.n} (limit {self.MAX_WORK:.0e})"
        return None

    def _delta(self, eps, tol):
        return round_down(krr_lower_delta(self.n, self.k, self.eps0, eps, max(tol, 1e-40)))
