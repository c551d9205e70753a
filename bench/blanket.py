"""Privacy blanket for every frequency oracle (Balle et al. 2019; docs/theory.md §2.5-2.6):
per-oracle table (generic FMT21 Thm 3.2 vs blanket vs the oracle attack), eps-query timings,
the cost of blocking, and a fixed-grid FFT evaluation of the same bound as the baseline.

    python bench/blanket.py [--quick]     (--quick skips subset selection at n = 1e6)

The FFT baseline lives here only: per M' = m it raises the grid-rounded one-draw law to the
m-th power by FFT (no error bound), one delta evaluation at n = 1e4.
"""
import math
import sys
import time

import numpy as np

from ldpcompress import blanket as BL  # noqa: E402
from ldpcompress.oracles import HadamardOracle, KRROracle, OLHOracle, RAPPOROracle, SubsetOracle  # noqa: E402
from ldpcompress.pirappor import PIRappor  # noqa: E402
from ldpcompress.profiles import window_tol  # noqa: E402
from ldpcompress.solve import epsilon_for_delta  # noqa: E402

DELTA = 1e-6


def generic_eps(n, eps0, delta=DELTA):
    """FMT21 Thm 3.2 through the library's general profile."""
    from ldpcompress.profiles import GeneralProfile
    return BL.profile_epsilon(GeneralProfile(n, eps0), delta)


def timed(fn):
    t = time.perf_counter()
    v = fn()
    return v, time.perf_counter() - t


def table(n, k, eps0, quick=False):
    rows = [("OUE (asym RAPPOR)", lambda: RAPPOROracle(k, eps0, symmetric=False)),
            ("PI-RAPPOR (realised)", lambda: PIRappor(k, eps0)),
            ("symmetric RAPPOR", lambda: RAPPOROracle(k, eps0 / 2, symmetric=True)),
            ("Hadamard", lambda: HadamardOracle(k, eps0)),
            ("k-RR", lambda: KRROracle(k, eps0))]
    rows += [("OLH (product law, dominating)", lambda: OLHOracle(k, eps0))]
    if not quick or n <= 10 ** 5:
        rows += [("subset (exact law)", lambda: SubsetOracle(k, eps0))]
    print(f"\n## n = {n:g}, eps0 = {eps0}, k = {k}, delta = {DELTA:g}")
    print("| oracle | realised eps0 | generic (FMT21) | blanket | lower (attack) | blanket time |")
    print("|---|---|---|---|---|---|")
    for name, mk in rows:
        o = mk()
        st = BL.structure(o)
        g = generic_eps(n, st.eps0)
        up, t = timed(lambda: BL.profile_epsilon(BL.blanket_profile(n, o), DELTA))
        low = "-"
        if st.lower_ok:
            low = f"{BL.profile_epsilon(BL.lower_profile(n, o), DELTA):.5f}"
        elif st.oracle == "krr":
            from ldpcompress.profiles import KRRLowerProfile
            low = f"{BL.profile_epsilon(KRRLowerProfile(n, st.eps0, k), DELTA):.5f} (k-RR attack, tree)"
        print(f"| {name} | {st.eps0:.5f} | {g:.5f} | {up:.5f} | {low} | {t:.3f} s |", flush=True)


def fft_blanket_delta(n, st, eps, h=0.02, sds=6.0):
    """The blanket bound on a fixed grid (NumPy): per M' = m in +-sds sd, the law of
    sum_i (b1 - E b2) by an FFT power of the one-draw law rounded to the grid (nearest: no
    error bound), then E[(S - r m)_+] (the drift r m is exact, off the grid: r ~ 3e-3 would be
    rounded away)."""
    a = float(st.a)
    e = math.exp(eps)
    r = math.expm1(eps) / st.expm1_eps0
    gc = st.gamma_c_times
    vals = np.array([0.0, 1.0, -e, 1.0 - e])
    probs = np.array([(1 - a) ** 2, a * (1 - a), a * (1 - a), a * a])
    idx = np.rint(vals / h).astype(np.int64)
    off = -idx.min()
    pmf1 = np.zeros(idx.max() + off + 1)
    np.add.at(pmf1, idx + off, probs)
    gam, gamc = st.gamma, st.gamma_c
    mu, sd = (n - 1) * gam, math.sqrt((n - 1) * gam * gamc)
    lo, hi = max(0, int(mu - sds * sd)), min(n - 1, int(mu + sds * sd) + 1)
    from scipy.stats import binom
    total = 0.0
    for c in range(lo, hi + 1):
        m = c + 1
        size = m * (len(pmf1) - 1) + 1
        nfft = 1 << (size - 1).bit_length()
        pm = np.fft.irfft(np.fft.rfft(pmf1, nfft) ** m, nfft)[:size]
        x = (np.arange(size) - m * off) * h - r * m
        ex = float(np.sum(np.where(x > 0, x * pm, 0.0)))
        total += binom.pmf(c, n - 1, gam) * gc / m * ex
    return total


def main():
    quick = "--quick" in sys.argv
    # warm-up (compilation) outside the timings
    BL.profile_epsilon(BL.blanket_profile(1000, RAPPOROracle(100, 4.0, symmetric=False)), DELTA)
    BL.profile_epsilon(BL.blanket_profile(1000, KRROracle(100, 4.0)), DELTA)

    print("## eps query timings, OUE k = 1000, eps0 = 4 (fresh profile, blocked)")
    for n in (10 ** 4, 10 ** 5, 10 ** 6):
        o = RAPPOROracle(1000, 4.0, symmetric=False)
        v, t = timed(lambda: BL.profile_epsilon(BL.blanket_profile(n, o), DELTA))
        vu, tu = timed(lambda: BL.profile_epsilon(BL.blanket_profile(n, o, block_frac=0.0), DELTA)) \
            if n <= 10 ** 5 else (float("nan"), float("nan"))
        lw, tl = timed(lambda: BL.profile_epsilon(BL.lower_profile(n, o), DELTA))
        print(f"n = {n:g}: blanket {v:.6f} in {t*1e3:.1f} ms; unblocked {vu:.6f} in {tu*1e3:.0f} ms "
              f"(block loss {(v/vu - 1) if vu == vu else float('nan'):.2e} rel.); lower {lw:.6f} "
              f"({tl:.2f} s); upper/lower - 1 = {v/lw - 1:.4f}", flush=True)

    table(10 ** 6, 1000, 4.0, quick)
    table(10 ** 4, 1000, 6.0, True)

    print("\n## FFT baseline (fixed grid h = 0.02, NumPy) vs ours at n = 1e4, OUE eps0 = 6, k = 1000")
    o = RAPPOROracle(1000, 6.0, symmetric=False)
    st = BL.structure(o)
    n = 10 ** 4
    prof = BL.blanket_profile(n, o)
    eps_star = BL.profile_epsilon(prof, DELTA)
    tol = window_tol(DELTA)
    BL.blanket_profile(n, o).delta(eps_star, tol)
    d_ours, t_ours = timed(lambda: BL.blanket_profile(n, o).delta(eps_star, tol))
    d_unb, t_unb = timed(lambda: BL.blanket_profile(n, o, block_frac=0.0).delta(eps_star, tol))
    d_fft, t_fft = timed(lambda: fft_blanket_delta(n, st, eps_star))
    _, t_query = timed(lambda: BL.profile_epsilon(BL.blanket_profile(n, o), DELTA))
    print(f"eps* = {eps_star:.6f}: ours delta = {d_ours:.6e} in {t_ours*1e3:.2f} ms (unblocked "
          f"{d_unb:.6e}, {t_unb*1e3:.1f} ms); FFT delta = {d_fft:.6e} in {t_fft:.2f} s")
    print(f"ratio per delta evaluation: {t_fft / t_ours:.0f}x (blocked), {t_fft / t_unb:.0f}x (unblocked); "
          f"our whole eps query {t_query*1e3:.1f} ms = {t_fft / t_query:.0f}x faster than ONE FFT evaluation")


if __name__ == "__main__":
    main()
