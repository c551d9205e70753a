"""A guard against hangs, not a timing: ``no_hang(what)`` fails a block that is still running
after ``seconds`` (default 60, far above any normal run on a loaded 2-core machine), naming it.
Tests of "refused up front instead of running for minutes" use it rather than asserting a
duration, which would fail on a slow machine. SIGALRM raises Hang in Python code; faulthandler
ends the process (with every thread's stack) should a compiled kernel never return.
``cli_in_child`` runs the CLI in a child process with a timeout; ``refused_promptly`` checks
that a reader refuses a FIFO at once rather than blocking on it."""
import contextlib
import faulthandler
import os
import signal
import subprocess
import sys
import threading

import pytest

__all__ = ["Hang", "cli_in_child", "no_hang", "refused_promptly"]


class Hang(BaseException):
    """The guarded block ran too long (BaseException: the code under test must not catch it)."""


def _alarm(signum, frame):
    raise Hang()


@contextlib.contextmanager
def no_hang(what, seconds: float = 60.0):
    """Fail with AssertionError naming ``what`` if the block runs longer than ``seconds``."""
    if not hasattr(signal, "setitimer"):  # pragma: no cover (not POSIX)
        yield
        return
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    faulthandler.dump_traceback_later(3 * seconds, exit=True, file=sys.__stderr__)
    try:
        yield
    except Hang:
        raise AssertionError(f"hang: {what} ran longer than {seconds:g} s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        faulthandler.cancel_dump_traceback_later()


def cli_in_child(*args, timeout=120, **kw):
    """The CLI in a child process (a hang is a failure, not a stuck test run)."""
    return subprocess.run([sys.executable, "-m", "ldpcompress", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, **kw)


def refused_promptly(fn, path, fifo, match):
    """fn(path) must raise ValueError matching ``match`` within a minute; a reader blocked on
    the FIFO (the bug) is released by opening its write end, and the test fails."""
    out = {}

    def run():
        try:
            fn(path)
            out["result"] = "returned"
        except Exception as err:  # noqa: BLE001 (reported below)
            out["result"] = err
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # EOF for the blocked reader
        worker.join(10)
        pytest.fail(f"{fn.__qualname__}({path}) blocked on a FIFO")
    err = out["result"]
    assert isinstance(err, ValueError), err
    assert match in str(err), err
