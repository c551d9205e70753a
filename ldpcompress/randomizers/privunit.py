"""PrivUnit2 (Bhowmick et al. 2018): mean estimation on the unit sphere (docs/theory.md §7).

PrivUnit2(u): with probability p0 draw V uniform on the cap {v : <v, u> >= gamma}, else on its
complement; output Z = V / m, so that E[Z] = u. With alpha = (d-1)/2 and tau = (1+gamma)/2,
t = <V, u> has (1+t)/2 ~ Beta(alpha, alpha), which gives P_cap = I_{1-tau}(alpha, alpha)
= I_{1-gamma^2}(alpha, 1/2)/2 and, in log space,
m = (1-gamma^2)^alpha / (2^(d-2) (d-1) B(alpha, alpha)) [p0 / I_{1-tau} - (1-p0) / I_tau].
Inputs of norm < 1 are first rounded to the sphere: u = x/|x| w.p. (1+|x|)/2, else -x/|x|
(E[u] = x, coin from the CSPRNG).

Second moments (for confidence intervals): V = t u + sqrt(1-t^2) w with w uniform on the unit
sphere of u's orthogonal complement, so E[Z Z^T] = (A u u^T + B (I - u u^T)) / m^2 with
A = E[t^2] and B = (1 - A)/(d - 1); since t^2 ~ Beta(1/2, alpha),
E[t^2; cap] = I_{1-gamma^2}(alpha, 3/2) / (2d) and E[t^2; not cap] = 1/d - E[t^2; cap].
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..core.limits import array_bytes, check_bytes
from ..core.numerics import EXP_MAX
from ..core.prg import PRG
from ..core.lazy import lazy_module
from .base import check_flag
from .threads import chunks_for
from . import cost as C
from .contract import Cost, LocalRandomizer, Privacy, fast_hook, paired, seed_batch, seeds_array
from .registry import register
from .vectors import NORM_SLACK, VectorMeanEstimator, check_vectors
from .estimator import check_estimates, normal_quantile
from .privunit_caps import cap_measure, orthogonal_cap_bound
from .structure import ShuffleStructure, coin

__all__ = ['PrivUnit2', 'PrivUnitParams', 'params', 'optimal_params', 'eps_range', 'check_eps', 'check_vector', 'round_to_sphere', 'round_rows_to_sphere', 'p_cap', 'log_m', 'gamma_for_cap', 'check_dimension', 'batch_bytes', 'projection_second_moment', 'shown_upper_limit']

# imported at first use (Numba compiles the kernels then)
optimize = lazy_module("scipy.optimize")
special = lazy_module("scipy.special")
_seeds = lazy_module("ldpcompress.kernels.seeds")


def check_vector(x, d: int) -> np.ndarray:
    """A real vector of dimension d and norm <= 1 (complex or non-numeric input refused)."""
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.shape != (d,):
        raise ValueError(f"input must be a vector of dimension {d}, got shape {arr.shape}")
    return check_vectors(arr[None], d)[0]

def round_to_sphere(x: np.ndarray, entropy: Entropy = SYSTEM) -> np.ndarray:
    """Unbiased rounding of |x| <= 1 to the unit sphere: x/|x| w.p. (1+|x|)/2, else -x/|x|."""
    norm = float(np.linalg.norm(x))
    if norm >= 1.0 - NORM_SLACK:
        return x / norm
    if norm > 0:
        direction = x / norm
    else:  # any fixed unit vector (not a d x d identity: d may be large)
        direction = np.zeros(x.size)
        direction[0] = 1.0
    return direction if entropy.uniform(1)[0] < (1 + norm) / 2 else -direction

def round_rows_to_sphere(xs: np.ndarray, entropy: Entropy = SYSTEM) -> np.ndarray:
    """:func:`round_to_sphere` of every row of validated inputs xs (n, d), one coin each."""
    norms = np.linalg.norm(xs, axis=1)
    out = np.zeros_like(xs, dtype=float)
    out[:, 0] = 1.0
    np.divide(xs, norms[:, None], out=out, where=norms[:, None] > 0)
    coins = entropy.uniform(xs.shape[0])
    flip = (norms < 1.0 - NORM_SLACK) & ~(coins < (1 + norms) / 2)
    out[flip] *= -1.0
    return out

# Supported parameters: every probability PrivUnit2 draws or compares against stays well inside
# double precision. 1 - p0 >= Q0_MIN and the cap's half-width (1 - gamma)/2 >= X_MIN (rounding
# then moves them by at most 2^-23 relative), P_cap >= CAP_MIN (a normal double with room for the
# sampler's c * P_cap), eps <= EXP_MAX (e^eps finite). Together they give eps_range(d).
MIN_EPS = 1e-9

Q0_MIN = 2.0 ** -30

X_MIN = 2.0 ** -30

CAP_MIN = 2.0 ** -1000

EPS1_MAX = math.log1p(-Q0_MIN) - math.log(Q0_MIN)  # largest log(p0 / (1 - p0))

def _cap_parts(d: int, gamma: float) -> tuple[float, float, float]:
    """(P_cap, 1 - P_cap, h = 1 - 2 P_cap), each to full relative precision: with t = <V, u>,
    t^2 ~ Beta(1/2, alpha), so h = P(|t| < gamma) = I_{gamma^2}(1/2, alpha) (accurate when the
    cap is wide), and P_cap = I_{(1-gamma)/2}(alpha, alpha) (accurate when it is narrow)."""
    a = (d - 1) / 2
    h = float(special.betainc(0.5, a, gamma * gamma))
    if h <= 0.5:
        return (1 - h) / 2, (1 + h) / 2, h
    cap = float(special.betainc(a, a, (1 - gamma) / 2))
    return cap, 1 - cap, 1 - 2 * cap

def p_cap(d: int, gamma: float) -> float:
    """Pr[<v, u> >= gamma] for v uniform on S^(d-1): I_{1-gamma^2}((d-1)/2, 1/2) / 2."""
    return _cap_parts(d, gamma)[0]

def _log_m(d: int, p0: float, gamma: float, cap: float, rest: float, h: float) -> float:
    """log m without cancellation: p0/P_cap - (1-p0)/(1-P_cap) = (2p0 - 1 + h) / (2 P_cap
    (1 - P_cap)) (every term positive) and 1 - gamma^2 = (1 - gamma)(1 + gamma)."""
    a = (d - 1) / 2
    lift = (2 * p0 - 1) + h  # 2 p0 - 1 is exact for p0 in [1/2, 1)
    if not (lift > 0 and cap > 0 and rest > 0):
        raise ValueError(f"PrivUnit2 with p0={p0}, gamma={gamma} has no positive bias")
    log_pre = (a * (math.log1p(-gamma) + math.log1p(gamma)) - (d - 2) * math.log(2.0)
               - math.log(d - 1) - special.betaln(a, a))
    return log_pre + math.log(lift) - math.log(2.0) - math.log(cap) - math.log(rest)

def log_m(d: int, p0: float, gamma: float) -> float:
    """log m of PrivUnit2 (stable for d up to 1e5 and more, and for eps from 1e-9 to 700)."""
    return _log_m(d, p0, gamma, *_cap_parts(d, gamma))

def _gamma_for_eps2(d: int, eps2: float) -> float:
    """gamma with log((1 - P_cap) / P_cap) = eps2 (h = tanh(eps2/2) for a wide cap, P_cap =
    1/(1 + e^eps2) for a narrow one)."""
    a = (d - 1) / 2
    if eps2 <= math.log(3.0):  # P_cap >= 1/4
        return float(math.sqrt(special.betaincinv(0.5, a, math.tanh(eps2 / 2))))
    return float(1.0 - 2.0 * special.betaincinv(a, a, special.expit(-eps2)))

def gamma_for_cap(d: int, cap: float) -> float:
    """gamma >= 0 with p_cap(d, gamma) = cap (cap <= 1/2)."""
    a = (d - 1) / 2
    if cap >= 0.25:
        return float(math.sqrt(special.betaincinv(0.5, a, 1.0 - 2.0 * cap)))
    return float(1.0 - 2.0 * special.betaincinv(a, a, cap))

VECTORS_PER_REPORT = 4  # d-vectors alive while one report is randomized or decoded

def check_dimension(d, max_bytes=None) -> int:
    """An integer dimension d >= 2 (integral floats such as 1e3 accepted) whose per-report
    working vectors fit the memory limit."""
    d = V.integer_at_least(d, "d", 2)
    check_bytes(array_bytes((VECTORS_PER_REPORT, d), np.float64),
                f"PrivUnit2 working vectors in dimension d = {d}", "d", max_bytes)
    return d

def batch_bytes(n: int, d: int) -> int:
    """Bytes of an n x d float64 batch of vectors (inputs or decoded reports)."""
    return array_bytes((n, d), np.float64)

@dataclass(frozen=True)
class PrivUnitParams:
    d: int
    p0: float
    gamma: float
    cap: float
    m: float
    eps: float          # replacement
    deletion_eps: float  # w.r.t. the uniform sphere

def params(d: int, p0: float, gamma: float) -> PrivUnitParams:
    """Exact privacy of PrivUnit2(p0, gamma) in dimension d, computed without cancellation
    (log1p of positive ratios) so that eps from 1e-9 to 700 comes out to full precision."""
    d = check_dimension(d)
    p0 = V.real(p0, "p0")
    gamma = V.real(gamma, "gamma")
    if not 0.5 <= p0 < 1:
        raise ValueError(f"p0 must be in [1/2, 1), got {p0!r}")
    if not 0 <= gamma < 1:
        raise ValueError(f"gamma must be in [0, 1), got {gamma!r}")
    cap, rest, h = _cap_parts(d, gamma)
    if not cap >= CAP_MIN:
        raise ValueError(f"gamma must leave the cap a probability >= {CAP_MIN:.3g} in dimension "
                         f"d = {d}, got gamma = {gamma!r} (P_cap = {cap:.3g})")
    q0, lift = 1 - p0, (2 * p0 - 1) + h  # both exact or accurate: p0 >= 1/2
    eps1 = math.log1p((2 * p0 - 1) / q0)     # log(p0 / (1 - p0))
    eps2 = math.log1p(h / cap)               # log((1 - P_cap) / P_cap)
    # pure deletion DP needs both sides of the ratio in [e^-eps_d, e^eps_d]:
    # p0/P_cap = 1 + lift/(2 P_cap) >= 1 and (1-p0)/(1-P_cap) = 1 - lift/(2 (1-P_cap)) <= 1
    up = math.log1p(lift / (2 * cap))
    down = -math.log1p(-lift / (2 * rest)) if lift < 2 * rest else math.inf
    m = math.exp(_log_m(d, p0, gamma, cap, rest, h))
    return PrivUnitParams(d, p0, gamma, cap, m, eps1 + eps2, max(up, down))

def projection_second_moment(par: PrivUnitParams) -> float:
    """A = E[<V, u>^2] of PrivUnit2(p0, gamma): p0 E[t^2 | cap] + (1 - p0) E[t^2 | not cap],
    with E[t^2; t >= gamma] = I_{1-gamma^2}(alpha, 3/2) / (2d) (t^2 ~ Beta(1/2, alpha), t
    symmetric) and E[t^2] = 1/d in all (no cancellation: the complement is
    (1 + I_{gamma^2}(3/2, alpha)) / (2d))."""
    d, g = par.d, par.gamma
    a = (d - 1) / 2
    on = float(special.betainc(a, 1.5, (1 - g) * (1 + g))) / (2 * d)
    off = (1 + float(special.betainc(1.5, a, g * g))) / (2 * d)
    return par.p0 * (on / par.cap) + (1 - par.p0) * (off / (1 - par.cap))

def shown_upper_limit(value: float, digits: int = 4) -> float:
    """value rounded down to `digits` significant digits (a shown upper limit stays accepted)."""
    scale = 10 ** (digits - 1 - math.floor(math.log10(value)))
    return math.floor(value * scale) / scale

def _eps2_max(d: int) -> float:
    a = (d - 1) / 2
    cap = max(float(special.betainc(a, a, X_MIN)), CAP_MIN)
    return math.log1p(-cap) - math.log(cap)

def eps_range(d: int) -> tuple[float, float]:
    """The replacement eps PrivUnit2 supports in dimension d: [MIN_EPS, EPS1_MAX + eps2_max(d)]
    capped at EXP_MAX (about 31.6 for d = 2, 41.6 for d = 3, 61 for d = 5, 110 for d = 10 and
    700 from d = 71 up). Beyond it 1 - p0, the cap's width or P_cap would leave double
    precision; below MIN_EPS the variance (about d / eps^2) is of no use."""
    d = check_dimension(d)
    return MIN_EPS, min(EXP_MAX, EPS1_MAX + _eps2_max(d))

def check_eps(d: int, eps, name: str = "eps") -> float:
    """eps (finite, > 0) inside eps_range(d); ValueError naming ``name`` and the range."""
    eps = V.positive_finite(eps, name)
    lo, hi = eps_range(d)
    if not lo * (1 - 1e-12) <= eps <= hi:  # eps/K may round a hair below MIN_EPS (soft limit)
        raise ValueError(f"{name} must be in [{lo:g}, {shown_upper_limit(hi):g}] for PrivUnit2 in "
                         f"dimension d = {d} (beyond, its probabilities leave double precision), "
                         f"got {eps:g}")
    return eps

def optimal_params(d: int, eps: float) -> PrivUnitParams:
    """(p0, gamma) with replacement eps at most eps (and equal up to rounding), minimising
    E|Z|^2 = 1/m^2: eps is split into eps1 = log(p0/(1-p0)) and eps2 = log((1-P_cap)/P_cap) by a
    bounded 1-D search over eps1 (within the limits of :func:`eps_range`)."""
    d = check_dimension(d)
    eps = check_eps(d, eps)
    eps2_max = _eps2_max(d)

    def build(eps1, eps2):
        p0 = float(special.expit(eps1))
        return p0, max(0.0, _gamma_for_eps2(d, eps2))

    def loss(eps1):
        try:
            return -log_m(d, *build(eps1, eps - eps1))
        except (ValueError, ZeroDivisionError, OverflowError):
            return math.inf

    lo = max(1e-6 * eps, eps - eps2_max)
    hi = min(eps * (1 - 1e-6), EPS1_MAX)
    if lo < hi:
        eps1 = optimize.minimize_scalar(loss, bounds=(lo, hi), method="bounded",
                                        options={"xatol": 1e-8 * eps}).x
    else:  # eps at the top of its range: both parts at their limits
        eps1 = hi
    # rounding p0 and gamma to doubles may overshoot the budget by an ulp or two: shrink both
    # parts until the realised eps is within it (never report parameters above the budget)
    shrink = 0.0
    for _ in range(60):
        out = params(d, *build(eps1 * (1 - shrink), (eps - eps1) * (1 - shrink)))
        if out.eps <= eps:
            return out
        shrink = max(2 * shrink, 2.0 ** -52)
    raise ValueError(f"eps = {eps!r}: no PrivUnit2 parameters within the budget in dimension "
                     f"d = {d} (realised {out.eps!r})")  # pragma: no cover

@register
class PrivUnit2(VectorMeanEstimator):
    """PrivUnit2 (replacement eps): inputs are vectors of norm <= 1, reports Z = V/m (norm
    1/m); rho = uniform sphere, ratio p0/P_cap on the cap and (1-p0)/(1-P_cap) off it
    (docs/theory.md §7). ``PrivUnit2(d, eps)`` chooses (p0, gamma) for the smallest variance;
    with p0 (and gamma) given, their realised eps must not exceed ``eps``.

    Parameters
    ----------
    d : int
        Dimension of the input vectors (d >= 2).
    eps : float
        The local replacement eps (> 0).
    p0 : float, optional
        Probability of a report on the cap; omitted (with gamma), (p0, gamma) are chosen for
        the smallest variance at eps.
    gamma : float, optional
        The cap's threshold on <x, v>, given only with p0 (default 0 then); the realised eps
        of (p0, gamma) must not exceed ``eps``.
    """

    name, privacy = "privunit2", Privacy.REPLACEMENT
    deletion_eps: float  # w.r.t. the uniform sphere (finite: PrivUnit2 always compresses)

    def __init__(self, d: int, eps: float, p0: float | None = None, gamma: float | None = None):
        if p0 is None and gamma is not None:
            raise ValueError("gamma is given without p0: give both or neither")
        if p0 is None:
            self.par = optimal_params(d, eps)
        else:
            self.par = params(d, p0, 0.0 if gamma is None else gamma)
            budget = V.positive_finite(eps, "eps")
            if self.par.eps > budget * (1 + 1e-12):
                raise ValueError(f"p0 = {p0!r}, gamma = {gamma!r} realise eps = "
                                 f"{self.par.eps:.17g} in dimension d = {self.par.d}, above "
                                 f"eps = {budget!r}")
        self.d, self.eps, self.deletion_eps = self.par.d, self.par.eps, self.par.deletion_eps
        self.report_norm = 1.0 / self.par.m
        self.bits_per_report = 64 * self.d

    def params(self) -> dict:
        return {"d": self.d, "eps": self.eps, "p0": self.par.p0, "gamma": self.par.gamma}

    def shuffle_structure(self) -> ShuffleStructure:
        """Binary-support structure (docs/theory.md §2.12): w = uniform sphere, b(v, u) =
        [<v, u> >= gamma], a = P_cap (mpmath, privunit_caps), a1 = the client's realised coin
        Pr[uniform < p0]. The worst pair of inputs is antipodal, where the caps are disjoint:
        P(1,1) = 0, P(1,0) = P_cap. The attack's third item is orthogonal to the pair:
        t3 = P_cap - (an upper value of two orthogonal caps' common measure). Needs the
        optional extra ``mpmath`` (ImportError naming it otherwise)."""
        par = self.par
        a = cap_measure(par.d, par.gamma)
        t3 = a - orthogonal_cap_bound(par.d, par.gamma)
        return ShuffleStructure("privunit2", (("d", par.d), ("p0", par.p0),
                                              ("gamma", par.gamma)),
                                a, coin(par.p0), Fraction(0), a, False,
                                t3 if t3 > 0 else None)

    def _cap_ratio(self, inside: bool) -> float:
        p = self.par
        return p.p0 / p.cap if inside else (1 - p.p0) / (1 - p.cap)

    def ratio_bounds(self):
        return sorted((self._cap_ratio(True), self._cap_ratio(False)))

    def sample(self, prg: PRG) -> np.ndarray:
        """A uniform point of the sphere: the next sphere_words(d) stream words as Box-Muller
        pairs, normalised (docs/theory.md §5.1), by the kernel the batch decoder runs, so one
        report and a batch decode to the same bits."""
        v = np.empty(self.d)
        _seeds.sphere_from_words(prg.words(_seeds.sphere_words(self.d)), v)
        return v

    def decode_seed(self, seed):
        return self.sample(PRG(seed)) / self.par.m

    def _directions(self, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(|x|, u = x/|x|) of each validated input row, u = e_0 for x = 0."""
        norms = np.linalg.norm(xs, axis=1)
        us = np.zeros_like(xs)
        us[:, 0] = 1.0
        np.divide(xs, norms[:, None], out=us, where=norms[:, None] > 0)
        return norms, us

    def _projection_ratios(self, t: np.ndarray, norms: np.ndarray) -> np.ndarray:
        """R(x)(v)/rho(v) from t = <v, x/|x|> of the report direction v = mZ: the cap ratio
        for a unit input; an input of norm < 1 is first rounded to u = x/|x| w.p. (1+|x|)/2,
        else -u, so its ratio is that mixture of the two unit inputs' ratios (still within
        [e^-eps_d, e^eps_d])."""
        gamma, on_cap, off_cap = self.par.gamma, self._cap_ratio(True), self._cap_ratio(False)
        toward = np.where(t >= gamma, on_cap, off_cap)
        away = np.where(-t >= gamma, on_cap, off_cap)
        w = (1 + norms) / 2
        return np.where(norms >= 1.0 - NORM_SLACK, toward, w * toward + (1 - w) * away)

    def _mixture_ratio(self, x, v) -> float:
        """The ratio of input x at report direction v (see :meth:`_projection_ratios`)."""
        norms, us = self._directions(self.check_item(x)[None])
        t = np.array([_seeds.dot(np.ascontiguousarray(v, dtype=float), us[0])])
        return float(self._projection_ratios(t, norms)[0])

    def ratio(self, x, y):
        return self._mixture_ratio(x, np.asarray(y) * self.par.m)  # y = V/m

    def ratio_from_seed(self, x, seed):
        """ratio on V itself, skipping the 1/m scaling."""
        return self._mixture_ratio(x, self.sample(PRG(seed)))

    # compressed reports in batches (public seeds: the server, simulations; kernels/seeds.py)
    @seed_batch
    def decode_seeds(self, seeds) -> np.ndarray:
        """The reports V/m the seeds stand for: float64 (n, d)."""
        seeds = seeds_array(seeds)
        check_bytes(batch_bytes(len(seeds), self.d), f"{len(seeds)} decoded vectors of "
                    f"dimension {self.d}", "the number of reports (decode in batches) or d")
        return _seeds.sphere_rows(seeds, self.d, self.par.m, chunks_for(len(seeds)))

    @seed_batch
    def summarize_seeds(self, seeds) -> np.ndarray:
        """The sum of the decoded reports, without materialising them: float64[d]."""
        seeds = seeds_array(seeds)
        return _seeds.sphere_sum(seeds, self.d, self.par.m, chunks_for(len(seeds), 2 * self.d))

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """Seeds (``sphere_sum``): each seed's d-dimensional sphere point (d keystream words,
        Box-Muller, a norm), added to its chunk's row: n d steps; per call every chunk's row of
        d (made, added). Memory: the rows and, per thread at work, the words and the point.
        Reports: the common server's (``VectorMeanEstimator``)."""
        if not seeds:
            return super().summary_cost(n, batch)
        if not fast_hook(self, "summarize_seeds"):
            return LocalRandomizer.summary_cost(self, n, batch, seeds=True)
        n, b, calls = C.cost_args(n, batch)
        d, row = self.d, 8 * self.d
        chunks = chunks_for(b, 2 * d)
        ops = n * (C.SEED + d * C.walk(C.SPHERE, 3 * row)) \
            + calls * (C.CALL + 3 * chunks * d * C.SIMPLE)
        peak = (chunks + 2) * row + min(chunks, C.threads()) * (16 * ((d + 1) // 2) + row) \
            + b * 16
        return Cost(ops, peak, f"n x d = {n} x {d} sphere coordinates decoded")

    @seed_batch
    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        xs, seeds = self.check_items(xs), seeds_array(seeds)
        paired(xs, seeds)
        norms, us = self._directions(xs)
        dots = _seeds.sphere_dots(seeds, us, chunks_for(len(seeds), self.d))
        return self._projection_ratios(dots, norms)

    def _randomize_one(self, x, entropy: Entropy) -> np.ndarray:
        """Z = V/m with true randomness: t from the truncated Beta law, V = t u + sqrt(1-t^2) w."""
        u = round_to_sphere(x, entropy)
        p = self.par
        a = (self.d - 1) / 2
        c1, c2 = entropy.uniform(2)
        if c1 < p.p0:  # cap: 1 - tau uniform in law on (0, P_cap]
            t = 1.0 - 2.0 * special.betaincinv(a, a, c2 * p.cap)
        else:
            t = 2.0 * special.betaincinv(a, a, c2 * (1 - p.cap)) - 1.0
        g = entropy.normal(self.d)
        w = g - np.dot(g, u) * u
        w /= np.linalg.norm(w)
        return (t * u + math.sqrt(max(0.0, 1 - t * t)) * w) / p.m

    def variance(self) -> float:
        """E|Z - u|^2 = 1/m^2 - 1 for a unit input (>= 0: m <= 1 since E|Z|^2 >= |E Z|^2 = 1;
        a log m rounded a hair above 0 must not give a negative variance)."""
        return max(0.0, math.expm1(-2.0 * math.log(self.par.m)))

    def _second_moments(self) -> tuple[float, float]:
        """(A, B) / m^2: E[Z Z^T] = (A u u^T + B (I - u u^T)) / m^2 (module docstring)."""
        a = projection_second_moment(self.par)
        m2 = self.par.m ** 2
        return a / m2, (1 - a) / (self.d - 1) / m2

    def coordinate_variance(self, u=None):
        """Var(Z_i) for a unit input whose coordinate i is u (a real or an array in [-1, 1]):
        (A u^2 + B (1 - u^2)) / m^2 - u^2 (summed over i it is ``variance()``). u = None gives
        the largest over every unit input, max(A/m^2 - 1, B/m^2).

        Parameters
        ----------
        u : float or array of float, optional
            The input's coordinate, in [-1, 1]; None: the largest over every unit input.
        """
        a, b = self._second_moments()
        if u is None:
            return max(a - 1.0, b)
        u = check_estimates(u, "u", scalar=True)
        if np.any(np.abs(u) > 1):
            raise ValueError(f"u must be in [-1, 1] (a coordinate of a unit vector), got "
                             f"{float(u.flat[np.argmax(np.abs(u))])!r}")
        w = u * u
        return np.maximum(a * w + b * (1 - w) - w, 0.0)

    def mean_intervals(self, mean, n: int, level: float = 0.95,
                       conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(low, high): approximate per-coordinate confidence intervals mean_i +- z sd_i for
        the mean of n reports (``mean`` = their average, length d) at ``level`` (two-sided
        normal quantile z; the central limit theorem over n independent reports).

        sd_i^2 = coordinate_variance(u_i) / n at the plug-in u_i = mean_i clipped to [-1, 1]:
        exact when every user holds the same unit vector, approximate otherwise. With
        ``conservative=True``, sd_i^2 = max(A, B) / (m^2 n), the largest Var(Z_i) over every
        input of norm <= 1 (rounding to the sphere included), valid for any users' data.
        Per coordinate, not simultaneous (see :meth:`error_radius` for the whole vector).

        Parameters
        ----------
        mean : array of float
            The average of the n reports (length d).
        n : int
            The number of reports.
        level : float, default 0.95
            The confidence level, in (0, 1).
        conservative : bool, default False
            Use the largest coordinate variance over every input (see above).
        """
        mean = check_estimates(mean, "mean", self.d)
        n = V.users(n)
        z = normal_quantile(level)
        if check_flag(conservative, "conservative"):
            var = np.full(self.d, max(self._second_moments()))
        else:
            var = self.coordinate_variance(np.clip(mean, -1.0, 1.0))
        half = z * np.sqrt(var / n)
        return mean - half, mean + half

    def intervals(self, est, n: int, level: float = 0.95,
                  conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The contract's intervals: :meth:`mean_intervals` of the estimated mean."""
        return self.mean_intervals(est, n, level, conservative)

    def error_radius(self, n: int, level: float = 0.95) -> float:
        """r with Pr[|mean - true mean|_2 >= r] <= 1 - level for the mean of n reports, for
        any inputs of norm <= 1, without approximation (Chebyshev: E|Z - x|^2 = 1/m^2 - |x|^2
        <= 1/m^2 per report, so r = 1 / (m sqrt(n (1 - level)))); conservative.

        Parameters
        ----------
        n : int
            The number of reports.
        level : float, default 0.95
            The probability, in (0, 1), that the error stays below r.
        """
        n = V.users(n)
        level = V.probability_open(level, "level")
        return 1.0 / (self.par.m * math.sqrt(n * (1.0 - level)))
