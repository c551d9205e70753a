"""Reports are checked once where they enter: counts of the report checks (every class's
``check_reports`` and ``contract.check_columns``) and of the checks of n over whole runs: a
compressed report set written and read back, an uncompressed set aggregated, and the demo
(docs/guide.md §7: a public method checks once and hands checked values to private hooks)."""
import collections
import sys

import numpy as np
import pytest

from ldpcompress.cli import main as cli_main
from ldpcompress.compression.compressed import CompressedRandomizer
from ldpcompress.core import validate as V
from ldpcompress.core.entropy import Entropy
from ldpcompress.randomizers import contract, registry
from ldpcompress.scale.distributed import aggregate_in_memory
from ldpcompress.scale.writer import write_reports

N = 4321  # a value no other argument of these calls has


def _classes(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _classes(sub)


@pytest.fixture
def counts(monkeypatch):
    """A Counter of the calls of each report check: ("check_reports", class name) and
    ("check_columns",), and ("n",) for every check of the value N by the validators."""
    seen = collections.Counter()
    for name in registry.names():  # the library's classes loaded (they load lazily)
        registry.lookup(name)
    for cls in set(_classes(contract.LocalRandomizer)):
        if "check_reports" in vars(cls):
            def counted(self, reports, _f=vars(cls)["check_reports"], _name=cls.__name__):
                seen[("check_reports", _name)] += 1
                return _f(self, reports)
            monkeypatch.setattr(cls, "check_reports", counted)
    original = contract.check_columns

    def check_columns(*args, **kwargs):
        seen[("check_columns",)] += 1
        return original(*args, **kwargs)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("ldpcompress") and \
                getattr(module, "check_columns", None) is original:
            monkeypatch.setattr(module, "check_columns", check_columns)
    for name in ("users", "shuffle_users", "integer_at_least"):
        def n_check(value, *args, _f=getattr(V, name), **kwargs):
            if value == N and not isinstance(value, bool):
                seen[("n",)] += 1
            return _f(value, *args, **kwargs)
        monkeypatch.setattr(V, name, n_check)
    return seen


def _report_checks(counts) -> dict:
    return {k: v for k, v in counts.items() if k[0] != "n"}


def _reports(randomizer, n=N):
    items = np.arange(n) % 20
    return randomizer.randomize_many(items, Entropy.seeded_for_simulation(3))


def test_a_compressed_set_is_checked_once_per_write_and_once_per_read(counts, tmp_path):
    cr = CompressedRandomizer(registry.build("krr", {"k": 20, "eps": 2.0}))
    reports = _reports(cr)
    counts.clear()
    write_reports(tmp_path / "set", cr, reports, shards=1)
    write = _report_checks(counts)
    counts.clear()
    result = aggregate_in_memory(tmp_path / "set")
    read = _report_checks(counts)
    assert result.n == N
    # the write: to_columns checks the reports, the writer checks the columns it returns
    assert write == {("check_reports", "CompressedRandomizer"): 1, ("check_columns",): 1}, write
    # the read: from_columns checks the stored columns and the reports, once; the summary
    # takes them checked (main at 6deaee9: the compressed reports twice, and the decoded KRR
    # outputs once more inside the slow summarize_seeds default)
    assert read == {("check_reports", "CompressedRandomizer"): 1, ("check_columns",): 1}, read


def test_an_uncompressed_set_is_checked_once_per_read(counts, tmp_path):
    krr = registry.build("krr", {"k": 20, "eps": 2.0})
    write_reports(tmp_path / "set", krr, _reports(krr), shards=1)
    counts.clear()
    result = aggregate_in_memory(tmp_path / "set")
    assert result.n == N
    read = _report_checks(counts)
    # main at 6deaee9: the reports twice (from_columns, then summarize again)
    assert read == {("check_reports", "KRR"): 1, ("check_columns",): 1}, read


def test_the_demo_checks_its_reports_once(counts, capsys):
    assert cli_main(["demo", "--n", str(N), "--k", "20"]) in (0, None)
    capsys.readouterr()
    # the simulated clients' batches joined (PIRappor.concat checks what it joins), then the
    # server's read (estimate): once each
    assert _report_checks(counts) == {("check_reports", "PIRappor"): 2}, counts
    # n: the accounting side's checks (h31-events lowers them to <= 5): held at the value
    # measured on main at 6deaee9, so that it cannot grow meanwhile
    assert counts[("n",)] <= 105, counts
