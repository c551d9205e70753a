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
from fractions import Fraction
from typing import TYPE_CHECKING, Callable, ClassVar, Protocol

import numpy as np
from scipy import special

from ..core import validate as V
from ..core.numerics import EXP_MAX, TOL_MIN, UNIT_ROUNDOFF
from ..randomizers.contract import LocalRandomizer
from ..randomizers.scalar import ScalarStructure
from ..randomizers.structure import BinaryStructure, ShuffleStructure
from ..randomizers.table_law import TableStructure
from . import blanket as BL
from . import gaussian as G
from . import scalar as SC
from . import table as TB
from . import pld as P
from . import rdp as R
from . import participation as PA
from . import sampled as SM
from .binary import EPS0_MAX as BINARY_EPS0_MAX
from .binary import BinaryLaw, dots_profile
from .profiles import GeneralProfile, KRRBlanketProfile, KRRSplitProfile

__all__ = ["DOTS_TOL", "BLANKET_DOTS_TOL", "Event", "ShuffledRound", "KRRShuffledRound",
           "OracleShuffledRound", "Gaussian", "Laplace", "PureDP", "ApproxDP", "PairOfPmfs",
           "EVENTS", "PoissonSampledGaussian", "PoissonSampledLaplace", "ShuffledSGDPass",
           "SampledShuffledRound", "SampledKRRShuffledRound", "SampledOracleShuffledRound"]


# Window tolerance of the profiles behind connect-the-dots events. The profile cannot fall
# below the windows' outside mass, so a coarse tolerance leaves atoms of mass ~tol at large
# losses, which dominate the Renyi curve from order ~ log(1/tol)/loss on: at 1e-40 the k-RR
# round (n = 1e6, eps0 = 1, k = 100, 10 rounds) had RDP eps 0.0683; at 1e-300 it is 0.0093.
DOTS_TOL = TOL_MIN
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
    * ``pure_eps() -> float | None``: eps when the event is pure (eps, 0)-DP (by default from
      ``approx_dp``); a ledger of such events is answered in closed form too (method "pure").
    * ``gaussian_mu() -> float | None``: mu = sensitivity / sigma when the event is exactly a
      Gaussian mechanism (Gaussians compose in closed form, docs/theory.md §3.5).
    * ``to_dp_event(dp) -> DpEvent | None``: the same mechanism as a dp_accounting DpEvent
      (``dp`` is the dp_accounting module), None when it has none.

    ``relation`` names the neighbouring relation the event's bound holds for ("substitution":
    one user's data replaced; "add/remove": one record added or removed; None: whichever
    relation its parameters were stated for, e.g. a Gaussian's sensitivity).
    """

    relation: str | None = None  # a class constant, or a field where the user gives it
    # pld(h, "mean") rounds mean-preservingly (GLW21: a composed gap ~ h sqrt(T)); False where it
    # falls back to a round-up or on-grid connect-the-dots grid (a certified gap ~ T h)
    MEAN_GRID: ClassVar[bool] = True

    def pld(self, h: float, rounding: str) -> P.PLD | None:
        """The event's privacy loss distribution on the grid of step h (None: unavailable).

        Parameters
        ----------
        h : float
            The grid step of the losses (> 0).
        rounding : {"up", "down", "mean"}
            Pessimistic, optimistic or mean-preserving rounding onto the grid (see the class
            docstring).
        """
        raise NotImplementedError

    def rdp(self, orders: np.ndarray) -> np.ndarray | None:
        """An upper bound on the event's Renyi divergence at each order (None: no curve).

        Parameters
        ----------
        orders : numpy.ndarray
            The Renyi orders (each > 1).
        """
        return None  # no RDP curve

    def approx_dp(self) -> tuple[float, float] | None:
        return None  # not an (eps, delta) event for KOV

    def gaussian_mu(self) -> float | None:
        return None  # not a Gaussian mechanism

    def pure_eps(self) -> float | Fraction | None:
        """eps (a float rounded up, or an exact rational) when the event is pure (eps, 0)-DP,
        else None (accounting/pure.py sums them exactly)."""
        pair = self.approx_dp()
        return pair[0] if pair is not None and pair[1] == 0.0 else None

    def to_dp_event(self, dp):
        """The same mechanism as a dp_accounting DpEvent, or None when it has none.

        Parameters
        ----------
        dp : module
            The dp_accounting module (an optional extra, imported by the caller).
        """
        return None  # no dp_accounting equivalent

    def work(self, h: float, orders: int) -> tuple[float, float, float]:
        """(shared, PLD, RDP): nominal kernel steps (an atom binned, a profile term summed) to
        build this event's PLD at grid step h and its Renyi curve at ``orders`` orders; shared
        steps serve both (a profile's dots atoms). A query states its cost from these before
        spending it (accounting/plan.py). This default assumes a connect-the-dots event of
        ``points`` profile evaluations when it has them (a few profiles of n users), else a
        closed form binned on a grid over its largest loss; events with other costs override
        it (a misjudged one is stopped at a multiple of the query's limit).

        Parameters
        ----------
        h : float
            The PLD grid step.
        orders : int
            The number of Renyi orders.
        """
        points, n = getattr(self, "points", None), getattr(self, "n", None)
        if points is not None and n is not None:
            return points * (15.0 * math.sqrt(n) + 3e4), points, orders * points
        pair = self.approx_dp()
        loss = pair[0] if pair is not None else 10.0
        return 0.0, 1e3 + 2.0 * loss / h, 10.0 * orders


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

    Parameters
    ----------
    n : int
        Users, one shuffled report each (n >= 1).
    eps0 : float
        The local randomizer's replacement eps (> 0).
    pld_method : {"auto", "exact", "dots"}, default "auto"
        How the PLD is built (see above).
    points : int, default 120
        Profile evaluations of the connect-the-dots PLD.
    """

    n: int
    eps0: float
    pld_method: str = "auto"
    points: int = 120

    relation = "substitution"
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
        and their minimum (each is an upper bound). ``pld_method="dots"`` takes the dots curve
        alone there (the cheap construction a query chooses when the exact one would cost
        too much, accounting/plan.py)."""
        small = self._exact_rdp()
        curve = R.shuffled_rdp(self.n, self.eps0, orders) if small else None
        if self.eps0 <= self.DOTS_RDP_EPS0_MAX:
            dots = _dots_rdp(self, self.eps0, orders, self.points)
            curve = dots if curve is None else np.minimum(curve, dots)
        return R.shuffled_rdp(self.n, self.eps0, orders) if curve is None else curve

    def _exact_rdp(self) -> bool:
        if self.pld_method == "dots" and self.eps0 <= self.DOTS_RDP_EPS0_MAX:
            return False
        return 288.0 * self.n * math.exp(-self.eps0) <= self.EXACT_RDP_ATOMS

    def work(self, h, orders):
        """Profile evaluations of the dots (each about 15 sqrt(n q (1-q)) + 3000 steps: window terms,
        q = e^-eps0), the ~288 n q atoms of the exact pair (binned on two grids), and the
        exact Renyi curve's atoms and its grid of step 1e-5 at each order."""
        q = math.exp(-self.eps0)
        evals = self.points * (15.0 * math.sqrt(self.n * q * (1.0 - q)) + 3000.0)
        atoms = 288.0 * self.n * q
        dots = self._method() == "dots" or self.eps0 <= self.DOTS_RDP_EPS0_MAX
        pld = 2.0 * atoms if self._method() == "exact" else self.points
        rdp = orders * self.points if dots else 0.0
        if self._exact_rdp() or not dots:
            rdp += atoms + orders * min(atoms, 2.0 * self.eps0 / 1e-5) / 4.0
        return (evals if dots else 0.0), pld, rdp

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

    relation = "substitution"
    n: int
    points: int

    if TYPE_CHECKING:  # a field of some subclasses, a property of others
        @property
        def eps0(self) -> float: ...

    def _profile(self) -> Callable[[float], float]:
        raise NotImplementedError

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
    """n shuffled k-RR reports: connect-the-dots PLD of min(general, blanket) (§2.4(b), §3.2).

    Parameters
    ----------
    n : int
        Users, one shuffled report each (n >= 1).
    eps0 : float
        The local randomizer's replacement eps (> 0).
    k : int
        Domain size of k-ary randomized response (k >= 2).
    points : int, default 120
        Profile evaluations of the connect-the-dots PLD.
    """

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
        """min(general, split pair, blanket pair): each is an upper bound on the k-RR profile;
        for k = 2 the exact count over every dataset (docs/theory.md §2.14) replaces the
        blanket pair (which is at least the exact value it is within 1e-3 of, and cost 8 times
        more at n = 1e4). The blanket pair is skipped where its tables exceed their work limit
        (large n), as in ``amplification.epsilon``, so the event answers at every supported n."""
        profiles = [(GeneralProfile(self.n, self.eps0), DOTS_TOL),
                    (KRRSplitProfile(self.n, self.eps0, self.k), DOTS_TOL)]
        fns = [functools.partial(p.delta, tol=tol) for p, tol in profiles]
        if self.k == 2 and self.eps0 <= BINARY_EPS0_MAX:
            fns.append(dots_profile(self.n, BinaryLaw.rr(self.eps0), self.eps0, self.points,
                                    BLANKET_DOTS_TOL))
            return lambda e: min(f(e) for f in fns)
        blanket = KRRBlanketProfile(self.n, self.eps0, self.k)
        if blanket.unsupported() is None:
            # its tables grow as log(1/tol): 1e-40 there, while the cheap general and split
            # pairs take the deep tail (far in the tail the min is theirs)
            fns.append(functools.partial(blanket.delta, tol=BLANKET_DOTS_TOL))
        return lambda e: min(f(e) for f in fns)


@dataclass(frozen=True)
class OracleShuffledRound(_DotsRound):
    """n shuffled reports of one frequency oracle (docs/theory.md §2.5): the connect-the-dots
    PLD and RDP curve of the smallest of its generic bound (FMT21 Thm 3.2 at the oracle's
    realised eps0) and its privacy-blanket bound, so many rounds of, e.g., PI-RAPPOR are
    accounted at the oracle's own level. ``oracle`` is the randomizer itself (any
    LocalRandomizer: one that states no blanket structure gets the generic bound at its
    replacement eps); equal randomizers make equal events. A saved ledger stores only the
    randomizer's name and parameters, and the loader rebuilds it, so its law always comes from
    the randomizer's own code (accounting/state.py).

    Parameters
    ----------
    n : int
        Users, one shuffled report each (n >= 1).
    oracle : LocalRandomizer
        The randomizer every user runs (stored in a ledger by registry name and parameters).
    points : int, default 120
        Profile evaluations of the connect-the-dots PLD.
    """

    n: int
    oracle: LocalRandomizer
    points: int = 120

    def __post_init__(self):
        object.__setattr__(self, "n", V.shuffle_users(self.n))
        st = self.structure
        eps0 = self.oracle.replacement_eps if st is None else st.eps0
        if isinstance(st, ScalarStructure):  # x + noise: its own blanket (Gaussian: no eps0)
            eps0 = min(eps0, EXP_MAX)
        if not eps0 <= EXP_MAX:
            raise ValueError(f"{self.oracle.describe()}: realised eps0 = {eps0:.4g} is above "
                             f"the supported {EXP_MAX:g}")
        object.__setattr__(self, "points", V.integer_at_least(self.points, "points", 8, 10**5))

    @functools.cached_property
    def structure(self) -> (ShuffleStructure | ScalarStructure | BinaryStructure
                            | TableStructure | None):
        """The randomizer's blanket structure, derived once (not a field: eq/hash by oracle)."""
        return BL.structure(self.oracle)

    @property
    def eps0(self) -> float:
        """The replacement eps0, or for Gaussian noise the eps up to which the dots are placed
        (delta beyond it goes to the infinity atom): where one report's delta is 1e-15."""
        st = self.structure
        if isinstance(st, ScalarStructure) and not math.isfinite(st.eps0):
            return SC.ScalarBlanketProfile(self.n, st).eps_max(1e-15)
        return V.local_eps0(self.oracle.replacement_eps, "eps0") if st is None else st.eps0

    def approx_dp(self):
        st = self.structure
        if isinstance(st, ScalarStructure) and not math.isfinite(st.eps0):
            return None  # Gaussian noise: no pure eps0 for KOV
        return self.eps0, 0.0

    def _profile(self):
        st = self.structure
        if isinstance(st, ScalarStructure):  # docs/theory.md §2.11, profile at 1e-40 windows
            own = SC.ScalarBlanketProfile(self.n, st)
            if not math.isfinite(st.eps0):
                return lambda e: own.delta(e, BLANKET_DOTS_TOL)
            general = GeneralProfile(self.n, st.eps0)
            return lambda e: min(general.delta(e, DOTS_TOL), own.delta(e, BLANKET_DOTS_TOL))
        general = GeneralProfile(self.n, self.eps0)
        if st is None:
            return lambda e: general.delta(e, DOTS_TOL)
        if isinstance(st, BinaryStructure):  # the exact count over datasets (§2.14)
            if st.eps0 > BINARY_EPS0_MAX:
                return lambda e: general.delta(e, DOTS_TOL)
            exact = dots_profile(self.n, BinaryLaw.of(st.p1, st.q0), self.eps0, self.points,
                                 BLANKET_DOTS_TOL)
            return lambda e: min(general.delta(e, DOTS_TOL), exact(e))
        if isinstance(st, TableStructure):  # docs/theory.md §2.15
            table = TB.TableBlanketProfile(self.n, st)
            if table.unsupported() is not None:
                return lambda e: general.delta(e, DOTS_TOL)
            return lambda e: min(general.delta(e, DOTS_TOL), table.delta(e, BLANKET_DOTS_TOL))
        if st.krr_k is not None:  # the law of k-RR: its own bounds
            return KRRShuffledRound(self.n, st.eps0, st.krr_k, self.points)._profile()
        # M'-blocks of half a standard deviation (sound, see blanket.py): 4x fewer terms for
        # the profile evaluations of the dots, at about 0.3% of delta
        own = BL.BlanketProfile(self.n, st, block_frac=0.5)
        return lambda e: min(general.delta(e, DOTS_TOL), own.delta(e, BLANKET_DOTS_TOL))


@dataclass(frozen=True)
class Gaussian(Event):
    """Gaussian mechanism N(0, sigma^2) with the given L2 sensitivity.

    Parameters
    ----------
    sigma : float
        Standard deviation of the noise (> 0).
    sensitivity : float, default 1
        The L2 sensitivity of the released sum (> 0).
    """

    MEAN_GRID: ClassVar[bool] = False

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self):
        V.positive_finite(self.sigma, "sigma")
        V.positive_finite(self.sensitivity, "sensitivity")

    def pld(self, h, rounding):  # "mean" falls back to the round-up grid
        return P.gaussian(self.sigma, self.sensitivity, h, _up(rounding))

    def rdp(self, orders):
        return R.gaussian_rdp(self.sigma, orders, self.sensitivity)

    def gaussian_mu(self):
        return self.sensitivity / self.sigma

    def to_dp_event(self, dp):
        return dp.GaussianDpEvent(self.sigma / self.sensitivity)


@dataclass(frozen=True)
class Laplace(Event):
    """Laplace mechanism with scale b and L1 sensitivity s.

    Parameters
    ----------
    scale : float
        The noise's scale b (> 0).
    sensitivity : float, default 1
        The L1 sensitivity of the released value (> 0).
    """

    MEAN_GRID: ClassVar[bool] = False

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self):
        V.positive_finite(self.scale, "scale")
        V.positive_finite(self.sensitivity, "sensitivity")

    def pld(self, h, rounding):  # "mean" falls back to the round-up grid
        return P.laplace(self.scale, self.sensitivity, h, _up(rounding))

    def rdp(self, orders):
        return R.laplace_rdp(self.scale, orders, self.sensitivity)

    def pure_eps(self):
        """sensitivity / scale (the largest privacy loss) as an exact rational."""
        return Fraction(self.sensitivity) / Fraction(self.scale)

    def to_dp_event(self, dp):
        return dp.LaplaceDpEvent(self.scale / self.sensitivity)


@dataclass(frozen=True)
class PureDP(Event):
    """Any eps-DP mechanism (dominated by randomized response).

    Parameters
    ----------
    eps : float
        The mechanism's eps (>= 0).
    """

    eps: float

    def __post_init__(self):
        V.local_eps0(self.eps, "eps")

    def pld(self, h, rounding):
        return P.pure_dp(self.eps, h, _up(rounding), _mean(rounding))

    def rdp(self, orders):
        return R.pure_rdp(self.eps, orders)

    def approx_dp(self):
        return self.eps, 0.0

    def to_dp_event(self, dp):
        """Randomized response over 2 buckets, the dominating pair of eps-DP: noise parameter
        p = 2 / (e^eps + 1), rounded down (less noise: an eps at least this one's)."""
        p = math.nextafter(2.0 * float(special.expit(-self.eps)), 0.0)
        return dp.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)


@dataclass(frozen=True)
class ApproxDP(Event):
    """Any (eps, delta)-DP mechanism (no RDP curve).

    Parameters
    ----------
    eps : float
        The mechanism's eps (>= 0).
    delta : float
        Its delta in [0, 1).
    """

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
    """A user-supplied pair (P, Q) of pmfs on a common finite support.

    Parameters
    ----------
    p : tuple of float
        The pmf of the output on one dataset (entries >= 0, summing to 1).
    q : tuple of float
        The pmf on the neighbouring dataset, on the same support.
    """

    p: tuple
    q: tuple

    def __post_init__(self):
        object.__setattr__(self, "p", tuple(float(v) for v in self.p))
        object.__setattr__(self, "q", tuple(float(v) for v in self.q))
        P.from_pmfs(self.p, self.q)  # validates

    def pld(self, h, rounding):
        return P.from_pmfs(self.p, self.q, h, _up(rounding), _mean(rounding))


EVENTS: dict[str, type[Event]] = {cls.__name__: cls for cls in (ShuffledRound, KRRShuffledRound, OracleShuffledRound,
                                        Gaussian, Laplace, PureDP, ApproxDP, PairOfPmfs)}


class _Profiled(Protocol):
    """An event accounted from a privacy profile: eps -> an upper bound on delta."""

    def _profile(self) -> Callable[[float], float]: ...

    def __hash__(self) -> int: ...  # events are frozen dataclasses: the caches key on them


@functools.lru_cache(maxsize=4096)  # a ledger of thousands of distinct rounds reuses them
def _dots_atoms(event: _Profiled, eps_max: float, points: int):
    """The connect-the-dots atoms of an event's profile (independent of the Renyi order, so
    computed once per event: the order refinement asks for many single orders)."""
    return P.profile_atoms(event._profile(), eps_max, points)


def _dots_pld(event: _Profiled, eps_max: float, points: int, h: float, rounding: str) -> P.PLD:
    """Connect-the-dots PLD (Doroshenko et al. 2022) of the event's profile on the grid."""
    losses, masses, inf_mass = _dots_atoms(event, eps_max, points)
    return P.symmetric_atoms(losses, masses, h, True, inf_mass, mean=_mean(rounding))


def _dots_rdp(event: _Profiled, eps_max: float, orders, points: int) -> np.ndarray:
    """Renyi curve of the event's connect-the-dots pair (see rdp.profile_rdp), capped by
    eps_max."""
    losses, masses, inf_mass = _dots_atoms(event, eps_max, points)
    return np.minimum(R.atoms_rdp(losses, masses, inf_mass, orders), eps_max)



# ------------------------------------------------------------------------------------------------
# Central mechanisms with Poisson sampling (docs/theory.md §3.6) and shuffled SGD (§3.7)
# ------------------------------------------------------------------------------------------------

RDP_GRID_H = 2e-5  # grid of the Renyi curves read from a rounded-up loss law (bias <= h)


def _sampling_probability(q) -> float:
    q = V.probability_in(q, "q", 0.0, 1.0)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q!r}: q = 1 is the mechanism itself "
                         "(Gaussian / Laplace) and q = 0 releases nothing")
    return q


class _PoissonSampled(Event):
    """Shared behaviour of the Poisson-subsampled noise events: subclasses name their noise
    (NOISE, a SampledNoise class), the field holding its scale (SCALE) and have fields q and
    sensitivity."""

    relation = "add/remove"
    MEAN_GRID: ClassVar[bool] = False  # connect-the-dots on the grid for "up" and "mean"
    NOISE: ClassVar[type]
    SCALE: ClassVar[str]
    sensitivity: float
    q: float
    SCALE_RANGE: ClassVar[tuple] = (1e-6, 1e6)  # scale / sensitivity: grids and tails stay finite

    def __post_init__(self):
        V.positive_finite(getattr(self, self.SCALE), self.SCALE)
        V.positive_finite(self.sensitivity, "sensitivity")
        object.__setattr__(self, "q", _sampling_probability(self.q))
        lo, hi = self.SCALE_RANGE
        if not lo <= getattr(self, self.SCALE) / self.sensitivity <= hi:
            raise ValueError(f"{self.SCALE} / sensitivity must be in [{lo:g}, {hi:g}], got "
                             f"{getattr(self, self.SCALE) / self.sensitivity:g}")

    def _noise(self) -> SM.SampledNoise:
        return self.NOISE(_scale(getattr(self, self.SCALE), self.sensitivity), self.q)

    def work(self, h, orders):
        """Losses up to about 12/s + 1/(2 s^2) (s = scale / sensitivity): a connect-the-dots
        grid of step h (a profile value per point), the Renyi grid of step RDP_GRID_H at each
        order."""
        s = getattr(self, self.SCALE) / self.sensitivity
        loss = min(12.0 / s + 0.5 / s ** 2, 1e6)
        return 0.0, 100.0 * loss / h, 0.14 * loss / RDP_GRID_H * orders

    def pld(self, h, rounding):
        noise = _noise_of(self)
        if _up(rounding):  # "mean" takes the connect-the-dots grid too
            dirs = tuple(noise.dots_direction(d, h) for d in SM.DIRECTIONS)
        else:
            dirs = tuple(noise.lower_direction(d, h) for d in SM.DIRECTIONS)
        return P.PLD(h, _up(rounding), dirs)


def _scale(value: float, sensitivity: float) -> float:
    """Noise scale per unit sensitivity, rounded down (less noise is the pessimistic side)."""
    return value / sensitivity * (1.0 - 4.0 * UNIT_ROUNDOFF)


@functools.lru_cache(maxsize=64)
def _noise_of(event: _PoissonSampled) -> SM.SampledNoise:
    return event._noise()


@functools.lru_cache(maxsize=64)
def _grid_rdp_atoms(event: _PoissonSampled, direction: str):
    """(losses, log masses) of one direction's rounded-up loss law on the RDP grid."""
    d = _noise_of(event).cells_direction(direction, RDP_GRID_H, upper=True, bounded_top=True)
    keep = d.pmf > 0
    return (d.lo + np.flatnonzero(keep)) * RDP_GRID_H, np.log(d.pmf[keep]) + 1e-12


def _grid_rdp(event: _PoissonSampled, direction: str, orders: np.ndarray) -> np.ndarray:
    losses, log_mass = _grid_rdp_atoms(event, direction)
    return np.array([special.logsumexp(log_mass + (a - 1.0) * losses) / (a - 1.0)
                     for a in orders])


@dataclass(frozen=True)
class PoissonSampledGaussian(_PoissonSampled):
    """Each record included with probability q, then a Gaussian of noise sigma on the sum
    (L2 sensitivity ``sensitivity``), add/remove neighbours: dp_accounting's
    PoissonSampledDpEvent(q, GaussianDpEvent(sigma / sensitivity)) (docs/theory.md §3.6).

    Parameters
    ----------
    sigma : float
        Standard deviation of the noise on the sum (> 0).
    q : float
        Probability in (0, 1] that each record is included.
    sensitivity : float, default 1
        The L2 sensitivity of the released sum (> 0).
    """

    sigma: float
    q: float
    sensitivity: float = 1.0

    NOISE: ClassVar[type] = SM.GaussianNoise
    SCALE: ClassVar[str] = "sigma"

    def rdp(self, orders):
        """max(remove: the integer-order sum at ceil(order); add: its rounded-up grid)."""
        orders = np.asarray(orders, dtype=float)
        remove = _noise_of(self).rdp_remove(orders)
        return np.maximum(remove, _grid_rdp(self, "add", orders))

    def to_dp_event(self, dp):
        return dp.PoissonSampledDpEvent(self.q, dp.GaussianDpEvent(self.sigma / self.sensitivity))


@dataclass(frozen=True)
class PoissonSampledLaplace(_PoissonSampled):
    """Each record included with probability q, then Laplace noise of scale b on the sum
    (L1 sensitivity ``sensitivity``), add/remove neighbours: dp_accounting's
    PoissonSampledDpEvent(q, LaplaceDpEvent(scale / sensitivity)). Its losses are bounded, so
    it is also pure eps-DP with eps = the largest loss, log(1 + q (e^(s/b) - 1)).

    Parameters
    ----------
    scale : float
        The Laplace noise's scale b on the sum (> 0).
    q : float
        Probability in (0, 1] that each record is included.
    sensitivity : float, default 1
        The L1 sensitivity of the released value (> 0).
    """

    scale: float
    q: float
    sensitivity: float = 1.0

    NOISE: ClassVar[type] = SM.LaplaceNoise
    SCALE: ClassVar[str] = "scale"

    def rdp(self, orders):
        orders = np.asarray(orders, dtype=float)
        return np.maximum(_grid_rdp(self, "remove", orders), _grid_rdp(self, "add", orders))

    def approx_dp(self):
        """(largest loss of either direction, rounded up, 0): remove's is
        log(1 - q + q e^(1/b)) = log1p(q expm1(1/b)), add's -log1p(q expm1(-1/b)), smaller."""
        b = _scale(self.scale, self.sensitivity)
        if 1.0 / b > EXP_MAX:
            return None  # e^(1/b) overflows; the PLD and RDP still answer
        eps = math.log1p(self.q * math.expm1(1.0 / b))
        return min(eps * (1.0 + 8.0 * UNIT_ROUNDOFF) + 1e-300, EXP_MAX), 0.0

    def to_dp_event(self, dp):
        return dp.PoissonSampledDpEvent(self.q, dp.LaplaceDpEvent(self.scale / self.sensitivity))


@dataclass(frozen=True)
class ShuffledSGDPass(ShuffledRound):
    """One pass of noisy SGD over n records in a uniformly random order, one record per step
    (FMT21 §5.2, Prop. 5.3): step i releases an update computed from the i-th record of the
    permutation by a randomizer that is (eps0, delta0)-DP for every pair of records and every
    value of the previous updates (chosen adaptively). It is FMT21's adaptive shuffle
    protocol, so the Thm 3.2 clone pair bounds it (Thm 3.8's extra
    (e^eps + 1)(1 + e^-eps0/2) n delta0 term when delta0 > 0) under substitution of one record
    (docs/theory.md §3.7). Compose ``times=passes``, each pass on a fresh permutation.
    ``ShuffledSGDPass.gaussian(n, sigma, delta0)`` sets eps0 from a Gaussian step.

    Parameters
    ----------
    n : int
        Records, one step each.
    eps0 : float
        The per-step randomizer's eps (> 0).
    delta0 : float, default 0
        Its delta, in [0, 1).
    pld_method : {"auto", "exact", "dots"}, default "auto"
        How the PLD is built (see above).
    points : int, default 120
        Profile evaluations of the connect-the-dots PLD.
    """

    delta0: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "delta0", V.probability_closed_open(self.delta0, "delta0"))

    @classmethod
    def gaussian(cls, n: int, sigma: float, delta0: float, sensitivity: float = 2.0,
                 **kwargs) -> "ShuffledSGDPass":
        """A pass whose steps add N(0, (sigma C)^2) noise to a gradient clipped to norm C:
        replacing the record moves it by at most 2C (sensitivity 2 in units of C), so each
        step is (eps0, delta0)-DP with eps0 the Gaussian's exact eps at delta0 (upper end,
        docs/theory.md §3.5).

        Parameters
        ----------
        n : int
            Records, one step each.
        sigma : float
            The noise multiplier: noise N(0, (sigma C)^2) for gradients clipped to norm C.
        delta0 : float
            The per-step delta, in (0, 1).
        sensitivity : float, default 2
            How far replacing the record moves the step, in units of C.
        **kwargs
            Further fields of the event (``pld_method``, ``points``).
        """
        sigma = V.positive_finite(sigma, "sigma")
        sensitivity = V.positive_finite(sensitivity, "sensitivity")
        delta0 = V.probability_open(delta0, "delta0")
        eps0 = G.epsilon_bracket(sensitivity / sigma, delta0)[1]
        if eps0 <= 0.0:
            raise ValueError(f"a Gaussian step with sigma = {sigma:g} is (0, {delta0:g})-DP: "
                             "it needs no shuffling; pass a smaller delta0")
        return cls(n, eps0, delta0=delta0, **kwargs)

    def _approx_profile(self):
        """eps -> min(1, pair delta(e) + (e^e + 1)(1 + e^-eps0/2) n delta0) at e = min(eps, e*),
        e* the minimiser of that total (the true profile is non-increasing, so its value at any
        smaller e bounds it); delta0 from eps0 on (one step is (eps0, delta0)-DP)."""
        general = GeneralProfile(self.n, self.eps0)
        extra = (1.0 + 0.5 * math.exp(-self.eps0)) * self.n * self.delta0

        def total(e):
            return min(1.0, general.delta(e, DOTS_TOL) + (math.exp(e) + 1.0) * extra)
        grid = np.linspace(0.0, self.eps0, 257)
        e_star = float(grid[int(np.argmin([total(float(e)) for e in grid]))])
        return lambda e: self.delta0 if e >= self.eps0 else total(min(e, e_star))

    def _profile(self):
        return self._approx_profile() if self.delta0 > 0.0 else super()._profile()

    def pld(self, h, rounding):
        if self.delta0 == 0.0:
            return super().pld(h, rounding)
        if not _up(rounding):
            return None
        return _dots_pld(self, self.eps0, self.points, h, rounding)

    def rdp(self, orders):
        return super().rdp(orders) if self.delta0 == 0.0 else None  # an atom at infinity

    def approx_dp(self):
        return self.eps0, self.delta0


EVENTS.update({cls.__name__: cls for cls in (PoissonSampledGaussian, PoissonSampledLaplace,
                                             ShuffledSGDPass)})
# ---------------------------------------------------------------------------------------------
# Shuffled rounds with participation sampling (docs/theory.md §2.7; accounting/participation.py)
# ---------------------------------------------------------------------------------------------

class _SampledRound(Event):
    """A shuffled round in which each user reports with probability ``gamma`` (Poisson) or a
    uniform ``sample`` of the n users report, neighbours by ``relation``: the connect-the-dots
    PLD of the smallest of its sampled bounds (DGKKM22), its Renyi curve where the round has a
    finite largest loss (fixed size; Poisson substitution), and KOV at that largest loss.
    Poisson add/remove has neither: the report count has an unbounded loss (every user
    reporting reveals user 1), so its Renyi divergences are infinite. Subclasses set
    ``_uppers()`` (the sampled upper profiles) and ``_eps0``."""

    n: int
    gamma: float | None
    sample: int | None
    relation: str
    points: int

    if TYPE_CHECKING:  # the randomizer's realised eps0 (a property of each subclass)
        @property
        def _eps0(self) -> float: ...

    def _uppers(self) -> list:
        raise NotImplementedError

    def _checked_sampling(self):
        s = PA.Sampling.of(self.n, self.gamma, self.sample, self.relation)
        object.__setattr__(self, "n", s.n)
        object.__setattr__(self, "gamma", s.gamma)
        object.__setattr__(self, "sample", s.m)
        object.__setattr__(self, "points", V.integer_at_least(self.points, "points", 8, 10**5))
        return s

    @property
    def sampling(self):
        return PA.Sampling.of(self.n, self.gamma, self.sample, self.relation)

    def _profile(self):
        profiles = [(p, BLANKET_DOTS_TOL if isinstance(p, PA.SampledBlanketProfile) else DOTS_TOL)
                    for p in self._uppers() if p.unsupported() is None]
        return lambda e: min(p.delta(e, tol) for p, tol in profiles)

    def _cap(self) -> float:
        return self.sampling.cap(self._eps0)

    def pld(self, h, rounding):
        if not _up(rounding):  # connect-the-dots bounds from above only: no round-down grid
            return None
        losses, masses, inf_mass = _sampled_atoms(self)
        return P.symmetric_atoms(losses, masses, h, True, inf_mass, mean=_mean(rounding))

    def rdp(self, orders):
        cap = self._cap()
        if not math.isfinite(cap):
            return None
        losses, masses, inf_mass = _sampled_atoms(self)
        return np.minimum(R.atoms_rdp(losses, masses, inf_mass, orders), cap)

    def approx_dp(self):
        cap = self._cap()
        return (cap, 0.0) if math.isfinite(cap) else None


@dataclass(frozen=True)
class SampledShuffledRound(_SampledRound):
    """A sampled shuffled round of any eps0-LDP randomizer (docs/theory.md §2.7(a)-(b)).

    Parameters
    ----------
    n : int
        Users, one shuffled report each (n >= 1).
    eps0 : float
        The local randomizer's replacement eps (> 0).
    gamma : float, optional
        Poisson participation: each user reports with probability gamma in (0, 1].
    sample : int, optional
        Fixed-size participation: a uniform m = sample of the n users report (not with gamma).
    relation : {"substitution", "add_remove"}, default "substitution"
        The neighbouring relation of the bound (docs/theory.md §2.7).
    points : int, default 120
        Profile evaluations of the connect-the-dots PLD.
    """

    n: int
    eps0: float
    gamma: float | None = None
    sample: int | None = None
    relation: str = "substitution"
    points: int = 120

    def __post_init__(self):
        object.__setattr__(self, "eps0", V.local_eps0(self.eps0, "eps0"))
        self._checked_sampling()

    @property
    def _eps0(self) -> float:
        return self.eps0

    def _uppers(self):
        return PA.upper_profiles(self.n, self.sampling, eps0=self.eps0)


@dataclass(frozen=True)
class SampledKRRShuffledRound(_SampledRound):
    """A sampled shuffled round of k-RR: the general bound and k-RR's blanket (§2.7).

    Parameters
    ----------
    n : int
        Users, one shuffled report each (n >= 1).
    eps0 : float
        The local randomizer's replacement eps (> 0).
    k : int
        Domain size of k-ary randomized response (k >= 2).
    gamma : float, optional
        Poisson participation: each user reports with probability gamma in (0, 1].
    sample : int, optional
        Fixed-size participation: a uniform m = sample of the n users report (not with gamma).
    relation : {"substitution", "add_remove"}, default "substitution"
        The neighbouring relation of the bound (docs/theory.md §2.7).
    points : int, default 120
        Profile evaluations of the connect-the-dots PLD.
    """

    n: int
    eps0: float
    k: int
    gamma: float | None = None
    sample: int | None = None
    relation: str = "substitution"
    points: int = 120

    def __post_init__(self):
        object.__setattr__(self, "eps0", V.local_eps0(self.eps0, "eps0"))
        object.__setattr__(self, "k", V.domain_size(self.k))
        self._checked_sampling()

    @property
    def _eps0(self) -> float:
        return PA.krr_structure(self.k, self.eps0).eps0

    def _uppers(self):
        return PA.upper_profiles(self.n, self.sampling, eps0=self.eps0, k=self.k)


@dataclass(frozen=True)
class SampledOracleShuffledRound(_SampledRound):
    """A sampled shuffled round of one randomizer (as OracleShuffledRound: ``oracle`` is the
    randomizer itself, stored in a ledger by name and parameters): the general bound at its
    realised eps0 and, when it states a blanket structure, its privacy blanket.

    Parameters
    ----------
    n : int
        Users, one shuffled report each (n >= 1).
    oracle : LocalRandomizer
        The randomizer every user runs (stored in a ledger by registry name and parameters).
    gamma : float, optional
        Poisson participation: each user reports with probability gamma in (0, 1].
    sample : int, optional
        Fixed-size participation: a uniform m = sample of the n users report (not with gamma).
    relation : {"substitution", "add_remove"}, default "substitution"
        The neighbouring relation of the bound (docs/theory.md §2.7).
    points : int, default 120
        Profile evaluations of the connect-the-dots PLD.
    """

    n: int
    oracle: LocalRandomizer
    gamma: float | None = None
    sample: int | None = None
    relation: str = "substitution"
    points: int = 120

    def __post_init__(self):
        st = self.structure
        eps0 = self.oracle.replacement_eps if st is None else st.eps0
        if not eps0 <= EXP_MAX:
            raise ValueError(f"{self.oracle.describe()}: realised eps0 = {eps0:.4g} is above "
                             f"the supported {EXP_MAX:g}")
        self._checked_sampling()

    @functools.cached_property
    def structure(self) -> (ShuffleStructure | ScalarStructure | BinaryStructure
                            | TableStructure | None):
        """The randomizer's blanket structure, derived once (not a field: eq/hash by oracle)."""
        return BL.structure(self.oracle)

    @property
    def _eps0(self) -> float:
        st = self.structure
        return V.local_eps0(self.oracle.replacement_eps, "eps0") if st is None else st.eps0

    @property
    def eps0(self) -> float:
        """The randomizer's realised replacement eps0 (as OracleShuffledRound.eps0)."""
        return self._eps0

    def _uppers(self):
        st = self.structure
        if st is None or isinstance(st, TableStructure):  # a table: the general bound
            return PA.upper_profiles(self.n, self.sampling, eps0=self._eps0)
        return PA.upper_profiles(self.n, self.sampling, st=st)


EVENTS.update({cls.__name__: cls for cls in (SampledShuffledRound, SampledKRRShuffledRound,
                                             SampledOracleShuffledRound)})


@functools.lru_cache(maxsize=4096)
def _sampled_atoms(event: _SampledRound):
    """Connect-the-dots atoms of a sampled round's profile on PA.dots_grid (fine where the
    profile is not negligible, closed by its cap where the profile is 0)."""
    profile = event._profile()
    grid = PA.dots_grid(profile, event._cap(), event._eps0, event.sampling, event.points)
    return P.profile_atoms_at(profile, grid)

# Central mechanisms under random allocation (balls and bins, docs/theory.md §3.8): the module
# registers its events in EVENTS when imported
from . import allocation_central  # noqa: E402,F401
# randomized response over k buckets (accounting/pure.py), registered the same way
from . import pure  # noqa: E402,F401
