"""Each round of a heavy-hitter campaign as a report set (the sets of ``ldpcompress.scale``:
Parquet shards and a manifest; docs/guide.md, "Heavy hitters over unknown domains").

A round's set holds, beside its shards, the round's candidate list as ``candidates.json``,
listed in the manifest with its SHA-256 like any file of a set. The server reads a set only
against the list it expects: the file must match the manifest's digest and be exactly that
list (same content digest, hence same round and campaign), else the set is refused naming
both lists' digests, before any report is counted. Aggregation is scale's own
(``scale.distributed.aggregate``: in this process or on Dask), with the round's oracle as the
expected randomizer, so a set of another randomizer is refused too.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..core.regular_files import read_regular
from ..scale.budget import plan as set_plan
from ..scale.distributed import aggregate
from ..scale.manifest import MAX_MANIFEST_BYTES, MAX_SHARDS, load_json
from ..scale.writer import write_items
from .campaign import Campaign, certified_campaign
from .prefix import Alphabet, Encoded
from .rounds import RoundAggregate, RoundList, round_inputs

__all__ = ["CANDIDATES", "MAX_LIST_BYTES", "write_round_set", "write_round_inputs",
           "read_round_set", "shuffle_round_set", "set_list"]

CANDIDATES = "candidates.json"
MAX_LIST_BYTES = 1 << 28  # a list of MAX_K codes of up to 19 digits fits


def _coins(entropy: Entropy) -> str | None:
    if not isinstance(entropy, Entropy):
        raise TypeError(f"entropy must be an Entropy, got {type(entropy).__name__}")
    if entropy.for_simulation:
        return "simulated"
    return "os.urandom" if entropy.source is os.urandom else None


def write_round_inputs(xs: np.ndarray, campaign: Campaign, rl: RoundList,
                       out_dir: str | os.PathLike, *, entropy: Entropy = SYSTEM,
                       shards: int = 1, overwrite: bool = False) -> list[Path]:
    """Randomize the devices' oracle inputs ``xs`` for round ``rl`` (round j's oracle of the
    campaign; coins from ``entropy``, os.urandom by default) into a report set in ``out_dir``
    holding the list as ``candidates.json``; returns the shards' paths. The campaign is
    certified first (:func:`~ldpcompress.heavy.campaign.certified_campaign`)."""
    certified_campaign(campaign).check_list(rl)
    xs = np.asarray(xs)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"round {rl.index}: no device to encode (an empty round writes no "
                         "report set)")
    shards = V.integer_at_least(shards, "shards", 1, MAX_SHARDS)
    oracle = campaign.oracle(rl.index)
    info = {"coins": _coins(entropy)}
    data = rl.to_json().encode()
    return write_items(out_dir, oracle, [xs], int(xs.size), min(shards, int(xs.size)),
                       overwrite=overwrite, entropy=entropy, files={CANDIDATES: lambda: data},
                       info=info)


def write_round_set(words: Iterable[str], campaign: Campaign, rl: RoundList,
                    out_dir: str | os.PathLike, *, entropy: Entropy = SYSTEM, shards: int = 1,
                    overwrite: bool = False) -> tuple[list[Path], int]:
    """The devices' reports for round ``rl`` of ``campaign``, one per word, as a report set
    in ``out_dir``: each word mapped to its candidate index, a word outside the alphabet,
    longer than max_len or whose prefix is not listed to "other" (the last index). Returns
    (the shards' paths, how many words reported "other"). The campaign is certified first."""
    certified_campaign(campaign)
    words = list(words)
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise TypeError(f"words[{i}] must be a str, got {type(w).__name__}")
    campaign.check_list(rl)
    s = campaign.shape
    enc = Encoded.of(words, Alphabet(rl.alphabet), s.rounds * s.step, s.max_len)
    xs = round_inputs(enc, rl)
    paths = write_round_inputs(xs, campaign, rl, out_dir, entropy=entropy, shards=shards,
                               overwrite=overwrite)
    return paths, int((xs == rl.k - 1).sum())


def set_list(manifest: str | os.PathLike) -> RoundList:
    """The candidate list a round's report set was made for (its ``candidates.json``), checked
    against the SHA-256 its manifest lists and against its own digest."""
    manifest = Path(manifest)
    doc = load_json(manifest, MAX_MANIFEST_BYTES, "manifest")
    files = doc.get("files") if isinstance(doc, dict) else None
    entry = [e for e in files if isinstance(e, dict) and e.get("file") == CANDIDATES] \
        if isinstance(files, list) else []
    if len(entry) != 1:
        raise ValueError(f"{manifest}: the set lists no candidate list ({CANDIDATES}): not a "
                         "heavy-hitter round's report set")
    raw = read_regular(manifest.parent / CANDIDATES, "a candidate list", MAX_LIST_BYTES)
    if hashlib.sha256(raw).hexdigest() != entry[0].get("sha256"):
        raise ValueError(f"{manifest.parent / CANDIDATES}: differs from the SHA-256 its "
                         "manifest lists (the file was replaced or edited)")
    try:
        return RoundList.from_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ValueError(f"{manifest.parent / CANDIDATES}: {err}") from None


def read_round_set(paths: str | os.PathLike | Sequence[str | os.PathLike], campaign: Campaign,
                   rl: RoundList, *, scheduler: str = "memory", **options) -> RoundAggregate:
    """Round ``rl``'s aggregate from its report set(s) ``paths``: every set's candidate list
    must be ``rl`` (else refused naming both digests) and its randomizer round j's oracle;
    then scale's aggregation (``scheduler`` and ``options`` as for
    :func:`ldpcompress.scale.distributed.aggregate`: "memory", "auto", "local" or a
    scheduler's address). The campaign is certified first (its stored ledger must be the one
    its n, assignment and oracles certify, else ValueError naming both)."""
    certified_campaign(campaign).check_list(rl)
    oracle = campaign.oracle(rl.index)
    plan = set_plan(paths, expect=oracle)
    _check_lists(plan, rl)
    _check_count(plan.n, campaign, rl)
    res = aggregate(plan, scheduler=scheduler, **options)
    return RoundAggregate.of_summary(rl, oracle, res.summary, int(res.n))


def shuffle_round_set(paths: str | os.PathLike | Sequence[str | os.PathLike],
                      campaign: Campaign, rl: RoundList, out: str | os.PathLike, *,
                      shards: int | None = None, entropy: Entropy = SYSTEM) -> list[Path]:
    """The shuffler's step for round ``rl``: the reports of the round's set(s) ``paths`` (each
    holding ``rl``, else refused naming both digests) rewritten in a uniform random order
    (``scale.shuffle.shuffle_report_set``) as a new set in ``out`` that holds the list too.
    The campaign is certified first."""
    from ..scale.shuffle import shuffle_report_set
    certified_campaign(campaign).check_list(rl)
    plan = set_plan(paths, expect=campaign.oracle(rl.index))
    _check_lists(plan, rl)
    _check_count(plan.n, campaign, rl)
    return shuffle_report_set(paths, out, shards, entropy=entropy,
                              files={CANDIDATES: rl.to_json().encode()})


def _check_count(reports: int, campaign: Campaign, rl: RoundList) -> None:
    """Refuse a round holding more reports than the campaign's n devices, or, under public
    groups, fewer than the n // T the bound assumes each round's shuffle holds (docs/theory.md
    §2.17: disjoint groups, one device reports in ONE round)."""
    n, T = campaign.n, campaign.shape.rounds
    if reports > n:
        raise ValueError(f"round {rl.index}: {reports:,} reports, more than the plan's "
                         f"n = {n:,} devices")
    if campaign.assignment == "groups" and reports < n // T:
        raise ValueError(f"round {rl.index}: {reports:,} reports, fewer than the {n // T:,} "
                         f"distinct devices per round (n // T = {n:,} // {T}) the plan's "
                         "groups bound assumes")


def _check_lists(plan, rl: RoundList) -> None:
    for manifest in dict.fromkeys(s.manifest for s in plan.shards):
        got = set_list(manifest)
        if got.digest != rl.digest:
            raise ValueError(f"{manifest}: its reports were made for candidate list "
                             f"{got.digest[:16]}... (round {got.index}, plan "
                             f"{got.campaign[:16] or '(none)'}...) and cannot be read against "
                             f"round {rl.index}'s list {rl.digest[:16]}...")
