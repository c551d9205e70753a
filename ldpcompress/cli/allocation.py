"""CLI options of campaigns with random allocation (docs/theory.md §2.16), shared by
``compose`` and ``amplify``: ``--allocation T``, ``--per-device k``, ``--scheme`` and
``--adaptive``."""
from __future__ import annotations

import argparse

from ..core import validate as V
from ..core.lazy import lazy_module
from .util import count, number

__all__ = ["add_allocation_options", "allocation_kwargs", "campaign_event", "describe"]

AL = lazy_module("ldpcompress.accounting.allocation")


def add_allocation_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("random allocation (docs/theory.md §2.16)")
    g.add_argument("--allocation", type=number, default=None, metavar="T",
                   help="a campaign of T shuffled rounds in which each device reports in "
                        "--per-device of them, chosen secretly (not with --gamma/--sample)")
    g.add_argument("--per-device", type=number, default=None, metavar="K",
                   help="with --allocation: rounds each device reports in (default 1)")
    g.add_argument("--scheme", choices=("distinct", "blocks", "independent"), default=None,
                   help="with --per-device K > 1: K distinct rounds (default), one round in "
                        "each of K consecutive blocks, or K rounds drawn with replacement")
    g.add_argument("--adaptive", action="store_true",
                   help="with --allocation: each round's randomizer (or the item a device "
                        "feeds it) is chosen from earlier rounds")


def allocation_kwargs(args) -> dict:
    """The campaign's options checked under their own names ({} without --allocation)."""
    if args.allocation is None:
        extra = [o for o, v in (("--per-device", args.per_device), ("--scheme", args.scheme),
                                ("--adaptive", args.adaptive or None)) if v is not None]
        if extra:
            raise ValueError(f"{', '.join(extra)} {'describe' if len(extra) > 1 else 'describes'}"
                             " a campaign of random allocation: give --allocation T")
        return {}
    for option, value in (("--gamma", args.gamma), ("--sample", args.sample)):
        if value is not None:
            raise ValueError(f"--allocation and {option} cannot be combined: a campaign with "
                             "random allocation has every device report (in --per-device of "
                             "the --allocation rounds); participation sampling is another way "
                             "of choosing who reports")
    if args.relation == "add_remove":
        raise ValueError("--relation add_remove cannot be combined with --allocation: every "
                         "device reports, so the total number of reports (n or n - 1) reveals "
                         "whether device 1 is present (delta = 1 at every eps); campaigns are "
                         "accounted for substitution")
    rounds = count(args.allocation, "--allocation", 1, AL.MAX_CAMPAIGN_ROUNDS)
    k = 1 if args.per_device is None else count(args.per_device, "--per-device", 1, rounds)
    return dict(rounds=rounds, per_device=k, scheme=args.scheme or "distinct",
                randomizers="adaptive" if args.adaptive else "same")


def campaign_event(n, eps0, k, oracle, campaign: dict):
    """The AllocatedShuffledRounds event of the options (its errors name the API's fields)."""
    n = V.shuffle_users(n, "--n")
    if oracle is not None:
        return AL.AllocatedShuffledRounds(n, oracle=oracle, **campaign)
    return AL.AllocatedShuffledRounds(n, eps0=eps0, k_rr=k, **campaign)


def describe(campaign: dict) -> str:
    k = campaign["per_device"]
    how = "one round" if k == 1 else f"{k} rounds ({campaign['scheme']})"
    adaptive = "; adaptive randomizers" if campaign["randomizers"] == "adaptive" else ""
    return f"a campaign of {campaign['rounds']} rounds, each device in {how}{adaptive}"
