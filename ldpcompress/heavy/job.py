"""The heavy-hitter job: a shuffled prefix tree that finds the frequent words of a domain nobody
listed (docs/guide.md, "Heavy hitters over unknown domains"; docs/theory.md §2.17).

Round j asks each participating device for its next ``step`` symbols among the candidates the
server broadcast: the survivors of round j - 1 extended by every valid block (a prefix that
ended with the terminator only by terminators), plus the catch-all "other" (the last index).
Every round runs one frequency oracle on k = keep x blocks + 1 indices, chosen with its
assignment by :func:`~ldpcompress.heavy.accounting.plan_rounds`. The ``keep`` candidates of
largest estimate survive; the last round's terminated candidates are the words, ranked by
their estimate combined (inverse-variance) over every round that held the word's terminated
prefix.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from pathlib import Path
from typing import Sequence

import numpy as np

from ..core import display as D
from ..core import validate as V
from ..core.entropy import Entropy, simulation_only
from ..core.progress import compute_time
from .accounting import ASSIGNMENTS, RoundsPlan, per_round_assignments, plan_rounds
from .campaign import Campaign
from .prefix import Alphabet, Encoded
from .rounds import RoundAggregate, next_round, round_inputs
from .shape import TreeShape

DRAWS = ("reports", "counts")

__all__ = ["DRAWS", "Word", "RoundRecord", "HeavyResult", "TreeShape", "simulate",
           "rank_words"]


@dataclass(frozen=True)
class Word:
    """One word found, with its estimated count among the n devices and its interval.

    Attributes
    ----------
    word : str
        The word (terminators dropped).
    estimate : float
        Its estimated count among the n devices (inverse-variance combination over rounds).
    low : float
        Lower end of the normal interval at the result's ``level`` (may be < 0).
    high : float
        Upper end of that interval.
    """

    word: str
    estimate: float
    low: float
    high: float

    def as_dict(self) -> dict:
        return dict(word=self.word, estimate=self.estimate, low=self.low, high=self.high)


@dataclass(frozen=True)
class RoundRecord:
    """One round: its candidates (codes), devices that reported, estimated counts among them
    (the "other" index last), their variance at the plug-in count, and seconds (clients,
    server).

    Attributes
    ----------
    index : int
        The round's number, 1-based.
    candidates : numpy.ndarray
        The round's sorted int64 candidate prefix codes (without "other").
    reports : int
        Devices that reported in this round (>= 0).
    estimates : numpy.ndarray
        Estimated counts among the reporting devices, length k (the "other" index last).
    variances : numpy.ndarray
        Each estimate's variance at the plug-in count (0 when no device reported).
    unknown : int
        Reporting devices whose true index was "other" (prefix not listed or unknown word).
    client_seconds : float
        Compute seconds of the clients' randomization (counts draw: of the support counts).
    server_seconds : float
        Compute seconds of the server's summary and estimates.
    """

    index: int
    candidates: np.ndarray
    reports: int
    estimates: np.ndarray
    variances: np.ndarray
    unknown: int
    client_seconds: float
    server_seconds: float


@dataclass(frozen=True)
class HeavyResult:
    """The words found, in order, with estimates of their count among the n devices and
    intervals at ``level``; the certified accounting; the rounds; the truth in simulation.

    Attributes
    ----------
    words : tuple of Word
        The words found, by decreasing estimate (at most ``top``).
    n : int
        Devices in the campaign.
    plan : RoundsPlan
        The certified accounting of the deployed assignment.
    shape : TreeShape
        The tree's public shape.
    rounds : tuple of RoundRecord
        One record per round, in order.
    level : float
        Confidence level of the words' intervals, in (0, 1).
    unknown : int
        Devices whose word has no code (a symbol outside the alphabet or longer than max_len).
    truth : dict
        Simulation only: word -> its true count among the n devices ({} otherwise).
    seconds : float
        Compute seconds of the whole campaign.
    eps0 : tuple of float
        Each round's oracle eps (equal unless per-round eps0 was asked for).
    """

    words: tuple[Word, ...]
    n: int
    plan: RoundsPlan
    shape: TreeShape
    rounds: tuple[RoundRecord, ...]
    level: float
    unknown: int
    truth: dict = field(default_factory=dict)
    seconds: float = 0.0
    eps0: tuple[float, ...] = ()

    def as_dict(self) -> dict:
        return dict(words=[w.as_dict() for w in self.words], n=self.n, level=self.level,
                    accounting=self.plan.as_dict(), unknown_devices=self.unknown,
                    k=self.shape.k, rounds=[dict(round=r.index, candidates=len(r.candidates),
                                                  reports=r.reports,
                                                  client_seconds=r.client_seconds,
                                                  server_seconds=r.server_seconds)
                                             for r in self.rounds],
                    seconds=self.seconds, eps0=list(self.eps0))

    def recall(self, top: int) -> float:
        """Fraction of the true top ``top`` words (simulation) among the first ``top`` found.

        Parameters
        ----------
        top : int
            How many of the true and of the found words to compare (>= 1).
        """
        if not self.truth:
            raise ValueError("recall needs the truth: a simulated campaign")
        true = sorted(self.truth, key=lambda w: (-self.truth[w], w))[:top]
        found = {w.word for w in self.words[:top]}
        return sum(w in found for w in true) / max(len(true), 1)

    def rows(self) -> list[list[str]]:
        head = ["rank", "word", "estimate", "low", "high"] + (["true"] if self.truth else [])
        out = [head]
        for i, w in enumerate(self.words, 1):
            row = [str(i), w.word, f"{w.estimate:,.0f}", f"{w.low:,.0f}", f"{w.high:,.0f}"]
            if self.truth:
                row.append(f"{self.truth.get(w.word, 0):,}")
            out.append(row)
        return out

    def to_frame(self):
        from ..core.optional import require
        pd = require("pandas", "pandas")
        return pd.DataFrame([dict(word=w.word, estimate=w.estimate, low=w.low, high=w.high,
                               **({"true": self.truth.get(w.word, 0)} if self.truth else {}))
                          for w in self.words])

    def __repr__(self) -> str:
        p = self.plan
        return (f"HeavyResult({len(self.words)} words, n={self.n:,}, {p.assignment}, "
                f"{p.oracle.describe()}, central eps <= {p.upper:.4g} at delta {p.delta:g})")

    def _repr_html_(self) -> str:
        rows = self.rows()
        return D.html_table(repr(self), rows[0], rows[1:],
                            [f"neighbouring relation: {self.plan.relation}"])


def _device_rounds(n: int, rounds: int, assignment: str, rng: np.random.Generator) -> np.ndarray:
    """Each device's round (0-based), or -1 for none: simulation of the assignment."""
    if assignment == "groups":
        groups = np.full(n, -1, dtype=np.int64)
        per = n // rounds
        order = rng.permutation(n)  # simulation: public groups drawn at random
        for j in range(rounds):
            groups[order[j * per:(j + 1) * per]] = j
        return groups
    if assignment == "allocation":
        return rng.integers(0, rounds, n)  # simulation: the secretly chosen round
    raise AssertionError(assignment)


def simulate(counts: dict[str, float] | Sequence[tuple[str, float]], n: int, eps: float,
             delta: float, *, top: int = 20, rounds: int = 6, step: int = 2,
             keep: int | None = None, alphabet: Alphabet | str | None = None,
             max_len: int | None = None, oracles: Sequence[str] | None = None,
             assignments: Sequence[str] = ASSIGNMENTS, level: float = 0.95,
             entropy: Entropy | None = None, seed: int = 0,
             plan: RoundsPlan | None = None, draw: str = "reports",
             threshold_level: float | None = None, threshold: float = 0.0,
             report_sets: str | os.PathLike | None = None,
             eps0_weights: Sequence[float] | None = None) -> HeavyResult:
    """Simulate a campaign end to end: n devices drawn from ``counts`` (word -> weight), each
    round's clients (the oracle's batch encoder on a seeded simulation source), shuffle (the
    reports are summarised as a multiset), server and survivors, and the certified accounting.
    ``keep``: survivors per round (default max(2 top, 20)). ``plan``: a RoundsPlan to reuse
    (its n, rounds, k must match). ``draw``: "reports" (every device's report from the
    oracle's batch encoder, then the server's summary) or "counts" (each candidate's support
    count drawn from its exact marginal law Bin(c, a1) + Bin(m - c, a0): the same estimate
    law per candidate, without the reports; the candidates' counts drawn independently).

    Parameters
    ----------
    counts : dict of str to float, or sequence of (str, float)
        The population: distinct words -> weights (finite, >= 0, not all 0; non-empty).
    n : int
        Devices, drawn multinomially from the weights (a valid shuffle user count).
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target, in (0, 1).
    top : int, optional
        Words returned, in [1, 10**5] (default 20).
    rounds : int, optional
        Rounds of the tree, in [1, 64] (default 6).
    step : int, optional
        Symbols asked per round, in [1, 8] (default 2).
    keep : int or None, optional
        Survivors per round, in [1, 10**5]; None: max(2 top, 20).
    alphabet : Alphabet, str or None, optional
        The public alphabet, or its symbols string, or "bytes"; None: lower-case a-z and "'".
    max_len : int or None, optional
        The longest word with a code, in [0, rounds x step - 1]; None: rounds x step - 1.
    oracles : sequence of str or None, optional
        Registered frequency-oracle names to plan with; None: every registered one.
    assignments : sequence of str, optional
        Subset of ("groups", "poisson", "allocation") to certify; default all three.
    level : float, optional
        Confidence level of the words' intervals, in (0, 1) (default 0.95).
    entropy : Entropy or None, optional
        A simulation-only randomness source for the clients; None: seeded from ``seed``.
    seed : int, optional
        Seed of the simulation's population, assignment and (default) client source.
    plan : RoundsPlan or None, optional
        A plan to reuse (its n, rounds, k must match); None: :func:`plan_rounds` is run.
    draw : {"reports", "counts"}, optional
        Simulate every device's report, or each candidate's support count (default
        "reports").
    threshold_level : float or None, optional
        None: the ``keep`` candidates of largest estimate survive each round; a level in
        (0, 1): only those among them whose lower confidence bound at that level exceeds
        ``threshold`` (the adaptive threshold; :func:`~ldpcompress.heavy.rounds.survivors`).
    threshold : float, optional
        The adaptive threshold in devices (default 0).
    report_sets : path or None, optional
        A directory: each round's reports are written there as a report set
        (``round-01``, ..., replaced if present) and read back through scale's aggregation,
        the deployment's path; None: summarised in memory.
    eps0_weights : sequence of float or None, optional
        Per-round eps0 proportional to these weights, the largest the composed bound certifies
        (``Campaign.of``; groups or poisson); the upper and lower bounds of the result's
        plan are then the per-round ledger's, and its ``eps0`` lists each round's. None: a
        common eps0.
    """
    if draw not in DRAWS:
        raise ValueError(f"draw must be one of {DRAWS}, got {draw!r}")
    start = compute_time()
    n = V.shuffle_users(n)
    top = V.integer_at_least(top, "top", 1, 10 ** 5)
    keep = max(2 * top, 20) if keep is None else keep
    alpha = alphabet if isinstance(alphabet, Alphabet) else (
        Alphabet() if alphabet is None else Alphabet(alphabet))
    shape = TreeShape.of(alpha, step, rounds, keep, max_len)
    level = V.probability_open(level, "level")
    items = list(counts.items()) if isinstance(counts, dict) else list(counts)
    if not items:
        raise ValueError("counts: give at least one (word, count) row")
    words = [w for w, _ in items]
    weights = np.asarray([c for _, c in items], dtype=float)
    if not np.all(np.isfinite(weights)) or weights.min() < 0 or weights.sum() <= 0:
        raise ValueError("counts: weights must be finite, >= 0 and not all 0")
    if len(set(words)) != len(words):
        raise ValueError("counts: a word appears twice")
    ent = simulation_only(entropy if entropy is not None else
                          Entropy.seeded_for_simulation(seed), "heavy.simulate")
    rng = np.random.default_rng(seed)  # simulation: the population and the assignment
    drawn = rng.multinomial(n, weights / weights.sum())
    truth = {w: int(c) for w, c in zip(words, drawn) if c}
    if plan is None:
        if eps0_weights is not None:
            assignments = per_round_assignments(assignments)
        plan = plan_rounds(n, shape.rounds, shape.k, eps, delta, oracles=oracles,
                           assignments=assignments)
    elif (plan.n, plan.rounds, plan.k) != (n, shape.rounds, shape.k):
        raise ValueError(f"plan: made for (n, rounds, k) = {(plan.n, plan.rounds, plan.k)}, "
                         f"this campaign is {(n, shape.rounds, shape.k)}")
    enc = Encoded.of(words, alpha, shape.rounds * shape.step, shape.max_len)
    device_word = np.repeat(np.arange(len(words)), drawn)
    unknown = int(drawn[~enc.known].sum())
    if plan.assignment == "poisson":
        member = None
    else:
        member = _device_rounds(n, shape.rounds, plan.assignment, rng)
    campaign = Campaign.of(plan, shape, eps0_weights)
    if eps0_weights is not None:  # the per-round ledger's bounds replace the common plan's
        plan = replace(plan, upper=campaign.upper, lower=campaign.lower)
    records: list[RoundRecord] = []
    rl = campaign.first_list()
    for j in range(shape.rounds):
        t0 = compute_time()
        oracle = campaign.oracle(j + 1)
        if member is None:
            here = device_word[rng.random(n) < 1.0 / shape.rounds]  # simulation: Poisson 1/T
        else:
            here = device_word[member == j]
        xs = round_inputs(enc, rl)[here]
        m = len(xs)
        if draw == "counts":  # each support count from its exact marginal law (simulation)
            true = np.bincount(xs, minlength=oracle.k)
            summary = rng.binomial(true, oracle.a1) + rng.binomial(m - true, oracle.a0)
            t1 = compute_time()
            agg = RoundAggregate.of_summary(rl, oracle, summary, m)
        elif report_sets is not None and m:  # the deployment's path: a report set per round
            from .round_sets import read_round_set, write_round_inputs
            out = Path(report_sets) / f"round-{j + 1:02d}"
            write_round_inputs(xs, campaign, rl, out, entropy=ent, overwrite=True)
            t1 = compute_time()
            agg = read_round_set(out, campaign, rl)
        else:
            reports = oracle.randomize_many(xs, ent)
            t1 = compute_time()
            agg = RoundAggregate.of_summary(rl, oracle, oracle.summarize(reports), m)
        t2 = compute_time()
        records.append(RoundRecord(j + 1, rl.array, m, agg.estimates, agg.variances,
                                   int((xs == oracle.k - 1).sum()), t1 - t0, t2 - t1))
        if j + 1 < shape.rounds:
            rl = next_round(rl, agg, threshold_level, threshold)
    found = rank_words(records, shape, n, level, top)
    return HeavyResult(tuple(found), n, plan, shape, tuple(records), level, unknown, truth,
                       compute_time() - start, tuple(float(o.eps) for o in campaign.oracles))


def rank_words(records: Sequence, shape: TreeShape, n: int, level: float = 0.95,
               top: int = 20) -> list[Word]:
    """The last round's terminated candidates, each estimate (of the count among n) combined
    by inverse variance over the rounds that listed the word's terminated prefix, by
    decreasing estimate (at most ``top``).

    Parameters
    ----------
    records : sequence of RoundRecord or RoundAggregate
        Every round in order (index, candidates, reports, estimates, variances).
    shape : TreeShape
        The tree's public shape.
    n : int
        Devices in the campaign (the estimates are scaled from frequencies to counts among n).
    level : float, optional
        Confidence level of the intervals, in (0, 1) (default 0.95).
    top : int, optional
        Words returned (default 20).
    """
    if [r.index for r in records] != list(range(1, shape.rounds + 1)):
        raise ValueError(f"give the aggregates of rounds 1 to {shape.rounds} in order, got "
                         f"rounds {[r.index for r in records]}")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    last = records[-1]
    base, step, T = shape.alphabet.base, shape.step, shape.rounds
    out = []
    for idx, code in enumerate(last.candidates):
        digits = [(int(code) // base ** (T * step - 1 - i)) % base for i in range(T * step)]
        if digits[-1] != 0:
            continue  # not terminated: a longer word (the clients map those to "other")
        length = next(i for i, d in enumerate(digits + [0]) if d == 0)
        num = den = 0.0
        for r in records[length // step:]:
            if r.reports == 0:
                continue
            c = int(code) // base ** ((T - r.index) * step)
            pos = int(np.searchsorted(r.candidates, c))
            if pos >= len(r.candidates) or r.candidates[pos] != c:
                continue
            f = r.estimates[pos] / r.reports
            v = max(float(r.variances[pos]), 1e-300) / r.reports ** 2
            num += f / v
            den += 1.0 / v
        if den == 0.0:
            continue
        f = num / den
        half = z * math.sqrt(1.0 / den)
        out.append(Word(shape.alphabet.word(digits), f * n, (f - half) * n, (f + half) * n))
    out.sort(key=lambda w: (-w.estimate, w.word))
    return out[:top]

