"""Command line: ``ldpcompress amplify|compose|noise ...``; each job registers its commands."""
from __future__ import annotations

import argparse
import json
import sys
import time

from . import amplification as amp
from . import inverse
from .cli_util import fmt, number, print_table


def _amplify_forward(args) -> dict:
    kwargs = dict(k=None if args.k is None else args.k, delta0=args.delta0)
    if args.eps is not None and args.delta is None:
        res = amp.delta(args.n, args.eps0, args.eps, **kwargs)
    else:
        if args.delta is None:
            raise ValueError("give --delta (for eps) or --eps (for delta)")
        res = amp.epsilon(args.n, args.eps0, args.delta, **kwargs)
    return res.as_dict()


def _amplify_inverse(args) -> dict:
    if args.eps is None or args.delta is None:
        raise ValueError("--inverse needs the target --eps and --delta")
    start = time.perf_counter()
    if args.n is not None:
        value = inverse.max_eps0(args.n, args.eps, args.delta, k=args.k)
        what = "max_eps0"
    elif args.eps0 is not None:
        value = inverse.min_n(args.eps0, args.eps, args.delta, k=args.k)
        what = "min_n"
    else:
        raise ValueError("--inverse needs --n (to find the largest eps0) or --eps0 (smallest n)")
    return dict(query=what, value=value, params=dict(n=args.n, eps0=args.eps0, eps=args.eps,
                                                     delta=args.delta, k=args.k),
                seconds=time.perf_counter() - start)


def _show_forward(res: dict) -> None:
    p = res["params"]
    what = "eps" if res["query"] == "epsilon" else "delta"
    given = f"delta={p['delta']:g}" if what == "eps" else f"eps={p['eps']:g}"
    k = f", k={p['k']}" if p["k"] is not None else ""
    print(f"Shuffled eps0={p['eps0']:g}-LDP reports, n={p['n']}{k}, {given}")
    rows = [(b["label"], fmt(b["value"]) if b["value"] is not None else f"n/a ({b['note']})",
             f"{b['seconds'] * 1e3:.2f}") for b in res["bounds"]]
    print_table(rows, ("bound", what, "ms"))
    print(f"\nbest upper bound: {what} = {fmt(res['value'])} ({res['method']}); "
          f"lower bound: {fmt(res['lower'])}; total {res['seconds'] * 1e3:.1f} ms")


def _show_inverse(res: dict) -> None:
    p = res["params"]
    if res["query"] == "max_eps0":
        print(f"Largest local eps0 for central ({p['eps']:g}, {p['delta']:g})-DP with n={p['n']}: "
              f"{res['value']:.6g}")
    else:
        print(f"Smallest n for central ({p['eps']:g}, {p['delta']:g})-DP with eps0={p['eps0']:g}: "
              f"{res['value']}")
    print(f"({res['seconds'] * 1e3:.1f} ms)")


def _cmd_amplify(args) -> None:
    res = _amplify_inverse(args) if args.inverse else _amplify_forward(args)
    if args.json:
        print(json.dumps(res, indent=2))
    elif args.inverse:
        _show_inverse(res)
    else:
        _show_forward(res)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ldpcompress", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("amplify", help="central (eps, delta) of shuffled eps0-LDP reports (S2)")
    a.add_argument("--n", type=number, help="number of users")
    a.add_argument("--eps0", type=number, help="local epsilon of each report")
    a.add_argument("--delta", type=number, help="target delta (asks for eps)")
    a.add_argument("--eps", type=number, help="target eps (asks for delta; target for --inverse)")
    a.add_argument("--k", type=number, help="the randomizer is k-ary randomized response")
    a.add_argument("--delta0", type=number, default=0.0,
                   help="(eps0, delta0)-DP randomizer (FMT21 Thm 3.8)")
    a.add_argument("--inverse", action="store_true",
                   help="with --n: largest eps0; with --eps0: smallest n (S2.6)")
    a.add_argument("--json", action="store_true", help="machine-readable output")
    a.set_defaults(func=_cmd_amplify)
    from . import cli_accounting, cli_frequency, cli_mean, cli_scale
    for module in (cli_accounting, cli_frequency, cli_mean, cli_scale):
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (ValueError, TypeError, ImportError, OSError) as err:
        print(f"ldpcompress: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
