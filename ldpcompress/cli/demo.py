"""CLI command ``demo``: the end-to-end frequency-estimation job (docs/theory.md §6 + §2.10)."""
from __future__ import annotations

from ..core import validate as V
from ..core.numerics import MAX_FIELD
from .options import add_oracle_option
from .util import Output, count, number, positive, probability

__all__ = ["register"]



def _cmd_demo(args) -> Output:
    from ..randomizers.catalog import oracle_class  # looks up this name only
    try:
        if args.oracle != "best":
            oracle_class(args.oracle)
    except ValueError as err:
        raise ValueError(f"--{err} (or best)") from None  # "--oracle must be one of ..."
    params = dict(n=count(args.n, "--n"), k=count(args.k, "--k", 2, MAX_FIELD - 1),
                  eps=V.local_eps0(positive(args.eps, "--eps"), "--eps"),
                  delta=probability(args.delta, "--delta"), oracle=args.oracle,
                  seed=count(args.seed, "--seed", 0, 2 ** 63 - 1))
    from ..estimation import demo  # the accounting stack: when the command runs
    res = demo.run(**params, progress=True)  # bars and the compile notice go to stderr

    def envelope() -> tuple[dict, dict, dict]:
        results = {k: v for k, v in res.items()
                   if k not in ("estimate", "true", "variance", "times")}
        return params, results, res["times"]
    return Output("demo", envelope, lambda: demo.show(res))


def register(sub) -> None:
    d = sub.add_parser("demo", help="simulate users, PI-RAPPOR + shuffling, estimate a histogram",
                       description="The main job end to end: simulated users (Zipf data) report "
                       "through a frequency oracle at the largest local eps0 that shuffling "
                       "turns into the target central (eps, delta); the shuffled reports are "
                       "aggregated into a histogram, compared with the truth.")
    d.add_argument("--n", type=number, default=100_000, help="users (default 100,000)")
    d.add_argument("--k", type=number, default=1000, help="items (default 1,000)")
    d.add_argument("--eps", type=number, default=1.0, help="target central eps (default 1)")
    d.add_argument("--delta", type=number, default=1e-6, help="target central delta")
    add_oracle_option(d, "the frequency oracle the users run (default pi-rappor): any "
                      "registered frequency oracle built from k and eps ('ldpcompress "
                      "randomizers' lists the randomizers), or 'best': the one with the smallest "
                      "error at the eps0 its own bound certifies (planning.best_oracle)",
                      default="pi-rappor")
    d.add_argument("--seed", type=number, default=0, help="seed of the simulated data only")
    d.set_defaults(func=_cmd_demo)
