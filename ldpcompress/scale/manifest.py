"""A report set's manifest: the record that gives the set an identity and lists its shards.

``manifest.json`` holds the kind, the format version, whether the set is complete, the set's
random id, the randomizer (its registry name and parameters: ``registry.spec``), the total
report count and, per shard, its file name, row count, size and SHA-256 (and the set's other
files, e.g. ``true_counts.npy``, with theirs); optionally how the reports' coins were drawn
(``coins``: "os.urandom", or "simulated" for seeded simulation coins that give no privacy)
and the public item names (``items``: ``ItemDomain.to_record``, checked by their SHA-256). ``read_manifest`` checks every field of one
complete set, rebuilds the randomizer through its own constructor and returns it with the
shards as :class:`Shard` records; the writer replaces the file atomically (``write_json_atomic``), so a
reader sees the old manifest or the new one, never a part. File names must be plain names
inside the set's directory. The format is in docs/guide.md, section 2, "Wire formats".
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..core.items import ItemDomain
from ..core.regular_files import read_regular
from ..randomizers.contract import LocalRandomizer
from .metadata import (FORMAT, RANDOMIZER_KEY, check_expected, get_int, get_key, parse_json,
                       randomizer_from_spec)

__all__ = ["MANIFEST", "KIND", "MAX_SHARDS", "MAX_MANIFEST_BYTES", "COINS", "Shard",
           "SetInfo", "read_manifest", "read_info", "check_info", "common_items", "plain_name", "load_json",
           "manifest_names", "write_json_atomic"]


MANIFEST = "manifest.json"
KIND = "ldpcompress report set"
MAX_SHARDS = 100_000
MAX_MANIFEST_BYTES = 1 << 28  # 256 MiB: about two million shard entries
COINS = ("os.urandom", "simulated")  # how a set's coins were drawn (key "coins")


@dataclass(frozen=True)
class SetInfo:
    """What a manifest says of its set beyond the shards: how the coins were drawn (None for
    sets written before the key existed) and the public item names (None when not kept)."""

    coins: str | None
    items: ItemDomain | None
    sources: tuple[str, ...] = ()  # SHA-256 of the manifests of the sets it was shuffled from


def check_info(info) -> dict:
    """The optional manifest keys a writer may add (``coins``, ``items``), checked: returns
    them as JSON-ready values (``items`` given as an ItemDomain)."""
    if info is None:
        return {}
    if not isinstance(info, dict):
        raise TypeError(f"info must be a dict, got {type(info).__name__}")
    unknown = set(info) - {"coins", "items", "sources"}
    if unknown:
        raise ValueError(f"info keys must be 'coins', 'items' and 'sources', got "
                         f"{sorted(unknown)}")
    out: dict = {}
    if info.get("coins") is not None:
        if info["coins"] not in COINS:
            raise ValueError(f"info['coins'] must be one of {COINS}, got {info['coins']!r}")
        out["coins"] = info["coins"]
    if info.get("items") is not None:
        if not isinstance(info["items"], ItemDomain):
            raise TypeError(f"info['items'] must be an ItemDomain, got "
                            f"{type(info['items']).__name__}")
        out["items"] = info["items"].to_record()
    if info.get("sources"):
        out["sources"] = list(_sources(info["sources"], "info['sources']"))
    return out


def _sources(value, source: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(d, str) and len(d) == 64 and all(c in "0123456789abcdef" for c in d)
            for d in value):
        raise ValueError(f"{source}: key 'sources' must be a list of SHA-256 hex digests")
    return tuple(value)


def manifest_digest(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a manifest file's bytes: what a shuffled set records of its sources."""
    return hashlib.sha256(read_regular(Path(path), "a manifest", MAX_MANIFEST_BYTES)).hexdigest()


def check_not_with_source(manifests) -> None:
    """Refuse report sets given together with a set shuffled from them (the same reports
    twice), naming both manifests; manifests without ``sources`` (older sets) record none."""
    paths = list(dict.fromkeys(str(m) for m in manifests))
    if len(paths) < 2:
        return
    by_digest = {manifest_digest(p): p for p in paths}
    for p in paths:
        for d in read_info(p).sources:
            if d in by_digest and by_digest[d] != p:
                raise ValueError(f"{p} is a shuffle of {by_digest[d]} (its manifest records "
                                 "that set's digest): given together their reports would be "
                                 "counted twice; give one of them")


def read_info(path: str | os.PathLike) -> SetInfo:
    """The ``coins`` and ``items`` of a set's manifest (each optional), checked."""
    source = str(path)
    doc = load_json(Path(path), MAX_MANIFEST_BYTES, "manifest")
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: a manifest must be a JSON object")
    coins = doc.get("coins")
    if coins is not None and coins not in COINS:
        raise ValueError(f"{source}: key 'coins' must be one of {COINS}, got {coins!r}")
    items = doc.get("items")
    sources = () if doc.get("sources") is None else _sources(doc["sources"], source)
    return SetInfo(coins, None if items is None else ItemDomain.from_record(items, source),
                   sources)


def common_items(manifests) -> ItemDomain | None:
    """The item names the sets of ``manifests`` keep, when they all keep the same (None when
    none keeps any); sets that keep different names, or some none, are refused naming two."""
    found: dict[str, ItemDomain | None] = {}
    for path in dict.fromkeys(str(m) for m in manifests):
        found[path] = read_info(path).items
    if not found:
        return None
    (first, domain), *rest = found.items()
    for path, other in rest:
        if other != domain:
            raise ValueError(f"{first} and {path} label their items differently (their "
                             "manifests keep different item names): aggregate them apart")
    return domain


@dataclass(frozen=True)
class Shard:
    """One shard as listed by its set's manifest (path resolved: no symlinks, absolute)."""

    path: Path
    rows: int
    size: int
    sha256: str
    index: int
    set_id: str
    manifest: Path


def plain_name(name: object, source: str, key: str, suffix: str | None = None) -> str:
    """A file name inside the set's directory: no separators, no '..', no hidden files."""
    if not isinstance(name, str) or not name or name != os.path.basename(name) \
            or name.startswith(".") or "\\" in name or "\0" in name \
            or (suffix and not name.endswith(suffix)):
        raise ValueError(f"{source}: key {key!r} must be a plain file name"
                         f"{' ending in ' + suffix if suffix else ''} in the set's directory, "
                         f"got {name!r}")
    return name


def _hex_digest(value, source: str, key: str) -> str:
    if not isinstance(value, str) or len(value) != 64 or \
            any(c not in "0123456789abcdef" for c in value):
        raise ValueError(f"{source}: key {key!r} must be a SHA-256 hex digest, got {value!r}")
    return value


def _hex_digest_set(value: str, source: str) -> str:
    if len(value) != 32 or any(c not in "0123456789abcdef" for c in value):
        raise ValueError(f"{source}: key 'set' must be 32 hex digits, got {value!r}")
    return value


def load_json(path: Path, limit: int, what: str):
    """The JSON document in a regular file of at most ``limit`` bytes; ValueError naming it."""
    return parse_json(read_regular(path, f"a {what}", limit), str(path), what)


def manifest_names(doc: object, source: str) -> list[str]:
    """File names a (possibly incomplete) manifest claims, for replacing the set."""
    names = []
    for i, entry in enumerate(get_key(doc, "shards", (list,), source, "")):
        names.append(plain_name(get_key(entry, "file", (str,), source, f"shards[{i}]"), source,
                                f"shards[{i}].file", ".parquet"))
    for i, entry in enumerate(get_key(doc, "files", (list,), source, "")):
        names.append(plain_name(get_key(entry, "file", (str,), source, f"files[{i}]"), source,
                                f"files[{i}].file"))
    return names


def read_manifest(path: str | os.PathLike, expect: LocalRandomizer | None = None
                  ) -> tuple[LocalRandomizer, list[Shard]]:
    """The randomizer and shards of one complete report set, every field checked; the shards'
    files themselves are checked when read (``reader.iter_shard``). ``expect``: the randomizer
    the server expects; a set recording another is refused before its randomizer is built."""
    path = Path(path)
    source = str(path)
    doc = load_json(path, MAX_MANIFEST_BYTES, "manifest")
    if get_key(doc, "kind", (str,), source, "") != KIND:
        raise ValueError(f"{source}: key 'kind' must be {KIND!r}: not an ldpcompress manifest")
    fmt = get_key(doc, "format", (int,), source, "")
    if fmt != FORMAT:
        old = (" (format 2 holds PI-RAPPOR reports written by ldpcompress 0.2: read it with "
               "that version, or write the reports again with this one)" if fmt == 2 else "")
        raise ValueError(f"{source}: unknown report set format {fmt} (this version reads "
                         f"{FORMAT}){old}")
    if not get_key(doc, "complete", (bool,), source, ""):
        raise ValueError(f"{source}: the report set is incomplete (its writing was interrupted): "
                         "write it again (--overwrite)")
    set_id = _hex_digest_set(get_key(doc, "set", (str,), source, ""), source)
    spec = get_key(doc, RANDOMIZER_KEY, (dict,), source, "")
    if expect is not None:
        check_expected(spec, expect, source)
    randomizer = randomizer_from_spec(spec, source)
    total = get_int(doc, "reports", source)
    entries = get_key(doc, "shards", (list,), source, "")
    if not 1 <= len(entries) <= MAX_SHARDS:
        raise ValueError(f"{source}: key 'shards' must list 1 to {MAX_SHARDS} shards, "
                         f"got {len(entries)}")
    manifest_names(doc, source)
    folder = path.parent
    shards, names, digests = [], set(), set()
    for i, e in enumerate(entries):
        key = f"shards[{i}]"
        name = plain_name(get_key(e, "file", (str,), source, key), source, f"{key}.file",
                          ".parquet")
        digest = _hex_digest(get_key(e, "sha256", (str,), source, key), source, f"{key}.sha256")
        if name in names or digest in digests:
            raise ValueError(f"{source}: {key} ({name}) is listed twice")
        names.add(name)
        digests.add(digest)
        shards.append(Shard(folder / name, get_int(e, "rows", source, key),
                            get_int(e, "bytes", source, key, 1), digest, i, set_id, path))
    if sum(s.rows for s in shards) != total:
        raise ValueError(f"{source}: key 'reports' = {total} but the shards hold "
                         f"{sum(s.rows for s in shards)} rows")
    return randomizer, shards


def write_json_atomic(path: Path, doc: dict, durable: bool = True, tag: str = "") -> None:
    """Readers see the old file or the new one, never a part (write aside, then rename); the
    temporary file's name carries ``tag`` (the writer's set id)."""
    tmp = path.with_name(f".{path.name}.{tag}.tmp" if tag else f".{path.name}.tmp")
    try:
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1, allow_nan=False)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise ValueError(f"{path}: cannot write ({err.strerror or err})") from None
