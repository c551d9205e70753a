"""CLI commands of the accountant: ``compose`` (S3) and ``noise`` (S4)."""
from __future__ import annotations

import json
import time

import numpy as np

from . import accountant as A
from . import noise as N
from .cli_util import fmt, number, print_table


def _cmd_compose(args) -> None:
    if args.k is None:
        event = A.ShuffledRound(args.n, args.eps0)
    else:
        event = A.KRRShuffledRound(args.n, args.eps0, args.k)
    acct = A.Accountant(h=args.h).compose(event, times=args.rounds)
    rows, out = [], {}
    for method in ("pld", "rdp"):
        start = time.perf_counter()
        res = acct.epsilon(args.delta, method=method)
        secs = time.perf_counter() - start
        out[method] = dict(eps=res.value, lower=res.lower, seconds=secs)
        rows.append((method.upper(), fmt(res.value), fmt(res.lower), f"{secs * 1e3:.1f}"))
    if args.json:
        print(json.dumps(dict(params=vars_of(args), results=out), indent=2))
        return
    kind = f"{args.k}-RR" if args.k is not None else "eps0-LDP"
    print(f"{args.rounds:g} shuffled rounds of n={args.n:g} {kind} reports, eps0={args.eps0:g}, "
          f"delta={args.delta:g}")
    widths = ("method", "eps (upper)", "eps (lower)", "ms")
    print_table(rows, widths, rule=False)


def vars_of(args) -> dict:
    return {k: v for k, v in vars(args).items() if k != "func"}


def _cmd_noise(args) -> None:
    orders = np.array(args.orders, dtype=float)
    n = int(args.n)
    gauss = N.gaussian_sum_rdp(n, args.scale, orders, args.sensitivity)
    lap_bound = N.laplace_sum_rdp(n, args.scale, orders, args.sensitivity)
    lap_exact = N.laplace_sum_exact_rdp(n, args.scale, orders, args.sensitivity)
    if args.json:
        print(json.dumps(dict(orders=orders.tolist(), gaussian=gauss.tolist(),
                              laplace_bound=lap_bound.tolist(), laplace_exact=lap_exact.tolist()),
                         indent=2))
        return
    print(f"RDP of the sum of n={n} noises of scale {args.scale:g}, sensitivity "
          f"{args.sensitivity:g} (S4)")
    rows = [(fmt(float(a)), fmt(float(g)), fmt(float(b)), fmt(float(e)))
            for a, g, b, e in zip(orders, gauss, lap_bound, lap_exact)]
    print_table(rows, ("order", "Gaussian (exact)", "Laplace bound", "Laplace exact"), rule=False)


def register(sub) -> None:
    c = sub.add_parser("compose", help="eps after many shuffled rounds (S3)")
    c.add_argument("--n", type=number, required=True, help="users per round")
    c.add_argument("--eps0", type=number, required=True, help="local epsilon")
    c.add_argument("--rounds", type=int, required=True, help="number of rounds")
    c.add_argument("--delta", type=number, required=True, help="target delta")
    c.add_argument("--k", type=number, help="k-ary randomized response")
    c.add_argument("--h", type=number, default=1e-4, help="PLD grid step")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_cmd_compose)
    z = sub.add_parser("noise", help="RDP of an n-party noisy sum (S4)")
    z.add_argument("--n", type=number, required=True, help="number of parties")
    z.add_argument("--scale", type=number, required=True, help="sigma (Gaussian) / b (Laplace)")
    z.add_argument("--sensitivity", type=number, default=1.0)
    z.add_argument("--orders", type=number, nargs="+", default=[1.5, 2, 4, 8, 16, 32])
    z.add_argument("--json", action="store_true")
    z.set_defaults(func=_cmd_noise)
