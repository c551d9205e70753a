"""Shuffle accounting of any finite randomizer from its table P[x][y] (docs/theory.md §2.15).

Upper bound (privacy blanket, BBGN19; the optimal decomposition, SCW25). With
mu(y) = min_x P[x][y] (the blanket's mass, gamma = sum_y mu(y)), for every ordered pair of
inputs (a, b),

    delta(eps) <= (1/n) E[(Z_1 + ... + Z_n)_+],
    Z = (P[a][Y] - e^eps P[b][Y]) / mu(Y) with mass mu(Y) at each output, 0 with mass 1 - gamma,

maximised over the pairs, and never above one report's H_{e^eps}(P[a] || P[b]).

Lower bound (exact attack): datasets (a, c, ..., c) vs (b, c, ..., c), whose exact delta is
(1/n) E[(X_1 + ... + X_n)_+] with X = (P[a][Y] - e^eps P[b][Y]) / P[c][Y], Y ~ P[c].

Both sums: exactly over the multinomial counts when there are few (kernels/table.py,
exact_excess); otherwise on a lattice, by the tilted FFT of accounting/scalar.py
(positive_part), with every rounding outward: for the upper bound each atom is split onto its
two neighbouring lattice points keeping its mean (the lattice law dominates in the convex
order), for the lower bound the atoms are lumped into groups whose means are lattice points
(a conditional expectation: dominated in the convex order), in exact rational arithmetic.
"""
from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from ..core import validate as V
from ..core.lazy import lazy_module
from ..core.numerics import EXP_MAX
from ..core.numerics import UNIT_ROUNDOFF as U
from ..randomizers.table_law import TableStructure
from .profiles import GeneralProfile, Profile
from .scalar import positive_part

__all__ = ["RESOLUTION", "ATTACK_RESOLUTION", "COARSE_RESOLUTION", "EXACT_TERMS", "MAX_WORK", "MAX_OUTPUTS",
           "MAX_POINTS", "MAX_SPAN", "TableBlanketProfile", "TableLowerProfile", "table_bounds",
           "split_lattice", "lump_lattice"]

_kernel = lazy_module("ldpcompress.kernels.table")  # Numba: compiled at first use

RESOLUTION = 24          # blanket lattice steps per standard deviation of one blanket draw
ATTACK_RESOLUTION = 32   # attack lattice (lumping loses ~ h x the atoms' spacing of variance)
COARSE_RESOLUTION = 6    # a cheaper (still sound) blanket lattice that rules pairs out
EXACT_TERMS = 2e5        # multinomial terms summed exactly (small n)
EXACT_MAX_N = 400        # ... for n up to this
MAX_WORK = 4096          # k (k - 1) m: pairs x outputs scanned per evaluation (16 x 16 fits)
MAX_OUTPUTS = 64         # outputs m: atoms of one law, lumped in exact rationals per evaluation
MAX_POINTS = 1 << 22     # FFT window (lattice points) above which the step widens
MAX_SPAN = 1 << 14       # lattice points one draw may span (a rare far atom: a coarser step)
ATTACK_TRIPLES = 3       # exact attacks per evaluation: the strongest by the normal proxy,
CLOSE = 0.9              # ... the second only if its proxy is within this factor of the first
EXACT_BUDGET = 2e6       # multinomial terms over all triples below which every one is summed
_DYADIC = 1 << 200       # lumping rounds its pieces to multiples of 2^-200 (outward)


def _e_bounds(eps: float) -> tuple[float, float]:
    """(below, above) e^eps: exp is within an ulp, the factors cover it and their rounding."""
    e = math.exp(min(eps, EXP_MAX))
    return e * (1.0 - 4.0 * U), e * (1.0 + 4.0 * U)


class _Law:
    """One draw's finite law: atoms with density ratios r1, r2 (doubles within 3u of exact,
    atoms of equal ratios merged), masses (within 3u, summed), and a zero atom of mass
    ``rest``; its value at eps is r1 - e^eps r2."""

    def __init__(self, r1: np.ndarray, r2: np.ndarray, masses: np.ndarray, rest: float):
        keys = np.stack([r1, r2], axis=1)
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        self.r1, self.r2 = uniq[:, 0].copy(), uniq[:, 1].copy()
        self.masses = np.zeros(len(uniq))
        np.add.at(self.masses, inv.ravel(), masses)
        self.rest = rest
        self.key = (tuple(self.r1.tolist()), tuple(self.r2.tolist()),
                    tuple(self.masses.tolist()), rest)
        self.mass_err = (3.0 + len(masses)) * U   # relative, of each merged mass

    def atoms(self, eps: float, upper: bool) -> tuple[np.ndarray, np.ndarray]:
        """(values, masses) moved outward: values and masses up (upper) or down (lower)."""
        lo, hi = _e_bounds(eps)
        e = lo if upper else hi
        v = self.r1 - e * self.r2
        err = 8.0 * U * (self.r1 + e * self.r2)
        f = 1.0 + 2.0 * self.mass_err if upper else 1.0 - 2.0 * self.mass_err
        vals, masses = (v + err, self.masses * f) if upper else (v - err, self.masses * f)
        if self.rest > 0.0:
            vals = np.append(vals, 0.0)
            masses = np.append(masses, self.rest * (1.0 + 2.0 * U if upper else 1.0 - 2.0 * U))
        return vals, masses

    def terms(self, n: int) -> float:
        """Multinomial terms of the exact sum."""
        r = len(self.masses) + (self.rest > 0.0)
        return math.comb(n + r - 1, r - 1) if n <= EXACT_MAX_N else math.inf

    def proxy(self, eps: float, n: int) -> float:
        """The normal approximation of the sum's excess (for ranking only, never reported)."""
        vals, masses = self.atoms(eps, True)
        mean = float(masses @ vals)
        return _normal_excess(mean, float(masses @ vals ** 2) - mean ** 2, n)


def _sd(vals: np.ndarray, masses: np.ndarray) -> float:
    w = masses / masses.sum()
    mean = float(w @ vals)
    return math.sqrt(max(float(w @ (vals - mean) ** 2), 0.0))


def split_lattice(vals: np.ndarray, masses: np.ndarray, h: float) -> tuple[np.ndarray, int]:
    """(pmf, k0) on the points (k0 + i) h dominating the atoms in the convex order: the atom
    at v goes to floor(v/h) h and the next point with the masses that keep a value >= v as
    its mean (the fraction rounded up past its rounding error), masses rounded up."""
    u = vals / h
    k = np.floor(u)
    frac = np.minimum(1.0, (u - k) + 4.0 * U * (np.abs(u) + 2.0))
    k0 = int(k.min())
    p = np.zeros(int(k.max()) - k0 + 2)
    idx = (k - k0).astype(np.int64)
    grow = 1.0 + 8.0 * U
    np.add.at(p, idx, masses * (1.0 - frac) * grow)
    np.add.at(p, idx + 1, masses * frac * grow)
    return p, k0


def _dyadic(x: Fraction, up: bool) -> Fraction:
    """x rounded to a multiple of 2^-200, up or down (keeps the lumping's numbers short)."""
    scaled = x * _DYADIC
    q = -((-scaled.numerator) // scaled.denominator) if up else scaled.numerator // scaled.denominator
    return Fraction(q, _DYADIC)


def _sweep(units: list[Fraction], qs: list[Fraction], down: bool) -> dict[int, Fraction]:
    """Lumps of the atoms (lattice units, sorted increasing) whose means are lattice points,
    sweeping up (each lump closed at the first point at or above its mean) or down; a lump is
    placed at or below its exact mean, the last open one at the floor of its mean.
    Returns lattice point -> mass."""
    p: dict[int, Fraction] = {}
    order = range(len(units) - 1, -1, -1) if down else range(len(units))
    acc_m, acc_t = Fraction(0), Fraction(0)
    for i in order:
        x, q = units[i], qs[i]
        while q > 0:
            if acc_m == 0:
                acc_m, acc_t, q = q, q * x, Fraction(0)
                continue
            mean = acc_t / acc_m
            t = math.floor(mean) if down else math.ceil(mean)
            if (x >= t) if down else (x <= t):
                acc_m, acc_t, q = acc_m + q, acc_t + q * x, Fraction(0)
                continue
            # mass of x bringing the mean to t, rounded so that the lump's mean stays >= t
            need = _dyadic((t * acc_m - acc_t) / (x - t), up=not down)
            if need >= q:
                acc_m, acc_t, q = acc_m + q, acc_t + q * x, Fraction(0)
                continue
            p[t] = p.get(t, Fraction(0)) + acc_m + need
            q -= need
            acc_m, acc_t = Fraction(0), Fraction(0)
    if acc_m > 0:
        t = math.floor(acc_t / acc_m)
        p[t] = p.get(t, Fraction(0)) + acc_m
    return p


def _lattices(xs: list[Fraction], qs: list[Fraction], h_target: float):
    """Candidate lattices (c0, h, sweep down?): the sweep ends at an end atom placed on the
    lattice (its last lump then closes exactly), and a second atom is put on the lattice too
    (the other end, or one of the three heaviest atoms: a heavy atom off the lattice costs
    variance, since it must borrow mass from a distant atom to reach a lattice point)."""
    order = sorted(range(len(xs)), key=lambda i: -qs[i])
    heavy = [xs[i] for i in order[:3]]
    lo, hi = min(xs), max(xs)
    for end, down in ((hi, False), (lo, True)):
        for anchor in [lo if end == hi else hi] + heavy:
            d = abs(end - anchor)
            if d == 0:
                continue
            K = math.ceil(float(d) / h_target)
            h = d / K
            if float(h) >= h_target / 2:  # (a finer step would widen the FFT window)
                yield end, h, down


def _normal_excess(mean: float, var: float, n: int) -> float:
    """E[(S)_+] / n for S ~ N(n mean, n var): the normal proxy that ranks candidates."""
    sd = math.sqrt(max(n * var, 1e-300))
    z = n * mean / sd
    return (n * mean * NormalDist().cdf(z) + sd * math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)) / n


def lump_lattice(vals: np.ndarray, masses: np.ndarray, h_target: float, n: int):
    """(pmf, k0, h, shift): a lattice law below the atoms in the convex order (docs/theory.md
    §2.15), on the points (k0 + i + shift) h, its step at most h_target, chosen among
    ``_lattices`` by the normal approximation of the sum's excess (so that neither the
    variance nor the mean is lost). Computed in exact rationals from the doubles given (values
    in lattice units and masses rounded down, lumps placed at or below their means); the
    masses, the step and the shift are then rounded down to doubles."""
    xs = [Fraction(float(v)) for v in vals]
    qs_all = [_dyadic(Fraction(float(q)), up=False) for q in masses]
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    xs, qs = [xs[i] for i in order], [qs_all[i] for i in order]
    total = float(sum(qs))
    best, best_score = None, -math.inf
    for c0, h, down in _lattices(xs, qs, h_target):
        units = [_dyadic((x - c0) / h, up=False) for x in xs]
        p = _sweep(units, qs, down)
        pts = np.array(sorted(p), dtype=float)
        w = np.array([float(p[t]) for t in sorted(p)]) / total
        mean = float(w @ pts)
        var = float(w @ (pts - mean) ** 2)
        hf = float(h)
        score = _normal_excess((mean + float(c0 / h)) * hf * total, var * hf * hf * total, n)
        if score > best_score:
            best, best_score = (p, c0, h), score
    if best is None:  # one atom: a lattice point itself
        p, c0, h = {0: qs[0]}, xs[0], Fraction(1)
    else:
        p, c0, h = best
    k0 = min(p)
    pmf = np.zeros(max(p) - k0 + 1)
    for t, v in p.items():
        pmf[t - k0] = float(v) * (1.0 - 2.0 * U)
    shift = float(c0 / h)
    return pmf, k0, float(h) * (1.0 - 2.0 * U), shift - 4.0 * U * (abs(shift) + 1.0)


def _step(target: float, n: int, sd_all: float, span: float) -> float:
    """The lattice step: ``target``, widened so that one draw spans at most MAX_SPAN points and
    the FFT window (about 22 standard deviations of the sum) at most MAX_POINTS. Any step gives
    a bound on its side; a wide one only a looser one."""
    return max(target, 30.0 * math.sqrt(n) * sd_all / MAX_POINTS, span / MAX_SPAN, 1e-300)


def _upper_excess(law: _Law, n: int, eps: float, resolution: int) -> float:
    """(1/n) E[(sum of n draws)_+], rounded up: exact for few terms, else the split lattice."""
    vals, masses = law.atoms(eps, True)
    if np.all(vals <= 0.0):
        return 0.0
    if law.terms(n) <= EXACT_TERMS:
        return _kernel.exact_excess(vals, masses, n, True) / n * (1.0 + 4.0 * U)
    # the step: sd of a blanket draw (without the zero atom) / resolution
    r = len(law.masses)
    h = _step(_sd(vals[:r], masses[:r]) / resolution, n,
              math.sqrt(max(float(masses @ vals ** 2), 1e-300)), float(vals.max() - vals.min()))
    for _ in range(8):
        p, k0 = split_lattice(vals, masses, h)
        try:
            return h * positive_part(p, k0, n, upper=True) / n * (1.0 + 8.0 * U)
        except ValueError:  # the window would pass positive_part's limit: a coarser lattice
            h *= 4.0
    return 1.0


def _lower_excess(law: _Law, n: int, eps: float, resolution: int) -> float:
    """(1/n) E[(sum of n draws)_+], rounded down: exact for few terms, else lumped."""
    vals, masses = law.atoms(eps, False)
    if np.all(vals <= 0.0):
        return 0.0
    if law.terms(n) <= EXACT_TERMS:
        return _kernel.exact_excess(vals, masses, n, False) / n * (1.0 - 4.0 * U)
    sd = _sd(vals, masses)
    h = _step(sd / resolution, n, sd, float(vals.max() - vals.min()))
    lattice = 0.0
    for _ in range(8):
        pmf, k0, h_f, shift = lump_lattice(vals, masses, h, n)
        try:
            lattice = max(0.0, h_f * positive_part(pmf, k0, n, upper=False, shift=shift) / n
                          * (1.0 - 8.0 * U))
            break
        except ValueError:  # the window would pass positive_part's limit: a coarser lattice
            h *= 4.0
    return max(lattice, _jensen(law, n, vals))


def _jensen(law: _Law, n: int, vals: np.ndarray) -> float:
    """(1/n) E[(J v + (n - J) mu)_+], J ~ Bin(n, q) the draws of the largest atom (v, q) and mu
    the other atoms' mean: a lower bound by Jensen given J, non-decreasing in q and mu (v >= mu),
    so q and mu are rounded down. It keeps a rare far atom that a lattice step cannot resolve
    (a table entry near its 1e-12 floor)."""
    masses = np.append(law.masses, law.rest) if law.rest > 0.0 else law.masses
    top = int(np.argmax(vals))
    err = 2.0 * law.mass_err
    q = float(masses[top]) * (1.0 - err)
    rest = np.delete(masses, top)
    others = np.delete(vals, top)
    if vals[top] <= 0.0 or not 0.0 < q < 1.0 or rest.size == 0:
        return 0.0
    num = float(rest @ others)
    num -= (len(rest) + 4.0) * U * float(rest @ np.abs(others)) * (1.0 + err)
    den = float(rest.sum()) * ((1.0 + err) if num < 0.0 else (1.0 - err))
    mu = num / den
    mu -= 2.0 * U * abs(mu)
    return _kernel.jensen_excess(float(vals[top]), q, mu, n, 1e-30) / n * (1.0 - 4.0 * U)


def _chernoff(law: _Law, n: int, eps: float) -> float:
    """An upper bound on (1/n) E[(sum)_+] (x_+ <= e^(lam x)/(e lam)), minimised over lam by
    golden section; only used to skip pairs, rounded up with room to spare."""
    vals, masses = law.atoms(eps, True)
    if np.all(vals <= 0.0):
        return 0.0
    top = float(np.max(np.abs(vals)))

    def log_bound(lam: float) -> float:
        z = lam * vals
        zmax = float(z.max())
        lm = zmax + math.log(float(masses @ np.exp(z - zmax)))
        return n * (lm + (len(vals) + 8) * U * (1.0 + abs(zmax))) - math.log(lam) - 1.0

    a, b = math.log(1e-12 / top), math.log(EXP_MAX / top)
    g = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(80):
        c, d = b - g * (b - a), a + g * (b - a)
        if log_bound(math.exp(c)) < log_bound(math.exp(d)):
            b = d
        else:
            a = c
    best = min(log_bound(math.exp(a)), log_bound(math.exp(b)))
    return math.exp(min(best + 1e-9, EXP_MAX)) / n


class _TableProfile(Profile):
    """A profile of a table structure (randomizers/table_law.py)."""

    rtol = 1e-7

    def __init__(self, n: int, st: TableStructure, eps0: float):
        if not isinstance(st, TableStructure):
            raise TypeError(f"structure must be a TableStructure, got {type(st).__name__}")
        super().__init__(V.shuffle_users(n), eps0)
        self.structure = st
        self.table = st.floats()

    def unsupported(self) -> str | None:
        st = self.structure
        if st.m > MAX_OUTPUTS:
            return (f"the table has m = {st.m} outputs: its own bounds take m in [2, "
                    f"{MAX_OUTPUTS}] (each law's m atoms are lumped exactly at every eps tried; "
                    "beyond, minutes per query)")
        work = st.k * (st.k - 1) * st.m
        if work > MAX_WORK:
            return (f"the table's pairs need {work} entries per evaluation (k (k-1) m in "
                    f"[4, {MAX_WORK}]; beyond, minutes per query)")
        return None


class TableBlanketProfile(_TableProfile):
    """The privacy-blanket upper bound of a table randomizer (docs/theory.md §2.15), maximised
    over ordered pairs of inputs (pairs of equal laws counted once; a pair whose Chernoff bound
    or coarse lattice bound is below the largest so far is skipped: both are upper bounds on
    its own value), and at most one report's divergence."""

    name, label, upper = "blanket_table", "privacy blanket of the table (Balle et al. 2019)", True

    def __init__(self, n: int, st: TableStructure, resolution: int = RESOLUTION):
        super().__init__(n, st, st.eps0)
        self.resolution = V.integer_at_least(resolution, "resolution", 2, 4096)
        self._laws: list[_Law] | None = None
        self._seen: dict[int, list] = {}  # pair -> [(eps, an upper bound on its delta)]

    def laws(self) -> list[_Law]:
        """The blanket law of every ordered pair, one per distinct law."""
        if self._laws is None:
            st, t = self.structure, self.table
            mins = st.mins()
            mu = np.array([float(v) for v in mins])
            rest = float(1 - sum(mins, Fraction(0)))
            seen: dict = {}
            for a in range(st.k):
                for b in range(st.k):
                    if a != b:
                        law = _Law(t[a] / mu, t[b] / mu, mu, rest)
                        seen.setdefault(law.key, law)
            self._laws = list(seen.values())
        return self._laws

    def local(self, eps: float) -> float:
        """max over pairs of H_{e^eps}(P[a] || P[b]) = sum_y (P[a][y] - e^eps P[b][y])_+ (one
        report: an upper bound for every n), rounded up."""
        e, _ = _e_bounds(eps)
        t = self.table
        diff = t[:, None, :] - e * t[None, :, :]
        diff = diff + 8.0 * U * (t[:, None, :] + e * t[None, :, :])
        return min(1.0, float(np.maximum(diff, 0.0).sum(axis=2).max()) * (1.0 + 2.0 * t.shape[1] * U))

    def _known(self, i: int, eps: float) -> float:
        """The smallest upper bound on pair i's delta(eps) computed so far at an eps' <= eps
        (each pair's delta is non-increasing in eps), inf when none."""
        return min((v for e, v in self._seen.get(i, ()) if e <= eps), default=math.inf)

    def _upper(self, i: int, eps: float, resolution: int) -> float:
        v = _upper_excess(self.laws()[i], self.n, eps, resolution)
        self._seen.setdefault(i, []).append((eps, v))
        return v

    def _delta(self, eps, tol):
        local = self.local(eps)
        laws = self.laws()
        if self.n > EXACT_MAX_N and any(_jensen(law, self.n, law.atoms(eps, False)[0]) >= local
                                        for law in laws):
            return min(1.0, local)  # some pair's blanket is at least one report's divergence
        ranked = sorted(range(len(laws)), key=lambda i: -laws[i].proxy(eps, self.n))
        best = 0.0
        for i in ranked:
            if best >= local:
                break
            if best > 0.0 and (self._known(i, eps) <= best
                               or _chernoff(laws[i], self.n, eps) <= best):
                continue
            if best > 0.0 and laws[i].terms(self.n) > EXACT_TERMS \
                    and self._upper(i, eps, COARSE_RESOLUTION) <= best:
                continue
            best = max(best, self._upper(i, eps, self.resolution))
        return min(1.0, local, best)


class TableLowerProfile(_TableProfile):
    """Exact attack on a table randomizer (docs/theory.md §2.15): datasets (a, c, ..., c) vs
    (b, c, ..., c); at each eps the triples whose normal approximation is largest are computed
    (any triple's exact delta is a lower bound), rounded down."""

    name, label, upper = "lower_table", "lower bound: exact attack on the table", False

    def __init__(self, n: int, st: TableStructure, resolution: int = ATTACK_RESOLUTION):
        super().__init__(n, st, st.eps0_lower)
        self.resolution = V.integer_at_least(resolution, "resolution", 2, 4096)
        self._laws: list[_Law] | None = None

    def laws(self) -> list[_Law]:
        """The attack law of every triple (a, b, c), a != b, one per distinct law."""
        if self._laws is None:
            st, t = self.structure, self.table
            seen: dict = {}
            for c in range(st.k):
                for a in range(st.k):
                    for b in range(st.k):
                        if a != b:
                            law = _Law(t[a] / t[c], t[b] / t[c], t[c], 0.0)
                            seen.setdefault(law.key, law)
            self._laws = list(seen.values())
        return self._laws

    def unsupported(self) -> str | None:
        why = super().unsupported()
        st = self.structure
        if why is None and st.k ** 2 * (st.k - 1) * st.m > 4 * MAX_WORK:
            why = f"the attack's triples need k^2 (k-1) m = {st.k ** 2 * (st.k - 1) * st.m:.3g} entries"
        return why

    def _delta(self, eps, tol):
        laws = self.laws()
        if sum(law.terms(self.n) for law in laws) <= EXACT_BUDGET:  # small n: every triple
            return max(_lower_excess(law, self.n, eps, self.resolution) for law in laws)
        scored = sorted(((law.proxy(eps, self.n), i) for i, law in enumerate(laws)),
                        reverse=True)
        top = scored[0][0]
        best = _lower_excess(laws[scored[0][1]], self.n, eps, self.resolution)
        for score, i in scored[1:ATTACK_TRIPLES]:
            # a close second: its coarse lattice (a lower bound too) decides if it is worth more
            if score >= CLOSE * top \
                    and _lower_excess(laws[i], self.n, eps, COARSE_RESOLUTION) > best:
                best = max(best, _lower_excess(laws[i], self.n, eps, self.resolution))
        return best


def table_bounds(n: int, st: TableStructure):
    """(upper profiles, lower profile) of a table randomizer: the generic bound at its eps0
    (FMT21) and its blanket; its attack."""
    uppers: tuple = (TableBlanketProfile(n, st),)
    if st.eps0 <= EXP_MAX:
        uppers = (GeneralProfile(n, st.eps0),) + uppers
    return uppers, TableLowerProfile(n, st)
