"""Benchmark of the planner and best_oracle (ldpcompress.planning; docs/guide.md, "Planning a
campaign").

    python bench/plan.py [--quick]

1. best_oracle for k = 1000 and k = 50,000 items, n = 1e6 users, central (1, 1e-6): the
   ranking (each registered frequency oracle at its certified eps0), its time against the hand
   loop it replaces, run in the same process after it: ``inverse.max_eps0`` then ``variance``
   for every oracle, one at a time (the ranking runs first, so the process's caches favour the
   hand loop), and the same loop with the bisection search inverse.max_eps0 used before its
   value-guided search (this branch). The kernels are compiled (or loaded) by a warm-up at
   another n first.
2. The planner's tables for the telemetry target of issue 28 (n = 1e6, PI-RAPPOR k = 1000,
   central (1, 1e-6), T = 6 and 30), with the issue's measured figures beside them (public
   groups 9.19 / 7.58, Poisson proxy 10.92 / 10.87), and its time.

--quick: k = 1000 only, and the planner without the Poisson rows.
"""
import math
import sys
import time

from ldpcompress.accounting import inverse
from ldpcompress.accounting.solve import largest_feasible
from ldpcompress.core.numerics import EXP_MAX
from ldpcompress.planning import best_oracle, plan
from ldpcompress.randomizers.catalog import make_oracle, oracle_names

N, EPS, DELTA = 10 ** 6, 1.0, 1e-6
ISSUE = {6: dict(groups=9.19, poisson=10.92), 30: dict(groups=7.58, poisson=10.87)}


def hand_loop(k: int) -> dict:
    """What a user wrote by hand (issue 32): max_eps0, then the variance, oracle by oracle."""
    out = {}
    for name in oracle_names():
        def factory(e, name=name):
            return make_oracle(name, k, e)
        e0 = inverse.max_eps0(N, EPS, DELTA, factory)
        out[name] = (e0, float(factory(e0).variance(N, 0.0)))
    return out


def bisection_max_eps0(factory, n: int) -> float:
    """inverse.max_eps0 for an oracle as it was before the value-guided search: bisection on
    ``inverse.certified`` from eps (halving until certified), to a relative 1e-9, then the
    walk up the oracle's plateaus (galloping then bisection on ``plateau()``)."""
    def ok(e):
        try:
            return inverse.certified(n, None, EPS, DELTA, oracle=factory(e))
        except ValueError:
            return False

    def plateau(e):
        try:
            return factory(e).plateau()
        except ValueError:
            return None

    lo = EPS
    while not ok(lo):
        lo /= 2.0
    best = largest_feasible(ok, lo, EXP_MAX)
    for _ in range(inverse.MAX_PLATEAUS):
        start = inverse.next_plateau(plateau, best, EXP_MAX)
        if start is None or not ok(start):
            break
        end = inverse.next_plateau(plateau, start, EXP_MAX)
        top = EXP_MAX if end is None else math.nextafter(end, 0.0)
        best = largest_feasible(ok, start, top) if end is None or not ok(top) else top
    return best


def bisection_loop(k: int) -> dict:
    """The hand loop with the search as it was before this branch."""
    out = {}
    for name in oracle_names():
        def factory(e, name=name):
            return make_oracle(name, k, e)
        e0 = bisection_max_eps0(factory, N)
        out[name] = (e0, float(factory(e0).variance(N, 0.0)))
    return out


def oracles(k: int) -> None:
    t0 = time.perf_counter()
    ranking = best_oracle(k, N, EPS, DELTA, server_time=False)
    t_rank = time.perf_counter() - t0
    t0 = time.perf_counter()
    timed = best_oracle(k, N, EPS, DELTA)  # the same, with each server timed (simulated)
    t_served = time.perf_counter() - t0
    t0 = time.perf_counter()
    hand = hand_loop(k)
    t_hand = time.perf_counter() - t0
    t0 = time.perf_counter()
    best_oracle(k, N, EPS, DELTA, server_time=False)
    t_again = time.perf_counter() - t0  # after the hand loop: the same process caches
    t0 = time.perf_counter()
    old = bisection_loop(k)
    t_old = time.perf_counter() - t0
    print(f"\nbest_oracle: k = {k:,}, n = {N:.0e}, central ({EPS:g}, {DELTA:g})")
    rows = timed.rows()
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)))
    agree = all(abs(hand[c.name][0] - c.eps0) <= 1e-6 * c.eps0 for c in ranking.choices)
    best_hand = min(hand, key=lambda s: hand[s][1])
    print(f"  ranking {t_rank:.2f} s (with server timing {t_served:.2f} s); hand loop "
          f"(max_eps0 + variance per oracle) {t_hand:.2f} s: ratio {t_hand / t_rank:.1f}x; "
          f"eps0 agree to 1e-6: {agree}; hand loop's best: {best_hand}, "
          f"best_oracle's: {ranking.best.name}; the ranking again after the hand loop "
          f"{t_again:.2f} s")
    below = max((old[c.name][0] - c.eps0) / c.eps0 for c in ranking.choices)
    print(f"  hand loop with the bisection search of before (main): {t_old:.2f} s: ratio "
          f"{t_old / t_rank:.1f}x; its eps0 above best_oracle's by at most {below:.1e} "
          "(relative; both certified)")


def planner(quick: bool) -> None:
    assignments = ("groups", "allocation") if quick else ("groups", "poisson", "allocation")
    t0 = time.perf_counter()
    p = plan(N, [6, 30], EPS, DELTA, "pi-rappor", params={"k": 1000}, assignments=assignments,
             per_device=(1, 2))
    elapsed = time.perf_counter() - t0
    print(f"\nplan: n = {N:.0e}, PI-RAPPOR k = 1000, central ({EPS:g}, {DELTA:g}) "
          f"({elapsed:.1f} s)")
    for t in p.rounds:
        rows = p.table(t)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        print(f" T = {t}:")
        for r in rows:
            print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)))
        got = {r.assignment: r.eps0 for r in p.rows if r.rounds == t and r.per_device == 1}
        issue = ", ".join(f"{a} {v} (planner {got[a]:.4f})" for a, v in ISSUE[t].items()
                          if a in got)
        alloc = got["allocation"]
        target = (f"allocation - Poisson = {alloc - got['poisson']:+.4f} (target >= -0.3)"
                  if "poisson" in got else "")
        print(f"  issue 28 figures: {issue}; {target}")
        print(f"  deploy: {p.deploy(t).label}; per-round SE, public groups / deployed = "
              f"{next(r for r in p.rows if r.rounds == t and r.assignment == 'groups').error.se / p.deploy(t).error.se:.2f}x")  # noqa: E501
    for r in p.rows:
        print(f"  {r.label:22s} T = {r.rounds:2d}: {r.seconds:.2f} s")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    best_oracle(100, 10 ** 5, EPS, DELTA)  # warm-up: compile or load every kernel used
    for k in ((1000,) if quick else (1000, 50_000)):
        oracles(k)
    planner(quick)
