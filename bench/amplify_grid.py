"""Benchmark of a table of amplification queries from the command line: one process a query
(the baseline: a shell loop over ``ldpcompress amplify``) against one ``amplify`` call given
several values per option (every combination answered in one process).

    python bench/amplify_grid.py [--runs N]

Prints the wall and CPU seconds of both (median of N interleaved runs), their ratio, and
checks that both print the same best upper bound and lower bound for every query.
"""
import argparse
import itertools
import json
import resource
import statistics
import subprocess
import sys
import time

NS = ("1e4", "1e5", "1e6")
EPS0S = ("1", "2", "4")
DELTA = "1e-6"


def run(argv) -> tuple[float, float, str]:
    """(wall seconds, the child's CPU seconds, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def loop() -> tuple[float, float, list]:
    """The baseline: one process a query, as a shell loop would run them."""
    wall = cpu = 0.0
    answers = []
    for n, eps0 in itertools.product(NS, EPS0S):
        w, c, out = run([sys.executable, "-m", "ldpcompress", "amplify", "--n", n, "--eps0",
                         eps0, "--delta", DELTA, "--json"])
        wall, cpu = wall + w, cpu + c
        res = json.loads(out)["results"]
        answers.append((res["value"], res["lower"]))
    return wall, cpu, answers


def grid() -> tuple[float, float, list]:
    wall, cpu, out = run([sys.executable, "-m", "ldpcompress", "amplify", "--n", *NS, "--eps0",
                          *EPS0S, "--delta", DELTA, "--json"])
    rows = json.loads(out)["results"]["queries"]
    return wall, cpu, [(r["value"], r["lower"]) for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    grid()  # warm-up: the Numba cache exists
    loops, grids = [], []
    for _ in range(args.runs):
        loops.append(loop())
        grids.append(grid())
    if any(g[2] != lp[2] for g, lp in zip(grids, loops)):
        raise SystemExit("the grid and the loop disagree")
    q = len(NS) * len(EPS0S)
    print(f"{q} amplify queries (n in {NS}, eps0 in {EPS0S}, delta {DELTA}), median of "
          f"{args.runs} interleaved runs; same answers both ways")
    for name, rows in (("one process a query (baseline)", loops), ("one call, a grid", grids)):
        print(f"  {name:<32} wall {statistics.median(r[0] for r in rows):6.2f} s   "
              f"cpu {statistics.median(r[1] for r in rows):6.2f} s")
    print(f"  baseline / grid: wall "
          f"{statistics.median(lp[0] / g[0] for lp, g in zip(loops, grids)):.2f}x, cpu "
          f"{statistics.median(lp[1] / g[1] for lp, g in zip(loops, grids)):.2f}x")


if __name__ == "__main__":
    main()
