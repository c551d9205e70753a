"""CLI report sets (cli/scale.py): simulate --compressed through the batch simulation encoder
(the manifest says the coins were simulated), encode with the catch-all item and bad domain
lines, the item names kept in the manifest and shown by aggregate and notebook tables."""
from __future__ import annotations

import json
import resource

import numpy as np
import pytest

from hang import cli_in_child
from ldpcompress import KRR
from ldpcompress.cli.main import main
from ldpcompress.core.items import CATCH_ALL
from ldpcompress.scale import distributed
from ldpcompress.scale.manifest import read_info, read_manifest
from ldpcompress.scale.reader import read_shard

pytest.importorskip("pyarrow")


def _reports(folder):
    randomizer, shards = read_manifest(folder / "manifest.json")
    return np.concatenate([read_shard(s, randomizer) for s in shards])


def test_simulate_compressed_uses_simulated_coins(tmp_path, capsys):
    """On main the CLI encoded through the client path (os.urandom coins; minutes for 1e6
    reports) and the manifest did not say how the coins were drawn."""
    args = ["simulate", "--oracle", "rappor", "--k", "16", "--eps", "3", "--compressed",
            "--n", "3000", "--shards", "2", "--seed", "5"]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    assert main(args + ["--out", str(tmp_path / "b")]) == 0
    assert "coins simulated" in capsys.readouterr().out
    assert read_info(tmp_path / "a" / "manifest.json").coins == "simulated"
    first = _reports(tmp_path / "a")
    assert first.shape == (3000, 17)
    assert np.array_equal(first, _reports(tmp_path / "b"))  # seeded: reproducible
    # the estimates are unbiased: within 5 sd (the wrapped randomizer's variance) of the truth
    res = distributed.aggregate(tmp_path / "a", scheduler="memory")
    truth = np.load(tmp_path / "a" / "true_counts.npy")
    inner = res.randomizer.inner
    for j in range(16):
        assert abs(res.estimate[j] - truth[j]) < 5 * inner.variance(3000, truth[j]) ** 0.5
    assert main(args + ["--client-coins", "--n", "50", "--out", str(tmp_path / "c")]) == 0
    assert read_info(tmp_path / "c" / "manifest.json").coins == "os.urandom"


def test_encode_maps_outside_names_to_the_catch_all(tmp_path, capsys):
    dom = tmp_path / "dom.txt"
    dom.write_bytes(b"apple\nbanana\n\ncherry\nbanana\n\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f"
                    b"\x92\xbb\n")
    users = tmp_path / "users.csv"
    users.write_text("apple\nkiwi\nbanana\ncherry\nkiwi\napple\n")
    out = tmp_path / "set"
    base = ["encode", "--csv", str(users), "--domain", str(dom), "--oracle", "krr", "--eps",
            "2", "--out", str(out)]
    assert main(base) == 2  # bad lines refused, every one counted
    err = capsys.readouterr().err
    assert "line 3 is empty" in err and "3 bad lines in all" in err and "line 6:" in err
    assert main(base + ["--bad-lines", "drop"]) == 2  # no catch-all: 'kiwi' is refused
    assert "line 2: 'kiwi' is not in the item domain" in capsys.readouterr().err
    assert main(base + ["--bad-lines", "catch-all", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["results"]
    assert doc["catch_all"] == 2 and doc["bad_lines"] == 3 and doc["reports"] == 6
    assert [b[0] for b in doc["bad_lines_named"]] == [3, 5, 6]
    items = read_info(out / "manifest.json").items
    assert items.names == ("apple", "banana", "cherry", CATCH_ALL)
    assert read_manifest(out / "manifest.json")[0] == KRR(4, 2.0)
    # aggregate shows the names the manifest keeps without --domain
    assert main(["aggregate", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert res["names"] == ["apple", "banana", "cherry", CATCH_ALL]
    assert main(["aggregate", str(out)]) == 0
    text = capsys.readouterr().out
    assert "(out\u00a0of\u00a0domain)" in text and "apple" in text
    agg = distributed.aggregate(out, scheduler="memory")
    assert agg.domain == items and "<td>apple</td>" in agg._repr_html_()
    if pytest.importorskip("pandas"):
        assert list(agg.to_frame().index) == list(items.names)
    # a --domain that differs from the kept names is refused, naming both
    other = tmp_path / "other.txt"
    other.write_text("banana\napple\ncherry\n")
    assert main(["aggregate", str(out), "--domain", str(other), "--catch-all"]) == 2
    assert "differs from the item names the report set's manifest keeps" in \
        capsys.readouterr().err
    assert main(["aggregate", str(out), "--catch-all"]) == 2
    assert "--catch-all and --bad-lines apply to a --domain file" in capsys.readouterr().err


def test_tampered_names_in_a_manifest_are_refused(tmp_path, capsys):
    dom = tmp_path / "dom.txt"
    dom.write_text("apple\nbanana\n")
    users = tmp_path / "users.csv"
    users.write_text("apple\nbanana\n")
    out = tmp_path / "set"
    assert main(["encode", "--csv", str(users), "--domain", str(dom), "--oracle", "krr",
                 "--eps", "2", "--out", str(out)]) == 0
    path = out / "manifest.json"
    doc = json.loads(path.read_text())
    doc["items"]["names"] = ["banana", "apple"]  # swapped labels: the digest no longer fits
    path.write_text(json.dumps(doc))
    assert main(["aggregate", str(out)]) == 2
    assert "key 'items': the names do not match their sha256" in capsys.readouterr().err
    doc["items"] = dict(names=["a", "b", "c"], catch_all=False, sha256="0" * 64)
    from ldpcompress.core.items import ItemDomain
    doc["items"]["sha256"] = ItemDomain(["a", "b", "c"]).digest  # k = 3 names, k = 2 reports
    path.write_text(json.dumps(doc))
    assert main(["aggregate", str(out)]) == 2
    assert "names 3 items but krr(k=2, eps=2) estimates 2 entries" in capsys.readouterr().err


def test_encode_writes_a_shuffled_set(tmp_path):
    """On main encode wrote the reports in the CSV's order (the shuffle model's accounting
    does not apply to such a set); --in-order keeps that order on request."""
    users = tmp_path / "users.csv"
    n = 400
    users.write_text("".join(f"{i % 4}\n" for i in sorted(range(n), key=lambda i: i % 4)))
    base = ["encode", "--csv", str(users), "--oracle", "krr", "--k", "4", "--eps", "30",
            "--shards", "2"]
    assert main(base + ["--out", str(tmp_path / "shuffled")]) == 0
    assert main(base + ["--in-order", "--out", str(tmp_path / "ordered")]) == 0
    ordered, shuffled = _reports(tmp_path / "ordered"), _reports(tmp_path / "shuffled")
    truth = np.repeat(np.arange(4), n // 4)
    assert np.array_equal(ordered, truth)  # eps = 30: every report is its input
    assert sorted(shuffled.tolist()) == truth.tolist()
    # a sorted order has 3 changes between neighbours; a uniform one about 3/4 of 399
    assert np.count_nonzero(np.diff(shuffled)) > 200
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert main(base + ["--out", str(tmp_path / "shuffled"), "--overwrite"]) == 0
    assert not np.array_equal(_reports(tmp_path / "shuffled"), shuffled)


def test_file_size_limit_names_the_file(tmp_path):
    pytest.importorskip("pyarrow")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
    # 200,000 reports in 8 shards: about 90 kB each (3.6 bytes a PI-RAPPOR report), above 20 kB
    r = cli_in_child("simulate", "--n", 200000, "--k", 8, "--out", tmp_path / "big", preexec_fn=limit)
    assert r.returncode == 2 and "big/reports-00000.parquet: cannot write (File too large)" \
        in r.stderr, r.stderr


# -- the cluster options: one group, 'aggregate' and 'heavy-hitters aggregate' -----------------
def _option_help(argv: list[str]) -> dict:
    """{option string: help} of the command ``argv`` (its parser, as built for the CLI)."""
    from ldpcompress.cli import build_parser
    parser = build_parser()
    for name in argv:
        parser = next(a for a in parser._subparsers._group_actions).choices[name]
    return {s: a.help for a in parser._actions for s in a.option_strings}


CLUSTER = ["--tls-ca-file", "--tls-cert", "--tls-key", "--allow-insecure", "--retries",
           "--worker-timeout", "--task-timeout", "--dashboard"]


def test_heavy_hitters_aggregate_has_the_cluster_options_of_aggregate(capsys):
    """On main heavy-hitters aggregate had --scheduler alone: a remote scheduler could not be
    given its TLS files, --allow-insecure, timeouts or a dashboard."""
    scale = _option_help(["aggregate"])
    heavy = _option_help(["heavy-hitters", "aggregate"])
    assert {o: heavy.get(o) for o in CLUSTER} == {o: scale[o] for o in CLUSTER}
    with pytest.raises(SystemExit, match="0"):
        main(["heavy-hitters", "aggregate", "--help"])
    shown = capsys.readouterr().out
    assert [o for o in CLUSTER if o not in shown] == []


@pytest.mark.parametrize("options, match", [
    (["--scheduler", "tcp://10.0.0.1:8786"], "neither encrypted nor authenticated"),
    (["--scheduler", "ws://example.org:8786"], "neither encrypted nor authenticated"),
    (["--scheduler", "tls://10.0.0.1:8786"], "needs security="),
    (["--dashboard", "0.0.0.0:8787"], "--dashboard"),
    (["--tls-cert", "c.pem"], "TLS needs --tls-ca-file and --tls-cert"),
    (["--tls-ca-file", ""], "--tls-ca-file must be a non-empty path"),
    (["--retries", "-1"], "--retries must be an integer in [0, 100]"),
    (["--worker-timeout", "0"], "--worker-timeout"),
    (["--task-timeout", "inf"], "--task-timeout"),
])
def test_both_aggregates_refuse_a_cluster_alike_before_reading_any_file(tmp_path, capsys,
                                                                        options, match):
    """The same message and exit code from both commands, before the (missing) plan, list or
    report set is read: on main heavy-hitters aggregate refused these options as unknown."""
    missing = str(tmp_path / "missing")
    assert main(["aggregate", missing, *options]) == 2
    scale = capsys.readouterr().err.splitlines()[-1]
    assert main(["heavy-hitters", "aggregate", missing, "--plan", missing, "--list", missing,
                 "--out", str(tmp_path / "a.json"), *options]) == 2
    heavy = capsys.readouterr().err.splitlines()[-1]
    assert heavy == scale and match in heavy.split("error: ", 1)[1]


def _heavy_round(tmp_path):
    """A plan, round 1's list and its report set (300 devices, krr over 'ab')."""
    from ldpcompress.core.entropy import simulation_entropy
    from ldpcompress.heavy import round_sets
    from ldpcompress.heavy.deploy import candidates, plan_campaign
    campaign = plan_campaign(300, 2.0, 1e-6, rounds=2, step=1, keep=2, alphabet="ab",
                             oracles=["krr"], assignments=["groups"])
    first = candidates(campaign)
    round_sets.write_round_set(["a", "b", "ab"] * 50, campaign, first, tmp_path / "s",
                               entropy=simulation_entropy(1))
    (tmp_path / "plan.json").write_text(campaign.to_json())
    (tmp_path / "l1.json").write_text(first.to_json())
    return ["heavy-hitters", "aggregate", str(tmp_path / "s"), "--plan",
            str(tmp_path / "plan.json"), "--list", str(tmp_path / "l1.json")]


def test_heavy_hitters_aggregate_passes_the_cluster_options_to_scale(tmp_path, capsys,
                                                                    monkeypatch):
    """--retries, --worker-timeout, --task-timeout, --allow-insecure and the security reach
    scale.distributed.aggregate (recorded, then run with them in memory: the same aggregate as
    without them)."""
    from ldpcompress.heavy import round_sets
    argv = _heavy_round(tmp_path) + ["--json"]
    seen = []
    real = round_sets.aggregate

    def recorded(plan, **options):  # every keyword is one scale's aggregate takes
        seen.append(options)
        return real(plan, **dict(options, scheduler="memory"))
    monkeypatch.setattr(round_sets, "aggregate", recorded)
    assert main(argv + ["--out", str(tmp_path / "a.json")]) == 0
    assert main(argv + ["--out", str(tmp_path / "b.json"), "--retries", "5",
                        "--worker-timeout", "7", "--task-timeout", "9", "--allow-insecure",
                        "--scheduler", "tcp://10.0.0.1:8786"]) == 0
    capsys.readouterr()
    assert seen == [dict(scheduler="memory", retries=3, worker_timeout=60.0, task_timeout=None,
                         security=None, allow_insecure=False, dashboard=None),
                    dict(scheduler="tcp://10.0.0.1:8786", retries=5, worker_timeout=7,
                         task_timeout=9, security=None, allow_insecure=True, dashboard=None)]
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert a == b


def test_both_aggregates_report_every_cluster_option_in_json_params(tmp_path, capsys,
                                                                    monkeypatch):
    """Every cluster option with its value in --json's params, alike in both aggregates; the
    TLS files by path, never their contents. On main heavy-hitters aggregate reported
    --scheduler alone, and aggregate lacked the TLS files, --allow-insecure and
    --worker-timeout."""
    from ldpcompress.heavy import round_sets
    secret = "-----BEGIN PRIVATE KEY-----\nSECRET-KEY-MATERIAL\n-----END PRIVATE KEY-----\n"
    pem = {name: tmp_path / f"{name}.pem" for name in ("ca", "cert", "key")}
    for name, path in pem.items():
        path.write_text(secret if name == "key" else f"{name} certificate\n")
    seen = []

    def in_memory(real):
        def run(plan, **options):  # the cluster is recorded, the reports read in memory
            seen.append(options)
            kept = {k: v for k, v in options.items() if k in ("expect", "max_seconds",
                                                               "max_bytes", "progress")}
            return real(plan, scheduler="memory", **kept)
        return run
    monkeypatch.setattr(distributed, "aggregate", in_memory(distributed.aggregate))
    monkeypatch.setattr(round_sets, "aggregate", in_memory(round_sets.aggregate))
    cluster = ["--scheduler", "tls://10.0.0.1:8786", "--tls-ca-file", str(pem["ca"]),
               "--tls-cert", str(pem["cert"]), "--tls-key", str(pem["key"]), "--allow-insecure",
               "--retries", "5", "--worker-timeout", "7", "--task-timeout", "9.5",
               "--dashboard", "127.0.0.1:8799", "--json"]
    want = dict(scheduler="tls://10.0.0.1:8786", tls_ca_file=str(pem["ca"]),
                tls_cert=str(pem["cert"]), tls_key=str(pem["key"]), allow_insecure=True,
                retries=5, worker_timeout=7, task_timeout=9.5, dashboard="127.0.0.1:8799")
    assert main(["simulate", "--n", "200", "--k", "5", "--out", str(tmp_path / "sim")]) == 0
    capsys.readouterr()
    docs = []
    for argv in (["aggregate", str(tmp_path / "sim")],
                 _heavy_round(tmp_path) + ["--out", str(tmp_path / "a.json")]):
        assert main(argv + cluster) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert "SECRET-KEY-MATERIAL" not in out
        docs.append(json.loads(out)["params"])
    assert [{key: params.get(key) for key in want} for params in docs] == [want, want]
    assert len(seen) == 2 and all(s["security"] is not None and s["retries"] == 5 for s in seen)
