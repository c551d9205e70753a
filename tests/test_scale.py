"""Server at scale (issue 7): report files, Dask aggregation, CLI, plots."""
import json

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.distributed")

from ldpcompress import amplification as A  # noqa: E402
from ldpcompress import distributed as D  # noqa: E402
from ldpcompress import report_files as RF  # noqa: E402
from ldpcompress.cli import main  # noqa: E402
from ldpcompress.pirappor import FieldReports, PIRappor  # noqa: E402


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    oracle = PIRappor(300, 3.0)
    xs = np.random.default_rng(0).integers(0, 300, 50_000)
    RF.write_reports(out, oracle, oracle.randomize_many(xs), shards=5)
    return out, oracle, xs


@pytest.mark.slow
def test_dask_equals_in_memory(report_dir):
    out, oracle, xs = report_dir
    dist = D.aggregate([str(out)], n_workers=2)
    mem = D.aggregate_in_memory([str(out)])
    assert dist["n"] == mem["n"] == xs.size
    assert np.array_equal(dist["counts"], mem["counts"])
    f = np.bincount(xs, minlength=300)
    z = (dist["estimate"] - f) / np.sqrt(oracle.variance(xs.size, f))
    assert np.max(np.abs(z)) < 5


def test_bad_files_are_named(report_dir, tmp_path):
    out, oracle, _ = report_dir
    good = sorted(str(p) for p in out.glob("*.parquet"))
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match="corrupt.parquet"):
        D.aggregate_in_memory(good + [str(corrupt)])
    other = PIRappor(300, 1.0)
    RF.write_reports(tmp_path / "other", other, other.randomize_many(np.arange(10)), 1)
    with pytest.raises(ValueError, match="other"):
        D.aggregate_in_memory(good + [str(tmp_path / "other")])
    bad = FieldReports(np.array([oracle.p + 1]), np.array([0]), oracle.p)
    RF.write_reports(tmp_path / "outside", oracle, FieldReports(np.array([1]), np.array([0]),
                                                                oracle.p), 1)
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = tmp_path / "outside" / "reports-00000.parquet"
    meta = pq.read_schema(path).metadata
    pq.write_table(pa.table({"a": bad.a, "b": bad.b}).replace_schema_metadata(meta), path)
    with pytest.raises(ValueError, match="outside F_"):
        D.aggregate_in_memory([str(path)])


def test_cli_encode_and_aggregate(tmp_path, capsys):
    items = tmp_path / "items.csv"
    items.write_text("item\n" + "\n".join(str(i % 7) for i in range(3000)) + "\n")
    assert main(["encode", "--csv", str(items), "--k", "10", "--eps", "2",
                 "--out", str(tmp_path / "enc")]) == 0
    res = D.aggregate_in_memory([str(tmp_path / "enc")])
    assert res["n"] == 3000
    bad = tmp_path / "bad.csv"
    bad.write_text("3\n12\n")
    assert main(["encode", "--csv", str(bad), "--k", "10", "--eps", "2",
                 "--out", str(tmp_path / "x")]) == 2
    assert "[0, 10)" in capsys.readouterr().err


def test_amplification_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "amp.png"
    assert main(["plot", "amplification", "--eps0", "3", "--n-range", "1e3", "1e5",
                 "--points", "3", "--k", "20", "--out", str(png), "--json"]) == 0
    assert png.stat().st_size > 1000
    data = json.loads(capsys.readouterr().out.splitlines()[-1])
    for n, g, c in zip(data["n"], data["general"], data["closed_form"]):
        assert g == A.general_epsilon(n, 3.0, 1e-6).value
        assert c == A.closed_form_epsilon(n, 3.0, 1e-6).value


def test_frequency_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "freq.png"
    assert main(["plot", "frequency", "--n", "5000", "--k", "50", "--out", str(png), "--json"]) == 0
    assert png.stat().st_size > 1000
    data = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert data["true"] == sorted(data["true"], reverse=True)
