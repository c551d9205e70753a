"""Scalar randomizers: a bounded value x in [lo, hi] reported as x + Laplace or Gaussian noise
(docs/theory.md §2.11; guide section 8).

* :class:`LaplaceScalar` (replacement eps = (hi - lo)/b, pure): x + Lap(b). Compressible by
  FT21 Alg. 1: w.r.t. the reference law Lap(mid, b) (mid = (lo + hi)/2) the density ratio is
  exp((|y - mid| - |y - x|)/b), within e^(+-eps/2), so its deletion eps is eps/2.
* :class:`GaussianScalar` (not pure: no finite eps): x + N(0, sigma^2). Its density ratio to any
  fixed law is unbounded, so FT21 Alg. 1 does not apply (``compression_refusal`` says why).

Both: clients draw from the OS CSPRNG (core/entropy.py); the server's summary is the sum of the
reports (float64[1]); the mean estimate is that sum / n (unbiased: the noise has mean 0), with
variance (Var(x) + noise variance)/n <= ((hi - lo)^2/4 + noise variance)/n. Shuffle accounting
reads ``shuffle_structure()``: a :class:`ScalarStructure` (noise, half-width in noise units).

Caveat: reports are doubles. Like every floating-point Laplace or Gaussian sampler, the low
bits of an output can carry more about x than the real-valued analysis says (Mironov 2012);
callers that publish raw reports to an adversary able to inspect them should round reports to
a coarse grid first (a post-processing: the accounting still holds for the real-valued law).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import validate as V
from ..core.entropy import Entropy
from ..core.numerics import EXP_MAX
from ..core.prg import PRG
from . import cost as C
from .contract import Column, Cost, LocalRandomizer, Privacy, SummarySpec
from .estimator import check_estimates, normal_quantile
from .registry import register

__all__ = ["ScalarStructure", "ScalarRandomizer", "LaplaceScalar", "GaussianScalar",
           "laplace_from_uniforms", "TAIL_SCALES"]

TAIL_SCALES = 40.0  # a report beyond hi + 40 noise scales (or below lo - 40) is refused
MAX_REPORT = 1e150  # |report| bound: squares, variances and sums of up to 1e150 reports stay finite
MIN_HALF_WIDTH = 1e-300  # (hi - lo)/2 in noise scales: below, the structure's half-width underflows
_HALF_ULP = 2.0 ** -54


@dataclass(frozen=True)
class ScalarStructure:
    """What shuffle accounting needs of a scalar randomizer (docs/theory.md §2.11): the noise
    law ("laplace" or "gaussian") and the half-width of [lo, hi] in units of its scale
    (b or sigma). ``eps0`` is the replacement eps (inf for Gaussian noise).

    Parameters
    ----------
    noise : {"laplace", "gaussian"}
        The noise law.
    half_width : float
        (hi - lo)/2 in units of the noise's scale, in (0, 350].
    params : tuple, default ()
        The randomizer's parameters as (name, value) pairs.
    """

    noise: str
    half_width: float
    params: tuple = ()

    def __post_init__(self):
        if self.noise not in ("laplace", "gaussian"):
            raise ValueError(f"noise must be 'laplace' or 'gaussian', got {self.noise!r}")
        hw = V.positive_finite(self.half_width, "half_width")
        if not hw <= 350.0:
            raise ValueError(f"half_width must be in (0, 350] noise scales, got {hw!r}")

    @property
    def eps0(self) -> float:
        """Replacement eps: (hi - lo)/b for Laplace (rounded up), inf for Gaussian."""
        if self.noise == "laplace":
            return math.nextafter(2.0 * self.half_width, math.inf)
        return math.inf

    @property
    def identity(self) -> tuple:
        return (self.noise, self.half_width)

    def describe(self) -> str:
        return f"{self.noise}-scalar(half_width={self.half_width:.6g} scales)"


def laplace_from_uniforms(u: np.ndarray) -> np.ndarray:
    """Standard Laplace variates by the inverse cdf of u + 2^-54 (u = j 2^-53 in [0, 1)): the
    point is in (0, 1), symmetric about 1/2, so neither tail hits log(0); below 1/2 log(2v),
    above -log(2 (1 - v)) (1 - v exact on this grid)."""
    v = u + _HALF_ULP
    out = np.empty_like(v)
    low = v < 0.5
    out[low] = np.log(2.0 * v[low])
    out[~low] = -np.log(2.0 * (1.0 - v[~low]))
    return out


def _reals_in(values, lo: float, hi: float, what: str, why: str) -> np.ndarray:
    """A 1-D float64 array of finite reals in [lo, hi]; errors name the first bad entry."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{what}s must be real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{what}s must be a 1-D array of values, got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    bad = ~(np.isfinite(arr) & (arr >= lo) & (arr <= hi))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{what} {i} is {arr[i]!r}, outside [{lo:.6g}, {hi:.6g}]{why}")
    return arr


class ScalarRandomizer(LocalRandomizer):
    """Common client and server of x + noise on [lo, hi] (subclasses give the noise)."""

    noise = ""
    lo: float
    hi: float
    scale: float

    def _init_range(self, lo, hi):
        lo, hi = V.real(lo, "lo"), V.real(hi, "hi")
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"the range [lo, hi] must be finite with lo < hi, got [{lo!r}, {hi!r}]")
        if not (hi - lo) < 1e300:
            raise ValueError(f"hi - lo must be below 1e300, got {hi - lo!r}")
        self.lo, self.hi = float(lo), float(hi)
        self.mid = 0.5 * (self.lo + self.hi)
        self.bits_per_report = 64

    def _check_scale(self, param: str) -> None:
        """Refuse, naming ``param`` and the range, a noise scale whose reports or estimator
        overflow (|report| <= max(|lo|, |hi|) + TAIL_SCALES scale must stay <= MAX_REPORT, so
        that the variance and the sum of any number of reports are finite) or whose
        half-width (hi - lo)/(2 scale) underflows."""
        reach = max(abs(self.lo), abs(self.hi)) + TAIL_SCALES * self.scale
        if not reach <= MAX_REPORT:
            raise ValueError(
                f"{self.name}: reports of [lo, hi] = [{self.lo!r}, {self.hi!r}] with noise scale "
                f"{self.scale!r} (from {param} = {getattr(self, param)!r}) reach |y| = {reach:.3g},"
                f" above {MAX_REPORT:g}: the estimator's sums and variance would overflow "
                f"(narrow [lo, hi] or change {param})")
        if not 0.5 * (self.hi - self.lo) / self.scale >= MIN_HALF_WIDTH:
            raise ValueError(
                f"{self.name}: (hi - lo)/2 is {0.5 * (self.hi - self.lo) / self.scale!r} noise "
                f"scales, below {MIN_HALF_WIDTH:g} (from {param} = {getattr(self, param)!r}): "
                f"widen [lo, hi] or change {param}")

    # -- client --------------------------------------------------------------------------------
    def check_items(self, xs) -> np.ndarray:
        """Inputs as a 1-D float64 array of finite values in [lo, hi] (errors name the first)."""
        return _reals_in(xs, self.lo, self.hi, "input", "")

    def check_item(self, x) -> float:
        if np.ndim(x) != 0:
            raise ValueError(f"an input is one real value, got shape {np.shape(x)}")
        return float(self.check_items(np.asarray([x]))[0])

    def _noise(self, count: int, stream) -> np.ndarray:
        raise NotImplementedError

    def _randomize_many(self, xs, entropy: Entropy) -> np.ndarray:
        """x_i + noise_i, noise from ``entropy`` (os.urandom unless told otherwise)."""
        return xs + self._noise(xs.size, entropy)

    def _randomize_one(self, x, entropy: Entropy) -> float:
        return float(self._randomize_many(np.asarray([x]), entropy)[0])

    # -- server --------------------------------------------------------------------------------
    def check_reports(self, reports) -> np.ndarray:
        """Reports as a 1-D float64 array of finite values within TAIL_SCALES noise scales of
        [lo, hi] (no client output lies beyond: the samplers are bounded there)."""
        lo, hi = self.lo - TAIL_SCALES * self.scale, self.hi + TAIL_SCALES * self.scale
        return _reals_in(reports, lo, hi, "report", f" (no {self.name} client sends it: a "
                                                    "malformed or hostile report)")

    def summary_spec(self) -> SummarySpec:
        return SummarySpec((1,), "float64")

    def _summarize(self, reports) -> np.ndarray:
        """The sum of the reports (float64[1])."""
        return np.array([reports.sum()])

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """A few checks and a sum per report; seeds (Laplace's ``decode_seeds``) are decoded
        one at a time in Python, a PRG each. Memory: a few copies of the batch."""
        n, b, calls = C.cost_args(n, batch)
        per = 8 * C.SIMPLE + (C.PY_SEED if seeds else 0.0)
        return Cost(n * per + calls * C.CALL, b * 8 * (6 if seeds else 4) + (b * 200 if seeds else 0),
                    f"n = {n} values summed")

    def estimate_from_summary(self, summary, n: int) -> np.ndarray:
        """The mean of x: sum / n (unbiased: E[noise] = 0)."""
        n = V.users(n)
        s = np.asarray(summary)
        if s.shape != (1,) or s.dtype.kind != "f" or not np.isfinite(s).all():
            raise ValueError(f"a {self.name} summary is a finite float64[1] sum of reports, got "
                             f"{s.dtype}{list(s.shape)}")
        return s / n

    def noise_variance(self) -> float:
        raise NotImplementedError

    def variance(self, n: int = 1, data_variance: float | None = None) -> float:
        """Var of the mean estimate from n reports: (Var(x) + noise variance)/n; without
        ``data_variance`` the worst case (hi - lo)^2/4 (Popoviciu).

        Parameters
        ----------
        n : int, default 1
            The number of reports.
        data_variance : float, optional
            The variance of the users' values (>= 0); None: the worst case (hi - lo)^2/4.
        """
        n = V.users(n)
        dv = (self.hi - self.lo) ** 2 / 4.0 if data_variance is None else \
            V.nonnegative(data_variance, "data_variance")
        return (dv + self.noise_variance()) / n

    def intervals(self, est, n: int, level: float = 0.95,
                  conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """est +- z sd, sd^2 = variance(n) (the worst-case data variance (hi - lo)^2/4); with
        ``conservative`` Chebyshev's z = 1/sqrt(1 - level) instead of the normal quantile."""
        est = check_estimates(est, "est", length=1)
        z = 1.0 / math.sqrt(1.0 - V.probability_open(level, "level")) if conservative \
            else normal_quantile(level)
        r = z * math.sqrt(self.variance(n))
        return est - r, est + r

    # -- storage -------------------------------------------------------------------------------
    def report_columns(self) -> tuple[Column, ...]:
        return (Column("y", "float64"),)

    def _to_columns(self, reports) -> dict[str, np.ndarray]:
        return {"y": reports}

    def _from_columns(self, columns) -> np.ndarray:
        return columns["y"]

    # -- accounting ----------------------------------------------------------------------------
    def shuffle_structure(self) -> ScalarStructure:
        return ScalarStructure(self.noise, 0.5 * (self.hi - self.lo) / self.scale,
                               tuple(sorted(self.params().items())))


@register
class LaplaceScalar(ScalarRandomizer):
    """x + Lap(b) on [lo, hi], b = (hi - lo)/eps: replacement eps-DP (pure).

    Parameters
    ----------
    lo, hi : float
        The input range [lo, hi] (finite, lo < hi).
    eps : float
        The local privacy parameter (> 0).
    """

    name, privacy, noise = "laplace-scalar", Privacy.REPLACEMENT, "laplace"

    def __init__(self, lo: float, hi: float, eps: float):
        self._init_range(lo, hi)
        self.eps = V.positive_finite(eps, "eps")
        if self.eps > EXP_MAX:
            raise ValueError(f"eps must be in (0, {EXP_MAX:g}], got {eps!r}")
        self.scale = (self.hi - self.lo) / self.eps
        if not (self.scale > 0.0 and math.isfinite(self.scale)):
            raise ValueError(f"the noise scale (hi - lo)/eps = {self.scale!r} must be finite "
                             "and > 0")
        self._check_scale("eps")
        self.deletion_eps = 0.5 * self.eps  # w.r.t. Lap(mid, b)

    def params(self) -> dict:
        return {"lo": self.lo, "hi": self.hi, "eps": self.eps}

    def _noise(self, count, stream):
        return self.scale * laplace_from_uniforms(stream.uniform(count))

    def noise_variance(self) -> float:
        return 2.0 * self.scale ** 2

    # compression (FT21 Alg. 1): reference Lap(mid, b)
    def sample(self, prg: PRG) -> float:
        return float(self.mid + self.scale * laplace_from_uniforms(prg.uniform(1))[0])

    def ratio(self, x, y) -> float:
        """R(x)(y) / Lap(mid, b)(y) = exp((|y - mid| - |y - x|)/b), in [e^-eps/2, e^eps/2]."""
        x = self.check_item(x)
        y = float(y)
        r = (abs(y - self.mid) - abs(y - x)) / self.scale
        return math.exp(min(max(r, -0.5 * self.eps), 0.5 * self.eps))

    def ratio_bounds(self):
        return math.exp(-0.5 * self.eps), math.exp(0.5 * self.eps)

    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        ys = np.array([self.decode_seed(bytes(s)) for s in np.asarray(seeds, dtype=np.uint8)])
        xs = self.check_items(xs)
        r = (np.abs(ys - self.mid) - np.abs(ys - xs)) / self.scale
        return np.exp(np.clip(r, -0.5 * self.eps, 0.5 * self.eps))

    def decode_seeds(self, seeds):
        """Every seed's output: ``sample`` draws mid + b L with |L| <= 53 ln 2 < TAIL_SCALES
        (``laplace_from_uniforms``), a valid report by construction (not checked again)."""
        seeds = np.asarray(seeds, dtype=np.uint8)
        return np.array([self.decode_seed(bytes(s)) for s in seeds], dtype=np.float64)


@register
class GaussianScalar(ScalarRandomizer):
    """x + N(0, sigma^2) on [lo, hi]: not pure DP (no finite eps); accounted in the shuffle
    model by its privacy blanket (docs/theory.md §2.11).

    Parameters
    ----------
    lo, hi : float
        The input range [lo, hi] (finite, lo < hi).
    sigma : float
        Standard deviation of the noise (> 0).
    """

    name, privacy, noise = "gaussian-scalar", Privacy.REPLACEMENT, "gaussian"

    def __init__(self, lo: float, hi: float, sigma: float):
        self._init_range(lo, hi)
        self.sigma = V.positive_finite(sigma, "sigma")
        self.scale = self.sigma
        if not 0.5 * (self.hi - self.lo) / self.sigma <= 350.0:
            raise ValueError(f"sigma must be at least (hi - lo)/700 = {(self.hi - self.lo) / 700:.6g}"
                             f", got {sigma!r}")
        self._check_scale("sigma")
        self.eps = math.inf  # no pure guarantee
        self.deletion_eps = None

    def params(self) -> dict:
        return {"lo": self.lo, "hi": self.hi, "sigma": self.sigma}

    def _noise(self, count, stream):
        return self.sigma * stream.normal(count)  # Box-Muller on CSPRNG uniforms

    def noise_variance(self) -> float:
        return self.sigma ** 2

    def compression_refusal(self) -> str:
        return ("gaussian-scalar is not pure LDP: the density ratio of N(x, sigma^2) to any "
                "fixed reference law is unbounded, so it has no finite deletion eps and FT21 "
                "Alg. 1 (rejection sampling) does not apply; use laplace-scalar to compress")
