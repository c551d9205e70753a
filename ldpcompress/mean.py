"""Mean estimation: PrivUnit2, its compression to a seed, and a one-bit baseline (SPEC S7, S5).

PrivUnit2(u): with probability p0 draw V uniform on the cap {v : <v, u> >= gamma}, else on its
complement; output Z = V / m, so that E[Z] = u. With alpha = (d-1)/2 and tau = (1+gamma)/2,
t = <V, u> has (1+t)/2 ~ Beta(alpha, alpha), which gives P_cap = I_{1-tau}(alpha, alpha)
= I_{1-gamma^2}(alpha, 1/2)/2 and, in log space,
m = (1-gamma^2)^alpha / (2^(d-2) (d-1) B(alpha, alpha)) [p0 / I_{1-tau} - (1-p0) / I_tau].
Inputs of norm < 1 are first rounded to the sphere: u = x/|x| w.p. (1+|x|)/2, else -x/|x|
(E[u] = x, coin from the CSPRNG).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from . import validate as V
from .compress import PseudoRandomizer
from .entropy import SYSTEM, Entropy
from .limits import array_bytes, check_bytes, check_trials, resolve_max_trials
from .prg import PRG
from .randomizers import Randomizer

NORM_SLACK = 1e-9


def check_vector(x, d: int) -> np.ndarray:
    """A float vector of dimension d and norm <= 1."""
    arr = np.asarray(x, dtype=float)
    if arr.shape != (d,):
        raise ValueError(f"input must be a vector of dimension {d}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("input vector must be finite")
    norm = float(np.linalg.norm(arr))
    if norm > 1.0 + NORM_SLACK:
        raise ValueError(f"input vector must have norm <= 1, got {norm:.6g}")
    return arr


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


def p_cap(d: int, gamma: float) -> float:
    """Pr[<v, u> >= gamma] for v uniform on S^(d-1): I_{1-gamma^2}((d-1)/2, 1/2) / 2."""
    return 0.5 * float(special.betainc((d - 1) / 2, 0.5, 1.0 - gamma * gamma))


def log_m(d: int, p0: float, gamma: float) -> float:
    """log m of S7 (stable for d up to 1e5 and more)."""
    a = (d - 1) / 2
    tau = (1 + gamma) / 2
    i_cap = float(special.betainc(a, a, 1 - tau))  # = P_cap
    i_rest = 1.0 - i_cap
    bracket = p0 / i_cap - (1 - p0) / i_rest
    if not bracket > 0:
        raise ValueError(f"PrivUnit2 with p0={p0}, gamma={gamma} has no positive bias")
    log_pre = (a * math.log1p(-gamma * gamma) - (d - 2) * math.log(2.0) - math.log(d - 1)
               - special.betaln(a, a))
    return log_pre + math.log(bracket)


def gamma_for_cap(d: int, cap: float) -> float:
    """gamma >= 0 with p_cap(d, gamma) = cap (cap <= 1/2)."""
    a = (d - 1) / 2
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
    """Exact privacy of PrivUnit2(p0, gamma) in dimension d (S7)."""
    d = check_dimension(d)
    p0 = V._real(p0, "p0")
    gamma = V._real(gamma, "gamma")
    if not 0.5 <= p0 < 1:
        raise ValueError(f"p0 must be in [1/2, 1), got {p0!r}")
    if not 0 <= gamma < 1:
        raise ValueError(f"gamma must be in [0, 1), got {gamma!r}")
    cap = p_cap(d, gamma)
    eps = math.log(p0 / (1 - p0)) + math.log((1 - cap) / cap)
    # pure deletion DP needs both sides of the ratio in [e^-eps_d, e^eps_d]
    eps_d = max(math.log(p0 / cap), -math.log((1 - p0) / (1 - cap)),
                math.log((1 - p0) / (1 - cap)), -math.log(p0 / cap))
    return PrivUnitParams(d, p0, gamma, cap, math.exp(log_m(d, p0, gamma)), eps, eps_d)


def optimal_params(d: int, eps: float) -> PrivUnitParams:
    """(p0, gamma) with replacement eps exactly, minimising E|Z|^2 = 1/m^2: eps is split into
    eps1 = log(p0/(1-p0)) and eps2 = log((1-P_cap)/P_cap) by a bounded 1-D search."""
    d = check_dimension(d)
    eps = V.positive_finite(eps, "eps")

    def build(eps1):
        p0 = 1.0 / (1.0 + math.exp(-eps1))
        gamma = max(0.0, gamma_for_cap(d, 1.0 / (1.0 + math.exp(eps - eps1))))
        return p0, gamma

    def loss(eps1):
        try:
            return -log_m(d, *build(eps1))
        except ValueError:
            return math.inf

    res = optimize.minimize_scalar(loss, bounds=(1e-6 * eps, eps * (1 - 1e-6)), method="bounded",
                                   options={"xatol": 1e-8 * eps})
    p0, gamma = build(res.x)
    out = params(d, p0, gamma)
    if out.eps > eps * (1 + 1e-9):  # never report parameters above the budget
        raise ValueError(f"parameter search exceeded eps ({out.eps} > {eps})")
    return out


class PrivUnit2(Randomizer):
    """PrivUnit2 as a Randomizer: inputs are vectors, outputs Z = V/m; rho = uniform sphere,
    ratio p0/P_cap on the cap and (1-p0)/(1-P_cap) off it (S7)."""

    kind = "replacement"

    def __init__(self, d: int, eps: float, p0: float | None = None, gamma: float | None = None):
        if p0 is None and gamma is not None:
            raise ValueError("gamma is given without p0: give both or neither")
        self.par = optimal_params(d, eps) if p0 is None else params(d, p0, 0.0 if gamma is None
                                                                      else gamma)
        self.d, self.eps, self.deletion_eps = self.par.d, self.par.eps, self.par.deletion_eps
        self.k = self.d  # for the Randomizer base (not a finite domain)

    def check_item(self, x):
        return check_vector(x, self.d)

    def _cap_ratio(self, inside: bool) -> float:
        p = self.par
        return p.p0 / p.cap if inside else (1 - p.p0) / (1 - p.cap)

    def ratio_bounds(self):
        return sorted((self._cap_ratio(True), self._cap_ratio(False)))

    def sample(self, prg: PRG) -> np.ndarray:
        return prg.sphere(self.d)

    def decode_seed(self, seed):
        return self.sample(PRG(seed)) / self.par.m

    def ratio(self, x, y):
        u = x / np.linalg.norm(x)
        return self._cap_ratio(float(np.dot(y, u)) * self.par.m >= self.par.gamma)  # y = V/m

    def ratio_from_seed(self, x, seed):
        """ratio on V itself (x is already a unit vector here), skipping the 1/m scaling."""
        return self._cap_ratio(float(np.dot(self.sample(PRG(seed)), x)) >= self.par.gamma)

    def randomize(self, x, entropy: Entropy = SYSTEM) -> np.ndarray:
        """Z = V/m with true randomness: t from the truncated Beta law, V = t u + sqrt(1-t^2) w."""
        u = round_to_sphere(self.check_item(x), entropy)
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
        """E|Z - u|^2 = 1/m^2 - 1 for a unit input."""
        return 1.0 / self.par.m ** 2 - 1.0


class CompressedPrivUnit2:
    """K copies of compressed PrivUnit2 at eps/K each (FT21 Lemma 5.1); a report is K seeds.
    The decoded mean of the K copies is unbiased; expected trials K e^(eps_d(eps/K))."""

    def __init__(self, d: int, eps: float, split: int = 1, tv_target: float = 2.0 ** -40,
                 entropy: Entropy = SYSTEM, max_expected_trials: float | None = None):
        self.split = V.integer_at_least(split, "split", 1, 1000)
        eps = V.positive_finite(eps, "eps")
        d = check_dimension(d)
        hint = f"; with d = {d}, mean.choose_split({d}, {eps:g}) finds K"
        self.inner = PrivUnit2(d, eps / self.split)
        self.pr = PseudoRandomizer(self.inner, tv_target, entropy, max_expected_trials, hint)
        # K copies: K e^eps_d(eps/K) trials per report in all
        total = self.split * self.pr.expected_trials
        check_trials(total, self.pr.eps_d, max_expected_trials, hint)
        self.entropy = entropy
        self.d, self.eps = d, eps

    @property
    def expected_trials(self) -> float:
        return self.split * self.pr.expected_trials

    @property
    def bytes_per_report(self) -> int:
        return self.split * self.pr.bytes_per_report

    def encode(self, x) -> list[bytes]:
        u = round_to_sphere(check_vector(x, self.d), self.entropy)
        return [self.pr.encode(u) for _ in range(self.split)]

    def decode(self, report: list[bytes]) -> np.ndarray:
        if not isinstance(report, (list, tuple)):
            raise TypeError(f"a report is a list of {self.split} seeds, got {type(report).__name__}")
        if len(report) != self.split:
            raise ValueError(f"a report has {self.split} seeds, got {len(report)}")
        return np.mean([self.pr.decode(r) for r in report], axis=0)

    def encode_many(self, xs) -> list[list[bytes]]:
        return [self.encode(x) for x in xs]

    def decode_many(self, reports) -> np.ndarray:
        """Decoded vectors as an (n, d) array (n = 0 gives shape (0, d))."""
        reports = list(reports)
        check_bytes(batch_bytes(len(reports), self.d), f"{len(reports)} decoded vectors of "
                    f"dimension {self.d}", "n or d")
        out = np.empty((len(reports), self.d))
        for i, r in enumerate(reports):
            out[i] = self.decode(r)
        return out

    def variance(self) -> float:
        """E|mean of K copies - u|^2 = (1/m_K^2 - 1)/K."""
        return self.inner.variance() / self.split


def choose_split(d: int, eps: float, max_trials: float = 1000.0) -> int:
    """Smallest K whose expected trials K e^(eps_d(eps/K)) are at most max_trials (capped at
    ``limits.MAX_EXPECTED_TRIALS``), K copies at eps/K (FT21 Lemma 5.1)."""
    d = check_dimension(d)
    eps = V.positive_finite(eps, "eps")
    max_trials = min(resolve_max_trials(max_trials), resolve_max_trials(None))
    for k in range(1, 1001):
        if k * math.exp(min(PrivUnit2(d, eps / k).deletion_eps, 700.0)) <= max_trials:
            return k
    raise ValueError(f"no split up to 1000 brings the expected trials under {max_trials}: "
                     f"use a smaller eps")


class OneBitSphere:
    """Duchi et al.'s sphere randomizer (replacement eps): Z uniform on the hemisphere around u
    w.p. e^eps/(e^eps+1) (else the opposite one), scaled by B = (e^eps+1)/((e^eps-1) c_d) with
    c_d = E|<z, u>| = Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)), so E[Z] = u; |Z|^2 = B^2."""

    kind = "replacement"

    def __init__(self, d: int, eps: float):
        self.d = check_dimension(d)
        self.eps = V.positive_finite(eps, "eps")
        if self.eps > 700:
            raise ValueError(f"eps must be in (0, 700] (e^eps must stay finite), got {eps!r}")
        c_d = math.exp(special.gammaln(d / 2) - special.gammaln((d + 1) / 2)) / math.sqrt(math.pi)
        self.scale = (math.exp(eps) + 1) / ((math.exp(eps) - 1) * c_d)

    def randomize(self, x, entropy: Entropy = SYSTEM) -> np.ndarray:
        u = round_to_sphere(check_vector(x, self.d), entropy)
        z = entropy.sphere(self.d)
        toward = entropy.uniform(1)[0] < math.exp(self.eps) / (math.exp(self.eps) + 1)
        if (np.dot(z, u) >= 0) != toward:
            z = -z
        return self.scale * z

    def variance(self) -> float:
        return self.scale ** 2 - 1.0
