"""Shuffle accounting of scalar randomizers (docs/theory.md §2.11): eps at delta = 1e-6 of the
lattice blanket beside the generic bound (FMT21 at eps0 = (hi - lo)/b; none for Gaussian
noise) and the exact attack, and the time of one delta evaluation against a fixed-grid numpy
FFT baseline in the same process (no tilt, a fixed window of 2^22 points around the mean, no
error terms: what a direct implementation computes).

    python bench/continuous.py
"""
from __future__ import annotations

import math
import time

import numpy as np

import ldpcompress.accounting.amplification as L
from ldpcompress.accounting import scalar as S
from ldpcompress.randomizers import GaussianScalar, LaplaceScalar

CASES = [(LaplaceScalar(0.0, 1.0, 4.0), 10**6), (LaplaceScalar(0.0, 1.0, 1.0), 10**5),
         (GaussianScalar(0.0, 1.0, 2.0), 10**6), (GaussianScalar(0.0, 1.0, 1.0), 10**5)]


def baseline_delta(n: int, law: S.LossLaw, eps: float, size: int = 1 << 22) -> float:
    """Fixed-grid FFT: the same split lattice, (1 - gamma + gamma phi)^n over a fixed window
    centred at the sum's mean, positive part summed directly."""
    p, k0, h, _ = S.upper_lattice(law, math.exp(eps), 1e-16)
    ks = k0 + np.arange(p.size)
    centre = int(round(n * law.gamma * float(p @ ks)))
    circ = np.zeros(size)
    np.add.at(circ, (ks % size), law.gamma * p)
    circ[0] += 1.0 - law.gamma
    dens = np.fft.irfft(np.fft.rfft(circ) ** n, size)
    k = centre + np.arange(-size // 2, size // 2)
    pos = k > 0
    return float(h * np.sum(k[pos] * dens[k[pos] % size]) / (n * law.gamma))


def main() -> None:
    print(f"{'randomizer':40s} {'n':>8s} {'generic':>9s} {'blanket':>9s} {'attack':>9s} "
          f"{'gap':>6s} {'query s':>8s} {'eval s':>7s} {'base s':>7s} {'ratio':>6s} "
          f"{'base/ours delta':>15s}")
    for r, n in CASES:
        L.epsilon(1000, delta=1e-6, oracle=r)  # compile
        t = time.perf_counter()
        res = L.epsilon(n, delta=1e-6, oracle=r)
        query = time.perf_counter() - t
        gen = [b.value for b in res.bounds if b.name == "general"]
        st = r.shuffle_structure()
        law = S.blanket_law(st.noise, st.half_width)
        t = time.perf_counter()
        ours = S.blanket_delta(n, law, res.value, 1e-16)
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        base = baseline_delta(n, law, res.value)
        t_base = time.perf_counter() - t
        gap = (res.value - res.lower) / res.value
        print(f"{r.describe():40s} {n:8d} {gen[0] if gen else float('nan'):9.5f} "
              f"{res.value:9.6f} {res.lower:9.6f} {gap:6.1%} {query:8.2f} {t_ours:7.3f} "
              f"{t_base:7.3f} {t_base / t_ours:6.1f} {base / ours:15.6f}")
    # the three attack datasets (the library uses the strongest)
    print("\nattacks: eps at delta = 1e-6 for others at mid / at lo (hi vs lo) / at lo (lo vs hi)")
    from ldpcompress.accounting.solve import epsilon_for_delta
    for r, n in CASES:
        st = r.shuffle_structure()
        vals = []
        for law in S.attack_laws(st.noise, st.half_width):
            f = lambda e, law=law: S.attack_delta(n, law, e, 1e-16)  # noqa: E731
            vals.append(epsilon_for_delta(f, 1e-6, 1.0, upper=False, rtol=1e-4, guess=0.02))
        print(f"  {r.describe():40s} " + "  ".join(f"{v:.5f}" for v in vals))


if __name__ == "__main__":
    main()
