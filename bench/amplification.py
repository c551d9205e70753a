"""Benchmark of the amplification bounds (issue: speed targets), with a scipy baseline.

Prints, for each (n, eps0) at delta = 1e-6, each bound's eps and warm time per query, the
same general-bound query by a straightforward scipy implementation (vectorised binom.sf over
every c, plain bisection) and the ratio; then the k-RR blanket bound with and without blocks,
and the time of import + first call in a fresh process.
"""
import math
import subprocess
import sys
import time

import numpy as np
from scipy import stats

from ldpcompress import amplification as A

DELTA = 1e-6


def scipy_general_delta(n, eps0, eps):
    """S2.1 by scipy: every c in 0..n-1, binomial tails by binom.sf (the baseline)."""
    q, p = math.exp(-eps0), 1 / (1 + math.exp(-eps0))
    e = math.exp(eps)
    al, be = p - e * (1 - p), (1 - p) - e * p
    if al <= 0:
        return 0.0
    theta = -be / (al - be)
    c = np.arange(n)
    w = stats.binom.pmf(c, n - 1, q)
    t = np.floor(theta * (c + 1)) + 1
    return float(np.sum(w * (al * stats.binom.sf(t - 2, c, 0.5) + be * stats.binom.sf(t - 1, c, 0.5))))


def scipy_general_epsilon(n, eps0, delta):
    lo, hi = 0.0, eps0
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        if scipy_general_delta(n, eps0, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def timed(fn, *args, repeat=3, **kw):
    fn(*args, **kw)  # warm
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*args, **kw)
        best = min(best, time.perf_counter() - t)
    return out, best


def main():
    quick = "--quick" in sys.argv
    ns = [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6] if quick else [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7]
    print(f"delta = {DELTA}; times are warm, best of 3, per eps(delta) query")
    print(f"{'n':>9} {'eps0':>5} {'closed':>10} {'general':>12} {'lower':>10} {'ms':>8} "
          f"{'scipy ms':>10} {'ratio':>8}")
    for n in ns:
        for eps0 in [0.5, 1, 2, 4, 6, 8]:
            cf = A.closed_form_epsilon(n, eps0, DELTA)
            gen, t_gen = timed(lambda: A.general_epsilon(n, eps0, DELTA).value)
            low = A.lower_epsilon(n, eps0, DELTA).value
            if n <= 10 ** 5 or (n == 10 ** 6 and eps0 in (1, 4)):
                base, t_base = timed(scipy_general_epsilon, n, eps0, DELTA, repeat=1)
                assert base >= gen * (1 - 1e-6), "baseline disagrees"
                extra = f"{t_base * 1e3:10.1f} {t_base / t_gen:8.0f}"
            else:
                extra = f"{'-':>10} {'-':>8}"
            cfs = f"{cf.value:10.5f}" if cf.applicable else f"{'n/a':>10}"
            print(f"{n:9d} {eps0:5g} {cfs} {gen:12.7f} {low:10.5f} {t_gen * 1e3:8.3f} {extra}")
    print("\nk-RR blanket pair (S2.3b), k = 100, eps(1e-6): blocked (64) vs unblocked")
    for n in [10 ** 4, 10 ** 5, 10 ** 6]:
        for eps0 in [1.0, 4.0, 6.0]:
            blk, t_blk = timed(lambda: A.krr_blanket_epsilon(n, eps0, 100, DELTA).value, repeat=1)
            if n <= 10 ** 5:
                full, t_full = timed(lambda: A.krr_blanket_epsilon(n, eps0, 100, DELTA, blocks=None).value,
                                     repeat=1)
                loss = f"{(blk - full) / full:.2e}"
                tf = f"{t_full * 1e3:9.1f}"
            else:
                loss, tf = "-", "-"
            gen = A.general_epsilon(n, eps0, DELTA).value
            print(f"n={n:8d} eps0={eps0:3g} blanket={blk:.7f} ({t_blk * 1e3:8.1f} ms) "
                  f"unblocked ms={tf} rel.loss={loss} general={gen:.5f}")
    print("\nhuge n, general bound eps(1e-6), eps0 = 1 (one query, warm)")
    for n in [10 ** 9, 10 ** 10, 2 ** 53]:
        start = time.perf_counter()
        try:
            val = f"{A.general_epsilon(n, 1.0, DELTA).value:.7g}"
        except ValueError as err:
            val = f"refused: {err}"
        print(f"n={n:>16d} {time.perf_counter() - start:8.2f} s  {val}")
    code = ("import time; t=time.perf_counter(); import ldpcompress as L; "
            "L.epsilon(10**6, 4.0, 1e-6, lower=False); print(time.perf_counter()-t)")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    print(f"\nimport + first query in a fresh process (Numba cache warm): {float(out.stdout):.2f} s")


if __name__ == "__main__":
    main()
