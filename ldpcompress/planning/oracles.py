"""Which frequency oracle to deploy: every registered one at the largest eps0 its own shuffled
bound certifies, ranked by the error it buys (docs/guide.md, "Planning a campaign").

For k items, n users and a central (eps, delta): each oracle of ``catalog.oracle_names()`` (a
registered plug-in included; nothing here knows an oracle by name) gets its parameter from
``inverse.max_eps0`` (its realised law's own bound, plateaus walked), then its error from its
own variance (planning/error.py), its wire size and the measured time its server takes to
summarise n reports. The searches share one memo of certifications keyed by the shuffled law
(``blanket.law_key``): oracles with equal laws (k-RR and subset selection with d = 1) cost one.

With ``rounds`` T > 1 the users are spread over T shuffled rounds: by random allocation (each
user reports once, in a secretly chosen round: as private as one round of all n users,
docs/theory.md §2.16) or public groups (n // T users per round, parallel composition); the
error is then that of one round's estimates (n / T reports).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..accounting import inverse
from ..core import display as D
from ..core import validate as V
from ..core.entropy import simulation_entropy
from ..core.limits import MAX_EXPECTED_TRIALS, expected_trials
from ..core.progress import compute_time
from ..randomizers.base import FrequencyOracle
from ..randomizers.catalog import make_oracle, oracle_names
from .error import ErrorFigure, estimate_error

__all__ = ["ONE_ROUND", "RANK_BY", "COMPRESSED_BITS", "OracleChoice", "OracleRanking",
           "best_oracle", "one_round_users", "rank_oracles"]

ONE_ROUND = ("allocation", "groups")  # assignments whose campaign is one shuffled round
RANK_BY = ("variance", "mse")
COMPRESSED_BITS = 8 * 17  # an FT21 seed report: one byte of header and a 16-byte seed
SERVER_SAMPLE_BITS = 4 * 10 ** 6  # simulated report bits summarised to time a server


@dataclass(frozen=True)
class OracleChoice:
    """One oracle at its certified parameter ``eps0``: its ``error`` (of one round's
    estimates), wire size, compressed size (None: compression does not apply at this eps0, or
    is not shorter), ``server_seconds`` (measured: summarising n reports, extrapolated from a
    simulated sample; None when not measured) and the seconds its search took.

    Attributes
    ----------
    name : str
        The oracle's registry name.
    oracle : FrequencyOracle
        The oracle at eps0.
    eps0 : float
        Its certified parameter.
    error : ErrorFigure
        The error of one round's estimates.
    bits_per_report : int
        Its wire size.
    compressed_bits : int or None
        The compressed report's size (None: compression does not apply or is not shorter).
    server_seconds : float or None
        Measured summarising time for n reports (None: not measured).
    search_seconds : float
        The time its eps0 search took.
    """

    name: str
    oracle: FrequencyOracle
    eps0: float
    error: ErrorFigure
    bits_per_report: int
    compressed_bits: int | None
    server_seconds: float | None
    search_seconds: float

    def as_dict(self) -> dict:
        return dict(name=self.name, oracle=self.oracle.describe(), eps0=self.eps0,
                    variance=self.error.variance, se=self.error.se, mse=self.error.mse,
                    reports=self.error.reports, bits_per_report=self.bits_per_report,
                    compressed_bits=self.compressed_bits, server_seconds=self.server_seconds,
                    search_seconds=self.search_seconds)


@dataclass(frozen=True)
class OracleRanking:
    """The oracles ranked by ``by`` (smallest first); ``skipped``: oracle name -> why it has
    no row (no parameter certified, or it failed), never left out silently.

    Attributes
    ----------
    k : int
        Domain size.
    n : int
        Users.
    eps : float
        The central eps target.
    delta : float
        The central delta target.
    rounds : int
        Shuffled rounds the users are spread over.
    assignment : str
        How users are spread over the rounds.
    by : str
        The ranking's error ("variance" or "mse").
    choices : tuple of OracleChoice
        The oracles, best first.
    skipped : dict
        Oracle name -> why it has no row.
    seconds : float
        The ranking's computation time.
    """

    k: int
    n: int
    eps: float
    delta: float
    rounds: int
    assignment: str
    by: str
    choices: tuple[OracleChoice, ...]
    skipped: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def best(self) -> OracleChoice:
        if not self.choices:
            raise ValueError(f"no frequency oracle is certified for ({self.eps}, "
                             f"{self.delta})-DP: {self.skipped}")
        return self.choices[0]

    def as_dict(self) -> dict:
        return dict(k=self.k, n=self.n, eps=self.eps, delta=self.delta, rounds=self.rounds,
                    assignment=self.assignment, by=self.by,
                    best=self.choices[0].name if self.choices else None,
                    choices=[c.as_dict() for c in self.choices], skipped=dict(self.skipped),
                    seconds=self.seconds)

    def rows(self) -> list[list[str]]:
        """The table as text cells (header first)."""
        out = [["rank", "oracle", "eps0", "SE(count)", "MSE(hist)", "bits", "compressed",
                "server s", "search s"]]
        for i, c in enumerate(self.choices, 1):
            out.append([str(i), c.oracle.describe(), f"{c.eps0:.4f}", f"{c.error.se:.4g}",
                        f"{c.error.mse:.4g}", str(c.bits_per_report),
                        "-" if c.compressed_bits is None else str(c.compressed_bits),
                        "-" if c.server_seconds is None else f"{c.server_seconds:.3g}",
                        f"{c.search_seconds:.2f}"])
        return out

    def __repr__(self) -> str:
        head = (f"OracleRanking(k={self.k}, n={self.n}, eps={self.eps:g}, delta={self.delta:g}, "
                f"rounds={self.rounds}, by={self.by!r}): best {self.best.name}" if self.choices
                else "OracleRanking(): no oracle certified")
        return head

    def _repr_html_(self) -> str:
        rows = self.rows()
        return D.html_table(repr(self), rows[0], rows[1:])


def one_round_users(n: int, rounds: int, assignment: str) -> tuple[int, float]:
    """(users of the one shuffled round the campaign is accounted as, reports per round):
    random allocation, (n, n / T); public groups, (n // T, n // T): the smallest group."""
    if assignment == "allocation":
        return n, n / rounds
    if assignment == "groups":
        if n // rounds < 1:
            raise ValueError(f"rounds: {rounds} public groups of n = {n} users leave a group "
                             "empty: need rounds <= n")
        return n // rounds, float(n // rounds)
    raise ValueError(f"assignment must be one of {ONE_ROUND}, got {assignment!r}")


def compressed_bits(oracle: FrequencyOracle) -> int | None:
    """The seed report's size where FT21 compression applies to ``oracle`` (its contract says
    so and its expected trials e^eps_d are within the default limit) and is shorter; else None.
    Compressed reports are accounted as their own randomizer (deletion 2 eps_d), not at eps0."""
    if oracle.compression_refusal() is not None or oracle.deletion_eps is None:
        return None
    if expected_trials(float(oracle.deletion_eps)) > MAX_EXPECTED_TRIALS:
        return None
    return COMPRESSED_BITS if COMPRESSED_BITS < oracle.bits_per_report else None


def server_seconds(oracle: FrequencyOracle, n: int, seed: int = 0) -> float:
    """Seconds to summarise n reports, measured: a simulated sample (at most
    ``SERVER_SAMPLE_BITS`` report bits, 200 to 20,000 reports; seeded coins, simulation only)
    is summarised once to load its kernels, then timed, and scaled to n (summaries add)."""
    m = int(min(20_000, max(200, SERVER_SAMPLE_BITS // max(oracle.bits_per_report, 1))))
    xs = np.arange(m, dtype=np.int64) % oracle.k
    reports = oracle.randomize_many(xs, simulation_entropy(seed))  # simulation: timing only
    oracle.summarize(reports[:8] if isinstance(reports, np.ndarray) else reports)
    t = compute_time()
    oracle.summarize(reports)
    return (compute_time() - t) * n / m


def rank_oracles(factories: dict[str, Callable[[float], FrequencyOracle]], users: int,
                 reports: float, eps: float, delta: float, *, by: str = "variance",
                 time_server: int | None = None, memo: dict | None = None
                 ) -> tuple[list[OracleChoice], dict]:
    """Each factory (name -> parameter -> oracle) at its largest certified parameter for one
    shuffled round of ``users`` (inverse.max_eps0), its error at ``reports`` reports per round;
    sorted by ``by``. ``time_server``: n to time the server for (None: not timed). Returns
    (choices, skipped)."""
    if by not in RANK_BY:
        raise ValueError(f"by must be one of {RANK_BY}, got {by!r}")
    memo = {} if memo is None else memo
    choices, skipped = [], {}
    for name, factory in factories.items():
        t = compute_time()
        try:
            e0 = inverse.max_eps0(users, eps, delta, factory, memo=memo)
            oracle = factory(e0)
        except ValueError as err:
            skipped[name] = str(err)
            continue
        err_fig = estimate_error(oracle, reports)
        secs = compute_time() - t
        served = None if time_server is None else server_seconds(oracle, time_server)
        choices.append(OracleChoice(name, oracle, e0, err_fig, int(oracle.bits_per_report),
                                    compressed_bits(oracle), served, secs))
    # equal errors to 9 digits (equal laws, e.g. k-RR and subset selection with d = 1, found
    # by searches a few 1e-10 apart) rank by wire size, then name: the same order every run
    choices.sort(key=lambda c: (float(f"{getattr(c.error, by):.9g}"), c.bits_per_report,
                                c.name))
    return choices, skipped


def best_oracle(k, n, eps, delta, *, rounds=1, assignment: str = "allocation",
                by: str = "variance", names: Sequence[str] | None = None,
                server_time: bool = True, memo: dict | None = None) -> OracleRanking:
    """Every registered frequency oracle on k items (or those of ``names``) at the largest
    eps0 its own shuffled bound certifies for a central (eps, delta) over n users, ranked by
    ``by``: "variance" of one count at true count 0 (the rare items), or "mse" of the whole
    histogram, of one round's estimates (module docstring for ``rounds`` and ``assignment``).
    ``server_time``: measure each server's summarising time (simulated reports); ``memo``: a
    dict of certifications to share with other searches (inverse.max_eps0).

    Parameters
    ----------
    k : int
        Domain size (k >= 2).
    n : int
        Users.
    eps : float
        The central eps target (> 0).
    delta : float
        The central delta target, in (0, 1).
    rounds : int, default 1
        Shuffled rounds T the users are spread over (1 to n).
    assignment : {"allocation", "groups"}, default "allocation"
        How users are spread over the rounds (module docstring).
    by : {"variance", "mse"}, default "variance"
        The ranking's error (see above).
    names : sequence of str, optional
        Registered oracle names to rank (default: every registered frequency oracle).
    server_time : bool, default True
        Measure each server's summarising time on simulated reports.
    memo : dict, optional
        Certifications shared with other searches (``inverse.max_eps0``).
    """
    start = compute_time()
    k = V.domain_size(k)
    n = V.shuffle_users(n)
    eps = V.positive_finite(eps, "eps")
    delta = V.probability_open(delta, "delta")
    rounds = V.integer_at_least(rounds, "rounds", 1, n)
    users, reports = one_round_users(n, rounds, assignment)
    if by not in RANK_BY:
        raise ValueError(f"by must be one of {RANK_BY}, got {by!r}")
    known = oracle_names()
    chosen = known if names is None else list(names)
    for name in chosen:
        if name not in known:
            raise ValueError(f"names: {name!r} is not a registered frequency oracle built from "
                             f"(k, eps); they are: {', '.join(known)}")
    factories = {name: _factory(name, k) for name in chosen}
    choices, skipped = rank_oracles(factories, users, reports, eps, delta, by=by,
                                    time_server=n if server_time else None, memo=memo)
    return OracleRanking(k, n, eps, delta, rounds, assignment, by, tuple(choices), skipped,
                         compute_time() - start)


def _factory(name: str, k: int) -> Callable[[float], FrequencyOracle]:
    return functools.partial(make_oracle, name, k)
