"""Lossless compression of local randomizers by rejection sampling (FT21 Alg. 1-2, docs/theory.md §5.2-§5.2).

encode(x): for t = 1..T draw a fresh seed s from the CSPRNG, y = S(G(s)) ~ rho, accept with
probability min(1, ratio(x, y) / e^eps_d); send s (as a versioned report); when every trial
rejects send a fresh seed. decode(report) = S(G(s)). T = ceil(log(tau) / log(1 - e^-eps_d)),
so the output law is within TV tau of R(x); deletion eps_d-DP w.r.t. rho with a secure PRG,
2 eps_d for any PRG (FT21 Lemma 3.6); replacement randomizers keep their eps (Lemma 3.7).
"""
from __future__ import annotations

import math

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..core.limits import check_trials
from ..core.progress import track
from ..randomizers.contract import LocalRandomizer
from . import wire as reports

__all__ = ["RATIO_SLACK", "trials_for", "PseudoRandomizer", "compress"]


RATIO_SLACK = 1e-9  # relative rounding allowance before a ratio counts as exceeding e^eps_d


def trials_for(eps_d: float, tv_target: float) -> int:
    """T = ceil(log(tau) / log(1 - e^-eps_d)): (1 - e^-eps_d)^T <= tau."""
    return max(1, math.ceil(math.log(tv_target) / math.log1p(-math.exp(-eps_d))))


class PseudoRandomizer:
    """A randomizer that sends 17 bytes (version + seed) instead of its output."""

    def __init__(self, randomizer: LocalRandomizer, tv_target: float = 2.0 ** -40,
                 entropy: Entropy = SYSTEM, max_expected_trials: float | None = None,
                 hint: str = ""):
        if not isinstance(randomizer, LocalRandomizer):
            raise TypeError(f"randomizer must be an ldpcompress LocalRandomizer, got "
                            f"{type(randomizer).__name__}")
        refusal = randomizer.compression_refusal()
        if refusal is not None:
            raise ValueError(f"compress() does not take {randomizer.describe()}: {refusal}")
        self.tv_target = V.probability_open(tv_target, "tv_target")
        if not isinstance(entropy, Entropy):
            raise TypeError(f"entropy must be an ldpcompress Entropy, got {type(entropy).__name__}")
        self.randomizer = randomizer
        self.entropy = entropy
        self.eps_d = randomizer.deletion_eps
        if not (self.eps_d > 0 and math.isfinite(self.eps_d)):
            raise ValueError(f"the randomizer's deletion eps must be finite and > 0, got {self.eps_d}")
        # e^eps_d expected trials per report (FT21 Alg. 1): refuse before any encode can hang
        check_trials(math.exp(min(self.eps_d, 700.0)), self.eps_d, max_expected_trials, hint)
        self.max_trials = trials_for(self.eps_d, tv_target)
        self._bound = math.exp(self.eps_d)
        bounds = randomizer.ratio_bounds()
        if bounds is not None and (bounds[1] > self._bound * (1 + RATIO_SLACK)
                                   or bounds[0] < (1 - RATIO_SLACK) / self._bound):
            raise ValueError(f"the randomizer's ratios {bounds} leave [e^-eps_d, e^eps_d] with "
                             f"eps_d = {self.eps_d:.6g}: its declared deletion eps is wrong")

    @property
    def expected_trials(self) -> float:
        """At most e^eps_d (the mean acceptance probability is at least e^-eps_d)."""
        return self._bound

    @property
    def bytes_per_report(self) -> int:
        return reports.REPORT_BYTES

    def _accept_probability(self, x: int, seed: bytes) -> float:
        r = self.randomizer.ratio_from_seed(x, seed)
        if r > self._bound * (1.0 + RATIO_SLACK) or r < 0 or math.isnan(r):
            raise ValueError(f"the randomizer's ratio {r:.6g} exceeds e^eps_d = {self._bound:.6g}: "
                             "its declared deletion eps is wrong")
        return min(1.0, r / self._bound)

    def encode(self, x) -> bytes:
        """One compressed report of item x."""
        x = self.randomizer.check_item(x)
        block = 64
        done = 0
        while done < self.max_trials:
            count = min(block, self.max_trials - done)
            seeds = self.entropy.seeds(count)
            coins = self.entropy.uniform(count)
            for seed, coin in zip(seeds, coins):
                if coin < self._accept_probability(x, seed):
                    return reports.pack(seed)
            done += count
            block *= 4
        return reports.pack(self.entropy.seeds(1)[0])

    def decode(self, report):
        """The randomizer's output carried by a report (deterministic)."""
        return self.randomizer.decode_seed(reports.unpack(report))

    def encode_many(self, xs, progress: bool = False) -> list[bytes]:
        """One compressed report per item; ``progress``: a bar of the reports on stderr."""
        return [self.encode(x) for x in track(xs, "encode", progress, unit="reports")]

    def decode_many(self, reports_) -> list:
        return [self.decode(r) for r in reports_]


def compress(randomizer: LocalRandomizer, tv_target: float = 2.0 ** -40,
             entropy: Entropy = SYSTEM, max_expected_trials: float | None = None
             ) -> PseudoRandomizer:
    """The pseudo-randomizer of FT21 Alg. 1 for ``randomizer`` (truncated to TV distance
    tv_target). Refuses (ValueError) when the expected trials per report e^eps_d exceed
    ``max_expected_trials`` (default ``limits.MAX_EXPECTED_TRIALS`` = 1e4)."""
    return PseudoRandomizer(randomizer, tv_target, entropy, max_expected_trials)
