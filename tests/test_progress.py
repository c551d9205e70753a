"""Progress bars and the compile notice (core.progress): stderr only (stdout may carry JSON),
nothing when disabled, plain lines without carriage returns when stderr is not a terminal, and
the same results with and without progress (demo, report files, aggregation, compression)."""
import io
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from ldpcompress.compression.sampler import PseudoRandomizer
from ldpcompress.compression.split import CompressedPrivUnit2
from ldpcompress.core import progress as PG
from ldpcompress.core.entropy import Entropy
from ldpcompress.estimation import demo
from ldpcompress.estimation import mean as M
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.pirappor import PIRappor


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def log_lines(monkeypatch):
    """Non-terminal bars print a line at every update (no 15 s wait)."""
    monkeypatch.setattr(PG, "LOG_INTERVAL", 0.0)


def seeded(seed=7):
    return Entropy.seeded_for_simulation(seed)


def check_log(err: str, desc: str, total: int) -> list[str]:
    """A bar's output on a non-terminal: complete plain lines, no carriage return, ending at
    total."""
    assert "\r" not in err
    assert err.endswith("\n")
    lines = [line for line in err.splitlines() if line.startswith(desc + ":")]
    assert lines, err
    assert all(line.strip() for line in err.splitlines())
    assert f"{total}/{total}" in lines[-1]
    return lines


# -- the helpers ---------------------------------------------------------------------------------

def test_bar_on_a_log_writes_plain_lines_to_stderr(capsys, log_lines):
    with PG.bar(10, "work", True, unit="reports") as b:
        for _ in range(5):
            b.update(2)
    out, err = capsys.readouterr()
    assert out == ""
    lines = check_log(err, "work", 10)
    assert len(lines) >= 2  # some progress before the end, one line per redraw


def test_bar_on_a_log_is_silent_for_a_short_job(capsys):
    with PG.bar(3, "quick", True) as b:  # default interval: ends long before the first line
        b.update(3)
    assert capsys.readouterr() == ("", "")


def test_bar_disabled_prints_nothing(capsys, log_lines):
    with PG.bar(4, "off", False) as b:
        b.update(4)
    assert list(PG.track(range(4), "off", False)) == [0, 1, 2, 3]
    assert capsys.readouterr() == ("", "")


def test_bar_on_a_terminal_redraws_in_place(capsys, monkeypatch):
    tty = Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    with PG.bar(5, "live", True) as b:
        b.update(5)
    assert capsys.readouterr().out == ""
    assert "\r" in tty.getvalue() and "5/5" in tty.getvalue()


def test_track_counts_the_items_it_yields(capsys, log_lines):
    assert list(PG.track(iter(range(6)), "items", True, total=6)) == list(range(6))
    check_log(capsys.readouterr().err, "items", 6)


def test_compile_notice_once_and_compile_time(capsys, monkeypatch):
    from numba import njit
    monkeypatch.setattr(PG, "_announced", False)

    @njit
    def inner(x):
        return x + 1

    @njit
    def outer(x):
        return inner(x) * 2

    with PG.JitClock(announce=True, hint="about 1 s") as jit:
        assert outer(1) == 4  # compiles outer and, inside it, inner: one compilation
        assert inner(1.5) == 2.5  # a new signature: a second
        outer(2)  # compiled already: nothing
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("compiling Numba kernels") == 1 and "about 1 s" in err
    assert "\r" not in err
    assert jit.compiled == 2 and jit.seconds > 0.0
    with PG.JitClock(announce=True) as again:
        inner(2.5)
    assert again.compiled == 0 and capsys.readouterr() == ("", "")


def test_compile_clock_silent_unless_asked(capsys, monkeypatch):
    from numba import njit
    monkeypatch.setattr(PG, "_announced", False)

    @njit
    def f(x):
        return x - 1

    with PG.JitClock() as jit:
        f(3)
    assert jit.compiled == 1 and capsys.readouterr() == ("", "")


def test_demo_phases_leave_compilation_out(monkeypatch):
    ticks = iter([10.0, 13.0])
    monkeypatch.setattr(demo, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    jit = SimpleNamespace(seconds=1.0)
    phase = demo._Phases(jit)
    with phase("server"):
        jit.seconds = 3.5  # 2.5 s of the phase's 3 s went to compiling kernels
    assert phase.times["server"] == pytest.approx(0.5)


def test_compute_time_stands_still_while_kernels_compile_or_load(monkeypatch):
    """A query's seconds leave out the kernels' compiling and cache loading (the first amplify
    of a process showed 3,371 ms for a 1-4 ms bound): a stretch of 0.2 s holding Numba's
    compiler lock counts in kernel_seconds, not in compute_time. Ticks are a fake clock."""
    from numba.core import event
    ticks = iter([100.0, 100.5, 100.7, 101.0])
    PG.compute_time()  # the listener is installed
    monkeypatch.setattr(PG.time, "perf_counter", lambda: next(ticks))
    t0 = PG.compute_time()                # 100.0
    event.start_event("numba:compiler_lock")  # 100.5: a kernel starts loading
    event.end_event("numba:compiler_lock")    # 100.7: loaded, 0.2 s
    t1 = PG.compute_time()                # 101.0
    assert t1 - t0 == pytest.approx(0.8)  # 1 s of wall time, 0.2 s of it loading


def test_amplify_bounds_time_their_own_work(tmp_path):
    """In a fresh process (kernels loaded from the cache, never yet in memory) the bounds'
    milliseconds and the total exclude the kernels' loading, reported apart."""
    import json
    import subprocess
    code = ("import json, time\n"
            "t = time.perf_counter()\n"
            "from ldpcompress.cli import main\n"
            "main(['amplify', '--n', '1e5', '--eps0', '2', '--delta', '1e-6', '--json'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    timings, bounds = doc["timings"], doc["results"]["bounds"]
    assert timings["kernels"] > 0.0  # loading (or compiling) happened, and is counted apart
    assert all(b["seconds"] >= 0.0 for b in bounds)
    assert sum(b["seconds"] for b in bounds) <= timings["total"]


# -- the jobs: stderr only, same results -------------------------------------------------------

def test_demo_progress_and_timings(capsys, log_lines):
    quiet = demo.run(n=3000, k=20, seed=1)
    assert capsys.readouterr() == ("", "")
    loud = demo.run(n=3000, k=20, seed=1, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    check_log(err, "randomize", 3000)
    for key in ("eps0", "local_eps", "central_eps", "central_lower", "generic_eps0", "bits"):
        assert quiet[key] == loud[key]
    assert np.array_equal(quiet["true"], loud["true"])
    assert list(loud["times"])[0] == "compile/load"
    assert {"choose eps0", "clients", "shuffle", "server"} <= set(loud["times"])
    assert isinstance(loud["kernels_compiled"], int)
    demo.run(n=3000, k=20, seed=1, progress=True, quiet=True)  # quiet wins
    assert capsys.readouterr() == ("", "")


def test_demo_show_reports_kernel_time_apart(capsys):
    res = demo.run(n=2000, k=10)
    demo.show(res)
    out = capsys.readouterr().out
    assert "Numba kernels:" in out and "not in the timings above" in out
    assert "compile/load" not in out.split("timings:")[1].splitlines()[0]


def test_mean_progress(capsys, log_lines):
    res = M.run(8, 40, 2.0, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    for desc in ("privunit2", "encode", "one-bit (Duchi et al.)"):
        check_log(err, desc, 40)
    assert set(res) >= {"privunit2", "privunit2-compressed", "one-bit (Duchi et al.)"}


def test_compressed_encoding_same_with_progress(capsys, log_lines):
    xs = np.random.default_rng(0).normal(size=(30, 6))
    xs /= np.linalg.norm(xs, axis=1, keepdims=True)
    plain = CompressedPrivUnit2(6, 2.0, 2, entropy=seeded()).encode_many(xs)
    assert capsys.readouterr() == ("", "")
    shown = CompressedPrivUnit2(6, 2.0, 2, entropy=seeded()).encode_many(xs, progress=True)
    out, err = capsys.readouterr()
    assert shown == plain and out == ""
    check_log(err, "encode", 30)
    items = list(np.arange(25) % 4)
    one = PseudoRandomizer(KRR(4, 1.0), entropy=seeded(3)).encode_many(items)
    two = PseudoRandomizer(KRR(4, 1.0), entropy=seeded(3)).encode_many(items, progress=True)
    assert one == two
    check_log(capsys.readouterr().err, "encode", 25)


@pytest.fixture
def report_sets(tmp_path, capsys, log_lines):
    """The same items written twice with the same seeded coins, without and with progress."""
    pytest.importorskip("pyarrow")
    from ldpcompress.scale import report_files as RF
    oracle = PIRappor(20, 2.0)
    items = np.arange(3000) % 20
    quiet = RF.write_items(tmp_path / "quiet", oracle, [items], items.size, 3,
                              entropy=seeded())
    assert capsys.readouterr() == ("", "")
    loud = RF.write_items(tmp_path / "loud", oracle, [items[:1000], items[1000:]],
                             items.size, 3, entropy=seeded(), progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    check_log(err, "write reports", 3000)
    for a, b in zip(quiet, loud):
        ra, rb = (RF.read_shard(RF.collect([p])[1][0], oracle) for p in (a, b))
        assert np.array_equal(ra.a, rb.a) and np.array_equal(ra.b, rb.b)
    return tmp_path / "quiet", tmp_path / "loud"


def test_aggregate_in_memory_same_with_progress(report_sets, capsys):
    from ldpcompress.scale import distributed as D
    quiet_dir, loud_dir = report_sets
    quiet = D.aggregate([quiet_dir], scheduler="memory")
    assert capsys.readouterr() == ("", "")
    loud = D.aggregate([loud_dir], scheduler="memory", progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    check_log(err, "aggregate", 3000)
    assert np.array_equal(quiet["summary"], loud["summary"]) and loud["n"] == 3000


def test_aggregate_on_dask_same_with_progress(report_sets, capsys):
    dist = pytest.importorskip("distributed")
    from ldpcompress.scale import distributed as D
    quiet_dir, _ = report_sets
    reference = D.aggregate([quiet_dir], scheduler="memory")
    with dist.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           dashboard_address=":0") as cluster, dist.Client(cluster) as client:
        capsys.readouterr()
        res = D.aggregate([quiet_dir], client=client, progress=True)
        out, err = capsys.readouterr()
    assert res["method"] == "dask" and out == ""
    check_log(err, "aggregate", 3000)
    assert np.array_equal(res["summary"], reference["summary"])


def test_bar_in_a_jupyter_kernel_is_tqdm_auto_widget(monkeypatch, capsys):
    """In a Jupyter kernel tqdm.auto picks its notebook widget; the bars use it (a cell shows
    it), and an explicit stream keeps the plain bars."""
    import types

    import tqdm.auto
    import tqdm.std

    made = []

    class Widget(tqdm.std.tqdm):  # stands for tqdm.notebook.tqdm
        def __init__(self, *args, **kwargs):
            made.append(kwargs)
            super().__init__(*args, **dict(kwargs, disable=True))

    assert PG.notebook_bar() is None or "IPython" in sys.modules
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    monkeypatch.setattr(tqdm.auto, "tqdm", Widget)
    assert PG.notebook_bar() is Widget
    with PG.bar(5, "cells", True, unit="reports") as b:
        b.update(5)
    assert list(PG.track(range(3), "rows", True)) == [0, 1, 2]
    assert [(m["desc"], m["unit"], m["total"]) for m in made] == [("cells", "reports", 5),
                                                                ("rows", "it", 3)]
    with PG.bar(2, "off", False) as b:  # disabled: no widget
        b.update(2)
    log = io.StringIO()
    with PG.bar(2, "log", True, file=log) as b:  # an explicit stream: not the widget
        b.update(2)
    assert len(made) == 2 and capsys.readouterr().out == ""
    monkeypatch.setattr(tqdm.auto, "tqdm", tqdm.std.tqdm)  # a console IPython: plain bars
    assert PG.notebook_bar() is None
