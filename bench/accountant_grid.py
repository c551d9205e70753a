"""A fixed grid of ledgers for before/after comparisons of the accountant (issue 32): shuffled,
k-RR and oracle rounds, sampled rounds, Gaussians, Laplace, Poisson-sampled noise, a random
allocation and mixed ledgers, each queried for eps(delta) with the default Accountant() from
empty caches. Prints value, lower, gap (value - lower), method, h and seconds per ledger; run it
on two checkouts (PYTHONPATH=<checkout>) to compare. ``--quick`` leaves out the 14,062-step
DP-SGD ledger (a minute before issue 32)."""
import sys
import time

from ldpcompress.accounting import accountant as A
from ldpcompress.accounting import event_profiles as EP
from ldpcompress.accounting import events as E
from ldpcompress.randomizers import PIRappor


def ledgers(quick: bool):
    from ldpcompress.accounting import allocation_central as AC
    cases = [
        ("shuffled n=1e5 eps0=2 x1000", [(E.ShuffledRound(10 ** 5, 2.0), 1000)], 1e-6),
        ("shuffled n=1e4 eps0=1 x10", [(E.ShuffledRound(10 ** 4, 1.0), 10)], 1e-6),
        ("k-RR n=1e5 eps0=1 k=10 x100", [(E.KRRShuffledRound(10 ** 5, 1.0, k=10), 100)], 1e-6),
        ("oracle PI-RAPPOR(100,2) n=1e4 x20",
         [(E.OracleShuffledRound(10 ** 4, PIRappor(100, 2.0)), 20)], 1e-6),
        ("sampled n=1e5 eps0=2 gamma=.1 x50",
         [(E.SampledShuffledRound(10 ** 5, 2.0, gamma=0.1), 50)], 1e-6),
        ("Gaussian sigma=10 x100", [(E.Gaussian(10.0), 100)], 1e-6),
        ("Laplace scale=10 x100", [(E.Laplace(10.0), 100)], 1e-6),
        ("Laplace scale=1 x4 (delta 1e-14)", [(E.Laplace(1.0), 4)], 1e-14),
        ("PureDP 0.5 x30", [(E.PureDP(0.5), 30)], 1e-6),
        ("Poisson Gaussian s=1.1 q=.004 x1000",
         [(E.PoissonSampledGaussian(1.1, 0.004), 1000)], 1e-5),
        ("Poisson Laplace b=2 q=.01 x500", [(E.PoissonSampledLaplace(2.0, 0.01), 500)], 1e-6),
        ("allocated Gaussian s=2 50 steps k=2", [(AC.AllocatedGaussian(2.0, steps=50,
                                                                        per_record=2), 1)], 1e-6),
        ("mixed shuffled+Gaussian+Laplace+pure",
         [(E.ShuffledRound(10 ** 5, 1.0), 50), (E.Gaussian(5.0), 10), (E.Laplace(20.0), 5),
          (E.PureDP(0.1), 3)], 1e-6),
        ("mixed Poisson Gaussian + shuffled",
         [(E.PoissonSampledGaussian(1.0, 0.01), 200), (E.ShuffledRound(10 ** 5, 2.0), 20)], 1e-6),
    ]
    if not quick:
        cases.append(("DP-SGD s=1.1 q=256/60000 x14062",
                      [(E.PoissonSampledGaussian(1.1, 256 / 60000), 14062)], 1e-5))
    return cases


def _clear():
    for cache in (A._event_pld, A._event_rdp, EP.dots_atoms, EP.noise_of, EP.grid_rdp_atoms):
        cache.cache_clear()


def main():
    quick = "--quick" in sys.argv
    A.Accountant().compose(E.Gaussian(1.0)).compose(E.Laplace(1.0)).epsilon(1e-6)  # warm-up
    print(f"{'ledger':<38}{'value':>10}{'lower':>10}{'gap':>10}  {'method':<6}{'h':>9}"
          f"{'seconds':>9}")
    for name, pairs, delta in ledgers(quick):
        _clear()
        acct = A.Accountant()
        for event, times in pairs:
            acct.compose(event, times)
        t = time.perf_counter()
        try:
            res = acct.epsilon(delta)
        except ValueError as err:
            print(f"{name:<38} refused: {err}")
            continue
        sec = time.perf_counter() - t
        low = "-" if res.lower is None else f"{res.lower:.6g}"
        gap = "-" if res.lower is None else f"{res.value - res.lower:.3g}"
        h = "-" if res.h is None else f"{res.h:.3g}"
        print(f"{name:<38}{res.value:>10.6g}{low:>10}{gap:>10}  {res.method:<6}{h:>9}"
              f"{sec:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
