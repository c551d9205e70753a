"""Progress of long jobs on stderr, and a notice when Numba compiles kernels.

Bars are tqdm's and go to stderr only: stdout may carry JSON. Every long job takes
``progress: bool = False`` (off in the library, the command line turns it on) and passes it to
:func:`bar` or :func:`track`. In a Jupyter notebook (``progress=True``) the bar is
``tqdm.auto``'s widget, drawn in the cell (with ipywidgets installed); on a terminal it redraws
in place; when stderr is neither (a log, a pipe, CI) a bar prints plain lines instead, one
every ``LOG_INTERVAL`` seconds at most, and nothing for a job that ends sooner: a log never
receives carriage-return redraws.

Kernels are compiled by Numba on their first use and cached on disk (``cache=True``), so only a
fresh installation pays for it. :class:`JitClock` measures the seconds spent compiling or
loading kernels (so that a job can keep them out of its own timings) and, when asked, says once
on stderr that compilation is starting. It listens to Numba's event API
(``numba.core.event``): ``numba:compile`` fires only when a kernel is compiled (no cache entry).
:func:`compute_time` is a clock that stands still while this thread compiles or loads kernels:
the timings a query reports are its own work, the first call's loading excluded.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Iterable, Iterator, TextIO, TypeVar

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["LOG_INTERVAL", "LOG_FORMAT", "COMPILE_NOTICE", "is_terminal", "notebook_bar", "bar",
           "track", "notice", "JitClock", "kernel_seconds", "compute_time"]

T = TypeVar("T")


LOG_INTERVAL = 15.0  # seconds between two lines of a bar when stderr is not a terminal
LOG_FORMAT = ("{desc}: {n_fmt}/{total_fmt} {unit} ({percentage:.0f}%), {elapsed} elapsed, "
              "{remaining} left")
COMPILE_NOTICE = ("ldpcompress: compiling Numba kernels (first run only: later runs load them "
                  "from the cache{hint})...")

_announced = False  # the compile notice is printed once per process


def is_terminal(stream) -> bool:
    """Whether ``stream`` is an interactive terminal (False for a file, a pipe, a closed or
    replaced stream)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class _Lines:
    """A file for tqdm when stderr is not a terminal: each redraw ('\\r' + status + padding)
    becomes the status on a line of its own; the bare newlines and clears tqdm adds are
    dropped, so the log holds complete lines and no carriage return."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        line = text.replace("\r", "").rstrip()
        if line:
            self.stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        flush = getattr(self.stream, "flush", None)
        if flush is not None:
            flush()


def notebook_bar() -> type | None:
    """tqdm's notebook bar class when this process is a Jupyter kernel that can draw it
    (``tqdm.auto`` chose it), else None. Outside IPython nothing is imported."""
    if "IPython" not in sys.modules:
        return None
    from tqdm import auto, std
    return None if auto.tqdm is std.tqdm else auto.tqdm


def _tqdm(iterable, total: int | None, desc: str, enabled: bool, unit: str,
          file: TextIO | None) -> tqdm:
    from tqdm import tqdm  # imported with the first bar
    stream = sys.stderr if file is None else file
    if not enabled:
        return tqdm(iterable, total=total, disable=True)
    widget = notebook_bar() if file is None else None
    if widget is not None:  # a Jupyter cell: the widget, not lines in the cell's stderr
        return widget(iterable, total=total, desc=desc, unit=unit, leave=True)
    if is_terminal(stream):
        return tqdm(iterable, total=total, desc=desc, unit=unit, file=stream,
                    dynamic_ncols=True, leave=True)
    # miniters=1: every update checks the clock (updates come per batch or per report, each
    # far slower than that check), and tqdm's monitor thread, which only acts on bars with
    # miniters > 1, never redraws them
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=_Lines(stream), leave=True,
                mininterval=LOG_INTERVAL, maxinterval=LOG_INTERVAL, miniters=1,
                delay=LOG_INTERVAL, bar_format=LOG_FORMAT)


def bar(total: int | None, desc: str, enabled: bool = True, *, unit: str = "it",
        file: TextIO | None = None) -> tqdm:
    """A tqdm bar of ``total`` steps on ``file`` (default: sys.stderr at call time); a silent
    no-op bar when not ``enabled``. Use as ``with bar(n, "encode", progress) as b: b.update(k)``.
    On a terminal it redraws in place; elsewhere it writes plain lines (see the module doc)."""
    return _tqdm(None, total, desc, enabled, unit, file)


def track(iterable: Iterable[T], desc: str, enabled: bool = True, *, total: int | None = None,
          unit: str = "it", file: TextIO | None = None) -> Iterator[T]:
    """The items of ``iterable``, counted on a bar as :func:`bar` draws it (``total``: default
    ``len(iterable)`` when it has one); the plain iterator when not ``enabled``."""
    if not enabled:
        return iter(iterable)
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    return iter(_tqdm(iterable, total, desc, enabled, unit, file))


def notice(message: str, file: TextIO | None = None) -> None:
    """One line on stderr (``file``), written around any bar on a terminal."""
    from tqdm import tqdm
    tqdm.write(message, file=sys.stderr if file is None else file)


class JitClock:
    """Seconds this thread spends in Numba's compiler while the block runs (compiling kernels,
    or loading compiled ones from the cache), and how many kernels it compiled.

    ``with JitClock(announce=True, hint="about 10 s") as jit: ...`` prints
    :data:`COMPILE_NOTICE` once per process on stderr when the first kernel is about to
    compile. A job subtracts ``jit.seconds`` from its own timings. Nested compilations (a
    kernel compiling the kernels it calls) count once, at the outermost level.
    """

    def __init__(self, announce: bool = False, hint: str = "", file: TextIO | None = None):
        self.announce, self.hint, self.file = announce, hint, file
        self.seconds = 0.0
        self.compiled = 0
        self._thread = threading.get_ident()
        self._lock_depth = 0
        self._compile_depth = 0
        self._started = 0.0
        self._listeners: list = []

    def __enter__(self) -> JitClock:
        from numba.core import event

        clock = self

        class _Lock(event.Listener):  # numba:compiler_lock: held to compile or load a kernel
            def on_start(self, ev) -> None:
                if threading.get_ident() == clock._thread:
                    if clock._lock_depth == 0:
                        clock._started = time.perf_counter()
                    clock._lock_depth += 1

            def on_end(self, ev) -> None:
                if threading.get_ident() == clock._thread and clock._lock_depth > 0:
                    clock._lock_depth -= 1
                    if clock._lock_depth == 0:
                        clock.seconds += time.perf_counter() - clock._started

        class _Compile(event.Listener):  # numba:compile: a kernel with no cache entry
            def on_start(self, ev) -> None:
                if threading.get_ident() == clock._thread:
                    if clock._compile_depth == 0:
                        clock.compiled += 1
                        clock._announce()
                    clock._compile_depth += 1

            def on_end(self, ev) -> None:
                if threading.get_ident() == clock._thread and clock._compile_depth > 0:
                    clock._compile_depth -= 1

        self._listeners = [("numba:compiler_lock", _Lock()), ("numba:compile", _Compile())]
        for kind, listener in self._listeners:
            event.register(kind, listener)
        return self

    def __exit__(self, *exc) -> None:  # exceptions propagate
        from numba.core import event
        for kind, listener in self._listeners:
            event.unregister(kind, listener)
        self._listeners = []

    def _announce(self) -> None:
        global _announced
        if self.announce and not _announced:
            _announced = True
            notice(COMPILE_NOTICE.format(hint=f", {self.hint}" if self.hint else ""), self.file)


class _KernelSeconds(threading.local):
    """This thread's seconds spent holding Numba's compiler lock (compiling kernels or loading
    them from the cache), over the process's life."""
    total = 0.0
    depth = 0
    started = 0.0


_kernel_seconds = _KernelSeconds()
_listening = False
_listening_lock = threading.Lock()


def _listen() -> None:
    """Install (once per process) the listener that feeds :func:`kernel_seconds`; it imports
    Numba, which every caller (a job about to run kernels) has imported already."""
    global _listening
    with _listening_lock:
        if _listening:
            return
        from numba.core import event

        class _Lock(event.Listener):  # numba:compiler_lock, nested: counted at the outer level
            def on_start(self, ev) -> None:
                if _kernel_seconds.depth == 0:
                    _kernel_seconds.started = time.perf_counter()
                _kernel_seconds.depth += 1

            def on_end(self, ev) -> None:
                if _kernel_seconds.depth > 0:
                    _kernel_seconds.depth -= 1
                    if _kernel_seconds.depth == 0:
                        _kernel_seconds.total += time.perf_counter() - _kernel_seconds.started

        event.register("numba:compiler_lock", _Lock())
        _listening = True


def kernel_seconds() -> float:
    """Seconds this thread has spent compiling or loading Numba kernels since the first call of
    this function or :func:`compute_time`."""
    _listen()
    return _kernel_seconds.total


def compute_time() -> float:
    """``time.perf_counter()`` less :func:`kernel_seconds`: a clock of this thread's own work,
    which stands still while kernels compile or load from the cache. ``t = compute_time(); ...;
    compute_time() - t`` is what a query costs once its kernels are loaded (the first call of a
    process spends up to a few seconds loading them, reported apart where it matters)."""
    _listen()
    return time.perf_counter() - _kernel_seconds.total
