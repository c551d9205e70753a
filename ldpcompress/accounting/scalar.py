"""Shuffle accounting for scalar randomizers (x + Laplace or Gaussian noise on [lo, hi]):
the privacy blanket put on a lattice soundly, and an exact attack (docs/theory.md §2.11).

Upper bound (BBGN19 blanket, worst pair (lo, hi), docs/theory.md §2.11):

    delta(eps) <= E[(S)_+] / (n gamma),  S = sum_{i <= n} B_i X_i,  B_i ~ Bern(gamma),

X = (R_lo(Y) - e^eps R_hi(Y)) / w(Y), Y ~ w the blanket law, gamma its weight. Lower bound
(the attack on datasets (lo, z, ..., z) vs (hi, z, ..., z)): the same functional with
every B_i = 1 and the loss taken against R_z, divided by n.

The draws are first clipped to levels chosen for the n-fold sum (``_upper_levels``; ``lower_lattice`` only the exact ones): where one
side of X is bounded, clipping the other side at n - 1 times that bound changes the positive
part exactly (plus a known excess per draw); the upper bound also clips where the other draws'
sum almost never reaches. ``upper_lattice`` and ``lower_lattice`` then put the clipped X on a
lattice of step sd/resolution (sd of the clipped law) so that the result can only grow
(mean-preserving split) or only shrink (conditional means lumped); accounting/lattice_sum.py
sums n draws.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core import validate as V
from ..core.numerics import UNIT_ROUNDOFF as U
from ..kernels.scalar import (
    ATOMS,
    GAUSS_ATTACK,
    GAUSS_BLANKET,
    GAUSS_EDGE,
    LAPLACE,
    LAPLACE_EDGE,
    clip_moments,
    law_range,
    law_tail,
    lump_cells,
    snap_width,
    split_cells,
)
from .gaussian import delta_bracket
from .lattice_sum import FULL_WINDOW, MAX_FFT, WINDOW_SD, LatticeTooLarge, positive_part
from .profiles import Profile

__all__ = ["RESOLUTION", "WINDOW_SD", "MAX_POINTS", "LossLaw", "blanket_law", "attack_laws",
           "atoms_law", "upper_lattice", "lower_lattice", "positive_part",
           "blanket_delta", "attack_delta", "local_delta", "MAX_HALF_WIDTH", "FULL_WINDOW",
           "MAX_FFT", "ScalarLocalProfile", "ScalarBlanketProfile", "ScalarLowerProfile"]

RESOLUTION = 24      # lattice steps per standard deviation of one (clipped) draw's loss
LUMP_SLACK = 1e-9    # lump_cells rounds a lump mean within this many steps of a point
MAX_HALF_WIDTH = 10.0  # (hi - lo)/2 in noise scales (Laplace eps0 <= 20; Gaussian sigma >= (hi-lo)/20)
MAX_POINTS = 1 << 20   # lattice points of one draw: a coarser step beyond (sound, looser)
MIN_POINTS = 512       # a clipped range narrower than this many steps gets finer steps
MIN_CROWD = 1e-3       # the blanket is not computed below this expected crowd n gamma


@dataclass(frozen=True)
class LossLaw:
    """One draw's loss law (kernels/scalar.py kind and parameters) and the thinning weight
    gamma of the blanket (1.0: every user draws, as in the attack)."""

    kind: int
    par: tuple
    gamma: float = 1.0

    @property
    def array(self) -> np.ndarray:
        return np.asarray(self.par, dtype=np.float64)


def blanket_law(noise: str, half_width: float) -> LossLaw:
    """The blanket law of x + noise on [-half_width, half_width] (noise scale 1): Laplace's
    blanket is Lap(0, 1) with weight e^-half_width; the Gaussian's is the normalised minimum of
    the two extreme densities, weight 2 Phi(-half_width) (docs/theory.md §2.11)."""
    if noise == "laplace":
        return LossLaw(LAPLACE, (half_width,), math.exp(-half_width))
    if noise == "gaussian":
        return LossLaw(GAUSS_BLANKET, (2.0 * half_width,), math.erfc(half_width / math.sqrt(2)))
    raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")


def attack_laws(noise: str, half_width: float) -> tuple[LossLaw, ...]:
    """The attacks' per-draw losses, every user drawing: every other user at the midpoint
    (loss against R_mid), or at lo (loss against R_lo, user 1 at hi vs lo and lo vs hi)."""
    if noise == "laplace":
        return (LossLaw(LAPLACE, (half_width,)), LossLaw(LAPLACE_EDGE, (half_width, 1.0)),
                LossLaw(LAPLACE_EDGE, (half_width, 0.0)))
    if noise == "gaussian":
        d = 2.0 * half_width
        return (LossLaw(GAUSS_ATTACK, (d,)), LossLaw(GAUSS_EDGE, (d, 1.0)),
                LossLaw(GAUSS_EDGE, (d, 0.0)))
    raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")


def atoms_law(probs, r1, r2, gamma: float) -> LossLaw:
    """A finite blanket law: outcome i has probability probs[i] under w and density ratios
    r1[i] = R_x1/w, r2[i] = R_x1'/w (e.g. k-RR: three atoms)."""
    probs, r1, r2 = (np.asarray(v, dtype=np.float64).ravel() for v in (probs, r1, r2))
    if not (probs.size == r1.size == r2.size and probs.size > 0):
        raise ValueError("probs, r1, r2 must be non-empty and of equal length")
    return LossLaw(ATOMS, tuple(np.concatenate([probs, r1, r2]).tolist()), float(gamma))


def _tail(law: LossLaw, par, e, v, upper=True):
    return law_tail(law.kind, par, e, v, upper)


def _find_cut(f, start: float, target: float) -> float:
    """The smallest v >= start (doubling, then 40 bisections) with f(v) <= target, f
    non-increasing; a value where f is verified <= target (or the last doubling, 2^200 start,
    when none is: callers add the tail they leave at the value returned)."""
    v = max(start, 1e-3)
    for _ in range(200):
        if f(v) <= target:
            break
        v *= 2.0
    lo, hi = v / 2.0, v
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if f(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def _tail_cuts(law: LossLaw, par, e, tol: float) -> tuple[float, float]:
    """X's ends, or for an unbounded side the level where its tail moment falls to ``tol``."""
    x_min, x_max, _ = law_range(law.kind, par, e)
    hi_v = x_max if math.isfinite(x_max) else _find_cut(lambda v: _tail(law, par, e, v)[1],
                                                        1.0, tol)
    lo_v = x_min if math.isfinite(x_min) else -_find_cut(
        lambda v: -_tail(law, par, e, -v, False)[1], 1.0, tol)
    return lo_v, hi_v


def _upper_levels(law: LossLaw, par, e, tol: float, n: int | None) -> tuple[float, float]:
    """(lo_v, hi_v): the blanket's draws are raised below lo_v and lowered above hi_v (the
    caller adds the excess E[(X - hi_v)_+] per draw): sound at any levels, as raising a draw
    only raises the sum and (a + b)_+ <= (a + min(b, L))_+ + (b - L)_+ (docs/theory.md §2.11).
    The levels are chosen where they cost (almost) nothing: the tail cuts at ``tol``; with n,
    (a) (n - 1)(-x_min) above (a draw there makes the sum positive whatever the others, so
    the clip is exact) and -(n - 1) hi_v below (a draw there leaves the sum <= 0), and (b) where
    the other n - 1 thinned draws' sum (mean mu, sd s, from the moments of the law clipped so
    far) almost never reaches: -mu + 11 s above, -(max(mu, 0) + 11 s) below."""
    x_min, x_max, _ = law_range(law.kind, par, e)
    lo_v, hi_v = _tail_cuts(law, par, e, tol * 1e6)  # the excess above: 1e-4 of the target
    if n is None:
        return lo_v, hi_v
    g = law.gamma

    def others(lo, hi):
        m1, m2 = clip_moments(law.kind, par, e, min(lo, 0.0), max(hi, 0.0))
        return (n - 1) * g * m1, math.sqrt(max((n - 1) * (g * m2 - (g * m1) ** 2), 0.0))

    if x_min < 0.0:
        hi_v = min(hi_v, (n - 1) * -x_min)
    mu, s = others(lo_v, hi_v)
    hi_v = max(min(hi_v, max(-mu, 0.0) + WINDOW_SD * s), 0.0)
    lo_v = max(lo_v, -(n - 1) * hi_v)
    mu, s = others(lo_v, hi_v)
    lo_v = min(max(lo_v, -(max(mu, 0.0) + WINDOW_SD * s)), 0.0)
    return lo_v, hi_v


def _step(law: LossLaw, par, e, lo_v: float, hi_v: float, resolution: int,
          min_step: float) -> float:
    """The lattice step: sd/resolution of X clipped to [lo_v, hi_v] and to its bulk (the tail
    cuts at 1e-6 (1 + E): far values of heavy tails do not set the step), at most
    (hi_v - lo_v)/MIN_POINTS, at least (hi_v - lo_v)/MAX_POINTS and ``min_step``."""
    span = hi_v - lo_v
    if not span > 0.0:
        return max(min_step, 1.0)
    b_lo, b_hi = _tail_cuts(law, par, e, 1e-6 * (1.0 + e))
    m1, m2 = clip_moments(law.kind, par, e, min(max(lo_v, b_lo), 0.0), max(min(hi_v, b_hi), 0.0))
    sd = math.sqrt(max(m2 - m1 * m1, 0.0))
    h = min(sd / resolution, span / MIN_POINTS) if sd > 0.0 else span / MIN_POINTS
    return max(h, span / MAX_POINTS, min_step)


def _snap(law: LossLaw, par, e) -> float:
    """How far kernels/scalar.py may move Laplace's mass to decide an end atom's side."""
    return snap_width(law.kind, par, e) if law.kind in (LAPLACE, LAPLACE_EDGE) else 0.0


def _excess(law: LossLaw, par, e, v: float, upper: bool) -> float:
    """E[(X - v)_+] = T(v) - v G(v) for v >= 0, rounded up (or down, never below 0)."""
    g, t = _tail(law, par, e, v)
    val = t - v * g
    err = 8.0 * U * (abs(t) + v * g) + 4.0 * _snap(law, par, e)
    return val + err if upper else max(val - err, 0.0)


def upper_lattice(law: LossLaw, e: float, tol: float, resolution: int = RESOLUTION,
                  n: int | None = None, min_step: float = 0.0):
    """(pmf, k0, h, extra): a lattice law X' on the points (k0 + i) h with X <=_icx X' up to
    ``extra`` per draw (the excess above the top clip, rounding of the cell moments): so
    E[(sum of X)_+] <= E[(sum of X')_+] + E[number of draws] extra. Without n the clips are
    the tail cuts at ``tol`` (the excess above is <= tol); with n those of _upper_levels."""
    par = law.array
    x_min, x_max, _ = law_range(law.kind, par, e)
    lo_v, hi_v = _upper_levels(law, par, e, tol, n)
    h = _step(law, par, e, lo_v, hi_v, resolution, min_step)
    k_lo = int(math.floor(lo_v / h))
    clipped = hi_v < x_max
    # a bounded law's cells reach past x_max (its atom included); else the clip at k_top h
    k_top = int(math.ceil(hi_v / h)) if clipped else int(math.floor(hi_v / h)) + 1
    extra = _excess(law, par, e, k_top * h, True) if clipped else 0.0
    p, err = split_cells(law.kind, par, e, h, k_lo, k_top - 1, 0.0)
    if k_lo * h > x_min:
        p[0] += _tail(law, par, e, k_lo * h, False)[0]   # raised to k_lo h
    if clipped:
        p[-1] += _tail(law, par, e, k_top * h)[0]        # lowered to k_top h
    return p, k_lo, h, extra + err + 4.0 * _snap(law, par, e)


def lower_lattice(law: LossLaw, e: float, tol: float, resolution: int = RESOLUTION,
                  sub: int | None = None, n: int | None = None, min_step: float = 0.0):
    """(pmf, k0, h, c0, err): a lattice law X'' <=_cx X on the points c0 + k h (conditional
    means lumped onto lattice points; the mass beyond the tail cuts moved down, which only
    lowers), up to ``err`` per draw to subtract. With n, the exact levels of _upper_levels: the
    draws below lo_v sit at lo_v (a lattice point) and those above hi_v at hi_v, whose excess
    is returned to the sum as a negative part of ``err``. Both bounded ends are lattice
    points (Laplace's atoms there lump exactly); the lumps sweep toward a far tail or an end
    atom, so that the one lump rounded down is tiny. Cells are h/sub wide (sub = 8, fewer on
    lattices of more than 2^14 points)."""
    par = law.array
    x_min, x_max, _ = law_range(law.kind, par, e)
    lo_v, hi_v = _tail_cuts(law, par, e, tol)
    # the top: x_max, or (n - 1)(-x_min) (exact: its excess returned), or the cut (moved down)
    lowered = n is not None and x_min < 0.0 and (n - 1) * -x_min < min(x_max, hi_v)
    if lowered and n is not None:
        hi_v = (n - 1) * -x_min
    top = hi_v if lowered or math.isfinite(x_max) else math.inf
    # the bottom: -(n - 1) hi_v (every draw is <= hi_v now: exact), or x_min, or the cut
    level = -(n - 1) * max(hi_v, 0.0) if n is not None else -math.inf
    raised = level > x_min and level >= lo_v
    bot = level if raised else x_min
    lo_v = bot if math.isfinite(bot) else lo_v
    h = _step(law, par, e, lo_v, hi_v, resolution, min_step)
    c0 = 0.0
    if math.isfinite(bot) and math.isfinite(top):
        h = (top - bot) / max(math.ceil((top - bot) / h), 1) if top > bot else h
        c0 = bot
    elif math.isfinite(top):
        c0 = top
    elif math.isfinite(bot):
        c0 = bot
    k_lo = int(math.floor((lo_v - c0) / h)) - 1
    k_hi = int(math.floor((hi_v - c0) / h)) + (2 if math.isfinite(top) else 0)
    if sub is None:
        sub = max(2, min(8, (1 << 17) // max(k_hi - k_lo, 1)))
    # one sweep, up or down: the one whose last lump (rounded down) loses less of the mean
    cap = top  # a top atom (Laplace, or the exact clip) lumps alone
    pts = c0 + np.arange(k_lo + 1, k_hi) * h
    best = None
    for k_mid in (k_hi + 1, k_lo):
        cand = lump_cells(law.kind, par, e, h, c0, k_lo + 1, k_hi - 1, 0.0, sub, k_mid, cap)
        if best is None or float(cand @ pts) > float(best @ pts):
            best = cand
    p = np.concatenate([[0.0], best, [0.0]])
    raise_err, excess = 0.0, 0.0
    if math.isfinite(top):
        g_top, _ = _tail(law, par, e, top)
        k_top = int(round((top - c0) / h))
        p[k_top - k_lo] += g_top
        raise_err = g_top * max(c0 + k_top * h - top, 0.0)  # its lattice point's rounding
        if lowered:
            excess = _excess(law, par, e, top, False)
    if raised:  # below the exact level: at it (a lattice point, c0 or on the grid)
        g_lo, _ = _tail(law, par, e, bot, False)
        k_bot = int(round((bot - c0) / h))
        p[k_bot - k_lo] += g_lo
        raise_err += g_lo * max(c0 + k_bot * h - bot, 0.0)
    elif math.isinf(x_min):  # below c0 + (k_lo + 1) h: at the floor of its conditional mean
        g_lo, t_lo = _tail(law, par, e, c0 + (k_lo + 1) * h, False)
        if g_lo > 0.0:
            k_put = min(int(math.floor((t_lo / g_lo - c0) / h)), k_lo)
            if k_put < k_lo:
                p = np.concatenate([np.zeros(k_lo - k_put), p])
                k_lo = k_put
            p[0] += g_lo
    if not math.isfinite(top):
        g_hi, _ = _tail(law, par, e, c0 + k_hi * h)  # at or above the top: moved down to it
        p[-1] += g_hi
    span = abs(c0) + abs(h * k_lo) + abs(h * (k_lo + p.size))
    err = (LUMP_SLACK * h + 32.0 * U * span + raise_err
           + 4.0 * _snap(law, par, e))  # rounding (kernels/scalar.py)
    return p, k_lo, h, c0, err - excess


def _thin(p: np.ndarray, k0: int, gamma: float):
    """The law of B X' (B ~ Bern(gamma)) on the lattice: X' scaled by gamma plus 1 - gamma at 0."""
    if gamma >= 1.0:
        return p, k0
    lo, hi = min(k0, 0), max(k0 + p.size - 1, 0)
    out = np.zeros(hi - lo + 1)
    out[k0 - lo:k0 - lo + p.size] = gamma * p
    out[-lo] += 1.0 - gamma
    return out, lo


def _coarsened(lattice, total):
    """total(lattice(min_step)), the lattice's step widened (a coarser lattice is as sound,
    only looser) until the n-fold sum's window fits MAX_FFT points (lattice_sum.py)."""
    min_step = 0.0
    for _ in range(8):
        lat = lattice(min_step)
        try:
            return total(lat)
        except LatticeTooLarge as err:
            min_step = lat[2] * 1.25 * err.size / err.limit  # lat[2]: the step h
    raise AssertionError("the lattice did not fit after 8 coarsenings")  # pragma: no cover


def blanket_delta(n: int, law: LossLaw, eps: float, tol: float,
                  resolution: int = RESOLUTION) -> float:
    """The blanket upper bound on delta(eps) for n users (docs/theory.md §2.11)."""
    e = math.exp(eps)
    if law_range(law.kind, law.array, e)[1] <= 0.0:
        return 0.0  # no draw is positive

    def total(lat):
        p, k0, h, extra = lat
        pz, kz = _thin(p, k0, law.gamma)
        pos = positive_part(pz, kz, n, upper=True)
        return min(1.0, h * pos / (n * law.gamma) * (1.0 + 8.0 * U) + extra)

    return _coarsened(lambda m: upper_lattice(law, e, tol, resolution, n, m), total)


def attack_delta(n: int, law: LossLaw, eps: float, tol: float,
                 resolution: int = RESOLUTION) -> float:
    """The exact delta(eps) of the attack datasets, rounded down (docs/theory.md §2.11)."""
    e = math.exp(eps)
    if law_range(law.kind, law.array, e)[1] <= 0.0:
        return 0.0

    def total(lat):
        p, k0, h, c0, err = lat
        pos = positive_part(p, k0, n, upper=False, shift=c0 / h)
        return min(1.0, max(0.0, h * pos / n * (1.0 - 8.0 * U) - err))

    return _coarsened(lambda m: lower_lattice(law, e, tol, resolution, n=n, min_step=m), total)


def local_delta(noise: str, half_width: float, eps: float) -> float:
    """H_{e^eps}(R_lo || R_hi) of one report, rounded up (an upper bound for any n: the shuffled
    output is a post-processing of user 1's report). Laplace: 1 - e^((eps - eps0)/2),
    eps0 = 2 half_width; Gaussian: the Gaussian mechanism's exact profile with
    mu = 2 half_width (BW18, accounting/gaussian.py)."""
    if noise == "laplace":
        eps0 = 2.0 * half_width
        return 0.0 if eps >= eps0 else min(1.0, -math.expm1(0.5 * (eps - eps0)) * (1 + 4 * U))
    return delta_bracket(2.0 * half_width, eps)[1]


class _ScalarProfile(Profile):
    """A profile of a scalar randomizer's structure ``st`` (randomizers/scalar.py)."""

    rtol = 1e-6  # the solver's bracket (an upper bound returns its verified upper end)

    def __init__(self, n: int, st, resolution: int = RESOLUTION):
        n = V.shuffle_users(n)
        super().__init__(n, st.eps0)
        self.structure = st
        self.resolution = V.integer_at_least(resolution, "resolution", 4, 4096)

    def lattice_refusal(self) -> str | None:
        """Why the lattice is not built: a half-width above MAX_HALF_WIDTH noise scales
        (Laplace eps0 > 20: the generic bound answers; Gaussian sigma < (hi - lo)/20: the
        blanket weight 2 Phi(-a) < 2e-23 leaves no crowd, one report's bound answers)."""
        if self.structure.half_width > MAX_HALF_WIDTH:
            return (f"(hi - lo)/2 is {self.structure.half_width:.4g} noise scales, above the "
                    f"{MAX_HALF_WIDTH:g} the scalar lattice supports")
        return None

    def crowd_refusal(self) -> str | None:
        """The blanket's expected crowd n gamma below MIN_CROWD: with probability
        (1 - gamma)^(n-1) >= 1 - n gamma no other user draws from the blanket, so the bound
        is at least (1 - n gamma) times one report's divergence (ScalarLocalProfile)."""
        gamma = blanket_law(self.structure.noise, self.structure.half_width).gamma
        if self.n * gamma < MIN_CROWD:
            return (f"the blanket's expected crowd n gamma = {self.n * gamma:.3g} is below "
                    f"{MIN_CROWD:g}: it lowers one report's delta by at most that fraction")
        return None

    def eps_max(self, delta: float) -> float:
        """An eps with delta(eps) <= delta verified: eps0 (Laplace); for Gaussian noise the eps
        where one report's exact profile (local_delta) reaches delta."""
        if math.isfinite(self.eps0):
            return self.eps0
        mu = 2.0 * self.structure.half_width
        z = -NormalDist().inv_cdf(min(delta, 0.5))
        eps = mu * (0.5 * mu + z) * (1.0 + 1e-9) + 1e-12
        while local_delta(self.structure.noise, self.structure.half_width, eps) > delta:
            eps = eps * 1.01 + 1e-12
        return eps

    def guess(self, delta: float) -> float:
        """The central-limit guess: delta ~ Pr[N(0, n gamma Var X) > n gamma (e^eps - 1)], so
        e^eps - 1 ~ sqrt(2 Var X log(1/delta) / (n gamma)) (Var X at eps = 0, clipped where
        the tail moment is 1e-12)."""
        law = blanket_law(self.structure.noise, min(self.structure.half_width, MAX_HALF_WIDTH))
        par = law.array
        lo_v, hi_v = _tail_cuts(law, par, 1.0, 1e-12)
        m1, m2 = clip_moments(law.kind, par, 1.0, lo_v, hi_v)
        var = max(m2 - m1 * m1, 0.0)
        g = math.sqrt(2.0 * var * math.log(1.0 / delta) / (self.n * max(law.gamma, 1e-300)))
        return min(self.eps_max(delta), 1.05 * math.log1p(min(g, 1e300)))


class ScalarLocalProfile(_ScalarProfile):
    """One report's divergence H(R_lo || R_hi), rounded up: an upper bound at any n (the
    shuffled reports are a post-processing of user 1's report and the others' independent
    ones). Laplace: 1 - e^((eps - eps0)/2); Gaussian: the Gaussian mechanism (BW18)."""

    name, label, upper = "local_scalar", "one report's divergence (shuffling only helps)", True

    def _delta(self, eps, tol):
        return local_delta(self.structure.noise, self.structure.half_width, eps)


class ScalarBlanketProfile(_ScalarProfile):
    """Blanket upper bound (docs/theory.md §2.11) of a scalar randomizer, min with the local
    divergence of one report."""

    name, label, upper = "blanket_scalar", "privacy blanket, lattice (Balle et al. 2019)", True

    def __init__(self, n: int, st, resolution: int = RESOLUTION):
        super().__init__(n, st, resolution)
        self.law = blanket_law(st.noise, min(st.half_width, MAX_HALF_WIDTH))

    def unsupported(self) -> str | None:
        return self.lattice_refusal() or self.crowd_refusal()

    def _delta(self, eps, tol):
        local = local_delta(self.structure.noise, self.structure.half_width, eps)
        if local <= tol or self.unsupported() is not None:
            return local
        return min(local, blanket_delta(self.n, self.law, eps, tol, self.resolution))


class ScalarLowerProfile(_ScalarProfile):
    """Exact attack (docs/theory.md §2.11): user 1 at lo vs hi (and hi vs lo), every other user
    at lo, the analyst's optimal test on the whole multiset; the larger, rounded down."""

    name, label, upper = "lower_scalar", "lower bound: exact attack on the shuffled reports", False

    def __init__(self, n: int, st, resolution: int = RESOLUTION):
        super().__init__(n, st, resolution)
        self.laws = attack_laws(st.noise, min(st.half_width, MAX_HALF_WIDTH))[1:]

    def unsupported(self) -> str | None:
        return self.lattice_refusal()

    def delta(self, eps: float, tol: float) -> float:
        """The attacks' exact delta, rounded down: the larger of the two at the first call,
        then only the attack that gave it (each is a lower bound on its own)."""
        if eps >= self.eps0:
            return 0.0
        # the cuts may drop more for a lower bound (mass beyond them only moves down: the
        # attack loses at most the tail moment, 1e-3 of the target delta at window_tol)
        vals = [attack_delta(self.n, law, eps, max(tol * 1e7, 1e-300), self.resolution)
                for law in self.laws]
        if len(self.laws) > 1:
            self.laws = (self.laws[int(np.argmax(vals))],)
        return max(vals)
