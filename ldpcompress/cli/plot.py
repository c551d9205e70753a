"""CLI command ``plot``: amplification curves (any eps0-LDP randomizer, k-RR or a frequency
oracle) and estimated counts with confidence intervals (report sets or a simulated run), as a
PNG; drawn by ``ldpcompress.plots`` (the [plot] extra)."""
from __future__ import annotations

import time

import numpy as np

from ..core.numerics import MAX_FIELD
from .options import (add_accounted_options, add_plugin_option, load_plugins, randomizer_from_args,
                      report_given)
from .util import (Output, count, nonempty, number, positive, probability,
                   read_domain)

__all__ = ["register"]


def _amplification(args, plots, delta: float, params: dict) -> dict:
    lo, hi = (count(v, "--n-range") for v in args.n_range)
    if lo > hi:
        raise ValueError(f"--n-range must be LOW HIGH with LOW <= HIGH, got {lo} {hi}")
    points = count(args.points, "--points", 1, 200)
    ns = np.unique(np.round(np.geomspace(lo, hi, points))).astype(np.int64)
    eps0 = positive(args.eps0, "--eps0")
    k = count(args.k, "--k", 2, MAX_FIELD - 1)
    factory, oracle = randomizer_from_args(args, eps_option="--eps0", optional=True), None
    params.update(eps0=eps0, n_range=[lo, hi], points=points, k=k, oracle=args.oracle)
    if factory is not None:
        if not factory.takes_eps:
            raise ValueError(f"--oracle {args.oracle} has no eps parameter: plot amplification "
                             "draws the central eps of a local eps0 (--eps0)")
        oracle = factory(eps0)
        params.update(factory.params)
    return plots.plot_amplification(eps0, ns, delta, args.out, None if oracle else k, oracle)


def _no_randomizer_options(args) -> None:
    """--d, --symmetric and --param build plot amplification's --oracle: refused elsewhere."""
    if args.d is not None or args.symmetric or args.param:
        raise ValueError("--d, --symmetric and --param describe plot amplification's --oracle "
                         "(a report set names its randomizer; a simulated run takes --oracle "
                         "and --k)")


def _frequency_of_report_sets(args, plots, delta: float, level: float, top: int, domain):
    """Estimates of the user's report sets with the randomizer's own confidence intervals;
    the title states the randomizer, n, its local eps and the central (eps, delta) of
    shuffling."""
    from ..accounting import amplification
    from ..randomizers.estimator import normal_quantile
    from ..scale import distributed
    if args.oracle is not None:
        raise ValueError("--oracle is for simulated runs: report sets name their randomizer "
                         "in their manifest")
    _no_randomizer_options(args)
    load_plugins(args.plugin)
    res = distributed.aggregate(args.reports, scheduler="memory", progress=True)
    orc, n, est = res["randomizer"], res["n"], res["estimate"]
    domain = res.get("domain") if domain is None else domain  # the names the manifest keeps
    if domain is not None and domain.k != est.size:
        raise ValueError(f"--domain {args.domain} holds {domain.k} names but the reports have "
                         f"k = {est.size} items")
    low, high = orc.intervals(est, n, level)
    sd = (high - low) / (2 * normal_quantile(level))  # as the oracle's intervals use it
    central = amplification.epsilon(n, delta=delta, oracle=orc, lower=False).value
    title = (f"{orc.describe()}: n = {n:,} reports, local eps = {orc.eps:.3g} "
             f"({orc.privacy.value}); shuffled: central ({central:.3g}, {delta:g})-DP")
    true = _true_counts(args.reports, est.size)
    if true is not None:
        title += "; diamonds: the simulated truth (true_counts.npy)"
    return plots.plot_frequency(est, sd, true=true, out=args.out, title=title, top=top,
                                level=level, names=None if domain is None else domain.names,
                                log=args.log)


def _true_counts(paths, k: int):
    """The summed ``true_counts.npy`` of simulated report sets (written by ``simulate``) when
    every given directory has one, else None. Each file is untrusted: a 1-D array of k
    non-negative integers, read without pickles (ValueError naming the file otherwise)."""
    from pathlib import Path
    total = np.zeros(k, dtype=np.int64)
    for path in paths:
        f = Path(path) / "true_counts.npy"
        if not (Path(path).is_dir() and f.is_file()):
            return None
        try:
            arr = np.load(f, allow_pickle=False)
        except (OSError, ValueError) as err:
            raise ValueError(f"{f}: not a numpy array file ({err})") from None
        if arr.ndim != 1 or arr.shape[0] != k or arr.dtype.kind not in "iu" \
                or (arr.size and int(arr.min()) < 0):
            raise ValueError(f"{f}: expected {k} non-negative integer counts (one per item), "
                             f"got shape {arr.shape}, dtype {arr.dtype}")
        total += arr.astype(np.int64)
    return total if len(paths) else None


def _frequency_simulated(args, plots, delta: float, level: float, top: int, domain,
                         params: dict):
    """The demo's run (simulated users, the largest local eps0 for the target central eps)
    beside the true counts."""
    from ..estimation import demo
    _no_randomizer_options(args)
    load_plugins(args.plugin)
    n = count(args.n, "--n")
    k = count(args.k, "--k", 2, MAX_FIELD - 1)
    if domain is not None and k is not None and domain.k != k:
        raise ValueError(f"--domain {args.domain} holds {domain.k} names, not --k {k}")
    k = k if k is not None else domain.k if domain is not None else 1000
    oracle = args.oracle or "pi-rappor"
    central = positive(1.0 if args.central_eps is None else args.central_eps, "--central-eps")
    params.update(n=n, k=k, central_eps=central, oracle=oracle)
    res = demo.run(n=n, k=k, eps=central, delta=delta, oracle=oracle, quiet=True)
    eps, delta = res["target"]
    title = (f"{res['oracle']} (simulated Zipf data), n = {res['n']:,}, k = {k:,}, local eps0 = "
             f"{res['local_eps']:.3g}; shuffled: central ({eps:g}, {delta:g})-DP")
    return plots.plot_frequency(res["estimate"], np.sqrt(res["variance"]), true=res["true"],
                                out=args.out, title=title, top=top, level=level,
                                names=None if domain is None else domain.names, log=args.log)


def _cmd_plot(args) -> Output:
    from ..core.optional import require
    require("plot", "matplotlib").use("Agg")  # the command writes a file: no window
    from .. import plots
    from ..core.regular_files import check_output_file
    start = time.perf_counter()
    if args.eps is not None:  # the old meaning of --eps here: refused, never reinterpreted
        raise ValueError("--eps means a local eps everywhere (simulate --eps, amplify --eps0 "
                         "for this plot); the central target of 'plot frequency' is now "
                         "--central-eps (it was --eps before)")
    nonempty(args.out, "--out")
    check_output_file(args.out, "--out")
    delta = probability(args.delta, "--delta")
    params = dict(what=args.what, out=str(args.out), delta=delta)
    if args.what == "amplification":
        for option in ("domain", "top", "level", "central_eps"):
            if getattr(args, option) is not None:
                raise ValueError(f"--{option.replace('_', '-')} is for 'plot frequency'")
        if args.log:
            raise ValueError("--log is for 'plot frequency' (amplification is drawn on log "
                             "axes already)")
        if args.reports:
            raise ValueError("report sets (REPORTS) are plotted by 'plot frequency' only")
        data = _amplification(args, plots, delta, params)
    else:
        level = probability(0.95 if args.level is None else args.level, "--level")
        top = count(20 if args.top is None else args.top, "--top", 1, 500)
        domain = None if args.domain is None else read_domain(args.domain)
        params.update(level=level, top=top, domain=args.domain)
        if args.reports:
            params.update(reports=[str(r) for r in args.reports])
            data = _frequency_of_report_sets(args, plots, delta, level, top, domain)
        else:
            data = _frequency_simulated(args, plots, delta, level, top, domain, params)
    # the options of the other kind of plot are refused when given (reported: None), except
    # those it ignores (amplification: --n; frequency: --eps0, --n-range, --points): not shown
    report_given(params, args, ("reports", "k", "oracle", "d", "symmetric", "param",
                                "central_eps", "log", "domain", "top", "level", "plugin"))
    return Output("plot", lambda: (params, dict(data, out=str(args.out)),
                                   dict(total=time.perf_counter() - start)),
                  lambda: print(f"wrote {args.out}"), indent=None)


def register(sub) -> None:
    p = sub.add_parser("plot", help="amplification curves or estimated counts with intervals (PNG)",
                       description="'plot amplification': central eps against n for a local "
                       "eps0: the bounds for any eps0-LDP randomizer, with --k those of k-ary "
                       "randomized response, with --oracle NAME --k K that oracle's own bound, "
                       "and the exact lower bound. 'plot frequency REPORTS': the estimates of "
                       "your report sets with confidence intervals (beside the true counts "
                       "of simulated sets, their true_counts.npy); without REPORTS, a "
                       "simulated demo run beside the true counts. Points where a bound does "
                       "not apply are counted in the legend and explained under the plot. "
                       "Needs the [plot] extra.")
    p.add_argument("what", choices=["amplification", "frequency"], help="which plot")
    p.add_argument("reports", nargs="*",
                   help="frequency: report set directories or shards to plot (default: a "
                        "simulated run)")
    p.add_argument("--eps0", type=number, default=4.0,
                   help="amplification: local eps0 (default 4)")
    p.add_argument("--n-range", type=number, nargs=2, default=[1e3, 1e7],
                   metavar=("LOW", "HIGH"), help="amplification: range of n (default 1e3 1e7)")
    p.add_argument("--points", type=number, default=9,
                   help="amplification: points on the n axis, 1..200 (default 9)")
    p.add_argument("--delta", type=number, default=1e-6, help="central delta (default 1e-6)")
    p.add_argument("--k", type=number,
                   help="amplification: items of k-RR or of --oracle; simulated frequency: "
                        "items (default 1000, or --domain's size)")
    add_accounted_options(p, plugin=False, oracle_help=(
        "amplification: add this randomizer's own bound (any registered name, built with "
        "--eps0, --k, --d, --symmetric, --param); simulated frequency: the frequency oracle "
        "the users run (default pi-rappor)"))
    p.add_argument("--n", type=number, default=100_000,
                   help="simulated frequency: users (default 100,000)")
    p.add_argument("--central-eps", type=number, default=None,
                   help="simulated frequency: target central eps of the shuffled reports "
                        "(default 1; the local eps is the largest it allows)")
    p.add_argument("--eps", type=number, default=None,
                   help="refused: --eps is a local eps elsewhere; the central target here is "
                        "--central-eps")
    p.add_argument("--log", action="store_true",
                   help="frequency: a symmetric-log count axis (the tail and its intervals "
                        "visible beside the largest counts)")
    p.add_argument("--domain", help="frequency: file of the public item names, one per line "
                                    "(item j = line j+1): label the items with them")
    p.add_argument("--top", type=number,
                   help="frequency: how many items to draw, the largest first (default 20)")
    p.add_argument("--level", type=number,
                   help="frequency: confidence level of the intervals (default 0.95)")
    p.add_argument("--out", required=True, help="PNG file to write")
    add_plugin_option(p)
    p.set_defaults(func=_cmd_plot)
