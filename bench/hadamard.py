"""Hadamard response: the general-privacy code (default) against the basic one-bit variant and
OUE (optimized unary encoding, the reference of optimal variance), all run in this process
(docs/theory.md §6.3, docs/guide.md "Which oracle should I use?").

    python bench/hadamard.py            # the MSE table, server time at n = 1e6, shuffled bounds
    python bench/hadamard.py --quick    # n = 2e5 server time, fewer bound settings

1. MSE per item of a count near 0 (the variance formula; a0 = 2^-t exactly, so it is the
   estimator's exact variance) for k in {16, 256, 1000, 4096}, eps in {1, 4, 8}: general,
   basic, OUE and the ratios to OUE; the general code's t and bits per report. "sim" is the
   mean squared error over the k items of RUNS simulated runs (n = 1e5 Zipf(1.1) users,
   numpy data; client coins from os.urandom) divided by the formula's mean (1 = as stated).
   It is a noisy figure: the few head items dominate it, and when m = 2t any three items'
   support sets meet in one report only, so the items' errors are correlated.
2. Client and server seconds for 1e6 reports at k = 1000, eps = 4 (server: histogram, one
   Walsh-Hadamard transform, span sums), general vs basic.
3. Central eps at delta = 1e-6 of n shuffled reports: the generic bound at the realised
   replacement eps0 (FMT21 clone pair), the oracle's own blanket bound (§2.5) and its exact
   attack (§2.6), general vs basic.
Times are wall seconds after a warm-up (kernels compiled): compare within a table only.
"""
import os
import sys
import time

import numpy as np

from ldpcompress import epsilon
from ldpcompress.randomizers.hadamard import HadamardResponse
from ldpcompress.randomizers.rappor import OUE

DELTA = 1e-6
N_SIM = 10 ** 5
RUNS = 4


def mse_table(rng) -> list[str]:
    out = ["| k | eps | t | bits (basic) | general | basic | OUE | general / OUE | basic / OUE "
           "| sim general | sim basic |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in (16, 256, 1000, 4096):
        xs = (rng.zipf(1.1, N_SIM) - 1) % k  # simulated users' data only
        true = np.bincount(xs, minlength=k)
        for eps in (1.0, 4.0, 8.0):
            gen, basic, oue = (HadamardResponse(k, eps), HadamardResponse(k, eps, "basic"),
                               OUE(k, eps))
            v = [float(o.variance(1, 0.0)) for o in (gen, basic, oue)]
            sim = []
            for o in (gen, basic):
                sq = [float(np.mean((o.estimate(o.randomize_many(xs)) - true) ** 2))
                      for _ in range(RUNS)]
                sim.append(float(np.mean(sq)) / float(np.mean(o.variance(N_SIM, true))))
            out.append(f"| {k} | {eps:g} | {gen.t} | {gen.bits_per_report} "
                       f"({basic.bits_per_report}) | {v[0]:.4g} | {v[1]:.4g} | {v[2]:.4g} | "
                       f"{v[0] / v[2]:.3f} | {v[1] / v[2]:.2f} | {sim[0]:.3f} | {sim[1]:.3f} |")
    return out


def timing(n: int, rng) -> list[str]:
    k, eps = 1000, 4.0
    xs = (rng.zipf(1.1, n) - 1) % k
    rows = {}
    for name, o in (("general", HadamardResponse(k, eps)),
                    ("basic", HadamardResponse(k, eps, "basic"))):
        o.estimate(o.randomize_many(xs[:1000]))  # warm-up: kernels compiled and loaded
        t = time.perf_counter()
        reports = o.randomize_many(xs)
        t_client = time.perf_counter() - t
        t = time.perf_counter()
        o.estimate(reports)
        rows[name] = (t_client, time.perf_counter() - t, o.bits_per_report, o.big_k)
    b = rows["basic"]
    out = [f"n = {n:,} reports, k = {k}, eps = {eps:g}:", "",
           "| variant | bits/report | K | client s | server s (x basic) |", "|---|---|---|---|---|"]
    for name, r in rows.items():
        out.append(f"| {name} | {r[2]} | {r[3]:,} | {r[0]:.3f} | {r[1]:.3f} ({r[1] / b[1]:.2f}) |")
    return out


def bounds(settings) -> list[str]:
    out = [f"central eps at delta = {DELTA:g}, k = 1000:", "",
           "| n | eps0 | variant | realised eps0 | generic | blanket | attack | blanket / generic |",
           "|---|---|---|---|---|---|---|---|"]
    for n, eps0 in settings:
        for name, o in (("general", HadamardResponse(1000, eps0)),
                        ("basic", HadamardResponse(1000, eps0, "basic"))):
            t = time.perf_counter()
            own = epsilon(n, delta=DELTA, oracle=o)
            t_own = time.perf_counter() - t
            generic = epsilon(n, o.replacement_eps, DELTA, lower=False).value
            blanket = min(b.value for b in own.bounds if "blanket" in b.name)
            out.append(f"| {n:.0e} | {eps0:g} | {name} | {o.replacement_eps:.4f} | {generic:.4g} "
                       f"| {blanket:.4g} | {own.lower:.4g} | {blanket / generic:.3f} "
                       f"({t_own:.2f} s) |")
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    rng = np.random.default_rng(0)  # simulated users' data only
    print(f"# python bench/hadamard.py{' --quick' if quick else ''}  ({os.cpu_count()} cores; "
          f"numpy {np.__version__}); baselines OUE and the basic variant, same process")
    print()
    print("\n".join(mse_table(rng)))
    print()
    print("\n".join(timing(2 * 10 ** 5 if quick else 10 ** 6, rng)))
    print()
    settings = [(10 ** 4, 6.0)] if quick else [(10 ** 4, 1.0), (10 ** 4, 6.0), (10 ** 6, 4.0)]
    print("\n".join(bounds(settings)))


if __name__ == "__main__":
    main()
