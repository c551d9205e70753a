"""What a report set says about itself: its randomizer (name and parameters only), each shard's
metadata, and the checks that turn untrusted JSON back into them.

A set records its randomizer as ``registry.spec(r)`` = ``{"randomizer": name, "params":
{...}}`` and nothing else about its law: ``randomizer_from_spec`` rebuilds it through the
randomizer's own constructor (``registry.check_spec``: unknown names and bad parameters are
refused naming the file and the key); what summarising its reports costs is checked by the
aggregation before any shard is read (``budget``). ``check_expected`` compares an untrusted
spec with the randomizer the server expects before anything is built from it. Each shard
carries, under the Parquet schema metadata key ``META_KEY``, the format version, the set's id,
its index and the same spec (``shard_meta``). ``get_key``, ``get_int`` and ``parse_json`` are
the checks every reader of the set's JSON uses: each error is a ValueError
naming the source (the file) and the key. The formats are in docs/guide.md, section 2, "Wire
formats"; the checks in section 3, "Report sets and aggregation".
"""
from __future__ import annotations

import json

import numpy as np

from ..core import validate as V
from ..randomizers import registry
from ..randomizers.contract import LocalRandomizer

__all__ = ["FORMAT", "META_KEY", "MAX_META_BYTES", "RANDOMIZER_KEY", "randomizer_from_spec",
           "spec_text", "summary_bytes", "check_expected", "shard_meta",
           "get_key", "get_int", "parse_json"]


FORMAT = 3          # 2: PI-RAPPOR only (ldpcompress 0.2); 3: any registered randomizer
META_KEY = b"ldpcompress"
MAX_META_BYTES = 1 << 16
RANDOMIZER_KEY = "randomizer"


def spec_text(randomizer: LocalRandomizer) -> str:
    """The randomizer's spec (``{"randomizer": name, "params": ...}``, as ``registry.spec``
    gives it) as canonical JSON (sorted keys): equal for equal randomizers. No registry is
    consulted: a Dask worker may hold a user's class without having registered it."""
    spec = {"randomizer": randomizer.name, "params": dict(randomizer.params())}
    return json.dumps(spec, sort_keys=True, allow_nan=False)


def summary_bytes(randomizer: LocalRandomizer) -> int:
    """Bytes of one summary (``summary_spec()``: shape x itemsize)."""
    spec = randomizer.summary_spec()
    return int(np.prod(spec.shape, dtype=object)) * np.dtype(spec.dtype).itemsize


def randomizer_from_spec(obj: object, source: str, key: str = RANDOMIZER_KEY) -> LocalRandomizer:
    """Rebuild (and check) the randomizer described by an untrusted spec found at ``key`` of
    ``source``. Every error names the source and the key. What summarising its reports would
    cost is the aggregation's to check (``budget``), before any shard is read."""
    where = f"{source}: key {key!r}"
    randomizer = registry.check_spec(obj, where)
    try:
        given = json.dumps(obj, sort_keys=True, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        given = None
    if given != spec_text(randomizer):  # a writer records exactly the rebuilt randomizer's
        raise ValueError(f"{where}: {given or obj!r} is not what a writer records for the "
                         f"randomizer it builds, {spec_text(randomizer)} (an edited file?)")
    return randomizer


def check_expected(obj: object, expect: LocalRandomizer, source: str,
                   key: str = RANDOMIZER_KEY) -> None:
    """Refuse an untrusted spec (at ``key`` of ``source``) that is not exactly what a writer
    records for ``expect``, the randomizer the server expects, before anything is built from
    it; the ValueError names both specs and the parameters that differ."""
    want = spec_text(expect)
    try:
        given = json.dumps(obj, sort_keys=True, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        given = None
    if given == want:
        return
    diff = ""
    if isinstance(obj, dict):
        if obj.get("randomizer") != expect.name:
            diff = f"; the randomizer is {_clip(obj.get('randomizer'), 80)}, not {expect.name!r}"
        elif isinstance(obj.get("params"), dict):
            mine = dict(expect.params())
            keys = sorted(set(obj["params"]) | set(mine))
            parts = [f"{k} {_clip(obj['params'].get(k, '(absent)'), 80)} (expected "
                     f"{_clip(mine.get(k, '(absent)'), 80)})" for k in keys
                     if json.dumps(obj["params"].get(k), sort_keys=True, default=str)
                     != json.dumps(mine.get(k), sort_keys=True, default=str)]
            diff = f"; it differs in {', '.join(parts)}" if parts else ""
    raise ValueError(f"{source}: key {key!r}: the report set's randomizer {_clip(given or obj)} "
                     f"is not the expected {want}{diff}: refused (the server aggregates only "
                     "the randomizer it expects)")


def _clip(value, limit: int = 400) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def get_key(doc: object, key: str, kinds: tuple[type, ...], source: str, what: str):
    """doc[key] of the given JSON type(s); ValueError naming the source and the key."""
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: {what or 'metadata'} must be a JSON object, got "
                         f"{type(doc).__name__}")
    name = f"{what}.{key}" if what else key
    if key not in doc:
        raise ValueError(f"{source}: missing key {name!r}")
    value = doc[key]
    bad = isinstance(value, bool) and bool not in kinds
    if bad or not isinstance(value, kinds):
        want = "/".join(k.__name__ for k in kinds)
        raise ValueError(f"{source}: key {name!r} must be {want}, got {value!r}")
    return value


def get_int(doc: object, key: str, source: str, what: str = "", low: int = 0,
            high: int = V.MAX_N) -> int:
    """doc[key], an integer in [low, high]; ValueError naming the source and the key."""
    value = get_key(doc, key, (int,), source, what)
    if not low <= value <= high:
        name = f"{what}.{key}" if what else key
        raise ValueError(f"{source}: key {name!r} must be an integer in [{low}, {high}], "
                         f"got {value!r}")
    return value


def parse_json(raw: bytes, source: str, what: str):
    """Untrusted bytes as JSON; ValueError naming the source and what they should have been."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ValueError(f"{source}: the {what} is not valid JSON ({type(err).__name__}: "
                         f"{str(err)[:200]})") from None


def shard_meta(set_id: str, index: int, spec: dict) -> dict:
    """The metadata a shard carries under ``META_KEY``: format, set id, index, randomizer."""
    return {"format": FORMAT, "set": set_id, "shard": index, RANDOMIZER_KEY: spec}
