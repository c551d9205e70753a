"""The events an accountant composes: data-only, frozen (hashable) records of mechanisms, each
validating its own fields (docs/theory.md §3.4). The backends dispatch on their type and say
which they support: the PLD (event_pld), the Renyi curve (event_rdp), the (eps, delta) pair
(kov), the pure eps (pure), the DpEvent (interop) and the cost (plan); the shuffled rounds'
profiles are in event_profiles. As dp_accounting keeps ``dp_event.py`` apart from its
accountants, this module imports no accounting code but its fields' validation (sampling, checks).
"""
from __future__ import annotations

import functools
import importlib
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..core import validate as V
from ..core.numerics import EXP_MAX
from ..randomizers.contract import LocalRandomizer
from ..randomizers.scalar import ScalarStructure
from ..randomizers.structure import BinaryStructure, ShuffleStructure
from ..randomizers.table_law import TableStructure
from .checks import structure as oracle_structure
from .sampling import Sampling

__all__ = ["Event", "ShuffledRound", "KRRShuffledRound",
           "OracleShuffledRound", "Gaussian", "Laplace", "PureDP", "ApproxDP", "PairOfPmfs",
           "EVENTS", "PoissonSampledGaussian", "PoissonSampledLaplace", "ShuffledSGDPass",
           "SampledShuffledRound", "SampledKRRShuffledRound", "SampledOracleShuffledRound"]


class Event:
    """A mechanism the accountant can compose: subclasses are frozen (hashable) dataclasses
    whose ``__post_init__`` validates their fields; they carry no accounting behaviour.

    ``relation`` names the neighbouring relation the event's bound holds for ("substitution":
    one user's data replaced; "add/remove": one record added or removed; None: whichever
    relation its parameters were stated for, e.g. a Gaussian's sensitivity).
    """

    relation: str | None = None  # a class constant, or a field where the user gives it

    # deprecated (one release): pld, rdp, approx_dp, pure_eps, to_dp_event and work, set below:
    # each warns and calls its backend, looked up by name at call time (no import of the
    # accounting's backends here; they go with these methods)


def _deprecated(method: str, module: str, function: str):
    """Event.<method>(*args) -> ldpcompress.accounting.<module>.<function>(event, *args), with a
    DeprecationWarning naming the replacement."""
    replacement = f"ldpcompress.accounting.{module}.{function}"

    def delegate(self, *args):
        warnings.warn(f"Event.{method}() is deprecated: call {replacement}(event, ...)",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(f"ldpcompress.accounting.{module}"),
                       function)(self, *args)
    delegate.__name__, delegate.__qualname__ = method, f"Event.{method}"
    delegate.__doc__ = (f"Deprecated: ``{replacement}(event, *args)``.\n\nParameters\n"
                        f"----------\n*args\n    The arguments of ``{function}`` after the "
                        "event.\n")
    return delegate


for _method, _module, _function in (("pld", "event_pld", "pld"), ("rdp", "event_rdp", "rdp"),
                                    ("approx_dp", "kov", "approx_dp"),
                                    ("pure_eps", "pure", "pure_eps"),
                                    ("to_dp_event", "interop", "dp_event_of"),
                                    ("work", "plan", "work")):
    setattr(Event, _method, _deprecated(_method, _module, _function))


def _points(points) -> int:
    return V.integer_at_least(points, "points", 8, 10**5)


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

    def __post_init__(self):
        object.__setattr__(self, "n", V.shuffle_users(self.n))
        object.__setattr__(self, "eps0", V.local_eps0(self.eps0, "eps0"))
        object.__setattr__(self, "points", _points(self.points))
        if self.pld_method not in ("auto", "exact", "dots"):
            raise ValueError(f"pld_method must be 'auto', 'exact' or 'dots', got "
                             f"{self.pld_method!r}")


@dataclass(frozen=True)
class KRRShuffledRound(Event):
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

    relation = "substitution"

    def __post_init__(self):
        object.__setattr__(self, "n", V.shuffle_users(self.n))
        object.__setattr__(self, "eps0", V.local_eps0(self.eps0, "eps0"))
        object.__setattr__(self, "k", V.domain_size(self.k))
        object.__setattr__(self, "points", _points(self.points))


@dataclass(frozen=True)
class OracleShuffledRound(Event):
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

    relation = "substitution"

    def __post_init__(self):
        object.__setattr__(self, "n", V.shuffle_users(self.n))
        st = self.structure
        eps0 = self.oracle.replacement_eps if st is None else st.eps0
        if isinstance(st, ScalarStructure):  # x + noise: its own blanket (Gaussian: no eps0)
            eps0 = min(eps0, EXP_MAX)
        if not eps0 <= EXP_MAX:
            raise ValueError(f"{self.oracle.describe()}: realised eps0 = {eps0:.4g} is above "
                             f"the supported {EXP_MAX:g}")
        object.__setattr__(self, "points", _points(self.points))

    @functools.cached_property
    def structure(self) -> (ShuffleStructure | ScalarStructure | BinaryStructure
                            | TableStructure | None):
        """The randomizer's blanket structure, derived once (not a field: eq/hash by oracle)."""
        return oracle_structure(self.oracle)

    @property
    def eps0(self) -> float:
        """The randomizer's realised replacement eps0 (its structure's, else its stated
        replacement eps); inf for Gaussian noise, which has none (its dots then run up to the
        eps where one report's delta is 1e-15, accounting/event_profiles.py)."""
        st = self.structure
        return V.local_eps0(self.oracle.replacement_eps, "eps0") if st is None else st.eps0


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

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self):
        V.positive_finite(self.sigma, "sigma")
        V.positive_finite(self.sensitivity, "sensitivity")


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

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self):
        V.positive_finite(self.scale, "scale")
        V.positive_finite(self.sensitivity, "sensitivity")


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
        _check_pmfs(self.p, self.q)


def _check_pmfs(p: tuple, q: tuple) -> None:
    """Two pmfs on one finite support: 1-D, equal lengths, entries >= 0 and finite, sum 1."""
    p_arr, q_arr = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p_arr.shape != q_arr.shape or p_arr.ndim != 1:
        raise ValueError("p and q must be 1-D arrays of the same length")
    for name, v in (("p", p_arr), ("q", q_arr)):
        if np.any(v < 0) or not np.all(np.isfinite(v)) or abs(v.sum() - 1.0) > 1e-9:
            raise ValueError(f"{name} must be a probability vector (non-negative, sum 1)")


def _sampling_probability(q) -> float:
    q = V.probability_in(q, "q", 0.0, 1.0)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q!r}: q = 1 is the mechanism itself "
                         "(Gaussian / Laplace) and q = 0 releases nothing")
    return q


class _PoissonSampled(Event):
    """Shared validation of the Poisson-subsampled noise events: subclasses name the field
    holding their noise's scale (SCALE) and have fields q and sensitivity."""

    relation = "add/remove"
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

    SCALE: ClassVar[str] = "sigma"


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

    SCALE: ClassVar[str] = "scale"


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
        from .gaussian import epsilon_bracket  # the Gaussian's exact eps (a leaf module)

        eps0 = epsilon_bracket(sensitivity / sigma, delta0)[1]
        if eps0 <= 0.0:
            raise ValueError(f"a Gaussian step with sigma = {sigma:g} is (0, {delta0:g})-DP: "
                             "it needs no shuffling; pass a smaller delta0")
        return cls(n, eps0, delta0=delta0, **kwargs)


class _SampledRound(Event):
    """A shuffled round in which each user reports with probability ``gamma`` (Poisson) or a
    uniform ``sample`` of the n users report, neighbours by ``relation``: the connect-the-dots
    PLD of the smallest of its sampled bounds (DGKKM22), its Renyi curve where the round has a
    finite largest loss (fixed size; Poisson substitution), and KOV at that largest loss.
    Poisson add/remove has neither: the report count has an unbounded loss (every user
    reporting reveals user 1), so its Renyi divergences are infinite (accounting/event_profiles.py
    gives each subclass's profiles)."""

    n: int
    gamma: float | None
    sample: int | None
    relation: str
    points: int

    def _checked_sampling(self) -> Sampling:
        s = Sampling.of(self.n, self.gamma, self.sample, self.relation)
        object.__setattr__(self, "n", s.n)
        object.__setattr__(self, "gamma", s.gamma)
        object.__setattr__(self, "sample", s.m)
        object.__setattr__(self, "points", _points(self.points))
        return s

    @property
    def sampling(self) -> Sampling:
        """Who reports and which datasets are neighbours (validated)."""
        return Sampling.of(self.n, self.gamma, self.sample, self.relation)


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
        return oracle_structure(self.oracle)

    @property
    def eps0(self) -> float:
        """The randomizer's realised replacement eps0 (as OracleShuffledRound.eps0)."""
        st = self.structure
        return V.local_eps0(self.oracle.replacement_eps, "eps0") if st is None else st.eps0


EVENTS: dict[str, type[Event]] = {cls.__name__: cls for cls in (
    ShuffledRound, KRRShuffledRound, OracleShuffledRound, Gaussian, Laplace, PureDP, ApproxDP,
    PairOfPmfs, PoissonSampledGaussian, PoissonSampledLaplace, ShuffledSGDPass,
    SampledShuffledRound, SampledKRRShuffledRound, SampledOracleShuffledRound)}
"""The event classes by name (a saved ledger names its events' classes, accounting/state.py);
the events defined beside their mathematics (allocation, allocation_central, pure) add
themselves when imported."""
