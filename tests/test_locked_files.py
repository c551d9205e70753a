"""A saved ledger is a record that cannot lose a round (issue 27, core/locked_files.py,
accounting/state.py, ``compose --ledger``): concurrent appends all land, a symlink is written
through to its target, a read-only ledger is refused and left alone, the ledger is written only
after its query succeeded, and hostile files in the ledger's or the lock's place (loops of
links, directories, FIFOs, a lock held forever, a write cut short) are refused naming the path.
"""
import fcntl
import json
import multiprocessing
import os
import stat
import subprocess
import sys

import pytest

from hang import no_hang
from ldpcompress.accounting import Accountant, PureDP, ShuffledRound
from ldpcompress.cli.main import main
from ldpcompress.core import locked_files as LF

ROUND = ["compose", "--n", "1e4", "--eps0", "1", "--rounds", "2", "--delta", "1e-6"]


def _events(path):
    return [(e["event"], e.get("n"), e["times"]) for e in json.loads(path.read_text())["events"]]


def _append(argv, out, start):
    """A writer process: waits for the others, runs compose with stdout to ``out``."""
    start.wait()
    with open(out, "w") as fh:
        sys.stdout = fh
        code = main(argv)
        fh.flush()
    os._exit(code)


@pytest.mark.slow
def test_concurrent_appends_all_land(tmp_path):
    """Issue 27: one ledger plus six parallel `compose --ledger` appends kept 5 of 7 events
    (no lock, last writer wins). Eight writer processes released at once (forked from this
    one, so they start in milliseconds): every round is there exactly once."""
    path = tmp_path / "ledger.json"
    assert main(ROUND + ["--ledger", str(path)]) == 0
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(8)
    writers = [ctx.Process(target=_append, args=(
        ["compose", "--n", str(2000 + i), "--eps0", "1", "--rounds", str(i + 1), "--delta",
         "1e-6", "--ledger", str(path), "--json"], tmp_path / f"out{i}.json", start))
        for i in range(8)]
    with no_hang("eight concurrent compose --ledger", 300):
        for w in writers:
            w.start()
        for w in writers:
            w.join()
    assert [w.exitcode for w in writers] == [0] * 8
    events = _events(path)
    assert sorted(events) == sorted([("ShuffledRound", 10_000, 2)]
                                    + [("ShuffledRound", 2000 + i, i + 1) for i in range(8)])
    # each writer reported the ledger as it wrote it: its own round and the ones before it
    sizes = sorted(json.loads((tmp_path / f"out{i}.json").read_text())["results"]["ledger"]
                   ["rounds"] for i in range(8))
    assert len(set(sizes)) == 8 and sizes[-1] == 2 + sum(range(1, 9))


def test_api_ledger_is_a_locked_read_modify_write(tmp_path):
    path = tmp_path / "ledger.json"
    with Accountant.ledger(path, h=1e-3) as acct:
        assert acct.events == [] and acct.h == 1e-3
        acct.compose(PureDP(1.0), times=3)
        fd = os.open(LF.lock_path(path), os.O_RDWR)
        try:  # another open of the lock file (another writer) cannot take it meanwhile
            with pytest.raises(BlockingIOError, match="Resource temporarily unavailable"):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
        acct.save(path)  # re-entrant: the same thread already holds the ledger's lock
    assert Accountant.load(path).events == [(PureDP(1.0), 3)]
    before = path.read_bytes()
    with pytest.raises(ZeroDivisionError, match="the query failed"):
        with Accountant.ledger(path) as acct:
            acct.compose(PureDP(2.0))
            raise ZeroDivisionError("the query failed")  # nothing is written
    assert path.read_bytes() == before
    with Accountant.ledger(tmp_path / "absent.json") as acct:
        pass  # nothing added: no file created
    assert not (tmp_path / "absent.json").exists()


def test_a_failed_query_leaves_the_ledger_as_it_was(tmp_path, capsys):
    """Issue 27: `--gamma 1 --relation add_remove` exits 2 (no finite eps) yet appended its
    rounds, 3 retries recorded 3 rounds, and the ledger stayed unqueryable. Now nothing is
    written: the file is byte-identical, or absent if it was absent."""
    path = tmp_path / "r.json"
    bad = ROUND + ["--gamma", "1", "--relation", "add_remove", "--ledger", str(path)]
    for _ in range(3):
        assert main(bad) == 2
        assert "no method gives a finite eps" in capsys.readouterr().err
    assert not path.exists()
    assert main(ROUND + ["--ledger", str(path)]) == 0
    before = path.read_bytes()
    for _ in range(3):
        assert main(bad) == 2
    assert path.read_bytes() == before
    capsys.readouterr()
    assert main(["compose", "--delta", "1e-6", "--ledger", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]["ledger"]["rounds"] == 2


def test_a_symlinked_ledger_is_written_through_to_its_target(tmp_path):
    """Issue 27: the symlink was replaced by a regular file and the target never got the
    rounds. The link stays a link, the target gets the rounds and keeps its mode."""
    target = tmp_path / "store" / "ledger.json"
    target.parent.mkdir()
    Accountant().compose(PureDP(1.0)).save(target)
    os.chmod(target, 0o640)
    link = tmp_path / "link.json"
    chain = tmp_path / "chain.json"
    link.symlink_to(target)
    chain.symlink_to(link)  # a chain of links reaches the same file
    assert main(ROUND + ["--ledger", str(link)]) == 0
    assert main(ROUND[:2] + ["3e4"] + ROUND[3:] + ["--ledger", str(chain)]) == 0
    assert link.is_symlink() and chain.is_symlink()
    assert [n for _, n, _ in _events(target)[1:]] == [10_000, 30_000]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(os.listdir(target.parent)) == [".ledger.json.lock", "ledger.json"]


def test_a_read_only_ledger_is_refused_and_left_alone(tmp_path, capsys):
    """Issue 27: a chmod 444 ledger was overwritten and its mode reset to 0600 (root writes
    any file: the mode's write bits decide)."""
    path = tmp_path / "ledger.json"
    Accountant().compose(PureDP(1.0)).save(path)
    os.chmod(path, 0o444)
    before = path.read_bytes()
    assert main(ROUND + ["--ledger", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "read-only" in err and "0444" in err
    assert path.read_bytes() == before and stat.S_IMODE(os.stat(path).st_mode) == 0o444
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert main(ROUND + ["--ledger", str(link)]) == 2  # through a link too, naming both
    err = capsys.readouterr().err
    assert str(link) in err and str(path) in err and "read-only" in err
    with pytest.raises(ValueError, match="read-only"):
        Accountant().compose(PureDP(2.0)).save(path)
    # reading a read-only ledger is fine
    assert main(["compose", "--delta", "1e-6", "--ledger", str(path)]) == 0


def test_a_new_ledger_gets_the_usual_mode(tmp_path):
    path = tmp_path / "ledger.json"
    old = os.umask(0o027)
    try:
        Accountant().compose(PureDP(1.0)).save(path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


@pytest.mark.parametrize("make, words", [
    (lambda p: (p.symlink_to(p.parent / "b"), (p.parent / "b").symlink_to(p)), "loop of symlinks"),
    (lambda p: p.symlink_to(p), "loop of symlinks"),
    (lambda p: p.symlink_to(p.parent / "nowhere.json"), "does not exist"),
    (lambda p: p.mkdir(), "directory"),
    (lambda p: os.mkfifo(p), "FIFO"),
])
def test_hostile_files_in_the_ledgers_place_are_refused(tmp_path, capsys, make, words):
    path = tmp_path / "ledger.json"
    make(path)
    with no_hang(f"compose --ledger over {words}", 60):
        assert main(ROUND + ["--ledger", str(path)]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and words in err, err
        assert main(["compose", "--delta", "1e-6", "--ledger", str(path)]) == 2
        assert str(path) in capsys.readouterr().err
        with pytest.raises(ValueError, match=str(path)):
            Accountant().compose(PureDP(1.0)).save(path)
    assert not (tmp_path / "nowhere.json").exists()  # a dangling link creates nothing


@pytest.mark.parametrize("make", [lambda p: p.mkdir(), lambda p: p.symlink_to("/dev/null"),
                                  lambda p: os.mkfifo(p)])
def test_hostile_lock_files_are_refused(tmp_path, capsys, make):
    path = tmp_path / "ledger.json"
    make(tmp_path / ".ledger.json.lock")
    with no_hang("compose --ledger with a hostile lock file", 60):
        assert main(ROUND + ["--ledger", str(path)]) == 2
    err = capsys.readouterr().err
    assert ".ledger.json.lock" in err and "lock file" in err
    assert not path.exists()


def test_a_lock_held_by_another_process_is_waited_for_then_refused(tmp_path, capsys):
    path = tmp_path / "ledger.json"
    Accountant().compose(PureDP(1.0)).save(path)
    before = path.read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time\n"
         f"f = open({LF.lock_path(path)!r}, 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
         "print('held', flush=True); time.sleep(120)"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        with no_hang("compose --ledger against a held lock", 60):
            assert main(ROUND + ["--ledger", str(path), "--lock-timeout", "0.3"]) == 2
        err = capsys.readouterr().err
        assert ".ledger.json.lock" in err and "--lock-timeout" in err and "0.3 s" in err
        assert path.read_bytes() == before
        # a reader does not need the lock
        assert main(["compose", "--delta", "1e-6", "--ledger", str(path)]) == 0
    finally:
        holder.kill()
        holder.wait()
    assert main(ROUND + ["--ledger", str(path), "--lock-timeout", "5"]) == 0  # released
    assert len(Accountant.load(path).events) == 2
    capsys.readouterr()
    assert main(ROUND + ["--ledger", str(path), "--lock-timeout", "-1"]) == 2
    assert "--lock-timeout" in capsys.readouterr().err


def test_a_write_cut_short_leaves_the_old_ledger_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "ledger.json"
    Accountant().compose(PureDP(1.0)).save(path)
    before = path.read_bytes()

    def fail(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", fail)  # the disk fills while the new ledger is written
    with pytest.raises(ValueError, match="No space left.*left as it was"):
        Accountant().compose(PureDP(1.0)).compose(PureDP(2.0)).save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == [".ledger.json.lock", "ledger.json"]


def test_a_truncated_ledger_is_refused_not_overwritten(tmp_path, capsys):
    """A ledger cut short by a writer that did not write atomically (or a full disk): refused
    naming the file, never replaced by a ledger holding only the new rounds."""
    path = tmp_path / "ledger.json"
    acct = Accountant()
    for i in range(5):
        acct.compose(ShuffledRound(1000 + i, 1.0))
    acct.save(path)
    text = path.read_bytes()
    for cut in (1, len(text) // 3, len(text) - 2):
        path.write_bytes(text[:cut])
        assert main(ROUND + ["--ledger", str(path)]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and "not valid JSON" in err
        assert path.read_bytes() == text[:cut]
