"""Files named by a user or listed by a manifest: only regular files are read or written over.

A FIFO, socket, device or directory in a file's place is refused before it is opened (reading
a FIFO or a device could block or never end), and the open itself cannot hang: the descriptor
is opened non-blocking and checked again. A file about to be written after a long computation
(an aggregate's CSV, a plot's PNG) is checked first, so the work is not lost. Every refusal is
a ValueError naming the file (docs/guide.md, section 3, "Report sets and aggregation").
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["check_regular", "open_regular", "read_regular", "check_output_file"]


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _not_regular(path, mode: int, what: str) -> ValueError:
    return ValueError(f"{path}: is {_kind(mode)}, not a regular file: refusing to read it as "
                      f"{what} (reading a FIFO or device could block or never end)")


def check_regular(path: str | os.PathLike, what: str,
                  listed_in: str | os.PathLike | None = None) -> os.stat_result:
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


def open_regular(path: str | os.PathLike, what: str,
                 listed_in: str | os.PathLike | None = None) -> BinaryIO:
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


READ_PIECE = 1 << 20  # bytes read at a time by read_regular


def read_regular(path: str | os.PathLike, what: str, max_bytes: int) -> bytes:
    """The whole content of a regular file of at most ``max_bytes`` bytes (a larger one, or one
    that grows past it while read, is refused naming the file and the limit, before it can
    fill the memory); every OSError becomes a ValueError naming the file."""
    with open_regular(path, what) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise ValueError(f"{path}: {what} is at most {max_bytes} bytes, the file has "
                                 f"{size}")
            # in pieces: read(max_bytes + 1) would allocate the whole limit (256 MiB for a
            # manifest) whatever the file's size
            pieces, got = [], 0
            while got <= max_bytes:
                piece = fh.read(min(READ_PIECE, max_bytes + 1 - got))
                if not piece:
                    break
                pieces.append(piece)
                got += len(piece)
            raw = b"".join(pieces)
        except OSError as err:
            raise ValueError(f"{path}: cannot read ({err.strerror or err})") from None
    if len(raw) > max_bytes:
        raise ValueError(f"{path}: {what} is at most {max_bytes} bytes, the file grew past it "
                         "while read")
    return raw


def check_output_file(path: str | os.PathLike, option: str = "out") -> Path:
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
            raise ValueError(f"{option} {out}: is {_kind(mode)}: give the name of a regular file")
        if not os.access(out, os.W_OK):
            raise ValueError(f"{option} {out}: the file is not writable")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {out}: the directory {parent} is not writable")
    return out
