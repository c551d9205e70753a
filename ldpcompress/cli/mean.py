"""CLI command ``mean``: PrivUnit2 (plain and compressed) vs the one-bit baseline (docs/theory.md §7)."""
from __future__ import annotations

import sys
import time

from ..core.limits import MAX_EXPECTED_TRIALS
from .util import Output, count, number, positive, probability

__all__ = ["register"]


def _cmd_mean(args) -> Output:
    # the job's stack (compression, PrivUnit2, AES), imported when it runs: not to build the parser
    from ..compression.split import check_split, choose_split
    from ..estimation.mean import check_memory, choose_eps, run, shuffled_privacy, work_warning
    from ..randomizers.privunit import check_eps
    d, n = count(args.d, "--d", 2), count(args.n, "--n")
    delta = probability(args.delta, "--delta")
    check_memory(d, n)
    if args.central_eps is not None:
        if args.eps is not None:
            raise ValueError("--eps and --central-eps exclude each other: --central-eps chooses "
                             "the local eps")
        target = positive(args.central_eps, "--central-eps")
        eps = choose_eps(d, n, target, delta)
    else:
        eps = check_eps(d, positive(4.0 if args.eps is None else args.eps, "--eps"), "--eps")
    split = count(args.split, "--split", 1, 1000)
    chosen = split is None
    if chosen:  # at most 1000 expected trials per report, else up to the library's cap
        try:
            split = choose_split(d, eps, name="--eps")
        except ValueError:
            split = choose_split(d, eps, MAX_EXPECTED_TRIALS, name="--eps")
    else:
        check_split(d, eps, split, ("--eps", "--split"))
    warning = work_warning(d, n, eps, split, chosen)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    start = time.perf_counter()
    res = run(d, n, eps, split, progress=True)
    central = shuffled_privacy(d, n, eps, delta)

    def envelope() -> tuple[dict, dict, dict]:
        timings = {name: r["seconds"] for name, r in res.items() if isinstance(r, dict)}
        timings["central"] = central.pop("seconds")
        res.update({f"central_{key}": value for key, value in central.items()})
        return (dict(d=d, n=n, eps=eps, split=split, delta=delta,
                central_eps=args.central_eps), res,
                dict(timings, total=time.perf_counter() - start))

    def show() -> None:
        how = "chosen for --central-eps by PrivUnit2's own bound" if args.central_eps is not None \
            else "local"
        print(f"mean of n={n:,} unit vectors in d={d}, eps={eps:g} ({how}; compressed: "
              f"K={res['split']} copies, {res['expected_trials']:.1f} expected trials)")
        lower = "n/a" if central["lower"] is None else f"{central['lower']:.6g}"
        print(f"shuffled PrivUnit2 reports: central ({central['eps']:.6g}, {delta:g})-DP by its "
              f"own blanket bound (lower bound {lower}; generic bound "
              f"{central['generic']:.6g})")
        print(f"{'method':<24}{'MSE':>12}{'predicted':>12}{'bytes':>8}{'seconds':>9}")
        for name, r in res.items():
            if isinstance(r, dict):
                print(f"{name:<24}{r['mse']:>12.4g}{r['predicted']:>12.4g}{r['bytes']:>8}"
                      f"{r['seconds']:>9.2f}")
    return Output("mean", envelope, show)


def register(sub) -> None:
    m = sub.add_parser("mean", help="mean estimation: PrivUnit2, compressed, one-bit (docs/theory.md §7)",
                       description="Mean of n simulated unit vectors in d dimensions under "
                       "eps-LDP: PrivUnit2, its compressed 17-byte form (K copies at eps/K) and "
                       "the one-bit baseline, with measured and predicted MSE, and the central "
                       "(eps, delta) of the shuffled PrivUnit2 reports by its own blanket bound "
                       "with the lower bound of an attack.")
    m.add_argument("--d", type=number, default=1000, help="dimension (default 1000)")
    m.add_argument("--n", type=number, default=10_000, help="users (default 10,000)")
    m.add_argument("--eps", type=number, help="local eps of each user (default 4)")
    m.add_argument("--central-eps", type=number, help="target central eps of the shuffled "
                   "reports: the local eps is chosen by PrivUnit2's own shuffle bound "
                   "(excludes --eps)")
    m.add_argument("--delta", type=number, default=1e-6, help="central delta of the shuffled "
                   "reports (default 1e-6)")
    m.add_argument("--split", type=number, help="K copies at eps/K in [1, 1000] (default: "
                   "capped trials)")
    m.set_defaults(func=_cmd_mean)
