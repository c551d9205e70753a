"""Finding report sets and reading their shards, every check made before anything is counted.

``collect`` turns the paths given (directories, shards, manifests) into one randomizer and a
list of shards: every ``*.parquet`` file below a directory must be listed by the manifest
beside it, and a shard reached twice (a symlink, a directory and a file in it), a copy (same
SHA-256) or a copied set is refused, as are sets with different randomizers and anything but
a regular file in a listed file's place. ``iter_shard`` then hashes a shard block by block
against the manifest and parses it a batch of reports at a time, only from bytes verified
against that hash (:class:`_VerifiedReader`), checking its metadata (the randomizer's spec must
be the manifest's), schema (the randomizer's ``report_columns()``, ``columns``), page
checksums, row count and every report (the randomizer's ``from_columns``); memory is bounded by
the batch, not by the shard. ``summarize_shard`` adds the batches' summaries; ``read_shard``
holds a whole shard in memory. Every refusal is a ValueError naming the file (and the key).
Needs the optional extra ``[dask]`` (pyarrow). See docs/guide.md, section 3, "Report sets and
aggregation".
"""
from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..core import validate as V
from ..core.limits import check_bytes
from ..core.optional import require
from ..core.regular_files import check_regular, open_regular
from ..randomizers.contract import LocalRandomizer
from . import columns as C
from .manifest import MANIFEST, Shard, check_not_with_source, read_manifest
from .metadata import (FORMAT, MAX_META_BYTES, META_KEY, RANDOMIZER_KEY, get_key, parse_json,
                       spec_text)

__all__ = ["READ_BATCH_BYTES", "READ_BATCH_ROWS", "READ_BUFFER", "VERIFY_BLOCK",
           "VERIFY_CACHE", "collect", "iter_shard", "summarize_shard", "read_shard",
           "batch_rows_for", "check_batch_rows", "row_memory"]


READ_BATCH_BYTES = 64 << 20   # memory of one batch of reports being read, checked, summarized
READ_BATCH_ROWS = 1 << 20     # and at most this many reports in a batch
READ_BUFFER = 1 << 20         # Parquet column chunks are streamed in pieces of this size
VERIFY_BLOCK = 1 << 20        # shards are hashed block by block (see _VerifiedReader)
VERIFY_CACHE = 8              # verified blocks kept while reading a shard


def row_memory(randomizer: LocalRandomizer) -> int:
    """Bytes one report takes while its batch is read, checked and summarized."""
    return max(1, C.row_bytes(randomizer)) * C.DECODE_FACTOR


def batch_rows_for(randomizer: LocalRandomizer) -> int:
    """Reports per batch by default: READ_BATCH_BYTES of memory (``columns.DECODE_FACTOR``
    times the stored bytes of a report), at most READ_BATCH_ROWS."""
    return max(1, min(READ_BATCH_ROWS, READ_BATCH_BYTES // row_memory(randomizer)))


def _real(path) -> Path:
    return Path(os.path.realpath(path))


def _listed(manifest: Path, expect: LocalRandomizer | None
            ) -> tuple[LocalRandomizer, list[Shard], set[str]]:
    """A set's randomizer, its shards with their paths resolved, and the names listed."""
    randomizer, shards = read_manifest(manifest, expect)
    real = [Shard(_real(s.path), s.rows, s.size, s.sha256, s.index, s.set_id, manifest)
            for s in shards]
    return randomizer, real, {s.path.name for s in shards}


def _walk(root: Path, expect: LocalRandomizer | None
          ) -> list[tuple[Path, LocalRandomizer, list[Shard]]]:
    """Every report set (manifest, randomizer, shards) below root. Every ``*.parquet``
    file below must be listed by the manifest in its own directory, and no directory may be
    reached twice (symlinks)."""
    manifests: list[tuple[Path, LocalRandomizer, list[Shard]]] = []
    seen: dict[str, str] = {}  # real path -> the folder first reached
    for folder, dirs, files in os.walk(root, followlinks=True, onerror=_raise):
        real = os.path.realpath(folder)
        if real in seen:
            raise ValueError(f"{folder} and {seen[real]} are the same directory (a symlink): "
                             "its report set would be counted twice")
        seen[real] = folder
        dirs.sort()
        listed: set[str] = set()
        if MANIFEST in files:
            manifest = Path(folder) / MANIFEST
            meta, shards, listed = _listed(manifest, expect)
            manifests.append((manifest, meta, shards))
        for name in sorted(files):
            if name.endswith(".parquet") and name not in listed:
                why = (f"not listed in {Path(folder) / MANIFEST} (an extra, stale or copied "
                       "shard): remove it" if MANIFEST in files else
                       f"no {MANIFEST} beside it: not part of a complete report set")
                raise ValueError(f"{Path(folder) / name}: {why}")
    if not manifests:
        raise ValueError(f"{root}: no report set ({MANIFEST}) in it or below it")
    return manifests


def _raise(err: OSError):
    raise ValueError(f"{err.filename}: cannot list ({err.strerror or err})")


def collect(paths: str | os.PathLike | Iterable[str | os.PathLike],
            expect: LocalRandomizer | None = None) -> tuple[LocalRandomizer, list[Shard]]:
    """The common randomizer and every shard named by ``paths``, all checked before any
    counting.

    A directory means every report set in it or below it (each complete; every Parquet file
    below must be listed by the manifest in its directory). A file means that shard (listed by
    the manifest beside it) or, for a ``manifest.json``, its set. Paths are resolved, so a shard
    named twice (twice, as a directory and a file inside, through a symlink) is refused, and so
    is a copy (same SHA-256 under another name). Sets must share the randomizer (equal name
    and parameters); with ``expect``, each must record exactly that randomizer (refused naming
    both before the set's randomizer is built: ``metadata.check_expected``).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise ValueError("no report files given")
    picked: list[tuple[str, Shard]] = []
    found: list[tuple[Path, LocalRandomizer]] = []
    for given in paths:
        if not isinstance(given, (str, os.PathLike)) or os.fspath(given) == "":
            raise ValueError(f"report paths must be non-empty paths, got {given!r}")
        p = Path(given)
        if not p.exists():
            raise ValueError(f"{p}: no such file or directory")
        if p.is_dir():
            for m, meta, shards in _walk(p, expect):
                found.append((m, meta))
                picked += [(str(given), s) for s in shards]
        elif p.name == MANIFEST:
            meta, shards, _ = _listed(_real(p), expect)
            found.append((p, meta))
            picked += [(str(given), s) for s in shards]
        else:
            real = _real(p)
            manifest = real.parent / MANIFEST
            if not manifest.exists():
                raise ValueError(f"{p}: no {MANIFEST} beside it ({real.parent}): not part of a "
                                 "complete report set")
            meta, shards, _ = _listed(manifest, expect)
            match = [s for s in shards if s.path == real]
            if not match:
                raise ValueError(f"{p}: not listed in {manifest} (an extra, stale or copied "
                                 "shard)")
            found.append((manifest, meta))
            picked.append((str(given), match[0]))
    _no_duplicates(picked)
    check_not_with_source(m for m, _ in found)
    for _, s in picked:  # before any work: a missing shard, or a FIFO or device in its place
        check_regular(s.path, "a report shard", s.manifest)
    first_m, first = found[0]
    for m, randomizer in found[1:]:
        if randomizer != first:
            raise ValueError(f"{m}: key {RANDOMIZER_KEY!r}: the reports' randomizer "
                             f"{randomizer.describe()} differs from {first.describe()} "
                             f"({first_m}): sets of different randomizers cannot be added")
    return first, [s for _, s in picked]


def _no_duplicates(picked: list[tuple[str, Shard]]) -> None:
    by_path: dict[Path, str] = {}
    by_digest: dict[str, Path] = {}
    by_id: dict[tuple[str, int], Path] = {}
    for given, s in picked:
        if s.path in by_path:
            raise ValueError(f"{s.path}: given twice (through {by_path[s.path]!r} and "
                             f"{given!r}): each shard may be counted once only")
        by_path[s.path] = given
        if s.sha256 in by_digest:
            raise ValueError(f"{s.path} and {by_digest[s.sha256]} have the same contents (a "
                             "copied shard): each shard may be counted once only")
        by_digest[s.sha256] = s.path
        ident = (s.set_id, s.index)
        if ident in by_id:
            raise ValueError(f"{s.path} and {by_id[ident]} are both shard {s.index} of set "
                             f"{s.set_id} (a copied set)")
        by_id[ident] = s.path


class _VerifiedReader(io.RawIOBase):
    """A read-only, seekable view of an open shard whose blocks (VERIFY_BLOCK bytes) were hashed
    by a first pass: every block is hashed again as it is read and must match, so the bytes the
    Parquet reader parses are exactly those whose SHA-256 was checked against the manifest, even
    if the file changes in between. Memory: VERIFY_CACHE blocks."""

    def __init__(self, fh, size: int, digests: list[bytes], source: str):
        super().__init__()
        self.fh, self.size, self.digests, self.source = fh, size, digests, source
        self.pos = 0
        self.cache: dict[int, bytes] = {}
        self.failure: ValueError | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        if base + offset < 0:
            raise OSError(f"{self.source}: seek before the start of the file")
        self.pos = base + offset
        return self.pos

    def _block(self, i: int) -> bytes:
        data = self.cache.pop(i, None)
        if data is None:
            self.fh.seek(i * VERIFY_BLOCK)
            data = self.fh.read(min(VERIFY_BLOCK, self.size - i * VERIFY_BLOCK))
            if hashlib.sha256(data).digest() != self.digests[i]:
                self.failure = ValueError(
                    f"{self.source}: changed while being read (bytes {i * VERIFY_BLOCK} to "
                    f"{i * VERIFY_BLOCK + len(data)} differ from the checked ones)")
                raise self.failure
            while len(self.cache) >= VERIFY_CACHE:
                self.cache.pop(next(iter(self.cache)))
        self.cache[i] = data  # most recently used last
        return data

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        parts = []
        while self.pos < end:
            i = self.pos // VERIFY_BLOCK
            block = self._block(i)
            piece = block[self.pos - i * VERIFY_BLOCK:end - i * VERIFY_BLOCK]
            parts.append(piece)
            self.pos += len(piece)
        return b"".join(parts)

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[:len(data)] = data
        return len(data)


def _hash_blocks(fh, shard: Shard) -> list[bytes]:
    """First pass over an open shard: its length and SHA-256 against the manifest, and the
    digest of every VERIFY_BLOCK-byte block (for :class:`_VerifiedReader`)."""
    path = shard.path
    whole, digests, size = hashlib.sha256(), [], 0
    try:
        while size <= shard.size:
            data = fh.read(min(VERIFY_BLOCK, shard.size + 1 - size))
            if not data:
                break
            whole.update(data)
            digests.append(hashlib.sha256(data).digest())
            size += len(data)
    except OSError as err:
        raise ValueError(f"{path}: cannot read ({err.strerror or err})") from None
    if size != shard.size:
        raise ValueError(f"{path}: {'at least ' if size > shard.size else ''}{size} "
                         f"bytes, {shard.manifest} says {shard.size}: truncated or altered")
    if whole.hexdigest() != shard.sha256:
        raise ValueError(f"{path}: contents differ from {shard.manifest} (SHA-256 mismatch): "
                         "the shard was altered or corrupted")
    return digests


def check_batch_rows(batch_rows: int | None, randomizer: LocalRandomizer,
                     max_bytes: float | None = None) -> int:
    """``batch_rows`` checked (None: :func:`batch_rows_for`): an integer whose batch (and the
    verified blocks kept) fits in memory; ValueError naming ``batch_rows``."""
    if batch_rows is None:
        batch_rows = batch_rows_for(randomizer)
    batch_rows = V.integer_at_least(batch_rows, "batch_rows", 1, 1 << 40)
    check_bytes(batch_rows * row_memory(randomizer) + VERIFY_CACHE * VERIFY_BLOCK,
                f"reading {batch_rows} reports at a time", "batch_rows", max_bytes)
    return batch_rows


def iter_shard(shard: Shard, randomizer: LocalRandomizer, batch_rows: int | None = None,
               max_bytes: float | None = None) -> Iterator:
    """The reports of one shard, at most ``batch_rows`` at a time (default
    :func:`batch_rows_for`), after checking that it is a regular file, its size and SHA-256
    (first pass), its metadata (format, set, index, the randomizer's spec), schema (exactly the
    randomizer's columns) and row count; then every batch: Parquet page checksums, no missing
    values, every report (``from_columns``). The second pass parses only bytes verified against
    the first (:class:`_VerifiedReader`), so what is checked is what is counted. Memory is
    bounded by the batch, one Parquet page and a few hash blocks, whatever the shard's size.
    The row count is checked once more at the end: a consumer must not use a shard's reports
    before the iterator is exhausted without error."""
    pa, pq = require("dask", "pyarrow", "pyarrow.parquet")
    batch_rows = check_batch_rows(batch_rows, randomizer, max_bytes)
    path = shard.path
    want = C.arrow_schema(randomizer)
    names = [c.name for c in randomizer.report_columns()]
    with open_regular(path, "a report shard", shard.manifest) as fh:
        digests = _hash_blocks(fh, shard)
        reader = _VerifiedReader(fh, shard.size, digests, str(path))
        try:
            pf = pq.ParquetFile(reader, page_checksum_verification=True, pre_buffer=False,
                                buffer_size=READ_BUFFER)
            schema = pf.schema_arrow
        except Exception as err:  # pyarrow raises several types for corrupt files
            raise reader.failure or ValueError(
                f"{path}: not a readable Parquet report file ({err})") from None
        _check_shard_meta(schema, shard, randomizer)
        if schema.names != names or any(f.type != w.type for f, w in zip(schema, want)):
            got = ", ".join(f"{f.name} {f.type}" for f in schema)
            raise ValueError(f"{path}: columns must be {_shown(want)} (the reports of "
                             f"{randomizer.describe()}), got {got or 'none'}")
        if pf.metadata.num_rows != shard.rows:
            raise ValueError(f"{path}: {pf.metadata.num_rows} rows, {shard.manifest} says "
                             f"{shard.rows}")
        seen = 0
        batches = pf.iter_batches(batch_size=batch_rows, columns=names, use_threads=False)
        while True:
            try:
                batch = next(batches, None)
            except Exception as err:
                raise reader.failure or ValueError(
                    f"{path}: unreadable report columns after {seen} rows ({err})") from None
            if batch is None:
                break
            cols = C.from_batch(randomizer, batch, str(path), seen)
            if seen + batch.num_rows > shard.rows:
                seen += batch.num_rows
                break
            try:
                checked = randomizer.from_columns(cols)
            except (ValueError, TypeError) as err:
                raise ValueError(f"{path}: rows {seen} to {seen + batch.num_rows - 1}: "
                                 f"{err}") from None
            seen += batch.num_rows
            yield checked
        if seen != shard.rows:
            raise ValueError(f"{path}: {seen} rows read, {shard.manifest} says {shard.rows}")


def _shown(schema) -> str:
    return ", ".join(f"{f.name} {f.type}" for f in schema)


def summarize_shard(shard: Shard, randomizer: LocalRandomizer, batch_rows: int | None = None
                    ) -> tuple[np.ndarray, int]:
    """(summary, reports) of one shard, read and summarized a batch at a time: the sum of the
    batches' summaries (exact for integer summaries), in the ``summary_spec()`` dtype: each
    report is checked once, by ``from_columns``, and summarised by the hook ``_summarize``."""
    spec = randomizer.summary_spec()
    total, n = np.zeros(spec.shape, spec.dtype), 0
    for reports in iter_shard(shard, randomizer, batch_rows):
        total += randomizer._summarize(reports)  # checked by from_columns: once
        n += randomizer.n_reports(reports)
    return total, n


def read_shard(shard: Shard, randomizer: LocalRandomizer, max_bytes: float | None = None):
    """All reports of one shard in memory as one batch (every check of :func:`iter_shard`);
    the memory of the whole shard is estimated first and refused above ``max_bytes``.
    Aggregation does not use this: it summarizes batch by batch (:func:`summarize_shard`)."""
    check_bytes(shard.rows * row_memory(randomizer), f"{shard.path}: reading all {shard.rows} "
                "reports at once", "the shard size (or read it in batches: iter_shard)",
                max_bytes)
    rows = max(1, min(shard.rows, batch_rows_for(randomizer)))
    return randomizer.concat(list(iter_shard(shard, randomizer, rows, max_bytes)))


def _check_shard_meta(schema, shard: Shard, randomizer: LocalRandomizer) -> None:
    path = str(shard.path)
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise ValueError(f"{path}: no ldpcompress metadata (not a report file)")
    if len(raw) > MAX_META_BYTES:
        raise ValueError(f"{path}: ldpcompress metadata of {len(raw)} bytes is too large")
    meta = parse_json(raw, path, "ldpcompress metadata")
    fmt = get_key(meta, "format", (int,), path, "")
    if fmt != FORMAT:
        raise ValueError(f"{path}: unknown report file format {fmt} (this version reads "
                         f"{FORMAT})")
    for key, want in (("set", shard.set_id), ("shard", shard.index)):
        if get_key(meta, key, (type(want),), path, "") != want:
            raise ValueError(f"{path}: key {key!r} is {meta[key]!r}, {shard.manifest} says "
                             f"{want!r}")
    spec = get_key(meta, RANDOMIZER_KEY, (dict,), path, "")
    want = spec_text(randomizer)
    try:
        got = json.dumps(spec, sort_keys=True, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        got = None
    if got != want:
        raise ValueError(f"{path}: key {RANDOMIZER_KEY!r} is {_clip(spec)}, {shard.manifest} "
                         f"says {want}: a shard of another randomizer or parameters")


def _clip(value, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
