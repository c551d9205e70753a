"""CLI commands of the accountant: ``compose`` (docs/theory.md §3) and ``noise`` (docs/theory.md §4)."""
from __future__ import annotations

import math
import time

import numpy as np

from ..accounting import accountant as A
from ..accounting import events as E
from ..accounting import noise as N
from ..core import validate as V
from ..core.limits import check_bytes
from .util import JSON_HELP, count, emit_json, fmt, number, print_table

__all__ = ["NOISE_EXACT_POINTS", "register"]


NOISE_EXACT_POINTS = 200001  # quadrature grid of noise.laplace_sum_exact_rdp
MAX_ORDER = 1e6  # Renyi orders accepted by ``noise``


def _cmd_compose(args) -> None:
    n = V.shuffle_users(args.n, "--n")  # the supported range of a shuffled round, up front
    args.eps0 = V.local_eps0(args.eps0, "--eps0")
    args.delta = V.probability_open(args.delta, "--delta")
    rounds = count(args.rounds, "--rounds", 1, A.MAX_ROUNDS)
    k = count(args.k, "--k", 2, V.MAX_K)  # None: any eps0-LDP randomizer
    params = dict(n=n, eps0=args.eps0, rounds=rounds, delta=args.delta, k=k, h=args.h)
    if k is None:
        event = E.ShuffledRound(n, args.eps0)
    else:
        event = E.KRRShuffledRound(n, args.eps0, k)
    acct = A.Accountant(h=args.h).compose(event, times=rounds)
    res = acct.epsilon(args.delta)
    values = {res.method: res.value, **res.others}
    if not math.isfinite(res.value):
        raise ValueError(f"no method gives a finite eps: {'; '.join(res.notes)}")
    if args.json:
        # Strict JSON: only the reported eps must be finite (checked above); a method without
        # a finite bound is null, with a note saying why
        notes = list(res.notes)
        methods = {}
        for m, v in values.items():
            if v is not None and not math.isfinite(v):
                notes.append(f"{m}: no finite bound ({v}): null")
                v = None
            methods[m] = v
        lower = res.lower if res.lower is not None and math.isfinite(res.lower) else None
        emit_json("compose", params, dict(eps=res.value, method=res.method, lower=lower,
                                          h=res.h, methods=methods, notes=notes),
                  dict(total=res.seconds))
        return
    kind = f"{event.k}-RR" if k is not None else "eps0-LDP"
    print(f"{rounds} shuffled rounds of n={n} {kind} reports, eps0={args.eps0:g}, "
          f"delta={args.delta:g}")
    rows = []
    for m in ("pld", "rdp", "kov"):
        if m in values:
            mark = "  <- reported" if m == res.method else ""
            rows.append((m.upper(), fmt(values[m]) + mark))
    print_table(rows, ("method", "eps (upper bound)"), rule=False)
    for note in res.notes:  # why a method gave no finite bound (also in --json)
        print(f"note: {note}")
    lower = f"; PLD lower estimate {fmt(res.lower)}" if res.lower is not None else ""
    grid = f", PLD grid step h = {res.h:.3g}" if res.h is not None else ""
    print(f"\neps = {fmt(res.value)} ({res.method.upper()}, the smallest sound bound){lower}"
          f"{grid}; {res.seconds * 1e3:.0f} ms")


def _cmd_noise(args) -> None:
    n = count(args.n, "--n")
    scale = V.positive_finite(args.scale, "--scale")
    sens = V.positive_finite(args.sensitivity, "--sensitivity")
    orders = np.array(args.orders, dtype=float)
    bad = ~np.isfinite(orders) | (orders <= 1.0) | (orders > MAX_ORDER)
    if bad.any():
        raise ValueError(f"--orders must be numbers in (1, {MAX_ORDER:g}], got "
                         f"{float(orders[bad][0])!r}")
    start = time.perf_counter()
    exact = not args.no_exact
    if exact:  # refuse before any array is built (the library checks again at allocation)
        try:
            check_bytes(N.laplace_sum_bytes(NOISE_EXACT_POINTS, n),
                        f"the exact Laplace column (quadrature on {NOISE_EXACT_POINTS} points "
                        "x n terms)", "--n")
        except ValueError as err:
            raise ValueError(f"{err}; or pass --no-exact for the Gaussian and Laplace-bound "
                             "columns alone") from None
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            gauss = N.gaussian_sum_rdp(n, scale, orders, sens)
            lap_bound = N.laplace_sum_rdp(n, scale, orders, sens)
            lap_exact = (N.laplace_sum_exact_rdp(n, scale, orders, sens) if exact
                         else np.full(orders.shape, np.nan))
    except (FloatingPointError, OverflowError, ZeroDivisionError):
        raise ValueError(f"the RDP values overflow for sensitivity {sens:g}, scale {scale:g} "
                         f"and orders up to {orders.max():g}: use smaller --orders or a smaller "
                         "--sensitivity / --scale ratio") from None
    cols = (gauss, lap_bound, lap_exact) if exact else (gauss, lap_bound)
    if not all(np.all(np.isfinite(c)) for c in cols):
        raise ValueError(f"the RDP values are not finite for sensitivity {sens:g} and scale "
                         f"{scale:g}: use a smaller --sensitivity / --scale ratio")
    if args.json:
        emit_json("noise", dict(n=n, scale=scale, sensitivity=sens, orders=orders.tolist()),
                  dict(orders=orders.tolist(), gaussian=gauss.tolist(),
                       laplace_bound=lap_bound.tolist(),
                       laplace_exact=lap_exact.tolist() if exact else None),
                  dict(total=time.perf_counter() - start))
        return
    print(f"RDP of the sum of n={n} noises of scale {scale:g}, sensitivity {sens:g} (docs/theory.md §4)")
    rows = [(fmt(float(a)), fmt(float(g)), fmt(float(b)),
             fmt(float(e)) if exact else "skipped (--no-exact)")
            for a, g, b, e in zip(orders, gauss, lap_bound, lap_exact)]
    print_table(rows, ("order", "Gaussian (exact)", "Laplace bound", "Laplace exact"), rule=False)


def register(sub) -> None:
    c = sub.add_parser("compose", help="eps after many shuffled rounds (docs/theory.md §3): the smallest of the "
                                       "PLD, RDP (and KOV) bounds, naming it",
                       description="eps after --rounds shuffled rounds of n eps0-LDP (or k-RR) "
                       "reports: the PLD, RDP and KOV bounds of the composition, the smallest "
                       "reported and named. For other events use the Accountant API.")
    c.add_argument("--n", type=number, required=True, help="users per round")
    c.add_argument("--eps0", type=number, required=True, help="local epsilon")
    c.add_argument("--rounds", type=number, required=True, help="number of rounds (1e4 is fine)")
    c.add_argument("--delta", type=number, required=True, help="target delta")
    c.add_argument("--k", type=number, help="k-ary randomized response")
    c.add_argument("--h", type=number, default=None,
                   help="PLD grid step (default: chosen so the PLD gap is <= 1%% of eps)")
    c.add_argument("--json", action="store_true", help=JSON_HELP)
    c.set_defaults(func=_cmd_compose)
    z = sub.add_parser("noise", help="RDP of an n-party noisy sum (docs/theory.md §4)",
                       description="Renyi DP of a sum to which each of n parties adds Gaussian "
                       "or Laplace noise of the given scale: the Gaussian's exact curve, a "
                       "Laplace bound and the exact Laplace-sum curve, at each order.")
    z.add_argument("--n", type=number, required=True, help="number of parties")
    z.add_argument("--scale", type=number, required=True, help="sigma (Gaussian) / b (Laplace)")
    z.add_argument("--sensitivity", type=number, default=1.0,
                   help="sensitivity of the summed query (default 1)")
    z.add_argument("--orders", type=number, nargs="+", default=[1.5, 2, 4, 8, 16, 32],
                   help="Renyi orders > 1 (default 1.5 2 4 8 16 32)")
    z.add_argument("--no-exact", action="store_true",
                   help="skip the exact Laplace-sum column (its quadrature needs memory "
                        "growing with --n)")
    z.add_argument("--json", action="store_true", help=JSON_HELP)
    z.set_defaults(func=_cmd_noise)
