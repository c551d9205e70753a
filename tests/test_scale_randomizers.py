"""The server at scale for every randomizer through the command line: simulate/encode
--oracle NAME with its parameters, --compressed and --plugin, aggregate of any set (mean
estimation included), the 'randomizers' listing, the refusals naming the option, and the
rule by which 'auto' chooses Dask (issue 24: by memory and measured speed, not a count)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from shipped import EXAMPLE, EXAMPLES, SCALARS, SHIPPED, compressed_cases

pytest.importorskip("pyarrow")
pytest.importorskip("dask.distributed")

import ldpcompress as L  # noqa: E402
from ldpcompress.cli import main  # noqa: E402
from ldpcompress.randomizers import registry  # noqa: E402
from ldpcompress.scale import distributed as D  # noqa: E402

CASES = SHIPPED + EXAMPLES
CASES += compressed_cases(CASES) + SCALARS + compressed_cases(SCALARS)
IDS = [c[0] for c in CASES]


def _json(argv, capsys):
    capsys.readouterr()
    assert main(argv + ["--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _options(r) -> list[str]:
    """--oracle NAME --param k=v ... that build r (--compressed for the wrapper)."""
    spec = registry.spec(r)
    extra = []
    if spec["randomizer"] == "compressed":
        spec, extra = spec["params"]["randomizer"], ["--compressed"]
    params = [x for k, v in spec["params"].items() for x in ("--param", f"{k}={json.dumps(v)}")]
    return ["--oracle", spec["randomizer"]] + params + extra


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_simulate_then_aggregate_any_randomizer(case, tmp_path, capsys):
    r = case[1]()
    out = str(tmp_path / "set")
    sim = _json(["simulate", "--n", "300", "--shards", "3", "--seed", "5", "--out", out]
                + _options(r), capsys)["results"]
    assert sim["randomizer"] == registry.spec(r) and sim["reports"] == 300
    assert sim["wire_bytes_per_report"] == r.bits_per_report / 8
    agg = _json(["aggregate", out], capsys)["results"]
    res = D.aggregate([out], scheduler="memory")
    assert agg["n"] == res["n"] == 300 and res["randomizer"] == r
    np.testing.assert_allclose(agg["estimate"], res["estimate"], rtol=0, atol=1e-12)
    counts = np.dtype(r.summary_spec().dtype).kind in "iu"
    truth = np.load(tmp_path / "set" / ("true_counts.npy" if counts else "true_mean.npy"))
    assert agg["estimates"] == ("counts" if counts else "mean")
    if counts:  # the simulated Zipf items: as many as reports
        assert truth.sum() == 300 and truth.shape == (len(agg["estimate"]),)
    else:  # the simulated vectors' mean: norm <= 1, the estimate within a few sd of it
        assert truth.shape == (len(agg["estimate"]),) and np.linalg.norm(truth) <= 1
        low, high = np.array(agg["low"]), np.array(agg["high"])
        z = np.abs(np.array(agg["estimate"]) - truth) / ((high - low) / (2 * 1.96))
        assert np.all(z < 6)


def test_encode_vectors_from_csv(tmp_path, capsys):
    """encode reads one vector per line for a mean estimator; bad lines are named."""
    rows = np.random.default_rng(0).normal(size=(50, 4))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True) * 1.25
    csv = tmp_path / "v.csv"
    csv.write_text("x0,x1,x2,x3\n" + "\n".join(",".join(repr(float(v)) for v in row)
                                               for row in rows))
    out = str(tmp_path / "set")
    doc = _json(["encode", "--csv", str(csv), "--header", "--oracle", "privunit2", "--d", "4",
                 "--eps", "3", "--shards", "2", "--out", out], capsys)
    assert doc["results"]["reports"] == 50 and doc["params"]["d"] == 4
    agg = _json(["aggregate", out, "--out", str(tmp_path / "m.csv")], capsys)["results"]
    assert agg["estimates"] == "mean" and len(agg["estimate"]) == 4
    assert (tmp_path / "m.csv").read_text().splitlines()[0] == "coordinate,estimate,low,high"
    for body, message in (("0.1,0.2,0.3\n", "line 1 has 3 cells"),
                          ("0.1,0.2,0.3,0.4\n0.1,nan,0,0\n", "line 2: 'nan' is not a decimal"),
                          ("0.1,0.2,0.3,0.4\n0.9,0.9,0,0\n", "line 2: input vector 0 has norm"),
                          ("0.5,0,0,0\n0x1p-2,0,0,0\n", "line 2: '0x1p-2' is not a decimal")):
        csv.write_text(body)
        assert main(["encode", "--csv", str(csv), "--oracle", "privunit2", "--d", "4", "--eps",
                     "3", "--out", str(tmp_path / "bad")]) == 2
        assert message in capsys.readouterr().err
    assert not list(tmp_path.glob("bad/*.parquet"))
    csv.write_text("1\n")
    assert main(["aggregate", out, "--postprocess", "clip"]) == 2
    assert "--postprocess applies to estimated counts" in capsys.readouterr().err


def test_compressed_reports_from_encode(tmp_path, capsys):
    csv = tmp_path / "items.csv"
    csv.write_text("\n".join(str(i % 6) for i in range(400)) + "\n")
    out = str(tmp_path / "set")
    doc = _json(["encode", "--csv", str(csv), "--oracle", "rappor", "--k", "6", "--eps", "2",
                 "--compressed", "--shards", "2", "--out", out], capsys)["results"]
    assert doc["randomizer"]["randomizer"] == "compressed"
    assert doc["randomizer"]["params"]["randomizer"] == {
        "randomizer": "rappor", "params": {"k": 6, "eps": 2.0, "symmetric": True}}
    assert doc["wire_bytes_per_report"] == 17 and 17 <= doc["disk_bytes_per_report"] < 25
    # deletion 2 eps_d (FT21 Lemma 3.6, any PRG): RAPPOR's eps_d is eps for symmetric RAPPOR
    assert doc["eps"] == pytest.approx(4.0, rel=1e-12) and doc["kind"] == "deletion"
    agg = _json(["aggregate", out], capsys)["results"]
    assert agg["n"] == 400 and abs(sum(agg["estimate"]) - 400) < 6 * 400 ** 0.5 * 3


@pytest.mark.parametrize("argv, message", [
    (["--oracle", "nope"], "unknown randomizer 'nope'"),
    (["--oracle", "krr"], "--oracle krr needs --k (its parameter k)"),
    (["--oracle", "privunit2", "--k", "5"], "--k: --oracle privunit2 takes no parameter 'k'"),
    (["--oracle", "krr", "--k", "5", "--param", "colour=3"],
     "--param colour: --oracle krr takes no parameter 'colour'"),
    (["--oracle", "krr", "--k", "5", "--param", "k=3"], "--param k: given twice"),
    (["--oracle", "krr", "--k", "5", "--param", "k"], "--param must be NAME=VALUE"),
    (["--oracle", "pi-rappor-vector", "--k", "50"], "needs --param q=VALUE"),
    (["--oracle", "pi-rappor-vector", "--k", "50", "--param", "q=4"], "q must be prime"),
    (["--oracle", "krr", "--k", "5", "--eps", "nan"], "--eps must be finite"),
    (["--oracle", "olh", "--k", "5", "--compressed"],
     "--compressed: compress() does not take olh(k=5, eps=4): an OLH report is"),
    (["--oracle", "privunit2", "--d", "4", "--eps", "30", "--compressed"],
     "expected trials per report"),
    (["--oracle", "krr", "--k", "5", "--plugin", "no_such_module_xyz"],
     "--plugin no_such_module_xyz: importing it failed: ModuleNotFoundError"),
    (["--oracle", "krr", "--k", "5", "--plugin", "/no/such/file.py"], "no such file"),
])
def test_randomizer_options_are_checked(tmp_path, capsys, argv, message):
    assert main(["simulate", "--n", "10", "--out", str(tmp_path / "o")] + argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").iterdir())


def test_the_listing_names_every_randomizer(capsys):
    doc = _json(["randomizers"], capsys)["results"]["randomizers"]
    rows = {r["name"]: r for r in doc}
    assert set(rows) == set(registry.names())
    for name, r in rows.items():
        if r["privacy"] is None:  # parameters without an example value (lo, hi, sigma)
            assert r["why_not"] == "needs parameters the listing has no example value for"
            continue
        built = registry.build(name, r["example"])
        assert r["privacy"] == built.privacy.value
        assert r["compresses"] == (built.compression_refusal() is None)
        assert r["why_not"] == built.compression_refusal()
    assert rows["rappor"]["privacy"] == "deletion" and rows["krr"]["compresses"] is True
    assert [p["name"] for p in rows["pi-rappor"]["parameters"]] == ["k", "eps", "symmetric", "p"]
    assert main(["randomizers"]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in rows) and "already shorter than a 17-byte" in text


@pytest.mark.slow  # ~14 s in a full run (fresh processes, a Dask cluster)
def test_a_plugin_module_registers_a_randomizer_for_every_command(tmp_path):
    """--plugin FILE in fresh processes (as a user runs it): listed, simulated, compressed,
    aggregated in memory and on a local Dask cluster of worker processes (the class travels
    by value); without --plugin the set is refused naming the manifest and the key."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))

    def run(*argv):
        return subprocess.run([sys.executable, "-m", "ldpcompress", *argv], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=300)

    listed = run("randomizers", "--plugin", EXAMPLE)
    assert listed.returncode == 0 and "yes-no" in listed.stdout
    for extra in ([], ["--compressed"]):
        out = str(tmp_path / f"set{len(extra)}")
        done = run("simulate", "--plugin", EXAMPLE, "--oracle", "yes-no", "--eps", "1", "--n",
                   "500", "--shards", "2", "--out", out, *extra)
        assert done.returncode == 0, done.stderr
        refused = run("aggregate", out)
        assert refused.returncode == 2 and "manifest.json: key 'randomizer'" in refused.stderr
        assert "unknown randomizer 'yes-no'" in refused.stderr
        results = []
        for scheduler in ("memory", "local"):
            done = run("aggregate", out, "--plugin", EXAMPLE, "--scheduler", scheduler, "--json")
            assert done.returncode == 0, done.stderr
            results.append(json.loads(done.stdout)["results"])
        assert results[0]["estimate"] == results[1]["estimate"]
        assert results[0]["n"] == 500 and results[1]["method"] == "dask"


# -- where "auto" aggregates (issue 24) -------------------------------------------------------
def test_auto_stays_in_memory_unless_a_cluster_is_predicted_faster():
    gib, small = 2 ** 30, 100 * 2 ** 20
    e, start = D.DASK_EFFICIENCY, D.DASK_START_SECONDS
    # T_mem = 100 s at 1 GB/s on one core; 8 workers: T_dask = 5 + 100 / (8 e) -> 8 workers
    assert start + 100 / (8 * e) < 100
    assert D.dask_workers(1e9, 100 * 10 ** 9, 50, 8, 64 * gib, small) == 8
    # two cores, this process already keeping both busy (Numba kernels): never
    # (PI-RAPPOR, 1e7 reports: 4.75 s in memory, 5.23 s on a warm 2-worker cluster)
    assert start + 1000 * 2 / (2 * e) > 1000
    assert D.dask_workers(1e9, 10 ** 12, 50, 2, 64 * gib, small, parallelism=2.0) == 0
    # two cores, one busy (a Python-bound summary): worth it once the rest takes
    # T > start / (1 - 1 / (2 e)) = 15 s (compressed RAPPOR, 1e6 reports: 27.2 s in memory,
    # 18.6 s on a warm 2-worker cluster)
    limit = start / (1 - 1 / (2 * e))
    assert D.dask_workers(1e9, int(1.01 * limit * 1e9), 50, 2, 64 * gib, small, 1.0) == 2
    assert D.dask_workers(1e9, int(0.99 * limit * 1e9), 50, 2, 64 * gib, small, 1.0) == 0
    # parallelism is clamped to [1, cores]
    assert D.dask_workers(1e9, 10 ** 12, 50, 2, 64 * gib, small, 0.1) == 2
    assert D.dask_workers(1e9, 10 ** 12, 50, 2, 64 * gib, small, 9.0) == 0
    # fewer shards left than cores: the shards bound the workers; one shard left: stay
    assert D.dask_workers(1e9, 100 * 10 ** 9, 3, 8, 64 * gib, small) == 3
    assert D.dask_workers(1e9, 100 * 10 ** 9, 1, 8, 64 * gib, small) == 0
    # memory: each worker needs its batches and summaries beside a process's base
    per = 2 * gib
    room = 3 * (per + D.WORKER_BASE_BYTES)
    assert D.dask_workers(1e9, 100 * 10 ** 9, 50, 8, room, per) == 3
    assert D.dask_workers(1e9, 100 * 10 ** 9, 50, 8, room - 1 - (per + D.WORKER_BASE_BYTES),
                          per) == 0
    # short remaining work: the start-up is not repaid (T_mem = 5 s < 5 + 5 / (8 e))
    assert D.dask_workers(1e9, 5 * 10 ** 9, 50, 8, 64 * gib, small) == 0
    assert D.dask_workers(0.0, 10 ** 12, 50, 8, 64 * gib, small) == 0


def test_auto_moves_the_rest_to_a_cluster_when_the_rule_says_so(tmp_path, monkeypatch):
    """The in-memory part and the cluster's part add up to the exact counts."""
    from ldpcompress.randomizers import KRR
    from ldpcompress.scale import report_files as RF
    r = KRR(7, 1.0)
    reports = r.randomize_many(np.arange(700) % 7)
    RF.write_reports(tmp_path / "set", r, reports, shards=5)
    monkeypatch.setattr(D, "MEASURE_SECONDS", 0.0)
    monkeypatch.setattr(D, "_auto_workers", lambda *args: 1)  # decide: the rest on Dask
    started = []
    real = D._new_cluster

    def in_process(randomizer, shards, scheduler, n_workers, *rest):
        import distributed
        started.append((len(shards), n_workers))
        with distributed.LocalCluster(n_workers=1, processes=False,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as client:
            return D._on_cluster(distributed, client, randomizer, shards, *rest[1:4])

    monkeypatch.setattr(D, "_new_cluster", in_process)
    res = D.aggregate([tmp_path / "set"])
    assert started == [(4, 1)] and res["method"] == "memory+dask" and real is not in_process
    assert res["auto"]["workers"] == 1 and res["auto"]["rate"] > 0
    np.testing.assert_array_equal(res["summary"], r.summarize(reports))


@pytest.mark.parametrize("make", [
    lambda: L.RAPPOR(5, 1.0), lambda: L.OUE(8, 2.0), lambda: L.SubsetSelection(12, 4.0),
    lambda: L.KRR(2, 1.0), lambda: L.VectorPIRappor(3, 1.0, 3)],
    ids=["rappor k=5", "oue k=8", "subset d=1", "krr k=2", "vector t=1"])
def test_width_one_columns_round_trip(make, tmp_path):
    """Found by the CLI campaign: RAPPOR/OUE with k <= 8 and subset selection with d = 1
    returned (n, 1) arrays for a width-1 column (the contract stores it 1-D), so their sets
    could not be written."""
    from ldpcompress.scale import report_files as RF
    r = make()
    assert all(c.width == 1 for c in r.report_columns()[:1])
    rep = r.randomize_many(np.arange(40) % 2)
    cols = r.to_columns(rep)
    assert all(cols[c.name].ndim == (1 if c.width == 1 else 2) for c in r.report_columns())
    RF.write_reports(tmp_path / "set", r, rep, shards=2)
    res = D.aggregate([tmp_path / "set"], scheduler="memory")
    np.testing.assert_array_equal(res["summary"], r.summarize(rep))
