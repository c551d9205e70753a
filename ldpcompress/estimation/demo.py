"""End-to-end demo (the main job): n users with Zipf(1.1) data over k items report through a
frequency oracle whose local eps0 is the largest that shuffling turns into the target central
(eps, delta) (docs/theory.md §2.10); the shuffled reports are aggregated into a histogram."""
from __future__ import annotations

import contextlib
import functools
import time

import numpy as np

from ..accounting import amplification, blanket, inverse
from ..accounting.solve import largest_feasible
from ..core import validate as V
from ..core.chunks import spans
from ..core.entropy import SYSTEM
from ..core.limits import array_bytes, check_bytes, in_command_line
from ..core.numerics import EXP_MAX
from ..core.progress import JitClock, bar
from ..randomizers.catalog import make_oracle, oracle_class

__all__ = ["zipf_data", "zipf_chunks", "DEMO_BYTES_PER_USER", "COMPILE_HINT", "run", "show"]


# what the first run's compilation of the demo's kernels costs (the bounds' and PI-RAPPOR's
# kernels, cached afterwards): about 8 s of one core where it was measured
COMPILE_HINT = "about 10 s"


class _Phases:
    """Wall seconds of each named phase, less the time Numba spent compiling or loading kernels
    during it (reported on its own as "compile/load")."""

    def __init__(self, jit: JitClock):
        self.jit = jit
        self.times: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str):
        t, c = time.perf_counter(), self.jit.seconds
        try:
            yield
        finally:
            spent = (time.perf_counter() - t) - (self.jit.seconds - c)
            self.times[name] = self.times.get(name, 0.0) + max(spent, 0.0)


def zipf_data(n: int, k: int, exponent: float, seed: int) -> np.ndarray:
    """Simulated users' items: Zipf(exponent) ranks truncated to [0, k) (numpy is fine here: this
    is test data, not privacy randomness)."""
    return _zipf_array(*_zipf_args(n, k, seed), exponent)


def _zipf_args(n, k, seed) -> tuple[int, int, int]:
    """(n, k, seed) of the simulated data, validated."""
    return (V.integer_at_least(n, "n", 0), V.domain_size(k),
            V.integer_at_least(seed, "seed", 0, 2 ** 63 - 1))


def _zipf_array(n: int, k: int, seed: int, exponent: float) -> np.ndarray:
    """zipf_data of validated arguments (the demo's, checked where it starts)."""
    parts = list(_zipf_items(n, k, seed, exponent, max(n, 1)))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def zipf_chunks(n: int, k: int, exponent: float, seed: int, chunk: int = 1 << 20):
    """The same simulated items as :func:`zipf_data`, as arrays of at most ``chunk`` items
    (memory bounded by chunk + k whatever n; one chunk gives exactly zipf_data's items)."""
    n, k, seed = _zipf_args(n, k, seed)
    yield from _zipf_items(n, k, seed, exponent, chunk)


def _zipf_items(n: int, k: int, seed: int, exponent: float, chunk: int):
    """zipf_chunks of validated arguments; the weights' memory is checked here."""
    check_bytes(array_bytes(2 * k, np.float64), f"the Zipf weights of k={k} items", "k")
    rng = np.random.default_rng(seed)  # simulated users' data, not privacy coins
    weights = 1.0 / np.arange(1, k + 1) ** exponent
    weights /= weights.sum()
    for span in spans(n, chunk):
        yield rng.choice(k, size=span.stop - span.start, p=weights)


DEMO_BYTES_PER_USER = 40  # item, shuffle keys and permutation (int64/float64 each)


def _report_bytes(orc) -> float:
    """Bytes one report of this oracle takes in memory (measured on one report)."""
    return orc.randomize_many(np.zeros(1, dtype=np.int64)).nbytes


def run(n: int = 100_000, k: int = 1000, eps: float = 1.0, delta: float = 1e-6,
        oracle: str = "pi-rappor", seed: int = 0, quiet: bool = False,
        progress: bool = False) -> dict:
    """Simulate, randomize, shuffle, estimate; return every figure the demo prints. The memory
    the n reports need is estimated (from one report) and refused above the limit.

    ``progress``: a bar of the clients on stderr, and a notice there when Numba compiles the
    kernels (first run only); ``quiet`` silences both whatever ``progress`` says. The timings
    (``times``) exclude compiling and loading kernels, reported on their own as "compile/load";
    ``kernels_compiled`` counts the kernels this run compiled (0 once they are cached)."""
    if oracle != "best":
        oracle_class(oracle)  # a frequency oracle built from (k, eps), or ValueError naming them
    n, k = V.users(n), V.domain_size(k)
    seed = V.integer_at_least(seed, "seed", 0, 2 ** 63 - 1)
    show_progress = bool(progress) and not quiet
    with JitClock(announce=show_progress, hint=COMPILE_HINT) as jit:
        phase = _Phases(jit)
        memo: dict = {}
        ranking = None
        if oracle == "best":  # every registered oracle at its certified eps0, ranked
            from ..planning.oracles import best_oracle
            with phase("choose oracle"):
                ranking = best_oracle(k, max(n, 1), eps, delta, server_time=False, memo=memo)
            oracle = ranking.best.name
        res = _run(n, k, eps, delta, oracle, seed, show_progress, phase, memo)
    res["ranking"] = None if ranking is None else [
        dict(oracle=c.name, eps0=c.eps0, se=c.error.se, bits=c.bits_per_report)
        for c in ranking.choices]
    res["times"] = {"compile/load": jit.seconds, **phase.times}
    res["kernels_compiled"] = jit.compiled
    return res


def _within_replacement_eps0(factory, eps0: float):
    """The oracle with the largest parameter whose replacement eps0 (the one a generic bound
    for eps0-LDP randomizers speaks of) is at most eps0. For most oracles the parameter is that
    eps0; symmetric RAPPOR's parameter is its deletion eps, half its replacement eps0."""
    def ok(e: float) -> bool:
        try:
            return blanket.realised_eps0(factory(e)) <= eps0
        except ValueError:
            return False
    lo = eps0
    while not ok(lo):
        lo /= 2.0
        if lo < 1e-9:
            raise ValueError(f"no parameter of this oracle has replacement eps0 <= {eps0}")
    return factory(largest_feasible(ok, lo, EXP_MAX))


def _run(n: int, k: int, eps: float, delta: float, oracle: str, seed: int, progress: bool,
         phase: _Phases, memo: dict) -> dict:
    factory = functools.partial(make_oracle, oracle, k)
    dash = "--" if in_command_line() else ""  # the option's name on the command line
    # memory first, before the (slow at large n) search: eps0 >= eps, and no oracle's report
    # grows with eps0 (subset selection's d shrinks), so the oracle at eps is the largest
    try:
        probe = factory(eps)
    except ValueError:
        probe = None
    if probe is not None:
        check_bytes(n * (DEMO_BYTES_PER_USER + 3 * _report_bytes(probe)),
                    f"the demo with n={n} users ({oracle}, k={k})", f"{dash}n or {dash}k")
    # the oracle's own shuffled bound (privacy blanket) decides how much local eps0 we may spend
    with phase("choose eps0"):
        try:
            eps0 = inverse.max_eps0(n, eps, delta, factory, memo=memo)
        except ValueError as err:
            raise ValueError(f"{dash}eps = {eps:g} ({dash}delta = {delta:g}, {dash}n = {n}): "
                             f"{err}; use a larger {dash}eps") from None
    orc = factory(eps0)
    # max_eps0 never leaves the oracle's range: at its edge the target is looser than the
    # oracle can use (e.g. --eps 100), and a smaller eps0 only strengthens the guarantee
    try:
        factory(eps0 * (1 + 1e-9))
        capped = False
    except ValueError:
        capped = True
    if not orc.a1 > orc.a0:  # before any work: the estimates would be infinite
        raise ValueError(f"{dash}eps = {eps:g} ({dash}delta = {delta:g}, {dash}n = {n}) gives "
                         f"a local eps0 = {eps0:.4g} at which {oracle}'s report probabilities "
                         f"are equal in double precision: use a larger {dash}eps")
    check_bytes(n * (DEMO_BYTES_PER_USER + 3 * _report_bytes(orc)),
                f"the demo with n={n} users ({oracle}, k={k})", f"{dash}n or {dash}k")
    with phase("bounds"):
        central = amplification.epsilon(n, delta=delta, oracle=orc)
        # what the generic bound (any eps0-LDP randomizer, FMT21 Thm 3.2) would have allowed
        try:
            generic = _within_replacement_eps0(factory, inverse.max_eps0(n, eps, delta))
        except ValueError:  # beyond the oracle's range: no comparison to show
            generic = None
    xs = _zipf_array(n, k, seed, 1.1)  # n, k and seed were checked by run
    with phase("clients"), bar(n, "randomize", progress, unit="users") as clients:
        step = max(1, min(n, 2_000_000 // max(orc.bits_per_report // 8, 1) // 8 + 1, 50_000))
        parts = []
        for span in spans(n, step):
            parts.append(orc.randomize_many(xs[span]))
            clients.update(span.stop - span.start)
        reports = orc.concat(parts)
    with phase("shuffle"):
        order = np.argsort(SYSTEM.uniform(n))  # the shuffler's permutation, from the CSPRNG
        reports = reports[order]
    with phase("server"):
        est = orc.estimate(reports)
    true = np.bincount(xs, minlength=k)
    top = np.argsort(-true)[:10]
    return dict(n=n, k=k, oracle=oracle, target=(eps, delta), eps0=eps0, eps0_capped=capped,
                local_eps=orc.eps, generic_eps0=None if generic is None else generic.eps,
                generic_sd=None if generic is None else float(np.sqrt(generic.variance(n, 0.0))),
                kind=orc.privacy.value, bits=orc.bits_per_report, rappor_bits=k,
                central_eps=central.value, central_method=central.method,
                central_lower=central.lower, linf=float(np.max(np.abs(est - true))),
                l2=float(np.linalg.norm(est - true)),
                sd=float(np.sqrt(orc.variance(n, 0.0))),
                sd_top=float(np.sqrt(orc.variance(n, float(np.max(np.bincount(xs)))))),
                top=[(int(j), int(true[j]), float(est[j])) for j in top],
                variance=orc.variance(n, np.maximum(est, 0.0)),
                estimate=est, true=true)


def show(res: dict) -> None:
    """Print the figures of :func:`run` (stdout), the kernels' compile/load time on its own."""
    eps, delta = res["target"]
    print(f"ldpcompress demo: {res['n']:,} users, Zipf(1.1) over {res['k']:,} items, "
          f"oracle {res['oracle']}")
    if res.get("ranking"):
        print("oracle chosen by best_oracle (each at its certified eps0; SE of a rare count): "
              + ", ".join(f"{c['oracle']} {c['se']:.3g}" for c in res["ranking"]))
    cap = (f" (capped: the largest {res['oracle']} realises)" if res.get("eps0_capped")
           else "")
    print(f"target central ({eps:g}, {delta:g})-DP after shuffling -> largest local eps0 = "
          f"{res['eps0']:.4f}{cap} by {res['oracle']}'s own shuffled bound; realised local "
          f"eps = {res['local_eps']:.4f} ({res['kind']} DP)")
    if res["local_eps"] != res["eps0"]:
        print(f"  (why two values: {res['oracle']} rounds its parameters, so it realises "
              f"{res['local_eps']:.4f}, at most the {res['eps0']:.4f} asked of it; every bound "
              "is computed for the realised one)")
    lower = res["central_lower"]
    print(f"central guarantee: eps = {res['central_eps']:.5f} at delta = {delta:g} "
          f"({res['central_method']} bound); exact lower bound ({res['oracle']} attack) "
          f"{lower:.5f}" if lower is not None
          else f"central guarantee: eps = {res['central_eps']:.5f} at delta = {delta:g}")
    if res["generic_eps0"] is not None:
        print(f"the generic bound (any eps0-LDP randomizer) would allow only eps0 = "
              f"{res['generic_eps0']:.4f}: standard error {res['generic_sd']:.1f} instead of "
              f"{res['sd']:.1f} ({res['generic_sd'] / res['sd']:.2f}x) for a rare item's count")
    print(f"bits per report: {res['bits']} (RAPPOR: {res['rappor_bits']}, "
          f"{res['rappor_bits'] / res['bits']:.1f}x more)")
    print(f"error: L_inf = {res['linf']:.1f}, L_2 = {res['l2']:.1f} "
          f"(standard error of a count: {res['sd']:.1f} for a rare item, {res['sd_top']:.1f} for "
          f"the most frequent)")
    print("top-10 items:   item      true   estimated")
    for j, t, e in res["top"]:
        print(f"               {j:>5} {t:>9,} {e:>11,.1f}")
    times = dict(res["times"])
    jit = times.pop("compile/load", None)
    print("timings: " + ", ".join(f"{k} {v:.2f} s" for k, v in times.items()))
    if jit is not None:
        made = res.get("kernels_compiled", 0)
        print(f"Numba kernels: {jit:.2f} s, not in the timings above ("
              + (f"compiled {made} on this first run and cached; later runs load them)"
                 if made else "loaded from the cache)"))
