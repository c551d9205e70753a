"""Benchmark of the amplification bounds, with a scipy baseline and a fixed-grid FFT baseline.

    python bench/amplification.py [--quick]

Prints, for each (n, eps0) at delta = 1e-6, each bound's eps and warm time per query, the
same general-bound query by a straightforward scipy implementation (vectorised binom.sf over
every c, plain bisection) and the ratio; the k-RR blanket bound with and without blocks; the
oracle section (privacy blanket, docs/theory.md §2.5-2.6): eps-query timings for OUE and
PI-RAPPOR, the per-oracle table generic vs blanket vs the oracle's exact attack, the cost of
blocking (M' blocks for OUE and subset selection; subset selection's shared N11 laws over runs
of J and chords over merged N11 pieces, blocked vs the exact (J, N11) sum, with the query
times of both), and a fixed-grid FFT evaluation of the same bound (the baseline, which lives
here only); the natural-dataset attack against the class attack; the internet-scale section
(eps queries at n = 1e6, 1e8, 1e9 for every oracle, the grouped independent-bits kernel against
the per-K2 kernel of before in this process, monotonicity in n; k-RR past its tables); and the
time of import + first call in a fresh process.
"""
import math
import subprocess
import sys
import time

import numpy as np
from scipy import stats

import ldpcompress as L
from ldpcompress.accounting import amplification as A
from ldpcompress.accounting import blanket as BL
from ldpcompress.accounting.profiles import window_tol
from ldpcompress.core.numerics import EXP_MAX
from ldpcompress.randomizers.hadamard import HadamardResponse
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.olh import OLH
from ldpcompress.randomizers.pirappor import PIRappor, VectorPIRappor
from ldpcompress.randomizers.privunit import PrivUnit2
from ldpcompress.randomizers.rappor import OUE, RAPPOR
from ldpcompress.randomizers.subset import SubsetSelection

DELTA = 1e-6


def scipy_general_delta(n, eps0, eps):
    """§2.1 by scipy: every c in 0..n-1, binomial tails by binom.sf (the baseline)."""
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
    """(result, best time of `repeat` warm runs); repeat=0 times the single first run."""
    if repeat == 0:
        t = time.perf_counter()
        out = fn(*args, **kw)
        return out, time.perf_counter() - t
    fn(*args, **kw)  # warm
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*args, **kw)
        best = min(best, time.perf_counter() - t)
    return out, best


ORACLE_ROWS = [("OUE (asymmetric RAPPOR)", lambda k, e: OUE(k, e)),
               ("PI-RAPPOR (realised eps0)", lambda k, e: PIRappor(k, e)),
               ("PI-RAPPOR over F_997^2 (t = 2)", lambda k, e: VectorPIRappor(k, e, q=997)),
               ("symmetric RAPPOR (eps0/2 per bit)", lambda k, e: RAPPOR(k, e / 2, symmetric=True)),
               ("Hadamard response", lambda k, e: HadamardResponse(k, e)),
               ("OLH (product law, dominating)", lambda k, e: OLH(k, e)),
               ("subset selection (exact law)", lambda k, e: SubsetSelection(k, e)),
               ("k-RR", lambda k, e: KRR(k, e)),
               ("PrivUnit2, d = 1000 (cap blanket)", lambda k, e: PrivUnit2(1000, e))]


def oracle_table(n, k, eps0, skip=()):
    """generic vs blanket vs attack through the public query, with each bound's own time."""
    print(f"\n| n = {n:g}, eps0 = {eps0}, k = {k} | realised eps0 | generic (FMT21 3.2) | "
          f"oracle's bound | lower (exact attack) | upper/lower - 1 | time |")
    print("|---|---|---|---|---|---|---|")
    for name, make in ORACLE_ROWS:
        if name in skip:
            continue
        res = L.epsilon(n, delta=DELTA, oracle=make(k, eps0))
        by = {b.name: b for b in res.bounds}
        own = by.get("blanket") or by.get("krr_blanket") or by.get("krr_pair")
        print(f"| {name} | {res.params['eps0']:.5f} | {by['general'].value:.5f} | "
              f"{res.value:.5f} | {res.lower:.5f} | {res.value / res.lower - 1:.4f} | "
              f"{own.seconds:.3f} s |", flush=True)
        if "PrivUnit2" in name:  # the generic bound at its eps0 is the only other choice
            assert res.value <= by["general"].value


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



def subset_blocking_section(ns) -> None:
    """Subset selection's (J, N11) sum (kernels/blanket_pair.py, pair_group_excess): the default
    (runs of J share the N11 law of their largest J, chords over merged N11 pieces) against the
    exact sum (j_frac = 0, n11_groups = 0), both with the default M' blocks: eps(1e-6) and the
    time of each query (profile_epsilon, warm)."""
    print("\n## Subset selection: blocked vs exact (J, N11) sum, eps(1e-6) (docs/theory.md §2.5)")
    print("| n | k | eps0 | d | exact | blocked | relative loss | exact time | blocked time |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in ns:
        for k in (100, 1000):
            for e0 in (2.0, 4.0):
                o = SubsetSelection(k, e0)
                st = BL.structure(o)
                exact, t_ex = timed(lambda: BL.profile_epsilon(
                    BL.BlanketProfile(n, st, j_frac=0.0, n11_groups=0), DELTA), repeat=1)
                blk, t_blk = timed(lambda: BL.profile_epsilon(BL.BlanketProfile(n, st), DELTA),
                                   repeat=1)
                print(f"| {n:g} | {k} | {e0:g} | {o.d} | {exact:.7f} | {blk:.7f} | "
                      f"{blk / exact - 1:.1e} | {t_ex:.2f} s | {t_blk:.2f} s |", flush=True)


class DirectIndepProfile(BL.BlanketProfile):
    """The baseline: the same bound with the per-K2 kernel of before (one term per K2 of each
    M' block's window: O(sqrt n) per block and per eps), same M' blocks."""

    def _delta(self, eps, tol):
        from ldpcompress.kernels.blanket_indep import indep_upper_delta_direct
        ms, ws, out = self.tables(tol)
        return indep_upper_delta_direct(ms, ws, out, self._law, min(eps, EXP_MAX), tol)


def scale_section(quick: bool) -> None:
    """eps(1e-6) queries at n = 1e6, 1e8, 1e9 (k = 1000, eps0 = 2): the whole public query (upper
    and lower), and the blanket alone against a baseline in this process: for the
    independent-bits oracles the per-K2 kernel of before, for the correlated laws the same
    kernel with sd/8-wide M' blocks only (before BLOCK_REL_PAIR); then monotonicity in n."""
    print("\n## Internet scale: eps(1e-6) per query, k = 1000 (k-RR: k = 100), eps0 = 2 "
          "(docs/theory.md §2.13)")
    print("| oracle | n | eps (own bound) | lower | query (upper + lower) | blanket alone: "
          "grouped | per-K2 baseline | ratio | relative difference |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = SCALE_ROWS
    ns = (10 ** 6, 10 ** 8) if quick else (10 ** 6, 10 ** 8, 10 ** 9)
    _scale_rows(rows, ns)
    _monotone_rows(rows[:5])


SCALE_ROWS = [("OUE", lambda: OUE(1000, 2.0)), ("PI-RAPPOR", lambda: PIRappor(1000, 2.0)),
            ("symmetric RAPPOR", lambda: RAPPOR(1000, 1.0, symmetric=True)),
            ("Hadamard", lambda: HadamardResponse(1000, 2.0)), ("OLH", lambda: OLH(1000, 2.0)),
            ("subset selection", lambda: SubsetSelection(1000, 2.0)),
            ("k-RR", lambda: KRR(100, 2.0)), ("PrivUnit2 d = 1000", lambda: PrivUnit2(1000, 2.0))]


def _scale_rows(rows, ns) -> None:
    for name, make in rows:
        o = make()
        L.epsilon(1000, delta=DELTA, oracle=o)  # compile outside the timings
        st = BL.structure(o)
        for n in ns:
            pair = not BL.BlanketProfile(10, st).structure.independent
            res, t_q = timed(lambda: L.epsilon(n, delta=DELTA, oracle=o), repeat=0)
            extra = "| - | - | - | - |"
            if pair and n <= 10 ** 8:  # baseline: the same kernel with sd/8 M' blocks only
                up, t_new = timed(lambda: BL.profile_epsilon(
                    BL.BlanketProfile(n, st, exact_law=True), DELTA), repeat=0)
                saved, BL.BLOCK_REL_PAIR = BL.BLOCK_REL_PAIR, 0.0
                try:
                    base, t_old = timed(lambda: BL.profile_epsilon(
                        BL.BlanketProfile(n, st, exact_law=True), DELTA), repeat=0)
                finally:
                    BL.BLOCK_REL_PAIR = saved
                extra = (f"| {t_new:.3f} s | {t_old:.2f} s (sd/8 blocks) | {t_old / t_new:.1f}x | "
                         f"{up / base - 1:.1e} |")
            if not pair:
                up, t_new = timed(lambda: BL.profile_epsilon(BL.BlanketProfile(n, st), DELTA),
                                  repeat=0)
                if n <= 10 ** 8 or name == "OUE":
                    base, t_old = timed(lambda: BL.profile_epsilon(DirectIndepProfile(n, st),
                                                                    DELTA), repeat=0)
                    extra = (f"| {t_new:.3f} s | {t_old:.2f} s | {t_old / t_new:.0f}x | "
                             f"{up / base - 1:.1e} |")
                else:
                    extra = f"| {t_new:.3f} s | - | - | - |"
            low = "-" if res.lower is None else f"{res.lower:.6g}"
            print(f"| {name} | {n:.0e} | {res.value:.6g} ({res.method}) | {low} | {t_q:.2f} s "
                  f"{extra}", flush=True)


def _monotone_rows(rows) -> None:
    print("\nmonotone in n (eps at 40 n from 2 to 3000, then 1e4, 1e5, 1e6; eps0 in 1, 4, 8):")
    grid = sorted(set(int(x) for x in np.geomspace(2, 3000, 40)) | {10 ** 4, 10 ** 5, 10 ** 6})
    for name, make in rows:
        worst = 0.0
        for e0 in (1.0, 4.0, 8.0):
            o = make() if e0 == 2.0 else {"OUE": lambda: OUE(1000, e0),
                                          "PI-RAPPOR": lambda: PIRappor(1000, e0),
                                          "symmetric RAPPOR": lambda: RAPPOR(1000, e0 / 2,
                                                                             symmetric=True),
                                          "Hadamard": lambda: HadamardResponse(1000, e0),
                                          "OLH": lambda: OLH(1000, e0)}[name]()
            vals = [L.epsilon(n, delta=DELTA, oracle=o, lower=False).value for n in grid]
            worst = max([worst] + [b / a - 1 for a, b in zip(vals, vals[1:])])
        print(f"  {name}: largest relative rise from one n to the next {worst:.1e} "
              f"({'monotone' if worst <= 0 else 'NOT monotone'})", flush=True)


def krr_scale_section() -> None:
    """k-RR's own bound past its tables (the abstract k-RR, eps0 = 2): n = 1e6 .. 1e8."""
    print("\n## k-RR at scale, eps(1e-6), eps0 = 2: its own bound, never the generic one")
    print("| n | k | eps | method | lower | generic | time |")
    print("|---|---|---|---|---|---|---|")
    for n in (10 ** 6, 10 ** 7, 10 ** 8):
        for k in (3, 100):
            if k == 3 and n > 10 ** 7:
                continue
            r, t = timed(lambda: A.epsilon(n, 2.0, DELTA, k=k), repeat=0)
            gen = next(b.value for b in r.bounds if b.name == "general")
            print(f"| {n:.0e} | {k} | {r.value:.6g} | {r.method} | {r.lower:.6g} | {gen:.6g} "
                  f"| {t:.2f} s |", flush=True)


def natural_attack_section() -> None:
    """Symmetric RAPPOR and OUE: the class attack (§2.6(c)) against the natural-dataset attack
    on the bits of three items (§2.6(d)), and the gap left to the upper bound."""
    print("\n## Natural-dataset attack (§2.6(d)) vs class attack (§2.6(c)), eps(1e-6), k = 1000")
    print("| oracle | n | eps0 | upper | class attack | natural attack | upper/natural - 1 | "
          "natural time |")
    print("|---|---|---|---|---|---|---|---|")
    for name, make in (("symmetric RAPPOR", lambda e: RAPPOR(1000, e / 2, symmetric=True)),
                       ("OUE", lambda e: OUE(1000, e))):
        for n, e0 in ((10 ** 3, 6.0), (10 ** 4, 6.0)):
            o = make(e0)
            st = BL.structure(o)
            up = L.epsilon(n, delta=DELTA, oracle=o, lower=False).value
            prof = BL.OracleLowerProfile(n, st)
            triple = prof._triple
            prof._triple = None
            cls = BL.profile_epsilon(prof, DELTA)
            prof._triple = triple
            nat, t = timed(lambda: BL.profile_epsilon(prof, DELTA), repeat=0)
            print(f"| {name} | {n:g} | {e0:g} | {up:.5f} | {cls:.5f} | {nat:.5f} | "
                  f"{up / nat - 1:.4f} | {t:.2f} s |", flush=True)


def oracle_section(quick: bool) -> None:
    L.epsilon(1000, delta=DELTA, oracle=OUE(100, 4.0))  # compile outside the timings
    print("\n## Oracle accounting (privacy blanket): eps(1e-6) query, k = 1000, eps0 = 4")
    print("targets: <= 100 ms at n = 1e5, <= 1 s at n = 1e6; upper within 2% of the attack")
    for name, make in ORACLE_ROWS[:2]:
        for n in (10 ** 4, 10 ** 5, 10 ** 6):
            res, t = timed(lambda: L.epsilon(n, delta=DELTA, oracle=make(1000, 4.0), lower=False),
                           repeat=1)
            low = L.epsilon(n, delta=DELTA, oracle=make(1000, 4.0)).lower
            print(f"{name:28s} n = {n:8g}: eps {res.value:.6f} in {t * 1e3:7.1f} ms; "
                  f"attack {low:.6f}; upper/lower - 1 = {res.value / low - 1:.4f}", flush=True)
    for name, n, k, e0 in (("subset selection", 10 ** 6, 1000, 4.0),
                           ("subset selection", 10 ** 5, 100, 2.0)):
        res, t = timed(lambda: L.epsilon(n, delta=DELTA, oracle=SubsetSelection(k, e0),
                                         lower=False), repeat=1)
        print(f"{name:28s} n = {n:8g}, k = {k}, eps0 = {e0:g}: eps {res.value:.6f} in "
              f"{t * 1e3:7.1f} ms", flush=True)
    for name, o in (("OUE", OUE(1000, 4.0)), ("subset", SubsetSelection(1000, 4.0))):
        for n in (10 ** 4, 10 ** 5):
            blk = BL.profile_epsilon(BL.blanket_profile(n, o), DELTA)
            full = BL.profile_epsilon(BL.blanket_profile(n, o, block_frac=0.0), DELTA)
            print(f"blocking in M' (1/8 sd per block, 4x/16x beyond 3/5 sd), {name} "
                  f"n = {n:g}: {blk:.7f} vs unblocked {full:.7f} ({blk / full - 1:.1e} relative)",
                  flush=True)
    subset_blocking_section((10 ** 3, 10 ** 4) if quick else (10 ** 3, 10 ** 4, 10 ** 5))
    oracle_table(10 ** 6, 1000, 4.0)
    oracle_table(10 ** 4, 1000, 6.0)
    natural_attack_section()
    scale_section(quick)
    krr_scale_section()

    print("\n## FFT baseline (fixed grid h = 0.02, NumPy) vs ours at n = 1e4, OUE eps0 = 6, k = 1000")
    o = OUE(1000, 6.0)
    st, n = BL.structure(o), 10 ** 4
    eps_star = L.epsilon(n, delta=DELTA, oracle=o, lower=False).value
    tol = window_tol(DELTA)
    d_ours, t_ours = timed(lambda: BL.blanket_profile(n, o).delta(eps_star, tol))
    _, t_query = timed(lambda: L.epsilon(n, delta=DELTA, oracle=o, lower=False), repeat=1)
    d_fft, t_fft = timed(fft_blanket_delta, n, st, eps_star, repeat=0)
    print(f"at eps* = {eps_star:.6f}: ours delta = {d_ours:.6e} (a proven bound) in "
          f"{t_ours * 1e3:.2f} ms; FFT delta = {d_fft:.6e} (no error bound) in {t_fft:.1f} s")
    print(f"ratio per delta evaluation: {t_fft / t_ours:,.0f}x; our whole eps query "
          f"({t_query * 1e3:.1f} ms) is {t_fft / t_query:,.0f}x faster than one FFT evaluation")


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
    print("\nk-RR blanket pair (§2.4(b)), k = 100, eps(1e-6): blocked (64) vs unblocked")
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
    oracle_section(quick)
    code = ("import time; t=time.perf_counter(); import ldpcompress as L; "
            "L.epsilon(10**6, 4.0, 1e-6, lower=False); print(time.perf_counter()-t)")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    print(f"\nimport + first query in a fresh process (Numba cache warm): {float(out.stdout):.2f} s")


if __name__ == "__main__":
    main()
