"""Lossless compression of local randomizers by rejection sampling (FT21 Alg. 1-2;
docs/theory.md §5.2-§5.3).

encode(x): for t = 1..T draw a fresh seed s from the CSPRNG, y = S(G(s)) ~ rho, accept with
probability min(1, ratio(x, y) / e^eps_d); send s (as a versioned report); when every trial
rejects send a fresh seed. decode(report) = S(G(s)). T = ceil(log(tau) / log(1 - e^-eps_d)),
so the output law is within TV tau of R(x); deletion eps_d-DP w.r.t. rho with a secure PRG,
2 eps_d for any PRG (FT21 Lemma 3.6); replacement randomizers keep their eps (Lemma 3.7).

Two encoders, one law. ``encode`` / ``encode_many`` are the client's: fresh seeds and coins
from the OS CSPRNG, each trial's stream from pycryptodome (constant-time AES-NI where the
processor has it), because a client's rejected seeds are biased against its item and must not
leak through timing. ``encode_many_simulated`` is for simulations, benchmarks and load tests
only: seeded coins (``Entropy.seeded_for_simulation``) and the randomizer's batch hook
``ratios_from_seeds`` over many trials at once, whose AES kernel may be the table one.

The server side takes batches: ``decode_many`` (the randomizer's ``decode_seeds``),
``summarize`` (its ``summarize_seeds``: e.g. RAPPOR's bit counts straight from the keystream)
and ``estimate``, over a blob of n x 17 bytes, an (n, 17) uint8 array or a list of reports.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import validate as V
from ..core.chunks import spans
from ..core.entropy import SYSTEM, Entropy, simulation_only
from ..core.limits import check_trials, expected_trials
from ..core.prg import SEED_BYTES
from ..core.progress import track
from ..randomizers.contract import LocalRandomizer, check_randomizer
from . import wire as reports
from .seeded import SeedReports

__all__ = ["check_compressible", "RATIO_SLACK", "SIMULATION_TRIAL_BYTES", "acceptance_floor", "trials_for",
           "PseudoRandomizer", "compress"]


RATIO_SLACK = 1e-9  # relative rounding allowance before a ratio counts as exceeding e^eps_d
SIMULATION_TRIAL_BYTES = 1 << 24  # the simulated encoder's inputs, seeds, coins per round


def acceptance_floor(eps_d: float) -> float:
    """The least acceptance threshold of a trial: a double at or above e^(-2 eps_d) (exp is
    within an ulp; two ulps up). FT21 Lemma 3.6's deletion 2 eps_d for any PRG needs every
    seed accepted with probability at least e^(-2 eps_d); ratio(x, y)/e^eps_d is that at least,
    but its float may fall an ulp or two below, and the coin j 2^-53 < t accepts with
    probability ceil(t 2^53) 2^-53, which is >= t but can be < e^(-2 eps_d) too. Thresholds are
    raised to this floor, so the realised acceptance is never below e^(-2 eps_d) (the law moves
    by at most 2^-53 per trial, where float rounding alone moves it anyway)."""
    return math.nextafter(math.nextafter(math.exp(-2.0 * eps_d), math.inf), math.inf)


def trials_for(eps_d: float, tv_target: float) -> int:
    """T = ceil(log(tau) / log(1 - e^-eps_d)): (1 - e^-eps_d)^T <= tau.

    Parameters
    ----------
    eps_d : float
        The randomizer's deletion eps w.r.t. its reference law (> 0).
    tv_target : float
        The total variation target tau, in (0, 1).
    """
    return max(1, math.ceil(math.log(tv_target) / math.log1p(-math.exp(-eps_d))))


def check_compressible(randomizer, also: str = "") -> LocalRandomizer:
    """``randomizer`` when it is a LocalRandomizer whose ``compression_refusal()`` is None:
    TypeError (``check_randomizer``) or ValueError naming the randomizer and its reason."""
    randomizer = check_randomizer(randomizer, also)
    refusal = randomizer.compression_refusal()
    if refusal is not None:
        raise ValueError(f"compress() does not take {randomizer.describe()}: {refusal}")
    return randomizer


class PseudoRandomizer(SeedReports):
    """A randomizer that sends 17 bytes (version + seed) instead of its output; the server
    verbs (``seeds``, ``decode_many``, ``summarize``, ``estimate``) are :class:`SeedReports`'.

    Parameters
    ----------
    randomizer : LocalRandomizer
        A randomizer ``compress`` accepts (``compression_refusal()`` is None).
    tv_target : float, default 2^-40
        Total variation distance of the decoded output to the randomizer's law, in (0, 1): it
        sets the cap on trials per report (:func:`trials_for`).
    entropy : Entropy, default os.urandom
        Source of the seeds and coins (seeded sources are for simulations only).
    max_expected_trials : float, optional
        Refuse when the expected trials per report exceed this (default
        ``limits.MAX_EXPECTED_TRIALS`` = 1e4): encoding would take too long.
    hint : str, default ""
        Text appended to the refusal when the expected trials are too many (how to avoid it).
    """

    def __init__(self, randomizer: LocalRandomizer, tv_target: float = 2.0 ** -40,
                 entropy: Entropy = SYSTEM, max_expected_trials: float | None = None,
                 hint: str = ""):
        check_compressible(randomizer)
        self.tv_target = V.probability_open(tv_target, "tv_target")
        if not isinstance(entropy, Entropy):
            raise TypeError(f"entropy must be an ldpcompress Entropy, got {type(entropy).__name__}")
        self.randomizer = self.inner = randomizer
        self.entropy = entropy
        eps_d = randomizer.deletion_eps
        if eps_d is None or not (eps_d > 0 and math.isfinite(eps_d)):
            raise ValueError(f"the randomizer's deletion eps must be finite and > 0, got {eps_d}")
        self.eps_d: float = eps_d
        # e^eps_d expected trials per report (FT21 Alg. 1): refuse before any encode can hang
        check_trials(expected_trials(eps_d), eps_d, max_expected_trials, hint)
        self.max_trials = trials_for(self.eps_d, tv_target)
        self._bound = math.exp(self.eps_d)
        self._floor = acceptance_floor(self.eps_d)
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
        return min(1.0, max(self._floor, r / self._bound))

    def encode(self, x) -> bytes:
        """One compressed report of item x.

        Parameters
        ----------
        x
            One user's input.
        """
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
        """The randomizer's output carried by a report (deterministic).

        Parameters
        ----------
        report : bytes
            One 17-byte report (untrusted: validated).
        """
        return self.randomizer.decode_seed(reports.unpack(report))

    def encode_many(self, xs, progress: bool = False) -> list[bytes]:
        """One compressed report per item; ``progress``: a bar of the reports on stderr.

        Parameters
        ----------
        xs : array_like
            The users' inputs, one per report.
        progress : bool, default False
            Show a bar of the reports on stderr.
        """
        return [self.encode(x) for x in track(xs, "encode", progress, unit="reports")]

    def encode_many_simulated(self, xs, entropy: Entropy) -> np.ndarray:
        """SIMULATION ONLY: one compressed report per input as a (n, 17) uint8 array, by FT21
        Alg. 1 exactly (trial t of input i: a seed and a coin from ``entropy``, accepted when
        coin < min(1, max(floor, ratio / e^eps_d)), floor = ``acceptance_floor(eps_d)``, as
        the client; the first accepted seed of the first T trials, else a fresh one), with the ratios of many trials at once from ``ratios_from_seeds``.

        ``entropy`` must be a seeded simulation source (``Entropy.seeded_for_simulation``):
        its reports give no privacy, and the batch AES kernel may be the table one, whose
        timing leaks the biased rejected seeds; real clients use :meth:`encode_many`.

        Parameters
        ----------
        xs : array_like
            The users' inputs, one per report.
        entropy : Entropy
            A seeded source (``simulation_entropy``): simulation only.
        """
        simulation_only(entropy, "PseudoRandomizer.encode_many_simulated")
        xs = self.randomizer.check_items(xs)
        n = len(xs)
        out = np.empty((n, SEED_BYTES), dtype=np.uint8)
        # trials per pending input and round: each trial accepts w.p. e^-eps_d (E_rho[ratio]
        # = 1, up to the PRG), so a round of e^eps_d / 2 leaves about e^-1/2 of the inputs
        # pending and draws about 25% more trials than the e^eps_d per input needed
        per_round = min(self.max_trials, max(1, math.ceil(self._bound / 2)))
        item_bytes = max(1, xs.nbytes // max(n, 1))
        step = max(1, SIMULATION_TRIAL_BYTES // (per_round * (item_bytes + 32)))
        for span in spans(n, step):
            self._simulate_block(xs[span], out[span], per_round, entropy)
        return reports.pack_rows(out)

    def _simulate_block(self, xs, out, per_round: int, entropy: Entropy) -> None:
        """Alg. 1 for the inputs xs, ``per_round`` trials of every pending input at a time."""
        pending = np.arange(len(xs))
        done = 0
        while pending.size and done < self.max_trials:
            b = min(per_round, self.max_trials - done)
            m = pending.size * b
            seeds = entropy.seed_array(m)
            coins = entropy.uniform(m)
            ratios = np.asarray(self.randomizer.ratios_from_seeds(np.repeat(xs[pending], b,
                                                                            axis=0), seeds))
            if ratios.shape != (m,):
                raise ValueError(f"the randomizer's ratios_from_seeds gave shape {ratios.shape} "
                                 f"for {m} seeds")
            valid = (ratios >= 0) & (ratios <= self._bound * (1.0 + RATIO_SLACK))
            if not valid.all():
                raise ValueError(f"the randomizer's ratio {float(ratios[~valid][0]):.6g} is not "
                                 f"in [0, e^eps_d = {self._bound:.6g}]: its declared deletion "
                                 "eps is wrong")
            accept = (coins < np.minimum(1.0, np.maximum(self._floor, ratios / self._bound))
                      ).reshape(pending.size, b)
            hit = accept.any(axis=1)
            first = accept.argmax(axis=1)
            rows = np.flatnonzero(hit)
            out[pending[rows]] = seeds.reshape(pending.size, b, -1)[rows, first[rows]]
            pending = pending[~hit]
            done += b
        if pending.size:  # every trial rejected: a fresh seed (probability <= tv_target)
            out[pending] = entropy.seed_array(pending.size)

    def __repr__(self) -> str:
        power = math.log2(self.tv_target)
        tv = f"2^{power:.0f}" if power == round(power) else f"{self.tv_target:.3g}"
        return (f"PseudoRandomizer({self.randomizer!r}: {self.bytes_per_report}-byte reports, "
                f"deletion eps_d = {self.eps_d:.6g}, expected trials <= "
                f"{self.expected_trials:.4g}, at most {self.max_trials:,}, TV <= {tv})")


def compress(randomizer: LocalRandomizer, tv_target: float = 2.0 ** -40,
             entropy: Entropy = SYSTEM, max_expected_trials: float | None = None
             ) -> PseudoRandomizer:
    """The pseudo-randomizer of FT21 Alg. 1 for ``randomizer``: reports of 17 bytes (a format
    byte and a 16-byte AES-CTR seed) whose decoded output has the randomizer's law up to total
    variation ``tv_target`` (docs/theory.md §5.2).

    ``compress`` takes a randomizer exactly when ``randomizer.compression_refusal()`` is None:
    it states a reference law with a deterministic sampler (``sample``), the density ratio to
    it (``ratio``) and a finite deletion eps w.r.t. it. Of the shipped randomizers it takes
    KRR, RAPPOR, OUE, SubsetSelection and PrivUnit2 (with K-copy splitting:
    :class:`~ldpcompress.compression.split.CompressedPrivUnit2`), and refuses OLH,
    HadamardResponse, PIRappor and VectorPIRappor (their reports are already shorter than 17
    bytes) and OneBitSphere (no reference law); the refusal says why (docs/guide.md §2).

    Parameters
    ----------
    randomizer : LocalRandomizer
        The randomizer to compress; its privacy is kept (FT21 Lemmas 3.6, 3.7).
    tv_target : float
        Total variation distance to the randomizer's output law, in (0, 1) (default 2^-40):
        it sets the cap on trials per report, ceil(log(tv) / log(1 - e^-eps_d)).
    entropy : Entropy
        Source of the seeds and coins (default: os.urandom; seeded sources are for
        simulations only).
    max_expected_trials : float, optional
        Refuse when the expected trials per report, e^eps_d, exceed this (default
        ``limits.MAX_EXPECTED_TRIALS`` = 1e4): encoding would take too long.

    Returns
    -------
    PseudoRandomizer
        ``encode(x)`` / ``encode_many(xs)`` on the client, ``decode(report)`` on the server.

    Raises
    ------
    TypeError
        ``randomizer`` is not a LocalRandomizer, or ``entropy`` not an Entropy.
    ValueError
        The randomizer is refused (the reason is its ``compression_refusal()``), its declared
        ratios exceed e^eps_d, or the expected trials exceed the limit.

    Examples
    --------
    >>> from ldpcompress import RAPPOR, compress
    >>> pr = compress(RAPPOR(k=64, eps=2.0))
    >>> report = pr.encode(5)
    >>> len(report), pr.decode(report).shape
    (17, (64,))
    """
    return PseudoRandomizer(randomizer, tv_target, entropy, max_expected_trials)
