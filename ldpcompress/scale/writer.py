"""Writing report sets: PI-RAPPOR reports as sharded Parquet files, the manifest written last.

:class:`ReportSetWriter` writes a set one shard at a time into a directory prepared by
``output_dir`` (created, locked, emptied only with ``overwrite``): each shard's reports are
checked against the oracle and written as int64 columns ``a``, ``b`` with Parquet page
checksums, in row groups of at most ``ROW_GROUP_ROWS`` rows, while the bytes are hashed; the
manifest (``manifest``), with every shard's rows, size and SHA-256, is written last and
atomically. ``write_reports`` writes reports held in memory; ``write_items`` randomizes a
stream of items ``CHUNK`` at a time, so memory is bounded whatever the number of reports, after
``check_disk`` has compared their size with the free space. Needs the optional extra ``[dask]``
(pyarrow). See docs/guide.md, section 3, "Report sets and aggregation".
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import shutil
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..core.limits import format_bytes
from ..core.optional import require
from ..core.progress import bar
from ..randomizers.estimator import check_flag
from ..randomizers.pirappor import FieldReports, PIRappor
from .manifest import KIND, MANIFEST, MAX_SHARDS, plain_name, write_json_atomic
from .metadata import COLUMNS, FORMAT, META_KEY, oracle_from_metadata, oracle_metadata, shard_meta
from .output_dir import LOCK, check_empty, create_output_dir, take_lock

__all__ = ["CHUNK", "ROW_GROUP_ROWS", "PAGE_BYTES", "ReportSetWriter", "write_reports",
           "write_items", "check_disk"]


CHUNK = 1 << 20               # rows randomized and written at a time (one Parquet row group)
ROW_GROUP_ROWS = CHUNK        # largest Parquet row group written, whatever the batches given
PAGE_BYTES = 1 << 20          # Parquet data page size written


class _HashingFile(io.RawIOBase):
    """A write-only file that hashes (SHA-256) and counts every byte it writes."""

    def __init__(self, fh):
        super().__init__()
        self.fh, self.sha, self.size = fh, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.sha.update(data)
        self.size += len(data)
        return self.fh.write(data)


def _cannot_write(path: Path, err: OSError) -> ValueError:
    """A failed write (disk full, [Errno 27] file size limit ...) as an error naming the file."""
    return ValueError(f"{path}: cannot write ({err.strerror or err})")


class ReportSetWriter:
    """Write a report set one shard at a time; the manifest is written last, atomically.

    ``with ReportSetWriter(out, oracle, shards=8) as w: w.write_shard(batches)`` eight times.
    Until it completes, the directory holds an incomplete manifest (refused by readers, and
    removable by ``overwrite``); on an exception the partial set is removed -- only the files
    this writer created. One writer per directory: the writer holds a lock file (created with
    O_CREAT | O_EXCL, removed when it finishes or aborts), and a second writer is refused
    naming the directory.
    """

    def __init__(self, out_dir: str | os.PathLike, oracle: PIRappor, shards: int,
                 overwrite: bool = False, prefix: str = "reports", files: Iterable[str] = ()):
        if not isinstance(oracle, PIRappor):
            raise TypeError(f"oracle must be a PIRappor, got {type(oracle).__name__}")
        self.shards = V.integer_at_least(shards, "shards", 1, MAX_SHARDS)
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, got {type(prefix).__name__}")
        self.names = [plain_name(f"{prefix}-{i:05d}.parquet", "prefix", "prefix", ".parquet")
                      for i in range(self.shards)]
        self.files = [plain_name(f, "files", "files") for f in files]
        every = self.names + self.files
        if MANIFEST in self.files or len(set(every)) < len(every):
            raise ValueError(f"file names {self.files} clash with the shards or the manifest")
        self.oracle = oracle
        overwrite = check_flag(overwrite, "overwrite")
        self.out = create_output_dir(out_dir)
        self.created: list[Path] = []  # what abort() may remove: this writer's files only
        self.lock: Path | None = take_lock(self.out)
        try:
            check_empty(self.out, overwrite, self.names + self.files, ignore={LOCK})
            self.set_id = os.urandom(16).hex()  # names the set; not privacy randomness
            self.meta = oracle_metadata(oracle)
            # a set the server could not read is refused before anything is written
            oracle_from_metadata(self.meta, f"report set {self.out}")
            self.entries: list[dict] = []
            self.extra: list[dict] = []
            self._manifest(complete=False)
        except BaseException:
            self.abort()
            raise

    def _manifest(self, complete: bool) -> None:
        """The final manifest, or (before the first shard) one naming the planned files."""
        shards = self.entries if complete else [dict(file=n) for n in self.names]
        files = self.extra if complete else [dict(file=n) for n in self.files]
        path = self.out / MANIFEST
        if path not in self.created:
            self.created.append(path)
        write_json_atomic(path, dict(
            kind=KIND, format=FORMAT, complete=complete, set=self.set_id, oracle=self.meta,
            reports=sum(e.get("rows", 0) for e in shards), shards=shards, files=files),
            durable=complete, tag=self.set_id)

    @property
    def paths(self) -> list[Path]:
        return [self.out / e["file"] for e in self.entries]

    def write_shard(self, batches: Iterable[FieldReports]) -> Path:
        """The next shard: every batch (checked against the oracle) becomes a row group."""
        pa, pq = require("dask", "pyarrow", "pyarrow.parquet")
        i = len(self.entries)
        if i >= self.shards:
            raise ValueError(f"all {self.shards} shards are already written")
        path = self.out / self.names[i]
        schema = pa.schema([(c, pa.int64()) for c in COLUMNS]).with_metadata(
            {META_KEY: json.dumps(shard_meta(self.set_id, i, self.meta), allow_nan=False).encode()})
        rows = 0
        try:
            with self._create(path) as fh:
                sink = _HashingFile(fh)
                with pq.ParquetWriter(sink, schema, write_page_checksum=True,
                                      data_page_size=PAGE_BYTES) as writer:
                    for batch in batches:
                        r = self.oracle.check_reports(batch)
                        # row groups of at most ROW_GROUP_ROWS rows whatever the batch size
                        writer.write_table(pa.table({"a": r.a, "b": r.b}, schema=schema),
                                           row_group_size=ROW_GROUP_ROWS)
                        rows += len(r)
        except OSError as err:  # disk full, file size limit ...: name the file
            raise _cannot_write(path, err) from None
        self.entries.append(dict(file=path.name, rows=rows, bytes=sink.size,
                                 sha256=sink.sha.hexdigest()))
        return path

    def add_file(self, name: str, data: bytes) -> Path:
        """A file of the set (e.g. simulated true counts), listed with its digest."""
        if name not in self.files:
            raise ValueError(f"{name!r} was not announced in files={self.files}")
        path = self.out / name
        try:
            with self._create(path) as fh:
                fh.write(data)
        except OSError as err:
            raise _cannot_write(path, err) from None
        self.extra.append(dict(file=name, bytes=len(data), sha256=hashlib.sha256(data).hexdigest()))
        return path

    def _create(self, path: Path):
        """A new file of the set, opened with O_EXCL (never an existing file), and remembered
        so that abort() removes it."""
        try:
            fh = open(path, "xb")
        except FileExistsError:
            raise ValueError(f"{path}: appeared while this report set was being written (another "
                             "program writes into the directory): nothing of it was changed") \
                from None
        except OSError as err:
            raise ValueError(f"{path}: cannot create ({err.strerror or err})") from None
        self.created.append(path)
        return fh

    def close(self) -> None:
        if len(self.entries) != self.shards:
            raise ValueError(f"only {len(self.entries)} of {self.shards} shards were written")
        if len(self.extra) != len(self.files):
            raise ValueError(f"files {self.files} were announced but not all written")
        self._manifest(complete=True)
        self._release()

    def abort(self) -> None:
        """Remove every file this writer created (the manifest first: a half-removed set is
        never taken as complete), then release the directory's lock."""
        try:
            for path in sorted(self.created, key=lambda p: p.name != MANIFEST):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            self.created = []
        finally:
            self._release()

    def _release(self) -> None:
        if self.lock is not None:
            with contextlib.suppress(FileNotFoundError):
                self.lock.unlink()
            self.lock = None

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if kind is None:
            try:
                self.close()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()
        return False


def write_reports(out_dir: str | os.PathLike, oracle: PIRappor, reports: FieldReports,
                  shards: int = 4, prefix: str = "reports", overwrite: bool = False,
                  progress: bool = False) -> list[Path]:
    """Write reports as a report set of ``shards`` Parquet files in out_dir (which must be new
    or empty, unless ``overwrite``); returns the shards' paths. ``progress``: a bar of the
    reports written, on stderr."""
    reports = oracle.check_reports(reports)
    shards = V.integer_at_least(shards, "shards", 1, MAX_SHARDS)
    n = len(reports)

    def batches(lo, hi, done):
        for j in range(lo, hi, CHUNK):
            yield FieldReports(reports.a[j:min(j + CHUNK, hi)], reports.b[j:min(j + CHUNK, hi)],
                               reports.p)
            done.update(min(j + CHUNK, hi) - j)

    with ReportSetWriter(out_dir, oracle, shards, overwrite, prefix) as w, \
            bar(n, "write reports", progress, unit="reports") as done:
        for i in range(shards):
            w.write_shard(batches(i * n // shards, (i + 1) * n // shards, done))
    return w.paths


class _Rechunk:
    """Pieces of exactly the requested sizes out of an iterator of item arrays."""

    def __init__(self, chunks: Iterable[np.ndarray]):
        self.it, self.pending, self.taken = iter(chunks), np.zeros(0, np.int64), 0

    def take(self, rows: int, most: int) -> Iterator[np.ndarray]:
        while rows > 0:
            if self.pending.size == 0:
                nxt = next(self.it, None)
                if nxt is None:
                    raise ValueError(f"the items ended after {self.taken}: fewer than counted "
                                     "(did the input change while being read?)")
                self.pending = np.asarray(nxt)
                continue
            piece, self.pending = self.pending[:min(rows, most)], self.pending[min(rows, most):]
            rows -= piece.size
            self.taken += piece.size
            yield piece

    def finish(self) -> None:
        if self.pending.size or next(self.it, None) is not None:
            raise ValueError(f"more items than the {self.taken} counted (did the input change "
                             "while being read?)")


def write_items(out_dir: str | os.PathLike, oracle: PIRappor, chunks: Iterable[np.ndarray],
                n: int, shards: int, overwrite: bool = False, true_counts: bool = False,
                entropy: Entropy = SYSTEM, free_bytes: float | None = None,
                progress: bool = False
                ) -> tuple[list[Path], np.ndarray | None]:
    """Randomize a stream of n items (arrays of any sizes) into a report set of ``shards``
    shards, CHUNK rows at a time: memory stays bounded whatever n. With ``true_counts`` (for
    simulated data only: real users' histogram must never be stored) the items' histogram is
    written as ``true_counts.npy`` in the set and returned. ``progress``: a bar of the reports
    written, on stderr."""
    n = V.integer_at_least(n, "n", 1)
    shards = V.integer_at_least(shards, "shards", 1, min(n, MAX_SHARDS))
    check_disk(out_dir, n, oracle, free_bytes)
    files = ("true_counts.npy",) if true_counts else ()
    truth = np.zeros(oracle.k, np.int64) if true_counts else None
    source = _Rechunk(chunks)

    def batches(rows):
        for xs in source.take(rows, CHUNK):
            if truth is not None:
                truth[:] += np.bincount(V.items(xs, oracle.k), minlength=oracle.k)
            yield oracle.randomize_many(xs, entropy)
            done.update(len(xs))  # the batch is written when the writer asks for the next

    with ReportSetWriter(out_dir, oracle, shards, overwrite, files=files) as w, \
            bar(n, "write reports", progress, unit="reports") as done:
        for i in range(shards):
            w.write_shard(batches((i + 1) * n // shards - i * n // shards))
        source.finish()
        if truth is not None:
            buf = io.BytesIO()
            np.save(buf, truth)
            w.add_file(files[0], buf.getvalue())
    return w.paths, truth


def check_disk(out_dir: str | os.PathLike, n: int, oracle: PIRappor,
               free_bytes: float | None = None) -> None:
    """Refuse when even the information content of n reports (2 log2 p bits each) exceeds the
    free space of the output's file system."""
    need = n * 2 * math.log2(oracle.p) / 8
    if free_bytes is None:
        probe = Path(out_dir).absolute()
        while not probe.exists():
            probe = probe.parent
        usage = shutil.disk_usage(probe)
        if usage.total == 0:
            raise ValueError(f"{out_dir}: is on a file system without storage (0 B in all, "
                             "such as /proc or /sys): choose a directory on a disk")
        free_bytes = usage.free
    if need > free_bytes:
        raise ValueError(f"{n} reports need at least {format_bytes(need)} on disk, but only "
                         f"{format_bytes(free_bytes)} is free under {out_dir}: reduce n")

