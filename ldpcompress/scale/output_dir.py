"""The directory a report set is written into: created if needed, held by one writer at a time,
and emptied only of an old set's own files.

A writer refuses a non-empty directory; with ``overwrite`` it removes the old set's manifest
(first: a half-removed set is never taken as complete), shards and files -- only those, and
nothing at all when Parquet files that no manifest lists (or a file of the new set's name)
would remain. One writer per directory: the lock file ``LOCK`` is created exclusively
(O_CREAT | O_EXCL), so a second writer is refused naming the directory. See docs/guide.md,
section 3, "Report sets and aggregation".
"""
from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Iterable

from ..randomizers.estimator import check_flag
from .manifest import MANIFEST, MAX_MANIFEST_BYTES, load_json, manifest_names

__all__ = ["LOCK", "prepare_output", "create_output_dir", "take_lock", "check_empty"]


LOCK = ".ldpcompress-writer.lock"


def _parquet_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.parquet"))


def create_output_dir(out_dir: str | os.PathLike) -> Path:
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


def take_lock(out: Path) -> Path:
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


def check_empty(out: Path, overwrite: bool, planned: Iterable[str], ignore=()) -> None:
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


def prepare_output(out_dir: str | os.PathLike, overwrite: bool = False,
                   planned: Iterable[str] = ()) -> Path:
    """The output directory, created if needed. A non-empty one is refused unless ``overwrite``,
    which removes the old report set's manifest, shards and files -- only those -- and refuses
    when Parquet files not listed by that manifest (or a planned file name) would remain.
    (``writer.ReportSetWriter`` does the same under the directory's writer lock.)"""
    overwrite = check_flag(overwrite, "overwrite")
    out = create_output_dir(out_dir)
    check_empty(out, overwrite, planned)
    return out


def _remove_set(out: Path, planned: set[str]) -> None:
    manifest = out / MANIFEST
    owned: set[str] = set()
    if manifest.exists():
        try:
            owned = set(manifest_names(load_json(manifest, MAX_MANIFEST_BYTES, "manifest"),
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
