"""Writing report sets: any registered randomizer's reports as sharded Parquet files, the
manifest written last.

:class:`ReportSetWriter` writes a set one shard at a time into a directory prepared by
``output_dir`` (created, locked, emptied only with ``overwrite``): each batch of reports is
validated and converted by the randomizer (``to_columns``) and written in its columns
(``columns``: the layout and encodings) with Parquet page checksums, in row groups of at most
``ROW_GROUP_ROWS`` rows, while the bytes are hashed; the manifest (``manifest``), with the
randomizer's spec and every shard's rows, size and SHA-256, is written last and atomically.
``write_reports`` writes reports held in memory; ``write_items`` randomizes a stream of inputs
``CHUNK`` at a time, so memory is bounded whatever the number of reports, after
``check_disk`` has compared their size with the free space. Needs the optional extra ``[dask]``
(pyarrow). See docs/guide.md, section 3, "Report sets and aggregation".
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..core.limits import format_bytes
from ..core.optional import require
from ..core.progress import bar
from ..randomizers import registry
from ..randomizers.contract import LocalRandomizer, check_columns, check_randomizer
from ..randomizers.estimator import check_flag
from . import columns as C
from .manifest import KIND, MANIFEST, MAX_SHARDS, check_info, plain_name, write_json_atomic
from .budget import check_readable
from .metadata import FORMAT, META_KEY, RANDOMIZER_KEY, randomizer_from_spec, shard_meta
from .output_dir import LOCK, check_empty, create_output_dir, take_lock
from .reader import batch_rows_for

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

    ``with ReportSetWriter(out, randomizer, shards=8) as w: w.write_shard(batches)`` eight
    times (each batch: reports of the randomizer, as its ``randomize_many`` returns them).
    Until it completes, the directory holds an incomplete manifest (refused by readers, and
    removable by ``overwrite``); on an exception the partial set is removed -- only the files
    this writer created. One writer per directory: the writer holds a lock file (created with
    O_CREAT | O_EXCL, removed when it finishes or aborts), and a second writer is refused
    naming the directory.
    """

    def __init__(self, out_dir: str | os.PathLike, randomizer: LocalRandomizer, shards: int,
                 overwrite: bool = False, prefix: str = "reports", files: Iterable[str] = (),
                 info: Mapping[str, object] | None = None):
        check_randomizer(randomizer)
        self.info = check_info(info)
        self.spec = registry.spec(randomizer)  # refuses an unregistered randomizer
        # a set the server could not read is refused before anything is written
        check_readable(randomizer, "report set")
        self.shards = V.integer_at_least(shards, "shards", 1, MAX_SHARDS)
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, got {type(prefix).__name__}")
        self.names = [plain_name(f"{prefix}-{i:05d}.parquet", "prefix", "prefix", ".parquet")
                      for i in range(self.shards)]
        self.files = [plain_name(f, "files", "files") for f in files]
        every = self.names + self.files
        if MANIFEST in self.files or len(set(every)) < len(every):
            raise ValueError(f"file names {self.files} clash with the shards or the manifest")
        self.randomizer = randomizer
        overwrite = check_flag(overwrite, "overwrite")
        self.out = create_output_dir(out_dir)
        self.created: list[Path] = []  # what abort() may remove: this writer's files only
        self.lock: Path | None = take_lock(self.out)
        try:
            check_empty(self.out, overwrite, self.names + self.files, ignore={LOCK})
            self.set_id = os.urandom(16).hex()  # names the set; not privacy randomness
            # the spec must rebuild this very randomizer (what a reader will do)
            try:
                again = randomizer_from_spec(json.loads(json.dumps(self.spec, allow_nan=False)),
                                             f"report set {self.out}")
            except ValueError as err:
                raise ValueError(f"{randomizer.describe()}: its params() do not rebuild it, so "
                                 f"no reader could: {err}") from None
            if again != randomizer:
                raise ValueError(f"{randomizer.describe()}: its params() do not rebuild it "
                                 f"(registry.build(name, params) gives {again.describe()})")
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
            kind=KIND, format=FORMAT, complete=complete, set=self.set_id,
            **{RANDOMIZER_KEY: self.spec}, **self.info,
            reports=sum(e.get("rows", 0) for e in shards), shards=shards, files=files),
            durable=complete, tag=self.set_id)

    @property
    def paths(self) -> list[Path]:
        return [self.out / e["file"] for e in self.entries]

    def write_shard(self, batches: Iterable) -> Path:
        """The next shard: every batch of reports (validated by the randomizer's
        ``to_columns``, whose arrays must match its ``report_columns()``) is written in row
        groups."""
        source = f"{self.randomizer.describe()}.to_columns"
        return self._write_shard(check_columns(self.randomizer.to_columns(b),
                                               self.randomizer.report_columns(), source)
                                 for b in batches)

    def _write_shard(self, column_batches: Iterable[Mapping[str, np.ndarray]]) -> Path:
        """The next shard from batches of validated columns (``to_columns``' output)."""
        pa, pq = require("dask", "pyarrow", "pyarrow.parquet")
        i = len(self.entries)
        if i >= self.shards:
            raise ValueError(f"all {self.shards} shards are already written")
        path = self.out / self.names[i]
        meta = json.dumps(shard_meta(self.set_id, i, self.spec), allow_nan=False).encode()
        schema = C.arrow_schema(self.randomizer, {META_KEY: meta})
        first = self.randomizer.report_columns()[0].name
        rows = 0
        try:
            with self._create(path) as fh:
                sink = _HashingFile(fh)
                with pq.ParquetWriter(sink, schema, data_page_size=PAGE_BYTES,
                                      **C.write_options(self.randomizer)) as writer:
                    for cols in column_batches:
                        # row groups of at most ROW_GROUP_ROWS rows whatever the batch size
                        writer.write_table(C.to_table(self.randomizer, cols, schema),
                                           row_group_size=ROW_GROUP_ROWS)
                        rows += int(np.shape(cols[first])[0])
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


def write_reports(out_dir: str | os.PathLike, randomizer: LocalRandomizer, reports,
                  shards: int = 4, prefix: str = "reports", overwrite: bool = False,
                  progress: bool = False) -> list[Path]:
    """Write reports of ``randomizer`` (as its ``randomize_many`` returns them) as a report set
    of ``shards`` Parquet files in out_dir (which must be new or empty, unless ``overwrite``);
    returns the shards' paths. ``progress``: a bar of the reports written, on stderr."""
    check_randomizer(randomizer)
    cols = check_columns(randomizer.to_columns(reports), randomizer.report_columns(),
                         f"{randomizer.describe()}.to_columns")  # validated once
    shards = V.integer_at_least(shards, "shards", 1, MAX_SHARDS)
    n = int(np.shape(cols[randomizer.report_columns()[0].name])[0])

    def batches(lo, hi, done):
        for j in range(lo, hi, CHUNK):
            yield {name: col[j:min(j + CHUNK, hi)] for name, col in cols.items()}
            done.update(min(j + CHUNK, hi) - j)

    with ReportSetWriter(out_dir, randomizer, shards, overwrite, prefix) as w, \
            bar(n, "write reports", progress, unit="reports") as done:
        for i in range(shards):
            w._write_shard(batches(i * n // shards, (i + 1) * n // shards, done))
    return w.paths


class _Rechunk:
    """Pieces of exactly the requested numbers of rows out of an iterator of input arrays
    (items: 1-D; vectors: one per row)."""

    def __init__(self, chunks: Iterable[np.ndarray]):
        self.it, self.pending, self.taken = iter(chunks), np.zeros(0, np.int64), 0

    def take(self, rows: int, most: int) -> Iterator[np.ndarray]:
        while rows > 0:
            if len(self.pending) == 0:
                nxt = next(self.it, None)
                if nxt is None:
                    raise ValueError(f"the items ended after {self.taken}: fewer than counted "
                                     "(did the input change while being read?)")
                self.pending = np.asarray(nxt)
                if self.pending.ndim == 0:
                    raise TypeError(f"inputs must come as arrays (one input per row), got "
                                    f"{type(nxt).__name__}")
                continue
            piece, self.pending = self.pending[:min(rows, most)], self.pending[min(rows, most):]
            rows -= len(piece)
            self.taken += len(piece)
            yield piece

    def finish(self) -> None:
        if len(self.pending) or next(self.it, None) is not None:
            raise ValueError(f"more items than the {self.taken} counted (did the input change "
                             "while being read?)")


def write_items(out_dir: str | os.PathLike, randomizer: LocalRandomizer,
                chunks: Iterable[np.ndarray], n: int, shards: int, overwrite: bool = False,
                entropy: Entropy = SYSTEM, files: Mapping[str, Callable[[], bytes]] | None = None,
                free_bytes: float | None = None, progress: bool = False,
                info: Mapping[str, object] | None = None) -> list[Path]:
    """Randomize a stream of n users' inputs (arrays of any sizes, as ``randomize_many``
    takes them) into a report set of ``shards`` shards, CHUNK rows at a time (fewer for wide
    reports: ``reader.batch_rows_for``): memory stays bounded whatever n. ``files``: other files of the set, name -> a function giving their
    bytes, called once every shard is written (e.g. the true counts of simulated data; real
    users' inputs must never be stored). ``progress``: a bar of the reports written, on
    stderr. ``info``: what the manifest says of the set (``manifest.check_info``: how the coins
    were drawn, the item names). Returns the shards' paths."""
    check_randomizer(randomizer)
    n = V.integer_at_least(n, "n", 1)
    shards = V.integer_at_least(shards, "shards", 1, min(n, MAX_SHARDS))
    files = dict(files or {})
    check_disk(out_dir, n, randomizer, free_bytes)
    source = _Rechunk(chunks)
    most = min(CHUNK, batch_rows_for(randomizer))  # memory bounded for wide reports too

    def batches(rows):
        for xs in source.take(rows, most):
            yield randomizer.randomize_many(xs, entropy)
            done.update(len(xs))  # the batch is written when the writer asks for the next

    with ReportSetWriter(out_dir, randomizer, shards, overwrite, files=files, info=info) as w, \
            bar(n, "write reports", progress, unit="reports") as done:
        for i in range(shards):
            w.write_shard(batches((i + 1) * n // shards - i * n // shards))
        source.finish()
        for name, make in files.items():
            w.add_file(name, make())
    return w.paths


def check_disk(out_dir: str | os.PathLike, n: int, randomizer: LocalRandomizer,
               free_bytes: float | None = None) -> None:
    """Refuse when the wire size of n reports (``bits_per_report`` each: Parquet stores about
    that, see ``columns``) exceeds the free space of the output's file system."""
    need = n * randomizer.bits_per_report / 8
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
        raise ValueError(f"{n} reports need about {format_bytes(need)} on disk (their wire "
                         f"size), but only {format_bytes(free_bytes)} is free under {out_dir}: "
                         "reduce n")
