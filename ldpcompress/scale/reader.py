"""Finding report sets and reading their shards, every check made before anything is counted.

``collect`` turns the paths given (directories, shards, manifests) into one oracle and a list
of shards: every ``*.parquet`` file below a directory must be listed by the manifest beside it,
and a shard reached twice (a symlink, a directory and a file in it), a copy (same SHA-256) or a
copied set is refused, as are sets with different oracles and anything but a regular file in
a listed file's place. ``iter_shard`` then hashes a shard block by block against the manifest
and parses it ``READ_BATCH_ROWS`` reports at a time, only from bytes verified against that hash
(:class:`_VerifiedReader`), checking its metadata, schema, page checksums, row count and every
report's range; memory is bounded by the batch, not by the shard. ``count_shard`` counts a
shard batch by batch; ``read_shard`` holds a whole one in memory. Every refusal is a
ValueError naming the file (and the key). Needs the optional extra ``[dask]`` (pyarrow). See
docs/guide.md, section 3, "Report sets and aggregation".
"""
from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..core import validate as V
from ..core.limits import check_bytes
from ..core.optional import require
from ..randomizers.pirappor import FieldReports, PIRappor
from .manifest import MANIFEST, Shard, read_manifest
from .metadata import (COLUMNS, FORMAT, MAX_META_BYTES, META_KEY, get_key, oracle_from_metadata,
                       oracle_metadata, parse_json, shard_meta)
from ..core.regular_files import check_regular, open_regular

__all__ = ["READ_BYTES_PER_ROW", "READ_BATCH_ROWS", "READ_BUFFER", "VERIFY_BLOCK",
           "VERIFY_CACHE", "collect", "iter_shard", "count_shard", "read_shard",
           "check_batch_rows"]


READ_BYTES_PER_ROW = 48       # a, b int64 as Arrow buffers, as numpy, and the checked copy
READ_BATCH_ROWS = 1 << 20     # reports read, checked and counted at a time (about 48 MiB)
READ_BUFFER = 1 << 20         # Parquet column chunks are streamed in pieces of this size
VERIFY_BLOCK = 1 << 20        # shards are hashed block by block (see _VerifiedReader)
VERIFY_CACHE = 8              # verified blocks kept while reading a shard


def _real(path) -> Path:
    return Path(os.path.realpath(path))


def _listed(manifest: Path) -> tuple[dict, list[Shard], set[str]]:
    """A set's parameters, its shards with their paths resolved, and the names listed."""
    oracle, shards = read_manifest(manifest)
    real = [Shard(_real(s.path), s.rows, s.size, s.sha256, s.index, s.set_id, manifest)
            for s in shards]
    return oracle, real, {s.path.name for s in shards}


def _walk(root: Path) -> list[tuple[Path, dict, list[Shard]]]:
    """Every report set (manifest, oracle parameters, shards) below root. Every ``*.parquet``
    file below must be listed by the manifest in its own directory, and no directory may be
    reached twice (symlinks)."""
    manifests, seen = [], {}
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
            meta, shards, listed = _listed(manifest)
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


def collect(paths: str | os.PathLike | Iterable[str | os.PathLike]
            ) -> tuple[PIRappor, list[Shard]]:
    """The common oracle and every shard named by ``paths``, all checked before any counting.

    A directory means every report set in it or below it (each complete; every Parquet file
    below must be listed by the manifest in its directory). A file means that shard (listed by
    the manifest beside it) or, for a ``manifest.json``, its set. Paths are resolved, so a shard
    named twice (twice, as a directory and a file inside, through a symlink) is refused, and so
    is a copy (same SHA-256 under another name). Sets must share the oracle's parameters.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise ValueError("no report files given")
    picked: list[tuple[str, Shard]] = []
    oracles: list[tuple[Path, dict]] = []
    for given in paths:
        if not isinstance(given, (str, os.PathLike)) or os.fspath(given) == "":
            raise ValueError(f"report paths must be non-empty paths, got {given!r}")
        p = Path(given)
        if not p.exists():
            raise ValueError(f"{p}: no such file or directory")
        if p.is_dir():
            for m, meta, shards in _walk(p):
                oracles.append((m, meta))
                picked += [(str(given), s) for s in shards]
        elif p.name == MANIFEST:
            meta, shards, _ = _listed(_real(p))
            oracles.append((p, meta))
            picked += [(str(given), s) for s in shards]
        else:
            real = _real(p)
            manifest = real.parent / MANIFEST
            if not manifest.exists():
                raise ValueError(f"{p}: no {MANIFEST} beside it ({real.parent}): not part of a "
                                 "complete report set")
            meta, shards, _ = _listed(manifest)
            match = [s for s in shards if s.path == real]
            if not match:
                raise ValueError(f"{p}: not listed in {manifest} (an extra, stale or copied "
                                 "shard)")
            oracles.append((manifest, meta))
            picked.append((str(given), match[0]))
    _no_duplicates(picked)
    for _, s in picked:  # before any work: a missing shard, or a FIFO or device in its place
        check_regular(s.path, "a report shard", s.manifest)
    first_m, first = oracles[0]
    for m, meta in oracles[1:]:
        if meta != first:
            raise ValueError(f"{m}: oracle parameters {meta} differ from {first} ({first_m})")
    return oracle_from_metadata(first, str(first_m)), [s for _, s in picked]


def _no_duplicates(picked: list[tuple[str, Shard]]) -> None:
    by_path, by_digest, by_id = {}, {}, {}
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


def check_batch_rows(batch_rows: int, max_bytes: float | None = None) -> int:
    """``batch_rows`` checked: an integer whose batch (and the verified blocks kept) fits in
    memory; ValueError naming ``batch_rows``."""
    batch_rows = V.integer_at_least(batch_rows, "batch_rows", 1, 1 << 40)
    check_bytes(batch_rows * READ_BYTES_PER_ROW + VERIFY_CACHE * VERIFY_BLOCK,
                f"reading {batch_rows} reports at a time", "batch_rows", max_bytes)
    return batch_rows


def iter_shard(shard: Shard, oracle: PIRappor, batch_rows: int = READ_BATCH_ROWS,
               max_bytes: float | None = None) -> Iterator[FieldReports]:
    """The reports of one shard, at most ``batch_rows`` at a time, after checking that it is a
    regular file, its size and SHA-256 (first pass), its metadata (format, set, index, oracle),
    schema and row count; then every batch: Parquet page checksums, no missing values, every
    report's range. The second pass parses only bytes verified against the first
    (:class:`_VerifiedReader`), so what is checked is what is counted. Memory is bounded by the
    batch (``READ_BYTES_PER_ROW`` bytes a report), one Parquet page and a few hash blocks,
    whatever the shard's size. The row count is checked once more at the end: a consumer must
    not use a shard's reports before the iterator is exhausted without error."""
    pa, pq = require("dask", "pyarrow", "pyarrow.parquet")
    batch_rows = check_batch_rows(batch_rows, max_bytes)
    path = shard.path
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
        _check_shard_meta(schema, shard, oracle)
        if [f.name for f in schema] != list(COLUMNS) or any(f.type != pa.int64() for f in schema):
            raise ValueError(f"{path}: columns must be a, b of type int64, got {schema}")
        if pf.metadata.num_rows != shard.rows:
            raise ValueError(f"{path}: {pf.metadata.num_rows} rows, {shard.manifest} says "
                             f"{shard.rows}")
        seen = 0
        batches = pf.iter_batches(batch_size=batch_rows, columns=list(COLUMNS), use_threads=False)
        while True:
            try:
                batch = next(batches, None)
            except Exception as err:
                raise reader.failure or ValueError(
                    f"{path}: unreadable report columns after {seen} rows ({err})") from None
            if batch is None:
                break
            a, b = batch.column(0), batch.column(1)
            if a.null_count or b.null_count:
                raise ValueError(f"{path}: {a.null_count} + {b.null_count} missing values in "
                                 f"rows {seen} to {seen + batch.num_rows}; expected {shard.rows} "
                                 "complete rows")
            seen += batch.num_rows
            if seen > shard.rows:
                break
            try:
                checked = oracle.check_reports(FieldReports(a.to_numpy(), b.to_numpy(), oracle.p))
            except (ValueError, TypeError) as err:
                raise ValueError(f"{path}: {err}") from None
            yield checked
        if seen != shard.rows:
            raise ValueError(f"{path}: {seen} rows read, {shard.manifest} says {shard.rows}")


def count_shard(shard: Shard, oracle: PIRappor, batch_rows: int = READ_BATCH_ROWS
                ) -> tuple[np.ndarray, int]:
    """(support counts, reports) of one shard, read and counted ``batch_rows`` at a time (the
    partial counts are integers: their sum is exactly the count of the whole shard)."""
    counts, n = np.zeros(oracle.k, np.int64), 0
    for reports in iter_shard(shard, oracle, batch_rows):
        counts += oracle.counts(reports)
        n += len(reports)
    return counts, n


def read_shard(shard: Shard, oracle: PIRappor, max_bytes: float | None = None
               ) -> FieldReports:
    """All reports of one shard in memory (every check of :func:`iter_shard`); the memory of
    the whole shard is estimated first and refused above ``max_bytes``. Aggregation does not
    use this: it counts batch by batch (:func:`count_shard`)."""
    check_bytes(shard.rows * READ_BYTES_PER_ROW, f"{shard.path}: reading all {shard.rows} "
                "reports at once", "the shard size (or read it in batches: iter_shard)",
                max_bytes)
    parts = list(iter_shard(shard, oracle, max(1, min(shard.rows, READ_BATCH_ROWS)), max_bytes))
    if not parts:
        return FieldReports(np.zeros(0, np.int64), np.zeros(0, np.int64), oracle.p)
    return FieldReports(np.concatenate([r.a for r in parts]), np.concatenate([r.b for r in parts]),
                        oracle.p)


def _check_shard_meta(schema, shard: Shard, oracle: PIRappor) -> None:
    path = str(shard.path)
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise ValueError(f"{path}: no ldpcompress metadata (not a report file)")
    if len(raw) > MAX_META_BYTES:
        raise ValueError(f"{path}: ldpcompress metadata of {len(raw)} bytes is too large")
    meta = parse_json(raw, path, "ldpcompress metadata")
    if get_key(meta, "format", (int,), path, "") != FORMAT:
        raise ValueError(f"{path}: unknown report file format {meta['format']}")
    want = shard_meta(shard.set_id, shard.index, oracle_metadata(oracle))
    for key in ("set", "shard", "oracle"):
        if get_key(meta, key, (type(want[key]),), path, "") != want[key]:
            raise ValueError(f"{path}: key {key!r} is {meta[key]!r}, {shard.manifest} says "
                             f"{want[key]!r}")
