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

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..randomizers.base import FrequencyOracle
from .prefix import Alphabet, Encoded, candidate_indices, check_shape, children

__all__ = ["RoundList", "first_round", "next_round", "encode_words", "aggregate_round"]


@dataclass(frozen=True)
class RoundList:
    """Round ``index`` (1-based) of a tree (alphabet, step, rounds, keep, max_len): its sorted
    candidate codes and the oracle's domain k (the catch-all "other" is index k - 1)."""

    alphabet: str
    step: int
    rounds: int
    keep: int
    max_len: int
    index: int
    k: int
    codes: tuple[int, ...]

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
        arr = np.asarray(self.codes, dtype=np.int64)
        bound = alpha.base ** (self.index * self.step)
        if arr.size and (np.any(np.diff(arr) <= 0) or arr[0] < 0 or arr[-1] >= bound):
            raise ValueError(f"codes must be strictly increasing prefix codes in [0, {bound})")

    @property
    def array(self) -> np.ndarray:
        return np.asarray(self.codes, dtype=np.int64)

    def body(self) -> dict:
        return dict(alphabet=self.alphabet, step=self.step, rounds=self.rounds,
                    keep=self.keep, max_len=self.max_len, index=self.index, k=self.k,
                    codes=list(self.codes))

    @property
    def digest(self) -> str:
        text = json.dumps(self.body(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> str:
        return json.dumps(dict(self.body(), digest=self.digest))

    @classmethod
    def from_json(cls, text: str) -> "RoundList":
        try:
            doc = json.loads(text)
        except ValueError as err:
            raise ValueError(f"candidate list: not JSON ({err})") from None
        if not isinstance(doc, dict) or "digest" not in doc:
            raise ValueError("candidate list: a JSON object with a digest")
        stored = doc.pop("digest")
        want = {"alphabet", "step", "rounds", "keep", "max_len", "index", "k", "codes"}
        if set(doc) != want:
            raise ValueError(f"candidate list: keys {sorted(doc)}, expected {sorted(want)}")
        if not isinstance(doc["codes"], list) or not all(
                isinstance(c, int) and not isinstance(c, bool) for c in doc["codes"]):
            raise ValueError("candidate list: codes must be a list of integers")
        rl = cls(**{**doc, "codes": tuple(doc["codes"])})
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


def next_round(rl: RoundList, estimates) -> RoundList:
    """Round index + 1's list: the ``keep`` candidates of largest estimate (ties by code)
    extended by every valid block. ``estimates``: the round's k estimates (other last)."""
    est = np.asarray(estimates, dtype=float)
    if est.shape != (rl.k,) or not np.all(np.isfinite(est)):
        raise ValueError(f"estimates must be {rl.k} finite numbers (round {rl.index}'s "
                         f"oracle domain), got shape {est.shape}")
    if rl.index >= rl.rounds:
        raise ValueError(f"round {rl.index} is the last of {rl.rounds}")
    listed = est[:len(rl.codes)]
    order = np.lexsort((rl.array, -listed))[:rl.keep]
    kids = children(np.sort(rl.array[order]), Alphabet(rl.alphabet), rl.step, root=False)
    return RoundList(rl.alphabet, rl.step, rl.rounds, rl.keep, rl.max_len, rl.index + 1, rl.k,
                     tuple(int(c) for c in kids))


def encode_words(words, rl: RoundList, oracle: FrequencyOracle,
                 entropy: Entropy = SYSTEM) -> tuple[str, object]:
    """(the list's digest, the devices' reports) for round ``rl``: each word mapped to its
    candidate index, a word outside the alphabet, too long or whose prefix is not listed to
    "other", then the oracle's client (coins from ``entropy``: os.urandom by default)."""
    if oracle.k != rl.k:
        raise ValueError(f"oracle: k = {oracle.k}, the list's domain is k = {rl.k}")
    alpha = Alphabet(rl.alphabet)
    enc = Encoded.of(list(words), alpha, rl.rounds * rl.step, rl.max_len)
    xs = candidate_indices(enc.prefix_codes(rl.index * rl.step, alpha.base), rl.array)
    xs = np.where(xs == len(rl.codes), rl.k - 1, xs)  # "other" is the domain's last index
    return rl.digest, oracle.randomize_many(xs, entropy)


def aggregate_round(rl: RoundList, oracle: FrequencyOracle, reports, digest: str) -> np.ndarray:
    """The round's k estimated counts (other last) from its reports, refused when they were
    made for another candidate list (``digest`` differs from the list's, both named)."""
    if not isinstance(digest, str) or digest != rl.digest:
        raise ValueError(f"reports made for candidate list {str(digest)[:16]}... cannot be read "
                         f"against round {rl.index}'s list {rl.digest[:16]}...")
    if oracle.k != rl.k:
        raise ValueError(f"oracle: k = {oracle.k}, the list's domain is k = {rl.k}")
    return np.asarray(oracle.estimate(reports), dtype=float)
