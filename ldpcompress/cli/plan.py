"""CLI command ``plan``: which way to assign a campaign's rounds (public groups, Poisson 1/T,
random allocation) and, with ``--oracle best``, which frequency oracle, each at the largest
eps0 its own bound certifies, ranked by the standard error it buys (docs/guide.md, "Planning a
campaign"; docs/theory.md §2.16)."""
from __future__ import annotations

import argparse

from ..core import validate as V
from ..core.progress import compute_time, kernel_seconds
from .options import (add_oracle_option, add_oracle_parameters, add_plugin_option,
                      randomizer_from_args)
from .util import (Output, count, nonempty, number, positive, print_table,
                   probability)

__all__ = ["register"]

MAX_ROUNDS = 10 ** 5  # as planning.campaign.MAX_PLAN_ROUNDS (not imported to build the parser)
ASSIGNMENTS = ("groups", "poisson", "allocation")


def _int_list(text, option: str, low: int, high: int) -> list[int]:
    """'6,30' (or one number) as integers in [low, high], each checked naming the option."""
    parts = [p for p in str(text).split(",")]
    if not parts or any(not p.strip() for p in parts):
        raise ValueError(f"{option} must be a comma-separated list of integers in [{low}, "
                         f"{high}], got {text!r}")
    out = []
    for p in parts:
        try:
            value = number(p)
        except Exception:
            raise ValueError(f"{option} must be a comma-separated list of integers in [{low}, "
                             f"{high}], got {text!r}") from None
        out.append(count(value, option, low, high))
    return sorted(set(out))


def _assignments(text) -> list[str]:
    names = [p.strip() for p in str(text).split(",")]
    bad = [p for p in names if p not in ASSIGNMENTS]
    if bad or not names:
        raise ValueError(f"--assignments must be a comma-separated list of {', '.join(ASSIGNMENTS)}"
                         f", got {text!r}")
    return names


def _family(args) -> tuple[str, dict]:
    """(registry name or 'best', constructor parameters other than eps) of --oracle."""
    factory = randomizer_from_args(args, eps_option="--eps0", best=True)
    if not factory.takes_eps:
        raise ValueError(f"--oracle {args.oracle} has no eps parameter: the planner chooses "
                         "each randomizer's eps")
    return factory.name, dict(factory.params)


def _cmd_plan(args) -> Output:
    if args.eps is not None:
        raise ValueError("--eps is the local eps elsewhere; the planner chooses it: give the "
                         "central target as --central-eps")
    if args.central_eps is None:
        raise ValueError("plan needs --central-eps (the central eps of the whole campaign)")
    n = count(args.n, "--n", 1, V.MAX_SHUFFLE_N)
    if n is None:
        raise ValueError(f"plan needs --n (devices, an integer in [1, {V.MAX_SHUFFLE_N}])")
    eps = positive(args.central_eps, "--central-eps")
    delta = probability(args.delta, "--delta")
    rounds = _int_list(args.rounds, "--rounds", 1, min(MAX_ROUNDS, n))
    per_device = _int_list(args.per_device, "--per-device", 1, max(rounds))
    assignments = _assignments(args.assignments)
    tol = positive(args.tol, "--tol")
    nonempty(args.plot, "--plot")
    name, params = _family(args)
    from ..planning import best_oracle, plan  # the accounting stack: when the command runs
    start, loading = compute_time(), kernel_seconds()
    memo: dict = {}
    ranking = None
    if name == "best":
        ranking = best_oracle(params["k"], n, eps, delta, rounds=rounds[0],
                              server_time=not args.no_server_time, memo=memo)
    res = plan(n, rounds, eps, delta, name, params=params, assignments=assignments,
               per_device=per_device, lower=not args.no_lower, tol=tol, memo=memo)
    drawn = None
    if args.plot is not None:
        from ..plots import plot_plan
        drawn = plot_plan(res, out=args.plot)
    shown = dict(n=n, rounds=rounds, central_eps=eps, delta=delta, oracle=name, params=params,
                 assignments=assignments, per_device=per_device, tol=tol, plot=args.plot,
                 no_lower=args.no_lower, no_server_time=args.no_server_time,
                 plugin=list(args.plugin or []))

    def envelope() -> tuple[dict, dict, dict]:
        results = dict(plan=res.as_dict(), oracles=None if ranking is None else ranking.as_dict())
        return (shown, results, dict(total=compute_time() - start,
                kernels=kernel_seconds() - loading))

    def show() -> None:
        print(f"Planning a campaign: n = {n:,} devices, {res.family}"
              f"{'' if name == 'best' else ' ' + str(params)}, central ({eps:g}, {delta:g})")
        if ranking is not None:
            where = ("one round of all n devices" if rounds[0] == 1 else
                     f"random allocation over {rounds[0]} rounds: one round of all n devices; "
                     f"errors of one round, {n / rounds[0]:,.6g} reports")
            print(f"\nfrequency oracles on k = {params['k']} items ({where}), by the variance of "
                  "one count:")
            table = ranking.rows()
            print_table(table[1:], table[0])
            for oracle, why in ranking.skipped.items():
                print(f"  {oracle}: not certified ({why})")
        for t in res.rounds:
            table = res.table(t)
            print(f"\nT = {t} round{'s' if t > 1 else ''}:")
            print_table(table[1:], table[0])
            best = res.deploy(t)
            groups = [r for r in res.rows if r.rounds == t and r.assignment == "groups"]
            gain = (f" ({groups[0].error.scaled_se / best.error.scaled_se:.2f}x smaller than "
                    "public groups)" if groups and best.assignment != "groups" else "")
            print(f"deploy: {best.label} at eps0 = {best.eps0:.4f}, SE of one {best.error.what} "
                  f"per round {best.error.se:.4g}{gain}")
        for what, why in res.skipped.items():
            print(f"not planned: {what}: {why}")
        if drawn is not None:
            print(f"plot: {args.plot}")
        print(f"({compute_time() - start:.1f} s, and {kernel_seconds() - loading:.1f} s loading "
              "or compiling kernels)")
    return Output("plan", envelope, show)


def register(sub) -> None:
    p = sub.add_parser(
        "plan", help="plan a campaign: assignment of rounds and oracle at the largest eps0",
        description="For n devices, T rounds and a central (eps, delta): each way of "
        "assigning devices to rounds (public groups of n/T devices; Poisson participation at "
        "1/T composed T times; random allocation, each device in --per-device secretly chosen "
        "rounds) at the largest eps0 its own bound certifies, the standard error of one "
        "round's estimates, the certified eps and an exact attack's eps beside it, and which to "
        "deploy. --oracle best ranks every registered frequency oracle first "
        "(docs/guide.md, 'Planning a campaign').")
    p.add_argument("--n", type=number, help="devices in the campaign")
    p.add_argument("--rounds", default="1", metavar="T[,T...]",
                   help="rounds of the campaign, one or several (e.g. 6,30; default 1)")
    p.add_argument("--central-eps", type=number, help="central eps of the whole campaign")
    p.add_argument("--delta", type=number, default=1e-6, help="central delta (default 1e-6)")
    p.add_argument("--eps", type=number, help=argparse.SUPPRESS)  # refused: see _cmd_plan
    add_oracle_option(p, "the randomizer by registered name (default pi-rappor), its eps "
                      "chosen here, or 'best': every registered frequency oracle on --k items",
                      default="pi-rappor")
    p.add_argument("--k", type=number, help="its number of items")
    add_oracle_parameters(p, "its dimension (privunit2)", "its symmetric variant",
                          "any other constructor parameter (repeatable)")
    add_plugin_option(p)
    p.add_argument("--assignments", default=",".join(ASSIGNMENTS), metavar="LIST",
                   help="assignments to plan, among groups, poisson, allocation (default all)")
    p.add_argument("--per-device", default="1", metavar="K[,K...]",
                   help="reports per device tried with allocation (default 1; K > 1: one "
                        "round in each of K blocks)")
    p.add_argument("--tol", type=number, default=1e-3,
                   help="width of the composed searches' last bracket in eps0 (Poisson, K > 1; "
                        "default 1e-3)")
    p.add_argument("--no-lower", action="store_true", help="skip the attacks (lower bounds)")
    p.add_argument("--no-server-time", action="store_true",
                   help="with --oracle best: do not measure the servers' summarising time")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="also draw the SE against T of each assignment to FILE (needs the "
                        "[plot] extra)")
    p.set_defaults(func=_cmd_plan)
