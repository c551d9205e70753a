"""Amplification by shuffling: central (eps, delta) of n shuffled eps0-LDP reports (docs/theory.md §2).

Public queries:

* ``epsilon(n, eps0, delta, k=None, delta0=0)`` -> AmplificationResult: the smallest sound eps
  over every applicable bound, the bound that produced it, and the exact lower bound.
* ``epsilon(n, delta=..., oracle=o)``: the same question asked of one frequency oracle ``o``
  (its realised eps0, its privacy-blanket bound and its own attack), docs/theory.md §2.5.
* ``delta(n, eps0, eps, k=None, delta0=0)`` / ``delta(n, eps=..., oracle=o)``: delta at eps.
* One function per bound (``general_epsilon``, ``closed_form_epsilon``, ``krr_blanket_delta`` ...)
  returning a :class:`Bound`.
* ``clone_pair_delta(n, q, p, eps)``: the generic §2.1 kernel, scalar or array eps.

Every upper value is min(eps0, ...) and rounded conservatively: outside mass is added to delta,
eps(delta) returns the upper end of a bracket of relative width 1e-10.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import validate as V
from ..core.lazy import lazy_module
from ..core.numerics import EXP_MAX
from ..core.progress import compute_time
from ..kernels.clones import clone_delta_many
from .approx import (APPROX_LABEL, approx_delta, approx_delta_of, approx_epsilon,
                     approx_epsilon_of, approx_extra_delta)
from .bounds import AmplificationResult, Bound, NoSoundBound, best_upper
from .profiles import (
    BinaryLowerProfile,
    GeneralProfile,
    KRRBlanketProfile,
    KRRLowerProfile,
    KRRSplitProfile,
    Profile,
    window_tol,
)
from .rounding import round_up
from .solve import epsilon_for_delta

if TYPE_CHECKING:
    from ..randomizers.scalar import ScalarStructure
    from ..randomizers.structure import BinaryStructure

# imported by the queries that need them (an oracle's blanket, participation sampling), not by
# every query: each brings its kernels, whose loading a plain eps0 query need not pay
BL = lazy_module("ldpcompress.accounting.blanket")
PA = lazy_module("ldpcompress.accounting.participation")  # imports bounds, not this module
BI = lazy_module("ldpcompress.accounting.binary")

__all__ = ["NoSoundBound", "Bound", "AmplificationResult", "best_upper", "clone_pair_delta",
           "general_epsilon", "general_delta",
           "CLOSED_FORM_LABEL", "closed_form_epsilon", "closed_form_delta", "krr_split_epsilon",
           "krr_split_delta", "krr_blanket_epsilon", "krr_blanket_delta", "lower_epsilon",
           "lower_delta", "APPROX_LABEL", "approx_delta", "approx_epsilon", "approx_extra_delta",
           "epsilon", "epsilon_of", "delta"]



# ----------------------------------------------------------------------------------------------
# Building blocks
# ----------------------------------------------------------------------------------------------

def _timed(fn, *args):
    start = compute_time()
    value = fn(*args)
    return value, compute_time() - start


def _profile_epsilon(profile: Profile, delta: float, eps_max: float | None = None) -> float:
    """eps(delta) of one profile: upper end for upper bounds, lower end for lower bounds.

    A given eps_max (a lower bound solved under the best upper bound) is usually within a
    fraction of a percent of the answer, so the search starts just below it.
    """
    solve = getattr(profile, "solve_epsilon", None)
    if solve is not None:  # a profile with its own eps search
        return solve(delta)
    tol = window_tol(delta)
    if eps_max is None:
        eps_max = profile.eps_max(delta)
        guess = profile.guess(delta)
        if guess is None:
            guess = _first_guess(profile.n, min(profile.eps0, eps_max), delta)
    else:
        guess = eps_max * (1.0 - 1e-3)
    return epsilon_for_delta(lambda e: profile.delta(e, tol), delta, eps_max,
                             upper=profile.upper, guess=guess, rtol=profile.rtol)


def _first_guess(n: int, eps0: float, delta: float) -> float:
    """Where the solver starts probing: Thm 3.1's formula (without its condition), a few times
    the numerical answer; the probe walks down from it."""
    e0 = math.exp(min(eps0, EXP_MAX))
    inner = (8.0 * math.sqrt(e0 * (math.log(4.0) - math.log(delta)) / n) + 8.0 * e0 / n)
    return min(eps0, math.log1p(inner))


def _eps_bound(profile: Profile, delta: float, eps_max: float | None = None) -> Bound:
    why = profile.unsupported()
    if why is not None:
        return Bound(profile.name, profile.label, None, profile.upper, note=why)
    value, secs = _timed(_profile_epsilon, profile, delta, eps_max)
    return Bound(profile.name, profile.label, value, profile.upper, seconds=secs)


def _delta_bound(profile: Profile, eps: float) -> Bound:
    why = profile.unsupported()
    if why is not None:
        return Bound(profile.name, profile.label, None, profile.upper, note=why)
    value, secs = _timed(profile.delta_at, eps)
    return Bound(profile.name, profile.label, value, profile.upper, seconds=secs)


def clone_pair_delta(n, q, p, eps, tol: float = 1e-30, *, pc: float | None = None):
    """H_{e^eps}(P||Q) of the generic clone pair (FMT21 Thm 3.2; upper bound, +outside mass).

    Parameters
    ----------
    n : int
        Users (n >= 1).
    q : float
        Clone probability in [0, 1] (taken as exact: 1 - q is formed as 1 - q).
    p : float
        Split in [1/2, 1); without ``pc``, 1 - p (exact for p >= 1/2) is used.
    eps : float or array of float
        The eps (>= 0) at which the hockey-stick divergence is evaluated.
    tol : float, default 1e-30
        Mass the summation window may leave out (added to the answer), in [1e-300, 1).
    pc : float, optional
        1 - p, given when p is close to 1 (it must agree with p to rounding and be > 0), e.g.
        pc = 1/(e^eps0+1) for p = e^eps0/(e^eps0+1), since p itself then carries few digits
        of 1 - p.
    """
    n = V.shuffle_users(n)
    q = V.probability_in(q, "q", 0.0, 1.0)
    tol = V.tolerance(tol)
    if pc is None:
        p = V.probability_in(p, "p", 0.5, 1.0, high_open=True)
        pc = 1.0 - p
    else:
        p = V.probability_in(p, "p", 0.5, 1.0)
        pc = V.probability_in(pc, "pc", 0.0, 0.5)
        if not (pc > 0.0 and abs((p - 1.0) + pc) <= 2.0 ** -52):
            raise ValueError(f"pc must be in (0, 1/2] and equal 1 - p to rounding, got p={p!r}, "
                             f"pc={pc!r}")
    arr, scalar = V.eps_array(eps)
    out = clone_delta_many(n, q, 1.0 - q, p, pc, arr, tol)
    return float(out[0]) if scalar else out


# ----------------------------------------------------------------------------------------------
# Individual bounds
# ----------------------------------------------------------------------------------------------

def general_epsilon(n, eps0, delta) -> Bound:
    """eps(delta) for any eps0-LDP randomizer, numerical FMT21 Thm 3.2 (docs/theory.md §2.1-2.3)."""
    n, eps0, delta = V.shuffle_users(n), V.local_eps0(eps0), V.probability_open(delta, "delta")
    return _eps_bound(GeneralProfile(n, eps0), delta)


def general_delta(n, eps0, eps) -> Bound:
    """delta(eps) for any eps0-LDP randomizer, numerical FMT21 Thm 3.2 (docs/theory.md §2.1-2.3)."""
    n, eps0, eps = V.shuffle_users(n), V.local_eps0(eps0), V.nonnegative(eps, "eps")
    return _delta_bound(GeneralProfile(n, eps0), eps)


CLOSED_FORM_LABEL = "closed form (FMT21 Thm 3.1)"


def _closed_form_condition(n: int, eps0: float, log4d: float) -> bool:
    return eps0 <= math.log(n) - math.log(16.0 * log4d)


def closed_form_epsilon(n, eps0, delta) -> Bound:
    """FMT21 Thm 3.1: log(1 + (e^eps0-1)/(e^eps0+1) (8 sqrt(e^eps0 L / n) + 8 e^eps0/n)),
    L = log(4/delta), valid only when eps0 <= log(n / (16 L)) (docs/theory.md §2.1-2.3)."""
    n, eps0, delta = V.users(n), V.local_eps0(eps0), V.probability_open(delta, "delta")
    return _closed_form_epsilon(n, eps0, delta)


def _closed_form_epsilon(n: int, eps0: float, delta: float) -> Bound:
    """closed_form_epsilon of validated arguments (what :func:`epsilon` asks, once checked)."""
    start = compute_time()
    log4d = math.log(4.0) - math.log(delta)
    if not _closed_form_condition(n, eps0, log4d):
        return Bound("closed_form", CLOSED_FORM_LABEL, None,
                     note=f"needs eps0 <= log(n/(16 log(4/delta))) = "
                          f"{math.log(n) - math.log(16.0 * log4d):.4g}",
                     seconds=compute_time() - start)
    e0 = math.exp(eps0)
    # (e^eps0 - 1)/(e^eps0 + 1) = tanh(eps0/2): no cancellation at tiny eps0
    inner = math.tanh(0.5 * eps0) * (8.0 * math.sqrt(e0 * log4d / n) + 8.0 * e0 / n)
    value = min(eps0, round_up(math.log1p(inner)))
    return Bound("closed_form", CLOSED_FORM_LABEL, value, seconds=compute_time() - start)


def closed_form_delta(n, eps0, eps) -> Bound:
    """The smallest delta for which Thm 3.1 certifies eps (solved for L = log(4/delta))."""
    n, eps0, eps = V.users(n), V.local_eps0(eps0), V.nonnegative(eps, "eps")
    return _closed_form_delta(n, eps0, eps)


def _closed_form_delta(n: int, eps0: float, eps: float) -> Bound:
    """closed_form_delta of validated arguments (what :func:`delta` asks, once checked)."""
    if eps >= eps0:
        return Bound("closed_form", CLOSED_FORM_LABEL, 0.0, note="eps >= eps0")
    e0 = math.exp(eps0)
    x = math.expm1(eps) / math.tanh(0.5 * eps0) - 8.0 * e0 / n
    l_cap = n * math.exp(-eps0) / 16.0  # the validity condition, as a bound on L
    if x <= 0.0 or l_cap <= math.log(4.0):
        return Bound("closed_form", CLOSED_FORM_LABEL, None,
                     note="no delta < 1 satisfies Thm 3.1 and its condition at this eps")
    big_l = min(n * x * x / (64.0 * e0), l_cap) * (1.0 - 1e-15)
    if big_l <= math.log(4.0):
        return Bound("closed_form", CLOSED_FORM_LABEL, None,
                     note="Thm 3.1 gives delta >= 1 at this eps")
    # 4 e^-L underflows to 0 for huge L: report the smallest positive double instead (a
    # delta of 0 would claim pure DP, which Thm 3.1 does not give)
    return Bound("closed_form", CLOSED_FORM_LABEL, max(round_up(4.0 * math.exp(-big_l)), 5e-324))


def _krr_profiles(n, eps0, k, blocks):
    """k-RR's bounds; where the §2.4(b) tables are too large, the same blanket by the pair
    kernel (never the generic bound because of size); k = 2 (binary randomized response) also
    its exact count over every dataset (docs/theory.md §2.14)."""
    table = KRRBlanketProfile(n, eps0, k, blocks)
    own = table if table.unsupported() is None else BL.KRRPairProfile(n, eps0, k)
    out = [GeneralProfile(n, eps0), KRRSplitProfile(n, eps0, k), own]
    if k == 2:
        out.append(BI.BinaryCountProfile(n, eps0))
    return out


def _lower_profile(n, eps0, k, uppers=()) -> Profile:
    """The exact attack: binary RR's worst dataset found (trying those the upper search of
    ``uppers`` evaluated), k-RR's §2.6(b), or for any eps0-LDP randomizer (k None) the most
    vulnerable k-RR found (docs/theory.md §2.14)."""
    if k is None:
        return BI.GenericLowerProfile(n, eps0)
    if k == 2:
        binary = BI.BinaryCountLowerProfile(n, eps0, partner=next(
            (p.engine for p in uppers if isinstance(p, BI.BinaryCountProfile)), None))
        return binary if binary.unsupported() is None else BinaryLowerProfile(n, eps0)
    if k < 3:
        return BinaryLowerProfile(n, eps0)
    # where the exact §2.6(b) sum is too large (about 1e8 terms), the §2.6(c) attack, one
    # window in J: within ~1e-5 of it from n = 1e5 on at moderate eps0, but not at extreme
    # eps0 (n = 1e6, eps0 = 30: 29.38 vs 29.99997), so the exact sum is kept where it runs
    exact = KRRLowerProfile(n, eps0, k)
    return exact if exact.unsupported() is None else BL.KRRAttackProfile(n, eps0, k)


def krr_split_epsilon(n, eps0, k, delta) -> Bound:
    """eps(delta) of shuffled k-RR by the split pair (docs/theory.md §2.4(a))."""
    n, eps0, k = V.shuffle_users(n), V.local_eps0(eps0), V.domain_size(k)
    return _eps_bound(KRRSplitProfile(n, eps0, k), V.probability_open(delta, "delta"))


def krr_split_delta(n, eps0, k, eps) -> Bound:
    """delta(eps) of shuffled k-RR by the split pair (docs/theory.md §2.4(a))."""
    n, eps0, k = V.shuffle_users(n), V.local_eps0(eps0), V.domain_size(k)
    return _delta_bound(KRRSplitProfile(n, eps0, k), V.nonnegative(eps, "eps"))


def krr_blanket_epsilon(n, eps0, k, delta, blocks: int | None = 64) -> Bound:
    """eps(delta) of shuffled k-RR by the blanket pair, count revealed (docs/theory.md §2.4(b))."""
    n, eps0, k = V.shuffle_users(n), V.local_eps0(eps0), V.domain_size(k)
    blocks = V.blocks(blocks)
    return _eps_bound(KRRBlanketProfile(n, eps0, k, blocks), V.probability_open(delta, "delta"))


def krr_blanket_delta(n, eps0, k, eps, blocks: int | None = 64) -> Bound:
    """delta(eps) of shuffled k-RR by the blanket pair, count revealed (docs/theory.md §2.4(b))."""
    n, eps0, k = V.shuffle_users(n), V.local_eps0(eps0), V.domain_size(k)
    blocks = V.blocks(blocks)
    return _delta_bound(KRRBlanketProfile(n, eps0, k, blocks), V.nonnegative(eps, "eps"))


def lower_epsilon(n, eps0, delta, k=None) -> Bound:
    """Exact lower bound on eps(delta): §2.6(b) for k-RR with k >= 3, binary RR's worst dataset
    found for k = 2, the most vulnerable k-RR found for k None (docs/theory.md §2.14)."""
    n, eps0 = V.shuffle_users(n), V.local_eps0(eps0)
    k = None if k is None else V.domain_size(k)
    return _eps_bound(_lower_profile(n, eps0, k), V.probability_open(delta, "delta"))


def lower_delta(n, eps0, eps, k=None) -> Bound:
    """Exact lower bound on delta(eps): §2.6(b) for k-RR with k >= 3, binary RR's worst dataset
    found for k = 2, the most vulnerable k-RR found for k None (docs/theory.md §2.14)."""
    n, eps0 = V.shuffle_users(n), V.local_eps0(eps0)
    k = None if k is None else V.domain_size(k)
    return _delta_bound(_lower_profile(n, eps0, k), V.nonnegative(eps, "eps"))


# ----------------------------------------------------------------------------------------------
# Combined queries
# ----------------------------------------------------------------------------------------------

def _params(n, eps0, k, delta0, **extra):
    return dict(n=n, eps0=eps0, k=k, delta0=delta0, **extra)


def _common_args(n, eps0, k, delta0):
    """Validated (n, eps0, k, delta0) for an n the caller validated; k-RR is pure DP, so k and
    delta0 > 0 exclude each other."""
    eps0 = V.local_eps0(eps0)
    k = None if k is None else V.domain_size(k)
    delta0 = V.probability_closed_open(delta0, "delta0")
    if delta0 > 0.0 and k is not None:
        raise ValueError("k and delta0 cannot be combined: k-RR is a pure eps0-DP randomizer")
    return n, eps0, k, delta0


@dataclass(frozen=True)
class _Query:
    """What one forward query accounts: the upper profiles, the lower profile (or why there is
    none), whether the closed form applies, and the parameters to report."""

    n: int
    eps0: float
    uppers: tuple
    lower: Profile | None
    lower_note: str
    closed_form: bool
    params: dict


def _plan(n, eps0, k, delta0, oracle, blocks) -> _Query:
    """The bounds that apply to the randomizer described by (eps0, k, delta0) or by ``oracle``
    (n validated by the caller)."""
    blocks = V.blocks(blocks)
    if oracle is None:
        if eps0 is None:
            raise TypeError("epsilon()/delta() need eps0 (any eps0-LDP randomizer) or oracle=")
        n, eps0, k, delta0 = _common_args(n, eps0, k, delta0)
        if delta0 > 0.0:
            return _Query(n, eps0, (), None, "", False, _params(n, eps0, k, delta0))
        uppers = (GeneralProfile(n, eps0),) if k is None else tuple(_krr_profiles(n, eps0, k,
                                                                                  blocks))
        return _Query(n, eps0, uppers, _lower_profile(n, eps0, k, uppers), "", True,
                      _params(n, eps0, k, delta0))
    if eps0 is not None or k is not None or delta0 != 0.0:
        raise ValueError("an oracle states its own (realised) eps0 and domain: pass oracle= "
                         "alone, without eps0, k or delta0")
    from ..randomizers.scalar import ScalarStructure  # an oracle's law: when one is given
    from ..randomizers.structure import BinaryStructure
    st = BL.structure(oracle)
    if isinstance(st, ScalarStructure):
        return _scalar_plan(n, st, oracle)
    if isinstance(st, BinaryStructure):
        return _binary_plan(n, st)
    from ..randomizers.table_law import TableStructure
    if isinstance(st, TableStructure):  # docs/theory.md §2.15: its blanket and its attack
        from .table import table_bounds
        uppers, low = table_bounds(n, st)
        return _Query(n, st.eps0, uppers, low, "", st.eps0 <= EXP_MAX,
                      dict(n=n, eps0=st.eps0, k=st.k, delta0=0.0, oracle=oracle.describe()))
    if st is None:  # no blanket law stated: the generic bound at its replacement eps
        eps0 = V.local_eps0(oracle.replacement_eps, "the randomizer's replacement eps")
        params = dict(n=n, eps0=eps0, k=getattr(oracle, "k", None), delta0=0.0,
                      oracle=oracle.describe())
        return _Query(n, eps0, (GeneralProfile(n, eps0),), None,
                      f"no attack on {oracle.name} is implemented", True, params)
    params = dict(n=n, eps0=st.eps0, k=getattr(oracle, "k", None), delta0=0.0,
                  oracle=st.describe())
    krr_k = st.krr_k
    if krr_k is not None:  # k-RR's own bounds (docs/theory.md §2.4) are this blanket, unblocked
        eps0 = V.local_eps0(st.eps0)  # the realised eps0 (client coins included), rounded up
        # the attack (a lower bound) uses the realised eps0 rounded down
        uppers = tuple(_krr_profiles(n, eps0, krr_k, blocks))
        low = _lower_profile(n, V.local_eps0(max(st.eps0_lower, 5e-324)), krr_k, uppers)
        return _Query(n, eps0, uppers, low, "", True, dict(params, eps0=eps0))
    blanket = BL.BlanketProfile(n, st, checked=True)
    blanket.label = f"privacy blanket, {st.oracle} (Balle et al. 2019)"
    profiles: list[Profile] = [blanket]
    if st.eps0 <= EXP_MAX:
        profiles.insert(0, GeneralProfile(n, st.eps0))
    lower, note = None, ""
    if st.t3 is not None:
        lower = BL.OracleLowerProfile(n, st, checked=True)
        lower.label = f"lower bound: {st.oracle} attack"
    else:
        note = f"no attack on {st.oracle} with fewer than 3 items"
    return _Query(n, st.eps0, tuple(profiles), lower, note, st.eps0 <= EXP_MAX, params)


def _scalar_plan(n: int, st: ScalarStructure, oracle) -> _Query:
    """x + noise on [lo, hi] (docs/theory.md §2.11): its blanket on a lattice, one report's
    divergence, the generic bound at eps0 = (hi - lo)/b for Laplace (Gaussian noise has no
    finite eps0), its attack."""
    from .scalar import ScalarBlanketProfile, ScalarLocalProfile, ScalarLowerProfile
    finite = st.eps0 <= EXP_MAX
    uppers = (((GeneralProfile(n, st.eps0),) if finite else ())
              + (ScalarLocalProfile(n, st), ScalarBlanketProfile(n, st)))
    params = dict(n=n, eps0=st.eps0 if finite else None, k=None, delta0=0.0,
                  oracle=oracle.describe())
    return _Query(n, st.eps0, uppers, ScalarLowerProfile(n, st), "", finite, params)


def _binary_plan(n: int, st: BinaryStructure) -> _Query:
    """A binary randomizer stated by its two probabilities (docs/theory.md §2.14): the exact
    count over every dataset (probabilities rounded toward the more revealing randomizer), the
    generic bound at its replacement eps0, the worst dataset found as the attack (rounded the
    other way)."""
    up_law, low_law = BI.BinaryLaw.of(st.p1, st.q0), BI.BinaryLaw.of(st.p1, st.q0, upper=False)
    eps0 = V.local_eps0(st.eps0, "the randomizer's replacement eps0")
    exact = BI.BinaryCountProfile(n, eps0, up_law)
    uppers = (GeneralProfile(n, eps0), exact) if exact.unsupported() is None else \
        (GeneralProfile(n, eps0),)
    lower = BI.BinaryCountLowerProfile(n, eps0, low_law, partner=exact.engine)
    params = dict(n=n, eps0=eps0, k=2, delta0=0.0, oracle=st.describe())
    return _Query(n, eps0, uppers, lower if lower.unsupported() is None else None,
                  "eps0 above the exact count's range", True, params)


def _no_lower(q: _Query) -> Bound:
    return Bound("lower", "lower bound", None, upper=False, note=q.lower_note)


def _sampled(query, n, eps0, arg, k, delta0, oracle, lower, gamma, sample, relation):
    """A query with participation sampling (docs/theory.md §2.7), answered by
    accounting/participation.py; None when the round is not sampled. ``relation`` alone may only
    restate the default: every unsampled bound is for substitution (add/remove without
    sampling leaves the report count, which reveals user 1)."""
    if gamma is None and sample is None:
        if relation not in (None, "substitution"):
            raise ValueError(f"relation={relation!r} needs participation sampling (gamma= or "
                             "sample=): without it every user reports and the report count "
                             "reveals whether user 1 is present; the unsampled bounds are for "
                             "'substitution'")
        return None
    if delta0 != 0.0:
        raise ValueError("delta0 cannot be combined with gamma= or sample=: the sampled bounds "
                         "are for pure eps0-DP randomizers")
    fn = PA.epsilon if query == "epsilon" else PA.delta
    try:
        return fn(n, eps0, arg, k=k, oracle=oracle, gamma=gamma, sample=sample,
                  relation=relation, lower=lower)
    except PA.NoFiniteEpsilon as err:  # valid arguments, but no eps certifies this delta
        raise NoSoundBound(str(err)) from None


def epsilon(n, eps0=None, delta=None, *, k=None, delta0: float = 0.0, oracle=None,
            blocks: int | None = 64, lower: bool = True, gamma=None, sample=None,
            relation=None) -> AmplificationResult:
    """Central eps at delta for n shuffled eps0-LDP reports: the min over every sound bound.

    Parameters
    ----------
    n : int
        Users, each sending one report to the shuffler (n >= 1).
    eps0 : float, optional
        The local randomizer's replacement eps (pure eps0-LDP, or (eps0, delta0)-DP with
        ``delta0``); omitted when ``oracle`` gives it.
    delta : float
        The central delta in (0, 1) at which eps is asked (required).
    k : int, optional
        The randomizer is k-ary randomized response: adds the k-RR bounds of
        docs/theory.md §2.4 and the k-RR lower bound.
    delta0 : float, default 0
        An (eps0, delta0)-DP randomizer when > 0 (FMT21 Thm 3.8 only).
    oracle : LocalRandomizer, optional
        A frequency-oracle object (e.g. ``PIRappor(k, 4.0)``) instead of eps0: its realised
        replacement eps0, its privacy-blanket bound beside the generic ones, and its own exact
        attack as the lower bound (docs/theory.md §2.5, §2.6).
    blocks : int or None, default 64
        Blocks of the k-RR blanket sum (None: unblocked; blocking is sound and within 1e-3
        relative at 64, docs/theory.md §2.4).
    lower : bool, default True
        Also compute the lower bound (an exact attack, rounded down) when one applies.
    gamma : float, optional
        Poisson participation: each user reports independently with probability gamma in
        (0, 1] (docs/theory.md §2.7).
    sample : int, optional
        Fixed-size participation: a uniform m = sample of the n users report (not with gamma).
    relation : {"substitution", "add_remove"}, optional
        The neighbouring relation of the sampled bound ("substitution" by default); without
        sampling only "substitution" is accepted.

    Returns
    -------
    AmplificationResult
        The smallest sound upper bound, the method that gave it, every bound evaluated and
        the lower bound.
    """
    if delta is None:
        raise TypeError("epsilon() needs delta")
    return epsilon_of(V.shuffle_users(n), eps0, delta, k=k, delta0=delta0, oracle=oracle,
                      blocks=blocks, lower=lower, gamma=gamma, sample=sample, relation=relation)


def epsilon_of(n: int, eps0, delta, *, k=None, delta0: float = 0.0, oracle=None,
               blocks: int | None = 64, lower: bool = True, gamma=None, sample=None,
               relation=None) -> AmplificationResult:
    """:func:`epsilon` of an n already validated (``validate.shuffle_users``): the forward
    query the inverse searches (accounting/inverse.py) ask in their loops, n checked once at
    their entry (the other arguments as :func:`epsilon` checks them).

    Parameters
    ----------
    n : int
        Users, validated by the caller.
    eps0, delta, k, delta0, oracle, blocks, lower, gamma, sample, relation
        As :func:`epsilon`.
    """
    res = _sampled("epsilon", n, eps0, delta, k, delta0, oracle, lower, gamma, sample, relation)
    if res is not None:
        return res
    q = _plan(n, eps0, k, delta0, oracle, blocks)
    delta = V.probability_open(delta, "delta")
    start = compute_time()
    low = None
    if not q.uppers:  # approximate-DP randomizer
        bounds = [approx_epsilon_of(q.n, q.eps0, q.params["delta0"], delta)]
        if not bounds[0].applicable:
            raise NoSoundBound(f"no sound eps at delta={delta}: {bounds[0].note}")
    else:
        bounds = [_closed_form_epsilon(q.n, q.eps0, delta)] if q.closed_form else []
        bounds += [_eps_bound(p, delta) for p in q.uppers]
        if lower and q.lower is not None:
            _, best_up = best_upper(bounds)
            lb = _eps_bound(q.lower, delta, eps_max=min(q.eps0, best_up))
            bounds.append(lb)
            low = lb.value
        elif lower:
            bounds.append(_no_lower(q))
    best, value = best_upper(bounds)
    return AmplificationResult("epsilon", value, best.name, low, tuple(bounds),
                               dict(q.params, delta=delta), compute_time() - start)


def delta(n, eps0=None, eps=None, *, k=None, delta0: float = 0.0, oracle=None,
          blocks: int | None = 64, lower: bool = True, gamma=None, sample=None,
          relation=None) -> AmplificationResult:
    """Central delta at eps for n shuffled eps0-LDP reports (or reports of ``oracle``): the min
    over every sound bound.

    Parameters
    ----------
    n : int
        Users, each sending one report to the shuffler (n >= 1).
    eps0 : float, optional
        The local randomizer's replacement eps; omitted when ``oracle`` gives it.
    eps : float
        The central eps >= 0 at which delta is asked (required).
    k : int, optional
        The randomizer is k-ary randomized response (adds the bounds of docs/theory.md §2.4).
    delta0 : float, default 0
        An (eps0, delta0)-DP randomizer when > 0 (FMT21 Thm 3.8 only).
    oracle : LocalRandomizer, optional
        A frequency-oracle object instead of eps0, as in :func:`epsilon`.
    blocks : int or None, default 64
        Blocks of the k-RR blanket sum (None: unblocked).
    lower : bool, default True
        Also compute the lower bound (an exact attack, rounded up in delta's favour: never
        above the true delta) when one applies.
    gamma : float, optional
        Poisson participation: each user reports independently with probability gamma in
        (0, 1] (docs/theory.md §2.7).
    sample : int, optional
        Fixed-size participation: a uniform m = sample of the n users report (not with gamma).
    relation : {"substitution", "add_remove"}, optional
        The neighbouring relation of the sampled bound ("substitution" by default); without
        sampling only "substitution" is accepted.

    Returns
    -------
    AmplificationResult
        The smallest sound upper bound on delta, its method, every bound and the lower bound.
    """
    if eps is None:
        raise TypeError("delta() needs eps")
    n = V.shuffle_users(n)
    res = _sampled("delta", n, eps0, eps, k, delta0, oracle, lower, gamma, sample, relation)
    if res is not None:
        return res
    q = _plan(n, eps0, k, delta0, oracle, blocks)
    eps = V.nonnegative(eps, "eps")
    start = compute_time()
    low = None
    if not q.uppers:
        bounds = [approx_delta_of(q.n, q.eps0, q.params["delta0"], eps)]
    else:
        bounds = [_closed_form_delta(q.n, q.eps0, eps)] if q.closed_form else []
        bounds += [_delta_bound(p, eps) for p in q.uppers]
        if lower and q.lower is not None:
            lb = _delta_bound(q.lower, eps)
            bounds.append(lb)
            low = lb.value
        elif lower:
            bounds.append(_no_lower(q))
    best, value = best_upper(bounds)
    return AmplificationResult("delta", value, best.name, low, tuple(bounds),
                               dict(q.params, eps=eps), compute_time() - start)
