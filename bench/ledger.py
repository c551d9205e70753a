"""Benchmark of saved ledgers (issue 27): query cost of large ledgers, concurrent appends.

A. The hostile ledger: 1,000 distinct ShuffledRound events (n in [1e3, 1e6], eps0 in [0.5, 5],
   a 133 KB file), eps(1e-6) as `compose --ledger` answers it (the query's plan: economy
   constructions within the 60 s limit), and the refusal under --max-seconds 5 (time to refuse).
B. A 100-event slice of it: the planned query against the full constructions (max_seconds=None)
   in the same process: value and time ratios (what the economy pairs cost in tightness).
C. 1,000 appends of one round: grouped (one event of 1,000 rounds, composed by squaring)
   against the same ledger with grouping switched off (1,000 sequential convolutions, the old
   behaviour), in the same process.
D. Concurrent appends: 8 writer processes released at once on one ledger, with the lock and
   with the lock switched off (the old behaviour), in the same process: rounds kept.
E. ``python bench/ledger.py old [EVENTS]`` runs main's code before this change (a copy from
   ``git archive``, in a subprocess, capped at 900 s) on the first EVENTS (default 100) events
   of A's ledger, for the before figure.
"""
import contextlib
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time

from ldpcompress.accounting import Accountant, ShuffledRound
from ldpcompress.accounting import plan as PL
from ldpcompress.accounting.event_pld import pld
from ldpcompress.cli.main import main as cli
from ldpcompress.core import locked_files as LF

DELTA = 1e-6


def distinct(count, seed=1):
    rng = random.Random(seed)  # benchmark data, not privacy randomness
    return [ShuffledRound(rng.randrange(1000, 10 ** 6), round(rng.uniform(0.5, 5.0), 6))
            for _ in range(count)]


def ledger(events, **kw):
    acct = Accountant(**kw)
    for event in events:
        acct.compose(event)
    return acct


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def hostile(folder):
    path = os.path.join(folder, "ledger.json")
    ledger(distinct(1000)).save(path)
    print(f"A. 1,000 distinct shuffled rounds, {os.path.getsize(path) / 1e3:.0f} KB:")
    pld(ShuffledRound(1000, 1.0), 1e-3, "mean")  # warm the kernels
    cpu = time.process_time()
    res, secs = timed(lambda: Accountant.load(path).epsilon(DELTA))
    cpu = time.process_time() - cpu
    print(f"  eps = {res.value:.4f} ({res.method}, lower {res.lower:.4f}), {secs:.1f} s wall, "
          f"{cpu:.1f} s CPU (load average {os.getloadavg()[0]:.1f}; before: past 400 s); "
          f"{res.cost}")
    code, secs = timed(lambda: cli(["compose", "--delta", "1e-6", "--ledger", path,
                                    "--max-seconds", "5"]))
    print(f"  --max-seconds 5: exit {code} in {secs:.2f} s (refused before any work)")


def slice_100():
    events = distinct(1000)[:100]
    planned, t_plan = timed(lambda: ledger(events, max_seconds=20.0).epsilon(DELTA))
    full, t_full = timed(lambda: ledger(events, max_seconds=None).epsilon(DELTA))
    print(f"B. 100-event slice: planned (20 s limit) eps {planned.value:.5f} ({planned.method}) "
          f"in {t_plan:.1f} s; full constructions eps {full.value:.5f} ({full.method}) in "
          f"{t_full:.1f} s: value ratio {planned.value / full.value:.4f}, time ratio "
          f"{t_full / t_plan:.1f}x")


def grouped():
    acct = Accountant()
    for _ in range(1000):
        acct.compose(ShuffledRound(10_000, 1.0))
    new, t_new = timed(lambda: acct.epsilon(DELTA))
    keep = PL.group
    PL.group = list  # no grouping: the old behaviour
    try:
        old, t_old = timed(lambda: acct.epsilon(DELTA))
    finally:
        PL.group = keep
    print(f"C. 1,000 appends of one round: grouped eps {new.value:.6f} in {t_new:.2f} s; "
          f"ungrouped {old.value:.6f} in {t_old:.2f} s; ratio {t_old / t_new:.1f}x")


def _append(argv, start):
    start.wait()
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        code = cli(argv)
    os._exit(code)


def concurrent(folder, locked=True):
    path = os.path.join(folder, f"c{int(locked)}.json")
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        cli(["compose", "--n", "1e4", "--eps0", "1", "--rounds", "1", "--delta", "1e-6",
             "--ledger", path])
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(8)
    keep = LF.exclusive
    if not locked:
        LF.exclusive = lambda path, *a, **k: contextlib.nullcontext(LF.target(path))
    try:
        procs = [ctx.Process(target=_append, args=(
            ["compose", "--n", str(2000 + i), "--eps0", "1", "--rounds", "1", "--delta", "1e-6",
             "--ledger", path], start)) for i in range(8)]
        t = time.perf_counter()
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        secs = time.perf_counter() - t
    finally:
        LF.exclusive = keep
    kept = len(Accountant.load(path).events)
    return kept, secs, [p.exitcode for p in procs]


def appends(folder):
    pld(ShuffledRound(2000, 1.0), 1e-3, "up")
    kept, secs, codes = concurrent(folder, True)
    lost, secs_old, codes_old = concurrent(folder, False)
    print(f"D. 1 + 8 concurrent appends: locked kept {kept} of 9 events ({secs:.1f} s, exits "
          f"{set(codes)}); without the lock (old) kept {lost} of 9 ({secs_old:.1f} s, exits "
          f"{set(codes_old)})")


def old(events=100):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "main")
        os.mkdir(src)
        root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout
        archive = subprocess.run(["git", "archive", "main"], capture_output=True,
                                 cwd=root.strip(), check=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
        # the package finds its kernels as ldpcompress.kernels (the install maps the folder)
        os.symlink(os.path.join(src, "kernels"), os.path.join(src, "ldpcompress", "kernels"))
        path = os.path.join(tmp, "ledger.json")
        ledger(distinct(1000)[:events]).save(path)
        code = ("import time, sys, ldpcompress\nassert ldpcompress.__file__.startswith("
                f"{src!r})\nfrom ldpcompress.accounting import Accountant, ShuffledRound\n"
                "Accountant().compose(ShuffledRound(1000, 1.0)).epsilon(1e-6)  # compile\n"
                f"a = Accountant.load({path!r}); t = time.perf_counter()\n"
                "r = a.epsilon(1e-6); print(r.value, time.perf_counter() - t)")
        env = dict(os.environ, PYTHONPATH=src)
        t = time.perf_counter()
        out: list = []
        try:
            run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 env=env, cwd=src, timeout=900)
            out = run.stdout.split()
            if len(out) != 2:
                raise RuntimeError(f"main's code failed: {run.stderr[-2000:]}")
            print(f"E. main's code, {events} events: eps {float(out[0]):.5f} in "
                  f"{float(out[1]):.1f} s")
        except subprocess.TimeoutExpired:
            print(f"E. main's code, {events} events: still running after "
                  f"{time.perf_counter() - t:.0f} s")
        Accountant().compose(ShuffledRound(1000, 1.0)).epsilon(DELTA)
        new, secs = timed(lambda: Accountant.load(path).epsilon(DELTA))
        print(f"   this branch: eps {new.value:.5f} ({new.method}) in {secs:.1f} s; ratio "
              f"{float(out[1]) / secs:.1f}x" if len(out) == 2 else "")


if __name__ == "__main__":
    if sys.argv[1:2] == ["old"]:
        old(int(sys.argv[2]) if len(sys.argv) > 2 else 100)
    else:
        with tempfile.TemporaryDirectory() as folder:
            hostile(folder)
            slice_100()
            grouped()
            appends(folder)
