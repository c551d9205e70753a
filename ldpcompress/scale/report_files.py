"""PI-RAPPOR report sets: sharded Parquet files plus a manifest that gives the set an identity.

A report set is one directory holding shards ``reports-00000.parquet``, ... and ``manifest.json``.
Each shard has int64 columns ``a`` and ``b`` (Parquet page checksums on) and, under the schema
metadata key ``ldpcompress``, JSON with the format version, the set's random id, the shard's
index and the oracle's parameters. The manifest, written last and atomically, holds the format
version, the set id, the oracle's parameters, the total report count and, per shard, its file
name, row count, size and SHA-256. Readers check all of it before counting anything: a missing,
extra, duplicated, copied, truncated or altered shard, a stale or interrupted set, malformed
metadata and anything but a regular file in a listed file's place (a FIFO would block) are
each a ValueError naming the file (and the key). Writing streams shard by shard in row groups
of at most ``ROW_GROUP_ROWS`` rows, so memory is bounded by ``CHUNK`` rows whatever the number
of reports; one writer at a time per directory (a lock file). Reading streams too: a shard is
hashed block by block, then parsed and counted ``READ_BATCH_ROWS`` reports at a time from
bytes verified against that hash, so any shard that can be written can be read. Needs the
optional extra ``[dask]`` (pyarrow).
"""
from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import math
import os
import shutil
import socket
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM
from ..core.limits import check_bytes, format_bytes
from ..core.optional import require
from ..core.progress import bar
from ..randomizers.estimator import histogram_bytes
from ..randomizers.pirappor import MAX_PRIME, FieldReports, PIRappor

__all__ = ["FORMAT", "META_KEY", "MANIFEST", "KIND", "CHUNK", "ROW_GROUP_ROWS", "CSV_CHUNK",
           "MAX_SHARDS", "MAX_MANIFEST_BYTES", "MAX_META_BYTES", "READ_BYTES_PER_ROW",
           "READ_BATCH_ROWS", "READ_BUFFER", "PAGE_BYTES", "VERIFY_BLOCK", "VERIFY_CACHE",
           "COLUMNS", "oracle_metadata", "oracle_from_metadata", "Shard", "check_regular",
           "open_regular", "read_manifest", "LOCK", "prepare_output", "ReportSetWriter",
           "write_reports", "write_items", "check_output_file", "check_disk", "csv_items",
           "count_csv_items", "collect", "iter_shard", "count_shard", "read_shard"]


FORMAT = 2
META_KEY = b"ldpcompress"
MANIFEST = "manifest.json"
KIND = "ldpcompress report set"
CHUNK = 1 << 20               # rows randomized and written at a time (one Parquet row group)
ROW_GROUP_ROWS = CHUNK        # largest Parquet row group written, whatever the batches given
CSV_CHUNK = 1 << 16           # CSV lines parsed into Python ints before becoming an array
MAX_SHARDS = 100_000
MAX_MANIFEST_BYTES = 1 << 28  # 256 MiB: about two million shard entries
MAX_META_BYTES = 1 << 16
READ_BYTES_PER_ROW = 48       # a, b int64 as Arrow buffers, as numpy, and the checked copy
READ_BATCH_ROWS = 1 << 20     # reports read, checked and counted at a time (about 48 MiB)
READ_BUFFER = 1 << 20         # Parquet column chunks are streamed in pieces of this size
PAGE_BYTES = 1 << 20          # Parquet data page size written
VERIFY_BLOCK = 1 << 20        # shards are hashed block by block (see _VerifiedReader)
VERIFY_CACHE = 8              # verified blocks kept while reading a shard
COLUMNS = ("a", "b")


def _pyarrow():
    return require("dask", "pyarrow", "pyarrow.parquet")


# -- metadata ---------------------------------------------------------------------------------
def oracle_metadata(oracle: PIRappor) -> dict:
    """The parameters that rebuild the oracle (and the field check s)."""
    return dict(oracle="pi-rappor", k=oracle.k, eps=oracle.requested_eps,
                symmetric=oracle.symmetric, p=oracle.p, s=oracle.s)


def _get(doc, key: str, kinds, source: str, what: str):
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


def _get_int(doc, key: str, source: str, what: str = "", low: int = 0,
             high: int = V.MAX_N) -> int:
    value = _get(doc, key, (int,), source, what)
    if not low <= value <= high:
        name = f"{what}.{key}" if what else key
        raise ValueError(f"{source}: key {name!r} must be an integer in [{low}, {high}], "
                         f"got {value!r}")
    return value


def oracle_from_metadata(meta, source: str = "metadata", max_bytes=None) -> PIRappor:
    """Rebuild (and check) the oracle described by untrusted metadata. The server's memory for
    this k is estimated first and refused with the figure; every error names source and key."""
    name = _get(meta, "oracle", (str,), source, "oracle")
    if name != "pi-rappor":
        raise ValueError(f"{source}: key 'oracle.oracle' must be 'pi-rappor', got {name!r}")
    k = _get_int(meta, "k", source, "oracle", 2, MAX_PRIME - 1)
    eps = _get(meta, "eps", (int, float), source, "oracle")
    symmetric = _get(meta, "symmetric", (bool,), source, "oracle")
    p = _get_int(meta, "p", source, "oracle", 3, MAX_PRIME)
    s = _get_int(meta, "s", source, "oracle", 1, MAX_PRIME)
    from ..randomizers.base import chunks_for
    try:  # the worst case: one histogram row per kernel chunk, plus counts and estimates
        histogram_bytes(k, chunks_for(1 << 40, k) + 3, max_bytes, "the server histogram")
    except ValueError as err:
        raise ValueError(f"{source}: key 'oracle.k' = {k}: {err}") from None
    try:
        oracle = PIRappor(k, eps, symmetric=symmetric, p=p)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{source}: invalid oracle parameters: {err}") from None
    if oracle.s != s:
        raise ValueError(f"{source}: inconsistent parameters: s={s} but p, eps give s={oracle.s}")
    return oracle


def _shard_meta(set_id: str, index: int, oracle: dict) -> dict:
    return dict(format=FORMAT, set=set_id, shard=index, oracle=oracle)


# -- manifest ---------------------------------------------------------------------------------
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


def _plain_name(name, source: str, key: str, suffix: str | None = None) -> str:
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


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _not_regular(path, mode: int, what: str) -> ValueError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return ValueError(f"{path}: is {kind}, not a regular file: refusing to read it as {what} "
                      "(reading a FIFO or device could block or never end)")


def check_regular(path, what: str, listed_in=None) -> os.stat_result:
    """The stat (symlinks followed) of a file that must be a regular file: anything else (FIFO,
    socket, device, directory) is refused before it is opened, naming the file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        where = f" (listed in {listed_in})" if listed_in is not None else ""
        raise ValueError(f"{path}: missing{where}") from None
    except OSError as err:
        raise ValueError(f"{path}: cannot read ({err.strerror or err})") from None
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode, what)
    return st


def open_regular(path, what: str, listed_in=None):
    """Open a regular file for reading (binary). Checked by :func:`check_regular` before the
    open, and again on the descriptor, which is opened non-blocking: a FIFO swapped in between
    cannot make the open hang."""
    check_regular(path, what, listed_in)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) \
        | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        where = f" (listed in {listed_in})" if listed_in is not None else ""
        raise ValueError(f"{path}: missing{where}") from None
    except OSError as err:
        raise ValueError(f"{path}: cannot read ({err.strerror or err})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode, what)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _load_json(path: Path, limit: int, what: str):
    with open_regular(path, f"a {what}") as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            if size > limit:
                raise ValueError(f"{path}: {what} of {format_bytes(size)} is larger than "
                                 f"{format_bytes(limit)}: not a valid {what}")
            raw = fh.read(limit + 1)
        except OSError as err:
            raise ValueError(f"{path}: cannot read the {what} ({err.strerror or err})") from None
    return _parse_json(raw, str(path), what)


def _parse_json(raw: bytes, source: str, what: str):
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ValueError(f"{source}: the {what} is not valid JSON ({type(err).__name__}: "
                         f"{str(err)[:200]})") from None


def _manifest_names(doc, source: str) -> list[str]:
    """File names a (possibly incomplete) manifest claims, for replacing the set."""
    names = []
    for i, entry in enumerate(_get(doc, "shards", (list,), source, "")):
        names.append(_plain_name(_get(entry, "file", (str,), source, f"shards[{i}]"), source,
                                 f"shards[{i}].file", ".parquet"))
    for i, entry in enumerate(_get(doc, "files", (list,), source, "")):
        names.append(_plain_name(_get(entry, "file", (str,), source, f"files[{i}]"), source,
                                 f"files[{i}].file"))
    return names


def read_manifest(path) -> tuple[dict, list[Shard]]:
    """The oracle parameters and shards of one complete report set, every field checked; the
    shards' files themselves are checked when read (:func:`read_shard`)."""
    path = Path(path)
    source = str(path)
    doc = _load_json(path, MAX_MANIFEST_BYTES, "manifest")
    if _get(doc, "kind", (str,), source, "") != KIND:
        raise ValueError(f"{source}: key 'kind' must be {KIND!r}: not an ldpcompress manifest")
    fmt = _get(doc, "format", (int,), source, "")
    if fmt != FORMAT:
        raise ValueError(f"{source}: unknown report set format {fmt} (this version reads {FORMAT})")
    if not _get(doc, "complete", (bool,), source, ""):
        raise ValueError(f"{source}: the report set is incomplete (its writing was interrupted): "
                         "write it again (--overwrite)")
    set_id = _hex_digest_set(_get(doc, "set", (str,), source, ""), source)
    oracle = _get(doc, "oracle", (dict,), source, "")
    oracle_from_metadata(oracle, source)
    total = _get_int(doc, "reports", source)
    entries = _get(doc, "shards", (list,), source, "")
    if not 1 <= len(entries) <= MAX_SHARDS:
        raise ValueError(f"{source}: key 'shards' must list 1 to {MAX_SHARDS} shards, "
                         f"got {len(entries)}")
    _manifest_names(doc, source)
    folder = path.parent
    shards, names, digests = [], set(), set()
    for i, e in enumerate(entries):
        key = f"shards[{i}]"
        name = _plain_name(_get(e, "file", (str,), source, key), source, f"{key}.file", ".parquet")
        digest = _hex_digest(_get(e, "sha256", (str,), source, key), source, f"{key}.sha256")
        if name in names or digest in digests:
            raise ValueError(f"{source}: {key} ({name}) is listed twice")
        names.add(name)
        digests.add(digest)
        shards.append(Shard(folder / name, _get_int(e, "rows", source, key),
                            _get_int(e, "bytes", source, key, 1), digest, i, set_id, path))
    if sum(s.rows for s in shards) != total:
        raise ValueError(f"{source}: key 'reports' = {total} but the shards hold "
                         f"{sum(s.rows for s in shards)} rows")
    return oracle, shards


def _write_json_atomic(path: Path, doc: dict, durable: bool = True, tag: str = "") -> None:
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


# -- writing ----------------------------------------------------------------------------------
LOCK = ".ldpcompress-writer.lock"


def _parquet_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.parquet"))


def _output_dir(out_dir) -> Path:
    """The output directory, created if needed (checked: a path, not a file)."""
    if not isinstance(out_dir, (str, os.PathLike)) or os.fspath(out_dir) == "":
        raise ValueError(f"out must name a directory, got {out_dir!r}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"{out}: cannot create the output directory "
                         f"({err.strerror or err})") from None
    return out


def _take_lock(out: Path) -> Path:
    """Create the writer's lock file in ``out`` exclusively (O_CREAT | O_EXCL): one writer per
    directory at a time; a second one is refused naming the directory."""
    lock = out / LOCK
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     0o644)
    except FileExistsError:
        raise ValueError(f"{out}: another writer is writing a report set into this directory "
                         f"(its lock file {lock} exists): wait for it to finish, or choose "
                         "another directory; if no writer is running (one was killed), remove "
                         "the lock file") from None
    except OSError as err:
        raise ValueError(f"{out}: cannot create the lock file {LOCK} "
                         f"({err.strerror or err})") from None
    with os.fdopen(fd, "w") as fh:
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
    return lock


def _check_empty(out: Path, overwrite: bool, planned: Iterable[str], ignore=()) -> None:
    """Refuse a non-empty directory unless ``overwrite`` (then remove the old set: see
    :func:`prepare_output`); entries named in ``ignore`` (the writer's lock) do not count."""
    try:
        entries = sorted(e for e in out.iterdir() if e.name not in ignore)
    except OSError as err:
        raise ValueError(f"{out}: cannot list the output directory "
                         f"({err.strerror or err})") from None
    if not entries:
        return
    if not overwrite:
        raise ValueError(f"{out} is not empty ({len(entries)} entries, e.g. {entries[0].name}): "
                         "choose a new or empty directory, or pass overwrite=True (--overwrite) "
                         "to replace the report set in it")
    _remove_set(out, set(planned))


def prepare_output(out_dir, overwrite: bool = False, planned: Iterable[str] = ()) -> Path:
    """The output directory, created if needed. A non-empty one is refused unless ``overwrite``,
    which removes the old report set's manifest, shards and files -- only those -- and refuses
    when Parquet files not listed by that manifest (or a planned file name) would remain.
    (:class:`ReportSetWriter` does the same under the directory's writer lock.)"""
    overwrite = _flag(overwrite, "overwrite")
    out = _output_dir(out_dir)
    _check_empty(out, overwrite, planned)
    return out


def _remove_set(out: Path, planned: set[str]) -> None:
    manifest = out / MANIFEST
    owned: set[str] = set()
    if manifest.exists():
        try:
            owned = set(_manifest_names(_load_json(manifest, MAX_MANIFEST_BYTES, "manifest"),
                                        str(manifest)))
        except ValueError as err:
            raise ValueError(f"cannot tell which files of {out} belong to its old report set, "
                             f"so nothing was removed: {err}") from None
    foreign = [p for p in _parquet_files(out) if p.parent != out or p.name not in owned]
    foreign += [out / n for n in sorted(planned - owned) if (out / n).exists()]
    if foreign:
        raise ValueError(f"{foreign[0]}: not part of the report set in {out} (no manifest lists "
                         "it); --overwrite removes only a report set's own files: remove it "
                         "yourself or choose another directory")
    manifest.unlink(missing_ok=True)  # first: a half-removed set is never taken as complete
    for name in owned:
        (out / name).unlink(missing_ok=True)


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


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


class ReportSetWriter:
    """Write a report set one shard at a time; the manifest is written last, atomically.

    ``with ReportSetWriter(out, oracle, shards=8) as w: w.write_shard(batches)`` eight times.
    Until it completes, the directory holds an incomplete manifest (refused by readers, and
    removable by ``overwrite``); on an exception the partial set is removed -- only the files
    this writer created. One writer per directory: the writer holds a lock file (created with
    O_CREAT | O_EXCL, removed when it finishes or aborts), and a second writer is refused
    naming the directory.
    """

    def __init__(self, out_dir, oracle: PIRappor, shards: int, overwrite: bool = False,
                 prefix: str = "reports", files: Iterable[str] = ()):
        if not isinstance(oracle, PIRappor):
            raise TypeError(f"oracle must be a PIRappor, got {type(oracle).__name__}")
        self.shards = V.integer_at_least(shards, "shards", 1, MAX_SHARDS)
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, got {type(prefix).__name__}")
        self.names = [_plain_name(f"{prefix}-{i:05d}.parquet", "prefix", "prefix", ".parquet")
                      for i in range(self.shards)]
        self.files = [_plain_name(f, "files", "files") for f in files]
        every = self.names + self.files
        if MANIFEST in self.files or len(set(every)) < len(every):
            raise ValueError(f"file names {self.files} clash with the shards or the manifest")
        self.oracle = oracle
        overwrite = _flag(overwrite, "overwrite")
        self.out = _output_dir(out_dir)
        self.created: list[Path] = []  # what abort() may remove: this writer's files only
        self.lock: Path | None = _take_lock(self.out)
        try:
            _check_empty(self.out, overwrite, self.names + self.files, ignore={LOCK})
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
        _write_json_atomic(path, dict(
            kind=KIND, format=FORMAT, complete=complete, set=self.set_id, oracle=self.meta,
            reports=sum(e.get("rows", 0) for e in shards), shards=shards, files=files),
            durable=complete, tag=self.set_id)

    @property
    def paths(self) -> list[Path]:
        return [self.out / e["file"] for e in self.entries]

    def write_shard(self, batches: Iterable[FieldReports]) -> Path:
        """The next shard: every batch (checked against the oracle) becomes a row group."""
        pa, pq = _pyarrow()
        i = len(self.entries)
        if i >= self.shards:
            raise ValueError(f"all {self.shards} shards are already written")
        path = self.out / self.names[i]
        schema = pa.schema([(c, pa.int64()) for c in COLUMNS]).with_metadata(
            {META_KEY: json.dumps(_shard_meta(self.set_id, i, self.meta), allow_nan=False).encode()})
        rows = 0
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
        self.entries.append(dict(file=path.name, rows=rows, bytes=sink.size,
                                 sha256=sink.sha.hexdigest()))
        return path

    def add_file(self, name: str, data: bytes) -> Path:
        """A file of the set (e.g. simulated true counts), listed with its digest."""
        if name not in self.files:
            raise ValueError(f"{name!r} was not announced in files={self.files}")
        path = self.out / name
        with self._create(path) as fh:
            fh.write(data)
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


def write_reports(out_dir, oracle: PIRappor, reports: FieldReports, shards: int = 4,
                  prefix: str = "reports", overwrite: bool = False,
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


def write_items(out_dir, oracle: PIRappor, chunks: Iterable[np.ndarray], n: int, shards: int,
                overwrite: bool = False, true_counts: bool = False, entropy=SYSTEM,
                free_bytes=None, progress: bool = False
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


def check_output_file(path, option: str = "out") -> Path:
    """A file about to be written (a CSV, a PNG) after a long computation: checked first, so
    that the work is not lost to a missing directory, a directory or FIFO in the file's place,
    or a directory that cannot be written."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path).strip():
        raise ValueError(f"{option} must be a non-empty file name, got {path!r}")
    out = Path(path)
    parent = out.parent
    if not parent.is_dir():
        raise ValueError(f"{option} {out}: the directory {parent} does not exist (create it "
                         "first)")
    if os.path.lexists(out):
        try:
            mode = os.stat(out).st_mode
        except OSError as err:
            raise ValueError(f"{option} {out}: cannot use ({err.strerror or err})") from None
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise ValueError(f"{option} {out}: is {kind}: give the name of a regular file")
        if not os.access(out, os.W_OK):
            raise ValueError(f"{option} {out}: the file is not writable")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {out}: the directory {parent} is not writable")
    return out


def check_disk(out_dir, n: int, oracle: PIRappor, free_bytes=None) -> None:
    """Refuse when even the information content of n reports (2 log2 p bits each) exceeds the
    free space of the output's file system."""
    need = n * 2 * math.log2(oracle.p) / 8
    if free_bytes is None:
        probe = Path(out_dir).absolute()
        while not probe.exists():
            probe = probe.parent
        free_bytes = shutil.disk_usage(probe).free
    if need > free_bytes:
        raise ValueError(f"{n} reports need at least {format_bytes(need)} on disk, but only "
                         f"{format_bytes(free_bytes)} is free under {out_dir}: reduce n")


# -- CSV of items -----------------------------------------------------------------------------
def _parse_item(text: str, k: int, line: int, source: str) -> int:
    s = text.strip()
    digits = s[1:] if s[:1] in ("+", "-") else s
    if not (digits and digits.isascii() and digits.isdigit()):
        raise ValueError(f"{source}, line {line}: {text!r} is not an item: items are integers "
                         f"in [0, {k}) written in decimal digits (no '.', exponent or prefix); "
                         "if line 1 is a header, pass --header")
    if len(digits.lstrip("0")) > 12 or not 0 <= int(s) < k:
        raise ValueError(f"{source}, line {line}: item {s} is outside [0, {k})")
    return int(s)


def _name_parser(domain, source: str):
    """Cell -> index of a name in the public ItemDomain (core.items), refusing unknown names."""
    def parse(text: str, k: int, line: int, _source: str) -> int:
        j = domain.position(text.strip())
        if j is None:
            raise ValueError(f"{source}, line {line}: {text.strip()[:60]!r} is not in the item "
                             f"domain (k = {k}); the domain is fixed in advance, never "
                             "extended from users' data")
        return j
    return parse


def csv_items(path, k: int, header: bool = False, domain=None) -> Iterator[np.ndarray]:
    """The items of a CSV file with one item per line, streamed as int64 arrays of at most
    CSV_CHUNK items.

    Strict, so that no line is ever dropped: a UTF-8 BOM is allowed; line 1 is skipped only
    with ``header`` (and must then not be an item); every other line must hold exactly one cell,
    a decimal integer in [0, k), or with ``domain`` (a public ``core.items.ItemDomain`` of k
    names) one of its names. Anything else is a ValueError naming the line and the value.
    """
    k = V.domain_size(k)
    header = _flag(header, "header")
    if domain is not None and domain.k != k:
        raise ValueError(f"the item domain holds {domain.k} names, not k = {k}")
    parse = _parse_item if domain is None else _name_parser(domain, str(path))
    source = str(path)
    buf: list[int] = []
    line = 0
    try:
        with io.TextIOWrapper(open_regular(path, "a CSV of items (it is read twice)"),
                              newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            for row in reader:
                line = reader.line_num
                if header and line == 1:
                    if len(row) == 1 and _is_item(row[0], k, parse):
                        raise ValueError(f"{source}, line 1: {row[0]!r} is an item, not a "
                                         "header: drop --header")
                    continue
                if len(row) != 1:
                    what = "is empty" if not row else f"has {len(row)} cells"
                    raise ValueError(f"{source}, line {line} {what}: expected exactly one item "
                                     "per line")
                buf.append(parse(row[0], k, line, source))
                if len(buf) >= CSV_CHUNK:
                    yield np.array(buf, dtype=np.int64)
                    buf = []
    except UnicodeDecodeError as err:
        raise ValueError(f"{source}, after line {line}: not UTF-8 text ({err.reason})") from None
    except csv.Error as err:
        raise ValueError(f"{source}, line {line + 1}: malformed CSV ({err})") from None
    except OSError as err:
        raise ValueError(f"{source}: cannot read ({err.strerror or err})") from None
    if header and line == 0:
        raise ValueError(f"{source}: empty file, no header line")
    if buf:
        yield np.array(buf, dtype=np.int64)


def _is_item(text: str, k: int, parse=_parse_item) -> bool:
    try:
        parse(text, k, 1, "")
        return True
    except ValueError:
        return False


def count_csv_items(path, k: int, header: bool = False, domain=None) -> int:
    """Check every line of the CSV (as :func:`csv_items`) and count the items."""
    n = sum(c.size for c in csv_items(path, k, header, domain))
    if n == 0:
        raise ValueError(f"{path}: no items")
    return n


# -- reading ----------------------------------------------------------------------------------
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


def collect(paths) -> tuple[PIRappor, list[Shard]]:
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


def _batch_rows(batch_rows, max_bytes=None) -> int:
    batch_rows = V.integer_at_least(batch_rows, "batch_rows", 1, 1 << 40)
    check_bytes(batch_rows * READ_BYTES_PER_ROW + VERIFY_CACHE * VERIFY_BLOCK,
                f"reading {batch_rows} reports at a time", "batch_rows", max_bytes)
    return batch_rows


def iter_shard(shard: Shard, oracle: PIRappor, batch_rows: int = READ_BATCH_ROWS,
               max_bytes=None) -> Iterator[FieldReports]:
    """The reports of one shard, at most ``batch_rows`` at a time, after checking that it is a
    regular file, its size and SHA-256 (first pass), its metadata (format, set, index, oracle),
    schema and row count; then every batch: Parquet page checksums, no missing values, every
    report's range. The second pass parses only bytes verified against the first
    (:class:`_VerifiedReader`), so what is checked is what is counted. Memory is bounded by the
    batch (``READ_BYTES_PER_ROW`` bytes a report), one Parquet page and a few hash blocks,
    whatever the shard's size. The row count is checked once more at the end: a consumer must
    not use a shard's reports before the iterator is exhausted without error."""
    pa, pq = _pyarrow()
    batch_rows = _batch_rows(batch_rows, max_bytes)
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


def read_shard(shard: Shard, oracle: PIRappor, max_bytes=None) -> FieldReports:
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
    meta = _parse_json(raw, path, "ldpcompress metadata")
    if _get(meta, "format", (int,), path, "") != FORMAT:
        raise ValueError(f"{path}: unknown report file format {meta['format']}")
    want = _shard_meta(shard.set_id, shard.index, oracle_metadata(oracle))
    for key in ("set", "shard", "oracle"):
        if _get(meta, key, (type(want[key]),), path, "") != want[key]:
            raise ValueError(f"{path}: key {key!r} is {meta[key]!r}, {shard.manifest} says "
                             f"{want[key]!r}")
