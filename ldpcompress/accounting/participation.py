"""Shuffle rounds with participation sampling (docs/theory.md §2.7): each user reports with
probability gamma (Poisson participation), or a uniformly random m of the n users report
(fixed-size sampling); the analyst sees the multiset of the reports, so the number of reports is
visible and a silent user is not.

Neighbouring relations (stated for each query, docs/theory.md §2.7):

* ``"substitution"``: the two datasets have the same n users and differ in user 1's value;
* ``"add_remove"``: one dataset has user 1, the other does not (n vs n - 1 users; fixed-size
  sampling draws m users from whichever is given, so m <= n - 1). With gamma = 1 (everyone
  reports) the report count reveals user 1: no privacy, delta = 1.

Bounds (each a :class:`~ldpcompress.accounting.profiles.Profile`):

* :class:`SampledGeneralProfile` -- any eps0-LDP randomizer (FMT21's clones, the left-over users
  revealed, §2.7(a)-(b));
* :class:`SampledBlanketProfile` -- a binary-support oracle or k-RR by its privacy blanket
  (§2.7(c)-(d));
* :class:`SampledCountLowerProfile`, :class:`SampledSplitLowerProfile` -- exact attacks
  (§2.7(e)): lower bounds every upper bound must exceed.

``epsilon`` / ``delta`` combine them as ``amplification.epsilon`` does (it calls them when
given ``gamma=`` or ``sample=``).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..core import validate as V
from ..core.numerics import EXP_MAX
from ..core.progress import compute_time
from ..kernels.blanket_attack import AttackLaw, split_attack_delta
from ..kernels.blanket_indep import IndepLaw
from ..kernels.blanket_pair import PairLaw
from ..kernels.clones import rr_split
from ..kernels.participation import (RemoveBlanketLaw, RemoveCloneLaw, SubstCloneLaw,
                                     remove_blanket_delta, remove_clone_delta, subst_clone_delta)
from ..kernels.participation_attack import (CountLaw, PoissonCountLaw, count_attack_delta,
                                            poisson_count_attack_delta)
from ..kernels.participation_subst import (BlanketBlocksLaw, subst_blanket_blocks,
                                           subst_blanket_indep, subst_blanket_pair)
from ..kernels.records import record
from ..randomizers.scalar import ScalarStructure
from ..randomizers.structure import BinaryStructure, ShuffleStructure
from ..randomizers.table_law import TableStructure
from . import blanket as BL
from .binary import BinaryLaw
from .bounds import AmplificationResult, Bound, best_upper
from .profiles import Profile, window_tol
from .rounding import round_down
from .sampling import GAMMA_MIN, N_BLOCK_FRAC, RELATIONS, Sampling, participation
from .solve import epsilon_for_delta

__all__ = ["RELATIONS", "N_BLOCK_FRAC", "C_BLOCK_FRAC", "GAMMA_MIN", "ATTACK_WORK",
           "BLANKET_WORK", "participation", "Sampling",
           "krr_structure",
           "SampledProfile", "SampledGeneralProfile", "SampledBlanketProfile",
           "SampledCountLowerProfile", "SampledSplitLowerProfile", "upper_profiles",
           "lower_profile", "profile_epsilon", "DOTS_FLOOR", "dots_grid", "epsilon", "delta",
           "NoFiniteEpsilon"]

C_BLOCK_FRAC = 0.0625  # blanket substitution: blocks of c a sixteenth of a standard deviation
ATTACK_WORK = 3e6   # terms of one evaluation of the Poisson (T, V) attack; beyond, V alone
BLANKET_WORK = 1e7  # terms of one evaluation of the blanket substitution sum; beyond, skipped


def krr_structure(k: int, eps0: float) -> ShuffleStructure:
    """The blanket structure of k-RR at (k, eps0) as a mathematical randomizer (not the realised
    coins of an oracle object): a = 1/k, Pr[report = x] = a1 = e^eps0/(e^eps0 + k - 1), formed
    from the complement 1 - a1 = (k-1) e^-eps0/(1 + (k-1) e^-eps0) and nudged so that the
    structure's eps0 is never below the given one (a bound at a larger eps0 covers it)."""
    k = V.domain_size(k)
    x = math.exp(-eps0)
    a1c = (k - 1.0) * x / (1.0 + (k - 1.0) * x)
    for _ in range(64):
        st = ShuffleStructure("krr", (("k", k), ("eps0", float(eps0))), Fraction(1, k),
                              1 - Fraction(a1c), Fraction(0), Fraction(1, k), False,
                              Fraction(1, k) if k >= 3 else None)
        if st.eps0 >= eps0:
            return st
        a1c = math.nextafter(a1c, 0.0)
    raise ValueError(f"k-RR with k={k}, eps0={eps0!r}: no structure reaches eps0")


# ---------------------------------------------------------------------------------------------
# Profiles
# ---------------------------------------------------------------------------------------------

class SampledProfile(Profile):
    """A profile of a sampled round: ``delta(eps, tol)`` is 0 from ``cap`` on (inf for Poisson
    add/remove), tables built per window tolerance are kept."""

    def __init__(self, n: int, eps0: float, sampling: Sampling):
        super().__init__(n, eps0)
        self.sampling = sampling
        self.cap = sampling.cap(eps0)
        self._tables: dict[float, tuple] = {}

    def tables(self, tol: float):
        for built, tab in self._tables.items():
            if built <= tol:  # tables built for a smaller tolerance serve a larger one
                return tab
        tab = self._build(tol)
        self._tables[tol] = tab
        return tab

    def _build(self, tol: float):
        raise NotImplementedError

    def delta(self, eps: float, tol: float) -> float:
        if eps >= self.cap:
            return 0.0
        return self._delta(eps, tol)


class SampledGeneralProfile(SampledProfile):
    """Any eps0-LDP randomizer (docs/theory.md §2.7(a)-(b)): each reporting other is, with
    probability e^-eps0, a clone; the left-over users are revealed."""

    def __init__(self, n: int, eps0: float, sampling: Sampling,
                 block_frac: float = N_BLOCK_FRAC):
        super().__init__(n, eps0, sampling)
        self.block_frac = block_frac
        self.name = "sampled_general"
        self.label = f"general, {_scheme_label(sampling)} (FMT21 clones, §2.7)"

    def _build(self, tol):
        """The blocks of N and the kernel's record (built once per window tolerance)."""
        q, qc = math.exp(-self.eps0), -math.expm1(-self.eps0)
        cb = self.sampling.count_law(q, qc, tol, self.block_frac)
        wt, wtc = self.sampling.weights()
        if self.sampling.remove:
            law = record(RemoveCloneLaw, x1=cb.x1, s=cb.s, sc=cb.sc, wt=wt, wtc=wtc, q=q,
                         q0_power=cb.q0_power)
        else:
            p, pc = rr_split(self.eps0)
            law = record(SubstCloneLaw, x1=cb.x1, s=cb.s, sc=cb.sc, wt=wt, q=q, p=p, pc=pc)
        return cb.ns, cb.ws, cb.x0s, law, cb.outside

    def _delta(self, eps, tol):
        if self.sampling.remove and self.sampling.weights()[1] <= 0.0:
            return 1.0  # everyone reports: the count reveals user 1
        ns, ws, x0s, law, out = self.tables(tol)
        kernel = remove_clone_delta if self.sampling.remove else subst_clone_delta
        return kernel(ns, ws, x0s, law, eps, tol, out)


class SampledBlanketProfile(SampledProfile):
    """A binary-support oracle (or k-RR) by its privacy blanket (docs/theory.md §2.7(c)-(d)):
    each reporting other is a blanket draw with probability g (the structure's blanket weight).
    Positively correlated laws (OLH) use the dominating product law, as BlanketProfile does."""

    def __init__(self, n: int, st: ShuffleStructure, sampling: Sampling,
                 block_frac: float = N_BLOCK_FRAC, c_frac: float = C_BLOCK_FRAC,
                 j_frac: float = BL.J_FRAC, n11_groups: int = BL.N11_GROUPS):
        if not isinstance(st, ShuffleStructure):
            raise TypeError(f"structure must be a ShuffleStructure, got {type(st).__name__}")
        if not st.independent and st.p11 >= st.a * st.a:
            st = st.dominating_independent()
        super().__init__(n, st.eps0, sampling)
        self.structure = st
        self.block_frac, self.c_frac = block_frac, c_frac
        self.j_frac, self.n11_groups = j_frac, n11_groups
        self.name = "sampled_blanket"
        self.label = f"privacy blanket, {st.oracle}, {_scheme_label(sampling)} (§2.7)"

    def unsupported(self) -> str | None:
        """The substitution sum costs (blocks of c) x (window of K2) terms per evaluation: above
        BLANKET_WORK it is skipped (the general bound still answers)."""
        st = self.structure
        if self.sampling.remove or not st.kernel_ready:
            return None
        wt, _ = self.sampling.weights()
        count = (self.n - 1) * wt * st.gamma if self.sampling.poisson else \
            self.sampling.size * st.gamma
        a = float(st.a)
        work = 2.0 * (18.0 / self.c_frac) * (20.0 * math.sqrt(count * a * (1.0 - a)) + 10.0)
        if not st.independent:
            work *= 8.0  # pieces of N11 and the tail steps of pair_group_excess
        if work > BLANKET_WORK:
            return (f"the blanket substitution sum needs about {work:.2g} terms per evaluation "
                    f"at n={self.n} (limit {BLANKET_WORK:.0e})")
        return None

    def _build(self, tol):
        """The blocks of N (add/remove) or of (N, c) (substitution) and the kernel's record,
        built once per window tolerance."""
        st = self.structure
        cb = self.sampling.count_law(st.gamma, st.gamma_c, tol, self.block_frac)
        wt, wtc = self.sampling.weights()
        if self.sampling.remove:
            law = record(RemoveBlanketLaw, x1=cb.x1, s=cb.s, sc=cb.sc, wt=wt, wtc=wtc, a=st.a,
                         ac=1 - st.a, gce=st.gamma_c_times, ce=st.expm1_eps0,
                         q0_power=cb.q0_power)
            return cb.ns, cb.ws, cb.x0s, law, cb.outside
        blocks = record(BlanketBlocksLaw, x1=cb.x1, s=cb.s, sc=cb.sc, wt=wt, g=st.gamma)
        c_lo, mass, tau, shift, out_c = subst_blanket_blocks(cb.ns, cb.ws, cb.x0s, blocks,
                                                             self.c_frac, tol)
        if st.independent:
            law = record(IndepLaw, a=st.a, ac=1 - st.a, gc=st.gamma_c_times, a1=st.a1,
                         c=st.expm1_eps0, eps0=st.eps0)
        else:
            rest = st.p11 + st.p00
            pi = st.p11 / rest if rest > 0 else Fraction(0)
            law = record(PairLaw, pj=2 * st.p10, pjc=1 - 2 * st.p10, pi=pi, pic=1 - pi,
                         gc=st.gamma_c_times, c=st.expm1_eps0, eps0=st.eps0,
                         j_frac=self.j_frac, max_groups=self.n11_groups)
        return c_lo, mass, tau, shift, law, cb.outside + out_c

    def _delta(self, eps, tol):
        st = self.structure
        wt, wtc = self.sampling.weights()
        if self.sampling.remove and wtc <= 0.0:
            return 1.0
        if not st.kernel_ready:
            # joint convexity: H(P||Q) <= wt H(user 1's reports), at most wt
            return wt if self.sampling.remove else min(1.0, wt * st.local_delta(eps))
        eps = min(eps, EXP_MAX)
        if self.sampling.remove:
            ns, ws, x0s, law, out = self.tables(tol)
            return remove_blanket_delta(ns, ws, x0s, law, eps, tol, out)
        ms, wb, taus, sfs, law, out = self.tables(tol)
        kernel = subst_blanket_indep if st.independent else subst_blanket_pair
        return kernel(ms, wb, taus, sfs, law, self.cap, eps, tol, out)


class SampledCountLowerProfile(SampledProfile):
    """Exact attack (docs/theory.md §2.7(e)): every other user holds x3, and the analyst counts
    the reports of one class (binary RR: the reports "1"; an oracle: "supports x1, not x3").
    A reporting other lands in it with probability ``so``; user 1 with ``u1`` on dataset D and
    ``u2`` on D' (``u2=None``: user 1 absent, add/remove). Complements are passed (``soc``,
    ``u1c``, ``u2c``), never formed by subtraction."""

    upper = False

    def __init__(self, n: int, eps0: float, sampling: Sampling, so, soc, u1, u1c, u2=None,
                 u2c=None, label: str = "binary RR"):
        super().__init__(n, eps0, sampling)
        self.name = "lower_sampled"
        self.label = f"lower bound: {label} attack, {_scheme_label(sampling)} (§2.7(e))"
        wt, wtc = sampling.weights()
        if sampling.poisson:
            big_n, s, sc = n - 1, wt * so, wtc + wt * soc
            coef = lambda u, uc: (wt * u, wtc + wt * uc)  # noqa: E731
            q_pair = (0.0, 1.0) if u2 is None else coef(u2, u2c)
        else:
            big_n, s, sc = sampling.size - 1, so, soc
            coef = lambda u, uc: (wtc * so + wt * u, wtc * soc + wt * uc)  # noqa: E731
            q_pair = (so, soc) if u2 is None else coef(u2, u2c)
        a1, b1 = coef(u1, u1c)
        self._args = record(CountLaw, big_n=big_n, s=s, sc=sc, a1=a1, b1=b1, a2=q_pair[0],
                            b2=q_pair[1])
        # Poisson: the view (number of reports, class count), a refinement of the class count,
        # unless its cost (window of T x tail of V) is above ATTACK_WORK: then the count alone
        self._poisson = None
        if sampling.poisson:
            sd_t = math.sqrt(n * wt * wtc)
            sd_v = math.sqrt(n * wt * so * soc)
            if (18.0 * sd_t + 1.0) * (10.0 * sd_v + 10.0) <= ATTACK_WORK:
                self._poisson = record(PoissonCountLaw, n=n, g=wt, gc=wtc, so=so, soc=soc,
                                       u1=u1, u1c=u1c, u2=0.0 if u2 is None else u2,
                                       u2c=1.0 if u2 is None else u2c, remove=u2 is None)
            else:
                self.label += " (class count only at this n)"

    def _delta(self, eps, tol):
        if self.sampling.remove and self.sampling.weights()[1] <= 0.0:
            return 1.0
        if self._poisson is not None:
            return round_down(poisson_count_attack_delta(self._poisson, eps, max(tol, 1e-40)))
        return round_down(count_attack_delta(self._args, eps, max(tol, 1e-40)))

    def class_count_only(self) -> SampledProfile | None:
        """Poisson: the same attack seen through the class count alone (a post-processing of
        its view, so a smaller lower bound), about 100x cheaper: it starts the search for this
        one's eps. None for fixed size (the class count is the whole view there)."""
        if self._poisson is None:
            return None
        return _ClassCountProfile(self.n, self.eps0, self.sampling, self._args)


class _ClassCountProfile(SampledProfile):
    """The attack of a SampledCountLowerProfile seen through the class count alone."""

    upper = False

    def __init__(self, n: int, eps0: float, sampling: Sampling, args: CountLaw):
        super().__init__(n, eps0, sampling)
        self._args = args

    def _delta(self, eps, tol):
        return round_down(count_attack_delta(self._args, eps, max(tol, 1e-40)))


class SampledSplitLowerProfile(SampledProfile):
    """Exact attack on an oracle under substitution (docs/theory.md §2.7(e)): §2.6(c)'s view
    (reports supporting x1 alone, x1' alone, or neither), a silent user merged into "neither".
    Poisson: n users whose class probabilities are gamma times the unsampled ones; fixed size:
    m reports, user 1's likelihood ratios mixed with 1 at weight m/n."""

    upper = False

    def __init__(self, n: int, st: ShuffleStructure, sampling: Sampling):
        if st.t3 is None:
            raise ValueError(f"no oracle-specific attack is implemented for {st.describe()} "
                             "(it needs k >= 3 items)")
        super().__init__(n, st.eps0, sampling)
        self.structure = st
        self.name = "lower_sampled"
        self.label = f"lower bound: {st.oracle} attack, {_scheme_label(sampling)} (§2.7(e))"
        big_a, big_b, t = st.a1 / st.a, (1 - st.a1) / (1 - st.a), st.t3
        if sampling.poisson:
            g = Fraction(sampling.rate)
            pj = 2 * g * big_b * t
            ro = (1 - g * (big_a + big_b) * t) / (1 - pj)
            self._c = st.expm1_eps0
            users = n
        else:
            eta = Fraction(sampling.size, n)
            pj = 2 * big_b * t
            ro = 1 - eta * (big_a - big_b) * t / (1 - pj)
            self._c = float(eta * (big_a - big_b) / big_b) if st.kernel_ready else math.inf
            users = sampling.size
        self._users = users
        self._law = None
        if st.kernel_ready and math.isfinite(self._c):
            self._law = record(AttackLaw, pj=float(pj), pjc=float(1 - pj),
                               one_minus_ro=float(1 - ro), ro=float(ro), c=self._c,
                               eps0=self.cap)

    def _delta(self, eps, tol):
        if self._law is None:
            return 0.0  # trivially a lower bound
        return round_down(split_attack_delta(self._users, self._law, min(eps, EXP_MAX),
                                             max(tol, 1e-40)))


def _scheme_label(s: Sampling) -> str:
    what = f"gamma={s.gamma:g}" if s.poisson else f"m={s.m} of n"
    return f"{what}, {s.relation.replace('_', '/')}"


# ---------------------------------------------------------------------------------------------
# Which bounds apply
# ---------------------------------------------------------------------------------------------

def upper_profiles(n: int, sampling: Sampling, eps0: float | None = None, k: int | None = None,
                   st: ShuffleStructure | BinaryStructure | None = None) -> list[SampledProfile]:
    """Every sound upper profile for a sampled round of: any eps0-LDP randomizer (eps0), k-RR
    (eps0 and k), or the oracle with structure st."""
    if st is None:
        if eps0 is None:
            raise TypeError("upper_profiles needs eps0 (and k for k-RR) or st")
        if k is not None:
            st = krr_structure(k, eps0)
    out: list[SampledProfile] = []
    if isinstance(st, BinaryStructure):  # a binary randomizer by its two probabilities
        return [SampledGeneralProfile(n, st.eps0, sampling)] if st.eps0 <= EXP_MAX else []
    e0 = st.eps0 if st is not None else eps0
    if e0 is not None and e0 <= EXP_MAX:
        out.append(SampledGeneralProfile(n, e0, sampling))
    if st is not None:
        out.append(SampledBlanketProfile(n, st, sampling))
    return out


def lower_profile(n: int, sampling: Sampling, eps0: float | None = None, k: int | None = None,
                  st: ShuffleStructure | BinaryStructure | None = None) -> SampledProfile | None:
    """The exact attack for the same randomizer: binary RR for any eps0-LDP randomizer (and
    k = 2), the oracle's (k-RR's) class count under add/remove and its split attack under
    substitution; None when no attack applies (an oracle on fewer than 3 items, substitution)."""
    if st is None:
        if eps0 is None:
            raise TypeError("lower_profile needs eps0 (and k for k-RR) or st")
        if k is None or k < 3:
            p, pc = rr_split(eps0)
            if sampling.remove:
                return SampledCountLowerProfile(n, eps0, sampling, pc, p, p, pc)
            return SampledCountLowerProfile(n, eps0, sampling, pc, p, pc, p, p, pc)
        st = krr_structure(k, eps0)
    if isinstance(st, BinaryStructure):  # its count, the others holding 0 (rounded inward)
        law = BinaryLaw.of(st.p1, st.q0, upper=False)
        if sampling.remove:
            return SampledCountLowerProfile(n, st.eps0, sampling, law.b, law.bc, law.a, law.ac,
                                            label=st.oracle)
        return SampledCountLowerProfile(n, st.eps0, sampling, law.b, law.bc, law.b, law.bc,
                                        law.a, law.ac, label=st.oracle)
    if sampling.remove:
        big_a, big_b = st.a1 / st.a, (1 - st.a1) / (1 - st.a)
        so, u1 = big_b * st.p10, big_a * st.p10
        return SampledCountLowerProfile(n, st.eps0, sampling, float(so), float(1 - so),
                                        float(u1), float(1 - u1), label=st.oracle)
    if st.t3 is None:
        return None
    return SampledSplitLowerProfile(n, st, sampling)


# ---------------------------------------------------------------------------------------------
# Connect-the-dots grid (events.py composes sampled rounds from it)
# ---------------------------------------------------------------------------------------------

DOTS_FLOOR = 1e-30  # the dots grid runs up to where the profile is below this


def dots_grid(delta_fn, cap: float, eps0: float, sampling: Sampling, points: int) -> np.ndarray:
    """eps points at which a sampled round's profile is evaluated for its connect-the-dots PLD
    (pld.profile_atoms_at): ``points`` evenly spread on [0, e_hi], e_hi the first of s, 2 s,
    4 s, ... (s = log(1 + wt (e^eps0 - 1))/64) where the profile is at most DOTS_FLOOR, then
    the cap when it is finite and beyond (the profile is 0 there; the chord from e_hi to it
    lies above the convex profile). Poisson add/remove has no cap: the profile at e_hi becomes
    the infinity atom, e_hi being where the profile is at most DOTS_FLOOR or, past the scale s 64,
    where it no longer falls (to 1e-12 of itself over a doubling): the report count's infinite
    loss has mass about gamma^n, so at small n the profile levels off at it (n = 1: at gamma,
    from eps = 0) and a grid run on to eps = 700 overflowed the dots' e^eps. The infinity atom
    is the profile's value at e_hi whatever the rule, so the rule decides tightness only."""
    wt, _ = sampling.weights()
    top = min(cap, EXP_MAX)
    scale = math.log1p(wt * math.expm1(min(eps0, EXP_MAX)))
    e_hi = min(top, max(1e-9, scale / 64.0))
    value = delta_fn(e_hi)
    while e_hi < top and value > DOTS_FLOOR:
        nxt = min(top, 2.0 * e_hi)
        after = delta_fn(nxt)
        if not math.isfinite(cap) and e_hi >= scale and after >= value * (1.0 - 1e-12):
            break  # level: the rest of the profile is (all but) its infinity atom
        e_hi, value = nxt, after
    grid = np.linspace(0.0, e_hi, points)
    if math.isfinite(cap) and cap > e_hi:
        grid = np.append(grid, min(cap, EXP_MAX))
    return grid


# ---------------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------------

class NoFiniteEpsilon(ValueError):
    """No eps certifies the target delta (e.g. Poisson add/remove with delta below gamma^n, the
    chance that all n users report, which the count then reveals)."""


def _eps_max(profile: SampledProfile, delta: float, tol: float) -> float:
    """An eps at which the profile is at most delta: its cap, or (Poisson add/remove) the first
    of 2^i x (a rough scale) that qualifies; NoFiniteEpsilon when even eps = EXP_MAX does not."""
    if math.isfinite(profile.cap):
        return profile.cap
    wt, _ = profile.sampling.weights()
    e = max(1e-6, math.log1p(wt * math.expm1(min(profile.eps0, EXP_MAX))))
    while profile.delta(e, tol) > delta:
        if e >= EXP_MAX:
            raise NoFiniteEpsilon(
                f"no eps <= {EXP_MAX:g} certifies delta={delta:g}: under add/remove "
                f"with Poisson participation the report count reveals user 1 with probability "
                f"about gamma^n (every user reported); delta({EXP_MAX:g}) = "
                f"{profile.delta(EXP_MAX, tol):.3g}")
        e = min(EXP_MAX, 4.0 * e)
    return e


def profile_epsilon(profile: SampledProfile, delta: float, eps_max: float | None = None,
                    guess: float | None = None) -> float:
    """eps(delta) of one sampled profile: the upper end of the final bracket for an upper
    bound, the lower end for a lower bound (solve.epsilon_for_delta); ``guess`` is where the
    search starts (default: just below eps_max when it is given)."""
    tol = window_tol(delta)
    if eps_max is None:
        eps_max = _eps_max(profile, delta, tol)
    elif guess is None:
        guess = eps_max * (1.0 - 1e-3)
    if profile.delta(eps_max, tol) > delta:
        if profile.upper:
            raise NoFiniteEpsilon(f"{profile.label}: delta({eps_max:g}) exceeds {delta:g}")
        return eps_max
    return epsilon_for_delta(lambda e: profile.delta(e, tol), delta, eps_max,
                             upper=profile.upper, guess=guess)


def sampled_structure(oracle) -> ShuffleStructure | BinaryStructure | None:
    """The blanket structure of a randomizer whose round is sampled (blanket.structure): a
    binary-support one or None (the general bound at its eps0, also for a table randomizer,
    whose own blanket, accounting/table.py, is derived for every user reporting); ValueError
    for x + noise, whose blanket (accounting/scalar.py) is derived for every user reporting."""
    st = BL.structure(oracle)
    if isinstance(st, TableStructure):
        return None
    if isinstance(st, ScalarStructure):
        raise ValueError(f"{oracle.describe()}: participation sampling (gamma=, sample=) of an "
                         "x + noise randomizer is not accounted: its bounds are for every user "
                         "reporting (account the round without gamma= or sample=)")
    return st


def _plan(n, eps0, k, oracle, gamma, sample, relation):
    """(sampling, eps0, k, structure, params) of a sampled query, validated."""
    sampling = Sampling.of(n, gamma, sample, relation)
    params = dict(n=sampling.n, eps0=eps0, k=k, delta0=0.0, **sampling.describe())
    if oracle is not None:
        if eps0 is not None or k is not None:
            raise ValueError("an oracle states its own (realised) eps0 and domain: pass oracle= "
                             "alone, without eps0 or k")
        st = sampled_structure(oracle)
        k_or = getattr(oracle, "k", None)
        if st is None:  # no blanket law stated: the general bound at its replacement eps
            eps0 = V.local_eps0(oracle.replacement_eps, "the randomizer's replacement eps")
            return sampling, eps0, None, None, dict(params, eps0=eps0, k=k_or,
                                                    oracle=oracle.describe(), no_attack=True)
        return sampling, st.eps0, None, st, dict(params, eps0=st.eps0, k=k_or,
                                                 oracle=st.describe())
    if eps0 is None:
        raise TypeError("epsilon()/delta() need eps0 (any eps0-LDP randomizer) or oracle=")
    eps0 = V.local_eps0(eps0)
    k = None if k is None else V.domain_size(k)
    return sampling, eps0, k, None, dict(params, eps0=eps0, k=k)


def _lower(bounds: list, params: dict, wanted: bool, solve, sampling, eps0, k, st):
    """Append the exact attack's Bound (its value by ``solve(profile)``, or why there is none)
    to ``bounds`` and return its value (None when not computed)."""
    no_attack = params.pop("no_attack", False)
    if not wanted:
        return None
    lp = None if no_attack else lower_profile(sampling.n, sampling, eps0, k, st)
    if lp is None:
        why = (f"no attack on {params['oracle']} is implemented" if no_attack
               else "no attack on an oracle with fewer than 3 items")
        bounds.append(Bound("lower", "lower bound", None, False, why))
        return None
    t0 = compute_time()
    low = solve(lp)
    bounds.append(Bound(lp.name, lp.label, low, False, "", compute_time() - t0))
    return low


def _upper_bounds(profiles, evaluate) -> list:
    """A timed Bound per upper profile: ``evaluate(prof)`` -> (value, note) where the profile
    applies, else None with its reason."""
    bounds = []
    for prof in profiles:
        t0 = compute_time()
        value, note = None, prof.unsupported()
        if note is None:
            value, note = evaluate(prof)
        bounds.append(Bound(prof.name, prof.label, value, True, note, compute_time() - t0))
    return bounds


def epsilon(n, eps0=None, delta=None, *, k=None, oracle=None, gamma=None, sample=None,
            relation=None, lower: bool = True):
    """Central eps at delta of one sampled shuffle round: the smallest sound upper bound, the
    bound that gave it, and the exact attack's eps beside it (bounds.AmplificationResult;
    ``amplification.epsilon(..., gamma=/sample=)`` calls this). NoFiniteEpsilon (a ValueError)
    when no eps certifies delta (Poisson add/remove: the count reveals user 1 with probability
    gamma^n)."""
    if delta is None:
        raise TypeError("epsilon() needs delta")
    sampling, eps0, k, st, params = _plan(n, eps0, k, oracle, gamma, sample, relation)
    delta = V.probability_open(delta, "delta")
    start = compute_time()

    def solve_upper(prof):
        try:
            return profile_epsilon(prof, delta), ""
        except NoFiniteEpsilon as err:
            return None, str(err)

    bounds = _upper_bounds(upper_profiles(sampling.n, sampling, eps0, k, st), solve_upper)
    if not any(b.applicable for b in bounds):
        raise NoFiniteEpsilon(f"no sound eps at delta={delta:g}: " + "; ".join(
            b.note for b in bounds))
    best, value = best_upper(bounds)

    def solve(lp):
        top = min(value, lp.cap)
        coarse = lp.class_count_only() if isinstance(lp, SampledCountLowerProfile) else None
        guess = None if coarse is None else profile_epsilon(coarse, delta, eps_max=top)
        return profile_epsilon(lp, delta, eps_max=top, guess=guess)

    low = _lower(bounds, params, lower, solve, sampling, eps0, k, st)
    return AmplificationResult("epsilon", value, best.name, low, tuple(bounds),
                               dict(params, delta=delta), compute_time() - start)


def delta(n, eps0=None, eps=None, *, k=None, oracle=None, gamma=None, sample=None,
          relation=None, lower: bool = True):
    """Central delta at eps of one sampled shuffle round (see :func:`epsilon`)."""
    if eps is None:
        raise TypeError("delta() needs eps")
    sampling, eps0, k, st, params = _plan(n, eps0, k, oracle, gamma, sample, relation)
    eps = V.nonnegative(eps, "eps")
    start = compute_time()
    bounds = _upper_bounds(upper_profiles(sampling.n, sampling, eps0, k, st),
                           lambda prof: (prof.delta_at(eps), ""))
    best, value = best_upper(bounds)
    low = _lower(bounds, params, lower, lambda lp: lp.delta_at(eps), sampling, eps0, k, st)
    return AmplificationResult("delta", value, best.name, low, tuple(bounds),
                               dict(params, eps=eps), compute_time() - start)
