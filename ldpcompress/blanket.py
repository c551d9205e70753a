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

``structure(oracle)`` derives (a, a1, law) from the oracle object as implemented (its realised
a0/a1, field, hash family, buckets), exactly in rational arithmetic on the realised floats.

API (what the accountant and amplification.epsilon call):

    st = structure(oracle)                    # ShuffleStructure of an oracle object, exact law
    up = BlanketProfile(n, st)                # Profile: delta(eps, tol), delta_at(eps), upper=True
    lo = OracleLowerProfile(n, st)            # Profile, upper=False (RAPPOR both, OUE, Hadamard)
    up.check_oracle(other)                    # ValueError unless `other` has the same structure
    blanket_profile(n, oracle), lower_profile(n, oracle), profile_epsilon(profile, delta)

Blocking in M'. g is non-increasing in m: the view with m + 1 blanket draws is the view with m
draws plus one fresh independent draw from w, shuffled in -- a post-processing, so its
hockey-stick divergence cannot be larger. Hence a block of consecutive M' values may carry
g at its smallest member (the least private one); the cost in tightness is measured in
bench/blanket.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .kernels.blanket import (indep_lower_delta, indep_upper_delta, m_blocks, pair_lower_delta,
                              pair_upper_delta)
from . import validate as V
from .profiles import Profile

EPS_CAP = 700.0   # e^eps must stay finite; delta is non-increasing, so delta(700) bounds beyond
BLOCK_FRAC = 0.125  # default block width in M': an eighth of its standard deviation
N11_BLOCK = 4       # correlated laws: consecutive N11 values per block (upper bound, see kernel)


@dataclass(frozen=True)
class ShuffleStructure:
    """Blanket structure of one binary-support oracle (docs/theory.md §2.5).

    ``a`` = Pr_w[b(Y, x) = 1]; ``a1`` = Pr_{R_x}[b(Y, x) = 1] (so A = a1/a, B = (1-a1)/(1-a));
    the law of (b1, b2) under w is given by ``p11`` and ``p10`` (= p01); ``independent`` says
    it is the product Bern(a) x Bern(a). ``oracle`` and ``params`` identify the oracle it was
    derived from. All probabilities are exact rationals of the realised parameters.
    """

    oracle: str
    params: tuple
    a: Fraction
    a1: Fraction
    p11: Fraction
    p10: Fraction
    independent: bool
    # attack (x1, x3..x3): under w, are (b1, b2) independent of b3 and of each other?
    lower_ok: bool = False

    def __post_init__(self):
        if not (0 < self.a < 1 and self.a < self.a1 < 1):
            raise ValueError(f"{self.oracle}: need 0 < a < a1 < 1 for a blanket, got "
                             f"a = {float(self.a)!r}, a1 = {float(self.a1)!r} (the realised "
                             "randomizer is not eps0-DP for finite eps0)")
        if self.p10 * 2 + self.p11 > 1 or self.p11 < 0 or self.p10 < 0:
            raise ValueError(f"{self.oracle}: invalid law of (b1, b2)")

    # -- derived quantities (floats, formed without cancellation from the exact rationals) --
    @property
    def gamma(self) -> float:
        """Blanket weight B = (1 - a1)/(1 - a)."""
        return float((1 - self.a1) / (1 - self.a))

    @property
    def gamma_c(self) -> float:
        """1 - gamma = (a1 - a)/(1 - a)."""
        return float((self.a1 - self.a) / (1 - self.a))

    @property
    def eps0(self) -> float:
        """Replacement eps0 = log(A/B) = log a1 - log a + log(1-a) - log(1-a1), rounded up (a few
        ulps) so that 'delta = 0 for eps >= eps0' is never applied below the exact value."""
        v = _log(self.a1) - _log(self.a) + _log(1 - self.a) - _log(1 - self.a1)
        return v + 8.0 * abs(v) * 2.0 ** -53 + 1e-300

    @property
    def expm1_eps0(self) -> float:
        """e^eps0 - 1 = (a1 - a)/(a (1 - a1)), exact rational to float (inf if it overflows)."""
        v = (self.a1 - self.a) / (self.a * (1 - self.a1))
        try:
            return float(v)
        except OverflowError:
            return math.inf

    @property
    def gamma_c_times(self) -> float:
        """gamma (e^eps0 - 1) = A - B = (a1 - a)/(a (1 - a)) (inf if it overflows)."""
        try:
            return float((self.a1 - self.a) / (self.a * (1 - self.a)))
        except OverflowError:
            return math.inf

    @property
    def kernel_ready(self) -> bool:
        """Whether the double-precision kernels apply (e^eps0 and every probability finite and
        normal); otherwise only the local divergence is used (see ``local_delta``)."""
        return (math.isfinite(self.gamma_c_times) and math.isfinite(self.expm1_eps0)
                and float(self.a) > 1e-300 and float(self.p10) > 1e-300)

    def local_delta(self, eps: float) -> float:
        """H_{e^eps}(R_x1 || R_x1') = P(1,0) (A - e^eps B)_+ (only reports supporting x1 and
        not x1' have a positive part): an upper bound for any n, since the shuffled output
        is a post-processing of user 1's report and independent others. Log space."""
        la = _log(self.a1 * self.p10 / self.a)
        lb = eps + _log((1 - self.a1) * self.p10 / (1 - self.a))
        if lb >= la:
            return 0.0
        return min(1.0, math.exp(la) * -math.expm1(lb - la) * (1 + 8 * 2.0 ** -53) + 1e-300)

    @property
    def p00(self) -> Fraction:
        return 1 - self.p11 - 2 * self.p10

    @property
    def identity(self) -> tuple:
        return (self.oracle, self.params)

    def dominating_independent(self) -> "ShuffleStructure":
        """The product law Bern(a) x Bern(a) with the same oracle identity, valid when
        P(1,1) >= a^2 (positively correlated support bits, e.g. OLH's affine family mod g).

        Proof: with the same marginals, the correlated law is the product law plus
        d (point(0,0) + point(1,1) - point(1,0) - point(0,1)), d = P(1,1) - a^2 >= 0. The values
        l = e^(eps0 b1) - E e^(eps0 b2) satisfy l(0,1) <= l(1,1) <= l(0,0) <= l(1,0) and
        l(0,0) + l(1,1) = l(1,0) + l(0,1): mass moves from the two extremes to the two inner
        values with the mean kept, a mean-preserving contraction. So l_corr <=_cx l_prod, sums
        of iid copies keep the convex order, and E[(sum)_+] (convex) is no larger: the bound
        computed with the product law dominates the exact one.
        """
        if self.independent:
            return self
        if self.p11 < self.a * self.a:
            raise ValueError(f"{self.oracle}: P(1,1) < a^2 (negatively correlated bits); the "
                             "product law does not dominate, use the exact law")
        return ShuffleStructure(self.oracle, self.params, self.a, self.a1, self.a * self.a,
                                self.a * (1 - self.a), True, False)


def _log(x: Fraction) -> float:
    """log of a positive rational without underflow of its float."""
    num, den = x.numerator, x.denominator
    return _log_int(num) - _log_int(den)


def _log_int(v: int) -> float:
    shift = max(0, v.bit_length() - 1000)
    return math.log(v >> shift) + shift * math.log(2.0)


# ---------------------------------------------------------------------------------------------
# Structures derived from the oracle objects as implemented.
# ---------------------------------------------------------------------------------------------

def _indep(name, params, a, a1, lower_ok=True) -> ShuffleStructure:
    a, a1 = Fraction(a), Fraction(a1)
    return ShuffleStructure(name, params, a, a1, a * a, a * (1 - a), True, lower_ok)


def structure(oracle) -> ShuffleStructure:
    """The blanket structure of a frequency-oracle object (dispatch on its class)."""
    from .oracles import HadamardOracle, KRROracle, OLHOracle, RAPPOROracle, SubsetOracle
    from .pirappor import PIRappor, VectorPIRappor

    if isinstance(oracle, PIRappor):
        # w = uniform (a, b) in F_p^2; (h(x1), h(x2)) uniform on F_p^2 for x1 != x2, so the
        # bits are exactly independent Bern(s/p). Triples are not independent (2 parameters):
        # no oracle attack from the independent-bit kernel.
        return _indep("pi-rappor", (oracle.k, oracle.p, oracle.s, oracle.a1, oracle.symmetric),
                      Fraction(oracle.s, oracle.p), oracle.a1, lower_ok=False)
    if isinstance(oracle, VectorPIRappor):
        return _indep("pi-rappor-vector", (oracle.k, oracle.q, oracle.t, oracle.s, oracle.a1),
                      Fraction(oracle.s, oracle.q), oracle.a1, lower_ok=False)
    if isinstance(oracle, RAPPOROracle):
        # w = iid Bern(a0) bits: bit x ~ Bern(a1) under R_x, all others Bern(a0)
        return _indep("rappor", (oracle.k, oracle.a0, oracle.a1, oracle.symmetric),
                      oracle.a0, oracle.a1, lower_ok=oracle.k >= 3)
    if isinstance(oracle, HadamardOracle):
        # w = uniform column i of H_K; rows x+1 are distinct and non-zero, so the signs of two
        # rows are independent fair coins; three rows with r1 ^ r2 ^ r3 != 0 as well (K >= 8).
        return _indep("hadamard", (oracle.k, oracle.big_k, oracle.a1),
                      Fraction(1, 2), oracle.a1, lower_ok=oracle.k >= 3)
    if isinstance(oracle, SubsetOracle):
        k, d = oracle.k, oracle.d
        # w = uniform d-subset; R_x(S)/w(S) = a1 k/d if x in S else (1-a1) k/(k-d)
        return ShuffleStructure("subset", (k, d, oracle.a1), Fraction(d, k), Fraction(oracle.a1),
                                Fraction(d * (d - 1), k * (k - 1)),
                                Fraction(d * (k - d), k * (k - 1)), False)
    if isinstance(oracle, OLHOracle):
        return _olh_structure(oracle)
    if isinstance(oracle, KRROracle):
        k = oracle.k
        # w = uniform item; Pr[y = x] = a1, every other item (1 - a1)/(k - 1) as implemented
        return ShuffleStructure("krr", (k, oracle.a1), Fraction(1, k), Fraction(oracle.a1),
                                Fraction(0), Fraction(1, k), False)
    raise TypeError(f"oracle must be a frequency oracle of ldpcompress, got {type(oracle).__name__}")


def _olh_structure(oracle) -> ShuffleStructure:
    """OLH as implemented: report (a, b, y), bucket h(x) = ((a (x+1) + b) mod p) mod g,
    y = bucket w.p. keep, else uniform among the g - 1 others. w = uniform on F_p^2 x [g].

    For x1 != x2 the pair (u, v) = (a(x1+1)+b, a(x2+1)+b) mod p is uniform on F_p^2, so with
    y uniform and independent: P(b1 = 1) = 1/g exactly and
    P(1,1) = (1/g) Pr[u = v mod g] = (1/g) sum_c (size_c / p)^2 >= 1/g^2 (bucket sizes of
    F_p mod g: q+1 for rem of them, q for the rest). The law is used exactly (not independent).
    """
    p, g = oracle.p, oracle.g
    q, rem = divmod(p, g)
    coll = Fraction(rem * (q + 1) ** 2 + (g - rem) * q ** 2, p * p)
    p11 = coll / g
    return ShuffleStructure("olh", (oracle.k, p, g, oracle.a1), Fraction(1, g),
                            Fraction(oracle.a1), p11, Fraction(1, g) - p11, False)


# ---------------------------------------------------------------------------------------------
# Profiles (same interface as ldpcompress.profiles.Profile).
# ---------------------------------------------------------------------------------------------

class OracleProfile(Profile):
    """A profile tied to one oracle's structure; ``check_oracle`` refuses any other oracle."""

    def __init__(self, n: int, st: ShuffleStructure):
        if not isinstance(st, ShuffleStructure):
            raise TypeError(f"structure must be a ShuffleStructure, got {type(st).__name__}")
        n = V.shuffle_users(n)
        super().__init__(n, st.eps0)
        self.structure = st

    def check_oracle(self, oracle) -> None:
        """Raise ValueError unless ``oracle`` has exactly the structure this bound was built for."""
        other = structure(oracle)
        if other.identity != self.structure.identity:
            raise ValueError(f"this bound was derived for {self.structure.oracle} "
                             f"{self.structure.params}, not for {other.oracle} {other.params}: "
                             "a blanket bound applies only to the oracle it was derived from")


class BlanketProfile(OracleProfile):
    """Blanket upper bound delta(eps) for one oracle (docs/theory.md §2.5), blocked in M'.

    ``block_frac`` sets the block width (a fraction of the standard deviation of M');
    ``block_frac=0`` sums every M' on its own (unblocked); ``n11_block`` blocks the count of
    draws supporting both items for the correlated laws (1 = unblocked).
    """

    name, label, upper = "blanket", "privacy blanket (Balle et al. 2019)", True

    def __init__(self, n: int, st: ShuffleStructure, block_frac: float = BLOCK_FRAC,
                 n11_block: int = N11_BLOCK, exact_law: bool = False):
        # positively correlated laws (OLH) use the dominating product law unless exact_law:
        # the fast independent kernel, proven no smaller (ShuffleStructure.dominating_independent)
        block_frac = V.nonnegative(block_frac, "block_frac")
        if not math.isfinite(block_frac) or block_frac > 10.0:
            raise ValueError(f"block_frac must be in [0, 10] (block width in standard deviations "
                             f"of M'), got {block_frac!r}")
        n11_block = V.integer_at_least(n11_block, "n11_block", 1, 2 ** 40)
        exact_law = bool(exact_law)
        if not exact_law and not st.independent and st.p11 >= st.a * st.a:
            st = st.dominating_independent()
        super().__init__(n, st)
        self.block_frac = block_frac
        self.n11_block = n11_block
        self._tables: dict[float, tuple] = {}
        s = st
        if not s.kernel_ready:
            return
        self._gamma, self._gamma_c = s.gamma, s.gamma_c
        self._gc = s.gamma_c_times
        self._a1 = float(s.a1)
        self._c = s.expm1_eps0
        if s.independent:
            self._a, self._ac = float(s.a), float(1 - s.a)
        else:
            self._pj, self._pjc = float(2 * s.p10), float(1 - 2 * s.p10)
            rest = s.p11 + s.p00
            self._pi, self._pic = float(s.p11 / rest), float(s.p00 / rest)

    def tables(self, tol: float):
        for built, tab in self._tables.items():
            if built <= tol:
                return tab
        sd = math.sqrt(max(self.n - 1, 0) * self._gamma * self._gamma_c)
        width = max(1, int(sd * self.block_frac))
        tab = m_blocks(self.n, self._gamma, self._gamma_c, width, tol)
        self._tables[tol] = tab
        return tab

    def _delta(self, eps, tol):
        if not self.structure.kernel_ready:
            return self.structure.local_delta(eps)
        eps = min(eps, EPS_CAP)
        ms, ws, out = self.tables(tol)
        if self.structure.independent:
            return indep_upper_delta(ms, ws, self._a, self._ac, self._gc, self._a1, self._c,
                                     self.eps0, eps, tol, out)
        return pair_upper_delta(ms, ws, self._pj, self._pjc, self._pi, self._pic, self._gc,
                                self._a1, self._c, self.eps0, eps, tol, out, self.n11_block)


class OracleLowerProfile(OracleProfile):
    """Exact delta of an attack on this oracle (docs/theory.md §2.6(c)): datasets
    (x1, x3, ..., x3) vs (x1', x3, ..., x3), the analyst keeping the support bits for x1, x1'
    of the reports that do not support x3 and only the count of those that do (a
    post-processing, so the value lower-bounds the pair and hence every upper bound).
    Needs (b1, b2, b3) independent under w (RAPPOR, OUE). Hadamard uses x3 with row
    r3 = r1 ^ r2 instead, where b3 = [b1 = b2] and the full view is an exact 3-category sum
    (no post-processing)."""

    name, label, upper = "lower_oracle", "lower bound: oracle attack", False

    def __init__(self, n: int, st: ShuffleStructure):
        super().__init__(n, st)
        if not st.lower_ok:
            raise ValueError(f"no oracle-specific attack is implemented for {st.oracle} "
                             f"{st.params} (its support bits of three items are not independent)")
        # the attack's items (x1, x1', x3); Hadamard: rows x+1 = 1, 2, 3 with 3 = 1 ^ 2, so the
        # sign of row 3 is the product of the other two: b3 = 1 iff b1 = b2 (an exact 3-category law)
        self.items = (0, 1, 2)
        self._hadamard = st.oracle == "hadamard"
        a = st.a
        self._a, self._ac = float(a), float(1 - a)
        self._pb3, self._pb3c = float(st.a1), float(1 - st.a1)
        # kappa = e^-eps0 E_w[e^(eps0 b1)] = e^-eps0 (1 - a) + a  (exact in rationals: B/A (1-a) + a)
        ratio = (1 - st.a1) / (1 - a) / (st.a1 / a)
        self._kappa = float(ratio * (1 - a) + a)
        self._e0inv = float(ratio)
        self._c = st.expm1_eps0

    def _delta(self, eps, tol):
        if not self.structure.kernel_ready:
            return 0.0  # trivially a lower bound
        eps = min(eps, EPS_CAP)
        if self._hadamard:
            sd = math.sqrt(self.n) / 2.0
            block = max(1, int(sd * BLOCK_FRAC))
            return pair_lower_delta(self.n, self._pb3c, self._pb3, self._e0inv, self._c,
                                    self.eps0, eps, max(tol, 1e-40), block)
        return indep_lower_delta(self.n, self._a, self._ac, self._pb3, self._pb3c, self._kappa,
                                 self._c, self.eps0, eps, max(tol, 1e-40))


# ---------------------------------------------------------------------------------------------
# Convenience: eps(delta) of a profile (the phase-2 API will route this through
# amplification.epsilon; here for tests and the bench).
# ---------------------------------------------------------------------------------------------

def profile_epsilon(profile: Profile, delta: float) -> float:
    """eps(delta) of a profile by ldpcompress.solve (upper end for upper bounds)."""
    from .profiles import window_tol
    from .solve import epsilon_for_delta

    tol = window_tol(delta)
    eps0 = profile.eps0
    if profile.delta(0.0, tol) <= delta:
        return 0.0
    return epsilon_for_delta(lambda e: profile.delta(e, tol), delta, eps0,
                             upper=profile.upper, rtol=1e-6)


def blanket_profile(n: int, oracle, **kw) -> BlanketProfile:
    return BlanketProfile(n, structure(oracle), **kw)


def lower_profile(n: int, oracle) -> OracleLowerProfile:
    return OracleLowerProfile(n, structure(oracle))
