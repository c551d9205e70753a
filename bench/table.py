"""Shuffle accounting of randomizers given by their table (docs/theory.md §2.15).

1. Worked checks: the yes/no example, k-RR, OUE (k = 4: 16 outputs) and subset selection (k = 6,
   d = 2: 15 subsets), each written as a TableRandomizer of its realised law, against the
   randomizer's own (dedicated) bound: eps at delta = 1e-6, the relative difference and the
   time of each query, beside the generic bound (FMT21 at the same eps0) run in the same process.
2. Random 5 x 7 tables (entries proportional to e^U(0, s)): the table's blanket bound, its
   attack and the generic bound at n = 1e6, the blanket/attack gap and its central-limit
   prediction sqrt(chi2 of the blanket / chi2 of the attack).

    python bench/table.py [--quick]
"""
from __future__ import annotations

import itertools
import math
import sys
import time
from fractions import Fraction

import numpy as np

import ldpcompress as L
from ldpcompress.randomizers import KRR, OUE, SubsetSelection, TableRandomizer, registry

N_GRID = (10 ** 4, 10 ** 5, 10 ** 6)


def as_table(prob, inputs, outputs) -> TableRandomizer:
    """The table randomizer of Pr[y | x] = prob(x, y), entries as exact rational strings."""
    return TableRandomizer([[str(Fraction(prob(x, y))) for y in outputs] for x in inputs])


def yes_no(eps0: float):
    try:
        cls = registry.lookup("yes-no")
    except ValueError:  # docs/examples/yes_no.py, registered once
        import importlib.util
        import os
        path = os.path.join(os.path.dirname(__file__), "..", "docs", "examples", "yes_no.py")
        spec = importlib.util.spec_from_file_location("yes_no_example", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cls = module.YesNo
    r = cls(eps0)
    a1 = r.shuffle_structure().a1
    return as_table(lambda x, y: a1 if x == y else 1 - a1, range(2), range(2)), r


def krr(eps0: float, k: int = 5):
    r = KRR(k, eps0)
    a1 = r.shuffle_structure().a1
    return as_table(lambda x, y: a1 if x == y else (1 - a1) / (k - 1), range(k), range(k)), r


def oue(eps0: float, k: int = 4):
    r = OUE(k, eps0)
    st = r.shuffle_structure()

    def prob(x, bits):
        return math.prod((st.a1 if j == x else st.a) if b else 1 - (st.a1 if j == x else st.a)
                         for j, b in enumerate(bits))
    return as_table(prob, range(k), list(itertools.product((0, 1), repeat=k))), r


def subset(eps0: float, k: int = 6, d: int = 2):
    r = SubsetSelection(k, eps0, d=d)
    a1 = r.shuffle_structure().a1
    inside, outside = math.comb(k - 1, d - 1), math.comb(k - 1, d)
    return as_table(lambda x, s: a1 / inside if x in s else (1 - a1) / outside, range(k),
                    list(itertools.combinations(range(k), d))), r


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def worked_checks(n_grid) -> None:
    print("worked checks: eps at delta = 1e-6 (table bound vs the randomizer's dedicated bound)")
    print(f"{'randomizer':12s} {'eps0':>5s} {'n':>8s} {'table':>10s} {'dedicated':>10s} "
          f"{'rel diff':>9s} {'generic':>9s} {'t table':>8s} {'t ded.':>7s} {'t gen.':>7s}")
    for name, make in (("yes-no", yes_no), ("k-RR k=5", krr), ("OUE k=4", oue),
                       ("subset 6,2", subset)):
        for eps0 in (1.0, 4.0):
            table, own = make(eps0)
            L.epsilon(1000, delta=1e-6, oracle=table, lower=False)  # compile
            for n in n_grid:
                ours, t1 = timed(lambda: L.epsilon(n, delta=1e-6, oracle=table, lower=False))
                theirs, t2 = timed(lambda: L.epsilon(n, delta=1e-6, oracle=own, lower=False))
                gen, t3 = timed(lambda: L.accounting.amplification.general_epsilon(
                    n, table.eps, 1e-6))
                rel = ours.value / theirs.value - 1
                print(f"{name:12s} {eps0:5.1f} {n:8.0e} {ours.value:10.6f} {theirs.value:10.6f} "
                      f"{rel:+9.2e} {gen.value:9.5f} {t1:8.2f} {t2:7.2f} {t3:7.3f}")


def random_tables(n: int) -> None:
    print(f"\nrandom 5 x 7 tables, n = {n:.0e}, delta = 1e-6")
    print(f"{'spread':>6s} {'eps0':>6s} {'blanket':>9s} {'attack':>9s} {'gap':>6s} "
          f"{'CLT gap':>7s} {'generic':>9s} {'t query':>8s} {'t gen.':>7s}")
    rng = np.random.default_rng(5)
    for spread in (1.0, 2.0, 4.0):
        p = np.exp(rng.uniform(0.0, spread, size=(5, 7)))
        r = TableRandomizer((p / p.sum(axis=1, keepdims=True)).tolist())
        res, t1 = timed(lambda: L.epsilon(n, delta=1e-6, oracle=r))
        gen, t2 = timed(lambda: L.accounting.amplification.general_epsilon(n, r.eps, 1e-6))
        t = r.table
        mu = t.min(axis=0)
        pairs = [(a, b) for a in range(5) for b in range(5) if a != b]
        chi_b = max(((t[a] - t[b]) ** 2 / mu).sum() for a, b in pairs)
        chi_c = max(((t[a] - t[b]) ** 2 / t[c]).sum() for a, b in pairs for c in range(5))
        print(f"{spread:6.1f} {r.eps:6.3f} {res.value:9.6f} {res.lower:9.6f} "
              f"{res.value / res.lower - 1:6.1%} {math.sqrt(chi_b / chi_c) - 1:7.1%} "
              f"{gen.value:9.6f} {t1:8.2f} {t2:7.3f}")


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    worked_checks(N_GRID[:2] if quick else N_GRID)
    random_tables(10 ** 5 if quick else 10 ** 6)


if __name__ == "__main__":
    main()
