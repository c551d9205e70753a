"""The events an accountant composes: data-only, frozen (hashable) descriptions of mechanisms,
each stating what it offers to the composition methods (docs/theory.md §3.4): a PLD on a grid,
an RDP curve, an (eps, delta) pair for KOV. Kept apart from the accountant
(``accounting/accountant.py``), as dp_accounting keeps ``dp_event.py`` apart from its
accountants.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..core import validate as V
from ..randomizers.contract import LocalRandomizer
from ..randomizers.scalar import ScalarStructure
from ..randomizers.structure import ShuffleStructure
from . import blanket as BL
from . import scalar as SC
from . import pld as P
from . import rdp as R
from .profiles import GeneralProfile, KRRBlanketProfile, KRRSplitProfile

__all__ = ["DOTS_TOL", "BLANKET_DOTS_TOL", "Event", "ShuffledRound", "KRRShuffledRound",
           "OracleShuffledRound", "Gaussian", "Laplace", "PureDP", "ApproxDP", "PairOfPmfs",
           "EVENTS"]


# Window tolerance of the profiles behind connect-the-dots events. The profile cannot fall
# below the windows' outside mass, so a coarse tolerance leaves atoms of mass ~tol at large
# losses, which dominate the Renyi curve from order ~ log(1/tol)/loss on: at 1e-40 the k-RR
# round (n = 1e6, eps0 = 1, k = 100, 10 rounds) had RDP eps 0.0683; at 1e-300 it is 0.0093.
DOTS_TOL = 1e-300
BLANKET_DOTS_TOL = 1e-40


class Event:
    """A mechanism the accountant can compose. Subclasses are frozen (hashable) dataclasses.

    Interface (override what applies; the defaults say "not available"):

    * ``pld(h, rounding) -> PLD | None``: the PLD on a grid of step h; ``rounding`` is "up"
      (pessimistic), "down" (optimistic) or "mean" (mean-preserving, GLW21). An event that
      cannot round mean-preservingly may return its "up" grid for "mean" (the PLD records how it
      was rounded); return None when a rounding is unavailable (e.g. no optimistic grid).
    * ``rdp(orders) -> array | None``: an upper bound on its Renyi divergence at each order.
    * ``approx_dp() -> (eps, delta) | None``: the event as an (eps, delta)-DP guarantee (KOV).
    """

    def pld(self, h: float, rounding: str) -> P.PLD | None:
        raise NotImplementedError

    def rdp(self, orders: np.ndarray) -> np.ndarray | None:
        return None  # no RDP curve

    def approx_dp(self) -> tuple[float, float] | None:
        return None  # not an (eps, delta) event for KOV


def _up(rounding: str) -> bool:
    return rounding != "down"


def _mean(rounding: str) -> bool:
    return rounding == "mean"


@dataclass(frozen=True)
class ShuffledRound(Event):
    """n shuffled reports of any eps0-LDP randomizer (FMT21 Thm 3.2 pair, §2.1-2.3).

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
    EXACT_RDP_ATOMS = 2e6
    DOTS_RDP_EPS0_MAX = 15.0  # the profiles' float arithmetic is checked up to here

    def __post_init__(self):
        object.__setattr__(self, "n", V.shuffle_users(self.n))
        object.__setattr__(self, "eps0", V.local_eps0(self.eps0, "eps0"))
        object.__setattr__(self, "points", V.integer_at_least(self.points, "points", 8, 10**5))
        if self.pld_method not in ("auto", "exact", "dots"):
            raise ValueError(f"pld_method must be 'auto', 'exact' or 'dots', got "
                             f"{self.pld_method!r}")

    def _method(self) -> str:
        if self.pld_method != "auto":
            return self.pld_method
        atoms = 288.0 * self.n * math.exp(-self.eps0)
        return "exact" if atoms <= self.EXACT_ATOMS else "dots"

    def _profile(self):
        general = GeneralProfile(self.n, self.eps0)
        return lambda e: general.delta(e, DOTS_TOL)

    def pld(self, h, rounding):
        if self._method() == "dots":
            if not _up(rounding):
                return None
            return _dots_pld(self, self.eps0, self.points, h, rounding)
        q, qc, p, pc = P.general_split(self.eps0)
        return P.clone_pair(self.n, q, p, h, _up(rounding), mean=_mean(rounding), qc=qc, pc=pc)

    def rdp(self, orders):
        """The curve of the exact loss grid when the pair has few atoms, the curve of the
        connect-the-dots pair otherwise (cheap at any n); below eps0 = DOTS_RDP_EPS0_MAX both,
        and their minimum (each is an upper bound)."""
        small = 288.0 * self.n * math.exp(-self.eps0) <= self.EXACT_RDP_ATOMS
        curve = R.shuffled_rdp(self.n, self.eps0, orders) if small else None
        if self.eps0 <= self.DOTS_RDP_EPS0_MAX:
            dots = _dots_rdp(self, self.eps0, orders, self.points)
            curve = dots if curve is None else np.minimum(curve, dots)
        return R.shuffled_rdp(self.n, self.eps0, orders) if curve is None else curve

    def approx_dp(self):
        """The shuffled output is eps0-DP (post-processing of user 1's eps0-DP report), so KOV
        composition applies and caps T rounds at T eps0 (FMT21; docs/theory.md)."""
        return self.eps0, 0.0


class _DotsRound(Event):
    """A shuffled round of a pure eps0-DP randomizer accounted from a privacy profile
    (``_profile()``: eps -> an upper bound on delta): connect-the-dots PLD and its Renyi curve
    (DGKKM22; the dots pair dominates the profile, so both are upper bounds), and KOV at
    (eps0, 0) (one report is eps0-DP, so is the shuffled output). Subclasses give n, eps0,
    points and _profile."""

    def pld(self, h, rounding):
        if not _up(rounding):  # connect-the-dots bounds from above only: no round-down grid
            return None
        return _dots_pld(self, self.eps0, self.points, h, rounding)

    def rdp(self, orders):
        return _dots_rdp(self, self.eps0, orders, self.points)

    def approx_dp(self):
        return self.eps0, 0.0


@dataclass(frozen=True)
class KRRShuffledRound(_DotsRound):
    """n shuffled k-RR reports: connect-the-dots PLD of min(general, blanket) (§2.4(b), §3.2)."""

    n: int
    eps0: float
    k: int
    points: int = 120

    def __post_init__(self):
        object.__setattr__(self, "n", V.shuffle_users(self.n))
        object.__setattr__(self, "eps0", V.local_eps0(self.eps0, "eps0"))
        object.__setattr__(self, "k", V.domain_size(self.k))
        object.__setattr__(self, "points", V.integer_at_least(self.points, "points", 8, 10**5))

    def _profile(self):
        """min(general, split pair, blanket pair): each is an upper bound on the k-RR profile.
        The blanket pair is skipped where its tables exceed their work limit (large n), as in
        ``amplification.epsilon``, so the event answers at every supported n."""
        profiles = [(GeneralProfile(self.n, self.eps0), DOTS_TOL),
                    (KRRSplitProfile(self.n, self.eps0, self.k), DOTS_TOL)]
        blanket = KRRBlanketProfile(self.n, self.eps0, self.k)
        if blanket.unsupported() is None:
            # its tables grow as log(1/tol): 1e-40 there, while the cheap general and split
            # pairs take the deep tail (far in the tail the min is theirs)
            profiles.append((blanket, BLANKET_DOTS_TOL))
        return lambda e: min(p.delta(e, tol) for p, tol in profiles)



@dataclass(frozen=True)
class OracleShuffledRound(_DotsRound):
    """n shuffled reports of one frequency oracle (docs/theory.md §2.5): the connect-the-dots
    PLD and RDP curve of the smallest of its generic bound (FMT21 Thm 3.2 at the oracle's
    realised eps0) and its privacy-blanket bound, so many rounds of, e.g., PI-RAPPOR are
    accounted at the oracle's own level. ``oracle`` is the randomizer itself (any
    LocalRandomizer: one that states no blanket structure gets the generic bound at its
    replacement eps); equal randomizers make equal events. A saved ledger stores only the
    randomizer's name and parameters, and the loader rebuilds it, so its law always comes from
    the randomizer's own code (accounting/state.py)."""

    n: int
    oracle: LocalRandomizer
    points: int = 120

    def __post_init__(self):
        object.__setattr__(self, "n", V.shuffle_users(self.n))
        st = BL.structure(self.oracle)
        eps0 = self.oracle.replacement_eps if st is None else st.eps0
        if isinstance(st, ScalarStructure):  # x + noise: its own blanket (Gaussian: no eps0)
            eps0 = min(eps0, V.MAX_EPS0)
        if not eps0 <= V.MAX_EPS0:
            raise ValueError(f"{self.oracle.describe()}: realised eps0 = {eps0:.4g} is above "
                             f"the supported {V.MAX_EPS0:g}")
        object.__setattr__(self, "_structure", st)  # derived, not a field: eq/hash by oracle
        object.__setattr__(self, "points", V.integer_at_least(self.points, "points", 8, 10**5))

    @property
    def structure(self) -> ShuffleStructure | None:
        return self._structure

    @property
    def eps0(self) -> float:
        """The replacement eps0, or for Gaussian noise the eps up to which the dots are placed
        (delta beyond it goes to the infinity atom): where one report's delta is 1e-15."""
        st = self._structure
        if isinstance(st, ScalarStructure) and not math.isfinite(st.eps0):
            return SC.ScalarBlanketProfile(self.n, st).eps_max(1e-15)
        return V.local_eps0(self.oracle.replacement_eps, "eps0") if st is None else st.eps0

    def approx_dp(self):
        st = self._structure
        if isinstance(st, ScalarStructure) and not math.isfinite(st.eps0):
            return None  # Gaussian noise: no pure eps0 for KOV
        return self.eps0, 0.0

    def _profile(self):
        st = self._structure
        if isinstance(st, ScalarStructure):  # docs/theory.md §2.10, profile at 1e-40 windows
            own = SC.ScalarBlanketProfile(self.n, st)
            if not math.isfinite(st.eps0):
                return lambda e: own.delta(e, BLANKET_DOTS_TOL)
            general = GeneralProfile(self.n, st.eps0)
            return lambda e: min(general.delta(e, DOTS_TOL), own.delta(e, BLANKET_DOTS_TOL))
        general = GeneralProfile(self.n, self.eps0)
        if st is None:
            return lambda e: general.delta(e, DOTS_TOL)
        if st.krr_k is not None:  # the law of k-RR: its own bounds
            return KRRShuffledRound(self.n, st.eps0, st.krr_k)._profile()
        # M'-blocks of half a standard deviation (sound, see blanket.py): 4x fewer terms for
        # the profile evaluations of the dots, at about 0.3% of delta
        own = BL.BlanketProfile(self.n, st, block_frac=0.5)
        return lambda e: min(general.delta(e, DOTS_TOL), own.delta(e, BLANKET_DOTS_TOL))


@dataclass(frozen=True)
class Gaussian(Event):
    """Gaussian mechanism N(0, sigma^2) with the given L2 sensitivity."""

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self):
        V.positive_finite(self.sigma, "sigma")
        V.positive_finite(self.sensitivity, "sensitivity")

    def pld(self, h, rounding):  # "mean" falls back to the round-up grid
        return P.gaussian(self.sigma, self.sensitivity, h, _up(rounding))

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

    def pld(self, h, rounding):  # "mean" falls back to the round-up grid
        return P.laplace(self.scale, self.sensitivity, h, _up(rounding))

    def rdp(self, orders):
        return R.laplace_rdp(self.scale, orders, self.sensitivity)


@dataclass(frozen=True)
class PureDP(Event):
    """Any eps-DP mechanism (dominated by randomized response)."""

    eps: float

    def __post_init__(self):
        V.local_eps0(self.eps, "eps")

    def pld(self, h, rounding):
        return P.pure_dp(self.eps, h, _up(rounding), _mean(rounding))

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
        V.local_eps0(self.eps, "eps")
        V.probability_closed_open(self.delta, "delta")

    def pld(self, h, rounding):
        return P.approx_dp(self.eps, self.delta, h, _up(rounding), _mean(rounding))

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

    def pld(self, h, rounding):
        return P.from_pmfs(self.p, self.q, h, _up(rounding), _mean(rounding))


EVENTS = {cls.__name__: cls for cls in (ShuffledRound, KRRShuffledRound, OracleShuffledRound,
                                        Gaussian, Laplace, PureDP, ApproxDP, PairOfPmfs)}


@functools.lru_cache(maxsize=256)
def _dots_atoms(event: Event, eps_max: float, points: int):
    """The connect-the-dots atoms of an event's profile (independent of the Renyi order, so
    computed once per event: the order refinement asks for many single orders)."""
    return P.profile_atoms(event._profile(), eps_max, points)


def _dots_pld(event: Event, eps_max: float, points: int, h: float, rounding: str) -> P.PLD:
    """Connect-the-dots PLD (Doroshenko et al. 2022) of the event's profile on the grid."""
    losses, masses, inf_mass = _dots_atoms(event, eps_max, points)
    return P.symmetric_atoms(losses, masses, h, True, inf_mass, mean=_mean(rounding))


def _dots_rdp(event: Event, eps_max: float, orders, points: int) -> np.ndarray:
    """Renyi curve of the event's connect-the-dots pair (see rdp.profile_rdp), capped by
    eps_max."""
    losses, masses, inf_mass = _dots_atoms(event, eps_max, points)
    return np.minimum(R.atoms_rdp(losses, masses, inf_mass, orders), eps_max)

