"""One round of a real heavy-hitter deployment: the candidate list the server broadcasts (with
a digest), a device's report for it, and the round's aggregate, which refuses reports made for
another list (docs/guide.md, "Heavy hitters over unknown domains").

The list is public and untrusted when read back: ``RoundList.from_json`` recomputes the
digest and refuses a list whose stored digest differs (an edited list), naming both.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..randomizers.base import FrequencyOracle
from .prefix import Alphabet, Encoded, candidate_indices, check_shape, children

__all__ = ["RoundList", "RoundAggregate", "first_round", "survivors", "next_round",
           "round_inputs", "encode_words", "aggregate_round"]


@dataclass(frozen=True)
class RoundList:
    """Round ``index`` (1-based) of a tree (alphabet, step, rounds, keep, max_len): its sorted
    candidate codes and the oracle's domain k (the catch-all "other" is index k - 1);
    ``campaign``: the digest of the campaign's plan ("" for a list outside any plan).

    Attributes
    ----------
    alphabet : str
        The alphabet's symbols, or "bytes".
    step : int
        Symbols per round (>= 1).
    rounds : int
        Rounds of the tree (>= index).
    keep : int
        Survivors per round (>= 1).
    max_len : int
        The longest word with a code, in [0, rounds x step - 1].
    index : int
        This round, 1-based.
    k : int
        The oracle's domain: candidates + unused indices + "other" (the last).
    codes : tuple of int
        The sorted candidate prefix codes (at most k - 1).
    campaign : str
        The plan's SHA-256 hex digest, or "".
    """

    alphabet: str
    step: int
    rounds: int
    keep: int
    max_len: int
    index: int
    k: int
    codes: tuple[int, ...]
    campaign: str = ""

    def __post_init__(self):
        alpha = Alphabet(self.alphabet)
        for name in ("step", "rounds", "keep", "index", "k"):
            V.integer_at_least(getattr(self, name), name, 1)
        check_shape(alpha, self.step, self.rounds, self.max_len)
        if self.index > self.rounds:
            raise ValueError(f"index must be in [1, rounds = {self.rounds}], got {self.index}")
        if len(self.codes) > self.k - 1:
            raise ValueError(f"codes: {len(self.codes)} candidates do not fit k - 1 = "
                             f"{self.k - 1} indices")
        if not isinstance(self.campaign, str) or (self.campaign and (
                len(self.campaign) != 64 or set(self.campaign) - set("0123456789abcdef"))):
            raise ValueError(f"campaign must be a plan's SHA-256 hex digest or '', got "
                             f"{str(self.campaign)[:70]!r}")
        bound = alpha.base ** (self.index * self.step)
        if any(isinstance(c, bool) or not isinstance(c, (int, np.integer))
               or not 0 <= c < bound for c in self.codes):  # before int64 could overflow
            raise ValueError(f"codes must be strictly increasing prefix codes in [0, {bound})")
        arr = np.asarray(self.codes, dtype=np.int64)
        if arr.size and np.any(np.diff(arr) <= 0):
            raise ValueError(f"codes must be strictly increasing prefix codes in [0, {bound})")

    @property
    def array(self) -> np.ndarray:
        return np.asarray(self.codes, dtype=np.int64)

    def label(self, position: int) -> str:
        """Candidate ``position``'s prefix as text ("$" marks an ended word), or "(other)".

        Parameters
        ----------
        position : int
            An index of the oracle's domain, in [0, k).
        """
        if position >= len(self.codes):
            return "(other)"
        length = self.index * self.step
        code, base = self.codes[position], Alphabet(self.alphabet).base
        digits = [(code // base ** (length - 1 - i)) % base for i in range(length)]
        return Alphabet(self.alphabet).word(digits) + ("$" if digits[-1] == 0 else "")

    def body(self) -> dict:
        return dict(alphabet=self.alphabet, step=self.step, rounds=self.rounds,
                    keep=self.keep, max_len=self.max_len, index=self.index, k=self.k,
                    codes=list(self.codes), campaign=self.campaign)

    @property
    def digest(self) -> str:
        text = json.dumps(self.body(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> str:
        return json.dumps(dict(self.body(), digest=self.digest))

    @classmethod
    def from_json(cls, text: str) -> "RoundList":
        """The list of its JSON (``to_json``), refused when edited (its stored digest differs
        from its content's, both named) or out of range.

        Parameters
        ----------
        text : str
            The list's JSON.
        """
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as err:  # RecursionError: '[' nested 100,000 deep
            raise ValueError(f"candidate list: not JSON ({type(err).__name__}: "
                             f"{str(err)[:200]})") from None
        if not isinstance(doc, dict) or "digest" not in doc:
            raise ValueError("candidate list: a JSON object with a digest")
        stored = doc.pop("digest")
        want = {"alphabet", "step", "rounds", "keep", "max_len", "index", "k", "codes",
                "campaign"}
        if set(doc) != want:
            raise ValueError(f"candidate list: keys {sorted(doc)}, expected {sorted(want)}")
        if not isinstance(doc["codes"], list) or not all(
                isinstance(c, int) and not isinstance(c, bool) for c in doc["codes"]):
            raise ValueError("candidate list: codes must be a list of integers")
        try:
            rl = cls(**{**doc, "codes": tuple(doc["codes"])})
        except TypeError as err:
            raise ValueError(f"candidate list: {err}") from None
        if rl.digest != stored:
            raise ValueError(f"candidate list: stored digest {str(stored)[:16]}... differs from "
                             f"its content's {rl.digest[:16]}...: the list was edited")
        return rl


def first_round(alphabet: str, step: int, rounds: int, keep: int,
                max_len: int | None = None) -> RoundList:
    alpha = Alphabet(alphabet)
    ml = check_shape(alpha, step, rounds, max_len)
    from .shape import TreeShape
    k = TreeShape.of(alpha, step, rounds, keep, ml).k
    return RoundList(alphabet, step, rounds, keep, ml, 1,
                     k, tuple(int(c) for c in children(np.zeros(1, np.int64), alpha, step,
                                                       root=True)))


def survivors(rl: RoundList, result, level: float | None = None,
              threshold: float = 0.0) -> np.ndarray:
    """The sorted codes of round ``rl``'s surviving candidates: the ``keep`` of largest
    estimate (ties by code) or, with ``level``, those among them whose lower confidence bound
    at ``level`` (estimate - z sqrt(variance), the normal interval) exceeds ``threshold``
    devices (the adaptive threshold). ``result``: a :class:`RoundAggregate` of the list, or
    the round's k estimates (other last; top-keep only). ValueError when no candidate passes.

    Parameters
    ----------
    rl : RoundList
        The round's list.
    result : RoundAggregate or array of float
        The round's aggregate (its list must be ``rl``), or its k estimates.
    level : float or None, optional
        None: top keep; a level in (0, 1): the adaptive threshold.
    threshold : float, optional
        The adaptive threshold in devices (default 0).
    """
    if isinstance(result, RoundAggregate):
        if result.list.digest != rl.digest:
            raise ValueError(f"the aggregate is of candidate list {result.list.digest[:16]}..., "
                             f"not of round {rl.index}'s list {rl.digest[:16]}...")
        est, var = result.estimates, result.variances
    else:
        est, var = np.asarray(result, dtype=float), None
    if est.shape != (rl.k,) or not np.all(np.isfinite(est)):
        raise ValueError(f"estimates must be {rl.k} finite numbers (round {rl.index}'s "
                         f"oracle domain), got shape {est.shape}")
    listed = est[:len(rl.codes)]
    order = np.lexsort((rl.array, -listed))[:rl.keep]
    if level is not None:
        if var is None:
            raise ValueError("an adaptive threshold needs the round's variances: pass its "
                             "RoundAggregate")
        level = V.probability_open(level, "level")
        threshold = V.real(threshold, "threshold")
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be a finite number of devices, got {threshold}")
        z = NormalDist().inv_cdf(0.5 + level / 2)
        low = listed - z * np.sqrt(var[:len(rl.codes)])
        passed = order[low[order] > threshold]
        if passed.size == 0:
            best = float(low.max()) if low.size else float("nan")
            raise ValueError(f"no candidate of round {rl.index} has its {level:g} lower "
                             f"confidence bound above the threshold {threshold:g} devices "
                             f"(the largest lower bound is {best:.4g}): lower the level or "
                             "the threshold, or keep the top candidates")
        order = passed
    return np.sort(rl.array[order])


def next_round(rl: RoundList, result, level: float | None = None,
               threshold: float = 0.0) -> RoundList:
    """Round index + 1's list: the :func:`survivors` of round ``rl`` (top ``keep`` by
    estimate, or with ``level`` the adaptive threshold) extended by every valid block; the
    list keeps the campaign's digest and k (fixed, whatever the survivors: docs/theory.md
    §2.17).

    Parameters
    ----------
    rl : RoundList
        The round's list (not the last round's).
    result : RoundAggregate or array of float
        The round's aggregate, or its k estimates (top keep only).
    level : float or None, optional
        None: top keep; a level in (0, 1): the adaptive threshold.
    threshold : float, optional
        The adaptive threshold in devices (default 0).
    """
    if rl.index >= rl.rounds:
        raise ValueError(f"round {rl.index} is the last of {rl.rounds}")
    parents = survivors(rl, result, level, threshold)
    kids = children(parents, Alphabet(rl.alphabet), rl.step, root=False)
    return RoundList(rl.alphabet, rl.step, rl.rounds, rl.keep, rl.max_len, rl.index + 1, rl.k,
                     tuple(int(c) for c in kids), rl.campaign)


def round_inputs(enc: Encoded, rl: RoundList) -> np.ndarray:
    """Each device's oracle input for round ``rl``: its prefix's candidate index, or k - 1
    ("other") for a prefix not listed or a word without a code (outside the alphabet or
    longer than max_len)."""
    alpha = Alphabet(rl.alphabet)
    if enc.digits.shape[1] != rl.rounds * rl.step:
        raise ValueError(f"words padded to {enc.digits.shape[1]} symbols, the tree has "
                         f"{rl.rounds * rl.step}")
    xs = candidate_indices(enc.prefix_codes(rl.index * rl.step, alpha.base), rl.array)
    return np.where(xs == len(rl.codes), rl.k - 1, xs)  # "other" is the domain's last index


def encode_words(words, rl: RoundList, oracle: FrequencyOracle,
                 entropy: Entropy = SYSTEM) -> tuple[str, object]:
    """(the list's digest, the devices' reports) for round ``rl``: each word mapped to its
    candidate index, a word outside the alphabet, too long or whose prefix is not listed to
    "other", then the oracle's client (coins from ``entropy``: os.urandom by default)."""
    if oracle.k != rl.k:
        raise ValueError(f"oracle: k = {oracle.k}, the list's domain is k = {rl.k}")
    enc = Encoded.of(list(words), Alphabet(rl.alphabet), rl.rounds * rl.step, rl.max_len)
    return rl.digest, oracle.randomize_many(round_inputs(enc, rl), entropy)


def aggregate_round(rl: RoundList, oracle: FrequencyOracle, reports, digest: str) -> np.ndarray:
    """The round's k estimated counts (other last) from its reports, refused when they were
    made for another candidate list (``digest`` differs from the list's, both named)."""
    if not isinstance(digest, str) or digest != rl.digest:
        raise ValueError(f"reports made for candidate list {str(digest)[:16]}... cannot be read "
                         f"against round {rl.index}'s list {rl.digest[:16]}...")
    if oracle.k != rl.k:
        raise ValueError(f"oracle: k = {oracle.k}, the list's domain is k = {rl.k}")
    return np.asarray(oracle.estimate(reports), dtype=float)


@dataclass(frozen=True)
class RoundAggregate:
    """Round ``list.index``'s result: the devices that reported, the k estimated counts among
    them ("other" last) and each estimate's variance at the plug-in count (0 with no report).

    Attributes
    ----------
    list : RoundList
        The round's candidate list.
    reports : int
        Devices that reported in the round (>= 0).
    estimates : numpy.ndarray
        The k estimated counts among the reporting devices.
    variances : numpy.ndarray
        Each estimate's variance (the oracle's formula at the clipped estimate).
    """

    list: RoundList
    reports: int
    estimates: np.ndarray
    variances: np.ndarray

    @classmethod
    def of_summary(cls, rl: RoundList, oracle: FrequencyOracle, summary,
                   reports: int) -> "RoundAggregate":
        """The estimates and variances of a round from its reports' summary (the oracle's
        ``estimate_from_summary``), in memory or from a report set alike.

        Parameters
        ----------
        rl : RoundList
            The round's list.
        oracle : FrequencyOracle
            The round's oracle (on the list's k).
        summary : array
            The oracle's summary of the round's reports (ignored with no report).
        reports : int
            How many reports the summary holds (>= 0).
        """
        if oracle.k != rl.k:
            raise ValueError(f"oracle: k = {oracle.k}, the list's domain is k = {rl.k}")
        m = V.integer_at_least(reports, "reports", 0)
        est = np.asarray(oracle.estimate_from_summary(summary, m), dtype=float) if m \
            else np.zeros(rl.k)
        var = np.asarray(oracle.variance(max(m, 1), np.clip(est, 0, m)), dtype=float) * (m > 0)
        return cls(rl, m, est, np.broadcast_to(var, est.shape).copy())

    @property
    def index(self) -> int:
        return self.list.index

    @property
    def candidates(self) -> np.ndarray:
        return self.list.array

    def body(self) -> dict:
        return dict(list=dict(self.list.body(), digest=self.list.digest), reports=self.reports,
                    estimates=[float(x) for x in self.estimates],
                    variances=[float(x) for x in self.variances])

    @property
    def digest(self) -> str:
        text = json.dumps(self.body(), sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> str:
        return json.dumps(dict(self.body(), digest=self.digest), allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes, source: str = "aggregate") -> "RoundAggregate":
        """A round's aggregate from its JSON, checked: its digest, its list (and the list's
        digest), k finite estimates and k finite variances >= 0.

        Parameters
        ----------
        text : str or bytes
            The aggregate's JSON (``to_json``).
        source : str, optional
            What errors name (e.g. the file).
        """
        try:
            doc = json.loads(text)
        except (ValueError, UnicodeDecodeError, RecursionError) as err:
            raise ValueError(f"{source}: not JSON ({type(err).__name__}: "
                             f"{str(err)[:200]})") from None
        want = {"list", "reports", "estimates", "variances", "digest"}
        if not isinstance(doc, dict) or set(doc) != want:
            raise ValueError(f"{source}: a round aggregate is a JSON object with keys "
                             f"{sorted(want)}")
        stored = doc.pop("digest")
        try:
            rl = RoundList.from_json(json.dumps(doc["list"]))
            m = V.integer_at_least(doc["reports"], "reports", 0)
            est = np.asarray(doc["estimates"], dtype=float)
            var = np.asarray(doc["variances"], dtype=float)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{source}: {err}") from None
        if est.shape != (rl.k,) or var.shape != (rl.k,) or not np.all(np.isfinite(est)) \
                or not np.all(np.isfinite(var)) or np.any(var < 0):
            raise ValueError(f"{source}: estimates and variances must be {rl.k} finite numbers "
                             "each (variances >= 0)")
        out = cls(rl, m, est, var)
        if out.digest != stored:
            raise ValueError(f"{source}: stored digest {str(stored)[:16]}... differs from its "
                             f"content's {out.digest[:16]}...: the aggregate was edited")
        return out
