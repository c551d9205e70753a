"""Benchmark of shuffle rounds with participation sampling (docs/theory.md §2.7).

    python bench/sampling.py [--quick]

Prints, at n = 1e6, eps0 = 4, delta = 1e-6, for Poisson participation (gamma = 0.01) and
fixed-size sampling (m = 1e4), both relations: each randomizer family's upper bound (any
eps0-LDP randomizer, k-RR with k = 1000, OUE and PI-RAPPOR on 1000 items), its exact attack and
their ratio, and the warm time of one eps query (best of 3). Then the same general queries by a
plain numpy/scipy sum in the same process (every N' of a +-9 sd window unblocked, scipy pmfs;
fixed size over the full support of the count, bisection), with the ratio; the cost in
tightness of the blocks (N' blocks, blanket c-blocks against eighth-width ones); 100 composed
rounds through the accountant, cold, against composing the same per-round PLD by 100
sequential scipy FFT convolutions; the KHH23 setting (fixed size, n = 1e5, m = 1e3, eps0 = 3,
delta = 1e-5, T = 10) against the exact composed binary-RR value computed here on round-down
and round-up grids.
"""
import math
import sys
import time

import numpy as np
from scipy import fft, optimize, signal, stats

from ldpcompress.accounting import Accountant
from ldpcompress.accounting import amplification as A
from ldpcompress.accounting import blanket as BL
from ldpcompress.accounting import event_pld as EPLD
from ldpcompress.accounting import event_profiles as EP
from ldpcompress.accounting import events as EV
from ldpcompress.accounting import participation as PA
from ldpcompress.randomizers.pirappor import PIRappor
from ldpcompress.randomizers.rappor import OUE

from amplification import timed  # noqa: E402  (best of a few warm runs, the sibling bench's)

N, EPS0, DELTA, GAMMA, M = 10 ** 6, 4.0, 1e-6, 0.01, 10 ** 4


# ---------------------------------------------------------------------------------------------
# Baselines: the same general bounds by plain numpy/scipy sums (they live here only)
# ---------------------------------------------------------------------------------------------

def numpy_poisson_remove_delta(n, eps0, gamma, eps):
    """§2.7(a), Poisson: every N' of a +-9 sd window (no blocks), K's pmf by scipy on +-12 sd."""
    q = math.exp(-eps0)
    sig = 1 - gamma + gamma * q
    rho = gamma * q / sig
    e = math.exp(eps)
    mu, sd = (n - 1) * sig, math.sqrt((n - 1) * sig * (1 - sig))
    nps = np.arange(max(0, int(mu - 9 * sd)), min(n - 1, int(mu + 9 * sd)) + 1)
    w = stats.binom.pmf(nps, n - 1, sig)
    h1 = h2 = 0.0
    for wi, npr in zip(w, nps):
        mk, sk = npr * rho, math.sqrt(npr * rho) + 1
        k = np.arange(max(0, int(mk - 12 * sk)), int(mk + 12 * sk) + 2)
        pi, pim = stats.binom.pmf(k, npr, rho), stats.binom.pmf(k - 1, npr, rho)
        pp, qq = (1 - gamma) * pi + gamma * pim, pi
        h1 += wi * np.maximum(pp - e * qq, 0).sum()
        h2 += wi * np.maximum(qq - e * pp, 0).sum()
    return max(h1, h2)


def numpy_fixed_remove_delta(n, eps0, m, eps):
    """§2.7(a), fixed size: P(c) = (1 - eta + c/(n q)) Q(c), Q = Bin(m, q) on its full support."""
    q, eta, e = math.exp(-eps0), m / n, math.exp(eps)
    c = np.arange(m + 1)
    qc = stats.binom.pmf(c, m, q)
    ratio = 1 - eta + c / (n * q)
    return max(np.sum(qc * np.maximum(ratio - e, 0)), np.sum(qc * np.maximum(1 - e * ratio, 0)))


def solve(fn, delta, hi):
    return optimize.brentq(lambda e: fn(e) - delta, 0.0, hi, xtol=1e-12, rtol=1e-10)


# ---------------------------------------------------------------------------------------------

def families():
    return [("any eps0-LDP", dict(eps0=EPS0)), ("k-RR, k = 1000", dict(eps0=EPS0, k=1000)),
            ("OUE, k = 1000", dict(oracle=OUE(1000, EPS0))),
            ("PI-RAPPOR, k = 1000", dict(oracle=PIRappor(1000, EPS0)))]


def table(quick):
    print(f"eps at delta = {DELTA:g}, n = {N:.0e}, eps0 = {EPS0:g} (upper, attack, ratio, warm "
          "query ms)")
    schemes = [("Poisson gamma = 0.01", dict(gamma=GAMMA)), ("fixed m = 1e4", dict(sample=M))]
    for label, sk in schemes:
        for rel in ("add_remove", "substitution"):
            for name, kw in families():
                if quick and name.startswith("PI"):
                    continue
                res, t = timed(A.epsilon, N, delta=DELTA, relation=rel, **sk, **kw)
                print(f"  {label:22s} {rel:13s} {name:20s} {res.value:.6g}  {res.lower:.6g}  "
                      f"{res.value / res.lower:.4f}  {t * 1e3:8.1f}")


def baselines():
    print("\nsame query by a plain numpy/scipy sum (same process; upper bound only)")
    cases = [("Poisson add/remove", dict(gamma=GAMMA),
              lambda e: numpy_poisson_remove_delta(N, EPS0, GAMMA, e)),
             ("fixed add/remove  ", dict(sample=M),
              lambda e: numpy_fixed_remove_delta(N, EPS0, M, e))]
    for label, sk, base_delta in cases:
        res, t = timed(A.epsilon, N, EPS0, DELTA, relation="add_remove", lower=False, **sk)
        t0 = time.perf_counter()
        base = solve(base_delta, DELTA, 0.05)
        tb = time.perf_counter() - t0
        print(f"  {label}: ours {res.value:.7g} in {t * 1e3:.2f} ms; numpy/scipy "
              f"{base:.7g} in {tb * 1e3:.0f} ms: {tb / t:.0f}x")


def blocking():
    print("\ncost of the blocks (eps at delta = 1e-6)")
    s = PA.Sampling.of(N, GAMMA, None, "substitution")
    fine = PA.SampledGeneralProfile(N, EPS0, s, block_frac=1e-9)  # every N' on its own
    coarse = PA.SampledGeneralProfile(N, EPS0, s)
    a, b = PA.profile_epsilon(fine, DELTA), PA.profile_epsilon(coarse, DELTA)
    print(f"  general, Poisson substitution: N' blocks {b:.8g} vs every N' {a:.8g}: "
          f"{b / a - 1:.2e}")
    st = BL.structure(OUE(1000, EPS0))
    for rel in ("substitution", "add_remove"):
        s = PA.Sampling.of(N, GAMMA, None, rel)
        fine = PA.SampledBlanketProfile(N, st, s, block_frac=1e-9, c_frac=1 / 128)
        coarse = PA.SampledBlanketProfile(N, st, s)
        a, b = PA.profile_epsilon(fine, DELTA), PA.profile_epsilon(coarse, DELTA)
        what = "N' and c blocks vs every N', c blocks of 1/128 sd" if rel == "substitution" \
            else "N' blocks vs every N'"
        print(f"  OUE blanket, Poisson {rel}: {what}: {b:.8g} vs {a:.8g}: {b / a - 1:.2e}")


def composition():
    print("\n100 composed rounds (accountant, cold event)")
    for rel in ("add_remove", "substitution"):
        for sk in (dict(gamma=GAMMA), dict(sample=M)):
            EP.sampled_atoms.cache_clear()
            t0 = time.perf_counter()
            ev = EV.SampledShuffledRound(N, EPS0, relation=rel, **sk)
            r = Accountant().compose(ev, 100).epsilon(DELTA)
            t = time.perf_counter() - t0
            dens = EPLD.pld(ev, r.h, "up").dirs[0].pmf
            t0 = time.perf_counter()
            acc = np.array([1.0])
            for _ in range(100):
                acc = signal.fftconvolve(acc, dens)
            tb = time.perf_counter() - t0
            print(f"  {rel:13s} {str(sk):18s} eps = {r.value:.6g} ({r.method}) in {t:.3f} s; "
                  f"100 sequential scipy FFT convolutions of its PLD: {tb:.3f} s")


def exact_binary_composed(n, m, eps0, delta, rounds, h, up):
    """eps of `rounds` composed exact binary-RR attack pairs (fixed size, substitution, worst
    direction) on a grid of step h rounded up or down (an FFT of the loss pmf)."""
    p, eta = 1 / (1 + math.exp(-eps0)), m / n
    pc = 1 - p
    o = np.arange(m + 1)
    b = lambda x: stats.binom.pmf(x, m - 1, pc)  # noqa: E731
    pp = ((1 - eta) * pc + eta * p) * b(o - 1) + ((1 - eta) * p + eta * pc) * b(o)
    qq = pc * b(o - 1) + p * b(o)
    best = 0.0
    for x, y in ((pp, qq), (qq, pp)):
        keep = (x > 0) & (y > 0)
        loss, w = np.log(x[keep] / y[keep]), x[keep]
        idx = (np.ceil(loss / h) if up else np.floor(loss / h)).astype(int)
        lo = idx.min()
        g = np.zeros(idx.max() - lo + 1)
        np.add.at(g, idx - lo, w)
        size = rounds * (len(g) - 1) + 1
        nf = fft.next_fast_len(size)
        comp = np.maximum(fft.irfft(fft.rfft(g, nf) ** rounds, nf)[:size], 0)
        losses = (np.arange(size) + rounds * lo) * h

        def dl(e):
            s = losses > e
            return np.sum(comp[s] * -np.expm1(e - losses[s]))
        a, c = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (a + c)
            a, c = (mid, c) if dl(mid) > delta else (a, mid)
        best = max(best, c if up else a)
    return best


def khh23():
    n, m, eps0, delta, rounds = 10 ** 5, 10 ** 3, 3.0, 1e-5, 10
    print(f"\nKHH23 setting: fixed size n = {n:.0e}, m = {m}, eps0 = {eps0:g}, delta = {delta:g}, "
          f"T = {rounds}")
    lo = exact_binary_composed(n, m, eps0, delta, rounds, 2.5e-7, False)
    hi = exact_binary_composed(n, m, eps0, delta, rounds, 2.5e-7, True)
    print(f"  exact binary RR (attack datasets): [{lo:.7g}, {hi:.7g}]")
    for ev in (EV.SampledShuffledRound(n, eps0, sample=m),
               EV.SampledKRRShuffledRound(n, eps0, 2, sample=m)):
        r = Accountant().compose(ev, rounds).epsilon(delta)
        print(f"  ours, {type(ev).__name__}: {r.value:.6g} ({r.method}); >= exact: "
              f"{r.value >= lo}")


def main():
    quick = "--quick" in sys.argv
    table(quick)
    baselines()
    if not quick:
        blocking()
    composition()
    khh23()


if __name__ == "__main__":
    main()
