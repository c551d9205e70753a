"""CLI command ``heavy-hitters``: the shuffled prefix tree over an unknown domain
(docs/guide.md, "Heavy hitters over unknown domains"; docs/theory.md §2.17)."""
from __future__ import annotations

from ..core import validate as V
from ..core.progress import compute_time, kernel_seconds
from .util import JSON_HELP, count, emit_json, number, positive, print_table, probability

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


def _cmd_simulate(args) -> None:
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
    start, loading = compute_time(), kernel_seconds()
    res = simulate(counts, n, eps, delta, top=top, rounds=rounds, step=step, keep=keep,
                   alphabet=alphabet, max_len=max_len, oracles=oracles,
                   assignments=assignments, seed=seed)
    drawn = None
    if args.plot is not None:
        from ..plots import plot_heavy_hitters
        drawn = plot_heavy_hitters(res, out=args.plot)
    shown = dict(counts=str(args.counts), n=n, eps=eps, delta=delta, top=top, rounds=rounds,
                 step=step, keep=res.shape.keep, alphabet=args.alphabet,
                 max_len=res.shape.max_len, oracles=oracles or "best",
                 assignments=assignments, seed=seed, plot=args.plot)
    if args.json:
        results = res.as_dict()
        results["recall"] = res.recall(top)
        emit_json("heavy-hitters simulate", shown, results,
                  dict(total=compute_time() - start, kernels=kernel_seconds() - loading))
        return
    p = res.plan
    print(f"Heavy hitters: n = {n:,} simulated devices, {rounds} rounds of {step} symbols, "
          f"{res.shape.keep} survivors per round, k = {res.shape.k} candidate indices")
    print(f"deployed: {p.assignment}, {p.oracle.describe()} (eps0 = {p.chosen.eps0:.4f}, "
          f"{p.oracle.bits_per_report} bits per report)")
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


def register(sub) -> None:
    p = sub.add_parser("heavy-hitters", help="heavy hitters over an unknown domain (prefix tree)",
                       description="The shuffled prefix tree: find the frequent words of a "
                       "domain nobody listed (docs/guide.md, 'Heavy hitters over unknown "
                       "domains').")
    hs = p.add_subparsers(dest="heavy_command", required=True, metavar="STEP",
                          help="simulate: a whole simulated campaign")
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
    s.add_argument("--rounds", type=number, default=6, help="rounds (default 6)")
    s.add_argument("--step", type=number, default=2, help="symbols per round (default 2)")
    s.add_argument("--keep", type=number, help="survivors per round (default max(2 top, 20))")
    s.add_argument("--max-len", type=number, help="longest word (default rounds x step - 1)")
    s.add_argument("--alphabet", default="abcdefghijklmnopqrstuvwxyz'",
                   help="the public symbols, or 'bytes' (UTF-8 bytes; default a-z and ')")
    s.add_argument("--oracles", default="best", metavar="NAME[,NAME]",
                   help="frequency oracles to choose among (default best: every registered)")
    s.add_argument("--assignments", default=",".join(ASSIGNMENTS),
                   help="assignments to certify (default groups,poisson,allocation)")
    s.add_argument("--seed", type=number, default=0, help="simulation seed (default 0)")
    s.add_argument("--plot", metavar="FILE", help="plot estimates beside the truth (png/svg)")
    s.add_argument("--json", action="store_true", help=JSON_HELP)
    s.set_defaults(func=_cmd_simulate)
