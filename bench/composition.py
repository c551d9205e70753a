"""Benchmark of composition (issue 11 targets), with dp_accounting as the baseline.

A. 1000 identical shuffled rounds (n = 1e5, eps0 = 2), eps(1e-6): the accountant's answer
   (every method, the smallest reported; grid step chosen for a <= 1% gap), the PLD alone, and
   the old fixed-step h = 1e-4 grid; dp_accounting's PLD built from the same pmfs
   (from_two_probability_mass_functions) at the same h and self-composed, in the same process.
B. 10,000 rounds of n = 1e6, eps0 = 1 (target: value <= 0.70, gap <= 2%, <= 5 s warm); the
   per-round PLD is the connect-the-dots pair, handed to dp_accounting as the same pmfs.
C. 100 heterogeneous rounds; D. peak memory of a 2^20 grid composed.
E. Central events against dp_accounting in the same process (value and time ratios): 100
   Gaussians (sigma = 10; and 100 mixed sigmas) in closed form; DP-SGD (Poisson-subsampled
   Gaussian, q = 0.01, sigma = 1, 1000 steps, delta = 1e-5) at dp_accounting's grid step and
   with the accountant's own step, with our lower bracket; a subsampled Laplace; the import of
   a 5,000-deep ComposedDpEvent. ``python bench/composition.py central`` runs E alone.
F. Accountant.load of a 20,000-event ledger, against the same load when every compose() re-sums
   the rounds recorded so far (the quadratic loader it replaced), in the same process.
G. laplace_rdp against mpmath over 11 orders x 57 ratios s/b in [1e-12, 1e2]: largest relative
   error and count below the exact value, against the cancelling closed form
   log(a/(2a-1) e^((a-1)r) + (a-1)/(2a-1) e^(-a r))/(a-1) evaluated in the same process.
"""
import math
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np

from ldpcompress.accounting import accountant as A
from ldpcompress.accounting import event_pld as EPLD
from ldpcompress.accounting import event_profiles as EP
from ldpcompress.accounting import events as E
from ldpcompress.accounting import pld as P
from ldpcompress.accounting.profiles import GeneralProfile, general_pair
from ldpcompress.accounting.rdp import laplace_rdp

DELTA = 1e-6


def _clear():
    A._event_pld.cache_clear()
    A._event_rdp.cache_clear()
    EP.dots_atoms.cache_clear()


def ours(n, eps0, rounds, h=None, method="auto"):
    _clear()
    acct = A.Accountant(h=h).compose(E.ShuffledRound(n, eps0), times=rounds)
    t = time.perf_counter()
    res = acct.epsilon(DELTA, method=method)
    return res, time.perf_counter() - t


def clone_pmfs(n, eps0, tol=1e-30):
    """The §2.1 pair's atoms as dicts of log-masses (the input dp_accounting takes)."""
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


def dots_pmfs(n, eps0, points=120):
    """The connect-the-dots pair the accountant uses at large n, as dicts of log-masses:
    P = masses, Q = masses e^-L (plus an outcome holding Q's remaining mass)."""
    general = GeneralProfile(n, eps0)
    losses, masses, _ = P.profile_atoms(lambda e: general.delta(e, 1e-40), eps0, points)
    keep = masses > 0
    losses, masses = losses[keep], masses[keep]
    lp = {i: math.log(m) for i, m in enumerate(masses)}
    lq = {i: math.log(m) - l for i, (l, m) in enumerate(zip(losses, masses))}
    rest = 1.0 - float(np.sum(masses * np.exp(-losses)))
    if rest > 0:
        lq[len(lp)] = math.log(rest)
    return lp, lq


def baseline(lp, lq, h, rounds):
    from dp_accounting.pld import privacy_loss_distribution as pld
    t = time.perf_counter()
    one = pld.from_two_probability_mass_functions(lp, lq, value_discretization_interval=h)
    eps = one.self_compose(rounds).get_epsilon_for_delta(DELTA)
    return eps, time.perf_counter() - t


def show(label, res, secs):
    gap = "" if res.lower is None else (f" [lower {res.lower:.6f}, gap "
                                        f"{100 * (res.value - res.lower) / res.value:.2f}%]")
    h = f", h = {res.h:.3g}" if res.h else ""
    print(f"  {label}: eps = {res.value:.6f} ({res.method}){gap}{h}, {secs:.3f} s")


def case(n, eps0, rounds, pmfs):
    print(f"{rounds} rounds of n = {n:g}, eps0 = {eps0:g}, eps({DELTA:g}), warm:")
    ours(n, eps0, rounds)  # warm the kernels
    res, t_auto = ours(n, eps0, rounds)
    show("auto (all methods, h chosen)", res, t_auto)
    others = ", ".join(f"{m} {v:.6f}" for m, v in res.others.items() if v is not None)
    print(f"    other methods: {others}")
    pld_res, t_pld = ours(n, eps0, rounds, method="pld")
    show("PLD alone", pld_res, t_pld)
    fixed, t_fixed = ours(n, eps0, rounds, h=1e-4, method="pld")
    show("PLD at the old fixed h = 1e-4", fixed, t_fixed)
    try:
        t = time.perf_counter()
        lp, lq = pmfs(n, eps0)
        t_atoms = time.perf_counter() - t
        eps_b, t_b = baseline(lp, lq, pld_res.h, rounds)
        print(f"  dp_accounting, same pmfs, h = {pld_res.h:.3g}: eps = {eps_b:.6f}, {t_b:.3f} s "
              f"(+ {t_atoms:.2f} s to list the atoms); ratio to our PLD {t_b / t_pld:.1f}x")
    except ImportError:
        print("  dp_accounting not installed: pip install 'ldpcompress[dp-accounting]'")


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _versus(label, ours, t_ours, theirs, t_theirs, lower=None):
    low = "" if lower is None else f", our lower bracket {lower:.9f}"
    print(f"  {label}: ours {ours:.9f} ({t_ours:.3f} s), dp_accounting {theirs:.9f} "
          f"({t_theirs:.3f} s): value ratio {ours / theirs:.7f}, time ratio (theirs/ours) "
          f"{t_theirs / t_ours:.1f}x{low}")


def central():
    try:
        import dp_accounting as dp
    except ImportError:
        print("dp_accounting not installed: pip install 'ldpcompress[dp-accounting]'")
        return
    pld_acct = lambda h=1e-4: dp.pld.PLDAccountant(value_discretization_interval=h)  # noqa
    print("Central events against dp_accounting (same process, warm):")
    EPLD.pld(E.PoissonSampledGaussian(1.0, 0.01), 1e-3, "up")  # warm imports
    # 100 Gaussians, homogeneous and mixed
    tree = dp.SelfComposedDpEvent(dp.GaussianDpEvent(10.0), 100)
    res, t = _timed(lambda: A.Accountant().compose(E.Gaussian(10.0), times=100).epsilon(1e-6))
    theirs, tt = _timed(lambda: pld_acct().compose(tree).get_epsilon(1e-6))
    _versus("100 x Gaussian(10), delta 1e-6 (exact)", res.value, t, theirs, tt, res.lower)
    sigmas = [5.0 + 0.1 * i for i in range(100)]

    def mixed():
        acct = A.Accountant()
        for sg in sigmas:
            acct.compose(E.Gaussian(sg))
        return acct.epsilon(1e-6)
    res, t = _timed(mixed)
    tree = dp.ComposedDpEvent([dp.GaussianDpEvent(sg) for sg in sigmas])
    theirs, tt = _timed(lambda: pld_acct().compose(tree).get_epsilon(1e-6))
    _versus("100 mixed Gaussians (sigma 5 .. 14.9), delta 1e-6 (exact)", res.value, t, theirs,
            tt, res.lower)
    # DP-SGD
    event = E.PoissonSampledGaussian(1.0, 0.01)
    tree = dp.SelfComposedDpEvent(dp.PoissonSampledDpEvent(0.01, dp.GaussianDpEvent(1.0)), 1000)
    for h in (1e-3, 1e-4):
        A.Accountant(h=h).compose(event, times=1000).epsilon(1e-5, method="pld")  # warm
        pld_acct(h).compose(tree).get_epsilon(1e-5)
        _clear()
        EP.noise_of.cache_clear()  # the timed run builds the event's grids again
        res, t = _timed(lambda: A.Accountant(h=h).compose(event, times=1000).epsilon(1e-5,
                                                                                 method="pld"))
        lower = EPLD.pld(event, h, "down").self_compose(1000).epsilon(1e-5)
        theirs, tt = _timed(lambda: pld_acct(h).compose(tree).get_epsilon(1e-5))
        _versus(f"DP-SGD q 0.01 sigma 1 x 1000, delta 1e-5, h = {h:g}", res.value, t, theirs,
                tt, lower)
    _clear()
    res, t = _timed(lambda: A.Accountant().compose(event, times=1000).epsilon(1e-5))
    print(f"  DP-SGD, the accountant's own grid step (gap <= 1%): {res.value:.9f} ({res.method}, "
          f"lower {res.lower:.9f}, h = {res.h:.3g}), {t:.3f} s; others {res.others}")
    rdp_theirs, tt = _timed(lambda: dp.rdp.RdpAccountant().compose(tree).get_epsilon(1e-5))
    print(f"  DP-SGD by RDP: ours {res.others['rdp']:.6f}, dp_accounting's RDP "
          f"{rdp_theirs:.6f} ({tt:.3f} s)")
    # subsampled Laplace
    tree = dp.SelfComposedDpEvent(dp.PoissonSampledDpEvent(0.1, dp.LaplaceDpEvent(2.0)), 100)
    res, t = _timed(lambda: A.Accountant(h=1e-4).compose_dp_event(tree).epsilon(1e-5,
                                                                              method="pld"))
    lower = EPLD.pld(E.PoissonSampledLaplace(2.0, 0.1), 1e-4, "down").self_compose(100).epsilon(1e-5)
    theirs, tt = _timed(lambda: pld_acct().compose(tree).get_epsilon(1e-5))
    _versus("subsampled Laplace q 0.1 b 2 x 100, delta 1e-5, h = 1e-4", res.value, t, theirs,
            tt, lower)
    # a deep tree
    deep = dp.GaussianDpEvent(50.0)
    for _ in range(5000):
        deep = dp.ComposedDpEvent([deep, dp.GaussianDpEvent(50.0)])
    acct, t = _timed(lambda: A.Accountant().compose_dp_event(deep))
    res, t2 = _timed(lambda: acct.epsilon(1e-6))
    try:
        theirs, tt = _timed(lambda: pld_acct().compose(deep).get_epsilon(1e-6))
        _versus("5,000-deep ComposedDpEvent of Gaussians", res.value, t + t2, theirs, tt)
    except RecursionError:
        print(f"  5,000-deep ComposedDpEvent: ours {res.value:.9f} ({t + t2:.3f} s); "
              "dp_accounting: RecursionError")


def main():
    if sys.argv[1:] == ["central"]:
        central()
        return
    case(10 ** 5, 2.0, 1000, clone_pmfs)
    case(10 ** 6, 1.0, 10_000, dots_pmfs)
    for method in ("dots", "exact"):
        _clear()
        t = time.perf_counter()
        acct = A.Accountant()
        for i in range(100):
            acct.compose(E.ShuffledRound(50_000 + 1000 * i, 2.0, pld_method=method))
        het = acct.epsilon(DELTA, method="pld")
        low = "None" if het.lower is None else f"{het.lower:.6f}"
        print(f"100 heterogeneous rounds (n = 5e4 .. 1.49e5), {method} PLDs: eps = {het.value:.6f}"
              f" (lower {low}, h = {het.h:.3g}), {time.perf_counter() - t:.3f} s")
    tracemalloc.start()
    g = P.gaussian(1.0, h=3.2e-5)  # a grid of ~2^20 points
    g2 = g.compose(g)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"grid of {g.dirs[0].pmf.size} points composed: peak {peak / 2**20:.0f} MiB")
    del g2
    central()
    ledger_load()
    laplace_accuracy()


def ledger_load(events=20_000):
    acct = A.Accountant()
    for i in range(events):
        acct.compose((E.PureDP(0.01 + i * 1e-6), E.Gaussian(3.0 + i * 1e-5),
                      E.Laplace(2.0 + i * 1e-5), E.ShuffledRound(1000 + i, 1.0))[i % 4])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ledger.json")
        acct.save(path)
        t = time.perf_counter()
        A.Accountant.load(path)
        ours_s = time.perf_counter() - t
        resum = property(lambda self: sum(times for _, times in self.events))
        running = A.Accountant.rounds
        A.Accountant.rounds = resum  # the quadratic loader: every compose() re-sums
        try:
            t = time.perf_counter()
            A.Accountant.load(path)
            base_s = time.perf_counter() - t
        finally:
            A.Accountant.rounds = running
    print(f"Accountant.load of {events} events: {ours_s:.2f} s; re-summing loader "
          f"{base_s:.2f} s; ratio {base_s / ours_s:.0f}x")


def laplace_accuracy():
    import mpmath as mp
    orders = np.array([1.0 + 1e-6, 1.001, 1.1, 1.5, 2.0, 3.0, 8.0, 32.0, 256.0, 1e4, 1e6])
    ratios = np.geomspace(1e-12, 1e2, 57)

    def cancelling(r):
        a = orders
        t1 = np.log(a / (2 * a - 1)) + (a - 1) * r
        t2 = np.log((a - 1) / (2 * a - 1)) - a * r
        return np.maximum(np.logaddexp(t1, t2) / (a - 1), 0.0)
    stats = {}
    with mp.workdps(60):
        for name, fn in (("laplace_rdp", lambda r: laplace_rdp(1.0, orders, r)),
                         ("cancelling form", cancelling)):
            worst, below = 0.0, 0
            for r in ratios:
                for a, got in zip(orders, fn(float(r))):
                    am, rm = mp.mpf(float(a)), mp.mpf(float(r))
                    exact = mp.log(am / (2 * am - 1) * mp.e ** ((am - 1) * rm) + (am - 1)
                                   / (2 * am - 1) * mp.e ** (-am * rm)) / (am - 1)
                    rel = float((mp.mpf(float(got)) - exact) / exact)
                    worst, below = max(worst, abs(rel)), below + (rel < 0)
            stats[name] = (worst, below)
    (w, b), (w0, b0) = stats["laplace_rdp"], stats["cancelling form"]
    print(f"laplace_rdp vs mpmath, {orders.size * ratios.size} points: max relative error "
          f"{w:.2g} ({b} below exact); cancelling form {w0:.2g} ({b0} below exact); "
          f"ratio {w0 / w:.2g}x")


if __name__ == "__main__":
    main()
