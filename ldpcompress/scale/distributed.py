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
import ipaddress
import os
import time
import uuid

import numpy as np

from ..core import validate as V
from ..core.optional import require
from ..core.progress import JitClock, bar
from ..randomizers.contract import LocalRandomizer
from ..randomizers.estimator import check_flag
from .manifest import Shard, common_items
from .metadata import check_summary_memory
from .reader import VERIFY_BLOCK, VERIFY_CACHE, check_batch_rows, collect, iter_shard, \
    row_memory, summarize_shard
from .result import Aggregation
from ..core.regular_files import open_regular

__all__ = ["WORKER_TIMEOUT", "SCHEMES_SECURE", "SCHEMES_PLAIN", "DASK_START_SECONDS",
           "DASK_EFFICIENCY",
           "MEASURE_SECONDS", "WORKER_BASE_BYTES", "ClusterError", "shard_summary",
           "dask_workers", "check_scheduler", "tls_security", "aggregate",
           "aggregate_in_memory"]


WORKER_TIMEOUT = 60.0  # seconds a run may wait for a live worker, per try (retries apply)
SCHEMES_SECURE = ("tls", "wss")
SCHEMES_PLAIN = ("tcp", "ws")
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


def check_scheduler(address, security=None, allow_insecure: bool = False) -> str:
    """Refuse a scheduler address that would send pickled code in the clear to another host:
    ``tls://``/``wss://`` need ``security``; ``tcp://``/``ws://`` (the default scheme) are
    allowed on the loopback interface only, unless ``allow_insecure``."""
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"scheduler must be an address such as tls://host:8786, got {address!r}")
    allow_insecure = check_flag(allow_insecure, "allow_insecure")
    scheme, _, loc = address.rpartition("://")
    scheme = scheme.lower() or "tcp"
    if scheme == "inproc":
        if loc.count("/") != 2:
            raise ValueError(f"scheduler {address}: an inproc:// address is host/pid/number of "
                             "a scheduler running in this same process (tests only); use "
                             "tls://host:port or tcp://127.0.0.1:port")
        return address
    if scheme in SCHEMES_SECURE:
        if security is None:
            raise ValueError(f"scheduler {address}: {scheme}:// needs security="
                             "Security(tls_ca_file=..., tls_client_cert=..., tls_client_key=...) "
                             "(CLI: --tls-ca-file, --tls-cert, --tls-key)")
        return address
    if scheme not in SCHEMES_PLAIN:
        raise ValueError(f"scheduler {address}: unsupported protocol {scheme!r} (use tls:// or, "
                         "on this machine, tcp://127.0.0.1)")
    if not (_loopback(loc) or allow_insecure):
        raise ValueError(
            f"scheduler {address}: {scheme}:// is neither encrypted nor authenticated, and the "
            "scheduler and workers run pickled code and return the counts, so they must be "
            "trusted: use tls:// with --tls-ca-file/--tls-cert/--tls-key (security=...), or "
            "pass --allow-insecure (allow_insecure=True) on a network you trust")
    return address


def _loopback(loc: str) -> bool:
    host = loc.rsplit(":", 1)[0] if loc.count(":") == 1 or loc.startswith("[") else loc
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tls_security(ca_file: str, cert: str, key: str | None = None):
    """A Security for ``tls://`` from PEM files (CA, client certificate, its key)."""
    from distributed.security import Security
    for name, path in (("tls-ca-file", ca_file), ("tls-cert", cert), ("tls-key", key)):
        if path is not None:
            try:
                open_regular(path, "a PEM file").close()
            except ValueError as err:  # "<path>: <reason>"
                reason = str(err)[len(str(path)) + 2:] if str(err).startswith(str(path)) \
                    else str(err)
                raise ValueError(f"--{name} {path}: cannot read ({reason})") from None
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key,
                    require_encryption=True)


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
              worker_timeout: float = WORKER_TIMEOUT, batch_rows: int | None = None,
              progress: bool = False) -> Aggregation:
    """The summary and estimates of the reports in every report set/shard of ``paths`` (one
    randomizer, read from the manifests).

    ``scheduler``: "auto" (in this process, moving the remaining shards to a local cluster
    when :func:`dask_workers` predicts it is faster), "memory", "local" (a ``LocalCluster`` of
    ``n_workers`` processes) or the address of a running scheduler (see
    :func:`check_scheduler`); ``client`` overrides it. Every shard is checked before any work
    starts. A shard whose worker dies is resubmitted up to ``retries`` times, then
    ClusterError names it. A cluster with no live worker is waited for ``worker_timeout``
    seconds, ``retries + 1`` times in all (before the run and whenever no task finishes and no
    worker is left), then ClusterError says so: a run never waits forever. A scheduler that
    cannot be reached is a ClusterError naming it. Each shard is read ``batch_rows`` reports at a time (default:
    ``reader.batch_rows_for``), here or on a worker. ``progress``: a bar of the reports on
    stderr. Returns an :class:`~ldpcompress.scale.result.Aggregation`, a dict (summary,
    estimate, n, randomizer, shards, method, auto, items; each also an attribute; items: the
    ItemDomain the manifests keep, or None) with method
    "memory", "dask" or "memory+dask" (auto moved the rest to a cluster) and auto the
    measurements auto decided by (dict(rate in bytes/s, parallelism, workers), or None).
    """
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be a string, got {type(scheduler).__name__}")
    retries = V.integer_at_least(retries, "retries", 0, 100)
    worker_timeout = V.positive_finite(worker_timeout, "worker_timeout")
    if n_workers is not None:
        n_workers = V.integer_at_least(n_workers, "n_workers", 1, 1024)
    if client is None and scheduler not in ("auto", "memory", "local"):
        check_scheduler(scheduler, security, allow_insecure)
    randomizer, shards = collect(paths)
    items = common_items(s.manifest for s in shards)  # checked before any counting
    batch_rows = check_batch_rows(batch_rows, randomizer)
    expected = sum(s.rows for s in shards)
    wait = _Watch(retries, worker_timeout)
    with bar(expected, "aggregate", progress, unit="reports") as counted:
        if client is not None:
            total, n = _on_cluster(_dask(), client, randomizer, shards, wait, batch_rows,
                                   counted)
            return _result(randomizer, total, n, shards, "dask", items=items)
        if scheduler in ("auto", "memory"):
            with JitClock(announce=progress):  # says so when the kernels compile
                total, n, left, plan = _in_memory(randomizer, shards, batch_rows, counted,
                                                  decide=scheduler == "auto")
            if not left:
                return _result(randomizer, total, n, shards, "memory", plan, items)
            t, m = _new_cluster(randomizer, left, "local", plan["workers"], None, wait,
                                batch_rows, counted)
            return _result(randomizer, total + t, n + m, shards, "memory+dask", plan, items)
        total, n = _new_cluster(randomizer, shards, scheduler, n_workers, security, wait,
                                batch_rows, counted)
    return _result(randomizer, total, n, shards, "dask", items=items)


def _new_cluster(randomizer, shards, scheduler, n_workers, security, wait: "_Watch",
                 batch_rows, counted):
    """Summarize ``shards`` on a LocalCluster ("local") or the scheduler at an address."""
    dist = _dask()
    cluster = None
    if scheduler == "local":
        cluster = dist.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0")
    try:
        with _connect(dist, cluster if cluster is not None else scheduler, security,
                      wait.timeout) as own:
            return _on_cluster(dist, own, randomizer, shards, wait, batch_rows, counted)
    finally:
        if cluster is not None:
            cluster.close()


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
    every worker does not get new ones each time)."""

    def __init__(self, retries: int, timeout: float):
        self.retries, self.timeout, self.used = retries, timeout, 0

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
        for fut in _finished(dist, client, pending, watch):
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


def _finished(dist, client, pending: dict, watch: _Watch):
    """The futures of ``pending`` as they finish (``pending`` may grow meanwhile). When none
    finishes within the watch's timeout and the scheduler has no worker left, the watch waits
    for one (and raises ClusterError once its tries are spent): never an endless wait."""
    while pending:
        try:
            dist.wait(list(pending), timeout=watch.timeout, return_when="FIRST_COMPLETED")
        except (TimeoutError, dist.TimeoutError):
            if not client.scheduler_info().get("workers"):
                watch.workers(dist, client)
            continue
        for fut in [f for f in pending if f.done()]:
            yield fut


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
            total += randomizer.summarize(reports)
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
    worker = (batch_rows * row_memory(randomizer) + VERIFY_CACHE * VERIFY_BLOCK
              + check_summary_memory(randomizer, "aggregate"))
    return dask_workers(rate, sum(s.size for s in left), len(left), _usable_cores(),
                        _available_memory(), worker, parallelism)


def _result(randomizer: LocalRandomizer, total, n, shards, method, plan=None,
            items=None) -> Aggregation:
    estimate = randomizer.estimate_from_summary(total, n)
    if items is not None and items.k != np.size(estimate):
        raise ValueError(f"{shards[0].manifest}: key 'items' names {items.k} items but "
                         f"{randomizer.describe()} estimates {np.size(estimate)} entries")
    return Aggregation(summary=total, n=n, randomizer=randomizer, shards=len(shards),
                       method=method, estimate=estimate, auto=plan, domain=items)


def aggregate_in_memory(paths, batch_rows: int | None = None,
                        progress: bool = False) -> Aggregation:
    """The same result in this process, shard by shard, a batch of reports at a time."""
    return aggregate(paths, scheduler="memory", batch_rows=batch_rows, progress=progress)
