"""Benchmark of mean estimation (issue: speed and accuracy targets).

For d in {100, 1000, 10000}, eps in {2, 4, 8}: MSE of compressed vs uncompressed PrivUnit2 and the
one-bit baseline (with the predicted values), encode time per report and expected trials with and
without splitting, bytes per report (17 per seed vs 8 d).
"""
import sys
import time

import numpy as np

from ldpcompress.compression import split as SP
from ldpcompress.estimation.mean import simulate
from ldpcompress.randomizers import privunit as PU
from ldpcompress.randomizers.onebit import OneBitSphere


def main():
    quick = "--quick" in sys.argv
    for d in ([100, 1000] if quick else [100, 1000, 10000]):
        n = 2000 if d < 10000 else 300
        xs = simulate(d, n)
        truth = xs.mean(axis=0)
        for eps in (2.0, 4.0, 8.0):
            plain, onebit = PU.PrivUnit2(d, eps), OneBitSphere(d, eps)
            row = []
            for split in sorted({1, SP.choose_split(d, eps, max_trials=20)}):
                comp = SP.CompressedPrivUnit2(d, eps, split)
                t = time.perf_counter()
                reps = comp.encode_many(xs)
                enc_ms = (time.perf_counter() - t) / n * 1e3
                mse = np.sum((comp.decode_many(reps).mean(axis=0) - truth) ** 2)
                row.append(f"K={split}: MSE {mse:.3g} (pred {comp.variance() / n:.3g}), "
                           f"{enc_ms:.2f} ms/report, trials {comp.expected_trials:.1f}, "
                           f"{comp.bytes_per_report} B")
            t = time.perf_counter()
            zp = np.array([plain.randomize(x) for x in xs])
            plain_ms = (time.perf_counter() - t) / n * 1e3
            mse_p = np.sum((zp.mean(axis=0) - truth) ** 2)
            zo = np.array([onebit.randomize(x) for x in xs])
            mse_o = np.sum((zo.mean(axis=0) - truth) ** 2)
            print(f"d={d:>5} eps={eps:g} n={n}: PrivUnit2 MSE {mse_p:.3g} (pred "
                  f"{plain.variance() / n:.3g}, {plain_ms:.2f} ms, {8 * d} B); one-bit MSE "
                  f"{mse_o:.3g} (pred {onebit.variance() / n:.3g})")
            for r in row:
                print("    compressed " + r)


if __name__ == "__main__":
    main()
