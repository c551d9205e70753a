"""Inverse queries (FMT21 Sec. 3; docs/theory.md): which local eps0 may we deploy, how many users
do we need.

Both searches certify a candidate with the forward query itself (:func:`certified` calls
``amplification.epsilon`` with the same keyword arguments: k, delta0, blocks, and any future
randomizer description), so an inverse answer and the forward answer at it can never disagree.
"""
from __future__ import annotations

import functools
import math

from ..core import validate as V
from ..core.lazy import lazy_module
from ..core.numerics import EXP_MAX
from . import amplification as amp
from .profiles import GeneralProfile, window_tol
from .solve import bisect_int, golden_min, largest_below, largest_feasible, smallest_feasible_int

BL = lazy_module("ldpcompress.accounting.blanket")

__all__ = ["N_CAP", "MAX_PLATEAUS", "SAMPLING_KWARGS", "certified", "max_eps0",
           "min_n", "next_plateau"]


N_CAP = V.MAX_SHUFFLE_N  # the forward query refuses larger n


def certified(n: int, eps0: float | None, eps: float, delta: float, **forward) -> bool:
    """True when the forward query ``amplification.epsilon(n, eps0, delta, **forward)`` gives a
    sound eps <= the target eps (False when it finds no sound eps at all).

    Parameters
    ----------
    n : int
        Users, one shuffled report each.
    eps0 : float or None
        The local randomizer's replacement eps (None with ``oracle=``).
    eps : float
        The central eps target.
    delta : float
        The central delta in (0, 1).
    **forward
        Further arguments of the forward query.
    """
    return _certified(V.shuffle_users(n), eps0, eps, delta, **forward)


def _certified(n: int, eps0: float | None, eps: float, delta: float, **forward) -> bool:
    """certified() of a validated n (the searches check n once at their entry)."""
    try:
        res = amp.epsilon_of(n, eps0, delta, lower=False, **forward)
    except amp.NoSoundBound:  # e.g. delta below the Thm 3.8 floor of an approximate-DP
        return False          # randomizer; a bad argument is not caught: it reaches the caller
    return res.value <= eps


def _forward_kwargs(k, delta0, forward: dict) -> dict:
    """The forward query's randomizer arguments, validated the way the forward query does."""
    kw = dict(forward, k=None if k is None else V.domain_size(k),
              delta0=V.probability_closed_open(delta0, "delta0"))
    if kw["delta0"] > 0.0 and kw["k"] is not None:
        raise ValueError("k and delta0 cannot be combined: k-RR is a pure eps0-DP randomizer")
    return kw


def max_eps0(n, eps, delta, oracle_factory=None, *, k=None, delta0: float = 0.0,
             memo: dict | None = None, **forward) -> float:
    """Largest eps0 whose shuffled eps(delta) <= eps, as certified by the forward query with the
    same k / delta0 (doubling then bisection; returns the verified lower end).

    For a pure randomizer eps0 = eps always qualifies (the output is eps0-DP), so the answer is
    >= eps; for an (eps0, delta0)-DP one it does when delta >= delta0 (FMT21 Thm 3.8).

    oracle_factory: a callable eps0 -> frequency oracle (e.g. ``lambda e: PIRappor(1000, e)``):
    the answer is a parameter whose oracle, as realised, meets the target by its own shuffled
    bounds (docs/theory.md §2.5); build the oracle to deploy with ``oracle_factory(answer)``.
    An oracle's realised law can jump with its parameter (OLH's bucket count g, PI-RAPPOR's
    field, the subset size: ``oracle.plateau()``), so the certified parameters need not form an
    interval. Within one plateau (same discrete choices) the answer is the largest certified
    parameter (to a relative 1e-9); the search then walks up the plateaus: it returns the
    largest certified parameter of the last plateau, going up, whose smallest parameter is
    certified, and stops at the first plateau whose smallest parameter is not.

    Parameters
    ----------
    n : int
        Users, one shuffled report each.
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target in (0, 1).
    oracle_factory : callable, optional
        eps0 -> frequency oracle (see above); without it the randomizer is any eps0-LDP one
        (or k-RR with ``k``).
    k : int, optional
        The randomizer is k-ary randomized response (not with ``oracle_factory``).
    delta0 : float, default 0
        An (eps0, delta0)-DP randomizer when > 0 (not with ``oracle_factory``).
    memo : dict, optional
        A dict shared by several searches (with an oracle_factory): each certification is
        stored under the oracle's shuffled law (``blanket.law_key``), so oracles with equal
        laws (k-RR and subset selection with d = 1) and repeated queries reuse it.
    **forward
        Further arguments of the forward query :func:`~ldpcompress.accounting.amplification.epsilon`
        (participation sampling ``gamma``, ``sample``, ``relation``; ``blocks``).

    Returns
    -------
    float
        The largest certified eps0 (the verified end of the search).
    """
    n, eps = V.shuffle_users(n), V.positive_finite(eps, "eps")
    delta = V.probability_open(delta, "delta")
    return _max_eps0(n, eps, delta, oracle_factory, k, delta0, memo, forward)


def _max_eps0(n: int, eps: float, delta: float, oracle_factory, k, delta0, memo,
              forward: dict) -> float:
    """max_eps0 of a validated n, eps and delta."""
    if eps > EXP_MAX:
        raise ValueError(f"eps must be <= {EXP_MAX:g} for max_eps0, got {eps!r}: the forward "
                         f"query takes eps0 in (0, {EXP_MAX:g}], and every such eps0 gives "
                         f"eps <= eps0 < {eps!r}")
    if oracle_factory is not None:
        if k is not None or delta0 != 0.0 or set(forward) - set(SAMPLING_KWARGS):
            raise ValueError("an oracle_factory describes the randomizer: pass it without k, "
                             "delta0 or other randomizer arguments (participation sampling "
                             "gamma=, sample=, relation= may be given)")
        return _max_eps0_oracle(n, eps, delta, oracle_factory, memo, **forward)
    if memo is not None:
        raise ValueError("memo is shared by searches over oracles: pass it with oracle_factory")
    kw = _forward_kwargs(k, delta0, forward)
    ok = lambda e0: _certified(n, e0, eps, delta, **kw)  # noqa: E731
    if _sampled_add_remove(kw):
        return _max_eps0_from_below(ok, eps, n, delta)
    if not ok(eps):
        raise ValueError(f"no eps0 >= eps = {eps} is certified for ({eps}, {delta})-DP with "
                         f"delta0 = {kw['delta0']}: delta0 must be <= delta, or the Thm 3.8 "
                         f"term n delta0 (e^eps+1) too large")
    # eps0 = eps is certified (checked above), so the answer is never below eps; the search
    # runs up to the forward query's own eps0 range (no smaller internal cap)
    return max(eps, largest_feasible(ok, eps, EXP_MAX))


def min_n(eps0, eps, delta, *, k=None, delta0: float = 0.0, **forward) -> int:
    """Smallest n for which n shuffled eps0-LDP reports are (eps, delta)-DP by the forward query
    with the same k / delta0 (the answer is verified by the forward query). With ``oracle=o``
    (and eps0=None) the reports are those of the frequency oracle o.

    For a pure randomizer the certified n form a half-line (more users, more privacy): galloping
    then bisection. For an (eps0, delta0)-DP randomizer (FMT21 Thm 3.8) the added term
    (e^eps + 1)(1 + e^-eps0/2) n delta0 grows with n, so the certified n form a window: see
    :func:`_min_n_window`.

    Parameters
    ----------
    eps0 : float or None
        The local randomizer's replacement eps (None with ``oracle=``).
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target in (0, 1).
    k : int, optional
        The randomizer is k-ary randomized response.
    delta0 : float, default 0
        An (eps0, delta0)-DP randomizer when > 0.
    **forward
        Further arguments of the forward query :func:`~ldpcompress.accounting.amplification.epsilon`
        (``oracle``, participation sampling ``gamma``, ``sample``, ``relation``; ``blocks``).

    Returns
    -------
    int
        The smallest certified n (verified by the forward query).
    """
    eps0 = None if eps0 is None and "oracle" in forward else V.local_eps0(eps0)
    eps = V.positive_finite(eps, "eps")
    delta = V.probability_open(delta, "delta")
    kw = _forward_kwargs(k, delta0, forward)
    # fixed-size sampling of m users needs n >= m (n >= m + 1 under add/remove)
    n_low = 1
    if kw.get("sample") is not None:
        n_low = V.integer_at_least(kw["sample"], "sample", 1) \
            + (kw.get("relation") == "add_remove")
    ok = lambda n: n >= n_low and _certified(n, eps0, eps, delta, **kw)  # noqa: E731
    if kw["delta0"] > 0.0:
        return _min_n_window(ok, eps0, eps, delta, kw["delta0"])
    found = smallest_feasible_int(ok, N_CAP)
    if found is None:
        raise ValueError(f"no n <= {N_CAP:.0e} makes eps0={eps0} shuffled reports "
                         f"({eps}, {delta})-DP")
    return found


def _max_eps0_oracle(n: int, eps: float, delta: float, factory, memo: dict | None,
                     **sampling) -> float:
    """Largest parameter e with factory(e) certified; a parameter the factory refuses
    (ValueError: outside the oracle's range) counts as not certified. ``sampling``: gamma=,
    sample=, relation= passed to the forward query (docs/theory.md §2.7); ``memo``: see
    :func:`max_eps0`. The searches are guided by the forward eps itself (solve.largest_below)."""
    if memo is not None and not isinstance(memo, dict):
        raise TypeError(f"memo must be a dict, got {type(memo).__name__}")
    query = (n, delta, tuple(sorted(sampling.items())))
    seen: dict[float, float] = {}

    def value(e0: float) -> float:
        """The forward eps of factory(e0) (inf: refused, or no sound eps)."""
        if e0 not in seen:
            seen[e0] = _forward_value(n, delta, factory, e0, memo, query, sampling)
        return seen[e0]

    def ok(e0: float) -> bool:
        return value(e0) <= eps

    # every eps0-LDP randomizer is certified up to the generic bound's answer g: an oracle
    # whose parameter is its eps0 usually is at g, and the search starts there (fewer slow
    # probes of a large blanket far below the answer); else (e.g. a deletion-DP oracle: its
    # replacement eps0 is twice its parameter) it starts from eps, halving until certified
    start = _generic_answer(n, eps, delta, tuple(sorted(sampling.items())))
    if start is not None and ok(start):
        best = largest_below(value, eps, start, EXP_MAX)
    else:
        best = _max_eps0_from_below(ok, eps, n, delta, "parameter of this oracle", value)

    def plateau(e0: float):
        try:
            return factory(e0).plateau()
        except ValueError:
            return None

    # walk up the oracle's own discontinuities: a later plateau may be certified again
    for _ in range(MAX_PLATEAUS):
        start = next_plateau(plateau, best, EXP_MAX)
        if start is None or not ok(start):
            break
        end = next_plateau(plateau, start, EXP_MAX)
        top = EXP_MAX if end is None else math.nextafter(end, 0.0)
        best = largest_below(value, eps, start, top) if end is None or not ok(top) else top
        # within [start, end) the law's discrete choices are fixed: certified up to a point
    return best


@functools.lru_cache(maxsize=64)
def _generic_answer(n: int, eps: float, delta: float, sampling: tuple) -> float | None:
    """max_eps0 of any eps0-LDP randomizer (the generic bound) for this query, or None where
    that search fails (only a starting point: every answer is certified by the oracle's own
    forward query)."""
    try:
        return _max_eps0(n, eps, delta, None, None, 0.0, None, dict(sampling))
    except ValueError:
        return None


def _forward_value(n: int, delta: float, factory, e0: float, memo: dict | None, query: tuple,
                   sampling: dict) -> float:
    """amplification.epsilon(n, oracle=factory(e0)) at delta (inf when the factory refuses e0
    or no sound eps exists), stored in ``memo`` under the oracle's shuffled law."""
    try:
        oracle = factory(e0)
    except ValueError:
        return math.inf
    law = None if memo is None else BL.law_key(oracle)
    key = (query, law)
    if memo is not None and law is not None and key in memo:
        return memo[key]
    try:
        v = amp.epsilon_of(n, None, delta, lower=False, oracle=oracle, **sampling).value
    except amp.NoSoundBound:
        v = math.inf
    if memo is not None and law is not None:
        memo[key] = v
    return v


MAX_PLATEAUS = 64  # plateaus walked above the first answer (each costs ~60 oracle builds)
SAMPLING_KWARGS = ("gamma", "sample", "relation")  # participation sampling (docs/theory.md §2.7)


def _sampled_add_remove(forward: dict) -> bool:
    """Whether the forward query is a sampled round under add/remove: eps0 = eps need not be
    certified there (the report count leaks whatever eps0 is), so the search starts below."""
    sampled = forward.get("gamma") is not None or forward.get("sample") is not None
    return sampled and forward.get("relation") == "add_remove"


def _max_eps0_from_below(ok, eps: float, n: int, delta: float,
                         what: str = "eps0", value=None) -> float:
    """Halve from eps until certified (down to 1e-9), then the largest certified value (the
    search guided by ``value``, the forward eps, when given: ok(x) is value(x) <= eps)."""
    lo = eps
    while not ok(lo):
        lo /= 2.0
        if lo < 1e-9:
            raise ValueError(f"no {what} >= 1e-9 is certified for ({eps}, {delta})-DP with "
                             f"n = {n}")
    if value is not None:
        return largest_below(value, eps, lo, EXP_MAX)
    return largest_feasible(ok, lo, EXP_MAX)


def next_plateau(plateau, x: float, cap: float) -> float | None:
    """The smallest parameter above x (to a relative 2^-40) whose ``plateau`` differs from
    x's; None when x's has no discrete choices or none changes up to cap. Galloping then
    bisection on the parameter (oracle construction only, no privacy query)."""
    here = plateau(x)
    if not here:
        return None
    step = max(x * 1e-9, 1e-12)
    hi = x + step
    while plateau(hi) == here:
        if hi >= cap:
            return None
        step *= 2.0
        hi = min(x + step, cap)
    lo = x
    while hi - lo > hi * 2.0 ** -40:
        mid = 0.5 * (lo + hi)
        if plateau(mid) == here:
            lo = mid
        else:
            hi = mid
    return hi


def _thm38_floor(n: int, eps0: float, eps: float, delta: float, delta0: float) -> float:
    """min over eps' in [0, min(eps, eps0)] of pair delta(eps') + Thm 3.8 term(n, eps'): n is
    certified iff this is <= delta (or eps0 <= eps and delta0 <= delta). The total is convex in
    e^eps' (docs/theory.md), so a golden-section search finds the minimum; it only steers the
    search for n, and every returned n is verified by the forward query."""
    prof = GeneralProfile(n, eps0)
    tol = window_tol(delta)
    total = lambda e: prof.delta(e, tol) + amp.approx_extra_delta(n, eps0, delta0, e)  # noqa: E731
    _, low = golden_min(total, 0.0, min(eps, eps0), iterations=40)
    return min(low, total(0.0), total(min(eps, eps0)))


def _min_n_window(ok, eps0: float, eps: float, delta: float, delta0: float) -> int:
    """Smallest certified n for an (eps0, delta0)-DP randomizer.

    The pair's delta falls with n while the Thm 3.8 term n delta0 (e^eps'+1)(1 + e^-eps0/2)
    grows, so the certified set is a window [n_lo, n_up] that galloping from n = 1 can jump
    over. No n above n_max = delta / (2 (1 + e^-eps0/2) delta0) qualifies (the term at eps' = 0
    already exceeds delta). The minimum over n of the Thm 3.8 total (:func:`_thm38_floor`) is
    located on log n in [1, n_max] (golden section, then integer ternary steps); if the forward
    query certifies that n, the smallest certified n is found by bisection on the decreasing
    branch [1, n*] (the certified set is an interval: the pair's delta decreases in n and the
    term increases), and returned after the forward query certified it.
    """
    if ok(1):
        return 1
    per_user = 2.0 * (1.0 + 0.5 * math.exp(-eps0)) * delta0
    n_max = min(N_CAP, int(math.floor(delta / per_user)))
    while n_max >= 1 and amp.approx_extra_delta(n_max, eps0, delta0, 0.0) > delta:
        n_max -= 1
    if n_max < 2:
        raise ValueError(f"no n certifies ({eps}, {delta})-DP with delta0 = {delta0}: the Thm "
                         f"3.8 term 2 (1 + e^-eps0/2) n delta0 exceeds delta = {delta} for "
                         f"every n >= 2, and n = 1 is not certified")
    floor = functools.lru_cache(maxsize=None)(
        lambda n: _thm38_floor(n, eps0, eps, delta, delta0))
    # golden section on t = log n, then integer ternary steps, for the n minimising the floor
    lo_t, hi_t = 0.0, math.log(n_max)
    g = (math.sqrt(5.0) - 1.0) / 2.0
    at = lambda t: min(n_max, max(1, int(round(math.exp(t)))))  # noqa: E731
    t1, t2 = hi_t - g * (hi_t - lo_t), lo_t + g * (hi_t - lo_t)
    while at(hi_t) - at(lo_t) > 64:
        if floor(at(t1)) <= floor(at(t2)):
            hi_t, t2 = t2, t1
            t1 = hi_t - g * (hi_t - lo_t)
        else:
            lo_t, t1 = t1, t2
            t2 = lo_t + g * (hi_t - lo_t)
    lo, hi = at(lo_t), at(hi_t)
    while hi - lo > 2:
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if floor(m1) <= floor(m2):
            hi = m2
        else:
            lo = m1
    n_star = min(range(lo, hi + 1), key=floor)
    if not ok(n_star):
        raise ValueError(f"no n <= {N_CAP:.0e} makes eps0={eps0} shuffled reports ({eps}, "
                         f"{delta})-DP with delta0 = {delta0}: the smallest pair + Thm 3.8 total "
                         f"over n is {floor(n_star):.4g} (at n = {n_star}), above delta")
    return bisect_int(ok, 1, n_star)  # ok(1) is False, ok(n_star) is True
