"""Benchmark of binary randomized response accounted exactly (docs/theory.md §2.14) and of the
generic bracket, against the bounds of before run in the same process.

    python bench/binary_rr.py [--quick] [--n 1e3,1e6] [--eps0 0.5,4]

Table 1, binary RR (k = 2) at delta = 1e-6: the exact count over every dataset (upper: the
block search; lower: the worst dataset it evaluated, an exact attack) with the gap and the time
of one eps query (CPU seconds, first run: the search has no cache to reuse), then the split pair of before
(``krr_split``, FMT21's clones for k = 2) and FMT21 Thm 3.2 with their ratios to the new upper.
Table 1b: asymmetric binary randomizers (Pr[1|1], Pr[1|0]) likewise, against FMT21 at their
replacement eps0. Table 2, any eps0-LDP randomizer: FMT21 Thm 3.2 (upper) and the generic lower bound (the most
vulnerable k-RR found, with its k), their ratio and the lower bound's time. Table 3: the
accountant, 10 rounds of binary RR composed (connect-the-dots PLD), with and without the exact
profile.
"""
import sys
import time
from fractions import Fraction

from ldpcompress.accounting import amplification as A
from ldpcompress.accounting.accountant import Accountant
from ldpcompress.accounting.binary import BinaryCount, BinaryLaw, GenericLowerProfile
from ldpcompress.accounting.events import KRRShuffledRound, ShuffledRound

DELTA = 1e-6


def once(fn, *args):
    """fn(*args) and its CPU seconds (process time: the machine is shared, so wall time
    measures the neighbours too)."""
    t = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t


def binary_table(ns, eps0s):
    print("Table 1: binary RR (k = 2), eps at delta = 1e-6")
    print(f"{'n':>6} {'eps0':>5} | {'upper':>10} {'lower':>10} {'gap %':>7} {'time s':>7} | "
          f"{'krr_split':>10} {'ratio':>6} | {'FMT21':>10} {'ratio':>6}")
    worst_gap = 0.0
    for n in ns:
        for eps0 in eps0s:
            (up, lo), t = once(BinaryCount(n, BinaryLaw.rr(eps0)).solve_epsilon, DELTA)
            split = A.krr_split_epsilon(n, eps0, 2, DELTA).value
            gen = A.general_epsilon(n, eps0, DELTA).value
            gap = 100.0 * (up / lo - 1.0)
            worst_gap = max(worst_gap, gap)
            print(f"{n:>6.0e} {eps0:>5g} | {up:>10.6g} {lo:>10.6g} {gap:>7.3f} {t:>7.2f} | "
                  f"{split:>10.6g} {split / up:>6.3f} | {gen:>10.6g} {gen / up:>6.3f}",
                  flush=True)
    print(f"largest gap upper/lower: {worst_gap:.3f}%\n")


def asymmetric_table(ns):
    print("Table 1b: asymmetric binary randomizers, eps at delta = 1e-6")
    print(f"{'Pr[1|1]':>7} {'Pr[1|0]':>7} {'eps0':>6} {'n':>6} | {'upper':>10} {'lower':>10} "
          f"{'gap %':>7} {'time s':>7} | {'FMT21':>10} {'ratio':>6}")
    worst_gap = 0.0
    for p1, q0 in [(Fraction(3, 4), Fraction(1, 10)), (Fraction(1, 2), Fraction(1, 100)),
                   (Fraction(9, 10), Fraction(1, 5))]:
        law = BinaryLaw.of(p1, q0)
        for n in ns:
            (up, lo), t = once(BinaryCount(n, law).solve_epsilon, DELTA)
            gen = A.general_epsilon(n, law.eps0, DELTA).value
            gap = 100.0 * (up / lo - 1.0)
            worst_gap = max(worst_gap, gap)
            print(f"{str(p1):>7} {str(q0):>7} {law.eps0:>6.3f} {n:>6.0e} | {up:>10.6g} {lo:>10.6g} "
                  f"{gap:>7.3f} {t:>7.2f} | {gen:>10.6g} {gen / up:>6.3f}", flush=True)
    print(f"largest gap upper/lower: {worst_gap:.3f}%\n")


def generic_table(ns, eps0s):
    print("Table 2: any eps0-LDP randomizer, eps at delta = 1e-6 (the bracket)")
    print(f"{'n':>6} {'eps0':>5} | {'FMT21 upper':>11} {'lower':>10} {'k':>3} {'upper/lower':>11} "
          f"{'time s':>7}")
    for n in ns:
        for eps0 in eps0s:
            gen = A.general_epsilon(n, eps0, DELTA).value
            prof = GenericLowerProfile(n, eps0)
            low, t = once(A._eps_bound, prof, DELTA)
            print(f"{n:>6.0e} {eps0:>5g} | {gen:>11.6g} {low.value:>10.6g} {prof.k_best:>3} "
                  f"{gen / low.value:>11.3f} {t:>7.2f}", flush=True)
    print()


def accountant_table(ns, eps0):
    print(f"Table 3: 10 composed rounds of binary RR, eps0 = {eps0}, eps at delta = 1e-6")
    print(f"{'n':>6} | {'exact (k = 2)':>13} {'time s':>7} | {'generic':>10} {'time s':>7}")
    for n in ns:
        ex, t1 = once(lambda: Accountant().compose(KRRShuffledRound(n, eps0, 2), 10)
                      .epsilon(DELTA).value)
        ge, t2 = once(lambda: Accountant().compose(ShuffledRound(n, eps0), 10)
                      .epsilon(DELTA).value)
        print(f"{n:>6.0e} | {ex:>13.6g} {t1:>7.2f} | {ge:>10.6g} {t2:>7.2f}", flush=True)


def _list(flag, default, cast):
    if flag not in sys.argv:
        return default
    return [cast(float(v)) for v in sys.argv[sys.argv.index(flag) + 1].split(",")]


def main():
    quick = "--quick" in sys.argv
    ns = _list("--n", [10**3, 10**4, 10**6] if quick else [10**3, 10**4, 10**6, 10**9], int)
    eps0s = _list("--eps0", [0.5, 4.0] if quick else [0.5, 1.0, 4.0, 10.0], float)
    BinaryCount(100, BinaryLaw.rr(1.0)).solve_epsilon(DELTA)  # compile outside the timings
    binary_table(ns, eps0s)
    asymmetric_table(ns)
    generic_table(ns, eps0s)
    accountant_table([10**4, 10**6] if quick else [10**4, 10**6, 10**8], 2.0)
    print(f"(delta = {DELTA:g}; times: CPU seconds of one query, table building included)")


if __name__ == "__main__":
    main()
