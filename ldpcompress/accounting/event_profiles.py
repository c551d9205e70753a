"""The privacy profiles behind the shuffled-round events (docs/theory.md §2, §3.2): for each
event, eps -> an upper bound on delta, and the connect-the-dots atoms of that profile
(Doroshenko et al. 2022) from which its PLD (accounting/event_pld.py) and its Renyi curve
(accounting/event_rdp.py) are read; the Poisson-sampled noise laws (docs/theory.md §3.6).
``profile(event)`` dispatches on the event's type; the atoms are cached per event (events are
frozen, hashable records).
"""
from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np

from ..core.numerics import TOL_MIN, UNIT_ROUNDOFF
from ..randomizers.scalar import ScalarStructure
from ..randomizers.structure import BinaryStructure
from ..randomizers.table_law import TableStructure
from . import blanket as BL
from . import participation as PA
from . import pld as P
from . import sampled as SM
from . import scalar as SC
from . import table as TB
from .binary import EPS0_MAX as BINARY_EPS0_MAX
from .binary import BinaryLaw, dots_profile
from .events import (Event, KRRShuffledRound, OracleShuffledRound, PoissonSampledGaussian,
                     PoissonSampledLaplace, SampledKRRShuffledRound, SampledOracleShuffledRound,
                     SampledShuffledRound, ShuffledRound, ShuffledSGDPass)
from .profiles import GeneralProfile, KRRBlanketProfile, KRRSplitProfile

__all__ = ["DOTS_TOL", "BLANKET_DOTS_TOL", "EXACT_ATOMS", "EXACT_RDP_ATOMS", "DOTS_RDP_EPS0_MAX",
           "RDP_GRID_H", "SAMPLED_ROUNDS", "POISSON_NOISES", "profile", "dots_eps_max",
           "dots_atoms", "pld_method", "exact_rdp", "sampled_eps0", "sampled_cap",
           "sampled_uppers", "sampled_atoms", "noise_scale", "noise_of", "grid_rdp_atoms"]

# Window tolerance of the profiles behind connect-the-dots events. The profile cannot fall
# below the windows' outside mass, so a coarse tolerance leaves atoms of mass ~tol at large
# losses, which dominate the Renyi curve from order ~ log(1/tol)/loss on: at 1e-40 the k-RR
# round (n = 1e6, eps0 = 1, k = 100, 10 rounds) had RDP eps 0.0683; at 1e-300 it is 0.0093.
DOTS_TOL = TOL_MIN
BLANKET_DOTS_TOL = 1e-40

# ShuffledRound: the exact pair up to EXACT_ATOMS atoms (PLD) / EXACT_RDP_ATOMS (Renyi curve)
EXACT_ATOMS = 2e7
EXACT_RDP_ATOMS = 2e6
DOTS_RDP_EPS0_MAX = 15.0  # the profiles' float arithmetic is checked up to here
RDP_GRID_H = 2e-5  # grid of the Renyi curves read from a rounded-up loss law (bias <= h)

SAMPLED_ROUNDS = (SampledShuffledRound, SampledKRRShuffledRound, SampledOracleShuffledRound)
POISSON_NOISES = {PoissonSampledGaussian: SM.GaussianNoise,
                  PoissonSampledLaplace: SM.LaplaceNoise}


# -- the shuffled rounds ------------------------------------------------------------------------

@functools.singledispatch
def profile(event: Event) -> Callable[[float], float]:
    """eps -> an upper bound on the event's delta(eps) (its connect-the-dots PLD dominates it)."""
    raise TypeError(f"{type(event).__name__} is not accounted from a privacy profile")


def _shuffled_round_profile(event):
    general = GeneralProfile(event.n, event.eps0)
    return lambda e: general.delta(e, DOTS_TOL)


profile.register(ShuffledRound, _shuffled_round_profile)


def _krr_shuffled_round_profile(event):
    """min(general, split pair, blanket pair): each is an upper bound on the k-RR profile;
    for k = 2 the exact count over every dataset (docs/theory.md §2.14) replaces the
    blanket pair (which is at least the exact value it is within 1e-3 of, and cost 8 times
    more at n = 1e4). The blanket pair is skipped where its tables exceed their work limit
    (large n), as in ``amplification.epsilon``, so the event answers at every supported n."""
    return _krr_profile(event.n, event.eps0, event.k, event.points)


profile.register(KRRShuffledRound, _krr_shuffled_round_profile)


def _krr_profile(n: int, eps0: float, k: int, points: int) -> Callable[[float], float]:
    profiles = [(GeneralProfile(n, eps0), DOTS_TOL), (KRRSplitProfile(n, eps0, k), DOTS_TOL)]
    fns = [functools.partial(p.delta, tol=tol) for p, tol in profiles]
    if k == 2 and eps0 <= BINARY_EPS0_MAX:
        fns.append(dots_profile(n, BinaryLaw.rr(eps0), eps0, points, BLANKET_DOTS_TOL))
        return lambda e: min(f(e) for f in fns)
    blanket = KRRBlanketProfile(n, eps0, k)
    if blanket.unsupported() is None:
        # its tables grow as log(1/tol): 1e-40 there, while the cheap general and split
        # pairs take the deep tail (far in the tail the min is theirs)
        fns.append(functools.partial(blanket.delta, tol=BLANKET_DOTS_TOL))
    return lambda e: min(f(e) for f in fns)


def _oracle_shuffled_round_profile(event):
    """The smallest of the oracle's generic bound at its realised eps0 and its own blanket
    (docs/theory.md §2.5, §2.11, §2.14, §2.15)."""
    st, n = event.structure, event.n
    if isinstance(st, ScalarStructure):  # docs/theory.md §2.11, profile at 1e-40 windows
        own = SC.ScalarBlanketProfile(n, st)
        if not math.isfinite(st.eps0):
            return lambda e: own.delta(e, BLANKET_DOTS_TOL)
        scalar_general = GeneralProfile(n, st.eps0)
        return lambda e: min(scalar_general.delta(e, DOTS_TOL), own.delta(e, BLANKET_DOTS_TOL))
    eps0 = dots_eps_max(event)
    general = GeneralProfile(n, eps0)
    if st is None:
        return lambda e: general.delta(e, DOTS_TOL)
    if isinstance(st, BinaryStructure):  # the exact count over datasets (§2.14)
        if st.eps0 > BINARY_EPS0_MAX:
            return lambda e: general.delta(e, DOTS_TOL)
        exact = dots_profile(n, BinaryLaw.of(st.p1, st.q0), eps0, event.points,
                             BLANKET_DOTS_TOL)
        return lambda e: min(general.delta(e, DOTS_TOL), exact(e))
    if isinstance(st, TableStructure):  # docs/theory.md §2.15
        table = TB.TableBlanketProfile(n, st)
        if table.unsupported() is not None:
            return lambda e: general.delta(e, DOTS_TOL)
        return lambda e: min(general.delta(e, DOTS_TOL), table.delta(e, BLANKET_DOTS_TOL))
    if st.krr_k is not None:  # the law of k-RR: its own bounds
        return _krr_profile(n, st.eps0, st.krr_k, event.points)
    # M'-blocks of half a standard deviation (sound, see blanket.py): 4x fewer terms for
    # the profile evaluations of the dots, at about 0.3% of delta
    own_blanket = BL.BlanketProfile(n, st, block_frac=0.5)
    return lambda e: min(general.delta(e, DOTS_TOL), own_blanket.delta(e, BLANKET_DOTS_TOL))


profile.register(OracleShuffledRound, _oracle_shuffled_round_profile)


def _shuffled_sgdpass_profile(event):
    """delta0 = 0: the shuffled round's. Else eps -> min(1, pair delta(e) +
    (e^e + 1)(1 + e^-eps0/2) n delta0) at e = min(eps, e*), e* the minimiser of that total (the
    true profile is non-increasing, so its value at any smaller e bounds it); delta0 from eps0
    on (one step is (eps0, delta0)-DP), FMT21 Thm 3.8, docs/theory.md §3.7."""
    general = GeneralProfile(event.n, event.eps0)
    if event.delta0 == 0.0:
        return lambda e: general.delta(e, DOTS_TOL)
    extra = (1.0 + 0.5 * math.exp(-event.eps0)) * event.n * event.delta0

    def total(e):
        return min(1.0, general.delta(e, DOTS_TOL) + (math.exp(e) + 1.0) * extra)
    grid = np.linspace(0.0, event.eps0, 257)
    e_star = float(grid[int(np.argmin([total(float(e)) for e in grid]))])
    return lambda e: event.delta0 if e >= event.eps0 else total(min(e, e_star))


profile.register(ShuffledSGDPass, _shuffled_sgdpass_profile)


@functools.singledispatch
def dots_eps_max(event: Event) -> float:
    """The largest loss of the event's dots: its eps0 (one report is eps0-DP, so is the
    shuffled output)."""
    return event.eps0  # type: ignore[attr-defined]


def _oracle_shuffled_round_dots_eps_max(event) -> float:
    """The realised eps0, or for Gaussian noise the eps where one report's delta is 1e-15
    (delta beyond it goes to the infinity atom)."""
    st = event.structure
    if isinstance(st, ScalarStructure) and not math.isfinite(st.eps0):
        return SC.ScalarBlanketProfile(event.n, st).eps_max(1e-15)
    return event.eps0


dots_eps_max.register(OracleShuffledRound, _oracle_shuffled_round_dots_eps_max)


@functools.lru_cache(maxsize=4096)  # a ledger of thousands of distinct rounds reuses them
def dots_atoms(event: Event):
    """The connect-the-dots atoms (losses, masses, infinity mass) of the event's profile up to
    its eps max (independent of the Renyi order, so computed once per event: the order
    refinement asks for many single orders)."""
    return P.profile_atoms(profile(event), dots_eps_max(event), event.points)  # type: ignore[attr-defined]


def pld_method(event: ShuffledRound) -> str:
    """"exact" or "dots": the construction of a shuffled round's PLD ("auto": the exact pair up
    to EXACT_ATOMS atoms, about 288 n e^-eps0)."""
    if event.pld_method != "auto":
        return event.pld_method
    atoms = 288.0 * event.n * math.exp(-event.eps0)
    return "exact" if atoms <= EXACT_ATOMS else "dots"


def exact_rdp(event: ShuffledRound) -> bool:
    """Whether the Renyi curve of the exact pair is computed (few atoms)."""
    if event.pld_method == "dots" and event.eps0 <= DOTS_RDP_EPS0_MAX:
        return False
    return 288.0 * event.n * math.exp(-event.eps0) <= EXACT_RDP_ATOMS


# -- shuffled rounds with participation sampling (docs/theory.md §2.7) -----------------------

@functools.singledispatch
def sampled_eps0(event: Event) -> float:
    """The realised eps0 of a sampled round's randomizer."""
    raise TypeError(f"{type(event).__name__} is not a sampled round")


def _sampled_shuffled_round_sampled_eps0(event) -> float:
    return event.eps0


sampled_eps0.register(SampledShuffledRound, _sampled_shuffled_round_sampled_eps0)


def _sampled_krr_shuffled_round_sampled_eps0(event) -> float:
    return PA.krr_structure(event.k, event.eps0).eps0


sampled_eps0.register(SampledKRRShuffledRound, _sampled_krr_shuffled_round_sampled_eps0)


def _sampled_oracle_shuffled_round_sampled_eps0(event) -> float:
    return event.eps0


sampled_eps0.register(SampledOracleShuffledRound, _sampled_oracle_shuffled_round_sampled_eps0)


def sampled_cap(event) -> float:
    """eps from which every bound of the sampled round is 0 (inf: Poisson add/remove)."""
    return event.sampling.cap(sampled_eps0(event))


@functools.singledispatch
def sampled_uppers(event: Event) -> list:
    """The upper profiles of a sampled round (accounting/participation.py)."""
    raise TypeError(f"{type(event).__name__} is not a sampled round")


def _sampled_general_uppers(event):
    return PA.upper_profiles(event.n, event.sampling, eps0=sampled_eps0(event))


def _sampled_krr_uppers(event):
    return PA.upper_profiles(event.n, event.sampling, eps0=event.eps0, k=event.k)


def _sampled_oracle_uppers(event):
    """Its blanket when it states one, else (also for a table) the general bound."""
    st = event.structure
    if st is None or isinstance(st, TableStructure):
        return _sampled_general_uppers(event)
    return PA.upper_profiles(event.n, event.sampling, st=st)


sampled_uppers.register(SampledShuffledRound, _sampled_general_uppers)
sampled_uppers.register(SampledKRRShuffledRound, _sampled_krr_uppers)
sampled_uppers.register(SampledOracleShuffledRound, _sampled_oracle_uppers)


def _sampled_profile(event) -> Callable[[float], float]:
    profiles = [(p, BLANKET_DOTS_TOL if isinstance(p, PA.SampledBlanketProfile) else DOTS_TOL)
                for p in sampled_uppers(event) if p.unsupported() is None]
    return lambda e: min(p.delta(e, tol) for p, tol in profiles)


for _cls in SAMPLED_ROUNDS:
    profile.register(_cls, _sampled_profile)


@functools.lru_cache(maxsize=4096)
def sampled_atoms(event):
    """Connect-the-dots atoms of a sampled round's profile on PA.dots_grid (fine where the
    profile is not negligible, closed by its cap where the profile is 0)."""
    fn = profile(event)
    grid = PA.dots_grid(fn, sampled_cap(event), sampled_eps0(event), event.sampling,
                        event.points)
    return P.profile_atoms_at(fn, grid)


# -- Poisson-sampled noise (docs/theory.md §3.6) ------------------------------------------------

def _scale(value: float, sensitivity: float) -> float:
    """Noise scale per unit sensitivity, rounded down (less noise is the pessimistic side)."""
    return value / sensitivity * (1.0 - 4.0 * UNIT_ROUNDOFF)


def noise_scale(event) -> float:
    """The event's noise scale per unit sensitivity, rounded down."""
    return _scale(getattr(event, event.SCALE), event.sensitivity)


@functools.lru_cache(maxsize=64)
def noise_of(event) -> SM.SampledNoise:
    """The sampled noise law of a Poisson-sampled event (cached per event)."""
    return POISSON_NOISES[type(event)](noise_scale(event), event.q)


@functools.lru_cache(maxsize=64)
def grid_rdp_atoms(event, direction: str):
    """(losses, log masses) of one direction's rounded-up loss law on the RDP grid."""
    d = noise_of(event).cells_direction(direction, RDP_GRID_H, upper=True, bounded_top=True)
    keep = d.pmf > 0
    return (d.lo + np.flatnonzero(keep)) * RDP_GRID_H, np.log(d.pmf[keep]) + 1e-12
