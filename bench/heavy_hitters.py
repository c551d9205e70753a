"""Benchmark of the heavy-hitter job (ldpcompress.heavy; docs/guide.md, "Heavy hitters over
unknown domains").

    python bench/heavy_hitters.py [--n N] [--oracles NAME,...] [--quick]

The population: n devices drawn from wordfreq's English top-50,000 list (wordfreq, an optional
package used by this bench only: pip install wordfreq), words over a-z and the apostrophe (the
others report "other"). 6 rounds of 2 symbols, delta = 1e-6. For each central eps the
campaign of this library (the assignment and oracle plan_rounds certifies and deploys, every
device's report drawn by the oracle's batch encoder, then the server) beside two baselines run
in the same process on the same population and tree:

* local-model PEM with OLH (Wang, Li, Jha, arXiv 1708.06674): public groups, each group's
  devices run OLH at eps0 = the central eps (parallel composition, delta = 0);
* shuffled PEM with public groups and the generic bound: the largest eps0 one shuffled round of
  n // T devices certifies for any eps0-LDP randomizer (inverse.max_eps0 without an oracle),
  with the registered oracle of smallest variance at that eps0.

The baselines' support counts are drawn from each candidate's exact marginal law
(simulate(draw="counts")): OLH's server hashes every report against every candidate.
Printed: top-20 and top-100 recall, the certified eps, the accounting and the rounds' times.
Then the deployment's per-round path at eps = 1, top 20 (the plan reused): every round's
reports written as a report set with its candidate list and read back through scale's
aggregation (simulate(report_sets=DIR)), against the same rounds summarised in memory, both in
this process with the same seed (the same reports, hence the same words: checked).
--quick: n = 1e5, eps = 1 only.
"""
import argparse
import tempfile
import time

from ldpcompress.accounting import inverse
from ldpcompress.heavy import simulate
from ldpcompress.heavy.accounting import AssignmentRow, RoundsPlan
from ldpcompress.heavy.job import TreeShape
from ldpcompress.heavy.prefix import Alphabet
from ldpcompress.planning.error import estimate_error
from ldpcompress.randomizers.catalog import make_oracle, oracle_names

DELTA, ROUNDS, STEP, WORDS = 1e-6, 6, 2, 50_000


def population() -> dict:
    try:
        import wordfreq
    except ImportError:
        raise SystemExit("this bench needs wordfreq: pip install wordfreq") from None
    words = wordfreq.top_n_list("en", WORDS)
    return {w: wordfreq.word_frequency(w, "en") for w in words}


def fixed_plan(n: int, k: int, eps: float, oracle, eps0: float, upper: float, lower,
               assignment: str = "groups") -> RoundsPlan:
    row = AssignmentRow(assignment, oracle, eps0, estimate_error(oracle, n / ROUNDS).se, upper)
    return RoundsPlan(n, ROUNDS, k, eps, DELTA, row, (row,), upper, lower)


def local_pem(n: int, k: int, eps: float) -> RoundsPlan:
    olh = make_oracle("olh", k, eps)
    return fixed_plan(n, k, eps, olh, eps, olh.replacement_eps, None)


def shuffled_pem_generic(n: int, k: int, eps: float) -> RoundsPlan:
    e0 = inverse.max_eps0(n // ROUNDS, eps, DELTA)
    best = min((make_oracle(name, k, e0) for name in oracle_names()),
               key=lambda o: (o.replacement_eps > e0, estimate_error(o, n / ROUNDS).se))
    return fixed_plan(n, k, eps, best, e0, eps, None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10 ** 6)
    ap.add_argument("--oracles", default=None, help="restrict the oracle choice (default all)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--eps", default="0.1,0.25,1")
    args = ap.parse_args()
    n = 10 ** 5 if args.quick else args.n
    epss = [1.0] if args.quick else [float(e) for e in args.eps.split(",")]
    oracles = None if args.oracles is None else args.oracles.split(",")
    counts = population()
    print(f"population: wordfreq English top {WORDS:,}, n = {n:,}, {ROUNDS} rounds x {STEP} "
          f"symbols, delta = {DELTA:g}")
    head = f"{'eps':>5} {'top':>4} {'method':<44} {'recall':>6} {'cert eps':>9} " \
           f"{'lower':>7} {'plan s':>7} {'rounds s':>8} {'max server s':>12} {'bits':>5}"
    for top in (20, 100):
        for eps in epss:
            if top == 100 and eps != 1.0:
                continue
            keep = max(2 * top, 20)
            k = TreeShape.of(Alphabet(), STEP, ROUNDS, keep).k
            print(f"\n{head}")
            t = time.perf_counter()
            ours = simulate(counts, n, eps, DELTA, top=top, rounds=ROUNDS, step=STEP,
                            oracles=oracles, seed=1)
            total = time.perf_counter() - t
            runs = [(f"this library: {ours.plan.assignment}, {ours.plan.oracle.describe()}",
                     ours, total)]
            for label, planner in (("local PEM, OLH, public groups", local_pem),
                                   ("shuffled PEM, public groups, generic", shuffled_pem_generic)):
                t = time.perf_counter()
                p = planner(n, k, eps)
                res = simulate(counts, n, eps, DELTA, top=top, rounds=ROUNDS, step=STEP,
                               plan=p, seed=1, draw="counts")
                runs.append((f"{label} ({p.oracle.describe()})", res,
                             time.perf_counter() - t))
            for label, res, secs in runs:
                rounds_s = sum(r.client_seconds + r.server_seconds for r in res.rounds)
                low = "-" if res.plan.lower is None else f"{res.plan.lower:.3f}"
                print(f"{eps:>5g} {top:>4} {label[:44]:<44} {res.recall(top):>6.3f} "
                      f"{res.plan.upper:>9.4f} {low:>7} {res.plan.seconds:>7.1f} "
                      f"{rounds_s:>8.2f} {max(r.server_seconds for r in res.rounds):>12.3f} "
                      f"{res.plan.oracle.bits_per_report:>5}")
            local = runs[1][1].recall(top)
            ratio = (f"{ours.recall(top) / local:.3g}x local PEM's" if local > 0 else
                     "local PEM found none")
            print(f"this library's whole campaign (accounting, clients, server): {total:.1f} s; "
                  f"recall {ratio}")
            if top == 20 and eps == max(epss):
                per_round(counts, n, eps, top, ours)


def per_round(counts: dict, n: int, eps: float, top: int, ours) -> None:
    """The rounds through report sets (write + read) against in memory, same run and seed."""
    timed = {}
    for label, where in (("in memory", None), ("report sets", "sets")):
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            res = simulate(counts, n, eps, DELTA, top=top, rounds=ROUNDS, step=STEP,
                           plan=ours.plan, seed=1, report_sets=None if where is None else d)
            timed[label] = (res, time.perf_counter() - t)
    (mem, t_mem), (sets, t_sets) = timed["in memory"], timed["report sets"]
    assert [w.word for w in mem.words] == [w.word for w in sets.words], "paths differ"
    r_mem = sum(r.client_seconds + r.server_seconds for r in mem.rounds)
    r_sets = sum(r.client_seconds + r.server_seconds for r in sets.rounds)
    print(f"\nper-round path (eps {eps:g}, top {top}, {ROUNDS} rounds, "
          f"{sum(r.reports for r in sets.rounds):,} reports): rounds in memory {r_mem:.2f} s, "
          f"through report sets (write + read) {r_sets:.2f} s, ratio {r_sets / r_mem:.2f}; "
          f"slowest round's read {max(r.server_seconds for r in sets.rounds):.3f} s; "
          f"whole simulate {t_mem:.1f} s vs {t_sets:.1f} s; recall {sets.recall(top):.3f} "
          f"(same words both ways)")


if __name__ == "__main__":
    main()
