"""Benchmark of the command line's start-up and of the first demo's compilation.

    python bench/startup.py [--runs N] [--demo] [--against PYTHON] [--venv [CHECKOUT ...]]

Whole processes, timed from outside (wall seconds and the child's user + system CPU seconds,
median of N interleaved runs): ``ldpcompress --version`` (the baseline: interpreter, numpy and
the parser), ``ldpcompress amplify --n 1e6 --eps0 4 --delta 1e-6`` (kernels loaded from the
cache) and their ratio per pair of runs; then the floor any kernel-loading command pays:
``import numba`` plus the implementations Numba imports before it loads a cached kernel
(``numba.np.arraymath``, which imports scipy.linalg), against ``import numpy``.

``--demo``: the first ``ldpcompress demo`` with an empty Numba cache (NUMBA_CACHE_DIR a fresh
directory each run), its wall and CPU seconds and the seconds its kernels took to compile
(from its --json timings). ``--against PYTHON``: the same commands under another interpreter
or checkout (e.g. the main branch's), in the same run, interleaved, with the ratio ours/theirs.

``--venv [CHECKOUT ...]``: what a new user meets, and nothing else. A fresh venv under /tmp per
checkout (this one, and each CHECKOUT given, e.g. /work/main), the checkout ``pip install``-ed
into it (not editable: the kernels' Numba cache lives in its site-packages), then
``ldpcompress demo`` twice: the first compiles and caches the kernels, the second loads them.
``--runs`` times each, interleaved, the installed cache emptied before each first run; medians
and the ratio ours/theirs per pair of runs. The venvs are removed afterwards.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

AMPLIFY = ["amplify", "--n", "1e6", "--eps0", "4", "--delta", "1e-6"]


def run(argv, env=None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def medians(commands: dict, runs: int, env=None) -> dict:
    """Each command run ``runs`` times, interleaved (after one warm-up each): medians and the
    per-run figures (for ratios taken pair by pair)."""
    for argv in commands.values():
        run(argv, env)
    times: dict = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(run(argv, env)[:2])
    return times


def show(name: str, samples) -> None:
    wall = statistics.median(s[0] for s in samples)
    cpu = statistics.median(s[1] for s in samples)
    print(f"  {name:<44} wall {wall:6.3f} s   cpu {cpu:6.3f} s")


def ratio(a, b) -> str:
    return (f"wall {statistics.median(x[0] / y[0] for x, y in zip(a, b)):.2f}x, "
            f"cpu {statistics.median(x[1] / y[1] for x, y in zip(a, b)):.2f}x")


def first_demo(python: str) -> tuple[float, float, float]:
    """(wall, cpu, kernel seconds) of one demo with an empty Numba cache."""
    cache = tempfile.mkdtemp(prefix="ldpc-bench-nbc-")
    try:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        wall, cpu, out = run([python, "-m", "ldpcompress", "demo", "--json"], env)
        return wall, cpu, json.loads(out)["timings"].get("compile/load", float("nan"))
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def clear_kernel_cache(venv: str) -> None:
    """Delete the Numba cache files (*.nbi, *.nbc) of the package installed in ``venv``."""
    for dirpath, _, files in os.walk(venv):
        if dirpath.endswith(os.path.join("ldpcompress", "kernels", "__pycache__")):
            for name in files:
                if name.endswith((".nbi", ".nbc")):
                    os.remove(os.path.join(dirpath, name))


def fresh_venvs(checkouts: list[str], runs: int) -> None:
    """First and second ``ldpcompress demo`` in a fresh venv per checkout (see --venv)."""
    root = tempfile.mkdtemp(prefix="ldpc-bench-venv-")
    try:
        venvs = {}
        for i, checkout in enumerate(checkouts):
            venvs[checkout] = venv = os.path.join(root, f"v{i}")
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", checkout],
                           check=True, capture_output=True)
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        rows: dict = {(c, a): [] for c in checkouts for a in ("first", "second")}
        for _ in range(runs):  # interleaved: each checkout under the same load
            for checkout, venv in venvs.items():
                clear_kernel_cache(venv)  # as installed: no kernel compiled yet
                for attempt in ("first", "second"):
                    argv = [os.path.join(venv, "bin", "ldpcompress"), "demo"]
                    rows[checkout, attempt].append(run(argv, env)[:2])
        print(f"ldpcompress demo in a fresh venv (pip install CHECKOUT, not editable), median of "
              f"{runs} interleaved runs, the kernels' cache emptied before each first run:")
        for attempt, what in (("first", "first (compiles)"), ("second", "second (cached)")):
            for checkout in checkouts:
                show(f"{what}: {checkout}", rows[checkout, attempt])
            for checkout in checkouts[1:]:
                print(f"  {what}: ours / {checkout}: "
                      f"{ratio(rows[checkouts[0], attempt], rows[checkout, attempt])}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--demo", action="store_true", help="also the first demo, empty cache")
    ap.add_argument("--against", metavar="PYTHON", help="another interpreter / checkout")
    ap.add_argument("--venv", nargs="*", metavar="CHECKOUT",
                    help="only the first and second demo in a fresh venv of this checkout and "
                    "of each CHECKOUT given (e.g. /work/main), --runs times each")
    args = ap.parse_args()
    if args.venv is not None:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        fresh_venvs([here, *args.venv], args.runs)
        return
    pythons = {"ours": sys.executable} | ({"theirs": args.against} if args.against else {})
    commands = {}
    for who, py in pythons.items():
        commands[f"{who}: ldpcompress --version"] = [py, "-m", "ldpcompress", "--version"]
        commands[f"{who}: ldpcompress {' '.join(AMPLIFY)}"] = [py, "-m", "ldpcompress", *AMPLIFY]
    commands["floor: python -c 'import numpy'"] = [sys.executable, "-c", "import numpy"]
    commands["floor: import numba + its implementations"] = [
        sys.executable, "-c", "import numba, numba.np.arraymath"]
    times = medians(commands, args.runs)
    print(f"start-up, median of {args.runs} interleaved runs (each after a warm-up):")
    for name, samples in times.items():
        show(name, samples)
    names = list(times)
    for who in pythons:
        version, amplify = (times[n] for n in names if n.startswith(f"{who}:"))
        print(f"  {who}: amplify / --version: {ratio(amplify, version)}")
    if args.against:
        for i in (0, 1):
            print(f"  ours / theirs, {names[i].split(': ', 1)[1]}: "
                  f"{ratio(times[names[i]], times[names[i + 2]])}")
    print(f"  floor: numba / numpy: {ratio(times[names[-1]], times[names[-2]])}; "
          f"numba + implementations / ours --version: {ratio(times[names[-1]], times[names[0]])}")
    if args.demo:
        print("first demo, empty Numba cache (one run each, interleaved):")
        rows = {who: first_demo(py) for who, py in pythons.items()}
        for who, (wall, cpu, kernels) in rows.items():
            print(f"  {who}: wall {wall:6.2f} s   cpu {cpu:6.2f} s   compiling {kernels:6.2f} s")
        if args.against:
            (w1, c1, k1), (w2, c2, k2) = rows["ours"], rows["theirs"]
            print(f"  ours / theirs: wall {w1 / w2:.2f}x, cpu {c1 / c2:.2f}x, "
                  f"compiling {k1 / k2:.2f}x")


if __name__ == "__main__":
    main()
