"""Benchmark of campaigns with random allocation of shuffled rounds (docs/theory.md §2.16).

    python bench/allocation.py [--quick]

Telemetry target: n = 1e6 devices, PI-RAPPOR over 1000 items, central (1, 1e-6), T = 6 and
T = 30 rounds, one report per device. For each T, in the same process:

* the largest eps0 of the allocated campaign (it is one shuffled round of the n devices);
* the baseline, the Poisson proxy: each device reports in each round with probability 1/T,
  the T sampled rounds composed by the accountant (largest eps0 by bisection to 1e-3), and the
  public groups (n/T devices per round, each group one round);
* the composed eps at the Poisson proxy's eps0: the campaign's against the proxy's (ratio);
* the time of one query of the 30-round campaign (cold and best warm), and of one composed
  query of the proxy, with the ratio.

Then the price of several reports per device (k = 2, T = 30, eps0 = 6): blocks (the 2-fold
composition) against distinct rounds (accounted by the linked bound, a generic round at
2 eps0), and the lower bounds (the attack on one block; for k-RR the union-count attack).
"""
import sys
import time

from ldpcompress.accounting import Accountant
from ldpcompress.accounting import allocation as AL
from ldpcompress.accounting import events as EV
from ldpcompress.accounting import inverse
from ldpcompress.randomizers.pirappor import PIRappor

from amplification import timed  # noqa: E402  (best of a few warm runs, the sibling bench's)

N, K, EPS, DELTA = 10 ** 6, 1000, 1.0, 1e-6
ISSUE_POISSON = {6: 10.92, 30: 10.87}
ISSUE_GROUPS = {6: 9.19, 30: 7.58}


def factory(e0):
    return PIRappor(K, e0)


def poisson_eps(e0: float, T: int) -> float:
    """The Poisson proxy: T rounds, each device reporting with probability 1/T, composed."""
    acct = Accountant().compose(EV.SampledOracleShuffledRound(N, factory(e0), gamma=1.0 / T), T)
    return acct.epsilon(DELTA).value


def poisson_max_eps0(T: int, lo: float, hi: float, tol: float = 1e-3) -> float:
    """Largest eps0 (to tol, verified lower end) whose Poisson proxy meets (EPS, DELTA)."""
    assert poisson_eps(lo, T) <= EPS and poisson_eps(hi, T) > EPS
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if poisson_eps(mid, T) <= EPS:
            lo = mid
        else:
            hi = mid
    return lo


def telemetry(quick: bool) -> None:
    print(f"n = {N:.0e}, PI-RAPPOR k = {K}, central ({EPS:g}, {DELTA:g}), one report per device")
    t0 = time.perf_counter()
    alloc = AL.max_eps0(N, 30, EPS, DELTA, oracle_factory=factory)
    t_alloc = time.perf_counter() - t0
    print(f"  allocation (any T: one round of n devices): largest eps0 {alloc:.4f} "
          f"({t_alloc:.1f} s)")
    for T in (6, 30):
        t0 = time.perf_counter()
        if quick:
            pois = ISSUE_POISSON[T]
            note = "(the issue's figure, --quick)"
        else:
            pois = poisson_max_eps0(T, ISSUE_POISSON[T] - 0.3, alloc + 0.2)
            note = f"({time.perf_counter() - t0:.0f} s)"
        groups = inverse.max_eps0(N // T, EPS, DELTA, factory)
        print(f"  T = {T:2d}: Poisson 1/T proxy eps0 {pois:.4f} {note} (issue {ISSUE_POISSON[T]}); "
              f"public groups {groups:.4f} (issue {ISSUE_GROUPS[T]})")
        print(f"          allocation - Poisson proxy = {alloc - pois:+.4f} (target >= -0.3); "
              f"allocation / public groups = {alloc / groups:.3f}")
        ev = AL.AllocatedShuffledRounds(N, T, oracle=factory(pois))
        a, p = AL.epsilon(ev, DELTA).value, poisson_eps(pois, T)
        print(f"          at eps0 = {pois:.4f}: allocation eps {a:.4f}, Poisson proxy eps {p:.4f}, "
              f"ratio {a / p:.3f} (target <= 1.10)")
    e0 = 10.8765  # a parameter not queried before: both queries below are cold
    ev = AL.AllocatedShuffledRounds(N, 30, oracle=factory(e0))
    _, cold = timed(AL.epsilon, ev, DELTA, repeat=0)
    _, warm = timed(AL.epsilon, ev, DELTA)
    _, t_pois = timed(poisson_eps, e0, 30, repeat=0)
    print(f"  one query of the 30-round campaign at n = 1e6 (eps0 = {e0}): {cold:.3f} s cold, "
          f"{warm * 1e3:.1f} ms warm (target <= 2 s); the Poisson proxy's composed query, "
          f"cold: {t_pois:.2f} s, ratio {t_pois / cold:.0f}x")
    t0 = time.perf_counter()
    Accountant().compose(ev).epsilon(DELTA)
    print(f"  the same campaign through the accountant (its PLD, to compose with other events): "
          f"{time.perf_counter() - t0:.2f} s")


def several_reports() -> None:
    print("\nk = 2 reports per device, T = 30, PI-RAPPOR k = 1000, eps0 = 6, n = 1e6:")
    for scheme in ("blocks", "independent", "distinct"):
        ev = AL.AllocatedShuffledRounds(N, 30, 2, scheme, oracle=factory(6.0))
        res, t = timed(AL.epsilon, ev, DELTA, repeat=0)
        low = "" if res.lower is None else f", lower {res.lower:.4f} (one block)"
        print(f"  {scheme:11s}: eps {res.value:.4f}{low} ({t:.1f} s)")
    one = AL.epsilon(AL.AllocatedShuffledRounds(N, 30, oracle=factory(6.0)), DELTA)
    print(f"  (one report per device: {one.value:.4f})")
    print("the same with k-RR (k = 1000) at eps0 = 6, its union-count attack beside each:")
    for scheme in ("blocks", "independent", "distinct"):
        ev = AL.AllocatedShuffledRounds(N, 30, 2, scheme, eps0=6.0, k_rr=K)
        res, t = timed(AL.epsilon, ev, DELTA, repeat=0)
        print(f"  {scheme:11s}: eps {res.value:.4f}, lower {res.lower:.4f} ({t:.1f} s)")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    telemetry(quick)
    several_reports()
