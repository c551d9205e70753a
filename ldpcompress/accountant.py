"""The privacy accountant: compose mechanisms, ask for eps or delta (SPEC S3.4).

    acct = Accountant()
    acct.compose(ShuffledRound(n=10**5, eps0=2.0), times=100)
    acct.compose(Gaussian(sigma=3.0))
    acct.epsilon(delta=1e-6)   # -> AccountingResult(value, lower, method='pld', ...)

The method is the tightest that applies: PLD (every event here has one), else RDP, else KOV
(homogeneous (eps, delta) events only). ``method=`` forces one and raises when it cannot take
an event.
"""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from . import pld as P
from . import rdp as R
from . import validate as V
from .composition import kov_delta, kov_epsilon
from .profiles import GeneralProfile, KRRBlanketProfile, general_pair


class Event:
    """A mechanism the accountant can compose. Subclasses are frozen dataclasses."""

    def pld(self, h: float, upper: bool) -> P.PLD:
        raise NotImplementedError

    def rdp(self, orders: np.ndarray) -> np.ndarray | None:
        return None  # no RDP curve

    def approx_dp(self) -> tuple[float, float] | None:
        return None  # not an (eps, delta) event for KOV


@dataclass(frozen=True)
class ShuffledRound(Event):
    """n shuffled reports of any eps0-LDP randomizer (FMT21 Thm 3.2 pair, S2.2).

    ``pld_method="exact"`` bins every atom of the pair (upper and lower grids, about
    288 n e^-eps0 atoms); ``"dots"`` builds the connect-the-dots upper PLD from ``points`` profile
    evaluations (much faster at large n e^-eps0, slightly looser, no lower estimate); ``"auto"``
    takes "exact" up to EXACT_ATOMS atoms, else "dots".
    """

    n: int
    eps0: float
    pld_method: str = "auto"
    points: int = 120

    EXACT_ATOMS = 2e7

    def __post_init__(self):
        object.__setattr__(self, "n", V.users(self.n))
        object.__setattr__(self, "eps0", V.positive_finite(self.eps0, "eps0"))
        if self.pld_method not in ("auto", "exact", "dots"):
            raise ValueError(f"pld_method must be 'auto', 'exact' or 'dots', got "
                             f"{self.pld_method!r}")

    def _method(self) -> str:
        if self.pld_method != "auto":
            return self.pld_method
        atoms = 288.0 * self.n * math.exp(-self.eps0)
        return "exact" if atoms <= self.EXACT_ATOMS else "dots"

    def pld(self, h, upper):
        if self._method() == "dots":
            if not upper:
                return None
            general = GeneralProfile(self.n, self.eps0)
            return P.from_profile(lambda e: general.delta(e, 1e-40), self.eps0, h, True,
                                  self.points)
        q, p = general_pair(self.eps0)
        return P.clone_pair(self.n, q, p, h, upper)

    def rdp(self, orders):
        return R.shuffled_rdp(self.n, self.eps0, orders)


@dataclass(frozen=True)
class KRRShuffledRound(Event):
    """n shuffled k-RR reports: connect-the-dots PLD of min(general, blanket) (S2.3b, S3.2)."""

    n: int
    eps0: float
    k: int
    points: int = 120

    def __post_init__(self):
        object.__setattr__(self, "n", V.users(self.n))
        object.__setattr__(self, "eps0", V.positive_finite(self.eps0, "eps0"))
        object.__setattr__(self, "k", V.domain_size(self.k))

    def pld(self, h, upper):
        if not upper:  # connect-the-dots bounds from above only: no optimistic estimate
            return None
        general = GeneralProfile(self.n, self.eps0)
        blanket = KRRBlanketProfile(self.n, self.eps0, self.k)
        fn = lambda e: min(general.delta(e, 1e-40), blanket.delta(e, 1e-40))  # noqa: E731
        return P.from_profile(fn, self.eps0, h, True, self.points)

    def rdp(self, orders):
        return R.shuffled_rdp(self.n, self.eps0, orders)


@dataclass(frozen=True)
class Gaussian(Event):
    """Gaussian mechanism N(0, sigma^2) with the given L2 sensitivity."""

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self):
        V.positive_finite(self.sigma, "sigma")
        V.positive_finite(self.sensitivity, "sensitivity")

    def pld(self, h, upper):
        return P.gaussian(self.sigma, self.sensitivity, h, upper)

    def rdp(self, orders):
        return R.gaussian_rdp(self.sigma, orders, self.sensitivity)


@dataclass(frozen=True)
class Laplace(Event):
    """Laplace mechanism with scale b and L1 sensitivity s."""

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self):
        V.positive_finite(self.scale, "scale")
        V.positive_finite(self.sensitivity, "sensitivity")

    def pld(self, h, upper):
        return P.laplace(self.scale, self.sensitivity, h, upper)

    def rdp(self, orders):
        return R.laplace_rdp(self.scale, orders, self.sensitivity)


@dataclass(frozen=True)
class PureDP(Event):
    """Any eps-DP mechanism (dominated by randomized response)."""

    eps: float

    def __post_init__(self):
        V.positive_finite(self.eps, "eps")

    def pld(self, h, upper):
        return P.pure_dp(self.eps, h, upper)

    def rdp(self, orders):
        return R.pure_rdp(self.eps, orders)

    def approx_dp(self):
        return self.eps, 0.0


@dataclass(frozen=True)
class ApproxDP(Event):
    """Any (eps, delta)-DP mechanism (no RDP curve)."""

    eps: float
    delta: float

    def __post_init__(self):
        V.positive_finite(self.eps, "eps")
        V.probability_closed_open(self.delta, "delta")

    def pld(self, h, upper):
        return P.approx_dp(self.eps, self.delta, h, upper)

    def approx_dp(self):
        return self.eps, self.delta


@dataclass(frozen=True)
class PairOfPmfs(Event):
    """A user-supplied pair (P, Q) of pmfs on a common finite support."""

    p: tuple
    q: tuple

    def __post_init__(self):
        object.__setattr__(self, "p", tuple(float(v) for v in self.p))
        object.__setattr__(self, "q", tuple(float(v) for v in self.q))
        P.from_pmfs(self.p, self.q)  # validates

    def pld(self, h, upper):
        return P.from_pmfs(self.p, self.q, h, upper)


@dataclass(frozen=True)
class AccountingResult:
    """eps or delta of the composition: ``value`` (an upper bound) and ``lower`` (the
    optimistic estimate of the same method, None when there is none), the method used, and
    the other methods' upper values for comparison."""

    query: str
    value: float
    lower: float | None
    method: str
    others: dict = field(default_factory=dict)
    seconds: float = 0.0

    def __float__(self) -> float:
        return float(self.value)


METHODS = ("auto", "pld", "rdp", "kov")


class Accountant:
    """Records (event, times) pairs; answers epsilon(delta) and delta(eps) (S3.4).

    h is the PLD grid step (the PLD gap between upper and lower is at most rounds * h in eps);
    max_size caps the grid length.
    """

    def __init__(self, h: float = 1e-4, max_size: int = P.MAX_SIZE,
                 orders=R.DEFAULT_ORDERS):
        self.h = P.check_grid(h)
        self.max_size = int(max_size)
        self.orders = R.check_orders(orders)
        self.events: list[tuple[Event, int]] = []
        self._composed: dict[bool, P.PLD | None] = {}  # composed PLDs until the next compose()

    def compose(self, event: Event, times: int = 1) -> "Accountant":
        if not isinstance(event, Event):
            raise TypeError(f"event must be an ldpcompress.accountant Event, got "
                            f"{type(event).__name__}")
        times = V.integer_at_least(times, "times", 1)
        self.events.append((event, times))
        self._composed.clear()
        return self

    # -- methods -------------------------------------------------------------------------------
    def _pld(self, upper: bool) -> P.PLD | None:
        """The composed PLD (kept for later queries); None (lower only) when some event has no
        optimistic PLD."""
        if upper not in self._composed:
            self._composed[upper] = self._compose_pld(upper)
        return self._composed[upper]

    def _compose_pld(self, upper: bool) -> P.PLD | None:
        total = None
        for event, times in self.events:
            one = _event_pld(event, self.h, upper)
            if one is None:
                return None
            one = one.self_compose(times, self.max_size)
            total = one if total is None else total.compose(one, self.max_size)
        return total

    def _rdp(self, orders: np.ndarray | None = None) -> np.ndarray:
        """The composed RDP curve (sum over events) at the given orders (default: the grid)."""
        orders = self.orders if orders is None else orders
        curve = np.zeros(orders.size)
        for event, times in self.events:
            r = event.rdp(orders)
            if r is None:
                raise ValueError(f"{type(event).__name__} has no RDP curve; use method='pld'")
            curve = curve + times * r
        return curve

    def _kov(self) -> tuple[float, float, int]:
        pairs = {event.approx_dp() for event, _ in self.events}
        if None in pairs or len(pairs) != 1:
            raise ValueError("KOV composition needs every event to be the same (eps, delta)-DP "
                             "event (PureDP or ApproxDP); use method='pld'")
        eps, delta = pairs.pop()
        return eps, delta, sum(t for _, t in self.events)

    def _check(self, method: str) -> str:
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if not self.events:
            raise ValueError("the accountant has no events: call compose() first")
        return "pld" if method == "auto" else method

    # -- queries -------------------------------------------------------------------------------
    def epsilon(self, delta: float, method: str = "auto", compare: bool = False) -> AccountingResult:
        """Smallest eps with delta(eps) <= delta for the composition (an upper bound)."""
        delta = V.probability_open(delta, "delta")
        method = self._check(method)
        start = time.perf_counter()
        value, lower = self._epsilon_by(method, delta)
        others = self._others(method, compare, lambda m: self._epsilon_by(m, delta)[0])
        return AccountingResult("epsilon", value, lower, method, others,
                                time.perf_counter() - start)

    def delta(self, eps: float, method: str = "auto", compare: bool = False) -> AccountingResult:
        """delta(eps) of the composition (an upper bound)."""
        eps = V.nonnegative(eps, "eps")
        method = self._check(method)
        start = time.perf_counter()
        value, lower = self._delta_by(method, eps)
        others = self._others(method, compare, lambda m: self._delta_by(m, eps)[0])
        return AccountingResult("delta", value, lower, method, others,
                                time.perf_counter() - start)

    def _others(self, method, compare, fn) -> dict:
        out = {}
        if compare:
            for m in ("pld", "rdp", "kov"):
                if m != method:
                    try:
                        out[m] = fn(m)
                    except ValueError:
                        out[m] = None
        return out

    def _epsilon_by(self, method: str, delta: float):
        if method == "pld":
            lower = self._pld(False)
            return self._pld(True).epsilon(delta), None if lower is None else lower.epsilon(delta)
        if method == "rdp":
            refine = lambda a: float(self._rdp(np.array([a]))[0])  # noqa: E731
            return R.rdp_to_epsilon(self.orders, self._rdp(), delta, refine)[0], None
        eps, d0, k = self._kov()
        return kov_epsilon(eps, d0, k, delta), None

    def _delta_by(self, method: str, eps: float):
        if method == "pld":
            lower = self._pld(False)
            return self._pld(True).delta(eps), None if lower is None else lower.delta(eps)
        if method == "rdp":
            return rdp_delta(self.orders, self._rdp(), eps), None
        e, d0, k = self._kov()
        return kov_delta(e, d0, k, eps), None


@functools.lru_cache(maxsize=64)
def _event_pld(event: Event, h: float, upper: bool) -> P.PLD | None:
    """One event's PLD, cached: events are frozen (hashable) dataclasses."""
    return event.pld(h, upper)


def rdp_delta(orders: np.ndarray, rdp: np.ndarray, eps: float) -> float:
    """delta(eps) from an RDP curve: the inverse of CKS20, minimised over the orders:
    log delta = (a-1)(rdp - eps + log(1 - 1/a)) - log a."""
    a = np.asarray(orders, dtype=float)
    log_d = (a - 1) * (rdp - eps + np.log1p(-1.0 / a)) - np.log(a)
    return float(min(1.0, math.exp(min(0.0, float(np.min(log_d))))))
