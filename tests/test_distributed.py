"""scale/distributed.py against a hostile network and stuck workers (issue 27): the local
cluster listens on loopback with no dashboard unless one is asked for, and a stopped worker
ends the run with an error naming it within the worker timeout."""
import os
import signal
import urllib.error
import urllib.request

import numpy as np
import pytest

import ldpcompress as L
from hang import cli_in_child, no_hang
from ldpcompress.cli import main
from ldpcompress.randomizers import KRR
from ldpcompress.scale import distributed as D
from ldpcompress.scale import report_files as RF

pytest.importorskip("pyarrow")


@pytest.mark.parametrize("address, message", [
    ("0.0.0.0:8787", "not a loopback address; the dashboard lists the workers"),
    (":8787", "name the interface"),
    ("8787", "must be host:port"),
    ("127.0.0.1:99999", "must be host:port"),
    ("10.1.2.3:8787", "pass --allow-insecure"),
    (8787, "must be host:port")])
def test_a_dashboard_off_loopback_is_refused(address, message):
    with pytest.raises(ValueError, match=message):
        D.check_dashboard(address)


def test_a_dashboard_is_allowed_where_asked():
    assert D.check_dashboard(None) is None
    assert D.check_dashboard("127.0.0.1:8787") == "127.0.0.1:8787"
    assert D.check_dashboard("localhost:0") == "localhost:0"
    assert D.check_dashboard("10.1.2.3:8787", allow_insecure=True) == "10.1.2.3:8787"


def test_the_cli_refuses_a_public_dashboard(tmp_path, capsys):
    assert main(["aggregate", str(tmp_path), "--dashboard", "0.0.0.0:8787"]) == 2
    assert "--dashboard 0.0.0.0:8787: not a loopback address" in capsys.readouterr().err


def _set(tmp_path, n=40, shards=2):
    r = KRR(4, 1.0)
    reports = r.randomize_many(np.arange(n) % 4)
    RF.write_reports(tmp_path / "set", r, reports, shards=shards)
    return tmp_path / "set", r, reports


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as page:
            return page.status
    except urllib.error.HTTPError as err:
        return err.code


@pytest.mark.slow
def test_the_local_cluster_is_loopback_without_http_routes(tmp_path, monkeypatch):
    """Before: ``--scheduler local`` served the dashboard on 0.0.0.0 (its JSON listed the
    workers, their directories and memory to the network)."""
    import distributed
    out, r, reports = _set(tmp_path)
    seen = []

    class Probe(distributed.LocalCluster):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            sockets = list(self.scheduler.http_server._sockets.values())
            hosts = {s.getsockname()[0] for s in sockets}
            port = sockets[0].getsockname()[1]
            seen.append((self.scheduler_address, hosts, [
                _get(f"http://127.0.0.1:{port}{path}") for path in
                ("/json/identity.json", "/info/main/workers.html", "/status")]))

    monkeypatch.setattr(D._dask(), "LocalCluster", Probe)  # dask.distributed, as used
    with no_hang("a local cluster run"):
        res = D.aggregate([out], scheduler="local", n_workers=1)
    np.testing.assert_array_equal(res["summary"], r.summarize(reports))
    [(address, hosts, statuses)] = seen
    assert address.startswith("tcp://127.0.0.1:") and hosts == {"127.0.0.1"}
    assert statuses == [404, 404, 404]


@pytest.mark.slow
def test_a_stopped_worker_ends_the_run_within_the_worker_timeout(tmp_path, capsys):
    """Before: with a SIGSTOPped worker, ``--worker-timeout 10`` was still waiting at 300 s
    (the scheduler still listed the worker). Its silence (no heartbeat) now ends the run."""
    import distributed
    out, _, _ = _set(tmp_path)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            with no_hang("a run on a stopped worker", 90):
                with pytest.raises(D.ClusterError, match=r"reports-0000\d.parquet: its worker "
                                   r"tcp://127.0.0.1:\d+ has sent no heartbeat for \d+ s, more "
                                   r"than the 3[.\d]* s allowed \(the worker timeout of 3 s "
                                   r"plus twice the stated time\): it is stopped or stuck"):
                    D.aggregate([out], client=client, worker_timeout=3)
                assert main(["aggregate", str(out), "--scheduler", cluster.scheduler_address,
                             "--worker-timeout", "3"]) == 2
                err = capsys.readouterr().err
                assert "has sent no heartbeat" in err and "Traceback" not in err
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)


def _zero_worker_cluster():
    distributed = pytest.importorskip("distributed")
    return distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://",
                                    host="127.0.0.1", dashboard_address=None)


def test_dask_without_workers_times_out_and_retries_apply(tmp_path):
    pytest.importorskip("pyarrow")
    from ldpcompress.scale import distributed as D
    from ldpcompress.scale import report_files as RF
    oracle = L.PIRappor(8, 2.0)
    RF.write_reports(tmp_path / "set", oracle, oracle.randomize_many(np.arange(40) % 8),
                     shards=2)
    with _zero_worker_cluster() as cluster:
        for retries in (0, 2):
            with pytest.raises(D.ClusterError, match=f"no live worker: waited {retries + 1} "
                                                     f"times 0.3 s \\(retries = {retries}\\)"):
                D.aggregate([tmp_path / "set"], scheduler=cluster.scheduler_address,
                            retries=retries, worker_timeout=0.3)
        r = cli_in_child("aggregate", tmp_path / "set", "--scheduler", cluster.scheduler_address,
                 "--retries", 1, "--worker-timeout", 0.3)
    assert r.returncode == 2 and "no live worker: waited 2 times" in r.stderr, r.stderr


def test_scheduler_inproc_is_named():
    pytest.importorskip("distributed")
    from ldpcompress.scale import distributed as D
    with pytest.raises(ValueError, match="scheduler inproc://x: an inproc:// address is"):
        D.check_scheduler("inproc://x")
