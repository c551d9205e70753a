"""Benchmark of composition (issue: speed targets), with dp_accounting as the baseline.

1000 identical shuffled rounds (n = 1e5, eps0 = 2): our PLD (build + self-compose + eps(1e-6))
vs dp_accounting's PLD built from the same pmfs (from_two_probability_mass_functions) and
self_compose, in the same process; then 100 heterogeneous rounds; peak memory of a 2^20 grid.
"""
import math
import time
import tracemalloc

import numpy as np

from ldpcompress import accountant as A
from ldpcompress import pld as P
from ldpcompress.profiles import general_pair

N, EPS0, ROUNDS, DELTA, H = 10 ** 5, 2.0, 1000, 1e-6, 1e-4


def ours():
    A._event_pld.cache_clear()
    acct = A.Accountant(h=H).compose(A.ShuffledRound(N, EPS0), times=ROUNDS)
    return acct.epsilon(DELTA)


def clone_pmfs(n, eps0, tol=1e-30):
    """The S2.1 pair's atoms as dicts of log-masses (the input dp_accounting takes)."""
    from ldpcompress.kernels.binomial import binom_window
    from scipy import stats
    q, p = general_pair(eps0)
    lo, hi, _ = binom_window(n - 1, q, 1 - q, tol)
    lp, lq = {}, {}
    for c in range(lo, hi + 1):
        w = stats.binom.logpmf(c, n - 1, q)
        m = c + 1
        x = np.arange(m + 1)
        lb = stats.binom.logpmf(x, m, 0.5) + math.log(2 / m) + w
        keep = lb > -80
        for xi, b in zip(x[keep], lb[keep]):
            lp[(c, xi)] = b + math.log(p * xi + (1 - p) * (m - xi))
            lq[(c, xi)] = b + math.log((1 - p) * xi + p * (m - xi))
    return lp, lq


def baseline():
    from dp_accounting.pld import privacy_loss_distribution as pld
    t = time.perf_counter()
    lp, lq = clone_pmfs(N, EPS0)
    t_atoms = time.perf_counter() - t
    t = time.perf_counter()
    one = pld.from_two_probability_mass_functions(lp, lq, value_discretization_interval=H)
    eps = one.self_compose(ROUNDS).get_epsilon_for_delta(DELTA)
    return eps, t_atoms, time.perf_counter() - t


def main():
    ours()  # warm
    t = time.perf_counter()
    res = ours()
    t_ours = time.perf_counter() - t
    print(f"1000 rounds n=1e5 eps0=2: eps(1e-6) = {res.value:.6f} (lower {res.lower:.6f}), "
          f"{t_ours:.3f} s warm (upper + lower PLDs)")
    try:
        eps_b, t_atoms, t_b = baseline()
        print(f"dp_accounting: eps = {eps_b:.6f}, {t_b:.3f} s (+ {t_atoms:.2f} s to list the atoms)"
              f"; ratio {t_b / t_ours:.1f}x")
    except ImportError:
        print("dp_accounting not installed: pip install 'ldpcompress[dp-accounting]'")
    for method in ("dots", "exact"):
        A._event_pld.cache_clear()
        t = time.perf_counter()
        acct = A.Accountant(h=H)
        for i in range(100):
            acct.compose(A.ShuffledRound(50_000 + 1000 * i, EPS0, pld_method=method))
        het = acct.epsilon(DELTA)
        print(f"100 heterogeneous rounds (n = 5e4 .. 1.49e5), {method} PLDs: eps = {het.value:.6f}"
              f" (lower {het.lower}), {time.perf_counter() - t:.3f} s")
    tracemalloc.start()
    g = P.gaussian(1.0, h=3.2e-5)  # a grid of ~2^20 points
    g2 = g.compose(g)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"grid of {g.dirs[0].pmf.size} points composed: peak {peak / 2**20:.0f} MiB")
    del g2


if __name__ == "__main__":
    main()
