"""CLI commands for the server at scale: simulate, encode, aggregate, plot."""
from __future__ import annotations

import csv
import json
import time

import numpy as np

from . import demo
from .cli_util import number
from .pirappor import PIRappor


def _cmd_simulate(args) -> None:
    from .report_files import write_reports
    oracle = PIRappor(int(args.k), args.eps, symmetric=args.symmetric)
    xs = demo.zipf_data(int(args.n), int(args.k), 1.1, args.seed)
    paths = write_reports(args.out, oracle, oracle.randomize_many(xs), args.shards)
    np.save(f"{args.out}/true_counts.npy", np.bincount(xs, minlength=int(args.k)))
    print(f"wrote {int(args.n):,} reports in {len(paths)} files to {args.out} "
          f"(p={oracle.p}, s={oracle.s}, eps={oracle.eps:.4f})")


def _cmd_encode(args) -> None:
    from .report_files import write_reports
    with open(args.csv, newline="") as fh:
        rows = [r for r in csv.reader(fh) if r]
    if rows and not rows[0][0].strip().lstrip("-").isdigit():
        rows = rows[1:]  # header
    try:
        xs = np.array([int(r[0]) for r in rows], dtype=np.int64)
    except ValueError as err:
        raise ValueError(f"{args.csv}: items must be integers in [0, k): {err}") from None
    oracle = PIRappor(int(args.k), args.eps, symmetric=args.symmetric)
    paths = write_reports(args.out, oracle, oracle.randomize_many(xs), args.shards)
    print(f"encoded {xs.size:,} items from {args.csv} into {len(paths)} files in {args.out}")


def _cmd_aggregate(args) -> None:
    from . import distributed
    start = time.perf_counter()
    res = distributed.aggregate(args.reports, oracle=args.oracle, scheduler=args.scheduler)
    secs = time.perf_counter() - start
    est = res["estimate"]
    if args.out:
        np.savetxt(args.out, np.column_stack([np.arange(est.size), est]), delimiter=",",
                   header="item,estimate", comments="", fmt=["%d", "%.3f"])
    if args.json:
        print(json.dumps(dict(n=res["n"], estimate=est.tolist(), seconds=secs)))
        return
    print(f"{res['n']:,} reports, k={est.size}, {secs:.2f} s; top items:")
    for j in np.argsort(-est)[:10]:
        print(f"  {j:>6} {est[j]:>12,.1f}")


def _cmd_plot(args) -> None:
    from . import plots
    if args.what == "amplification":
        lo, hi = args.n_range
        ns = np.unique(np.geomspace(lo, hi, args.points).astype(np.int64))
        data = plots.plot_amplification(args.eps0, ns, args.delta, args.out,
                                        None if args.k is None else int(args.k))
    else:
        res = demo.run(n=int(args.n), k=int(args.k or 1000), quiet=True)
        data = plots.plot_frequency(res["true"], res["estimate"], args.out)
    print(f"wrote {args.out}")
    if args.json:
        print(json.dumps(data))


def register(sub) -> None:
    s = sub.add_parser("simulate", help="write a sharded set of simulated PI-RAPPOR reports")
    s.add_argument("--n", type=number, required=True)
    s.add_argument("--k", type=number, required=True)
    s.add_argument("--eps", type=number, default=4.0)
    s.add_argument("--symmetric", action="store_true")
    s.add_argument("--shards", type=int, default=8)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", required=True)
    s.set_defaults(func=_cmd_simulate)
    e = sub.add_parser("encode", help="randomize a CSV of items (one per row) into report files")
    e.add_argument("--csv", required=True)
    e.add_argument("--k", type=number, required=True)
    e.add_argument("--eps", type=number, required=True)
    e.add_argument("--symmetric", action="store_true")
    e.add_argument("--shards", type=int, default=1)
    e.add_argument("--out", required=True)
    e.set_defaults(func=_cmd_encode)
    a = sub.add_parser("aggregate", help="histogram of report files on Dask")
    a.add_argument("reports", nargs="+", help="report files or directories")
    a.add_argument("--oracle", default="pi-rappor")
    a.add_argument("--scheduler", default="local", help="'local' or a scheduler address")
    a.add_argument("--out", help="write item,estimate as CSV")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=_cmd_aggregate)
    p = sub.add_parser("plot", help="amplification curves or true vs estimated counts (PNG)")
    p.add_argument("what", choices=["amplification", "frequency"])
    p.add_argument("--eps0", type=number, default=4.0)
    p.add_argument("--n-range", type=number, nargs=2, default=[1e3, 1e7])
    p.add_argument("--points", type=int, default=9)
    p.add_argument("--delta", type=number, default=1e-6)
    p.add_argument("--k", type=number)
    p.add_argument("--n", type=number, default=100_000)
    p.add_argument("--out", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_plot)
