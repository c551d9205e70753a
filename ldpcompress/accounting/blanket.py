"""Tight shuffle accounting for the library's frequency oracles: the privacy blanket
(Balle, Bell, Gascon, Nissim 2019; optimal decomposition of Su, Cheng, Wang 2025; blanket
divergence, arXiv 2601.19154), docs/theory.md §2.5-2.7.

Every oracle here is binary-support: with w the law of a report under a reference measure and
b(y, x) = 1 iff report y supports item x, R_x(y) = w(y) * (A if b(y, x) else B). So
a1 = Pr_{R_x}[b(Y, x) = 1] = A a and 1 - a1 = B (1 - a), a = Pr_w[b(Y, x) = 1]; the blanket
weight is gamma = B (inf_x R_x(y) >= B w(y)), the replacement eps0 = log(A/B), and the bound
only needs the law of (b1, b2) = (b(Y, x1), b(Y, x1')) under w:

    delta(eps) <= E_{M'}[ g(M') ],   M' = 1 + Bin(n-1, gamma),
    g(m) = (gamma / m) E[ (sum_{i<=m} L_i)_+ ],  L = e^(eps0 b1) - e^eps e^(eps0 b2)   (b's iid ~ w).

``structure(oracle)`` asks the oracle object for (a, a1, law), which it derives from itself as
implemented (its realised a0/a1, field, hash family, buckets), exactly in rational arithmetic
on the realised floats (``ldpcompress.randomizers.structure``).

API (what the accountant and amplification.epsilon call):

    st = structure(oracle)                    # ShuffleStructure of an oracle object, exact law
    up = BlanketProfile(n, st)                # Profile: delta(eps, tol), delta_at(eps), upper=True
    lo = OracleLowerProfile(n, st)            # Profile, upper=False (any oracle on k >= 3 items)
    up.check_oracle(other)                    # ValueError unless `other` has the same structure
    blanket_profile(n, oracle), lower_profile(n, oracle), profile_epsilon(profile, delta)

Blocking in M'. g is non-increasing in m: the view with m + 1 blanket draws is the view with m
draws plus one fresh independent draw from w, shuffled in -- a post-processing, so its
hockey-stick divergence cannot be larger. Hence a block of consecutive M' values may carry
g at its smallest member (the least private one); blocks lying wholly beyond 3 (5) standard
deviations merge 4 (16) base blocks. Correlated laws (subset selection) block only the law of
N11 over runs of J (kernels/blanket_pair.py, pair_group_excess; docs/theory.md §2.5). The cost in
tightness of both is measured by bench/amplification.py (its oracle section).
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..core import validate as V
from ..core.numerics import EXP_MAX
from ..kernels.binomial import binom_window
from ..kernels.blanket_attack import AttackLaw, TripleLaw, split_attack_delta, triple_attack_delta
from ..kernels.blanket_indep import GROUPS_PER_SD, IndepLaw, indep_tables, indep_upper_delta
from ..kernels.blanket_pair import PairLaw, pair_upper_delta
from ..kernels.mblocks import m_blocks
from ..kernels.records import record
from ..randomizers.structure import BinaryStructure, ShuffleStructure
from ..randomizers.table_law import TableStructure
from .checks import realised_eps0, structure
from .profiles import Profile
from .rounding import fraction_down, fraction_up, round_down

__all__ = ["BLOCK_FRAC", "BLOCK_REL", "BLOCK_REL_PAIR", "J_FRAC", "N11_GROUPS", "structure",
           "require_structure", "realised_eps0", "law_key", "OracleProfile",
           "BlanketProfile", "OracleLowerProfile", "profile_epsilon", "blanket_profile",
           "lower_profile", "krr_structure", "KRRPairProfile", "KRRAttackProfile"]


TRIPLE_MAX_WORK = 2e7  # atoms per evaluation of the natural-dataset attack (~0.3 s)
TRIPLE_TOL = 1e-9       # its windows (at most; 1e-4 of the target delta): dropped mass
                        # only lowers a lower bound
BLOCK_FRAC = 0.125  # default block width in M': an eighth of its standard deviation
BLOCK_REL = 5e-5    # ... or this fraction of the mean of M' if wider (large n: few blocks)
BLOCK_REL_PAIR = 2e-4  # the same for correlated laws, whose per-block cost grows as sqrt(n)
J_FRAC = 1e-4       # correlated laws: J blocks sharing an N11 law shift theta by <= this sd of V
N11_GROUPS = 32     # correlated laws: unit pieces of theta per J before chords merge them


def law_key(oracle) -> tuple | None:
    """What the shuffled upper bounds of a randomizer depend on, without its identity: its
    blanket law (a, a1, P(1,1), P(1,0), independence), or its replacement eps when it states no
    law; None for x + noise. Equal keys give equal upper bounds (e.g. k-RR and subset selection
    with d = 1 at the same eps), so searches over several randomizers can share them."""
    st = structure(oracle)
    if st is None:
        return ("generic", float(oracle.replacement_eps))
    if not isinstance(st, ShuffleStructure):
        return None
    return ("blanket", st.a, st.a1, st.p11, st.p10, st.independent)


def require_structure(oracle) -> ShuffleStructure:
    """``structure(oracle)``, which must be a binary-support one (a blanket bound of this
    module needs it; x + noise has its own, accounting/scalar.py)."""
    st = structure(oracle)
    if st is None:
        raise ValueError(f"{oracle.describe()} states no blanket structure "
                         "(shuffle_structure() is None): no privacy-blanket bound applies")
    if not isinstance(st, ShuffleStructure):
        kind = ("binary (its count)" if isinstance(st, BinaryStructure) else
                "table" if isinstance(st, TableStructure) else "scalar (x + noise)")
        raise ValueError(f"{oracle.describe()} states a {kind} structure: the "
                         "binary-support blanket does not apply (amplification.epsilon and "
                         "delta use its own)")
    return st


# ---------------------------------------------------------------------------------------------
# Profiles (same interface as ldpcompress.accounting.profiles.Profile).
# ---------------------------------------------------------------------------------------------

class OracleProfile(Profile):
    """A profile tied to one oracle's structure; ``check_oracle`` refuses any other oracle.

    Parameters
    ----------
    checked : bool, default False
        n was validated by the caller (a query that builds the profile validates its
        arguments once at its entry, accounting/amplification.py).
    """

    def __init__(self, n: int, st: ShuffleStructure, checked: bool = False):
        if not isinstance(st, ShuffleStructure):
            raise TypeError(f"structure must be a ShuffleStructure, got {type(st).__name__}")
        n = n if checked else V.shuffle_users(n)
        super().__init__(n, st.eps0)
        self.structure = st

    def check_oracle(self, oracle) -> None:
        """Raise ValueError unless ``oracle`` has exactly the structure this bound was built for."""
        other = require_structure(oracle)
        if other.identity != self.structure.identity:
            raise ValueError(f"this bound was derived for {self.structure.describe()}, not for "
                             f"{other.describe()}: "
                             "a blanket bound applies only to the oracle it was derived from")


class BlanketProfile(OracleProfile):
    """Blanket upper bound delta(eps) for one oracle (docs/theory.md §2.5), blocked in M'.

    ``block_frac`` sets the block width (a fraction of the standard deviation of M');
    ``block_frac=0`` sums every M' on its own (unblocked). For the correlated laws (subset
    selection, ``exact_law``) blocks of consecutive counts J of draws supporting exactly one of
    the two items share the law of N11 (draws supporting both) of their largest J, as wide as
    moves the threshold by ``j_frac`` standard deviations, and ``n11_groups`` caps the pieces of
    N11 per J before chords merge them (0: never); ``j_frac=0, n11_groups=0`` is the exact sum
    (kernels/blanket_pair.py, pair_group_excess; docs/theory.md §2.5).

    Parameters
    ----------
    checked : bool, default False
        n was validated by the caller (a query that builds the profile validates its
        arguments once at its entry, accounting/amplification.py).
    """

    name, label, upper = "blanket", "privacy blanket (Balle et al. 2019)", True

    def __init__(self, n: int, st: ShuffleStructure, block_frac: float = BLOCK_FRAC,
                 j_frac: float = J_FRAC, n11_groups: int = N11_GROUPS,
                 exact_law: bool = False, groups_per_sd: int = GROUPS_PER_SD,
                 checked: bool = False):
        # positively correlated laws (OLH) use the dominating product law unless exact_law:
        # the fast independent kernel, proven no smaller (ShuffleStructure.dominating_independent)
        block_frac = V.nonnegative(block_frac, "block_frac")
        if not math.isfinite(block_frac) or block_frac > 10.0:
            raise ValueError(f"block_frac must be in [0, 10] (block width in standard deviations "
                             f"of M'), got {block_frac!r}")
        j_frac = V.nonnegative(j_frac, "j_frac")
        if not j_frac <= 1.0:
            raise ValueError(f"j_frac must be in [0, 1] (standard deviations), got {j_frac!r}")
        n11_groups = V.integer_at_least(n11_groups, "n11_groups", 0, 2 ** 40)
        self.groups_per_sd = V.integer_at_least(groups_per_sd, "groups_per_sd", 1, 2 ** 40)
        exact_law = bool(exact_law)
        if not exact_law and not st.independent and st.p11 >= st.a * st.a:
            st = st.dominating_independent()
        super().__init__(n, st, checked)
        self.block_frac = block_frac
        self.j_frac = j_frac
        self.n11_groups = n11_groups
        self._tables: dict[float, tuple] = {}
        self._indep: tuple | None = None  # (the M' blocks, their tables)
        s = st
        if not s.kernel_ready:
            return
        self._gamma, self._gamma_c = s.gamma, s.gamma_c
        common = dict(gc=s.gamma_c_times, c=s.expm1_eps0, eps0=self.eps0)
        if s.independent:
            self._law = record(IndepLaw, a=float(s.a), ac=float(1 - s.a), a1=float(s.a1),
                               **common)
        else:
            # rest = 0 (binary RR; subset selection with k = 2: one of the two items is always
            # supported): no draw is uninformative (N11 = 0), the split is immaterial
            rest = s.p11 + s.p00
            pi = s.p11 / rest if rest > 0 else Fraction(0)
            self._law = record(PairLaw, pj=float(2 * s.p10), pjc=float(1 - 2 * s.p10),
                               pi=float(pi), pic=float(1 - pi),
                               j_frac=j_frac, max_groups=n11_groups, **common)

    def tables(self, tol: float):
        for built, tab in self._tables.items():
            if built <= tol:
                return tab
        sd = math.sqrt(max(self.n - 1, 0) * self._gamma * self._gamma_c)
        # g(m) changes by a relative ~ (log(1/delta)) w/m over a block of width w: at large n a
        # block of BLOCK_REL of the mean costs ~1e-3 of delta and keeps the blocks few
        # (bench/amplification.py measures the loss against sd/8 blocks)
        width = max(1, int(sd * self.block_frac))
        if self.block_frac > 0.0:
            rel = BLOCK_REL if self.structure.independent else BLOCK_REL_PAIR
            width = max(width, int(rel * (self.n - 1) * self._gamma))
        tab = m_blocks(self.n, self._gamma, self._gamma_c, width, tol, self.block_frac > 0.0)
        self._tables[tol] = tab
        return tab

    def indep_tables(self, tol: float):
        """The eps-independent K2 groups and K1 excess grid of every M' block (indep_tables)."""
        ms, _, _ = self.tables(tol)
        if self._indep is None or self._indep[0] is not ms:  # built for these blocks
            self._indep = (ms, indep_tables(ms, self._law.a, self._law.ac, tol,
                                            self.groups_per_sd))
        return self._indep[1]

    def _delta(self, eps, tol):
        if not self.structure.kernel_ready:
            return self.structure.local_delta(eps)
        eps = min(eps, EXP_MAX)
        ms, ws, out = self.tables(tol)
        if self.structure.independent:
            return indep_upper_delta(ms, ws, out, self.indep_tables(tol), self._law, eps)
        return pair_upper_delta(ms, ws, out, self._law, eps, tol)


class OracleLowerProfile(OracleProfile):
    """Exact delta of an attack on this oracle (docs/theory.md §2.6(c)), a lower bound on its
    shuffled privacy: datasets (x1, x3, ..., x3) vs (x1', x3, ..., x3) with the oracle's attack
    items, seen through the post-processing that keeps of each report only whether it supports
    x1 alone, x1' alone (among x1, x1', x3) or neither. Needs only a, a1 and
    t3 = Pr_w[b1 = 1, b2 = 0, b3 = 0] (equal to its mirror image for every oracle here).

    Parameters
    ----------
    checked : bool, default False
        n was validated by the caller (as for :class:`OracleProfile`).
    """

    name, label, upper = "lower_oracle", "lower bound: oracle attack", False

    def __init__(self, n: int, st: ShuffleStructure, checked: bool = False):
        super().__init__(n, st, checked)
        if st.t3 is None:
            raise ValueError(f"no oracle-specific attack is implemented for {st.describe()} "
                             "(it needs k >= 3 items)")
        self.items = st.attack_items
        self.eps0 = st.eps0_lower  # a lower bound: delta = 0 from the exact eps0 down, not up
        a, a1, t = st.a, st.a1, st.t3
        big_a, big_b = a1 / a, (1 - a1) / (1 - a)  # densities of R_x1 w.r.t. w (exact)
        pj = 2 * big_b * t                            # Pr_{R_x3}[first two classes]
        # likelihood ratio of the merged class, the same under x1 and x1': ro and 1 - ro
        rest = 1 - pj
        self._law = record(AttackLaw, pj=float(pj), pjc=float(1 - pj),
                           ro=float((1 - (big_a + big_b) * t) / rest),
                           one_minus_ro=float((big_a - big_b) * t / rest),
                           c=st.expm1_eps0, eps0=self.eps0)
        self._triple = None
        if st.independent and t == a * (1 - a) ** 2 and st.kernel_ready \
                and self.triple_work() <= TRIPLE_MAX_WORK:
            e0_inv = big_b / big_a  # e^-eps0, exact
            self._triple = record(TripleLaw, a=float(a), ac=float(1 - a), a1=float(a1),
                                  a1c=float(1 - a1), c=fraction_up(1 / e0_inv - 1),
                                  scale=fraction_down(1 - e0_inv), eps0=self.eps0)

    def triple_work(self) -> float:
        """Atoms sorted in one evaluation of the natural-dataset attack (triple_attack_delta):
        M0 window x K window x K' window."""
        st = self.structure
        a, a1 = float(st.a), float(st.a1)
        lo0, hi0, _ = binom_window(self.n, 1.0 - a1, a1, TRIPLE_TOL)
        lo, hi, _ = binom_window(hi0, a, 1.0 - a, TRIPLE_TOL)
        lo1, hi1, _ = binom_window(self.n - lo0, a, 1.0 - a, TRIPLE_TOL)
        return float(hi0 - lo0 + 1) * (hi - lo + 1) * (hi1 - lo1 + 1)

    def _delta(self, eps, tol):
        if not self.structure.kernel_ready:
            return 0.0  # trivially a lower bound
        eps = min(eps, EXP_MAX)
        split = round_down(split_attack_delta(self.n, self._law, eps, max(tol, 1e-40)))
        if self._triple is None:
            return split
        # both are exact deltas of views of the same attack: the richer view is the larger
        return max(split, round_down(triple_attack_delta(
            self.n, self._triple, eps, min(max(1e6 * tol, 1e-300), TRIPLE_TOL))))


# ---------------------------------------------------------------------------------------------
# Convenience: eps(delta) of one profile on its own (tests and the bench); amplification.epsilon
# is the public query, which takes the minimum over every sound bound.
# ---------------------------------------------------------------------------------------------

def profile_epsilon(profile: Profile, delta: float) -> float:
    """eps(delta) of a profile by ldpcompress.accounting.solve (upper end for upper bounds)."""
    from .profiles import window_tol
    from .solve import epsilon_for_delta

    tol = window_tol(delta)
    eps0 = profile.eps0
    if profile.delta(0.0, tol) <= delta:
        return 0.0
    return epsilon_for_delta(lambda e: profile.delta(e, tol), delta, eps0,
                             upper=profile.upper, rtol=1e-6)


def blanket_profile(n: int, oracle, **kw) -> BlanketProfile:
    return BlanketProfile(n, require_structure(oracle), **kw)


def lower_profile(n: int, oracle) -> OracleLowerProfile:
    return OracleLowerProfile(n, require_structure(oracle))


# ---------------------------------------------------------------------------------------------
# k-RR at any n: the pair kernel on k-RR's law (P(1,1) = 0), for the abstract k-RR at eps0.
# ---------------------------------------------------------------------------------------------

def krr_structure(k: int, eps0: float, upper: bool = True) -> ShuffleStructure:
    """k-RR's blanket structure at a stated eps0 (a = 1/k, P(1,1) = 0, P(1,0) = 1/k): a1 =
    1/(1 + (k-1) e^-eps0) as an exact rational of a float rounded so that the structure's eps0
    is >= eps0 (``upper``: its bounds hold for k-RR at eps0, since k-RR at a smaller eps0 is
    k-RR at a larger one followed by a symmetric k-ary channel applied to every report, which
    commutes with the shuffle) or <= eps0 (``upper=False``: for an attack, a lower bound)."""
    x = math.exp(-eps0)  # within one ulp of e^-eps0
    x = x * (1.0 - 2.0 ** -51) if upper else x * (1.0 + 2.0 ** -51)
    a1 = 1 / (1 + (k - 1) * Fraction(x))
    return ShuffleStructure("krr", (("k", k), ("a1", float(a1))), Fraction(1, k), a1,
                            Fraction(0), Fraction(1, k), False,
                            Fraction(1, k) if k >= 3 else None)


class KRRPairProfile(BlanketProfile):
    """k-RR's blanket bound at any n by the correlated-pair kernel on its law (P(1,1) = 0, so
    the sum runs over J alone; docs/theory.md §2.5): the k-RR blanket pair of §2.4(b) without
    its (m, s) tables, which stop at about 1e8 terms."""

    name, label = "krr_pair", "k-RR blanket, pair kernel (§2.5)"

    def __init__(self, n, eps0, k):
        super().__init__(n, krr_structure(k, eps0), exact_law=True)


class KRRAttackProfile(OracleLowerProfile):
    """The §2.6(c) attack on k-RR at eps0 (k >= 3; one window in J), for n where the exact
    §2.6(b) sum is too large: a lower bound (its structure's eps0 is rounded down)."""

    name, label = "lower_krr_attack", "lower bound: k-RR attack (§2.6(c))"

    def __init__(self, n, eps0, k):
        super().__init__(n, krr_structure(k, eps0, upper=False))
