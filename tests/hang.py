"""A guard against hangs, not a timing: ``no_hang(what)`` fails a block that is still running
after ``seconds`` (default 60, far above any normal run on a loaded 2-core machine), naming it.
Tests of "refused up front instead of running for minutes" use it rather than asserting a
duration, which would fail on a slow machine. SIGALRM raises Hang in Python code; faulthandler
ends the process (with every thread's stack) should a compiled kernel never return."""
import contextlib
import faulthandler
import signal
import sys

__all__ = ["Hang", "no_hang"]


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
