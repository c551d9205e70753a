"""Benchmark of the unary-encoding clients (OUE, symmetric RAPPOR, subset selection).

n = 1e5 users, k = 1000, eps in {1, 4}: seconds of ``randomize_many`` (coins in bulk from an
AES-CTR stream keyed by os.urandom), against two baselines run in the same process:
* numpy: the same coins drawn by numpy's PCG64 (not cryptographic), i.e. rng.random((n, k)) < a0
  plus the own-item bit for RAPPOR/OUE, and the n x d bounded integers of a partial Fisher-Yates
  shuffle plus the include coin and a row sort for subset selection;
* per-bit: the previous client, one 53-bit os.urandom uniform per bit (or per integer draw),
  kept here only as the baseline.
Times are the best of ``--reps`` runs (default 3; the per-bit path runs once). ``--n=``, ``--k=``
change the sizes; ``--quick`` runs n = 2e4.
"""
import sys
import time

import numpy as np

from ldpcompress.core import validate as V
from ldpcompress.core.entropy import SYSTEM
from ldpcompress.kernels.sample import partial_shuffles
from ldpcompress.randomizers.rappor import OUE, RAPPOR
from ldpcompress.randomizers.subset import SubsetSelection


def per_bit_rappor(oracle, xs, entropy=SYSTEM):
    """The previous RAPPOR/OUE client: one 53-bit uniform from the entropy source per bit."""
    xs = V.items(xs, oracle.k)
    bits = entropy.uniform(xs.size * oracle.k).reshape(xs.size, oracle.k) < oracle.a0
    bits[np.arange(xs.size), xs] = entropy.uniform(xs.size) >= oracle.a1c
    return bits


def per_bit_subset(oracle, xs, entropy=SYSTEM):
    """The previous subset-selection client: d columns of whole-word rejection integers from
    the entropy source, a partial Fisher-Yates shuffle of the others, x swapped in, sorted."""
    xs = V.items(xs, oracle.k)
    n = xs.size
    draws = np.empty((n, oracle.d), dtype=np.int64)
    for i in range(oracle.d):
        draws[:, i] = entropy.integers(oracle.k - 1 - i, n)
    return _finish_subsets(oracle, xs, draws, entropy.uniform(n))


def _finish_subsets(oracle, xs, draws, u):
    chosen = partial_shuffles(draws, oracle.k - 1)
    chosen += chosen >= xs[:, None]
    include = u >= oracle.a1c
    chosen[include, oracle.d - 1] = xs[include]
    return np.sort(chosen, axis=1)


def numpy_rappor(oracle, xs, rng):
    bits = rng.random((xs.size, oracle.k)) < oracle.a0
    bits[np.arange(xs.size), xs] = rng.random(xs.size) >= oracle.a1c
    return bits


def numpy_subset(oracle, xs, rng):
    draws = rng.integers(0, oracle.k - 1 - np.arange(oracle.d), size=(xs.size, oracle.d))
    return _finish_subsets(oracle, xs, draws, rng.random(xs.size))


def best_of(fn, reps):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    args = dict(a.lstrip("-").split("=") for a in sys.argv[1:] if "=" in a)
    n = int(float(args.get("n", 2e4 if "--quick" in sys.argv else 1e5)))
    k = int(float(args.get("k", 1000)))
    reps = int(args.get("reps", 3))
    rng = np.random.default_rng(0)  # simulated data and the numpy baseline only
    xs = (rng.zipf(1.1, n) - 1) % k
    print(f"unary-encoding clients, n = {n:.0e}, k = {k} (best of {reps}; per-bit path once)")
    print(f"  {'oracle':<22}{'eps':>4}{'client s':>10}{'numpy s':>9}{'per-bit s':>11}"
          f"{'vs numpy':>10}{'vs per-bit':>12}")
    for eps in (1.0, 4.0):
        for oracle, numpy_path, old_path in (
                (OUE(k, eps), numpy_rappor, per_bit_rappor),
                (RAPPOR(k, eps), numpy_rappor, per_bit_rappor),
                (SubsetSelection(k, eps), numpy_subset, per_bit_subset)):
            oracle.randomize_many(xs[:100])  # compile the kernels outside the timings
            old_path(oracle, xs[:100])
            t_new = best_of(lambda: oracle.randomize_many(xs), reps)
            t_np = best_of(lambda: numpy_path(oracle, xs, rng), reps)
            t_old = best_of(lambda: old_path(oracle, xs), 1)
            name = oracle.name + (f" d={oracle.d}" if hasattr(oracle, "d") else "")
            print(f"  {name:<22}{eps:>4g}{t_new:>10.3f}{t_np:>9.3f}{t_old:>11.3f}"
                  f"{t_np / t_new:>9.2f}x{t_old / t_new:>11.1f}x")
    print("  (vs numpy > 1: faster than drawing the same coins with numpy's PCG64;"
          " vs per-bit: speed-up over one os.urandom uniform per coin)")


if __name__ == "__main__":
    main()
