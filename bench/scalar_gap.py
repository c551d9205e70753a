"""Where the exact shuffled delta of scalar randomizers (x + Laplace or Gaussian noise on
[0, 1]) sits between the blanket bound and the exact attack (docs/theory.md §2.11).

(a) Small n: the randomizer with its report binned to B cells (post-processing, so its exact
shuffled delta is at most the continuous one's), inputs on a grid; the exact law of the
shuffled multiset is enumerated for every dataset (user 1's pair and the others' inputs) and
the worst case is compared with the blanket and the attack of the continuous randomizer (the
library's query, and the same functionals at a fine lattice), with the position of the worst
case in [attack, blanket] as a fraction. For Laplace noise the report clipped to [lo, hi] is
sufficient for x (R_x(y) factors as g(y) h(x) outside [lo, hi]), so two end cells lose nothing.
The enumeration is in float64: every probability is a sum of products of positive terms (relative
error below 1e-13 here), far below the differences reported.

(b) Large n: others drawing their inputs iid from a law pi (a point mass z, or a mix of lo and
hi): by joint convexity of the hockey-stick divergence, such a random dataset's delta is at
most the worst fixed dataset's, so each is a lower bound on the worst case; its exact delta is
E[(sum_j X_j)_+]/n with X = (R_x1 - e^eps R_x1')(Y)/R_pi(Y), Y ~ R_pi, computed by the library's
attack machinery on the binned randomizer (a finite law: rounded down). Printed: delta at the
library's attack eps (delta = 1e-6 there for z = lo): above 1e-6 would beat the attack.

Columns of (a): blanket / attack = the library's delta query (value, lower); blkt-fine = the
blanket functional at finer lattices (the smallest sound evaluation); atk-exact = the attack
datasets' exact delta (fine binning, +- its bracket); worst / atk-bin = the binned randomizer's
exact worst case and its attack dataset's delta; frac = (worst - atk-exact)/(blkt-fine -
atk-exact), f-bin the same from atk-bin (0: the attack dataset is the worst on the grid).

Timing: the brute force of (a) against the library's delta query at the same n, same process
(ratio = brute force / query).

    python bench/scalar_gap.py
"""
from __future__ import annotations

import itertools
import math
import time

import numpy as np
from scipy import stats

import ldpcompress.accounting.amplification as L
from ldpcompress.accounting import scalar as S
from ldpcompress.accounting.solve import epsilon_for_delta
from ldpcompress.randomizers import GaussianScalar, LaplaceScalar

LO, HI = 0.0, 1.0


def binned_table(noise: str, scale: float, inputs, edges) -> np.ndarray:
    """R_x(cell) for x + noise of the given scale, cells between the edges (plus the two
    unbounded end cells)."""
    dist = stats.laplace if noise == "laplace" else stats.norm
    cdf = np.array([[dist.cdf((e - x) / scale) for e in edges] for x in inputs])
    lower = np.array([[dist.sf((e - x) / scale) for e in edges] for x in inputs])
    # each cell's mass from the accurate side (cdf left of x, sf right of it)
    table = np.diff(np.hstack([np.zeros((len(inputs), 1)), cdf, np.ones((len(inputs), 1))]), axis=1)
    table_sf = -np.diff(np.hstack([np.ones((len(inputs), 1)), lower,
                                   np.zeros((len(inputs), 1))]), axis=1)
    edges = np.asarray(edges, dtype=np.float64)
    mids = np.concatenate([[-np.inf], 0.5 * (edges[1:] + edges[:-1]), [np.inf]])
    return np.where(mids[None, :] > np.asarray(inputs)[:, None], table_sf, table)


def mechanism(noise: str, par: float, cells: int):
    """(oracle, scale, edges): Laplace eps0 = par (b = 1/eps0) with ``cells`` - 2 equal cells
    on [lo, hi]; Gaussian sigma = par with ``cells`` - 2 equal cells on [lo - 3 sigma,
    hi + 3 sigma]."""
    if noise == "laplace":
        return LaplaceScalar(LO, HI, par), (HI - LO) / par, np.linspace(LO, HI, cells - 1)
    return (GaussianScalar(LO, HI, par), par,
            np.linspace(LO - 3 * par, HI + 3 * par, cells - 1))


def add_user(law, row: np.ndarray, pw: np.ndarray):
    """The histogram law (codes in base n + 1, probabilities) after one more report ~ row."""
    codes, probs = law
    c = (codes[:, None] + pw[None, :]).ravel()
    p = (probs[:, None] * row[None, :]).ravel()
    u, inv = np.unique(c, return_inverse=True)
    return u, np.bincount(inv, weights=p)


def others_laws(table: np.ndarray, n: int):
    """Yield (others, law of their histogram) for every multiset of n - 1 input indices, by a
    depth-first walk keeping one chain of laws (memory: n laws)."""
    pw = (n + 1) ** np.arange(table.shape[1], dtype=np.int64)
    m = table.shape[0]

    def walk(prefix, law, start):
        if len(prefix) == n - 1:
            yield prefix, law
            return
        for x in range(start, m):
            yield from walk(prefix + (x,), add_user(law, table[x], pw), x)

    yield from walk((), (np.zeros(1, np.int64), np.ones(1)), 0)


def hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def exact_worst(table: np.ndarray, n: int, eps_list):
    """For each eps: (worst delta, its dataset (x1, x1', others)) over every ordered pair and
    every multiset of the others' inputs, and the delta of the attack dataset (lo vs hi (or
    hi vs lo), others at lo; input 0 is lo, the last hi)."""
    m = table.shape[0]
    pw = (n + 1) ** np.arange(table.shape[1], dtype=np.int64)
    best = [(-1.0, None)] * len(eps_list)
    attack = [0.0] * len(eps_list)
    for others, base in others_laws(table, n):
        laws = [add_user(base, table[x], pw) for x in range(m)]
        for a, b in itertools.permutations(range(m), 2):
            assert np.array_equal(laws[a][0], laws[b][0])
            for i, eps in enumerate(eps_list):
                d = hockey(laws[a][1], laws[b][1], eps)
                if d > best[i][0]:
                    best[i] = (d, (a, b, others))
                if others == (0,) * (n - 1) and {a, b} == {0, m - 1}:
                    attack[i] = max(attack[i], d)
    return best, attack


def describe(ds, grid) -> str:
    a, b, others = ds
    counts = {}
    for o in others:
        counts[grid[o]] = counts.get(grid[o], 0) + 1
    rest = ",".join(f"{v:g}x{c}" for v, c in sorted(counts.items()))
    return f"({grid[a]:g}->{grid[b]:g}; {rest})"


def exact_attack(noise: str, par: float, n: int, eps: float, cells: int = 4002,
                 steps: int = 1 << 16) -> tuple[float, float]:
    """(lower, upper) bracket of the attack datasets' delta (user 1 lo vs hi or hi vs lo, others
    at lo) of the randomizer binned to ``cells`` fine cells (the lower end is at most the
    continuous value): E[(sum_j X_j)_+]/n over n iid draws of X = (R_x1 - e^eps R_x1')/R_lo
    (cell), each value rounded down (lower) or up (upper) to a lattice of ``steps`` steps over
    its range, the n-fold sum by FFT."""
    oracle, scale, edges = mechanism(noise, par, cells)
    if noise == "gaussian":
        edges = np.linspace(LO - 5.5 * scale, HI + 5.5 * scale, cells - 1)
    tab = binned_table(noise, scale, [LO, HI], edges)
    e = math.exp(eps)
    best = [0.0, 0.0]
    for a, b in ((0, 1), (1, 0)):
        x = (tab[a] - e * tab[b]) / tab[0]
        if x.max() <= 0.0:
            continue
        # a draw below -(n - 1) max X makes the sum negative whatever the others: raising it
        # to that level changes no positive part
        x = np.maximum(x, -(n - 1) * x.max())
        h = (x.max() - x.min()) / steps
        for j, rnd in enumerate((np.floor, np.ceil)):
            k = rnd(x / h).astype(np.int64)
            k0 = int(k.min())
            p = np.bincount(k - k0, weights=tab[0])
            size = 1 << int(math.ceil(math.log2(n * p.size)))
            dens = np.fft.irfft(np.fft.rfft(p, size) ** n, size)
            vals = (n * k0 + np.arange(size)) * h
            d = float(np.sum(np.maximum(dens, 0.0) * np.maximum(vals, 0.0))) / n
            best[j] = max(best[j], d)
    return best[0], best[1]


def blanket_fine(st, n: int, eps: float) -> float:
    """The blanket functional of the continuous randomizer, the smallest of its (all sound)
    evaluations at resolution 24, 256, 1024 and window tolerance 1e-16, 1e-12 (the query uses
    24 and, for delta, 1e-30; at n <= 8 the Gaussian lattice often stops at its trivial cap
    n E[X_+] there), min with one report's divergence."""
    law_b = S.blanket_law(st.noise, st.half_width)
    return min([S.local_delta(st.noise, st.half_width, eps)]
               + [S.blanket_delta(n, law_b, eps, tol, resolution=r)
                  for r in (24, 256, 1024) for tol in (1e-16, 1e-12)])


def short(noise: str, par: float) -> str:
    return f"Laplace eps0={par:g}" if noise == "laplace" else f"Gauss sigma={par:g}"


def part_a() -> None:
    print("(a) exact worst case of the binned randomizer (B cells, G inputs on [0, 1]) vs the "
          "continuous bounds")
    print(f"{'randomizer':17s} {'n':>2s} {'B':>3s} {'G':>2s} {'eps':>5s} {'blanket':>9s} "
          f"{'attack':>9s} {'blkt-fine':>9s} {'atk-exact':>9s} {'+-':>7s} {'worst':>9s} "
          f"{'atk-bin':>9s} {'frac':>6s} {'f-bin':>5s} {'worst dataset':24s} {'brute s':>7s} "
          f"{'query s':>7s} {'ratio':>6s}")
    setups = [("laplace", 1.0), ("laplace", 2.0), ("laplace", 4.0), ("gaussian", 1.0)]
    for noise, par in setups:
        for n, g, cells in [(2, 9, 24), (3, 5, 16), (4, 5, 12), (6, 3, 12), (8, 3, 10)]:
            grid = np.linspace(LO, HI, g)
            if noise == "gaussian":
                cells += 4
            oracle, scale, edges = mechanism(noise, par, cells)
            st = oracle.shuffle_structure()
            eps0 = par if noise == "laplace" else 1.0
            eps_list = [0.25 * eps0, 0.5 * eps0, 0.75 * eps0]
            table = binned_table(noise, scale, grid, edges)
            t = time.perf_counter()
            best, attack_bin = exact_worst(table, n, eps_list)
            t_brute = time.perf_counter() - t
            for i, eps in enumerate(eps_list):
                t = time.perf_counter()
                res = L.delta(n, eps=eps, oracle=oracle)
                t_query = time.perf_counter() - t
                up = blanket_fine(st, n, eps)
                low, low_up = exact_attack(noise, par, n, eps)
                worst, ds = best[i]
                frac = (worst - low) / (up - low)
                fbin = (worst - attack_bin[i]) / (up - attack_bin[i])
                print(f"{short(noise, par):17s} {n:2d} {cells:3d} {g:2d} {eps:5.2f} "
                      f"{res.value:9.3e} {res.lower:9.3e} {up:9.3e} {low:9.3e} "
                      f"{low_up - low:7.1e} {worst:9.3e} {attack_bin[i]:9.3e} {frac:6.2f} "
                      f"{fbin:5.2f} {describe(ds, grid):24s} {t_brute:7.2f} {t_query:7.3f} "
                      f"{t_brute / t_query:6.0f}")


def covers(noise: str, par: float, x_hi_first: bool):
    """Binned laws (R_x1, R_x1', R_pi) for the covers pi of part (b)."""
    oracle, scale, _ = mechanism(noise, par, 3)
    if noise == "laplace":
        edges = np.linspace(LO, HI, 1601)
    else:
        edges = np.linspace(LO - 5.5 * scale, HI + 5.5 * scale, 2001)
    grid = [LO, 0.1, 0.25, 0.5, HI]
    table = binned_table(noise, scale, grid, edges)
    r_lo, r_hi = table[0], table[-1]
    out = [(f"z = {z:g}", table[i]) for i, z in enumerate(grid[:-1])]
    for t in (0.02, 0.1, 0.3, 0.5):
        out.append((f"lo/hi {1 - t:g}/{t:g}", (1 - t) * r_lo + t * r_hi))
    out.append(("lo/mid 1/2", 0.5 * (r_lo + table[3])))
    return oracle, (r_hi, r_lo) if x_hi_first else (r_lo, r_hi), out


def part_b() -> None:
    print("\n(b) others iid from pi, n large: delta at the library's attack eps "
          "(1e-6 for z = lo; above 1e-6 beats the attack)")
    for noise, par, n in [("laplace", 4.0, 10**6), ("laplace", 1.0, 10**5),
                          ("gaussian", 2.0, 10**6), ("gaussian", 1.0, 10**5)]:
        oracle, _, _ = mechanism(noise, par, 3)
        res = L.epsilon(n, delta=1e-6, oracle=oracle)
        print(f"  {oracle.describe()}, n = {n}: blanket eps {res.value:.5f}, "
              f"attack eps {res.lower:.5f}")
        if noise == "laplace":  # w = R_mid: the blanket is the mid attack with ~n gamma users
            st = oracle.shuffle_structure()
            law_b = S.blanket_law(st.noise, st.half_width)
            m = round(n * law_b.gamma)
            mid = S.attack_laws(st.noise, st.half_width)[0]
            eps_mid = epsilon_for_delta(lambda e: S.attack_delta(m, mid, e, 1e-16), 1e-6,
                                        st.eps0, upper=False, rtol=1e-4, guess=res.value)
            eps_mid_n = epsilon_for_delta(lambda e: S.attack_delta(n, mid, e, 1e-16), 1e-6,
                                          st.eps0, upper=False, rtol=1e-4, guess=res.lower)
            print(f"    others at mid: eps {eps_mid_n:.5f} with n users, {eps_mid:.5f} with "
                  f"n gamma = {m} users (gamma = {law_b.gamma:.4f})")
        for hi_first in (False, True):
            _, (r1, r2), cov = covers(noise, par, hi_first)
            row = []
            for name, rp in cov:
                law = S.atoms_law(rp, r1 / rp, r2 / rp, 1.0)
                row.append(f"{name}: {S.attack_delta(n, law, res.lower, 1e-16):.3g}")
            print(f"    user 1 {'hi vs lo' if hi_first else 'lo vs hi'}: " + "; ".join(row))


def main() -> None:
    L.delta(2, eps=0.5, oracle=LaplaceScalar(LO, HI, 1.0))  # compile
    part_a()
    part_b()


if __name__ == "__main__":
    main()
