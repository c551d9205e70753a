"""Files that are records (a saved ledger): written through symlinks, under an exclusive lock,
atomically, never over a read-only file (docs/guide.md, "Ledgers").

A record is read, changed and written back by several processes (one ``compose --ledger`` per
round, perhaps at once). Three rules keep every change:

* **The target.** A symlink is followed to the file it names, and that file is the one written
  (the link stays a link). A dangling link, a loop of links, or anything but a regular file
  in the target's place is refused, naming the path.
* **The lock.** A read-modify-write holds an exclusive ``flock`` on a lock file beside the
  target, ``.NAME.lock`` (the record itself is replaced on every write, so a lock on it would
  be a lock on a file about to disappear). Writers queue; one waiting longer than its timeout
  is refused, naming the lock file. The lock file stays (removing it would let two writers
  lock two different files). Holding the lock again in the same thread is allowed.
* **The write.** A temporary file in the target's directory, given the target's mode (a new
  file: 0666 less the umask), flushed and fsynced, then renamed over the target; the directory
  is fsynced. Readers see the old or the new record, never part of one. A read-only target
  (no write permission bit, or not writable by this user) is refused and left as it was.

Every refusal is a ValueError naming the file.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import threading
import time
from typing import Iterator

__all__ = ["LOCK_TIMEOUT", "target", "lock_path", "exclusive", "write_atomic"]

LOCK_TIMEOUT = 300.0  # seconds a writer waits for the lock before it is refused
_POLL = 0.02  # seconds between attempts at a lock another process holds

_held = threading.local()  # lock paths this thread holds -> (descriptor, depth)


def target(path: str | os.PathLike, what: str = "the file") -> str:
    """The absolute path of the file ``path`` names, symlinks followed: the file to read and
    write. A path that does not exist names a new file (its directory's links followed); a
    dangling link, a loop of links or an unreadable path is refused naming ``path``."""
    path = os.fspath(path)
    if not os.path.lexists(path):
        return os.path.realpath(path)
    try:
        return os.path.realpath(path, strict=True)
    except FileNotFoundError:
        raise ValueError(f"{path}: is a symlink to {os.readlink(path)!r}, which does not exist: "
                         f"refusing to create {what} there (point the link at an existing "
                         "file, or give the file's own path)") from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise ValueError(f"{path}: a loop of symlinks, not {what}") from None
        raise ValueError(f"{path}: cannot resolve ({err.strerror or err})") from None


def lock_path(path: str | os.PathLike) -> str:
    """The lock file of the record at ``path``: ``.NAME.lock`` beside its target."""
    real = target(path)
    folder, name = os.path.split(real)
    return os.path.join(folder, f".{name}.lock")


@contextlib.contextmanager
def exclusive(path: str | os.PathLike, timeout: float = LOCK_TIMEOUT,
              what: str = "the file", option: str = "lock_timeout") -> Iterator[str]:
    """Hold the exclusive lock of the record at ``path`` for the block (yields the target's
    path). Waits at most ``timeout`` seconds for another holder, then refuses naming the lock
    file and ``option`` (the setting that raises the wait). Re-entrant within a thread."""
    import fcntl  # POSIX; imported here so that the module imports everywhere

    if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
            and timeout >= 0 and timeout == timeout):
        raise ValueError(f"{option} must be a number of seconds >= 0, got {timeout!r}")
    real = target(path, what)
    lock = lock_path(real)
    held = _held.__dict__.setdefault("locks", {})
    if lock in held:
        fd, depth = held[lock]
        held[lock] = (fd, depth + 1)
        try:
            yield real
        finally:
            fd, depth = held[lock]
            held[lock] = (fd, depth - 1)
        return
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as err:
        raise ValueError(f"{path}: cannot create the lock file {lock} ({err.strerror or err}): "
                         f"{what} is written only under its lock") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path}: the lock file {lock} is not a regular file")
        deadline = time.monotonic() + float(timeout)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ValueError(
                        f"{path}: another process has held the lock {lock} for more than "
                        f"{timeout:g} s: refused (wait for it, or raise {option})") from None
                time.sleep(_POLL)
        held[lock] = (fd, 1)
        try:
            yield real
        finally:
            del held[lock]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _check_writable(path: str, real: str, what: str) -> os.stat_result | None:
    """The target's stat when it exists (a regular file this user may write), else None."""
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ValueError(f"{path}: cannot use ({err.strerror or err})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO"
                if stat.S_ISFIFO(st.st_mode) else "not a regular file")
        raise ValueError(f"{path}: is {kind}: refusing to write {what} there")
    if not st.st_mode & 0o222 or not os.access(real, os.W_OK):
        shown = path if os.path.abspath(path) == real else f"{path} (-> {real})"
        raise ValueError(f"{shown}: {what} is read-only (mode {stat.S_IMODE(st.st_mode):04o}): "
                         "refused, left as it was (make it writable, e.g. chmod u+w, or give "
                         "another file)")
    return st


def _umask() -> int:
    mask = os.umask(0o022)  # read it (the only way), then put it back
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike, text: str, what: str = "the file",
                 timeout: float = LOCK_TIMEOUT, option: str = "lock_timeout") -> None:
    """Write ``text`` (UTF-8) as the file ``path`` names, under its lock, through symlinks,
    atomically, keeping the target's mode (see the module docstring)."""
    path = os.fspath(path)
    with exclusive(path, timeout, what, option) as real:
        st = _check_writable(path, real, what)
        folder = os.path.dirname(real)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(real)}-", suffix=".tmp",
                                       dir=folder)
        except OSError as err:
            raise ValueError(f"{path}: cannot write in {folder} ({err.strerror or err})") \
                from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                if st is not None:
                    os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode))
                    with contextlib.suppress(OSError):  # keep the owner where allowed (root)
                        os.fchown(fh.fileno(), st.st_uid, st.st_gid)
                else:
                    os.fchmod(fh.fileno(), 0o666 & ~_umask())
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, real)
        except BaseException as err:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(err, OSError):
                raise ValueError(f"{path}: cannot write ({err.strerror or err}); {what} is left "
                                 "as it was") from None
            raise
        with contextlib.suppress(OSError):  # the rename itself reaches the disk
            dfd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
