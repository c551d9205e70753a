"""Hostile inputs, round three: no wait that never ends, no traceback instead of a clear
error, no silent change, messages that name the culprit, and the inverse search over an
oracle's own discontinuities."""
import json
import os
import resource
import subprocess
import sys
import threading
import unicodedata

import mpmath as mp
import numpy as np
import pytest

import ldpcompress as L
from ldpcompress import ItemDomain
from ldpcompress.accounting import Accountant, PureDP
from ldpcompress.accounting import inverse as I
from ldpcompress.accounting.blanket import structure
from ldpcompress.cli import main
from ldpcompress.core import items as ITEMS
from reference import mp_krr_worst_delta

BIG = (2 ** 1024, -(2 ** 1024), 10 ** 400)


def _cli(*args, timeout=120, **kw):
    """The CLI in a child process (a hang is a failure, not a stuck test run)."""
    return subprocess.run([sys.executable, "-m", "ldpcompress", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, **kw)


# -- item 3: waits that never end -------------------------------------------------------------

def _refused_promptly(fn, path, fifo, match):
    """fn(path) must raise ValueError matching ``match`` within a minute; a reader blocked on
    the FIFO (the bug) is released by opening its write end, and the test fails."""
    out = {}

    def run():
        try:
            fn(path)
            out["result"] = "returned"
        except Exception as err:  # noqa: BLE001 (reported below)
            out["result"] = err
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # EOF for the blocked reader
        worker.join(10)
        pytest.fail(f"{fn.__qualname__}({path}) blocked on a FIFO")
    err = out["result"]
    assert isinstance(err, ValueError), err
    assert match in str(err), err


class _CountingList(list):
    iterations = 0

    def __iter__(self):
        type(self).iterations += 1
        return super().__iter__()


def test_compose_does_not_rescan_the_events():
    """Accountant.load composed 20,000 events in 133 s: every compose() re-summed all rounds."""
    acct = Accountant()
    acct.events = _CountingList()
    for i in range(200):
        acct.compose(PureDP(0.1 + i * 1e-3), times=2)
    assert _CountingList.iterations == 0 and acct.rounds == 400
    state = json.loads(acct.to_json())
    state["events"] = state["events"] * 100  # 20,000 events
    loaded = Accountant.from_json(json.dumps(state))
    assert loaded.rounds == 40_000 and len(loaded.events) == 20_000


def test_domain_file_refuses_fifos_devices_directories_and_huge_files(tmp_path, monkeypatch):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, what in ((fifo, "FIFO"), ("/dev/zero", "character device"),
                       (tmp_path, "directory")):
        _refused_promptly(ItemDomain.from_file, path, fifo, f"{path}: is a {what}")
    big = tmp_path / "big.txt"
    big.write_text("a\nb\nc\n")
    monkeypatch.setattr(ITEMS, "MAX_DOMAIN_FILE_BYTES", 4)
    with pytest.raises(ValueError, match=f"{big}: an item domain file is at most 4 bytes"):
        ItemDomain.from_file(big)
    with pytest.raises(ValueError, match="missing"):  # not a raw OSError
        ItemDomain.from_file(tmp_path / "nothing")


@pytest.mark.parametrize("command", ["aggregate", "encode"])
def test_cli_domain_fifo_does_not_hang(tmp_path, command):
    pytest.importorskip("pyarrow")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    csv = tmp_path / "items.csv"
    csv.write_text("a\nb\n")
    args = ["aggregate", tmp_path / "none", "--domain", fifo] if command == "aggregate" else \
        ["encode", "--csv", csv, "--domain", fifo, "--eps", 1, "--out", tmp_path / "o"]
    r = _cli(*args, timeout=60)
    assert r.returncode == 2 and f"--domain {fifo}: is a FIFO" in r.stderr, r.stderr


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
        r = _cli("aggregate", tmp_path / "set", "--scheduler", cluster.scheduler_address,
                 "--retries", 1, "--worker-timeout", 0.3)
    assert r.returncode == 2 and "no live worker: waited 2 times" in r.stderr, r.stderr


def test_pirappor_counting_algorithm_cost_limit():
    oracle = L.PIRappor(2, 1e-9)  # s ~ 1e9: 'enum' costs n s
    reports = oracle.randomize_many(np.zeros(20, np.int64))
    with pytest.raises(ValueError, match=r"algorithm='enum' costs n x s = 2\.06e\+10 steps.*"
                                         r"limit 1e\+10.*'direct' costs 40"):
        oracle.counts(reports, algorithm="enum")
    direct = oracle.counts(reports, algorithm="direct")
    assert np.array_equal(oracle.counts(reports), direct)
    a, b = reports.a, reports.b
    by_definition = [int(np.sum((a * (j + 1) + b) % oracle.p < oracle.s)) for j in range(2)]
    assert direct.tolist() == by_definition


def test_pirappor_counts_in_bounded_calls(monkeypatch):
    """Long counts run as several kernel calls (Ctrl-C is seen between them); same counts."""
    from ldpcompress.randomizers import pirappor as PR
    oracle = L.PIRappor(50, 2.0)
    reports = oracle.randomize_many(np.arange(3000) % 50)
    whole = oracle.counts(reports)
    calls = []
    real = PR.PIRappor._count_slice
    monkeypatch.setattr(PR, "COUNT_WORK_PER_CALL", 50 * 100)
    monkeypatch.setattr(PR.PIRappor, "_count_slice",
                        lambda self, *a: calls.append(1) or real(self, *a))
    for algorithm in ("direct", "enum"):
        assert np.array_equal(oracle.counts(reports, algorithm=algorithm), whole)
    assert len(calls) > 2


# -- item 4: tracebacks instead of clear errors -----------------------------------------------

@pytest.mark.parametrize("make", [
    lambda v: L.KRR(v, 1.0), lambda v: L.KRR(5, v), lambda v: L.PIRappor(5, v),
    lambda v: L.OLH(v, 1.0), lambda v: L.PrivUnit2(v, 1.0), lambda v: L.ShuffledRound(v, 1.0),
    lambda v: L.epsilon(v, 1.0, 1e-6), lambda v: L.epsilon(100, v, 1e-6),
    lambda v: L.Accountant(h=v), lambda v: L.Accountant(orders=[v]),
    lambda v: L.Accountant().compose(PureDP(1.0), times=v),
    lambda v: L.PIRappor(5, 1.0).intervals(np.zeros(5), 10, level=v),
    lambda v: L.compress(L.PrivUnit2(4, 1.0), v), lambda v: L.project_simplex(np.ones(3), v),
    lambda v: L.Gaussian(sigma=v), lambda v: L.Laplace(scale=1.0, sensitivity=v)])
def test_integers_beyond_the_double_range_are_clear_errors(make):
    for v in BIG:
        with pytest.raises((ValueError, TypeError), match=r"\b(must|got)\b") as err:
            make(v)
        assert len(str(err.value)) < 300  # the 400-digit number is not echoed whole


def test_huge_integer_parameters_are_taken_exactly():
    with pytest.raises(ValueError, match="blocks must be an integer in"):
        L.epsilon(100, 1.0, 1e-6, k=3, blocks=2 ** 62 + 1)
    from ldpcompress.core import validate as V
    assert V.integer_at_least(2 ** 62 - 1, "x", 0, 2 ** 62) == 2 ** 62 - 1


def test_deeply_nested_ledger_and_boolean_version(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=f"{path}: accountant state is nested too deeply"):
        Accountant.load(path)
    state = json.loads(Accountant().compose(PureDP(1.0)).to_json())
    state["version"] = True
    with pytest.raises(ValueError, match="version True"):
        Accountant.from_json(json.dumps(state))
    state["version"] = 1
    state["settings"]["h"] = True
    with pytest.raises(ValueError, match="settings: h must be a real number"):
        Accountant.from_json(json.dumps(state))


def test_ledger_special_files_are_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        _refused_promptly(Accountant.load, path, fifo, "not a regular file")


def test_subset_selection_with_two_items_against_brute_force():
    """SubsetSelection(k=2) raised ZeroDivisionError in the blanket profile: its (b1, b2) law
    has no mass outside {(1,0), (0,1)}. It is binary randomized response: compare with the
    exact worst case over all neighbouring datasets (mpmath)."""
    oracle = L.SubsetSelection(2, 1.0)
    st = structure(oracle)
    with mp.workdps(50):
        a1 = mp.mpf(st.a1.numerator) / st.a1.denominator
        e0 = mp.log(a1 / (1 - a1))
        for n in (1, 2, 3, 4):
            for eps in (0.0, 0.3, 0.9):
                res = L.delta(n, eps=eps, oracle=oracle)
                assert mp.mpf(res.value) >= mp_krr_worst_delta(n, 2, e0, eps), (n, eps)
    assert L.epsilon(1000, delta=1e-6, oracle=oracle).method in ("blanket", "krr_blanket", "binary_exact")
    # the blanket profile itself (its (b1, b2) law has no "rest" class) against brute force
    from ldpcompress.accounting.blanket import BlanketProfile
    with mp.workdps(50):
        for n in (2, 3):
            prof = BlanketProfile(n, st)
            for eps in (0.3, 0.9):
                assert mp.mpf(prof.delta_at(eps)) >= mp_krr_worst_delta(n, 2, e0, eps)


def test_cli_subset_with_two_items():
    assert main(["amplify", "--oracle", "subset", "--k", "2", "--n", "1000", "--eps0", "1",
                 "--delta", "1e-6"]) == 0
    assert main(["demo", "--oracle", "subset", "--k", "2", "--n", "2000"]) == 0


# -- item 5: silent changes ---------------------------------------------------------------------

def test_seed_is_taken_exactly_or_refused(capsys):
    assert main(["demo", "--n", "1000", "--k", "4", "--seed", "9007199254740993",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["seed"] == 9007199254740993
    assert main(["demo", "--n", "1000", "--k", "4", "--seed", "9.007199254740993e15"]) == 2
    assert "must be given as digits" in capsys.readouterr().err


@pytest.mark.parametrize("body,culprit", [
    ("a\n\ufeffb\n", "U+FEFF"), ("a\nb\x00\n", "U+0000"), ("a\nb\x0bc\n", "U+000B"),
    ("a\nb\u2028c\n", "U+2028"), ("a\nb\u2029c\n", "U+2029"), ("a\nb\u200b\n", "U+200B"),
    ("a\nx\u00a0y\n", "U+00A0"), ("caf\u00e9\ncafe\u0301\n", "canonically equivalent"),
    ("a\nb\u202ec\n", "U+202E")])
def test_domain_names_that_render_alike_are_refused(tmp_path, body, culprit):
    path = tmp_path / "d.txt"
    path.write_bytes(body.encode("utf-8"))
    with pytest.raises(ValueError, match=f"{path}: line 2") as err:
        ItemDomain.from_file(path)
    assert culprit in str(err.value)
    names = body.strip("\n").split("\n")
    with pytest.raises(ValueError, match="names\\[1\\]"):
        ItemDomain(names)


def test_domain_accepts_plain_unicode_names(tmp_path):
    names = ["caf\u00e9", "na\u00efve", "\u6771\u4eac", "a b", "\U0001F600"]
    path = tmp_path / "d.txt"
    path.write_bytes(("\ufeff" + "\r\n".join(names) + "\r\n").encode())
    assert list(ItemDomain.from_file(path).names) == names
    assert all(unicodedata.is_normalized("NFC", n) for n in names)


def test_complex_vectors_are_refused():
    pu = L.PrivUnit2(4, 1.0)
    v = np.array([0.5 + 0.1j, 0.5, 0.5, 0.1])
    with pytest.raises(TypeError, match="complex"):
        pu.randomize(v)
    with pytest.raises(TypeError, match="complex"):
        L.compress(pu).encode(v)
    with pytest.raises(TypeError, match="bool"):
        pu.randomize(np.array([True, False, False, False]))


# -- item 6: messages that name the culprit ---------------------------------------------------

def test_level_near_one():
    from ldpcompress.randomizers.estimator import normal_quantile
    with mp.workdps(40):
        for level in (0.95, 0.9999999999999999, 0.5):
            assert abs(normal_quantile(level) - float(mp.sqrt(2) * mp.erfinv(level))) < 1e-12
    assert normal_quantile(0.9999999999999999) > 8.29


def test_cli_messages_name_the_culprit(tmp_path, capsys):
    assert main(["amplify", "--k", "1", "--n", "10", "--eps0", "1", "--delta", "1e-6"]) == 2
    assert "--k must be an integer in [2, 2147483647], got 1" in capsys.readouterr().err
    assert main(["simulate", "--n", "10", "--k", "4", "--out", "/proc/1"]) == 2
    assert "/proc/1: is on a file system without storage" in capsys.readouterr().err
    assert main(["amplify", "--help", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["command"] == "amplify" and "--oracle" in out["results"]["help"]


def test_scheduler_inproc_is_named():
    pytest.importorskip("distributed")
    from ldpcompress.scale import distributed as D
    with pytest.raises(ValueError, match="scheduler inproc://x: an inproc:// address is"):
        D.check_scheduler("inproc://x")


def test_bad_csv_byte_names_its_line(tmp_path):
    pytest.importorskip("pyarrow")
    from ldpcompress.scale.items_csv import count_csv_items
    path = tmp_path / "items.csv"
    path.write_bytes(b"1\n2\n3\xff\n4\n")
    with pytest.raises(ValueError, match=f"{path}, line 3, byte 2: not UTF-8"):
        count_csv_items(path, 8)


def test_file_size_limit_names_the_file(tmp_path):
    pytest.importorskip("pyarrow")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
    # 200,000 reports in 8 shards: about 90 kB each (3.6 bytes a PI-RAPPOR report), above 20 kB
    r = _cli("simulate", "--n", 200000, "--k", 8, "--out", tmp_path / "big", preexec_fn=limit)
    assert r.returncode == 2 and "big/reports-00000.parquet: cannot write (File too large)" \
        in r.stderr, r.stderr


# -- item 8: max_eps0 over an oracle's discontinuities ----------------------------------------

def test_olh_max_eps0_searches_the_bucket_count_jumps():
    """OLH's realised law jumps with g = round(e^eps + 1): max_eps0 returned 6.378642 (g = 590)
    although 6.37928 (g = 591) is certified too."""
    n, eps, delta, k = 10 ** 4, 1.0, 1e-6, 1000
    factory = lambda e: L.OLH(k, e)  # noqa: E731
    got = L.max_eps0(n, eps, delta, factory)
    assert I.certified(n, None, eps, delta, oracle=factory(got))
    assert got >= 6.37928 and factory(got).g >= 591
    # nothing above it is certified: a fine grid and every plateau start up to +0.05
    grid = list(np.linspace(got, got + 0.05, 80)[1:])
    m = factory(got).g
    while np.log(m - 0.5) < got + 0.05:
        grid += [np.nextafter(np.log(m - 0.5), np.inf), np.log(m - 0.5) + 1e-9]
        m += 1
    for e in sorted(grid):
        if e > got:
            assert not I.certified(n, None, eps, delta, oracle=factory(float(e))), e
