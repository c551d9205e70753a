"""Which frequency oracle should I use? Every oracle of the command line (``oracle_names()``)
at the same replacement eps: the standard error of a count, bits per report, client and server
time, and the central eps that shuffling the n reports gives (each oracle's own bound). Prints
the Markdown table of docs/guide.md §3 ("Which oracle should I use?") with every figure's
ratio to OUE (optimized unary encoding, the reference of optimal variance) run in the same
process.

    python bench/oracles.py            # n = 1e5; k, eps in (100, 4), (1000, 1), (1000, 4)
    python bench/oracles.py --quick    # n = 2e4, one setting

Simulated Zipf(1.1) data (numpy, not privacy randomness); client coins from os.urandom as in
production. Times are wall seconds of one run after a warm-up (kernels compiled), on this
machine: compare within a table, not across machines. "rmse" is measured over all k items of
one run; "sd rare" is sqrt(variance(n, 0)) from the oracle's formula (a count near 0).
"""
import os
import sys
import time

import numpy as np

from ldpcompress import epsilon
from ldpcompress.randomizers.catalog import make_oracle, oracle_names

BASELINE = "oue"
DELTA = 1e-6
CHUNK_VALUES = 2 * 10 ** 7  # report entries per client chunk (k-bit reports: n k values)


def build(name: str, k: int, eps: float):
    """The oracle at replacement eps: symmetric RAPPOR's parameter is its deletion eps, half
    its replacement eps (catalog.make_oracle)."""
    oracle = make_oracle(name, k, eps / 2 if name == "rappor" else eps)
    assert oracle.replacement_eps <= eps * (1 + 1e-12), (name, oracle.replacement_eps)
    return oracle


def run(oracle, xs: np.ndarray) -> dict:
    """Client and server seconds (in chunks bounded by CHUNK_VALUES report entries, summaries
    added), and the estimate."""
    n = xs.size
    step = max(1000, CHUNK_VALUES // max(oracle.bits_per_report, 64))
    warm = oracle.randomize_many(xs[:step])  # warm-up at the chunk size: kernels compiled
    oracle.estimate_from_summary(oracle.summarize(warm), min(n, step))
    t_client = t_server = 0.0
    summary = None
    for lo in range(0, n, step):
        t = time.perf_counter()
        reports = oracle.randomize_many(xs[lo:lo + step])
        t_client += time.perf_counter() - t
        t = time.perf_counter()
        part = oracle.summarize(reports)
        summary = part if summary is None else summary + part
        t_server += time.perf_counter() - t
    t = time.perf_counter()
    est = oracle.estimate_from_summary(summary, n)
    t_server += time.perf_counter() - t
    return dict(client=t_client, server=t_server, estimate=est)


def table(n: int, k: int, eps: float, rng) -> list[str]:
    xs = (rng.zipf(1.1, n) - 1) % k
    true = np.bincount(xs, minlength=k)
    rows = {}
    for name in oracle_names():
        oracle = build(name, k, eps)
        res = run(oracle, xs)
        central = epsilon(n, delta=DELTA, oracle=oracle, lower=False)
        rows[name] = dict(
            bits=oracle.bits_per_report, sd=float(np.sqrt(oracle.variance(n, 0.0))),
            rmse=float(np.sqrt(np.mean((res["estimate"] - true) ** 2))),
            client=res["client"], server=res["server"], central=central.value,
            method=central.method, eps=oracle.replacement_eps)
    base = rows[BASELINE]
    out = [f"n = {n:,}, k = {k:,}, replacement eps = {eps:g} (central eps at delta = {DELTA:g}):",
           "",
           "| oracle | sd rare (x OUE) | rmse | bits/report (x OUE) | client s | server s (x OUE) "
           "| central eps (bound) |",
           "|---|---|---|---|---|---|---|"]
    for name, r in sorted(rows.items(), key=lambda item: item[1]["sd"]):
        out.append(f"| {name} | {r['sd']:.1f} ({r['sd'] / base['sd']:.2f}) | {r['rmse']:.1f} | "
                   f"{r['bits']:,} ({r['bits'] / base['bits']:.3g}) | {r['client']:.3f} | "
                   f"{r['server']:.3f} ({r['server'] / base['server']:.2g}) | "
                   f"{r['central']:.3g} ({r['method']}) |")
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    settings = [(100, 4.0)] if quick else [(100, 4.0), (1000, 1.0), (1000, 4.0)]
    n = 2 * 10 ** 4 if quick else 10 ** 5
    rng = np.random.default_rng(0)  # simulated users' data only
    print(f"# python bench/oracles.py{' --quick' if quick else ''}  ({os.cpu_count()} cores; "
          f"numpy {np.__version__}); baseline: {BASELINE}, same process")
    for k, eps in settings:
        print()
        print("\n".join(table(n, k, eps, rng)))


if __name__ == "__main__":
    main()
