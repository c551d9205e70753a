"""The shuffler step: a report set rewritten in a uniformly random order drawn from the CSPRNG,
in bounded memory, crash-safe.

The shuffle model's accounting (docs/theory.md §2) holds for the multiset of reports only:
the server must see them in an order independent of who sent what. :func:`shuffle_report_set`
rewrites report sets in a uniform random permutation of all their reports (across shards: the
output's shards, read in index order, are one permuted sequence) by a two-pass scatter
(docs/theory.md §5.4 proves the order uniform):

1. every report gets a bucket label, uniform in [0, m) and independent, and is appended to that
   bucket's temporary files (its columns' raw bytes);
2. bucket by bucket, in label order, the bucket's reports are put in a uniform random order
   (the argsort of fresh 64-bit words, drawn again in the rare case two are equal) and written
   to the output shards in sequence.

m is chosen so that a bucket takes about ``BUCKET_BYTES`` in pass 2: memory is one read
batch in pass 1 and one bucket (a few times ``BUCKET_BYTES``) in pass 2, whatever the number of
reports. Labels and orders come from ``entropy.expand()`` (AES-CTR keyed from os.urandom;
``core/entropy.py``); a seeded simulation source only in tests.

Crash safety: nothing is written into the destination until the end. The buckets live in a
hidden temporary directory beside it, the new set is written into another (its manifest
incomplete until the last shard), then read back in full (every shard's SHA-256, the report
count and an order-independent fingerprint of the reports, equal to the input's), and only
then renamed to the destination in one step. A process killed at any point leaves the input
untouched and no set at the destination; the hidden directories it leaves hold an incomplete
manifest (refused by every reader) and may be removed.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy
from ..core.progress import bar
from ..randomizers.contract import LocalRandomizer
from .manifest import MAX_SHARDS, common_items, manifest_digest, read_info
from .reader import collect, iter_shard
from .writer import ReportSetWriter

__all__ = ["BUCKET_BYTES", "MAX_BUCKETS", "shuffle_report_set", "bucket_count",
           "uniform_order", "two_pass_order", "Fingerprint"]

BUCKET_BYTES = 64 << 20   # memory of one bucket in pass 2 (its reports and sort keys)
SORT_BYTES = 32           # pass 2's memory per report beyond its bytes: key, order, copies
MAX_BUCKETS = 1024        # more buckets than this: larger buckets (file handles, seeks)


def bucket_count(n: int, row_bytes: int, bucket_bytes: int = BUCKET_BYTES) -> int:
    """m: about ``bucket_bytes`` of pass 2's memory per bucket (each report's bytes, twice:
    read and permuted, plus ``SORT_BYTES`` of sort keys and order), 1 <= m <= ``MAX_BUCKETS``."""
    per = 2 * max(1, row_bytes) + SORT_BYTES
    return int(min(MAX_BUCKETS, max(1, -(-n * per // bucket_bytes))))


def uniform_order(count: int, stream) -> np.ndarray:
    """A uniform random permutation of range(count): the argsort of ``count`` independent
    uniform 64-bit words from ``stream`` (a ``WordStream``), drawn again while two are equal
    (so every order of distinct i.i.d. keys, hence every permutation, is equally likely)."""
    while True:
        keys = stream.words(count)
        order = np.argsort(keys, kind="stable")
        if count < 2 or np.all(np.diff(keys[order]) != 0):
            return order


def two_pass_order(n: int, buckets: int, stream) -> np.ndarray:
    """The order the two passes give n reports, computed in memory (for tests and the proof):
    labels uniform in [0, buckets), then each bucket in ``uniform_order``; returns the input
    index of each output position."""
    labels = stream.integers(buckets, n)
    out = []
    for b in range(buckets):
        members = np.flatnonzero(labels == b)
        out.append(members[uniform_order(members.size, stream)])
    return np.concatenate(out) if out else np.zeros(0, np.int64)


class Fingerprint:
    """An order-independent fingerprint of a sequence of reports: their count and two sums,
    mod 2^64, of a keyed 64-bit hash of each report's bytes (keys from os.urandom, so a
    loss and a duplicate cancel only with probability about 2^-64)."""

    def __init__(self, keys: np.ndarray):
        self.keys, self.count = keys, 0
        self.sums = np.zeros(2, np.uint64)

    @classmethod
    def fresh(cls) -> Fingerprint:
        return cls(np.frombuffer(os.urandom(8 * 2 * 64), dtype="<u8").reshape(2, 64) | 1)

    def like(self) -> Fingerprint:
        return Fingerprint(self.keys)

    def add(self, columns: dict[str, np.ndarray]) -> None:
        parts = []
        for name in sorted(columns):
            col = np.ascontiguousarray(columns[name])
            parts.append(col.view(np.uint8).reshape(col.shape[0], -1))
        rows = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
        n, width = rows.shape
        pad = -width % 8
        if pad:
            rows = np.concatenate([rows, np.zeros((n, pad), np.uint8)], axis=1)
        words = np.ascontiguousarray(rows).view("<u8").reshape(n, -1)
        with np.errstate(over="ignore"):
            for t in range(2):
                h = np.full(n, np.uint64(width), np.uint64)
                for j in range(words.shape[1]):
                    h = (h ^ words[:, j]) * self.keys[t, j % 64]
                    h ^= h >> np.uint64(29)
                self.sums[t] += h.sum(dtype=np.uint64)
        self.count += n

    def __eq__(self, other) -> bool:
        return isinstance(other, Fingerprint) and self.count == other.count and \
            bool(np.all(self.sums == other.sums))

    __hash__ = None  # type: ignore[assignment]


class _Buckets:
    """Pass 1's temporary files: per bucket and column, the raw bytes of its reports."""

    def __init__(self, folder: Path, m: int):
        self.folder, self.m = folder, m
        self.form: dict[str, tuple[np.dtype, tuple[int, ...]]] = {}
        self.rows = np.zeros(m, np.int64)

    def add(self, columns: dict[str, np.ndarray], labels: np.ndarray) -> None:
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(self.m + 1))
        for name, col in columns.items():
            col = np.ascontiguousarray(col)
            self.form.setdefault(name, (col.dtype, col.shape[1:]))
            moved = col[order]
            for b in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist():
                with open(self._path(b, name), "ab") as fh:
                    fh.write(moved[bounds[b]:bounds[b + 1]].tobytes())
        self.rows += np.bincount(labels, minlength=self.m)

    def read(self, b: int) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for name, (dtype, tail) in self.form.items():
            path = self._path(b, name)
            data = np.fromfile(path, dtype=dtype) if path.exists() else np.zeros(0, dtype)
            rows = data.size // max(1, int(np.prod(tail, dtype=np.int64)))
            if rows != self.rows[b] or data.size != rows * int(np.prod(tail, dtype=np.int64)):
                raise ValueError(f"{path}: holds {data.size} values, {self.rows[b]} reports "
                                 "were written (a temporary file changed)")
            out[name] = data.reshape((rows,) + tuple(tail))
        return out

    def _path(self, b: int, name: str) -> Path:
        return self.folder / f"b{b:05d}.{name}"


def _slices(columns: dict[str, np.ndarray], lo: int, hi: int) -> dict[str, np.ndarray]:
    return {name: col[lo:hi] for name, col in columns.items()}


class _Sequence:
    """The permuted reports as column batches, cut into shards of given sizes."""

    def __init__(self, pieces: Iterator[dict[str, np.ndarray]]):
        self.pieces, self.left, self.start = pieces, 0, 0
        self.pending: dict[str, np.ndarray] = {}

    def take(self, rows: int, most: int) -> Iterator[dict[str, np.ndarray]]:
        while rows > 0:
            if self.left == 0:
                self.pending = next(self.pieces)
                self.left = next(iter(self.pending.values())).shape[0]
                self.start = 0
                continue
            step = min(rows, most, self.left)
            yield _slices(self.pending, self.start, self.start + step)
            self.start += step
            self.left -= step
            rows -= step


def shuffle_report_set(paths, out: str | os.PathLike, shards: int | None = None,
                       entropy: Entropy = SYSTEM, bucket_bytes: int | None = None,
                       progress: bool = False,
                       files: Mapping[str, bytes] | None = None) -> list[Path]:
    """Rewrite the reports of ``paths`` (report sets or shards of one randomizer, as
    ``aggregate`` takes them; every shard checked against its manifest first) as a new report
    set in ``out`` (a new or empty directory) in a uniformly random order (module docstring),
    in ``shards`` shards (default: as many as the input). The manifest keeps the input's item
    names and coins. ``entropy``: the source of the order (default os.urandom through
    AES-CTR; ``Entropy.seeded_for_simulation`` only in tests). Returns the new shards'
    paths. ``bucket_bytes``: pass 2's memory per bucket (default ``BUCKET_BYTES``).
    ``files``: other files of the new set, name -> bytes, listed in its manifest with their
    SHA-256 (e.g. a heavy-hitter round's candidate list; the input's files are not copied)."""
    if not isinstance(entropy, Entropy):
        raise TypeError(f"entropy must be an ldpcompress Entropy, got {type(entropy).__name__}")
    bucket_bytes = V.integer_at_least(BUCKET_BYTES if bucket_bytes is None else bucket_bytes,
                                      "bucket_bytes", 1)
    randomizer, given = collect(paths)
    n = sum(s.rows for s in given)
    if n == 0:
        raise ValueError("the report sets hold no reports")
    shards = V.integer_at_least(len(given) if shards is None else shards, "shards", 1,
                                min(n, MAX_SHARDS))
    items = common_items(s.manifest for s in given)
    manifests = list(dict.fromkeys(s.manifest for s in given))
    coins = {read_info(m).coins for m in manifests}
    # the new set records its sources' manifest digests (and theirs): given together with
    # any of them, a reader refuses it (manifest.check_not_with_source)
    sources = sorted({manifest_digest(m) for m in manifests}
                     | {d for m in manifests for d in read_info(m).sources})
    out = Path(out)
    _apart(paths, out)
    if out.exists():
        if not out.is_dir():
            raise ValueError(f"{out}: exists and is not a directory")
        if any(out.iterdir()):
            raise ValueError(f"{out}: is not empty: the shuffled set needs a new or empty "
                             "directory")
    tag = os.urandom(8).hex()
    work = out.parent / f".{out.name}.buckets-{tag}"
    staged = out.parent / f".{out.name}.shuffling-{tag}"
    stream = entropy.expand()
    try:
        work.mkdir(parents=True)
        row_bytes = max(1, -(-randomizer.bits_per_report // 8))
        m = bucket_count(n, row_bytes, bucket_bytes)
        buckets = _Buckets(work, m)
        before = Fingerprint.fresh()
        with bar(2 * n, "shuffle", progress, unit="reports") as done:
            for shard in given:  # pass 1: scatter into buckets
                for reports in iter_shard(shard, randomizer):
                    cols = randomizer.to_columns(reports)
                    rows = len(next(iter(cols.values())))
                    before.add(cols)
                    buckets.add(cols, stream.integers(m, rows))
                    done.update(rows)
            if before.count != n:  # pragma: no cover (iter_shard checks every shard)
                raise ValueError(f"read {before.count} reports, the manifests list {n}")

            def permuted() -> Iterator[dict[str, np.ndarray]]:
                for b in range(m):  # pass 2: each bucket in a uniform order
                    cols = buckets.read(b)
                    if buckets.rows[b]:
                        order = uniform_order(int(buckets.rows[b]), stream)
                        yield {name: col[order] for name, col in cols.items()}
                    for name in list(cols):
                        with contextlib.suppress(FileNotFoundError):
                            buckets._path(b, name).unlink()

            seq = _Sequence(permuted())
            info = dict(coins=coins.pop() if len(coins) == 1 else None, items=items,
                        sources=sources)
            most = 1 << 20
            extra = dict(files or {})
            with ReportSetWriter(staged, randomizer, shards, info=info, files=extra) as w:
                for i in range(shards):
                    rows = (i + 1) * n // shards - i * n // shards
                    w.write_shard(_counted(randomizer, seq.take(rows, most), done))
                for name, data in extra.items():
                    w.add_file(name, data)
        _verify(staged, randomizer, n, before)
        if out.exists():
            out.rmdir()  # empty (checked above)
        os.rename(staged, out)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return sorted(out.glob("*.parquet"))


def _apart(paths, out: Path) -> None:
    """Refuse an output inside an input (or the reverse): a set inside another would be read
    twice by whoever aggregates the outer directory."""
    here = Path(os.path.realpath(out))
    for given in [paths] if isinstance(paths, (str, os.PathLike)) else list(paths):
        p = Path(os.path.realpath(given))
        folder = p if p.is_dir() else p.parent
        if here == folder or folder in here.parents or here in folder.parents:
            raise ValueError(f"{out}: the shuffled set must be written apart from the input "
                             f"{given} (not inside it, nor around it)")


def _counted(randomizer: LocalRandomizer, batches: Iterable[dict[str, np.ndarray]], done):
    for cols in batches:
        yield randomizer.from_columns(cols)
        done.update(next(iter(cols.values())).shape[0])


def _verify(folder: Path, randomizer: LocalRandomizer, n: int, before: Fingerprint) -> None:
    """Read the new set back (every shard's digest) and compare the count and fingerprint."""
    again, shards = collect(folder)
    if again != randomizer:  # pragma: no cover (written by this module)
        raise ValueError(f"{folder}: the shuffled set names another randomizer")
    after = before.like()
    for shard in shards:
        for reports in iter_shard(shard, randomizer):
            after.add(randomizer.to_columns(reports))
    if after != before:
        raise ValueError(f"{folder}: the shuffled set holds {after.count} reports whose "
                         f"fingerprint differs from the {n} read (nothing was renamed)")
