"""CLI command ``amplify``: one shuffled round's central (eps, delta), its inverse queries, and an
oracle's own bounds (docs/theory.md §2)."""
from __future__ import annotations

import argparse
import decimal
import itertools
import math

from ..core import validate as V
from ..core.progress import compute_time, kernel_seconds
from .allocation import add_allocation_options, allocation_kwargs, campaign_event, describe
from .options import add_accounted_options, randomizer_from_args, report_given
from .util import Output, add_sampling_options, count, fmt, number, print_table

__all__ = ["register"]


def _randomizer_kwargs(args) -> dict:
    """k and delta0 exactly as the forward API takes them (it refuses k with delta0 > 0)."""
    if args.oracle is not None:
        if args.delta0 is not None:
            raise ValueError("--oracle and --delta0 cannot be combined: every oracle is a pure "
                             "eps0-DP randomizer")
        return {}
    if args.k is not None and args.delta0 is not None:
        raise ValueError("--k and --delta0 cannot be combined: k-RR is a pure eps0-DP randomizer")
    return dict(k=count(args.k, "--k", 2, V.MAX_K), delta0=0.0 if args.delta0 is None else args.delta0)


def _sampling_kwargs(args) -> dict:
    """--gamma / --sample / --relation as the forward API takes them (checked there too)."""
    kw = {}
    if args.gamma is not None and args.sample is not None:
        raise ValueError("give --gamma (each user reports with that probability) or --sample "
                         "(a fixed number of users report), not both")
    if args.gamma is not None:
        kw["gamma"] = args.gamma
    if args.sample is not None:
        kw["sample"] = count(args.sample, "--sample")
    if args.relation is not None:
        if not kw:
            raise ValueError("--relation needs --gamma or --sample: without participation "
                             "sampling the report count reveals user 1 under add/remove, and "
                             "every unsampled bound is for substitution")
        kw["relation"] = args.relation
    return kw


def _amplify_forward(args) -> dict:
    factory = randomizer_from_args(args, eps_option="--eps0", optional=True)
    if args.n is None or (args.eps0 is None and (factory is None or factory.takes_eps)):
        raise ValueError("amplify needs --n and --eps0 (or --inverse to search for one of them)")
    if args.eps is not None and args.delta is not None:
        raise ValueError("give --delta (asks for eps) or --eps (asks for delta), not both; "
                         "--inverse takes both as the target")
    kwargs = _randomizer_kwargs(args)
    eps0 = args.eps0
    if factory is not None:  # the randomizer states its own (realised) eps0
        kwargs, eps0 = dict(oracle=factory(args.eps0)), None
    campaign = allocation_kwargs(args)
    if campaign:  # random allocation (docs/theory.md §2.16)
        if kwargs.get("delta0"):
            raise ValueError("--delta0 cannot be combined with --allocation: campaigns are "
                             "accounted for pure eps0-DP randomizers")
        event = campaign_event(args.n, eps0, kwargs.get("k"), kwargs.get("oracle"), campaign)
        from ..accounting import allocation as AL
        fn = AL.delta if args.eps is not None else AL.epsilon
        arg = args.eps if args.eps is not None else args.delta
        if arg is None:
            raise ValueError("give --delta (for eps) or --eps (for delta)")
        res = fn(event, arg, lower=not args.no_lower).as_dict()
        res["params"]["oracle"] = kwargs["oracle"].describe() if "oracle" in kwargs else None
        return res
    kwargs.update(_sampling_kwargs(args))
    lower = not args.no_lower
    from ..accounting import amplification as amp  # the accounting stack: when a query runs
    if args.eps is not None:
        res = amp.delta(args.n, eps0, args.eps, lower=lower, **kwargs)
    elif args.delta is not None:
        res = amp.epsilon(args.n, eps0, args.delta, lower=lower, **kwargs)
    else:
        raise ValueError("give --delta (for eps) or --eps (for delta)")
    return res.as_dict()


def _amplify_inverse(args) -> dict:
    if args.eps is None or args.delta is None:
        raise ValueError("--inverse needs the target --eps and --delta")
    if args.no_lower:
        raise ValueError("--no-lower applies to the forward query only: --inverse computes no "
                         "lower bound")
    if args.n is not None and args.eps0 is not None:
        raise ValueError("--inverse takes --n (finds the largest eps0) or --eps0 (finds the "
                         "smallest n), not both: the other would be ignored")
    kwargs = _randomizer_kwargs(args)
    factory = randomizer_from_args(args, eps_option="--eps0", optional=True)
    campaign = allocation_kwargs(args)
    if campaign:
        return _campaign_inverse(args, kwargs, factory, campaign)
    sampling = _sampling_kwargs(args)
    from ..accounting import inverse
    start = compute_time()
    if args.n is not None:
        if factory is not None:
            if not factory.takes_eps:
                raise ValueError(f"--inverse --n finds the largest eps0, but --oracle "
                                 f"{args.oracle} has no eps parameter")
            value = inverse.max_eps0(args.n, args.eps, args.delta, factory, **sampling)
            kwargs = dict(oracle=args.oracle, **factory.params)
        else:
            value = inverse.max_eps0(args.n, args.eps, args.delta, **kwargs, **sampling)
        what = "max_eps0"
    elif args.eps0 is not None or (factory is not None and not factory.takes_eps):
        if factory is not None:
            value = inverse.min_n(None, args.eps, args.delta, oracle=factory(args.eps0),
                                  **sampling)
            kwargs = dict(oracle=args.oracle, **factory.params)
        else:
            value = inverse.min_n(args.eps0, args.eps, args.delta, **kwargs, **sampling)
        what = "min_n"
    else:
        raise ValueError("--inverse needs --n (to find the largest eps0) or --eps0 (smallest n)")
    n = count(args.n, "--n")
    return dict(query=what, value=value, params=dict(n=n, eps0=args.eps0, eps=args.eps,
                                                     delta=args.delta, **kwargs, **sampling),
                seconds=compute_time() - start)


def _campaign_inverse(args, kwargs: dict, factory, campaign: dict) -> dict:
    """--inverse --allocation: the largest eps0 of a campaign (docs/theory.md §2.16); the
    smallest n only where the campaign is one round at n (one report per device, the same
    randomizer or any eps0-LDP ones)."""
    from ..accounting import allocation as AL
    from ..accounting import inverse
    if kwargs.get("delta0"):
        raise ValueError("--delta0 cannot be combined with --allocation: campaigns are "
                         "accounted for pure eps0-DP randomizers")
    start = compute_time()
    shown = dict(kwargs, **campaign) if factory is None else dict(
        oracle=args.oracle, **factory.params, **campaign)
    if args.n is not None:
        if factory is not None and not factory.takes_eps:
            raise ValueError(f"--inverse --n finds the largest eps0, but --oracle "
                             f"{args.oracle} has no eps parameter")
        value = AL.max_eps0(args.n, campaign["rounds"], args.eps, args.delta,
                            per_device=campaign["per_device"], scheme=campaign["scheme"],
                            randomizers=campaign["randomizers"], k_rr=kwargs.get("k"),
                            oracle_factory=factory)
        what = "max_eps0"
    else:
        simple = campaign["per_device"] == 1 and (campaign["randomizers"] == "same"
                                                  or (factory is None and kwargs.get("k") is None))
        if not simple:
            raise ValueError("--inverse --eps0 (smallest n) with --allocation is answered for "
                             "one report per device with the same randomizer in every round "
                             "(then the campaign is one round of n devices); use --n to find "
                             "the largest eps0 instead")
        if args.eps0 is None and (factory is None or factory.takes_eps):
            raise ValueError("--inverse needs --n (to find the largest eps0) or --eps0 "
                             "(smallest n)")
        if factory is not None:
            value = inverse.min_n(None, args.eps, args.delta, oracle=factory(args.eps0))
        else:
            value = inverse.min_n(args.eps0, args.eps, args.delta, k=kwargs.get("k"))
        what = "min_n"
    n = count(args.n, "--n")
    return dict(query=what, value=value, params=dict(n=n, eps0=args.eps0, eps=args.eps,
                                                     delta=args.delta, **shown),
                seconds=compute_time() - start)


def _show_forward(res: dict) -> None:
    p = res["params"]
    what = "eps" if res["query"] == "epsilon" else "delta"
    given = f"delta={p['delta']:g}" if what == "eps" else f"eps={p['eps']:g}"
    k = f", k={p['k']}" if p["k"] is not None else ""
    if p.get("oracle"):
        eps0 = "none: not pure LDP" if p.get("eps0") is None else f"{p['eps0']:.6g}"
        print(f"Shuffled reports of {p['oracle']} (realised eps0 = {eps0}), "
              f"n={p['n']}, {given}")
    else:
        print(f"Shuffled eps0={p['eps0']:g}-LDP reports, n={p['n']}{k}, {given}")
    if p.get("rounds") is not None:
        print(f"{describe(p)}: accounted as "
              + ("one shuffled round of the n devices (docs/theory.md §2.16)"
                 if p["per_device"] == 1 else "a composition (docs/theory.md §2.16)"))
    if p.get("gamma") is not None:
        print(f"each user reports with probability gamma={p['gamma']:g}; neighbours: "
              f"{p['relation'].replace('_', '/')}")
    elif p.get("sample") is not None:
        print(f"a uniform {p['sample']} of the n users report; neighbours: "
              f"{p['relation'].replace('_', '/')}")
    rows = [(b["label"], fmt(b["value"]) if b["value"] is not None else f"n/a ({b['note']})",
             f"{b['seconds'] * 1e3:.2f}") for b in res["bounds"]]
    print_table(rows, ("bound", what, "ms"))
    for b in res["bounds"]:
        if b["value"] is not None and b["note"]:
            print(f"note: {b['note']}")
    print(f"\nbest upper bound: {what} = {fmt(res['value'])} ({res['method']}); "
          f"lower bound: {fmt(res['lower'])}; total {res['seconds'] * 1e3:.1f} ms")


def _floor_digits(value: float, digits: int = 6) -> str:
    """value rounded *down* to `digits` significant digits: a largest certified eps0 printed
    rounded up would be a value that was not certified."""
    if value <= 0 or not math.isfinite(value):
        return f"{value:g}"
    if value < 1e-5:  # scientific notation (not 300 zeros), still rounded down, exactly
        exact = decimal.Decimal(value)
        step = decimal.Decimal(1).scaleb(exact.adjusted() - digits + 1)
        return f"{exact.quantize(step, rounding=decimal.ROUND_FLOOR):.{digits - 1}e}"
    d = max(0, digits - 1 - math.floor(math.log10(value)))
    return f"{math.floor(value * 10 ** d) / 10 ** d:.{d}f}"


def _show_inverse(res: dict) -> None:
    p = res["params"]
    extra = "".join(f", {key}={p[key]:g}" for key in ("k", "delta0", "gamma", "sample")
                    if p.get(key))
    campaign_keys = ("rounds", "per_device", "scheme", "randomizers")
    if p.get("relation"):
        extra += f", {p['relation'].replace('_', '/')}"
    if p.get("rounds") is not None:
        extra += f", {describe(p)}"
    if p.get("oracle"):
        own = ", ".join(f"{key}={value}" for key, value in p.items() if key not in
                        ("n", "eps0", "eps", "delta", "oracle", "k", "delta0", "gamma",
                         "sample", "relation") + campaign_keys)
        extra = f", oracle {p['oracle']}{f' ({own})' if own else ''}{extra}"
    if res["query"] == "max_eps0":
        print(f"Largest local eps0 for central ({p['eps']:g}, {p['delta']:g})-DP with "
              f"n={p['n']}{extra}: {_floor_digits(res['value'])}")
    else:
        given = ([] if p.get("eps0") is None else [f"eps0={p['eps0']:g}"]) + \
            ([extra[2:]] if extra else [])  # extra starts with ", "
        print(f"Smallest n for central ({p['eps']:g}, {p['delta']:g})-DP with "
              f"{', '.join(given)}: {res['value']}")
    print(f"({res['seconds'] * 1e3:.1f} ms)")


def _check_options(args) -> None:
    """Every numeric option checked under its own name (--n, not the API's n) before any
    query runs; the API checks the same values again."""
    if args.n is not None:
        args.n = V.shuffle_users(args.n, "--n")
    if args.eps0 is not None:
        args.eps0 = V.local_eps0(args.eps0, "--eps0")
    if args.delta is not None:
        args.delta = V.probability_open(args.delta, "--delta")
    if args.eps is not None:
        args.eps = V.nonnegative(args.eps, "--eps")
        if not math.isfinite(args.eps):
            raise ValueError(f"--eps must be finite and >= 0, got {args.eps!r}")
    if args.delta0 is not None:
        args.delta0 = V.probability_closed_open(args.delta0, "--delta0")
    if args.gamma is not None:
        from ..accounting.participation import participation
        args.gamma = participation(args.gamma, "--gamma")
    if args.sample is not None:
        top = V.MAX_N if args.n is None else args.n - (args.relation == "add_remove")
        if top < 1:
            raise ValueError("--sample under --relation add_remove needs --n >= 2")
        args.sample = count(args.sample, "--sample", 1, top)


GRID_OPTIONS = ("n", "eps0", "delta", "eps")
# the options a query's own params may not hold (--json's params report them as given)
SHOWN = ("eps", "k", "oracle", "d", "symmetric", "param", "plugin", "no_lower", "delta0",
         "gamma", "sample", "relation", "allocation", "per_device", "scheme", "adaptive",
         "inverse")
MAX_QUERIES = 10_000  # a grid is answered in one process; this bounds its work, not its privacy


def _queries(args) -> list[argparse.Namespace]:
    """One namespace per point of the grid spanned by the values given to --n, --eps0, --delta
    and --eps (each takes one or more values; all combinations, in the order given), so a table
    of queries pays the start-up (Python, NumPy, Numba's kernels) once instead of once a query."""
    given = {key: getattr(args, key) for key in GRID_OPTIONS if getattr(args, key) is not None}
    size = math.prod(len(v) for v in given.values())
    if size > MAX_QUERIES:
        sizes = " x ".join(f"{len(v)} (--{key})" for key, v in given.items())
        raise ValueError(f"a grid of {sizes} = {size} queries; at most {MAX_QUERIES} in one "
                         "call")
    return [argparse.Namespace(**{**vars(args), **dict(zip(given, values))})
            for values in itertools.product(*given.values())]


def _cell(value) -> str:
    return "-" if value is None else str(value) if isinstance(value, int) else f"{value:.6g}"


def _show_grid(results: list[dict], inverse: bool) -> None:
    """One line a query: the grid's values, then the answer (forward: the best upper bound, its
    method and the lower bound; inverse: the largest eps0 or smallest n)."""
    head: tuple[str, ...]
    cells: list[tuple[str, ...]]
    if inverse:
        what = results[0]["query"]
        head = ("n", "eps0", "eps", "delta", what)
        cells = [(_floor_digits(r["value"]) if what == "max_eps0" else str(r["value"]),)
                 for r in results]
    else:
        what = "eps" if results[0]["query"] == "epsilon" else "delta"
        head = ("n", "eps0", "delta" if what == "eps" else "eps", what, "method", "lower")
        cells = [(fmt(r["value"]), r["method"], fmt(r["lower"])) for r in results]
    given = ("eps", "delta") if inverse else ("delta",) if what == "eps" else ("eps",)
    rows = [(_cell(r["params"]["n"]), _cell(r["params"].get("eps0")),
             *(_cell(r["params"][key]) for key in given), *answer,
             f"{r['seconds'] * 1e3:.2f}") for r, answer in zip(results, cells)]
    print_table(rows, (*head, "ms"))


def _cmd_amplify(args) -> Output:
    queries = _queries(args)
    for one in queries:  # every value checked before any query runs
        _check_options(one)
    loading = kernel_seconds()
    results = [_amplify_inverse(one) if args.inverse else _amplify_forward(one)
               for one in queries]
    loading = kernel_seconds() - loading  # not in the queries' timings
    grid = len(queries) > 1
    total = sum(r["seconds"] for r in results)

    def envelope() -> tuple[dict, dict, dict]:
        if grid:
            params = {key: None if getattr(args, key) is None else  # the checked values
                      list(dict.fromkeys(r["params"].get(key) for r in results))
                      for key in GRID_OPTIONS}
            params.update({key: v for key, v in results[0]["params"].items()
                           if key not in GRID_OPTIONS})
            rows = [{key: v for key, v in r.items() if key != "seconds"} for r in results]
            return report_given(params, args, SHOWN), dict(queries=rows), dict(
                total=total, kernels=loading, queries=[r["seconds"] for r in results])
        res = results[0]
        out = {key: v for key, v in res.items() if key not in ("params", "seconds")}
        return (report_given(dict(res["params"]), args, SHOWN), out,
                dict(total=res["seconds"], kernels=loading))

    def show() -> None:
        if grid:
            _show_grid(results, args.inverse)
            print(f"\n{len(results)} queries in {total:.3f} s")
        elif args.inverse:
            _show_inverse(results[0])
        else:
            _show_forward(results[0])
        if loading >= 5e-4:
            print(f"(and {loading * 1e3:.0f} ms compiling or loading the Numba kernels, once "
                  "per process: not in the timings above)")
    return Output("amplify", envelope, show)


def register(sub) -> None:
    a = sub.add_parser("amplify", help="central (eps, delta) of shuffled eps0-LDP reports (docs/theory.md §2)",
                       description="Central (eps, delta) of n shuffled reports: of any eps0-LDP "
                       "randomizer, of k-ary randomized response (--k) or of any registered "
                       "randomizer (--oracle NAME with its parameters, e.g. --oracle pi-rappor "
                       "--k 1000, --oracle privunit2 --d 100, --oracle gaussian-scalar --param "
                       "lo=0 --param hi=1 --param sigma=2), with every applicable bound, the smallest reported, and an "
                       "exact lower bound. --inverse asks for the largest eps0 or smallest n. "
                       "--n, --eps0, --delta and --eps each take one or more values: every "
                       "combination is answered in one call, one line each (the start-up is "
                       "paid once).")
    a.add_argument("--n", type=number, nargs="+", help="number of users")
    a.add_argument("--eps0", type=number, nargs="+",
                   help="local epsilon of each report (with --oracle: its eps parameter)")
    a.add_argument("--delta", type=number, nargs="+", help="target delta (asks for eps)")
    a.add_argument("--eps", type=number, nargs="+",
                   help="target eps (asks for delta; target for --inverse)")
    a.add_argument("--k", type=number, help="the randomizer is k-ary randomized response; with "
                                           "--oracle, the oracle's number of items")
    add_accounted_options(a)
    a.add_argument("--no-lower", action="store_true",
                   help="skip the exact lower bound (an attack; costs time at large n)")
    a.add_argument("--delta0", type=number, default=None,
                   help="(eps0, delta0)-DP randomizer (FMT21 Thm 3.8); honoured by --inverse")
    add_sampling_options(a, "participation sampling: a uniform sample of this many of the n "
                            "users reports (at most n, or n - 1 under add/remove)")
    add_allocation_options(a)
    a.add_argument("--inverse", action="store_true",
                   help="with --n: largest eps0; with --eps0: smallest n (§2.10)")
    a.set_defaults(func=_cmd_amplify)
