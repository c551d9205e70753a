"""Histogram of PI-RAPPOR report sets, in this process or on Dask (optional extra ``[dask]``).

Every shard is checked before any counting (manifest, duplicates, common oracle: see
``reader.collect``); each shard is then hashed (size, SHA-256) and read in batches of
``batch_rows`` reports, each checked (metadata, page checksums, ranges) and counted by the Numba
kernel; the partial counts are summed. Small inputs are aggregated in this process, large ones,
or any run given a scheduler, on Dask: one task per shard, resubmitted when a worker dies.
Either way memory is bounded by the batch, not by the shard.

Trust: Dask ships pickled functions and data, so a scheduler and its workers run whatever code
they are sent and can return any counts. Use only a cluster you control; ``tcp://`` is neither
encrypted nor authenticated, so it is refused beyond the loopback interface unless the caller
says ``allow_insecure=True``; use ``tls://`` with a ``distributed.security.Security``.
"""
from __future__ import annotations

import functools
import ipaddress
import json
import uuid

import numpy as np

from ..core import validate as V
from ..core.optional import require
from ..core.progress import JitClock, bar
from ..randomizers.estimator import binary_estimate, check_flag
from ..randomizers.pirappor import FieldReports, PIRappor
from .manifest import Shard
from .metadata import oracle_from_metadata, oracle_metadata
from .reader import READ_BATCH_ROWS, check_batch_rows, collect, count_shard, iter_shard
from ..core.regular_files import open_regular

__all__ = ["IN_MEMORY_ROWS", "WORKER_TIMEOUT", "SCHEMES_SECURE", "SCHEMES_PLAIN", "ClusterError", "shard_counts",
           "check_scheduler", "tls_security", "aggregate", "aggregate_in_memory"]


IN_MEMORY_ROWS = 5_000_000  # "auto": below this many reports, no cluster is started
WORKER_TIMEOUT = 60.0  # seconds a run may wait for a live worker, per try (retries apply)
SCHEMES_SECURE = ("tls", "wss")
SCHEMES_PLAIN = ("tcp", "ws")


class ClusterError(OSError):
    """The Dask cluster failed (workers kept dying, scheduler lost): an environment failure,
    not a problem of the reports; the message names the shard whose work was lost."""


def _dask():
    dist = require("dask", "dask.distributed")
    return dist


@functools.lru_cache(maxsize=8)
def _oracle(meta_json: str) -> PIRappor:
    """One oracle per parameter set and process (its inverse table is built once)."""
    return oracle_from_metadata(json.loads(meta_json))


def shard_counts(shard: Shard, meta_json: str, batch_rows: int = READ_BATCH_ROWS
                 ) -> tuple[np.ndarray, int]:
    """(support counts, number of reports) of one shard, read ``batch_rows`` reports at a time
    (worker memory bounded by the batch, not the shard), after every check of iter_shard."""
    return count_shard(shard, _oracle(meta_json), batch_rows)


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


def aggregate(paths, oracle: str = "pi-rappor", scheduler: str = "auto",
              n_workers: int | None = None, client=None, *, security=None,
              allow_insecure: bool = False, retries: int = 3,
              worker_timeout: float = WORKER_TIMEOUT, in_memory_rows: int = IN_MEMORY_ROWS,
              batch_rows: int = READ_BATCH_ROWS, progress: bool = False) -> dict:
    """Counts and unbiased estimates of every item over all report sets/shards in ``paths``.

    ``scheduler``: "auto" (in this process below ``in_memory_rows`` reports, else a local
    cluster), "memory", "local" (a ``LocalCluster`` of ``n_workers`` processes) or the address
    of a running scheduler (see :func:`check_scheduler`); ``client`` overrides it. Every shard
    is checked before any work starts. A shard whose worker dies is resubmitted up to
    ``retries`` times, then ClusterError names it. A cluster with no live worker is waited
    for ``worker_timeout`` seconds, ``retries + 1`` times in all (before the run and whenever
    no task finishes and no worker is left), then ClusterError says so: a run never waits
    forever. A scheduler that cannot be reached is a ClusterError naming it. Each shard is read ``batch_rows`` reports
    at a time, here or on a worker, so memory is bounded by the batch whatever the shard's
    size. ``progress``: a bar of the reports counted on stderr (in this process by batch, on
    Dask by completed shard). Returns dict(counts, estimate, n, oracle, shards, method).
    """
    if oracle != "pi-rappor":
        raise ValueError(f"only 'pi-rappor' report files are supported, got {oracle!r}")
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be a string, got {type(scheduler).__name__}")
    retries = V.integer_at_least(retries, "retries", 0, 100)
    worker_timeout = V.positive_finite(worker_timeout, "worker_timeout")
    in_memory_rows = V.integer_at_least(in_memory_rows, "in_memory_rows", 0)
    batch_rows = check_batch_rows(batch_rows)
    if n_workers is not None:
        n_workers = V.integer_at_least(n_workers, "n_workers", 1, 1024)
    if client is None and scheduler not in ("auto", "memory", "local"):
        check_scheduler(scheduler, security, allow_insecure)
    orc, shards = collect(paths)
    n_total = sum(s.rows for s in shards)
    if client is None and (scheduler == "memory" or (scheduler == "auto"
                                                     and n_total < in_memory_rows)):
        with JitClock(announce=progress):  # says so when the histogram kernels compile
            return _in_memory(orc, shards, batch_rows, progress)
    dist = _dask()
    wait = _Watch(retries, worker_timeout)
    if client is not None:
        counts, n = _on_cluster(dist, client, orc, shards, retries, batch_rows, progress, wait)
        return _result(orc, counts, n, shards, "dask")
    cluster = None
    if scheduler in ("auto", "local"):
        cluster = dist.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                    dashboard_address=None)
    try:
        with _connect(dist, cluster if cluster is not None else scheduler, security,
                      worker_timeout) as own:
            counts, n = _on_cluster(dist, own, orc, shards, retries, batch_rows, progress, wait)
    finally:
        if cluster is not None:
            cluster.close()
    return _result(orc, counts, n, shards, "dask")


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


def _on_cluster(dist, client, orc: PIRappor, shards, retries: int,
                batch_rows: int = READ_BATCH_ROWS, progress: bool = False, watch=None):
    """One task per shard; a task lost to worker deaths (KilledWorker) is resubmitted.
    ``progress``: a bar of the reports counted, advanced as each shard completes. ``watch``
    (a _Watch) bounds the waits for a live worker: before submitting, and whenever no task
    finished for its timeout while the scheduler had no worker."""
    watch = _Watch(retries, WORKER_TIMEOUT) if watch is None else watch
    watch.workers(dist, client)
    meta = json.dumps(oracle_metadata(orc), sort_keys=True)
    run = uuid.uuid4().hex[:12]
    counts, n = np.zeros(orc.k, np.int64), 0
    expected = sum(s.rows for s in shards)

    def submit(i, attempt):
        return client.submit(shard_counts, shards[i], meta, batch_rows, pure=False,
                             key=f"ldpcompress-shard-{i}-try{attempt}-{run}")

    pending = {submit(i, 0): (i, 0) for i in range(len(shards))}
    counted = bar(expected, "aggregate", progress, unit="reports")
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
            except (ValueError, TypeError):  # a bad shard, named by read_shard
                raise
            except Exception as err:
                raise ClusterError(f"{shards[i].path}: the task failed on the cluster: "
                                   f"{type(err).__name__}: {err}") from None
            c, m = _checked_result(result, shards[i], orc.k)
            counts += c
            n += m
            counted.update(m)
            fut.release()
    except BaseException:
        client.cancel(list(pending))
        raise
    finally:
        counted.close()
    if n != expected:
        raise ClusterError(f"the cluster returned {n} reports, the shards hold {expected}")
    return counts, n


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


def _checked_result(result, shard: Shard, k: int) -> tuple[np.ndarray, int]:
    """A worker's (counts, n) for one shard: n must be the manifest's row count and the counts
    k integers in [0, n] (the cluster is trusted, but a broken one must not go unnoticed)."""
    try:
        c, m = result
        c = np.asarray(c)
        ok = (m == shard.rows and c.shape == (k,) and c.dtype.kind in "iu"
              and (k == 0 or (c.min() >= 0 and c.max() <= m)))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ClusterError(f"{shard.path}: the cluster returned a malformed result for this "
                           f"shard ({shard.rows} reports, k = {k})")
    return c.astype(np.int64), int(m)


def _in_memory(orc: PIRappor, shards, batch_rows: int = READ_BATCH_ROWS,
               progress: bool = False) -> dict:
    """Shard by shard, each read batch_rows reports at a time; batches of small shards are
    pooled up to batch_rows reports per kernel call (fewer parallel regions). Memory: about
    two batches, whatever the shards' sizes. A shard that fails a check (even at its end)
    aborts the whole aggregation: no partial histogram is ever returned. ``progress``: a bar
    of the reports counted, on stderr."""
    counts, n = np.zeros(orc.k, np.int64), 0
    pool: list[FieldReports] = []
    pooled = 0

    def flush():
        nonlocal counts, n, pool, pooled
        if pool:
            reports = pool[0] if len(pool) == 1 else FieldReports(
                np.concatenate([r.a for r in pool]), np.concatenate([r.b for r in pool]), orc.p)
            counts += orc.counts(reports)
            n += len(reports)
            pool, pooled = [], 0

    expected = sum(s.rows for s in shards)
    with bar(expected, "aggregate", progress, unit="reports") as counted:
        for s in shards:
            for reports in iter_shard(s, orc, batch_rows):
                if pooled + len(reports) > batch_rows:
                    flush()
                pool.append(reports)
                pooled += len(reports)
                counted.update(len(reports))
        flush()
    if n != expected:  # pragma: no cover (iter_shard checks every shard)
        raise ValueError(f"counted {n} reports, the shards hold {expected}")
    return _result(orc, counts, n, shards, "memory")


def _result(orc, counts, n, shards, method) -> dict:
    return dict(counts=counts, n=n, oracle=orc, shards=len(shards), method=method,
                estimate=binary_estimate(counts, n, orc.a0, orc.a1))


def aggregate_in_memory(paths, batch_rows: int = READ_BATCH_ROWS,
                        progress: bool = False) -> dict:
    """The same result in this process, shard by shard, batch_rows reports at a time."""
    batch_rows = check_batch_rows(batch_rows)
    with JitClock(announce=progress):
        return _in_memory(*collect(paths), batch_rows, progress)
