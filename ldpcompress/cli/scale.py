"""CLI commands for the server at scale: simulate, encode, aggregate, shuffle (``plot``:
cli/plot.py).
Any registered randomizer (``--oracle NAME`` and its parameters, ``--compressed``,
``--plugin``: see ``randomizers``); its inputs come from ``inputs``."""
from __future__ import annotations

import hashlib
import math
import time

import numpy as np

from ..estimation import postprocess as PP
from ..randomizers.contract import LocalRandomizer
from . import options as O
from .inputs import inputs_of, simulated
from .util import (Output, byte_size, count, nonempty, number, positive_limit, probability,
                   read_domain)
from ..core.items import BAD_LINES

__all__ = ["POSTPROCESS", "output_cost", "register"]

# --postprocess name -> f(estimate, n) (estimation.postprocess); for count estimates
POSTPROCESS = {"clip": lambda est, n: PP.clip_nonnegative(est),
               "simplex": PP.project_simplex, "norm-sub": PP.norm_sub}


def _randomizer_params(args) -> dict:
    """The randomizer options as given (for --json's params)."""
    return dict(oracle=args.oracle, compressed=args.compressed, **args.given_params,
                plugin=list(args.plugin or []))


def _eps(randomizer: LocalRandomizer) -> float | None:
    """The randomizer's eps for --json: None when it has no finite pure eps (a Gaussian)."""
    return randomizer.eps if math.isfinite(randomizer.eps) else None


def _set_results(randomizer: LocalRandomizer, n: int, paths, out) -> dict:
    from ..randomizers import registry
    stored = sum(p.stat().st_size for p in paths)
    return dict(reports=n, files=[str(p) for p in paths], out=str(out),
                randomizer=registry.spec(randomizer), describe=randomizer.describe(),
                eps=_eps(randomizer), kind=randomizer.privacy.value,
                wire_bytes_per_report=randomizer.bits_per_report / 8,
                disk_bytes_per_report=stored / n)


def _coins(args, seed: int):
    """(entropy, manifest's coins) of ``simulate``: --compressed reports come from the batch
    simulation encoder with seeded coins (no privacy: a simulation), unless --client-coins
    asks for the clients' own path (OS CSPRNG coins, 20-40x slower); other randomizers always
    use the client path (it is fast)."""
    from ..core.entropy import SYSTEM, simulation_entropy
    if args.compressed and not args.client_coins:
        # a key of its own, so the coins are independent of the simulated data (--seed)
        coin_seed = int.from_bytes(hashlib.sha256(b"ldpcompress simulate coins %d" % seed)
                                   .digest()[:8], "little")
        return simulation_entropy(coin_seed), "simulated"
    return SYSTEM, "os.urandom"


def _cmd_simulate(args) -> Output:
    from ..scale import writer
    from ..scale.manifest import MAX_SHARDS
    start = time.perf_counter()
    nonempty(args.out, "--out")
    n = count(args.n, "--n")
    seed = count(args.seed, "--seed", 0, 2 ** 63 - 1)
    randomizer = O.randomizer_from_args(args, eps_default=4.0, compressed=True)
    shards = count(min(8, n) if args.shards is None else args.shards, "--shards", 1, MAX_SHARDS)
    if shards > n:
        raise ValueError(f"--shards {shards} is more than the {n} reports (--n)")
    inputs = inputs_of(randomizer)
    entropy, coins = _coins(args, seed)
    chunks, truth = simulated(inputs, n, seed, writer.CHUNK)
    paths = writer.write_items(args.out, randomizer, chunks, n, shards, overwrite=args.overwrite,
                               entropy=entropy, files={inputs.truth_file: truth}, progress=True,
                               info=dict(coins=coins))

    def envelope() -> tuple[dict, dict, dict]:
        params = dict(n=n, shards=shards, seed=seed, out=str(args.out), overwrite=args.overwrite,
                      client_coins=args.client_coins, **_randomizer_params(args))
        return (params,
                dict(_set_results(randomizer, n, paths, args.out), coins=coins),
                dict(total=time.perf_counter() - start))

    def show() -> None:
        print(f"wrote {n:,} reports of {randomizer.describe()} in {len(paths)} files to {args.out} "
              f"with a manifest and {inputs.truth_file} (eps = {randomizer.eps:.4f}, "
              f"{randomizer.privacy.value}; coins {coins})")
    return Output("simulate", envelope, show)


def _cmd_encode(args) -> Output:
    from ..scale.items_csv import count_csv_items_mapped, count_csv_vectors, csv_items, \
        csv_vectors
    from ..scale.manifest import MAX_SHARDS
    from ..scale.writer import write_items
    start = time.perf_counter()
    nonempty(args.csv, "--csv")
    nonempty(args.out, "--out")
    domain = _domain(args)
    if domain is not None and args.k is None:
        args.k = domain.k
    randomizer = O.randomizer_from_args(args, compressed=True)
    shards = count(args.shards, "--shards", 1, MAX_SHARDS)
    inputs = inputs_of(randomizer)
    if inputs.kind == "items":
        if domain is not None and domain.k != inputs.size:
            raise ValueError(f"--domain {args.domain} holds {domain.k} names, not the "
                             f"{inputs.size} items of {randomizer.describe()}")
        # every line checked
        n, mapped = count_csv_items_mapped(args.csv, inputs.size, args.header, domain)
        rows = csv_items(args.csv, inputs.size, args.header, domain)
    else:  # vectors, or real values (one number a line): rows of inputs.size numbers
        if domain is not None:
            raise ValueError(f"--domain names items; {randomizer.describe()} takes "
                             f"{inputs.kind}")
        shape = (-1, inputs.size) if inputs.kind == "vectors" else (-1,)

        def check(chunk):
            return randomizer.check_items(chunk.reshape(shape))

        n, mapped = count_csv_vectors(args.csv, inputs.size, args.header, check), 0
        rows = (c.reshape(shape) for c in csv_vectors(args.csv, inputs.size, args.header))
    if shards > n:
        raise ValueError(f"--shards {shards} is more than the {n} inputs in {args.csv}")
    info = dict(coins="os.urandom", items=domain)
    if args.in_order:
        paths = write_items(args.out, randomizer, rows, n, shards, overwrite=args.overwrite,
                            progress=True, info=info)
    else:
        paths = _encode_shuffled(args.out, randomizer, rows, n, shards, args.overwrite, info)

    def envelope() -> tuple[dict, dict, dict]:
        params = dict(csv=str(args.csv), header=args.header, domain=args.domain, shards=shards,
                      out=str(args.out), overwrite=args.overwrite, catch_all=args.catch_all,
                      in_order=args.in_order,
                      bad_lines=args.bad_lines, **_randomizer_params(args))
        results = _set_results(randomizer, n, paths, args.out)
        if domain is not None:
            results.update(catch_all=mapped if domain.catch_all else None,
                           bad_lines=domain.bad_lines.count,
                           bad_lines_named=[list(b) for b in domain.bad_lines])
        return (params, results, dict(total=time.perf_counter() - start))

    def show() -> None:
        print(f"encoded {n:,} inputs from {args.csv} with {randomizer.describe()} into "
              f"{len(paths)} files in {args.out}")
        _say_domain(domain, mapped, n)
    return Output("encode", envelope, show)


def _encode_shuffled(out, randomizer, rows, n: int, shards: int, overwrite: bool, info):
    """Encode into a hidden directory beside ``out``, then the shuffler step into ``out``
    (emptied first with ``overwrite``): the set never holds the CSV's order."""
    import os
    import shutil
    from pathlib import Path
    from ..scale.output_dir import prepare_output
    from ..scale.shuffle import shuffle_report_set
    from ..scale.writer import write_items
    target = prepare_output(out, overwrite)
    staged = target.parent / f".{target.name}.encoded-{os.urandom(8).hex()}"
    try:
        write_items(staged, randomizer, rows, n, shards, progress=True, info=info)
        return shuffle_report_set(staged, target, shards=shards, progress=True)
    finally:
        shutil.rmtree(Path(staged), ignore_errors=True)


def _say_domain(domain, mapped: int, n: int) -> None:
    """What the domain file's bad lines and the catch-all did (nothing when neither)."""
    if domain is None:
        return
    if domain.bad_lines.count:
        print(f"--domain: {domain.bad_lines.describe()}")
    if domain.catch_all:
        print(f"{mapped:,} of {n:,} inputs ({mapped / n:.2%}) were outside the domain: counted "
              f"in its catch-all item '{domain.names[-1]}' (item {domain.k - 1})")


def _domain(args):
    """The --domain file (one public item name per line; --catch-all, --bad-lines) or None."""
    if args.domain is None:
        if args.catch_all or args.bad_lines != "error":
            raise ValueError("--catch-all and --bad-lines apply to a --domain file: give one")
        return None
    return read_domain(args.domain, catch_all=args.catch_all, bad_lines=args.bad_lines)


# stated cost of the command's own work on n estimates (randomizers/cost.py units: ns of one
# core, measured by bench/server_limits.py and rounded up): intervals, the top 10 shown, each
# value written to --out (CSV) or --json, and --postprocess (a sort)
INTERVALS, TOP, CSV_VALUE, JSON_VALUE, POSTPROCESS_ENTRY = 150.0, 20.0, 7000.0, 3500.0, 600.0
JSON_VALUE_BYTES = 200  # a float in a Python list, then in the JSON text


def output_cost(randomizer: LocalRandomizer, args):
    """The stated cost of what aggregate does with the estimates (every entry: intervals,
    the text, --out and --json), checked with the aggregation's (``budget.Plan.check``)."""
    from ..randomizers.contract import Cost
    from ..randomizers.cost import entries_of
    entries = entries_of(randomizer.summary_spec().shape)
    columns = 3 + (args.postprocess != "none")
    ops = entries * (INTERVALS + TOP + (POSTPROCESS_ENTRY if columns > 3 else 0.0))
    peak = entries * 8 * (6 + 2 * columns)
    if args.out is not None:
        ops += entries * columns * CSV_VALUE
    if args.json:
        ops += entries * columns * JSON_VALUE
        peak += entries * columns * JSON_VALUE_BYTES
    return Cost(ops, peak, "")


def _top(values: np.ndarray, count: int = 10) -> np.ndarray:
    """The indices of the ``count`` largest values, largest first, ties in index order (as a
    stable sort of -values), in O(k): only the entries at or above the count-th are sorted."""
    if values.size <= count:
        return np.argsort(-values, kind="stable")
    cut = np.partition(values, values.size - count)[values.size - count]
    top = np.flatnonzero(values >= cut)
    return top[np.argsort(-values[top], kind="stable")][:count]


def _cmd_aggregate(args) -> Output:
    import sys
    from ..core.limits import format_bytes, format_seconds
    from ..scale import budget, distributed
    from ..core.regular_files import check_output_file
    nonempty(args.out, "--out")
    cluster = O.cluster_limits(args)
    max_seconds = None if args.max_seconds is None else positive_limit(args.max_seconds,
                                                                       "--max-seconds")
    max_memory = None if args.max_memory is None else positive_limit(args.max_memory,
                                                                     "--max-memory")
    level = probability(args.level, "--level")
    domain = _domain(args)
    O.load_plugins(args.plugin)
    expect = O.expected_randomizer(args)
    if args.out is not None:  # before the aggregation, not after it
        check_output_file(args.out, "--out")
    cluster.update(O.cluster_access(args))  # before reading any manifest
    start = time.perf_counter()
    plan = budget.plan(args.reports, expect)
    r = plan.randomizer
    if expect is None and not args.json:
        print(f"aggregate: the report set's randomizer, as its manifest states it (not checked "
              f"against an expected one; --oracle or --expect-ledger sets one): "
              f"{_spec_json(r)}", file=sys.stderr)
    plan = plan.check(max_seconds, max_memory, output_cost(r, args))
    with O.cluster_errors(args.scheduler):
        res = distributed.aggregate(plan, scheduler=args.scheduler, progress=True, **cluster)
    secs = time.perf_counter() - start
    n, est = res["n"], res["estimate"]
    counts = np.dtype(r.summary_spec().dtype).kind in "iu"  # frequency: counts; else a mean
    if domain is not None and domain.k != est.size:
        raise ValueError(f"--domain {args.domain} holds {domain.k} names but the reports' "
                         f"estimates have {est.size} entries ({r.describe()})")
    kept = res.get("domain")
    if domain is not None and kept is not None and domain != kept:
        raise ValueError(f"--domain {args.domain} differs from the item names the report set's "
                         "manifest keeps (same k, other names or order): drop --domain to use "
                         "the set's own names")
    domain = kept if domain is None else domain
    if args.postprocess != "none" and not counts:
        raise ValueError(f"--postprocess applies to estimated counts; {r.describe()} estimates "
                         "a mean")
    low, high = r.intervals(est, n, level)
    cols = {"estimate": est, "low": low, "high": high}
    if args.postprocess != "none":
        cols["adjusted"] = POSTPROCESS[args.postprocess](est, n)
    if args.out:
        _write_estimates(args.out, cols, domain, "item" if counts else "coordinate")

    def envelope() -> tuple[dict, dict, dict]:
        from ..randomizers import registry
        params = dict(reports=[str(x) for x in args.reports], **O.cluster_params(args, cluster),
                      out=args.out, level=level, postprocess=args.postprocess,
                      domain=args.domain, catch_all=args.catch_all, bad_lines=args.bad_lines,
                      plugin=args.plugin or [],
                      expected=None if expect is None else registry.spec(expect),
                      expect_ledger=args.expect_ledger,
                      round=None if args.round is None else int(args.round),
                      max_seconds=plan.limits[0], max_memory=plan.limits[1])
        results = dict(n=n, randomizer=registry.spec(r), describe=r.describe(), eps=_eps(r),
                       expected=plan.expected, kind=r.privacy.value,
                       estimates="counts" if counts else "mean", shards=res["shards"],
                       method=res["method"], auto=res["auto"], cost=_finite(res["cost"]),
                       **{c: v.tolist() for c, v in cols.items()})
        if domain is not None:
            results["names"] = list(domain.names)
        return (params, results, dict(total=secs))

    def show() -> None:
        shown = _top(cols.get("adjusted", est)) if counts else np.arange(min(est.size, 10))
        what = (f"top {len(shown)} items of {est.size}" if counts else "the mean" if est.size == 1
                else f"first {len(shown)} coordinates of the mean of {est.size}")
        print(f"{n:,} reports of {r.describe()} in {res['shards']} shards, {secs:.2f} s "
              f"({res['method']}; stated {format_seconds(plan.seconds)}, "
              f"{format_bytes(plan.cost.peak_bytes)}); {what} with {level:.0%} confidence "
              "intervals:")
        for j in shown:
            name = domain.names[j] if domain is not None else str(j)
            extra = f"  adjusted {cols['adjusted'][j]:>12,.1f}" if "adjusted" in cols else ""
            if counts:
                print(f"  {name:>12} {est[j]:>12,.1f}  [{low[j]:,.1f}, {high[j]:,.1f}]{extra}")
            else:
                print(f"  {name:>12} {est[j]:>12.6f}  [{low[j]:.6f}, {high[j]:.6f}]")
    return Output("aggregate", envelope, show, indent=None)


def _cmd_shuffle(args) -> Output:
    from ..scale.manifest import MAX_SHARDS
    from ..scale.shuffle import shuffle_report_set
    start = time.perf_counter()
    nonempty(args.reports, "REPORTS")
    nonempty(args.out, "OUT")
    shards = count(args.shards, "--shards", 1, MAX_SHARDS)
    O.load_plugins(args.plugin)
    paths = shuffle_report_set(args.reports, args.out, shards=shards, progress=True)
    from ..scale.manifest import read_manifest
    randomizer, listed = read_manifest(paths[0].parent / "manifest.json")
    n = sum(s.rows for s in listed)

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(reports=str(args.reports), out=str(args.out), shards=shards,
                plugin=args.plugin or []),
                _set_results(randomizer, n, paths, args.out),
                dict(total=time.perf_counter() - start))

    def show() -> None:
        print(f"shuffled {n:,} reports of {randomizer.describe()} from {args.reports} into "
              f"{len(paths)} files in {args.out} (a uniform random order from the OS CSPRNG)")
    return Output("shuffle", envelope, show)


def _spec_json(randomizer: LocalRandomizer) -> str:
    import json
    from ..randomizers import registry
    return json.dumps(registry.spec(randomizer), sort_keys=True)


def _finite(cost: dict) -> dict:
    """The cost for --json: an unlimited limit (inf) as None."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in cost.items()}


def _write_estimates(out, cols: dict, domain, index: str) -> None:
    """index[,name],estimate,low,high[,adjusted] as CSV (names quoted by the csv module)."""
    import csv
    k = cols["estimate"].size
    head = [index] + (["name"] if domain is not None else []) + list(cols)
    form = "{:.3f}" if index == "item" else "{:.9g}"
    try:
        with open(out, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(head)
            for j in range(k):
                name = [domain.names[j]] if domain is not None else []
                w.writerow([j] + name + [form.format(cols[c][j]) for c in cols])
    except OSError as err:
        raise ValueError(f"--out {out}: cannot write ({err.strerror or err})") from None


def _writer_options(parser, eps_default: float | None, shards_default: int | None) -> None:
    O.add_randomizer_options(parser, eps_default)
    parser.add_argument("--shards", type=number, default=shards_default,
                        help="number of Parquet files (default: " +
                             ("8, or n if smaller)" if shards_default is None
                              else f"{shards_default})"))
    parser.add_argument("--out", required=True, help="new or empty directory for the report set")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the report set already in --out (only its own files)")


def _domain_options(parser) -> None:
    parser.add_argument("--catch-all", action="store_true",
                        help="add the catch-all item after the --domain names (k = lines + 1): "
                             "inputs outside the domain are counted there, not refused")
    parser.add_argument("--bad-lines", choices=BAD_LINES, default="error",
                        help="bad lines of the --domain file (empty, duplicate, invisible "
                             "characters, not UTF-8): refuse the file naming the first few "
                             "(error, the default), drop them, or drop them and add the "
                             "catch-all item (catch-all); the count is reported")


def register(sub) -> None:
    s = sub.add_parser("simulate", help="write a report set of simulated users (any randomizer)",
                       description="Simulate n users and randomize their inputs with --oracle "
                       "(client coins from the OS CSPRNG; --compressed: 17-byte seed reports from "
                       "the batch simulation encoder, seeded coins, said in the manifest) "
                       "into a report set: Parquet shards, a manifest with digests, and the "
                       "truth. Items: Zipf(1.1) over the k items, their histogram in "
                       "true_counts.npy. Vectors (mean estimation): a fixed unit direction plus "
                       "Gaussian noise, scaled to norm <= 1, their mean in true_mean.npy.")
    s.add_argument("--n", type=number, required=True, help="number of simulated users/reports")
    s.add_argument("--seed", type=number, default=0,
                   help="seed of the simulated data (and of the simulated coins of "
                        "--compressed reports)")
    s.add_argument("--client-coins", action="store_true",
                   help="with --compressed: encode through the clients' own path (OS CSPRNG "
                        "coins, 20-40x slower) instead of the batch simulation encoder")
    _writer_options(s, 4.0, None)
    s.set_defaults(func=_cmd_simulate)
    e = sub.add_parser("encode", help="randomize a CSV of users' inputs into a report set",
                       description="Randomize every input of a CSV file (one per line: an "
                       "item, or for mean estimation the d coordinates of a vector) with "
                       "--oracle (--compressed: 17-byte seed reports) into a report set "
                       "(Parquet shards and a manifest), in a uniform random order (the "
                       "shuffler step) unless --in-order.")
    e.add_argument("--csv", required=True,
                   help="one input per line: an integer in [0, k) (with --domain a name), "
                        "d comma-separated numbers (a vector), or one number (a real value)")
    e.add_argument("--header", action="store_true", help="line 1 is a header, not an input")
    e.add_argument("--domain", help="file of the public item names, one per line (item j = "
                                    "line j+1), fixed in advance, never built from the data: "
                                    "the CSV then holds names (default --k: their number); "
                                    "the names are kept in the manifest")
    _domain_options(e)
    e.add_argument("--in-order", action="store_true",
                   help="write the reports in the CSV's order (default: shuffled into a "
                        "uniform random order, the shuffler step; with --in-order it must run "
                        "elsewhere before the server reads the set: 'ldpcompress shuffle')")
    _writer_options(e, None, 1)
    e.set_defaults(func=_cmd_encode)
    a = sub.add_parser("aggregate", help="estimates of report sets (in memory or on Dask)",
                       description="Aggregate report sets (directories with a manifest) into "
                       "the randomizer's unbiased estimates (item counts, or a mean vector) "
                       "with confidence intervals; every shard is checked against its manifest "
                       "digest first. The server decides: --oracle NAME and its parameters (or "
                       "--expect-ledger FILE --round I) name the randomizer the reports must be "
                       "of, and a set recording another is refused; the stated time and memory "
                       "of the work are checked against --max-seconds and --max-memory before "
                       "any shard is read.")
    a.add_argument("reports", nargs="+", help="report set directories or shards")
    O.add_cluster_options(a, "auto", "'auto' (in this process, unless the speed measured on "
                          "the first shards predicts a local cluster finishes sooner), 'memory', "
                          "'local' or a scheduler address (tls://host:8786; the scheduler and "
                          "workers run pickled code: they must be trusted)")
    O.add_expect_options(a)
    a.add_argument("--max-seconds", type=number, default=None,
                   help="refuse, before reading any shard, a set whose stated time exceeds "
                        "this (default 60; inf: no limit; docs/guide.md section 3)")
    a.add_argument("--max-memory", type=byte_size, default=None, metavar="BYTES",
                   help="refuse, before reading any shard, a set whose stated peak memory "
                        "exceeds this: bytes or 512MiB, 8GiB (default 4GiB; inf: no limit)")
    a.add_argument("--out", help="write item[,name],estimate,low,high[,adjusted] as CSV "
                                 "(a mean: coordinate,estimate,low,high)")
    a.add_argument("--level", type=number, default=0.95,
                   help="confidence level of the per-entry intervals, from the randomizer's "
                        "variance formula (default 0.95)")
    a.add_argument("--postprocess", choices=["none", "clip", "simplex", "norm-sub"],
                   default="none",
                   help="also report adjusted counts: negatives clipped to 0, the closest "
                        "non-negative counts summing to n (simplex), or Norm-Sub (Wang et al. "
                        "2020); the unbiased estimates are kept beside them")
    a.add_argument("--domain", help="file of the public item names, one per line (item j = "
                                    "line j+1): label the output with them (default: the "
                                    "names the set's manifest keeps, if any)")
    _domain_options(a)
    O.add_plugin_option(a)
    a.set_defaults(func=_cmd_aggregate)
    h = sub.add_parser("shuffle", help="rewrite a report set in a uniform random order (the "
                                       "shuffler step)",
                       description="The shuffler step of the shuffle model: rewrite every report "
                       "of REPORTS (a report set, or its shards) as a new report set in OUT (new "
                       "or empty) in a uniformly random order drawn from the OS CSPRNG, across "
                       "shards, in bounded memory (a two-pass scatter into buckets). Nothing is "
                       "written to OUT until the new set is complete and verified (count, "
                       "digests, fingerprint of the reports); the input is never changed. The "
                       "shuffler sees every report: it must be trusted not to leak the input "
                       "order or any metadata (docs/guide.md, 'The shuffler step').")
    h.add_argument("reports", help="the report set directory (or a shard, or its manifest)")
    h.add_argument("out", help="new or empty directory for the shuffled set")
    h.add_argument("--shards", type=number, default=None,
                   help="number of Parquet files of the new set (default: as many as the input)")
    O.add_plugin_option(h)
    h.set_defaults(func=_cmd_shuffle)
