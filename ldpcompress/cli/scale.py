"""CLI commands for the server at scale: simulate, encode, aggregate (``plot``: cli/plot.py)."""
from __future__ import annotations

import time

import numpy as np

from ..estimation import demo
from ..estimation import postprocess as PP
from ..randomizers.pirappor import MAX_PRIME, PIRappor
from ..scale.manifest import MAX_SHARDS
from .util import (JSON_HELP, count, emit_json, nonempty, number, positive, probability,
                   read_domain)

__all__ = ["POSTPROCESS", "register"]

# --postprocess name -> f(estimate, n) (estimation.postprocess)
POSTPROCESS = {"clip": lambda est, n: PP.clip_nonnegative(est),
               "simplex": PP.project_simplex, "norm-sub": PP.norm_sub}



def _writer_args(args) -> tuple[PIRappor, int]:
    """The oracle and shard count of simulate/encode, every option checked (naming it)."""
    nonempty(args.out, "--out")
    shards = count(args.shards, "--shards", 1, MAX_SHARDS)
    k = count(args.k, "--k", 2, MAX_PRIME - 1)
    return PIRappor(k, positive(args.eps, "--eps"), symmetric=args.symmetric), shards


def _set_results(oracle: PIRappor, n: int, paths, out) -> dict:
    return dict(reports=n, files=[str(p) for p in paths], out=str(out), p=oracle.p, s=oracle.s,
                eps=oracle.eps, kind=oracle.privacy.value, k=oracle.k)


def _cmd_simulate(args) -> None:
    from ..scale import writer
    start = time.perf_counter()
    n = count(args.n, "--n")
    seed = count(args.seed, "--seed", 0, 2 ** 63 - 1)
    if args.shards is None:
        args.shards = min(8, n)
    oracle, shards = _writer_args(args)
    if shards > n:
        raise ValueError(f"--shards {shards} is more than the {n} reports (--n)")
    chunks = demo.zipf_chunks(n, oracle.k, 1.1, seed, chunk=writer.CHUNK)
    paths, _ = writer.write_items(args.out, oracle, chunks, n, shards, overwrite=args.overwrite,
                                  true_counts=True, progress=True)
    if args.json:
        params = dict(n=n, k=oracle.k, eps=args.eps, symmetric=args.symmetric, shards=shards,
                      seed=seed, out=str(args.out), overwrite=args.overwrite)
        emit_json("simulate", params, _set_results(oracle, n, paths, args.out),
                  dict(total=time.perf_counter() - start))
        return
    print(f"wrote {n:,} reports in {len(paths)} files to {args.out} with a manifest and "
          f"true_counts.npy (p={oracle.p}, s={oracle.s}, eps={oracle.eps:.4f})")


def _cmd_encode(args) -> None:
    from ..scale.items_csv import count_csv_items, csv_items
    from ..scale.writer import write_items
    start = time.perf_counter()
    nonempty(args.csv, "--csv")
    domain = _domain(args)
    if domain is not None and args.k is None:
        args.k = domain.k
    if args.k is None:
        raise ValueError("encode needs --k (the number of items) or --domain (their names)")
    oracle, shards = _writer_args(args)
    if domain is not None and domain.k != oracle.k:
        raise ValueError(f"--domain {args.domain} holds {domain.k} names, not --k {oracle.k}")
    n = count_csv_items(args.csv, oracle.k, args.header, domain)  # first pass: every line
    if shards > n:
        raise ValueError(f"--shards {shards} is more than the {n} items in {args.csv}")
    paths, _ = write_items(args.out, oracle, csv_items(args.csv, oracle.k, args.header, domain),
                           n, shards, overwrite=args.overwrite, progress=True)
    if args.json:
        params = dict(csv=str(args.csv), header=args.header, domain=args.domain, k=oracle.k,
                      eps=args.eps,
                      symmetric=args.symmetric, shards=shards, out=str(args.out),
                      overwrite=args.overwrite)
        emit_json("encode", params, _set_results(oracle, n, paths, args.out),
                  dict(total=time.perf_counter() - start))
        return
    print(f"encoded {n:,} items from {args.csv} into {len(paths)} files in {args.out}")


def _security(args):
    from ..scale.distributed import tls_security
    for option in ("tls_ca_file", "tls_cert", "tls_key"):
        nonempty(getattr(args, option), "--" + option.replace("_", "-"))
    if args.tls_ca_file is None and args.tls_cert is None and args.tls_key is None:
        return None
    if args.tls_ca_file is None or args.tls_cert is None:
        raise ValueError("TLS needs --tls-ca-file and --tls-cert (and --tls-key unless the "
                         "certificate file holds the key)")
    return tls_security(args.tls_ca_file, args.tls_cert, args.tls_key)


def _domain(args):
    """The --domain file (one public item name per line) or None."""
    return None if args.domain is None else read_domain(args.domain)


def _cmd_aggregate(args) -> None:
    from ..scale import distributed
    from ..core.regular_files import check_output_file
    nonempty(args.out, "--out")
    retries = count(args.retries, "--retries", 0, 100)
    worker_timeout = positive(args.worker_timeout, "--worker-timeout")
    level = probability(args.level, "--level")
    domain = _domain(args)
    if args.out is not None:  # before the aggregation, not after it
        check_output_file(args.out, "--out")
    start = time.perf_counter()
    remote = args.scheduler not in ("auto", "memory", "local")
    try:
        res = distributed.aggregate(args.reports, oracle=args.oracle, scheduler=args.scheduler,
                                    security=_security(args), allow_insecure=args.allow_insecure,
                                    retries=retries, progress=True,
                                    worker_timeout=worker_timeout)
    except (OSError, TimeoutError) as err:
        if not remote or isinstance(err, FileNotFoundError):
            raise
        if isinstance(err, distributed.ClusterError):
            raise ValueError(f"--scheduler {args.scheduler}: {err}") from None
        raise ValueError(f"--scheduler {args.scheduler}: cannot use it ({err})") from None
    secs = time.perf_counter() - start
    orc, n, est = res["oracle"], res["n"], res["estimate"]
    if domain is not None and domain.k != orc.k:
        raise ValueError(f"--domain {args.domain} holds {domain.k} names but the reports have "
                         f"k = {orc.k} items")
    low, high = orc.intervals(est, n, level)
    cols = {"estimate": est, "low": low, "high": high}
    if args.postprocess != "none":
        cols["adjusted"] = POSTPROCESS[args.postprocess](est, n)
    if args.out:
        _write_estimates(args.out, cols, domain)
    if args.json:
        params = dict(reports=[str(r) for r in args.reports], oracle=args.oracle,
                      scheduler=args.scheduler, retries=retries, out=args.out, level=level,
                      postprocess=args.postprocess, domain=args.domain)
        results = dict(n=n, k=orc.k, eps=orc.eps, kind=orc.privacy.value, shards=res["shards"],
                       method=res["method"], **{c: v.tolist() for c, v in cols.items()})
        if domain is not None:
            results["names"] = list(domain.names)
        emit_json("aggregate", params, results, dict(total=secs), indent=None)
        return
    print(f"{n:,} reports in {res['shards']} shards, k={est.size}, {secs:.2f} s "
          f"({res['method']}); top items with {level:.0%} confidence intervals:")
    key = cols.get("adjusted", est)
    for j in np.argsort(-key, kind="stable")[:10]:
        name = domain.names[j] if domain is not None else str(j)
        extra = f"  adjusted {cols['adjusted'][j]:>12,.1f}" if "adjusted" in cols else ""
        print(f"  {name:>12} {est[j]:>12,.1f}  [{low[j]:,.1f}, {high[j]:,.1f}]{extra}")


def _write_estimates(out, cols: dict, domain) -> None:
    """item[,name],estimate,low,high[,adjusted] as CSV (names quoted by the csv module)."""
    import csv
    k = cols["estimate"].size
    head = ["item"] + (["name"] if domain is not None else []) + list(cols)
    try:
        with open(out, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(head)
            for j in range(k):
                name = [domain.names[j]] if domain is not None else []
                w.writerow([j] + name + [f"{cols[c][j]:.3f}" for c in cols])
    except OSError as err:
        raise ValueError(f"--out {out}: cannot write ({err.strerror or err})") from None


def _writer_options(parser, eps_default: float | None, shards_default: int | None,
                    k_required: bool = True) -> None:
    parser.add_argument("--k", type=number, required=k_required,
                        help="number of items (0 .. k-1)" + ("" if k_required else
                                                             "; default: --domain's size"))
    parser.add_argument("--eps", type=number, required=eps_default is None, default=eps_default,
                        help="local eps of each PI-RAPPOR report, e.g. from 'amplify --inverse "
                             "--oracle pi-rappor'" + ("" if eps_default is None
                                                      else f" (default {eps_default:g})"))
    parser.add_argument("--shards", type=number, default=shards_default,
                        help="number of Parquet files (default: " +
                             ("8, or n if smaller)" if shards_default is None
                              else f"{shards_default})"))
    parser.add_argument("--symmetric", action="store_true", help="deletion DP (a1 = 1 - a0)")
    parser.add_argument("--out", required=True, help="new or empty directory for the report set")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the report set already in --out (only its own files)")
    parser.add_argument("--json", action="store_true", help=JSON_HELP)


def register(sub) -> None:
    s = sub.add_parser("simulate", help="write a sharded set of simulated PI-RAPPOR reports",
                       description="Simulate n users with Zipf(1.1) items, randomize them with "
                       "PI-RAPPOR (client coins from the OS CSPRNG) and write a report set: "
                       "Parquet shards, a manifest with digests, and true_counts.npy.")
    s.add_argument("--n", type=number, required=True, help="number of simulated users/reports")
    s.add_argument("--seed", type=number, default=0, help="seed of the simulated data only")
    _writer_options(s, 4.0, None)
    s.set_defaults(func=_cmd_simulate)
    e = sub.add_parser("encode", help="randomize a CSV of items (one per line) into report files",
                       description="Randomize every item of a CSV file (one per line) with "
                       "PI-RAPPOR into a report set (Parquet shards and a manifest).")
    e.add_argument("--csv", required=True,
                   help="one item per line: an integer in [0, k), or with --domain a name")
    e.add_argument("--header", action="store_true", help="line 1 is a header, not an item")
    e.add_argument("--domain", help="file of the public item names, one per line (item j = "
                                    "line j+1), fixed in advance, never built from the data: "
                                    "the CSV then holds names")
    _writer_options(e, None, 1, k_required=False)
    e.set_defaults(func=_cmd_encode)
    a = sub.add_parser("aggregate", help="histogram of report sets (in memory or on Dask)",
                       description="Count report sets (directories with a manifest) into "
                       "unbiased item estimates; every shard is checked against its manifest "
                       "digest first. In memory below 5e6 reports, else on Dask.")
    a.add_argument("reports", nargs="+", help="report set directories or shards")
    a.add_argument("--oracle", default="pi-rappor", choices=["pi-rappor"],
                   help="the oracle of the reports (default and only: pi-rappor)")
    a.add_argument("--scheduler", default="auto",
                   help="'auto' (in memory below 5e6 reports, else a local cluster), 'memory', "
                        "'local' or a scheduler address (tls://host:8786; the scheduler and "
                        "workers run pickled code: they must be trusted)")
    a.add_argument("--tls-ca-file", help="CA certificate (PEM) for tls://")
    a.add_argument("--tls-cert", help="client certificate (PEM) for tls://")
    a.add_argument("--tls-key", help="client private key (PEM) for tls://")
    a.add_argument("--allow-insecure", action="store_true",
                   help="allow tcp:// to another host (unencrypted, unauthenticated)")
    a.add_argument("--retries", type=number, default=3,
                   help="resubmissions of a shard whose worker died (default 3)")
    a.add_argument("--worker-timeout", type=number, default=60.0,
                   help="seconds to wait for a live Dask worker, per try (--retries more "
                        "tries), before giving up with an error (default 60)")
    a.add_argument("--out", help="write item[,name],estimate,low,high[,adjusted] as CSV")
    a.add_argument("--level", type=number, default=0.95,
                   help="confidence level of the per-item intervals, from the oracle's "
                        "variance formula (default 0.95)")
    a.add_argument("--postprocess", choices=["none", "clip", "simplex", "norm-sub"],
                   default="none",
                   help="also report adjusted counts: negatives clipped to 0, the closest "
                        "non-negative counts summing to n (simplex), or Norm-Sub (Wang et al. "
                        "2020); the unbiased estimates are kept beside them")
    a.add_argument("--domain", help="file of the public item names, one per line (item j = "
                                    "line j+1): label the output with them")
    a.add_argument("--json", action="store_true", help=JSON_HELP)
    a.set_defaults(func=_cmd_aggregate)
