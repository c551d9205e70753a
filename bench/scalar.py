"""Gaussian- and Laplace-scalar queries that used to run away (docs/theory.md §2.11): time, peak
memory and eps of `amplify --oracle gaussian-scalar --param lo=0 --param hi=1 --param sigma=S
--n 1e4 --delta 1e-6` for the sigma of issue 27, each in its own process, beside the same
command run on a baseline checkout (the code before the change: ``--baseline PATH``, a git
worktree of main) in the same run; then the small-n attack against the exact attack
(tests/reference/scalar.py).

    python bench/scalar.py [--baseline /path/to/main-worktree] [--timeout 120]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGMAS = (1.0, 0.5, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05)
QUERY = """
import resource
import ldpcompress.accounting.amplification as L
from ldpcompress.randomizers import GaussianScalar
r = GaussianScalar(0.0, 1.0, {sigma})
try:
    res = L.epsilon(10**4, delta=1e-6, oracle=r)
    print(res.value, res.lower)
except Exception as err:  # the baseline's failures are part of the figure
    print("error", type(err).__name__, str(err)[:40].replace(" ", "_"))
print("peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def run(root: str, sigma: float, timeout: float) -> tuple[str, float, float]:
    """(answer, wall seconds, peak MB) of one query in a fresh process importing ``root``."""
    env = dict(os.environ, PYTHONPATH=root)
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", QUERY.format(sigma=sigma)], env=env, cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: resource.setrlimit(
                                resource.RLIMIT_AS, (8 << 30, 8 << 30)))
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        out = f"still running after {timeout:g} s"
    wall = time.perf_counter() - t
    lines = out.strip().splitlines()
    peak = float(lines[-1].split()[1]) if lines and lines[-1].startswith("peak") else float("nan")
    out = " ".join(lines[:1])
    return out, wall, peak / 1024.0


def small_n() -> None:
    sys.path.insert(0, HERE)
    import ldpcompress.accounting.amplification as L
    from ldpcompress.randomizers import GaussianScalar, LaplaceScalar
    from tests.reference.scalar import attack_bracket

    print(f"\n{'randomizer':28s} {'n':>3s} {'eps':>4s} {'attack':>10s} {'exact':>10s} "
          f"{'ratio':>6s} {'upper':>10s}")
    for name, oracle, half in (("laplace eps0=4", LaplaceScalar(0.0, 1.0, 4.0), 2.0),
                               ("gaussian sigma=1", GaussianScalar(0.0, 1.0, 1.0), 0.5),
                               ("gaussian sigma=0.5", GaussianScalar(0.0, 1.0, 0.5), 1.0)):
        for n in (2, 4, 8, 16):
            for eps in (0.5, 2.0):
                res = L.delta(n, eps=eps, oracle=oracle)
                exact = attack_bracket(name.split()[0], half, eps, n)[1]
                print(f"{name:28s} {n:3d} {eps:4g} {res.lower:10.4g} {exact:10.4g} "
                      f"{res.lower / exact:6.3f} {res.value:10.4g}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="a checkout of the code before (e.g. a main worktree)")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    print(f"{'sigma':>6s} | {'after: eps (upper lower)':34s} {'s':>6s} {'MB':>6s} | "
          f"{'baseline':34s} {'s':>6s} {'MB':>6s} | {'time ratio':>10s}")
    for sigma in SIGMAS:
        a, ta, ma = run(HERE, sigma, args.timeout)
        b, tb, mb = run(args.baseline, sigma, args.timeout) if args.baseline else ("-", 0, 0)
        ratio = f"{ta / tb:10.3f}" if tb else f"{'-':>10s}"
        print(f"{sigma:6g} | {a[:34]:34s} {ta:6.1f} {ma:6.0f} | {b[:34]:34s} {tb:6.1f} "
              f"{mb:6.0f} | {ratio}", flush=True)
    small_n()


if __name__ == "__main__":
    main()
