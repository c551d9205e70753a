"""CLI command ``heavy-hitters``: the shuffled prefix tree over an unknown domain
(docs/guide.md, "Heavy hitters over unknown domains"; docs/theory.md §2.17)."""
from __future__ import annotations

import math

from ..core import validate as V
from ..core.progress import compute_time, kernel_seconds
from .options import (add_cluster_options, cluster_access, cluster_errors, cluster_limits,
                      cluster_params)
from .util import Output, count, number, positive, print_table, probability

__all__ = ["register"]

ASSIGNMENTS = ("groups", "poisson", "allocation")


def _names(text, option: str, allowed=None) -> list[str] | None:
    if text is None or text == "best":
        return None
    names = [p.strip() for p in str(text).split(",")]
    if not all(names) or (allowed is not None and any(p not in allowed for p in names)):
        raise ValueError(f"{option} must be a comma-separated list"
                         f"{'' if allowed is None else ' of ' + ', '.join(allowed)}, got {text!r}")
    return names


def _cmd_simulate(args) -> Output:
    n = count(args.n, "--n", 1, V.MAX_SHUFFLE_N)
    if n is None:
        raise ValueError(f"heavy-hitters simulate needs --n (an integer in [1, "
                         f"{V.MAX_SHUFFLE_N}])")
    if args.counts is None:
        raise ValueError("heavy-hitters simulate needs --counts FILE (a word,count CSV)")
    if args.eps is None:
        raise ValueError("heavy-hitters simulate needs --eps (the central eps of the campaign)")
    eps = positive(args.eps, "--eps")
    delta = probability(args.delta, "--delta")
    top = count(args.top, "--top", 1, 10 ** 5)
    rounds = count(args.rounds, "--rounds", 1, 64)
    step = count(args.step, "--step", 1, 8)
    keep = None if args.keep is None else count(args.keep, "--keep", 1, 10 ** 5)
    max_len = None if args.max_len is None else count(args.max_len, "--max-len", 0, 10 ** 4)
    seed = count(args.seed, "--seed", 0, 2 ** 63 - 1)
    assignments = _names(args.assignments, "--assignments", ASSIGNMENTS) or list(ASSIGNMENTS)
    from ..randomizers.catalog import oracle_names
    oracles = _names(args.oracles, "--oracles", oracle_names())
    from ..heavy import Alphabet, simulate
    from ..heavy.counts import read_counts
    alphabet = Alphabet(args.alphabet)
    counts = read_counts(args.counts)
    level = None if args.threshold_level is None else probability(args.threshold_level,
                                                                  "--threshold-level")
    threshold = V.real(args.threshold, "--threshold")
    if not math.isfinite(threshold):
        raise ValueError(f"--threshold must be a finite number of devices, got {threshold}")
    weights = _weights(args.eps0_weights, rounds)
    start, loading = compute_time(), kernel_seconds()
    res = simulate(counts, n, eps, delta, top=top, rounds=rounds, step=step, keep=keep,
                   alphabet=alphabet, max_len=max_len, oracles=oracles,
                   assignments=assignments, seed=seed, threshold_level=level,
                   threshold=threshold, report_sets=args.report_sets,
                   eps0_weights=weights)
    drawn = None
    if args.plot is not None:
        from ..plots import plot_heavy_hitters
        drawn = plot_heavy_hitters(res, out=args.plot)
    shown = dict(counts=str(args.counts), n=n, eps=eps, delta=delta, top=top, rounds=rounds,
                 step=step, keep=res.shape.keep, alphabet=args.alphabet,
                 max_len=res.shape.max_len, oracles=oracles or "best",
                 assignments=assignments, seed=seed, plot=args.plot,
                 threshold_level=level, threshold=threshold, report_sets=args.report_sets,
                 eps0_weights=weights)

    def envelope() -> tuple[dict, dict, dict]:
        results = res.as_dict()
        results["recall"] = res.recall(top)
        return (shown, results,
                dict(total=compute_time() - start, kernels=kernel_seconds() - loading))

    def show() -> None:
        p = res.plan
        print(f"Heavy hitters: n = {n:,} simulated devices, {rounds} rounds of {step} symbols, "
              f"{res.shape.keep} survivors per round, k = {res.shape.k} candidate indices")
        print(f"deployed: {p.assignment}, {p.oracle.describe()} (eps0 = {p.chosen.eps0:.4f}, "
              f"{p.oracle.bits_per_report} bits per report)")
        if len(set(res.eps0)) > 1:
            print("per-round eps0: " + ", ".join(f"{e:.4g}" for e in res.eps0))
        print(f"certified central (eps, delta) = ({p.upper:.4g}, {delta:g}); lower bound "
              f"{'-' if p.lower is None else f'{p.lower:.4g}'}; neighbours: {p.relation}")
        print(f"devices with a word outside the alphabet or longer than {res.shape.max_len}: "
              f"{res.unknown:,} (they report 'other')")
        rows = res.rows()
        print_table(rows[1:], rows[0])
        print(f"top-{top} recall against the simulated truth: {res.recall(top):.3f}")
        if drawn is not None:
            print(f"plot: {args.plot}")
        print(f"({compute_time() - start:.1f} s: accounting {p.seconds:.1f} s, rounds "
              f"{sum(r.client_seconds + r.server_seconds for r in res.rounds):.2f} s)")
    return Output("heavy-hitters simulate", envelope, show)


MAX_WORDS_BYTES = 1 << 30


def _read(path, what: str, limit: int) -> bytes:
    from ..core.regular_files import read_regular
    return read_regular(path, what, limit)


def _campaign(path):
    """The plan of --plan, its bound recomputed from its own oracles (Campaign.certified):
    (campaign, certified central eps)."""
    from ..heavy.campaign import MAX_PLAN_BYTES, Campaign
    c = Campaign.from_json(_read(path, "a heavy-hitter plan", MAX_PLAN_BYTES), f"--plan {path}")
    try:
        return c, c.certified()
    except ValueError as err:
        raise ValueError(f"--plan {path}: {err}") from None


def _round_list(path, campaign):
    from ..heavy.round_sets import MAX_LIST_BYTES
    from ..heavy.rounds import RoundList
    raw = _read(path, "a candidate list", MAX_LIST_BYTES)
    try:
        rl = RoundList.from_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ValueError(f"--list {path}: {err}") from None
    return campaign.check_list(rl, f"--list {path}")


def _aggregate(path, campaign, option: str = "--aggregate"):
    from ..heavy.rounds import RoundAggregate
    agg = RoundAggregate.from_json(_read(path, "a round aggregate", 1 << 30), f"{option} {path}")
    campaign.check_list(agg.list, f"{option} {path}")
    return agg


def _write_text(path, text: str, overwrite: bool, option: str = "--out") -> None:
    """``text`` into the file ``path``, atomically; an existing file only with --overwrite."""
    import os
    from ..core.regular_files import check_output_file
    out = check_output_file(path, option)
    if os.path.lexists(out) and not overwrite:
        raise ValueError(f"{option} {out}: exists (give --overwrite to replace it)")
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, out)
    except OSError as err:
        raise ValueError(f"{option} {out}: cannot write ({err.strerror or err})") from None


def read_words(path) -> list[str]:
    """One device's word per line of a UTF-8 file (the line break removed, nothing else);
    invalid UTF-8 or an empty line is refused naming the line."""
    raw = _read(path, "--words (one word per line, UTF-8)", MAX_WORDS_BYTES)
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    words = []
    for i, line in enumerate(lines, 1):
        line = line[:-1] if line.endswith(b"\r") else line
        try:
            word = line.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"--words {path}, line {i}: not UTF-8 ({err.reason} at byte "
                             f"{err.start})") from None
        if i == 1:
            word = word.lstrip("\ufeff")
        if not word:
            raise ValueError(f"--words {path}, line {i}: empty word")
        words.append(word)
    if not words:
        raise ValueError(f"--words {path}: no word (an empty round writes no report set)")
    return words


def _weights(text, rounds: int) -> list[float] | None:
    """--eps0-weights: ``rounds`` comma-separated numbers > 0, or None when not given."""
    if text is None:
        return None
    try:
        weights = [float(x) for x in str(text).split(",")]
    except ValueError:
        weights = []
    if len(weights) != rounds or not all(0 < x < float("inf") for x in weights):
        raise ValueError(f"--eps0-weights must be {rounds} comma-separated numbers > 0 (one "
                         f"per round), got {text!r}")
    return weights


def _cmd_plan(args) -> Output:
    n = count(args.n, "--n", 1, V.MAX_SHUFFLE_N)
    if n is None or args.eps is None or args.out is None:
        raise ValueError("heavy-hitters plan needs --n, --eps and --out")
    eps = positive(args.eps, "--eps")
    delta = probability(args.delta, "--delta")
    rounds = count(args.rounds, "--rounds", 1, 64)
    step = count(args.step, "--step", 1, 8)
    keep = count(args.keep, "--keep", 1, 10 ** 5)
    max_len = None if args.max_len is None else count(args.max_len, "--max-len", 0, 10 ** 4)
    assignments = _names(args.assignments, "--assignments", ASSIGNMENTS) or list(ASSIGNMENTS)
    from ..randomizers.catalog import oracle_names
    oracles = _names(args.oracles, "--oracles", oracle_names())
    weights = _weights(args.eps0_weights, rounds)
    from ..core.regular_files import check_output_file
    check_output_file(args.out, "--out")
    from ..heavy.deploy import plan_campaign
    start = compute_time()
    c = plan_campaign(n, eps, delta, rounds=rounds, step=step, keep=keep,
                      alphabet=args.alphabet, max_len=max_len, oracles=oracles,
                      assignments=assignments, eps0_weights=weights)
    _write_text(args.out, c.to_json(), args.overwrite)
    body = dict(c.body(), digest=c.digest, out=str(args.out))

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(n=n, eps=eps, delta=delta, rounds=rounds, step=step, keep=keep,
                     max_len=c.shape.max_len, alphabet=args.alphabet,
                     oracles=oracles or "best", assignments=assignments, eps0_weights=weights,
                     out=str(args.out), overwrite=args.overwrite),
                body, dict(total=compute_time() - start))

    def show() -> None:
        o = c.oracle(1)
        print(f"plan {args.out} (digest {c.digest[:16]}...): n = {n:,}, {rounds} rounds of {step} "
              f"symbols, keep {keep}, k = {c.shape.k}, {c.assignment}, {o.describe()} "
              f"({o.bits_per_report} bits per report)")
        if len(set(c.oracles)) > 1:
            print("per-round eps0: " + ", ".join(f"{x.eps:.4g}" for x in c.oracles))
        print(f"certified central (eps, delta) = ({c.upper:.4g}, {delta:g}); lower bound "
              f"{'-' if c.lower is None else f'{c.lower:.4g}'}; neighbours: {c.relation}")
    return Output("heavy-hitters plan", envelope, show)


def _cmd_candidates(args) -> Output:
    if args.plan is None or args.out is None:
        raise ValueError("heavy-hitters candidates needs --plan and --out")
    c, _ = _campaign(args.plan)
    agg = None if args.aggregate is None else _aggregate(args.aggregate, c)
    level = None if args.threshold_level is None else probability(args.threshold_level,
                                                                  "--threshold-level")
    threshold = V.real(args.threshold, "--threshold")
    if not math.isfinite(threshold):
        raise ValueError(f"--threshold must be a finite number of devices, got {threshold}")
    if agg is None and level is not None:
        raise ValueError("--threshold-level needs --aggregate (round 1 lists every block)")
    from ..heavy.deploy import candidates
    rl = candidates(c, agg, level, threshold)
    _write_text(args.out, rl.to_json(), args.overwrite)
    res = dict(round=rl.index, candidates=len(rl.codes), k=rl.k, digest=rl.digest,
               plan=c.digest, out=str(args.out))

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(plan=str(args.plan), aggregate=args.aggregate, threshold_level=level,
                     threshold=threshold, out=str(args.out), overwrite=args.overwrite), res, {})

    def show() -> None:
        print(f"round {rl.index} of {rl.rounds}: {len(rl.codes):,} candidates (k = {rl.k}) -> "
              f"{args.out} (digest {rl.digest[:16]}...)")
    return Output("heavy-hitters candidates", envelope, show)


def _cmd_encode(args) -> Output:
    if args.plan is None or args.list is None or args.words is None or args.out is None:
        raise ValueError("heavy-hitters encode needs --plan, --list, --words and --out")
    c, _ = _campaign(args.plan)
    rl = _round_list(args.list, c)
    words = read_words(args.words)
    shards = count(args.shards, "--shards", 1, 100_000)
    from ..core.entropy import SYSTEM, Entropy
    seed = None if args.simulation_seed is None else count(args.simulation_seed,
                                                           "--simulation-seed", 0, 2 ** 63 - 1)
    entropy = SYSTEM if seed is None else Entropy.seeded_for_simulation(seed)
    from ..heavy.round_sets import write_round_set
    start = compute_time()
    paths, other = write_round_set(words, c, rl, args.out, entropy=entropy,
                                   shards=min(shards, len(words)), overwrite=args.overwrite)
    coins = "simulated (seeded: NO privacy)" if entropy.for_simulation else "os.urandom"
    res = dict(round=rl.index, reports=len(words), other=other, list=rl.digest,
               plan=c.digest, coins=coins, shards=[str(p) for p in paths])

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(plan=str(args.plan), list=str(args.list), words=str(args.words),
                     out=str(args.out), shards=shards, overwrite=args.overwrite,
                     simulation_seed=seed),
                res, dict(total=compute_time() - start))

    def show() -> None:
        print(f"round {rl.index}: {len(words):,} reports of {c.oracle(rl.index).describe()} -> "
              f"{args.out} ({len(paths)} shard(s); coins {coins})")
        print(f"{other:,} device(s) report 'other' (prefix not listed, a symbol outside the "
              f"alphabet, or longer than {rl.max_len} symbols)")
    return Output("heavy-hitters encode", envelope, show)


def _cmd_aggregate(args) -> Output:
    if args.plan is None or args.list is None or not args.reports or args.out is None:
        raise ValueError("heavy-hitters aggregate needs --plan, --list, REPORTS and --out")
    cluster = cluster_limits(args)
    cluster.update(cluster_access(args))  # before reading any file
    c, _ = _campaign(args.plan)
    rl = _round_list(args.list, c)
    level = probability(args.level, "--level")
    top = count(args.top, "--top", 1, 10 ** 5)
    from statistics import NormalDist

    import numpy as np

    from ..heavy.round_sets import read_round_set
    start = compute_time()
    with cluster_errors(args.scheduler):
        agg = read_round_set(args.reports, c, rl, scheduler=args.scheduler, **cluster)
    _write_text(args.out, agg.to_json(), args.overwrite)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    order = np.argsort(-agg.estimates, kind="stable")[:top]
    rows = [dict(candidate=rl.label(int(i)), estimate=float(agg.estimates[i]),
                 low=float(agg.estimates[i] - z * np.sqrt(agg.variances[i])),
                 high=float(agg.estimates[i] + z * np.sqrt(agg.variances[i]))) for i in order]
    res = dict(round=rl.index, reports=agg.reports, list=rl.digest, plan=c.digest,
               digest=agg.digest, out=str(args.out), level=level, top=rows)

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(plan=str(args.plan), list=str(args.list),
                     reports=[str(r) for r in args.reports], **cluster_params(args, cluster),
                     out=str(args.out), overwrite=args.overwrite, level=level, top=top),
                res, dict(total=compute_time() - start))

    def show() -> None:
        print(f"round {rl.index}: {agg.reports:,} reports -> {args.out} (digest "
              f"{agg.digest[:16]}...); the {len(rows)} largest estimates among the reporting "
              f"devices, {level:g} intervals:")
        print_table([[r["candidate"], f"{r['estimate']:,.0f}", f"{r['low']:,.0f}",
                      f"{r['high']:,.0f}"] for r in rows], ["candidate", "estimate", "low", "high"])
    return Output("heavy-hitters aggregate", envelope, show)


def _cmd_shuffle(args) -> Output:
    if args.plan is None or args.list is None or not args.reports or args.out is None:
        raise ValueError("heavy-hitters shuffle needs --plan, --list, REPORTS and --out")
    c, _ = _campaign(args.plan)
    rl = _round_list(args.list, c)
    shards = None if args.shards is None else count(args.shards, "--shards", 1, 100_000)
    from ..heavy.round_sets import shuffle_round_set
    start = compute_time()
    paths = shuffle_round_set(args.reports, c, rl, args.out, shards=shards)

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(plan=str(args.plan), list=str(args.list),
                     reports=[str(r) for r in args.reports], out=str(args.out),
                     shards=shards),
                dict(round=rl.index, list=rl.digest, shards=[str(p) for p in paths]),
                dict(total=compute_time() - start))

    def show() -> None:
        print(f"round {rl.index}: reports shuffled (os.urandom) -> {args.out} "
              f"({len(paths)} shard(s), with the candidate list)")
    return Output("heavy-hitters shuffle", envelope, show)


def _cmd_words(args) -> Output:
    if args.plan is None or not args.aggregates:
        raise ValueError("heavy-hitters words needs --plan and every round's aggregate")
    c, certified = _campaign(args.plan)
    level = probability(args.level, "--level")
    top = count(args.top, "--top", 1, 10 ** 5)
    aggs = [_aggregate(p, c, "aggregate") for p in args.aggregates]
    from ..heavy.deploy import found_words
    words = found_words(c, aggs, level, top)

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(plan=str(args.plan), aggregates=[str(p) for p in args.aggregates],
                     top=top, level=level),
                dict(words=[w.as_dict() for w in words], n=c.n, plan=c.digest,
                     accounting=dict(upper=certified, lower=c.lower, delta=c.delta,
                                     relation=c.relation)), {})

    def show() -> None:
        print(f"words found among n = {c.n:,} devices ({level:g} intervals); certified central "
              f"(eps, delta) = ({certified:.4g}, {c.delta:g}), lower bound "
              f"{'-' if c.lower is None else f'{c.lower:.4g}'}")
        print_table([[str(i), w.word, f"{w.estimate:,.0f}", f"{w.low:,.0f}", f"{w.high:,.0f}"]
                     for i, w in enumerate(words, 1)], ["rank", "word", "estimate", "low", "high"])
    return Output("heavy-hitters words", envelope, show)


_REPLACE_OUT = "replace an existing --out"


def _out_options(p, out_help: str, overwrite_help: str | None = None) -> None:
    """--out, then --overwrite when ``overwrite_help`` is given."""
    p.add_argument("--out", help=out_help)
    if overwrite_help is not None:
        p.add_argument("--overwrite", action="store_true", help=overwrite_help)


def _round_options(p, out_help: str, sets: bool = False,
                   overwrite_help: str | None = None) -> None:
    """The options of a step of round j: [REPORTS], --plan, --list, --out [--overwrite]."""
    if sets:
        p.add_argument("reports", nargs="*", help="round j's report set directories")
    p.add_argument("--plan", help="the campaign's plan file")
    p.add_argument("--list", help="round j's candidate list")
    _out_options(p, out_help, overwrite_help)


def _weights_option(p) -> None:
    p.add_argument("--eps0-weights", metavar="W1,...,WT",
                   help="per-round eps0 proportional to these weights, the largest the "
                        "composed bound certifies (groups or poisson; default: one eps0)")


def _threshold_options(p) -> None:
    p.add_argument("--threshold-level", type=number,
                   help="adaptive threshold: keep candidates whose lower bound at this level "
                        "exceeds --threshold (default: the top --keep)")
    p.add_argument("--threshold", type=number, default=0.0,
                   help="the adaptive threshold, in devices (default 0)")


def _plan_options(p) -> None:
    p.add_argument("--rounds", type=number, default=6, help="rounds (default 6)")
    p.add_argument("--step", type=number, default=2, help="symbols per round (default 2)")
    p.add_argument("--max-len", type=number, help="longest word (default rounds x step - 1)")
    p.add_argument("--alphabet", default="abcdefghijklmnopqrstuvwxyz'",
                   help="the public symbols, or 'bytes' (UTF-8 bytes; default a-z and ')")
    p.add_argument("--oracles", default="best", metavar="NAME[,NAME]",
                   help="frequency oracles to choose among (default best: every registered)")
    p.add_argument("--assignments", default=",".join(ASSIGNMENTS),
                   help="assignments to certify (default groups,poisson,allocation)")


def register(sub) -> None:
    p = sub.add_parser("heavy-hitters", help="heavy hitters over an unknown domain (prefix tree)",
                       description="The shuffled prefix tree: find the frequent words of a "
                       "domain nobody listed (docs/guide.md, 'Heavy hitters over unknown "
                       "domains').")
    hs = p.add_subparsers(dest="heavy_command", required=True, metavar="STEP",
                          help="simulate: a whole simulated campaign; a deployment runs plan, "
                          "then per round candidates, encode (devices), aggregate, and at the "
                          "end words")
    s = hs.add_parser("simulate", help="simulate a whole campaign from a word,count CSV",
                      description="Draw --n devices from a UTF-8 CSV of word,count rows and run "
                      "every round end to end (clients on a seeded simulation source, shuffle, "
                      "server, survivors), then print the words found with estimates, "
                      "intervals, the certified central (eps, delta) and its lower bound.")
    s.add_argument("--counts", help="UTF-8 CSV of word,count rows (a header row is skipped)")
    s.add_argument("--n", type=number, help="simulated devices")
    s.add_argument("--eps", type=number, help="central eps of the whole campaign")
    s.add_argument("--delta", type=number, default=1e-6, help="central delta (default 1e-6)")
    s.add_argument("--top", type=number, default=20, help="words to report (default 20)")
    s.add_argument("--keep", type=number, help="survivors per round (default max(2 top, 20))")
    _plan_options(s)
    _threshold_options(s)
    _weights_option(s)
    s.add_argument("--report-sets", metavar="DIR",
                   help="write each round's reports as a report set in DIR/round-NN and read "
                        "it back (the deployment's path; default: in memory)")
    s.add_argument("--seed", type=number, default=0, help="simulation seed (default 0)")
    s.add_argument("--plot", metavar="FILE", help="plot estimates beside the truth (png/svg)")
    s.set_defaults(func=_cmd_simulate)

    q = hs.add_parser("plan", help="certify a campaign and write its plan file (JSON)",
                      description="Certify a campaign of --n devices at central (--eps, "
                      "--delta) and write the plan every other step reads: alphabet, "
                      "terminator, longest word, rounds, step, keep, each round's oracle and "
                      "eps0, the ledger, and its SHA-256 digest.")
    q.add_argument("--n", type=number, help="devices in the campaign")
    q.add_argument("--eps", type=number, help="central eps of the whole campaign")
    q.add_argument("--delta", type=number, default=1e-6, help="central delta (default 1e-6)")
    q.add_argument("--keep", type=number, default=40, help="survivors per round (default 40)")
    _plan_options(q)
    _weights_option(q)
    _out_options(q, "the plan file to write (JSON)", _REPLACE_OUT)
    q.set_defaults(func=_cmd_plan)

    c = hs.add_parser("candidates", help="write round j's candidate list",
                      description="Round 1's candidate list from --plan, or round j's from "
                      "round j-1's --aggregate: its survivors (the top --keep of the plan, or "
                      "with --threshold-level those whose lower confidence bound exceeds "
                      "--threshold devices) extended by every block of step symbols.")
    c.add_argument("--plan", help="the campaign's plan file")
    c.add_argument("--aggregate", help="round j-1's aggregate (absent: round 1)")
    _threshold_options(c)
    _out_options(c, "the candidate list to write (JSON)", _REPLACE_OUT)
    c.set_defaults(func=_cmd_candidates)

    e = hs.add_parser("encode", help="devices' words for round j -> a report set",
                      description="Each line of --words (UTF-8) is one device's word: mapped "
                      "to its candidate index in --list (a word outside the alphabet, longer "
                      "than max_len or whose prefix is not listed: 'other'), randomized by "
                      "round j's oracle with coins from os.urandom, and written as a report set "
                      "holding the list (candidates.json).")
    _round_options(e, "new or empty directory for the report set")
    e.add_argument("--words", help="UTF-8 file, one device's word per line")
    e.add_argument("--shards", type=number, default=1, help="Parquet files (default 1)")
    e.add_argument("--overwrite", action="store_true",
                   help="replace the report set already in --out (only its own files)")
    e.add_argument("--simulation-seed", type=number,
                   help="SIMULATION ONLY: seeded coins (no privacy), for tests and demos")
    e.set_defaults(func=_cmd_encode)

    a = hs.add_parser("aggregate", help="round j's report set(s) -> its aggregate",
                      description="Aggregate round j's report sets (each must hold --list, "
                      "else refused naming both digests) in this process or on Dask, and "
                      "write the round's estimates and variances (JSON, with a digest).")
    _round_options(a, "the aggregate to write (JSON)", sets=True, overwrite_help=_REPLACE_OUT)
    add_cluster_options(a, "memory", "'memory' (default), 'auto', 'local' or a Dask scheduler "
                        "address (as 'ldpcompress aggregate': tls:// with --tls-ca-file, "
                        "--tls-cert, --tls-key; the scheduler and workers run pickled code: "
                        "they must be trusted)")
    a.add_argument("--level", type=number, default=0.95, help="interval level (default 0.95)")
    a.add_argument("--top", type=number, default=20, help="candidates shown (default 20)")
    a.set_defaults(func=_cmd_aggregate)

    f = hs.add_parser("shuffle", help="the shuffler: round j's set(s) in a random order",
                      description="Rewrite round j's report sets (each must hold --list) in a "
                      "uniform random order (coins from os.urandom) as a new set holding the "
                      "list (like 'ldpcompress shuffle', which does not keep the list).")
    _round_options(f, "new or empty directory for the shuffled set", sets=True)
    f.add_argument("--shards", type=number, help="Parquet files (default: as the input)")
    f.set_defaults(func=_cmd_shuffle)

    w = hs.add_parser("words", help="rank the words found from every round's aggregate",
                      description="The last round's ended candidates, each estimate combined "
                      "over the rounds that held it, ranked with intervals.")
    w.add_argument("aggregates", nargs="*", help="every round's aggregate (JSON)")
    w.add_argument("--plan", help="the campaign's plan file")
    w.add_argument("--top", type=number, default=20, help="words shown (default 20)")
    w.add_argument("--level", type=number, default=0.95, help="interval level (default 0.95)")
    w.set_defaults(func=_cmd_words)
