"""Shuffled binary randomized response, exactly: the worst case over every dataset of the
other users (docs/theory.md §2.14).

A binary randomizer reports 1 with probability a for bit 1 and b for bit 0 (a > b; symmetric
randomized response has b = 1 - a = 1/(e^eps0 + 1)). The analyst sees the count of ones, so a
dataset of the other n - 1 users is "m of them hold 1", and delta(eps) of the shuffled
mechanism is the maximum over m = 0..n-1 of the count pair of m (kernels/binary_count.py).

Not every m has to be evaluated. For a block [m1, m2] of datasets, split each of the w = m2 - m1
"middle" users as Bern(a) = (a - b) point(1) + b Bern(a) + (1 - a) Bern(b) (and Bern(b) the
same with point(0)) and reveal the split: the middle then adds a known shift plus J1 users of
law Bern(a) and J0 of law Bern(b), (J1, J0) multinomial and independent of m. Every m of the
block is therefore bounded by the pair with m1 + J1 holders of 1 and n - 1 - m2 + J0 of 0, and
more users only add independent noise (a post-processing), so by the pair at the corner
(J1, J0) = (j1, j0) of a window, plus the mass of (J1, J0) below it. The block search refines
the blocks whose bound exceeds the best exact value found by more than the tolerance ``rtol``;
every m is then covered by an exact pair (a single m) or a bound, so the maximum is an upper
bound, and the exact pairs give the lower bound (an attack: a concrete pair of datasets).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.lazy import lazy_module
from ..core.numerics import EXP_MAX, UNIT_ROUNDOFF
from ..kernels.binary_count import (
    ROWS,
    CountLaw,
    count_capacity,
    count_delta,
    count_deltas,
    count_tables,
)
from ..kernels.binomial import binom_window, lower_tail_bound
from ..kernels.clones import rr_split
from .profiles import BinaryLowerProfile, KRRLowerProfile, Profile, window_tol
from .rounding import fraction_down, fraction_up, round_down, round_up
from .solve import epsilon_for_delta

# the class attack of k-RR at large n (with the oracles' blanket kernels): loaded when used
BL = lazy_module("ldpcompress.accounting.blanket")

__all__ = ["EPS0_MAX", "RTOL", "ALL_SINGLES", "BinaryLaw", "BinaryCount", "BinaryCountProfile",
           "BinaryCountLowerProfile", "GenericLowerProfile", "K_MAX", "dots_profile"]

EPS0_MAX = 100.0   # e^eps0 (the odds of a report) must stay well inside the double range
RTOL = 1e-3        # the block search stops when its bound is within this of the best exact eps
ALL_SINGLES = 64   # up to this many datasets (m values), every one is evaluated exactly
MAX_TABLES = 4000  # table builds per search; beyond, the remaining blocks keep their bounds
MAX_WORK = 3e7     # table entries per search (~1 s); beyond, likewise
BLOCK_COST = 0.9   # a block of w datasets costs about (a - b) w / (BLOCK_COST n) of eps (RR)
HEADROOM = 0.5     # share of a dataset's eps deficit to the worst one its block may spend
SWEEP_SD = 3000.0   # blocks of a count whose sd exceeds this skip the recurrence sweeps
WORK = 1e7       # kernel steps (table entries) one search may spend on its initial blocks
REL_EXACT = 1e-6   # relative gap of the carried pmf bounds that triggers a direct anchor: one
REL_BLOCK = 1e-3   # dataset alone (the lower bound), a block (about 4e-5 of eps at 1e-6)


@dataclass(frozen=True)
class BinaryLaw:
    """A binary randomizer: Pr[report 1 | bit 1] = a, Pr[report 1 | bit 0] = b, a > b, with
    the complements ac = 1 - a, bc = 1 - b given (never formed by subtraction); ``symmetric``
    when b = 1 - a (randomized response: then the datasets m and n - 1 - m are mirror images)."""

    a: float
    ac: float
    b: float
    bc: float
    symmetric: bool

    @classmethod
    def rr(cls, eps0: float) -> "BinaryLaw":
        """Randomized response keeping the bit with probability e^eps0/(e^eps0 + 1)."""
        p, pc = rr_split(eps0)
        return cls(p, pc, pc, p, True)

    @classmethod
    def of(cls, p1, q0, upper: bool = True) -> "BinaryLaw":
        """Pr[1 | 1] = p1, Pr[1 | 0] = q0 (exact rationals or floats taken as exact; p1 != q0).
        Reports are relabelled so that a > b; each probability is rounded toward the more
        revealing randomizer (a up, b down; ``upper``), whose shuffled output the true one's is
        a post-processing of (docs/theory.md §2.14), or toward the less revealing one (for an
        attack, ``upper=False``)."""
        p1, q0 = Fraction(p1), Fraction(q0)
        if not (0 < p1 < 1 and 0 < q0 < 1) or p1 == q0:
            raise ValueError(f"need 0 < Pr[1|1], Pr[1|0] < 1 and Pr[1|1] != Pr[1|0], got "
                             f"{float(p1)!r}, {float(q0)!r}")
        a, b = (p1, q0) if p1 > q0 else (1 - p1, 1 - q0)
        if a + b == 1:  # randomized response: round so that it stays randomized response
            big, small = ((fraction_up(a), fraction_down(1 - a)) if upper else
                          (fraction_down(a), fraction_up(1 - a)))
            return cls(big, small, small, big, True)
        if upper:
            return cls(fraction_up(a), fraction_down(1 - a), fraction_down(b), fraction_up(1 - b),
                       False)
        lo = cls(fraction_down(a), fraction_up(1 - a), fraction_up(b), fraction_down(1 - b),
                 False)
        if not lo.a > lo.b:
            raise ValueError("Pr[1|1] and Pr[1|0] are a rounding apart: no attack to compute")
        return lo

    @property
    def eps0(self) -> float:
        """max(log(a/b), log((1-b)/(1-a))), rounded up: the randomizer's replacement eps0."""
        v = max(math.log(self.a) - math.log(self.b), math.log(self.bc) - math.log(self.ac))
        return math.nextafter(v + 8 * UNIT_ROUNDOFF * (1.0 + abs(v)), math.inf)

    def count_law(self, n1: int, n2: int, tol: float, sweeps: bool = True,
                  rel: float = REL_EXACT) -> CountLaw:
        return CountLaw(n1, n2, self.a, self.ac, self.b, self.bc, tol, rel, int(sweeps))


@dataclass(frozen=True)
class _Tables:
    """The kernel tables of one count pair (a copy of the rows the divergences read)."""

    k0: int
    w: int
    left: float
    right: float
    rows: np.ndarray
    extra: float  # mass added to every upper value (the block's (J1, J0) window)
    tol: float


class BinaryCount:
    """The worst case over datasets of n shuffled reports of one binary randomizer: the block
    search, the exact pairs it evaluates (kept for the lower bound) and their tables."""

    def __init__(self, n: int, law: BinaryLaw, rtol: float = RTOL):
        self.n = n
        self.law = law
        self.rtol = rtol
        self.big_n = n - 1
        # the datasets to cover: m in [0, top] (the mirror images m -> n - 1 - m are the same
        # pairs with the directions exchanged for randomized response)
        self.top = self.big_n // 2 if law.symmetric else self.big_n
        # a block of w datasets from m on loses about w gain of the count's variance V(m), the
        # smaller end's (§2.14), and its eps is about V^(-1/2): blocks of width
        # BLOCK_COST r V(m) / gain keep it within r, r = rtol where V is smallest (the worst
        # datasets) and more where the eps is smaller anyway; unless that takes more than WORK
        # table entries in all (huge n): then r grows to what the work allows
        self.var0 = self.big_n * law.b * law.bc  # V(0), and V grows by `slope` per holder of 1
        self.slope = law.a * law.ac - law.b * law.bc
        ends = (self.var0, self.var0 + self.slope * self.top)
        self.var_min = max(min(ends), 1e-300)
        self.gain = (law.a - law.b) * min(law.a * law.b, law.ac * law.bc)
        self.sd = math.sqrt(max(max(ends), 1.0))
        budget = max(16, int(WORK / (21.0 * self.sd + 64.0)))
        initial = self._blocks(rtol, budget)
        while initial is None:
            rtol *= 1.2
            initial = self._blocks(rtol, budget)
        self._initial: list[tuple[int, int]] = initial
        self.rtol = rtol
        self._buf = np.zeros((ROWS, 0))
        self._exact: dict[int, _Tables] = {}  # exact pairs evaluated so far, by m
        self.tables_built = 0
        self.work = 0  # table entries built so far
        self.last_blocks: list[tuple[int, int]] = []

    # -- one pair -----------------------------------------------------------------------------
    def _build(self, n1: int, n2: int, tol: float, extra: float, sweeps: bool = True,
               rel: float = REL_EXACT) -> _Tables:
        law = self.law.count_law(n1, n2, tol, sweeps, rel)
        cap = count_capacity(law)
        if self._buf.shape[1] < cap:
            self._buf = np.zeros((ROWS, int(cap * 1.25) + 16))
        k0, w, left, right = count_tables(law, self._buf)
        self.tables_built += 1
        self.work += w
        return _Tables(k0, w, left, right, self._buf, extra, tol)

    def _keep(self, t: _Tables) -> _Tables:
        """A private copy of the tables (the shared buffer is overwritten by the next build)."""
        return _Tables(t.k0, t.w, t.left, t.right, t.rows[:, :t.w + 2].copy(), t.extra, t.tol)

    def _value(self, t: _Tables, eps: float, upper: bool) -> float:
        law = self.law
        d = count_delta(t.k0, t.w, t.left, t.right, t.rows, law.a, law.ac, law.b, law.bc,
                        eps, upper)
        return min(1.0, d + t.extra) if upper else d

    def _values(self, t: _Tables, eps: np.ndarray, upper: bool) -> np.ndarray:
        law = self.law
        d = count_deltas(t.k0, t.w, t.left, t.right, t.rows, law.a, law.ac, law.b, law.bc,
                         eps, upper)
        return np.minimum(1.0, d + t.extra) if upper else d

    def exact(self, m: int, tol: float) -> _Tables:
        """The tables of dataset m (m holders of 1 among the others), kept for later queries."""
        t = self._exact.get(m)
        if t is None or t.tol > tol:
            t = self._keep(self._build(m, self.big_n - m, tol, 0.0))
            self._exact[m] = t
        return t

    def exact_datasets(self) -> list[int]:
        """The datasets m evaluated alone so far."""
        return sorted(self._exact)

    def block(self, m1: int, m2: int, tol: float) -> _Tables:
        """Tables bounding every dataset m in [m1, m2] (module docstring): the corner pair of
        the revealed split of the middle users, plus the mass of the split below the corner."""
        w = m2 - m1
        law = self.law
        j1, j0, extra = 0, 0, 0.0
        if w > 0:
            half = 0.5 * tol
            j1, _, _ = binom_window(w, law.b, law.bc, half)
            j0, _, _ = binom_window(w, law.ac, law.a, half)
            extra = lower_tail_bound(j1, w, law.b, law.bc) + lower_tail_bound(j0, w, law.ac,
                                                                             law.a)
            extra = round_up(extra) if extra > 0.0 else 0.0
        # blocks at large n: the a priori ratio bounds alone (about 11 / sd relative on the pmf,
        # a few 1e-4 of eps there, for a cheaper table)
        return self._build(m1 + j1, self.big_n - m2 + j0, tol, extra, self.sd < SWEEP_SD,
                           REL_BLOCK)

    def _spent(self) -> bool:
        """Whether the search has used its work: the remaining blocks keep their bounds."""
        return self.tables_built > MAX_TABLES or self.work > MAX_WORK

    # -- the searches -------------------------------------------------------------------------
    def _blocks(self, rtol: float, budget: int) -> list[tuple[int, int]] | None:
        """Initial cover: every dataset alone when there are few; else the dataset(s) at the
        end(s) alone, first (the worst dataset is usually there: it sets the target of the
        blocks), then blocks of the widths above between (failing blocks are halved); None
        when that takes more than ``budget`` blocks."""
        top = self.top
        if top + 1 <= ALL_SINGLES:
            return [(m, m) for m in range(top + 1)]
        last = top if self.law.symmetric else top - 1
        out = [(0, 0)] if self.law.symmetric else [(0, 0), (top, top)]
        m = 1
        while m <= last:
            if len(out) > budget:
                return None
            var = self.var0 + self.slope * m
            r = rtol + HEADROOM * (math.sqrt(var / self.var_min) - 1.0)
            w = int(min(BLOCK_COST * r * var / max(self.gain, 1e-300), last - m + 1.0))
            m2 = m + max(w, 1) - 1
            out.append((m, m2))
            m = m2 + 1
        return out

    def solve_epsilon(self, delta: float) -> tuple[float, float]:
        """(upper, lower) eps at delta over every dataset: the block search (module docstring).
        The upper value is the largest eps of the final blocks' bounds; the lower value is the
        largest exact eps of the datasets evaluated alone (rounded down)."""
        tol = window_tol(delta)
        eps0 = self.law.eps0
        up_best = 0.0
        lo_best = 0.0
        accepted: list[tuple[int, int]] = []
        stack = list(reversed(self._initial))
        guess = None
        while stack:
            m1, m2 = stack.pop()
            if m1 == m2:
                t = self.exact(m1, tol)
                up = epsilon_for_delta(lambda e: self._value(t, e, True), delta, eps0,
                                       upper=True, guess=guess)
                lo = epsilon_for_delta(lambda e: self._value(t, e, False), delta, up,
                                       upper=False, guess=up)
                up_best = max(up_best, up)
                lo_best = max(lo_best, lo)
                guess = up_best
                accepted.append((m1, m2))
                continue
            target = max(up_best, lo_best * (1.0 + self.rtol))
            t = self.block(m1, m2, tol)
            if self._value(t, target, True) <= delta or self._spent():
                eps_b = epsilon_for_delta(lambda e: self._value(t, e, True), delta, eps0,
                                          upper=True, guess=target)
                up_best = max(up_best, eps_b)
                accepted.append((m1, m2))
                continue
            mid = (m1 + m2) // 2
            stack.append((mid + 1, m2))
            stack.append((m1, mid))
        self.last_blocks = accepted
        return min(eps0, up_best), round_down(lo_best)

    def delta_upper(self, eps: float, tol: float) -> float:
        """max over datasets of delta(eps), from above: the block search at eps (relative
        tolerance 10 rtol on delta, about rtol on eps at delta = 1e-6)."""
        best_lo = 0.0
        up_best = 0.0
        stack = list(reversed(self._initial))
        rtol_d = 10.0 * self.rtol
        while stack:
            m1, m2 = stack.pop()
            if m1 == m2:
                t = self.exact(m1, tol)
                up_best = max(up_best, self._value(t, eps, True))
                best_lo = max(best_lo, self._value(t, eps, False))
                continue
            t = self.block(m1, m2, tol)
            v = self._value(t, eps, True)
            if v <= max(up_best, best_lo * (1.0 + rtol_d)) or self._spent():
                up_best = max(up_best, v)
                continue
            mid = (m1 + m2) // 2
            stack.append((mid + 1, m2))
            stack.append((m1, mid))
        return up_best

    def delta_lower(self, eps: float, tol: float) -> float:
        """The largest exact delta(eps) among the datasets evaluated alone (at least m = 0 and,
        for an asymmetric randomizer, m = n - 1; every m at small n), rounded down."""
        if not self._exact:
            for m in self._default_singles():
                self.exact(m, tol)
        return round_down(max(self._value(t, eps, False) for t in self._exact.values()))

    def _default_singles(self) -> list[int]:
        if self.top + 1 <= ALL_SINGLES:
            return list(range(self.top + 1))
        return [0] if self.law.symmetric else [0, self.top]

    def grid_upper(self, eps: np.ndarray, tol: float, delta_ref: float = 1e-9) -> np.ndarray:
        """Upper values at every eps of a grid over one fixed cover of the datasets (the
        blocks of a search at delta_ref): for connect-the-dots PLDs."""
        self.solve_epsilon(delta_ref)
        out = np.zeros(eps.shape[0])
        for m1, m2 in self.last_blocks:
            t = self.exact(m1, tol) if m1 == m2 else self.block(m1, m2, tol)
            out = np.maximum(out, self._values(t, eps, True))
        return out


class BinaryCountProfile(Profile):
    """Binary randomized response (or any binary randomizer ``law``), every dataset of the
    other users: the block search of docs/theory.md §2.14 (an upper bound)."""

    name, label = "binary_exact", "binary randomizer, exact over datasets (§2.14)"

    def __init__(self, n: int, eps0: float, law: BinaryLaw | None = None,
                 engine: BinaryCount | None = None):
        super().__init__(n, eps0)
        self.law = BinaryLaw.rr(eps0) if law is None else law
        self.engine = BinaryCount(n, self.law) if engine is None else engine

    def unsupported(self) -> str | None:
        if self.eps0 > EPS0_MAX:
            return f"eps0 = {self.eps0:.4g} is above {EPS0_MAX:g} (the report odds e^eps0)"
        return None

    def _delta(self, eps, tol):
        return round_up(self.engine.delta_upper(eps, tol))

    def solve_epsilon(self, delta: float) -> float:
        """eps(delta) by the block search (not by bisection on delta(eps): each block is
        solved on its own tables)."""
        up, _ = self.engine.solve_epsilon(delta)
        return round_up(up) if up < self.eps0 else self.eps0


class BinaryCountLowerProfile(Profile):
    """The largest exact delta of the datasets the search evaluated alone (an attack: each is a
    concrete pair of neighbouring datasets), docs/theory.md §2.14."""

    name, upper = "lower_binary", False
    label = "lower bound: binary randomizer, worst dataset found (§2.14)"

    def __init__(self, n: int, eps0: float, law: BinaryLaw | None = None,
                 partner: BinaryCount | None = None):
        super().__init__(n, eps0)
        self.law = BinaryLaw.rr(eps0) if law is None else law
        self.engine = BinaryCount(n, self.law)
        self.partner = partner  # an upper search whose exact datasets are worth trying here

    def unsupported(self) -> str | None:
        if self.eps0 > EPS0_MAX:
            return f"eps0 = {self.eps0:.4g} is above {EPS0_MAX:g} (the report odds e^eps0)"
        return None

    def _delta(self, eps, tol):
        tol = max(tol, 1e-300)
        if self.partner is not None:
            for m in list(self.partner.exact_datasets()):
                self.engine.exact(m, tol)
        return self.engine.delta_lower(eps, tol)


# ----------------------------------------------------------------------------------------------
# The lower end of the generic bracket: the most vulnerable randomizer found
# ----------------------------------------------------------------------------------------------

K_MAX = 64          # k-RR sizes scanned at most (the values fall with k from 3 on: measured)
KRR_EXACT_N = 20_000   # the exact §2.6(b) sum up to this n (its cost grows as n), else the
                       # class attack of §2.6(c)
KRR_ATTACK_COUNT = 6e8  # the class attack while n (2/Z) is at most this (its cost grows with it)


class GenericLowerProfile(Profile):
    """A lower bound for "any eps0-LDP randomizer": the largest exact delta over binary
    randomized response (its worst dataset found, docs/theory.md §2.14) and k-ary RR for
    k = 3, 4, ... (the §2.6(b) datasets, or their class view §2.6(c) where the exact sum is
    large), scanned while the value grows. Each candidate is the exact delta of a concrete
    pair of datasets for a concrete eps0-LDP randomizer, so the maximum is achievable."""

    name, upper = "lower_generic", False
    label = "lower bound: most vulnerable k-RR found (§2.14)"

    def __init__(self, n: int, eps0: float):
        super().__init__(n, eps0)
        self.binary: Profile = (BinaryCountLowerProfile(n, eps0) if eps0 <= EPS0_MAX
                                else BinaryLowerProfile(n, eps0))
        self._krr: dict[int, Profile | None] = {}
        self.k_best = 2

    def krr_profile(self, k: int) -> Profile | None:
        """k-RR's exact attack at (n, eps0), None where it would cost too much."""
        if k not in self._krr:
            z = math.exp(min(self.eps0, EXP_MAX)) + k - 1.0
            prof: Profile | None = None
            if self.n <= KRR_EXACT_N:
                prof = KRRLowerProfile(self.n, self.eps0, k)
            elif self.n * 2.0 / z <= KRR_ATTACK_COUNT:
                prof = BL.KRRAttackProfile(self.n, self.eps0, k)
            self._krr[k] = prof
        return self._krr[k]

    def _delta(self, eps, tol):
        best = self.binary.delta(eps, tol)
        k_best = 2
        prev = -1.0
        for k in range(3, K_MAX + 1):
            prof = self.krr_profile(k)
            if prof is None:
                break
            d = prof.delta(eps, tol)
            if d <= prev:
                break
            prev = d
            if d > best:
                best, k_best = d, k
        self._name(k_best)
        return best

    def _name(self, k_best: int) -> None:
        self.k_best = k_best
        self.label = ("lower bound: binary RR, worst dataset found (§2.14)" if k_best == 2 else
                      f"lower bound: k-RR with k = {k_best}, the most vulnerable k found "
                      "(§2.6(b))")

    def solve_epsilon(self, delta: float) -> float:
        """eps(delta), lower end: binary RR's first, then k = 3, 4, ... each solved only when
        its delta at the best eps so far exceeds the target (it can then only be larger);
        the scan stops at the first k that cannot (one evaluation)."""
        tol = window_tol(delta)

        def solve(prof, start):
            # bracket upward from the eps so far: far above the answer the attacks' tails are
            # slow to sum, so eps0 (delta = 0 there) is only the last resort; a start of 0
            # (binary RR's answer when its delta(0) is below the target) grows from a floor
            hi = min(self.eps0, max(1.25 * start, self.eps0 * 2.0 ** -20))
            while hi < self.eps0 and prof.delta(hi, tol) > delta:
                hi = min(self.eps0, 1.5 * hi)
            return epsilon_for_delta(lambda e: prof.delta(e, tol), delta, hi, upper=False,
                                     guess=start)

        best = epsilon_for_delta(lambda e: self.binary.delta(e, tol), delta, self.eps0,
                                 upper=False)
        k_best = 2
        for k in range(3, K_MAX + 1):
            prof = self.krr_profile(k)
            if prof is None or best >= self.eps0 or prof.delta(best, tol) <= delta:
                break
            best, k_best = solve(prof, best), k
        self._name(k_best)
        return best


def dots_profile(n: int, law: BinaryLaw, eps_max: float, points: int, tol: float):
    """eps -> an upper bound on delta(eps) of the worst dataset, precomputed on the grid
    eps_max (j / (points - 1))^2 that connect-the-dots PLDs read (pld.profile_atoms; one cover
    of the datasets, every block's tables built once), the block search elsewhere."""
    eng = BinaryCount(n, law)
    grid = eps_max * np.linspace(0.0, 1.0, points) ** 2
    values = dict(zip(grid.tolist(), round_up(eng.grid_upper(grid, tol)).tolist()))

    def profile(eps: float) -> float:
        if eps >= law.eps0:
            return 0.0
        v = values.get(float(eps))
        return v if v is not None else round_up(eng.delta_upper(eps, tol))
    return profile
