"""CLI commands of the accountant: ``compose`` (docs/theory.md §3) and ``noise`` (docs/theory.md §4)."""
from __future__ import annotations

import math
import os

import numpy as np

from ..core import validate as V
from ..core.lazy import lazy_module
from ..core.locked_files import LOCK_TIMEOUT
from ..core.progress import compute_time, kernel_seconds
from .allocation import add_allocation_options, allocation_kwargs, campaign_event, describe
from .options import (RandomizerArgs, add_accounted_options, randomizer_from_args,
                      report_given)
from .util import (Output, add_sampling_options, count, fmt, nonempty,
                   number, print_table)

__all__ = ["NOISE_EXACT_POINTS", "register"]

# the accounting stack, imported when a command runs (not to build the parser)
A = lazy_module("ldpcompress.accounting.accountant")
E = lazy_module("ldpcompress.accounting.events")
N = lazy_module("ldpcompress.accounting.noise")
P = lazy_module("ldpcompress.accounting.pld")
PA = lazy_module("ldpcompress.accounting.participation")
PL = lazy_module("ldpcompress.accounting.plan")
S = lazy_module("ldpcompress.accounting.state")


NOISE_EXACT_POINTS = 200001  # quadrature grid of noise.laplace_sum_exact_rdp
MAX_ORDER = 1e6  # Renyi orders accepted by ``noise``


def _sampling(args, n: int) -> dict:
    """--gamma / --sample / --relation as the sampled events take them ({} without sampling),
    each checked under its option's name."""
    if args.gamma is not None and args.sample is not None:
        raise ValueError("give --gamma (each user reports with that probability) or --sample "
                         "(a fixed number of users report), not both")
    kw: dict = {}
    if args.gamma is not None:
        kw["gamma"] = PA.participation(args.gamma, "--gamma")
    if args.sample is not None:
        top = n - (args.relation == "add_remove")
        if top < 1:
            raise ValueError("--sample under --relation add_remove needs --n >= 2")
        kw["sample"] = count(args.sample, "--sample", 1, top)
    if args.relation is not None:
        if not kw:
            raise ValueError("--relation needs --gamma or --sample: without participation "
                             "sampling every shuffled round is accounted for substitution")
        kw["relation"] = args.relation
    return kw


def _round_event(args, factory: RandomizerArgs | None):
    """The event of one round named by the options, with its description and params: a
    shuffled round of any eps0-LDP randomizer, of k-RR (--k), or of an oracle (--oracle, --k),
    every user reporting or, with --gamma / --sample, only some of them (docs/theory.md §2.7).
    A new kind of round is one more branch here (and its options in register())."""
    n = V.shuffle_users(args.n, "--n")  # the supported range of a shuffled round, up front
    eps0 = None if args.eps0 is None else V.local_eps0(args.eps0, "--eps0")
    k = count(args.k, "--k", 2, V.MAX_K)
    campaign = allocation_kwargs(args)
    if campaign:  # random allocation (docs/theory.md §2.16)
        oracle = None if factory is None else factory(eps0)
        event = campaign_event(n, eps0, None if factory else k, oracle, campaign)
        params = dict(n=n, eps0=eps0, k=k, oracle=args.oracle, **campaign)
        if factory is not None:
            params.update(factory.params)
        who = oracle.describe() if oracle is not None else (
            f"{k}-RR, eps0={eps0:g}" if k is not None else f"eps0-LDP, eps0={eps0:g}")
        return event, f"{who} reports in {describe(campaign)}", params
    sampling = _sampling(args, n)
    params = dict(n=n, eps0=eps0, k=k, oracle=args.oracle, **sampling)
    who = ""
    if "gamma" in sampling:
        who = f"; each user reports w.p. {sampling['gamma']:g}"
    elif "sample" in sampling:
        who = f"; {sampling['sample']} of the {n} users report"
    if sampling:
        who += f" ({sampling.get('relation', 'substitution').replace('_', '/')})"
    if factory is not None:
        oracle = factory(eps0)
        params.update(factory.params)
        event = (E.SampledOracleShuffledRound(n, oracle, **sampling) if sampling
                 else E.OracleShuffledRound(n, oracle))
        realised = (f"realised eps0 {event.eps0:.6g}" if math.isfinite(oracle.replacement_eps)
                    else "no finite eps0")
        return event, f"{oracle.describe()} reports ({realised}){who}", params
    assert eps0 is not None  # _cmd_compose asks for --eps0 without a randomizer
    if k is None:
        event = (E.SampledShuffledRound(n, eps0, **sampling) if sampling
                 else E.ShuffledRound(n, eps0))
        return event, f"eps0-LDP reports, eps0={eps0:g}{who}", params
    event = (E.SampledKRRShuffledRound(n, eps0, k, **sampling) if sampling
             else E.KRRShuffledRound(n, eps0, k))
    return event, f"{k}-RR reports, eps0={eps0:g}{who}", params


def _answer(acct, delta: float, h: float | None, limit):
    """eps(delta) of the accountant at this query's grid step h (the ledger keeps its own
    setting) and time limit (accounting/plan.py; None: the accountant's default); a query
    without a finite answer raises (and so leaves a ledger unwritten)."""
    if not acct.events:
        raise ValueError("the ledger holds no events; add rounds with --n, --eps0 and --rounds")
    kept = acct.h
    if limit is not None:
        acct.max_seconds = limit
    if h is not None:
        acct.h = h
    try:
        res = acct.epsilon(delta)
    finally:
        acct.h = kept
    if not math.isfinite(res.value):
        raise ValueError(f"no method gives a finite eps: {'; '.join(res.notes)}")
    return res


def _run_query(path, event, rounds: int, delta: float, h, lock_timeout: float, limit):
    """(accountant, result, existed): the rounds composed into the ledger (or a new
    accountant) and the query answered. A ledger is written only after its query succeeded,
    under its lock, so that concurrent appends all land and a failed query (or a retry of one)
    records nothing (accounting/state.py)."""
    if path is None:
        acct = A.Accountant(h=h).compose(event, times=rounds)
        return acct, _answer(acct, delta, h, limit), False
    if event is None:  # a read: the file is replaced atomically, so no lock is needed
        if not os.path.lexists(path):
            raise ValueError(f"--ledger {path}: no such ledger; add rounds with --n, --eps0 and "
                             "--rounds to create it")
        acct = A.Accountant.load(path)
        try:
            return acct, _answer(acct, delta, h, limit), True
        except ValueError as err:
            raise ValueError(f"--ledger {path}: {err}") from None
    with S.ledger(path, A.Accountant, E.EVENTS, lock_timeout, "--lock-timeout", h=h) as acct:
        existed = os.path.lexists(path)
        acct.compose(event, times=rounds)
        res = _answer(acct, delta, h, limit)
    return acct, res, existed


def _ledger_rows(acct) -> list[dict]:
    """The ledger's events as the saved file holds them: name, times, parameters."""
    return [dict(event=x["event"], times=x["times"],
                 params={k: v for k, v in x.items() if k not in ("event", "times")})
            for x in S.to_state(acct)["events"]]


def _shown(value) -> str:
    if isinstance(value, dict):  # a randomizer as the ledger stores it: name and parameters
        params = value.get("params", {})
        inner = ", ".join(f"{k}={_shown(v)}" for k, v in
                          (params.items() if isinstance(params, dict) else params))
        return f"{value.get('randomizer', value.get('oracle', '?'))}({inner})"
    return fmt(value) if isinstance(value, float) else str(value)


def _cmd_compose(args) -> Output:
    args.delta = V.probability_open(args.delta, "--delta")
    path = nonempty(args.ledger, "--ledger")
    h = None if args.h is None else P.check_grid(args.h)
    factory = randomizer_from_args(args, eps_option="--eps0", optional=True)
    needed = ("n", "eps0", "rounds") if factory is None or factory.takes_eps else ("n", "rounds")
    if args.allocation is not None and args.rounds is None:
        args.rounds = 1  # with --allocation, --rounds counts whole campaigns (default one)
    given = [o for o in needed if getattr(args, o) is not None]
    if given and len(given) < len(needed):
        missing = sorted(set(needed) - set(given))
        raise ValueError(f"a round needs --n, --eps0 and --rounds (missing --{', --'.join(missing)})")
    if not given and any(v is not None for v in (args.k, args.oracle, args.gamma, args.sample,
                                                  args.relation, args.allocation)):
        raise ValueError("--k, --oracle, --gamma, --sample, --relation and --allocation "
                         "describe the rounds to add: give --n, --eps0 and --rounds too")
    if not given and path is None:
        raise ValueError("give the rounds (--n, --eps0, --rounds) or a saved --ledger to report")
    event, what, params = None, "", {}
    rounds = 0
    if given:
        rounds = count(args.rounds, "--rounds", 1, A.MAX_ROUNDS)
        event, what, params = _round_event(args, factory)
    lock_timeout = V.nonnegative(args.lock_timeout, "--lock-timeout")
    limit = None if args.max_seconds is None else PL.check_seconds(args.max_seconds,
                                                                   "--max-seconds")
    acct, res, existed = _run_query(path, event, rounds, args.delta, h, lock_timeout, limit)
    params.update(rounds=rounds, delta=args.delta, h=h, ledger=None if path is None else str(path),
                  lock_timeout=None if math.isinf(lock_timeout) else lock_timeout,  # inf: null
                  max_seconds=limit)  # (no limit, as --max-seconds inf)
    report_given(params, args, ("n", "eps0", "k", "oracle", "d", "symmetric", "param", "plugin",
                                "gamma", "sample", "relation", "allocation", "per_device",
                                "scheme", "adaptive"))
    values = {res.method: res.value, **res.others}

    def envelope() -> tuple[dict, dict, dict]:
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
        results = dict(eps=res.value, method=res.method, lower=lower, h=res.h, methods=methods,
                       notes=notes, cost=res.cost, gap_target=res.gap_target,
                       gap_target_met=res.target_met)
        if path is not None:
            results.update(ledger=dict(created=not existed, rounds=acct.rounds,
                                       events=_ledger_rows(acct)))
        return (params, results, dict(total=res.seconds))

    def show() -> None:
        if event is not None and args.allocation is not None:
            print(f"{rounds} x n={params['n']} devices, {what}")
        elif event is not None:
            print(f"{rounds} shuffled rounds of n={params['n']} {what}")
        if path is not None:
            state = "created" if not existed else ("appended to" if event is not None else "read")
            print(f"ledger {path} ({state}): {len(acct.events)} events, {acct.rounds} rounds "
                  "in all")
            for row in _ledger_rows(acct):
                args_text = ", ".join(f"{k}={_shown(v)}" for k, v in row["params"].items())
                print(f"  {row['times']} x {row['event']}({args_text})")
        print(f"delta={args.delta:g}")
        rows = []
        for m in ("exact", "pure", "pld", "rdp", "kov"):
            if m in values:
                mark = "  <- reported" if m == res.method else ""
                rows.append((m.upper(), fmt(values[m]) + mark))
        print_table(rows, ("method", "eps (upper bound)"), rule=False)
        for note in res.notes:  # why a method gave no finite bound (also in --json)
            print(f"note: {note}")
        lower = f"; lower {fmt(res.lower)}" if res.lower is not None else ""
        grid = f", PLD grid step h = {res.h:.3g}" if res.h is not None else ""
        print(f"\neps = {fmt(res.value)} ({res.method.upper()}, the smallest sound bound){lower}"
              f"{grid}; {res.seconds * 1e3:.0f} ms")
        if res.target_met is False and res.gap is not None:
            print(f"gap target missed: eps - lower = {fmt(res.gap)} > "
                  f"{res.gap_target:g} x eps (eps is an upper bound regardless; fix --h to go "
                  "finer)")
    return Output("compose", envelope, show)


def _cmd_noise(args) -> Output:
    n = count(args.n, "--n")
    scale = V.positive_finite(args.scale, "--scale")
    sens = V.positive_finite(args.sensitivity, "--sensitivity")
    orders = np.array(args.orders, dtype=float)
    bad = ~np.isfinite(orders) | (orders <= 1.0) | (orders > MAX_ORDER)
    if bad.any():
        raise ValueError(f"--orders must be numbers in (1, {MAX_ORDER:g}], got "
                         f"{float(orders[bad][0])!r}")
    exact = not args.no_exact
    if exact:  # refuse before any array is built (the library checks again)
        try:
            N.check_laplace_sum_cost(NOISE_EXACT_POINTS, n)
        except ValueError as err:
            raise ValueError(f"{err}; or pass --no-exact for the Gaussian and Laplace-bound "
                             "columns alone") from None
    start, loading = compute_time(), kernel_seconds()
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

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(n=n, scale=scale, sensitivity=sens, orders=orders.tolist(),
                     no_exact=args.no_exact),
                dict(orders=orders.tolist(), gaussian=gauss.tolist(),
                laplace_bound=lap_bound.tolist(),
                laplace_exact=lap_exact.tolist() if exact else None),
                dict(total=compute_time() - start, kernels=kernel_seconds() - loading))

    def show() -> None:
        print(f"RDP of the sum of n={n} noises of scale {scale:g}, sensitivity {sens:g} "
              "(docs/theory.md §4)")
        rows = [(fmt(float(a)), fmt(float(g)), fmt(float(b)),
                 fmt(float(e)) if exact else "skipped (--no-exact)")
                for a, g, b, e in zip(orders, gauss, lap_bound, lap_exact)]
        print_table(rows, ("order", "Gaussian (exact)", "Laplace bound", "Laplace exact"),
                    rule=False)
    return Output("noise", envelope, show)


def register(sub) -> None:
    c = sub.add_parser("compose", help="eps after many shuffled rounds, or of a saved ledger "
                                       "(docs/theory.md §3): the smallest sound bound, named",
                       description="eps after --rounds shuffled rounds of n eps0-LDP, k-RR (--k) "
                       "or any registered randomizer's reports (--oracle NAME with --k, --d, --param): "
                       "the PLD, RDP and KOV bounds "
                       "of the composition, the smallest reported and named. With --ledger FILE "
                       "the rounds are appended to a saved ledger (created if absent; written "
                       "through a symlink to its target, under a lock, atomically, and only once "
                       "the query has succeeded) and the whole ledger is reported; --ledger alone reports it. "
                       "Other events (Gaussian, subsampled Gaussian, DP-SGD passes ...) are "
                       "added to a ledger with the Accountant API.")
    c.add_argument("--n", type=number, help="users per round")
    c.add_argument("--eps0", type=number,
                   help="local epsilon (with --oracle: the oracle's eps parameter)")
    c.add_argument("--rounds", type=number, help="number of rounds (1e4 is fine); with "
                                                 "--allocation, of campaigns (default 1)")
    c.add_argument("--delta", type=number, required=True, help="target delta")
    c.add_argument("--k", type=number, help="k-ary randomized response; with --oracle, the "
                                            "oracle's number of items")
    add_accounted_options(c)
    add_sampling_options(c, "participation sampling: a uniform sample of this many of the n "
                            "users reports in each round")
    add_allocation_options(c)
    c.add_argument("--ledger", default=None, metavar="FILE",
                   help="a saved ledger: the rounds are appended to it (it is created if absent) "
                        "and the whole ledger is reported")
    c.add_argument("--lock-timeout", type=number, default=LOCK_TIMEOUT, metavar="SECONDS",
                   help="with --ledger: how long to wait for another process appending to the "
                        "same ledger (default %(default)g s)")
    c.add_argument("--max-seconds", type=number, default=None, metavar="SECONDS",
                   help="time limit of the query (default 60; inf: none): its cost is "
                        "estimated first; a ledger too costly for full constructions is "
                        "answered with cheaper sound ones, or refused before any work, naming "
                        "the cost")
    c.add_argument("--h", type=number, default=None,
                   help="PLD grid step (default: chosen so the PLD gap is <= 1%% of eps)")
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
    z.set_defaults(func=_cmd_noise)
