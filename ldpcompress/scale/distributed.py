"""Aggregation of report sets of any registered randomizer, in this process or on Dask
(optional extra ``[dask]``).

Every shard is checked before any counting (manifest, duplicates, one common randomizer: see
``reader.collect``); each shard is then hashed (size, SHA-256) and read in batches, each
checked (metadata, page checksums, every report through the randomizer's ``from_columns``) and
summarized (``summarize()``); the summaries are added and the estimates come from the total
(``estimate_from_summary``). On Dask each shard is one task, resubmitted when a worker dies,
and a worker's summary is checked like a file (shape, dtype, and ``estimate_from_summary``'s
ranges). Either way memory is bounded by the batch, not by the shard.

Where the work runs ("auto", :func:`dask_workers`): in this process, unless the speed and the
parallelism measured on the first shards predict that a local cluster finishes the rest
sooner, start-up included, with as many workers as there are cores, shards left and memory
for their batches and summaries. The rule and its constants are in docs/guide.md, section 3, "Report sets and
aggregation".

Trust: Dask ships pickled functions and data, so a scheduler and its workers run whatever code
they are sent and can return any summaries. Use only a cluster you control; ``tcp://`` is
neither encrypted nor authenticated, so it is refused beyond the loopback interface unless the
caller says ``allow_insecure=True``; use ``tls://`` with a ``distributed.security.Security``.
"""
from __future__ import annotations

import functools
import math
import os
import time
import uuid

import numpy as np

from ..core import validate as V
from ..core.optional import require
from ..core.progress import JitClock, bar
from ..randomizers.contract import LocalRandomizer
from .manifest import Shard, common_items
from .budget import Plan, worker_bytes
from .budget import plan as budget_plan
from .cluster_security import (SCHEMES_PLAIN, SCHEMES_SECURE, check_dashboard, check_scheduler,
                               tls_security)
from .reader import iter_shard, summarize_shard
from .result import Aggregation

__all__ = ["WORKER_TIMEOUT", "TASK_TIMEOUT", "CLOSE_TIMEOUT", "POLL_SECONDS", "SCHEMES_SECURE",
           "SCHEMES_PLAIN", "DASK_START_SECONDS",
           "DASK_EFFICIENCY",
           "MEASURE_SECONDS", "WORKER_BASE_BYTES", "ClusterError", "shard_summary",
           "dask_workers", "check_scheduler", "check_dashboard", "tls_security", "aggregate",
           "task_timeout_for",
           "aggregate_in_memory"]


WORKER_TIMEOUT = 60.0  # seconds a run may wait for a live worker, per try (retries apply)
TASK_TIMEOUT = 120.0   # least wait for the next shard to finish (task_timeout_for)
CLOSE_TIMEOUT = 20.0   # seconds a local cluster gets to shut down (a stuck worker: killed)
POLL_SECONDS = 2.0     # how often a run waiting for shards looks at the workers' heartbeats
# "auto" (see dask_workers); measured with bench/scale.py on 2 cores: a LocalCluster starts and
# its workers load the cached kernels in ~4-5 s, and a worker process does ~0.75 of the work
# one core of this process does (PI-RAPPOR: 0.77, compressed RAPPOR: 0.73)
DASK_START_SECONDS = 5.0
DASK_EFFICIENCY = 0.75
MEASURE_SECONDS = 2.0           # in-memory work measured before "auto" decides
WORKER_BASE_BYTES = 400 << 20   # one worker process: Python, numpy, Numba, pyarrow, distributed


class ClusterError(OSError):
    """The Dask cluster failed (workers kept dying, scheduler lost): an environment failure,
    not a problem of the reports; the message names the shard whose work was lost."""


def _dask():
    dist = require("dask", "dask.distributed")
    return dist


@functools.lru_cache(maxsize=8)
def _resident(randomizer: LocalRandomizer) -> LocalRandomizer:
    """One instance per randomizer (equal name and parameters) and worker process, so that
    what it builds once (e.g. PI-RAPPOR's table of inverses) is built once per worker."""
    return randomizer


def shard_summary(shard: Shard, randomizer: LocalRandomizer, batch_rows: int | None = None
                  ) -> tuple[np.ndarray, int]:
    """(summary, number of reports) of one shard, read a batch at a time (worker memory
    bounded by the batch, not the shard), after every check of ``reader.iter_shard``: what a
    Dask worker runs."""
    return summarize_shard(shard, _resident(randomizer), batch_rows)


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover (not Linux)
        return os.cpu_count() or 1


def _available_memory() -> float:
    try:
        import psutil  # a dependency of dask.distributed
        return float(psutil.virtual_memory().available)
    except ImportError:  # pragma: no cover
        return 0.0


def dask_workers(rate: float, remaining_bytes: int, remaining_shards: int, cores: int,
                 memory: float, worker_bytes: float, parallelism: float = 1.0) -> int:
    """Workers of a local cluster for the rest of an aggregation, or 0 to finish in this
    process ("auto"). ``rate``: bytes of shards per second measured in this process so far;
    ``parallelism``: the cores it kept busy meanwhile (CPU time / wall time, in [1, cores]:
    Numba kernels run on several threads, Python code on one).

    The rest takes T_mem = remaining_bytes / rate here; on W single-threaded workers about
    T_dask = DASK_START_SECONDS + T_mem parallelism / (W DASK_EFFICIENCY), with
    W = min(cores, remaining shards, memory // (worker_bytes + WORKER_BASE_BYTES)) (each
    worker holds a batch and the summaries). Dask is chosen when W >= 2 and T_dask < T_mem.
    """
    if rate <= 0 or remaining_bytes <= 0:
        return 0
    by_memory = int(memory // (worker_bytes + WORKER_BASE_BYTES))
    workers = min(cores, remaining_shards, by_memory)
    if workers < 2:
        return 0
    busy = min(max(float(parallelism), 1.0), float(cores))
    t_mem = remaining_bytes / rate
    t_dask = DASK_START_SECONDS + t_mem * busy / (workers * DASK_EFFICIENCY)
    return workers if t_dask < t_mem else 0


def aggregate(paths, scheduler: str = "auto", n_workers: int | None = None, client=None, *,
              security=None, allow_insecure: bool = False, retries: int = 3,
              worker_timeout: float = WORKER_TIMEOUT, task_timeout: float | None = None,
              dashboard: str | None = None, batch_rows: int | None = None,
              expect=None, max_seconds: float | None = None, max_bytes: float | None = None,
              progress: bool = False) -> Aggregation:
    """The summary and estimates of the reports in every report set/shard of ``paths`` (one
    randomizer, read from the manifests), or of a ``budget.Plan``.

    The server decides what it aggregates and spends: ``expect`` (a randomizer or registry
    spec) refuses any set recording another randomizer, naming both, before its randomizer is
    built; the cost stated by the randomizer (``budget.plan``: operations and peak memory) is
    checked against ``max_seconds`` and ``max_bytes`` (None: ``core.limits.MAX_SECONDS`` and
    ``MAX_BYTES``, about a minute and 4 GiB) before any shard is read. A Plan carries its own
    randomizer, batch size and expectation (``expect`` and ``batch_rows`` are then refused)
    and is checked here unless it was already.

    ``scheduler``: "auto" (in this process, moving the remaining shards to a local cluster
    when :func:`dask_workers` predicts it is faster), "memory", "local" (a ``LocalCluster`` of
    ``n_workers`` processes on the loopback interface, its dashboard off unless ``dashboard``
    gives an address such as "127.0.0.1:8787": :func:`check_dashboard`) or the address of a
    running scheduler (see :func:`check_scheduler`); ``client`` overrides it. A shard whose
    worker dies is resubmitted up to ``retries`` times, then ClusterError names it. A cluster
    with no live worker is waited for ``worker_timeout`` seconds, ``retries + 1`` times in all,
    then ClusterError says so; when no shard finishes for ``task_timeout`` seconds (default:
    the larger of TASK_TIMEOUT and 4 times the stated time, ``task_timeout_for``), e.g.
    a stopped worker, ClusterError names the shards at work and the timeout: a run never waits
    forever. A scheduler that cannot be reached is a ClusterError naming it. Each shard is
    read ``batch_rows`` reports at a time (default: ``reader.batch_rows_for``), here or on a
    worker. ``progress``: a bar of the reports on stderr. Returns an
    :class:`~ldpcompress.scale.result.Aggregation`, a dict (summary, estimate, n, randomizer,
    shards, method, auto, cost, domain; each also an attribute; domain: the ItemDomain the
    manifests keep, or None) with method "memory", "dask" or
    "memory+dask" (auto moved the rest to a cluster), auto the measurements auto decided by
    (dict(rate in bytes/s, parallelism, workers), or None) and cost the checked plan's
    (dict(operations, seconds, peak_bytes, max_seconds, max_bytes, detail)).
    """
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be a string, got {type(scheduler).__name__}")
    retries = V.integer_at_least(retries, "retries", 0, 100)
    worker_timeout = V.positive_finite(worker_timeout, "worker_timeout")
    if task_timeout is not None:
        task_timeout = V.positive_finite(task_timeout, "task_timeout")
    if n_workers is not None:
        n_workers = V.integer_at_least(n_workers, "n_workers", 1, 1024)
    if client is None and scheduler not in ("auto", "memory", "local"):
        check_scheduler(scheduler, security, allow_insecure)
    dashboard = check_dashboard(dashboard, allow_insecure)
    if isinstance(paths, Plan):
        if expect is not None or batch_rows is not None:
            raise ValueError("a Plan carries its own expected randomizer and batch_rows: give "
                             "them to budget.plan, not to aggregate")
        plan = paths if paths.checked else paths.check(max_seconds, max_bytes)
    else:
        plan = budget_plan(paths, expect, batch_rows).check(max_seconds, max_bytes)
    randomizer, shards, batch_rows = plan.randomizer, list(plan.shards), plan.batch_rows
    items = common_items(s.manifest for s in shards)  # checked before any counting
    wait = _Watch(retries, worker_timeout, task_timeout_for(plan, task_timeout),
                  worker_timeout + 2.0 * plan.seconds)
    result = functools.partial(_result, randomizer, shards=shards, plan=plan, items=items)
    with bar(plan.n, "aggregate", progress, unit="reports") as counted:
        if client is not None:
            total, n = _on_cluster(_dask(), client, randomizer, shards, wait, batch_rows,
                                   counted)
            return result(total, n, "dask")
        if scheduler in ("auto", "memory"):
            with JitClock(announce=progress):  # says so when the kernels compile
                total, n, left, auto = _in_memory(randomizer, shards, batch_rows, counted,
                                                  decide=scheduler == "auto")
            if not left:
                return result(total, n, "memory", auto)
            t, m = _new_cluster(randomizer, left, "local", auto["workers"], None, wait,
                                batch_rows, counted, dashboard)
            return result(total + t, n + m, "memory+dask", auto)
        total, n = _new_cluster(randomizer, shards, scheduler, n_workers, security, wait,
                                batch_rows, counted, dashboard)
    return result(total, n, "dask")


def task_timeout_for(plan: Plan, task_timeout: float | None = None) -> float:
    """Seconds a run waits for the next shard to finish: ``task_timeout``, or by default the
    larger of TASK_TIMEOUT and 4 times the plan's stated time (which is for one core: a
    shard on a worker takes no longer unless the worker is stuck)."""
    if task_timeout is not None:
        return task_timeout
    return max(TASK_TIMEOUT, 4.0 * plan.seconds)


def _new_cluster(randomizer, shards, scheduler, n_workers, security, wait: "_Watch",
                 batch_rows, counted, dashboard: str | None = None):
    """Summarize ``shards`` on a LocalCluster ("local": loopback only, the scheduler's HTTP
    routes off unless a ``dashboard`` address is given) or the scheduler at an address."""
    dist = _dask()
    cluster = None
    if scheduler == "local":
        import dask
        routes: dict[str, list] = {} if dashboard is not None else {
            "distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}
        with dask.config.set(routes):
            cluster = dist.LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None, scheduler_kwargs=dict(
                    dashboard=dashboard is not None,
                    dashboard_address=dashboard or "127.0.0.1:0"))
    try:
        with _connect(dist, cluster if cluster is not None else scheduler, security,
                      wait.timeout) as own:
            return _on_cluster(dist, own, randomizer, shards, wait, batch_rows, counted)
    finally:
        if cluster is not None:
            cluster.close(timeout=CLOSE_TIMEOUT)


def _connect(dist, address, security, timeout: float):
    """A Client of the scheduler at ``address``; any failure to connect is a ClusterError
    naming the address (not dask's own message alone)."""
    try:
        return dist.Client(address, security=security, timeout=timeout)
    except Exception as err:  # noqa: BLE001 (dask raises OSError, ValueError, TimeoutError ...)
        shown = address if isinstance(address, str) else "of the local cluster"
        within = f" within {timeout:g} s" if isinstance(err, (OSError, TimeoutError)) else ""
        raise ClusterError(f"cannot connect to the scheduler {shown}{within} "
                           f"({type(err).__name__}: {err})") from None


class _Watch:
    """Waits for a live worker at most ``timeout`` seconds per try, ``retries + 1`` tries in a
    run; then ClusterError. Tries are shared by the whole run (a cluster that keeps losing
    every worker does not get new ones each time). ``task_timeout``: the longest wait for the
    next shard to finish."""

    def __init__(self, retries: int, timeout: float, task_timeout: float = math.inf,
                 silence: float | None = None):
        self.retries, self.timeout, self.used = retries, timeout, 0
        self.task_timeout = task_timeout
        # a worker holding a shard and silent (no heartbeat) this long is stopped or stuck
        self.silence = timeout if silence is None else silence
        self.heard: dict = {}  # worker -> (its last heartbeat as last seen, when it changed)

    def silent(self, workers: dict) -> dict:
        """Seconds each worker has been silent, measured on this clock: how long its
        scheduler-side ``last_seen`` has not changed (no clock shared with the scheduler)."""
        now = time.monotonic()
        out = {}
        for addr, info in workers.items():
            beat = info.get("last_seen") if isinstance(info, dict) else None
            if beat is None:  # a scheduler that does not say: never called silent
                continue
            old = self.heard.get(addr)
            if old is None or old[0] != beat:
                self.heard[addr] = (beat, now)
            out[addr] = now - self.heard[addr][1]
        return out

    def workers(self, dist, client) -> None:
        while True:
            try:
                client.wait_for_workers(1, timeout=self.timeout)
                return
            except (TimeoutError, dist.TimeoutError):
                self.used += 1
                if self.used > self.retries:
                    raise ClusterError(
                        f"the Dask scheduler has no live worker: waited {self.used} times "
                        f"{self.timeout:g} s (retries = {self.retries}); start workers or use "
                        "scheduler='memory' (CLI: --scheduler memory)") from None


def _on_cluster(dist, client, randomizer: LocalRandomizer, shards, watch: "_Watch",
                batch_rows: int | None, counted):
    """One task per shard; a task lost to worker deaths (KilledWorker) is resubmitted up to
    ``watch.retries`` times. ``counted``: the progress bar, advanced as each shard completes.
    ``watch`` bounds the waits for a live worker: before submitting, and whenever no task
    finished for its timeout while the scheduler had no worker."""
    watch.workers(dist, client)
    retries = watch.retries
    run = uuid.uuid4().hex[:12]
    spec = randomizer.summary_spec()
    total, n = np.zeros(spec.shape, spec.dtype), 0
    expected = sum(s.rows for s in shards)

    def submit(i, attempt):
        return client.submit(shard_summary, shards[i], randomizer, batch_rows, pure=False,
                             key=f"ldpcompress-shard-{i}-try{attempt}-{run}")

    pending = {submit(i, 0): (i, 0) for i in range(len(shards))}
    try:
        for fut in _finished(dist, client, pending, watch, shards):
            i, attempt = pending.pop(fut)
            try:  # waits when the result was lost with its worker and is being recomputed
                result = fut.result()
            except dist.KilledWorker:
                if attempt >= retries:
                    raise ClusterError(
                        f"{shards[i].path}: its task was lost {attempt + 1} times to worker "
                        f"deaths (KilledWorker, after {retries} retries): the workers are "
                        "unstable or this shard makes them fail (memory?)") from None
                new = submit(i, attempt + 1)
                pending[new] = (i, attempt + 1)
                continue
            except (ValueError, TypeError):  # a bad shard, named by iter_shard
                raise
            except Exception as err:
                raise ClusterError(f"{shards[i].path}: the task failed on the cluster: "
                                   f"{type(err).__name__}: {err}") from None
            c, m = _checked_result(result, shards[i], randomizer)
            total += c
            n += m
            counted.update(m)
            fut.release()
    except BaseException:
        client.cancel(list(pending))
        raise
    if n != expected:
        raise ClusterError(f"the cluster returned {n} reports, the shards hold {expected}")
    return total, n


def _finished(dist, client, pending: dict, watch: _Watch, shards):
    """The futures of ``pending`` (future -> (shard index, attempt)) as they finish
    (``pending`` may grow meanwhile). When none finishes within the watch's timeout and the
    scheduler has no worker left, the watch waits for one (and raises ClusterError once its
    tries are spent); when none finishes for ``watch.task_timeout`` seconds although workers
    are there (a stopped or stuck worker), ClusterError names the shards at work and the
    timeout: never an endless wait."""
    last = time.monotonic()
    while pending:
        left = watch.task_timeout - (time.monotonic() - last)
        if left <= 0:
            raise ClusterError(_stuck(client, pending, shards, watch.task_timeout))
        try:
            dist.wait(list(pending), timeout=min(watch.timeout, left, POLL_SECONDS),
                      return_when="FIRST_COMPLETED")
        except (TimeoutError, dist.TimeoutError):
            workers = client.scheduler_info().get("workers")
            if not workers:
                watch.workers(dist, client)
                last = time.monotonic()  # a worker came back: its tasks start over
                continue
            quiet = {a: t for a, t in watch.silent(workers).items() if t > watch.silence}
            if quiet:
                held = _held(client, pending, quiet)
                if held:
                    raise ClusterError(_silent(held, quiet, shards, watch)) from None
            continue
        last = time.monotonic()
        for fut in [f for f in pending if f.done()]:
            yield fut


def _held(client, pending: dict, workers) -> dict:
    """{worker: shard indices of ``pending`` it is processing} for the given workers."""
    keys = {f.key: i for f, (i, _) in pending.items()}
    try:
        processing = client.processing(workers=list(workers))
    except Exception:  # noqa: BLE001 (the scheduler may be the problem): nothing known held
        return {}
    held = {a: sorted(keys[k] for k in ks if k in keys) for a, ks in processing.items()}
    return {a: v for a, v in held.items() if v}


def _silent(held: dict, quiet: dict, shards, watch: _Watch) -> str:
    """The message when workers holding shards stopped answering (SIGSTOP, a hung host)."""
    addr = sorted(held)[0]
    more = f" (and {len(held) - 1} other worker(s))" if len(held) > 1 else ""
    return (f"{shards[held[addr][0]].path}: its worker {addr}{more} has sent no heartbeat for "
            f"{quiet[addr]:.0f} s, more than the {watch.silence:.3g} s allowed (the worker "
            f"timeout of {watch.timeout:g} s plus twice the stated time): it is stopped or "
            "stuck; restart it, or raise --worker-timeout (worker_timeout=)")


def _stuck(client, pending: dict, shards, timeout: float) -> str:
    """The message of a task timeout: the shards the workers hold (else those waiting)."""
    keys = {f.key: i for f, (i, _) in pending.items()}
    try:
        held = [keys[k] for ks in client.processing().values() for k in ks if k in keys]
    except Exception:  # noqa: BLE001 (the scheduler may be the problem): name what waits
        held = []
    named = sorted(set(held or keys.values()))
    shown = ", ".join(str(shards[i].path) for i in named[:3]) + \
        (f" and {len(named) - 3} more" if len(named) > 3 else "")
    return (f"{shown}: no shard finished within the task timeout of {timeout:g} s (a stopped or "
            "stuck worker?); raise --task-timeout (task_timeout=) if its shards need longer")


def _checked_result(result, shard: Shard, randomizer: LocalRandomizer
                    ) -> tuple[np.ndarray, int]:
    """A worker's (summary, n) for one shard, untrusted like a file: n must be the manifest's
    row count and the summary of ``summary_spec()``'s shape and dtype kind, which
    ``estimate_from_summary`` accepts for n reports (e.g. counts in [0, n], a sum of n
    vectors of the reports' norm); a shard of no reports must give a zero summary."""
    spec = randomizer.summary_spec()
    want = np.dtype(spec.dtype)
    try:
        c, m = result
        c = np.asarray(c)
        ok = (isinstance(m, (int, np.integer)) and not isinstance(m, bool) and m == shard.rows
              and c.shape == tuple(spec.shape)
              and (c.dtype == want or (c.dtype.kind in "iu" and want.kind in "iu")))
        if ok and m == 0:
            ok = not c.any()
        elif ok:
            randomizer.estimate_from_summary(c.astype(want), int(m))
    except (TypeError, ValueError, ArithmeticError):
        ok = False
    if not ok:
        raise ClusterError(f"{shard.path}: the cluster returned a malformed result for this "
                           f"shard ({shard.rows} reports of {randomizer.describe()})")
    return c.astype(want), int(m)


def _in_memory(randomizer: LocalRandomizer, shards, batch_rows: int, counted,
               decide: bool = False):
    """Shard by shard, each read batch_rows reports at a time; batches of small shards are
    pooled up to batch_rows reports per ``summarize`` call (fewer kernel calls). Memory: about
    two batches, whatever the shards' sizes. A shard that fails a check (even at its end)
    aborts the whole aggregation: no partial summary is ever returned. ``decide``: after
    MEASURE_SECONDS, ask :func:`dask_workers` whether to move the remaining shards to a local
    cluster. Returns (summary, n, shards left, the decision: dict(rate, parallelism, workers)
    or None when none was made)."""
    spec = randomizer.summary_spec()
    total, n = np.zeros(spec.shape, spec.dtype), 0
    pool: list = []
    pooled = 0

    def flush():
        nonlocal total, n, pool, pooled
        if pool:
            reports = pool[0] if len(pool) == 1 else randomizer.concat(pool)
            total += randomizer._summarize(reports)  # checked by from_columns
            n += randomizer.n_reports(reports)
            pool, pooled = [], 0

    start, cpu, done_bytes, plan = time.perf_counter(), time.process_time(), 0, None
    for i, s in enumerate(shards):
        for reports in iter_shard(s, randomizer, batch_rows):
            size = randomizer.n_reports(reports)
            if pooled + size > batch_rows:
                flush()
            pool.append(reports)
            pooled += size
            counted.update(size)
        done_bytes += s.size
        left = shards[i + 1:]
        if decide and left and time.perf_counter() - start >= MEASURE_SECONDS:
            decide = False  # once
            flush()
            wall = time.perf_counter() - start
            plan = dict(rate=done_bytes / wall, parallelism=(time.process_time() - cpu) / wall)
            plan["workers"] = _auto_workers(randomizer, plan["rate"], left, batch_rows,
                                            plan["parallelism"])
            if plan["workers"]:
                return total, n, left, plan
    flush()
    expected = sum(s.rows for s in shards)
    if n != expected:  # pragma: no cover (iter_shard checks every shard)
        raise ValueError(f"counted {n} reports, the shards hold {expected}")
    return total, n, [], plan


def _auto_workers(randomizer: LocalRandomizer, rate: float, left, batch_rows: int,
                  parallelism: float) -> int:
    """:func:`dask_workers` for the shards left, with this machine's cores and memory."""
    try:
        _dask()
    except ImportError:
        return 0
    worker = worker_bytes(randomizer, batch_rows)
    return dask_workers(rate, sum(s.size for s in left), len(left), _usable_cores(),
                        _available_memory(), worker, parallelism)


def _result(randomizer: LocalRandomizer, total, n, method, auto=None, *, shards,
            plan: Plan, items=None) -> Aggregation:
    cost = dict(operations=plan.cost.operations, seconds=plan.seconds,
                peak_bytes=plan.cost.peak_bytes, max_seconds=plan.limits[0],
                max_bytes=plan.limits[1], detail=plan.cost.detail)
    estimate = randomizer.estimate_from_summary(total, n)
    if items is not None and items.k != np.size(estimate):
        raise ValueError(f"{shards[0].manifest}: key 'items' names {items.k} items but "
                         f"{randomizer.describe()} estimates {np.size(estimate)} entries")
    return Aggregation(summary=total, n=n, randomizer=randomizer, shards=len(shards),
                       method=method, estimate=estimate, auto=auto, cost=cost,
                       expected=plan.expected, domain=items)


def aggregate_in_memory(paths, batch_rows: int | None = None, progress: bool = False, *,
                        expect=None, max_seconds: float | None = None,
                        max_bytes: float | None = None) -> Aggregation:
    """The same result in this process, shard by shard, a batch of reports at a time."""
    return aggregate(paths, scheduler="memory", batch_rows=batch_rows, progress=progress,
                     expect=expect, max_seconds=max_seconds, max_bytes=max_bytes)
