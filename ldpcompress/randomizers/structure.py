"""What shuffle accounting needs from a binary-support randomizer: its blanket structure
(docs/theory.md §2.5, §2.6(c)).

Every frequency oracle of the library is *binary-support*: with w the law of a report under a
reference measure and b(y, x) = 1 iff report y supports item x,
R_x(y) = w(y) * (A if b(y, x) else B). Hence a1 = Pr_{R_x}[b(Y, x) = 1] = A a and
1 - a1 = B (1 - a) with a = Pr_w[b(Y, x) = 1]; the blanket weight is gamma = B, the replacement
eps0 is log(A/B), and the privacy-blanket bound only needs the law of (b1, b2) =
(b(Y, x1), b(Y, x1')) under w. The oracle-specific attack needs one more number:
t3 = Pr_w[b(Y, x1) = 1, b(Y, x1') = 0, b(Y, x3) = 0] for a third item x3 with the same value for
x1 and x1' exchanged. Each oracle derives its structure from its realised parameters, exactly
in rational arithmetic, in its ``shuffle_structure()`` method.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..core.numerics import UNIT_ROUNDOFF
from ..core.prg import UNIFORM_BITS  # client uniforms are j 2^-53 (WordStream.uniform)

__all__ = ["ShuffleStructure", "BinaryStructure", "independent_structure", "ap3_count", "coin",
           "kept"]



def coin(p: float) -> Fraction:
    """Pr[u < p] exactly, for the clients' uniforms u = j 2^-53, j uniform in [0, 2^53): the
    realised probability of a coin drawn as ``uniform() < p`` is ceil(p 2^53) / 2^53, which the
    structures use instead of p (a realised probability, not the intended one). The bulk
    coins of core.coins.bernoulli_bits realise exactly this law from fewer stream bits."""
    scaled = Fraction(p) * (1 << UNIFORM_BITS)
    return Fraction(-((-scaled.numerator) // scaled.denominator), 1 << UNIFORM_BITS)


def kept(a1c: float) -> Fraction:
    """Realised Pr[uniform() >= a1c] = 1 - coin(a1c). Clients draw "support my own item" this
    way, from the small complement a1c = 1 - a1 formed without cancellation: the 2^-53 rounding
    then moves probability toward the noise (and a tiny a1c is still drawn, not rounded away).
    The float a1c itself may already be an ulp off, so the realised randomizer can differ from
    the intended one by ~1e-17 either way: every bound is computed for the realised law."""
    return 1 - coin(a1c)


@dataclass(frozen=True)
class ShuffleStructure:
    """Blanket structure of one binary-support oracle (docs/theory.md §2.5).

    ``a`` = Pr_w[b(Y, x) = 1]; ``a1`` = Pr_{R_x}[b(Y, x) = 1] (so A = a1/a, B = (1-a1)/(1-a));
    the law of (b1, b2) under w is given by ``p11`` and ``p10`` (= p01); ``independent`` says
    it is the product Bern(a) x Bern(a). ``t3`` = Pr_w[b1 = 1, b2 = 0, b3 = 0] for the attack's
    items ``attack_items`` = (x1, x1', x3) (None: no attack implemented). ``oracle`` and
    ``params`` ((name, value) pairs) identify the oracle it was derived from. Probabilities are exact rationals of
    the realised parameters.

    Parameters
    ----------
    oracle : str
        The registry name of the randomizer it was derived from.
    params : tuple
        That randomizer's parameters as (name, value) pairs.
    a : Fraction
        Pr_w[b(Y, x) = 1], in (0, 1).
    a1 : Fraction
        Pr_{R_x}[b(Y, x) = 1], in (a, 1).
    p11 : Fraction
        Pr_w[b1 = 1, b2 = 1].
    p10 : Fraction
        Pr_w[b1 = 1, b2 = 0] (= p01); p11 + p10 = a.
    independent : bool
        The law of (b1, b2) is Bern(a) x Bern(a).
    t3 : Fraction, optional
        Pr_w[b1 = 1, b2 = 0, b3 = 0] for the attack's items, in (0, p10] (None: no attack).
    attack_items : tuple of int, default (0, 2, 1)
        The attack's items (x1, x1', x3).
    """

    oracle: str
    params: tuple
    a: Fraction
    a1: Fraction
    p11: Fraction
    p10: Fraction
    independent: bool
    t3: Fraction | None = None
    attack_items: tuple = (0, 2, 1)

    @classmethod
    def of(cls, randomizer, *, a: Fraction, a1: Fraction, p11: Fraction, p10: Fraction,
           independent: bool, t3: Fraction | None = None,
           attack_items: tuple = (0, 2, 1)) -> "ShuffleStructure":
        """The structure of ``randomizer`` (its ``name`` and ``params()`` identify it), every
        probability by keyword (the fields above).

        Parameters
        ----------
        randomizer : LocalRandomizer
            The randomizer whose blanket law this is.
        a, a1, p11, p10, independent, t3, attack_items
            As the fields of the same names.
        """
        params = tuple(sorted(randomizer.params().items()))
        return cls(randomizer.name, params, a, a1, p11, p10, independent, t3, attack_items)

    def __post_init__(self):
        if not (0 < self.a < 1 and self.a < self.a1 < 1):
            raise ValueError(f"{self.oracle}: need 0 < a < a1 < 1 for a blanket, got "
                             f"a = {float(self.a)!r}, a1 = {float(self.a1)!r} (the realised "
                             "randomizer is not eps0-DP for finite eps0)")
        if self.p10 * 2 + self.p11 > 1 or self.p11 < 0 or self.p10 < 0:
            raise ValueError(f"{self.oracle}: invalid law of (b1, b2)")
        # The law must be consistent with itself: a structure read from a file (a saved
        # ledger) is untrusted, and a false "independent" flag or marginal would select a
        # kernel that under-reports delta.
        if self.p11 + self.p10 != self.a:
            raise ValueError(f"{self.oracle}: the law of (b1, b2) has Pr[b1 = 1] = "
                             f"{float(self.p11 + self.p10)!r}, not a = {float(self.a)!r}")
        if self.independent and (self.p11 != self.a * self.a
                                 or self.p10 != self.a * (1 - self.a)):
            raise ValueError(f"{self.oracle}: 'independent' but P(1,1) != a^2 or "
                             "P(1,0) != a (1 - a)")
        if self.t3 is not None and not 0 < self.t3 <= self.p10:
            raise ValueError(f"{self.oracle}: t3 must be in (0, P(1,0)], got {float(self.t3)!r}")

    @property
    def krr_k(self) -> int | None:
        """k when this is the law of k-ary randomized response: every report supports exactly
        one item (P(1,1) = 0) and a = 1/k, so the supported item is a sufficient statistic
        distributed as k-RR with this eps0, and the k-RR bounds apply (docs/theory.md §2.4)."""
        if self.p11 == 0 and self.a.numerator == 1 and self.a.denominator >= 2:
            return self.a.denominator
        return None

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
        v = _log(self.a1 * (1 - self.a) / (self.a * (1 - self.a1)))  # one log of the exact ratio
        return math.nextafter(v + _LOG_ERR * (1.0 + abs(v)), math.inf)

    @property
    def eps0_lower(self) -> float:
        """The same log rounded down (a few ulps, never below 0): the eps0 of a lower bound
        (an attack), which must not be computed with more privacy loss than the oracle has."""
        v = _log(self.a1 * (1 - self.a) / (self.a * (1 - self.a1)))
        return max(0.0, math.nextafter(v - _LOG_ERR * (1.0 + abs(v)), -math.inf))

    @property
    def expm1_eps0(self) -> float:
        """e^eps0 - 1 = (a1 - a)/(a (1 - a1)), exact rational to float (inf if it overflows)."""
        return _float_or_inf((self.a1 - self.a) / (self.a * (1 - self.a1)))

    @property
    def gamma_c_times(self) -> float:
        """gamma (e^eps0 - 1) = A - B = (a1 - a)/(a (1 - a)) (inf if it overflows)."""
        return _float_or_inf((self.a1 - self.a) / (self.a * (1 - self.a)))

    @property
    def kernel_ready(self) -> bool:
        """Whether the double-precision kernels apply (e^eps0 and every probability finite and
        normal); otherwise only the local divergence is used (see ``local_delta``)."""
        return (math.isfinite(self.gamma_c_times) and math.isfinite(self.expm1_eps0)
                and float(self.a) > 1e-300 and float(self.p10) > 1e-300)

    def local_delta(self, eps: float) -> float:
        """H_{e^eps}(R_x1 || R_x1') = P(1,0) (A - e^eps B)_+ (only reports supporting x1 and
        not x1' have a positive part): an upper bound for any n, since the shuffled output
        is a post-processing of user 1's report and independent others. Log space.

        Parameters
        ----------
        eps : float
            The eps (>= 0) of the hockey-stick divergence.
        """
        la = _log(self.a1 * self.p10 / self.a)
        lb = eps + _log((1 - self.a1) * self.p10 / (1 - self.a))
        err = 2.0 * _LOG_ERR * (2.0 + abs(la) + abs(lb))  # of lb - la, with eps's addition
        if lb - la >= err:
            return 0.0
        gap = min(lb - la - err, 0.0)  # exp(la) (1 - e^(lb - la)) <= exp(la) (1 - e^gap)
        return min(1.0, math.exp(la + err) * -math.expm1(gap) * (1 + 8 * UNIT_ROUNDOFF) + 1e-300)

    @property
    def p00(self) -> Fraction:
        return 1 - self.p11 - 2 * self.p10

    @property
    def identity(self) -> tuple:
        return (self.oracle, self.params)

    def describe(self) -> str:
        """A short plain-text identity, e.g. 'pi-rappor(k=1000, p=5563, s=101, a1=0.5, ...)'
        (``params`` holds (name, value) pairs)."""
        shown = ", ".join(f"{name}={value:.6g}" if isinstance(value, float) else f"{name}={value}"
                          for name, value in self.params)
        return f"{self.oracle}({shown})"

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
                                self.a * (1 - self.a), True, None)


@dataclass(frozen=True)
class BinaryStructure:
    """A binary randomizer, possibly asymmetric: a report is 0 or 1, Pr[1 | bit 1] = p1 and
    Pr[1 | bit 0] = q0 (exact rationals of the realised probabilities, p1 != q0). Its
    shuffled output is the count of ones; accounting takes the worst dataset of the others
    exactly (docs/theory.md §2.14). Symmetric randomized response (p1 + q0 = 1) may state
    either this or its binary-support ShuffleStructure (k-RR with k = 2): both reach the same
    bound. ``oracle`` and ``params`` identify the randomizer.

    Parameters
    ----------
    oracle : str
        The registry name of the randomizer it was derived from.
    params : tuple
        That randomizer's parameters as (name, value) pairs.
    p1 : Fraction
        Pr[report 1 | bit 1], in (0, 1).
    q0 : Fraction
        Pr[report 1 | bit 0], in (0, 1), not p1.
    """

    oracle: str
    params: tuple
    p1: Fraction
    q0: Fraction

    def __post_init__(self):
        for name in ("p1", "q0"):
            v = getattr(self, name)
            if not isinstance(v, Fraction) or not 0 < v < 1:
                raise ValueError(f"{self.oracle}: {name} must be a Fraction in (0, 1), got {v!r}")
        if self.p1 == self.q0:
            raise ValueError(f"{self.oracle}: p1 = q0 = {float(self.p1)!r}: the report does not "
                             "depend on the bit (no privacy question to account)")

    def _log_ratios(self) -> tuple[float, float]:
        a, b = (self.p1, self.q0) if self.p1 > self.q0 else (1 - self.p1, 1 - self.q0)
        return _log(a / b), _log((1 - b) / (1 - a))

    @property
    def eps0(self) -> float:
        """Replacement eps0 = max(log(p1/q0), log((1-q0)/(1-p1))) (labels ordered so p1 > q0),
        rounded up a few ulps."""
        v = max(self._log_ratios())
        return math.nextafter(v + _LOG_ERR * (1.0 + abs(v)), math.inf)

    @property
    def eps0_lower(self) -> float:
        """The same rounded down (the eps0 of an attack)."""
        v = max(self._log_ratios())
        return max(0.0, math.nextafter(v - _LOG_ERR * (1.0 + abs(v)), -math.inf))

    @property
    def symmetric(self) -> bool:
        return self.p1 + self.q0 == 1

    @property
    def identity(self) -> tuple:
        return (self.oracle, self.params)

    def describe(self) -> str:
        shown = ", ".join(f"{name}={value:.6g}" if isinstance(value, float) else f"{name}={value}"
                          for name, value in self.params)
        return f"{self.oracle}({shown})"


def independent_structure(name: str, params: tuple, a, a1, triple_independent: bool = True,
                          t3=None, attack_items: tuple = (0, 2, 1)) -> ShuffleStructure:
    """Structure with independent Bern(a) support bits of any two items. When the bits of three
    items are independent too, t3 = a (1 - a)^2; otherwise pass t3."""
    a, a1 = Fraction(a), Fraction(a1)
    if t3 is None and triple_independent:
        t3 = a * (1 - a) ** 2
    return ShuffleStructure(name, params, a, a1, a * a, a * (1 - a), True, t3, attack_items)


def ap3_count(s: int) -> int:
    """#{(v, d) in F_p^2 : v, v + d, v + 2d (mod p) all in [0, s)} for 2 s < p: the 3-term
    arithmetic progressions in [0, s), d an integer with |d| < s/2 (no wrap-around since
    2 s < p), i.e. sum_d max(0, s - 2|d|) = s + 2 (m s - m (m + 1)), m = floor((s-1)/2)."""
    m = (s - 1) // 2
    return s + 2 * (m * s - m * (m + 1))


def _float_or_inf(x: Fraction) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf


_LOG_ERR = 4.0 * UNIT_ROUNDOFF  # |_log(x) - log x| <= _LOG_ERR (1 + |log x|)


def _log(x: Fraction) -> float:
    """log of a positive rational, within _LOG_ERR (1 + |log x|) of the exact value: x = y 2^e
    exactly with y in (1/2, 2), and log x = log(float(y)) + e log 2 (never log(num) - log(den),
    whose two large logs cancel: 1e-14 absolute at denominators of 2^53)."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    y = x / (1 << e) if e >= 0 else x * (1 << -e)
    return math.log(float(y)) + e * math.log(2.0)
