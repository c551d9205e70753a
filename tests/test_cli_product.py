"""The command line as a product: one --json schema for every command (stdout holds only the
JSON), help text on every option, --version, python -m ldpcompress."""
import argparse
import importlib
import json
import subprocess
import sys

import numpy as np
import pytest

import ldpcompress as L
from ldpcompress.cli import build_parser, main

KEYS = ["command", "params", "results", "timings", "version"]


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    raise AssertionError("no subcommands")


def test_every_option_of_every_command_has_help():
    commands = _subparsers(build_parser())
    assert {"amplify", "compose", "noise", "demo", "mean", "simulate", "encode", "aggregate",
            "plot"} <= set(commands)
    missing = [f"{name} {'/'.join(a.option_strings) or a.dest}"
               for name, sub in commands.items() for a in sub._actions
               if not isinstance(a, argparse._HelpAction)
               and (a.help is None or not a.help.strip())]
    assert missing == []
    for name, sub in commands.items():
        assert sub.description, f"{name} has no description"


def test_top_level_help_is_for_users(capsys):
    with pytest.raises(SystemExit, match="0") as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and "registers" not in out  # was the module's internal docstring
    assert "ldpcompress demo" in out and "--json" in out


def test_version(capsys):
    with pytest.raises(SystemExit, match="0") as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"ldpcompress {L.__version__}"


def test_python_dash_m():
    out = subprocess.run([sys.executable, "-m", "ldpcompress", "--version"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and L.__version__ in out.stdout


def _json(argv, capsys) -> dict:
    assert main(argv + ["--json"]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # stdout holds the JSON object and nothing else
    assert sorted(doc) == KEYS
    assert doc["command"] == argv[0] and doc["version"] == L.__version__
    assert isinstance(doc["params"], dict) and isinstance(doc["results"], dict)
    assert all(isinstance(v, (int, float)) and v >= 0 for v in doc["timings"].values())
    assert "json" not in doc["params"] and "func" not in doc["params"]  # no parser state
    return doc


def test_one_json_schema_for_every_command(tmp_path, capsys):
    docs = {}
    docs["amplify"] = _json(["amplify", "--n", "1e4", "--eps0", "2", "--delta", "1e-6"], capsys)
    docs["inverse"] = _json(["amplify", "--inverse", "--n", "1e4", "--eps", "1", "--delta",
                             "1e-6"], capsys)
    docs["compose"] = _json(["compose", "--n", "1e4", "--eps0", "2", "--rounds", "1e1",
                             "--delta", "1e-6"], capsys)
    docs["noise"] = _json(["noise", "--n", "10", "--scale", "1", "--orders", "2"], capsys)
    docs["demo"] = _json(["demo", "--n", "2000", "--k", "20"], capsys)
    docs["mean"] = _json(["mean", "--d", "5", "--n", "20"], capsys)
    sim = str(tmp_path / "sim")
    docs["simulate"] = _json(["simulate", "--n", "300", "--k", "20", "--shards", "2", "--out",
                              sim], capsys)
    csv = tmp_path / "items.csv"
    csv.write_text("1\n2\n3\n")
    docs["encode"] = _json(["encode", "--csv", str(csv), "--k", "5", "--eps", "2", "--out",
                            str(tmp_path / "enc")], capsys)
    docs["aggregate"] = _json(["aggregate", sim], capsys)
    # integers stay integers: n = 1e4 is printed as 10000, not 1e+04 or 10000.0
    assert docs["amplify"]["params"]["n"] == 10000 and docs["inverse"]["params"]["n"] == 10000
    assert isinstance(docs["inverse"]["params"]["n"], int)
    assert docs["compose"]["params"]["rounds"] == 10
    assert docs["simulate"]["results"]["reports"] == 300
    assert len(docs["simulate"]["results"]["files"]) == 2
    assert docs["encode"]["results"]["reports"] == 3
    assert docs["aggregate"]["results"]["n"] == 300
    assert docs["demo"]["params"]["n"] == 2000 and "clients" in docs["demo"]["timings"]


def test_plot_json_is_only_json(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    doc = _json(["plot", "amplification", "--n-range", "1e3", "1e4", "--points", "2", "--out",
                 str(tmp_path / "a.png")], capsys)
    assert doc["results"]["n"] == [1000, 10000]


def test_plot_frequency_of_the_users_report_sets(tmp_path, capsys, monkeypatch):
    """plot frequency draws the user's own report sets with intervals and a title stating the
    oracle, n, local eps and the central (eps, delta)."""
    pytest.importorskip("matplotlib")
    # the clients' coins come from os.urandom: seed them here (test only) so the coverage
    # count below is reproducible instead of failing about once in 60 runs
    from ldpcompress.core.entropy import SYSTEM, deterministic_source
    monkeypatch.setattr(SYSTEM, "source", deterministic_source(20261126))
    sim = str(tmp_path / "sim")
    assert main(["simulate", "--n", "3000", "--k", "30", "--eps", "3", "--out", sim]) == 0
    capsys.readouterr()
    png = tmp_path / "f.png"
    doc = _json(["plot", "frequency", sim, "--out", str(png)], capsys)
    assert png.stat().st_size > 1000
    res = doc["results"]
    realised = L.PIRappor(30, 3.0).eps  # the oracle's realised local eps, not the request
    assert "n = 3,000" in res["title"] and f"local eps = {realised:.3g}" in res["title"]
    assert ", 1e-06)-DP" in res["title"]
    truth = np.load(tmp_path / "sim" / "true_counts.npy")
    from ldpcompress.scale import distributed
    agg = distributed.aggregate([sim], scheduler="memory")
    top = res["items"]
    assert np.allclose(res["estimate"], agg["estimate"][top])
    # the plotted 95% intervals are the variance formula's: misses ~ Bin(20, 0.05), and
    # P(misses >= 6) = 3e-4, so at most 5 of the 20 plotted intervals may miss the truth
    inside = [lo <= truth[j] <= hi for j, lo, hi in zip(top, res["low"], res["high"])]
    assert len(inside) == 20 and sum(inside) >= len(inside) - 5
    # and every interval holds its estimate
    assert all(lo <= e <= hi for e, lo, hi in zip(res["estimate"], res["low"], res["high"]))


def test_inverse_text_prints_integers(capsys):
    assert main(["amplify", "--inverse", "--n", "1e5", "--eps", "1", "--delta", "1e-6", "--k",
                 "1e2"]) == 0
    out = capsys.readouterr().out
    assert "n=100000, k=100" in out and "e+" not in out


@pytest.mark.parametrize("argv, message", [
    (["amplify", "--n", "inf", "--eps0", "1", "--delta", "1e-6"], "--n must be an integer in"),
    (["amplify", "--n", "10", "--eps0", "-1", "--delta", "1e-6"], "--eps0 must be"),
    (["amplify", "--n", "10", "--eps0", "1", "--eps", "inf", "--json"], "--eps must be finite"),
    (["compose", "--n", "1e4", "--eps0", "2", "--rounds", "1.5", "--delta", "1e-6"],
     "--rounds must be an integer in [1, 1000000000]"),
    (["compose", "--n", "1e4", "--eps0", "2", "--rounds", "2e9", "--delta", "1e-6"],
     "--rounds must be an integer in [1, 1000000000]"),
    (["compose", "--n", "1e3", "--eps0", "700", "--rounds", "9e15", "--delta", "1e-6"],
     "--rounds"),
    (["noise", "--n", "2.5", "--scale", "1"], "--n must be an integer in [1,"),
    (["noise", "--n", "10", "--scale", "1", "--orders", "nan", "2"], "--orders must be"),
    (["noise", "--n", "10", "--scale", "1", "--orders", "1e308"], "--orders must be"),
    (["noise", "--n", "1e7", "--scale", "1"], "--no-exact"),
])
def test_errors_name_the_option_and_its_range(capsys, argv, message):
    """Found by the issue-13 audit: errors said 'n' for --n, gave no range for --rounds 1.5,
    printed numpy's array repr for --orders, blamed the sensitivity for a huge order, and
    --rounds 9e15 ended in an OverflowError traceback."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and len(captured.err.splitlines()) == 1
    if "--json" in argv:  # stdout: the error as the one JSON object
        assert message in json.loads(captured.out)["error"]["message"]
    else:
        assert captured.out == ""


def test_noise_without_the_exact_column_answers_at_large_n(capsys):
    from ldpcompress.accounting import noise as N
    doc = _json(["noise", "--n", "2000", "--scale", "1", "--orders", "2", "--no-exact"], capsys)
    assert doc["results"]["laplace_exact"] is None
    assert doc["results"]["gaussian"][0] == N.gaussian_sum_rdp(2000, 1.0, [2.0])[0]


def test_categorical_items_from_encode_to_aggregate(tmp_path, capsys):
    """String items through a public domain file: encode --domain maps names to indices (an
    unknown name is refused with its line), aggregate --domain labels the estimates, and the
    CSV holds the intervals and the post-processed counts."""
    dom = tmp_path / "domain.txt"
    dom.write_text("apple\nbanana\ncherry\n")
    rows = ["apple"] * 600 + ["banana"] * 300 + ["cherry"] * 100
    (tmp_path / "items.csv").write_text("\ufeff" + "\n".join(rows) + "\n", encoding="utf-8")
    out = str(tmp_path / "set")
    doc = _json(["encode", "--csv", str(tmp_path / "items.csv"), "--domain", str(dom), "--eps",
                 "4", "--out", out], capsys)
    assert doc["params"]["k"] == 3 and doc["results"]["reports"] == 1000
    est_csv = tmp_path / "est.csv"
    doc = _json(["aggregate", out, "--domain", str(dom), "--postprocess", "simplex",
                 "--level", "0.99", "--out", str(est_csv)], capsys)
    res = doc["results"]
    assert res["names"] == ["apple", "banana", "cherry"]
    assert abs(sum(res["adjusted"]) - 1000) < 1e-6 and min(res["adjusted"]) >= 0
    orc = L.PIRappor(3, 4.0)
    for j, true in enumerate((600, 300, 100)):
        sd = orc.variance(1000, true) ** 0.5
        assert abs(res["estimate"][j] - true) < 5 * sd
        # 99% intervals from the variance formula: z = 2.576 sd at the plug-in estimate
        width = (res["high"][j] - res["low"][j]) / 2
        assert width == pytest.approx(2.5758 * orc.variance(1000, min(max(
            res["estimate"][j], 0), 1000)) ** 0.5, rel=1e-3)
    lines = est_csv.read_text().splitlines()
    assert lines[0] == "item,name,estimate,low,high,adjusted" and lines[1].startswith("0,apple,")
    (tmp_path / "bad.csv").write_text("apple\ndurian\n")
    assert main(["encode", "--csv", str(tmp_path / "bad.csv"), "--domain", str(dom), "--eps",
                 "4", "--out", str(tmp_path / "bad")]) == 2
    assert "line 2: 'durian' is not in the item domain" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())


def test_demo_refuses_memory_before_the_accounting(capsys, monkeypatch):
    """Found by the issue-13 audit: `demo --n 5e7 --k 10` spent 115 s choosing eps0 before
    refusing for memory (4.1 GiB); the memory check now comes first."""
    from ldpcompress.accounting import inverse

    def no_search(*args, **kwargs):
        raise AssertionError("the eps0 search ran before the memory check")
    monkeypatch.setattr(inverse, "max_eps0", no_search)
    assert main(["demo", "--n", "5e7", "--k", "10"]) == 2
    err = capsys.readouterr().err
    assert "GiB" in err and "--n or --k" in err


def test_demo_generic_comparison_uses_the_replacement_eps0():
    """Found by the issue-12 audit: for symmetric RAPPOR (parameter = deletion eps, replacement
    eps0 = twice it) the generic bound's eps0 was passed as the parameter, so the comparison
    claimed the generic bound allowed 0.20x the error."""
    from ldpcompress.accounting import blanket, inverse
    from ldpcompress.estimation import demo
    res = demo.run(n=20_000, k=50, oracle="rappor", quiet=True)
    generic_eps0 = inverse.max_eps0(20_000, 1.0, 1e-6)
    generic = L.RAPPOR(50, res["generic_eps0"])
    assert blanket.structure(generic).eps0 <= generic_eps0
    assert blanket.structure(L.RAPPOR(50, res["generic_eps0"] * 1.001)).eps0 > generic_eps0
    assert res["generic_sd"] >= res["sd"]  # the oracle's own bound never allows less


def test_no_lower_skips_the_attack(capsys):
    doc = _json(["amplify", "--n", "1e4", "--eps0", "4", "--delta", "1e-6", "--k", "10",
                 "--no-lower"], capsys)
    res = doc["results"]
    assert res["lower"] is None and not any(b["name"].startswith("lower") for b in res["bounds"])
    assert res["value"] == L.epsilon(10_000, 4.0, 1e-6, k=10).value


# one refused input per command (each passes the parser, fails the command's own checks)
REFUSED = {
    "amplify": ["--n", "1.5", "--eps0", "1", "--delta", "1e-6"],
    "compose": ["--n", "1e4", "--eps0", "2", "--rounds", "1.5", "--delta", "1e-6"],
    "noise": ["--n", "2.5", "--scale", "1"],
    "plan": ["--n", "1e4", "--rounds", "0", "--central-eps", "1", "--k", "10"],
    "demo": ["--n", "0"],
    "mean": ["--d", "0", "--n", "10"],
    "simulate": ["--n", "10", "--k", "1", "--out", "unused"],
    "encode": ["--csv", "no-such.csv", "--k", "4", "--eps", "1", "--out", "unused"],
    "aggregate": ["no-such-set"],
    "shuffle": ["no-such-set", "unused"],
    "plot": ["frequency", "no-such-set", "--out", "unused.png"],
    "randomizers": ["--plugin", "no-such-plugin.py"],
    "docs": ["theory", "--section", "99.99"],
    "heavy-hitters": ["simulate", "--counts", "no-such.csv", "--n", "0", "--eps", "1"],
}


def _json_error(argv, capsys, code: int) -> dict:
    """main(argv) fails with ``code`` and stdout holds exactly one JSON object: the usual
    envelope plus ``error`` (its message also on stderr's last line)."""
    assert main(argv) == code
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # one object, nothing else on stdout
    assert sorted(doc) == sorted(KEYS + ["error"])
    assert doc["version"] == L.__version__ and doc["params"] == doc["results"] == {}
    assert sorted(doc["error"]) == ["exit_code", "message", "type"]
    assert doc["error"]["exit_code"] == code and doc["error"]["message"]
    assert doc["error"]["message"] in captured.err.splitlines()[-1]
    return doc


def test_every_command_reports_errors_as_json_under_json(tmp_path, capsys, monkeypatch):
    """--json printed nothing on stdout on error (only the text line on stderr): a script
    reading stdout got no JSON. Every command, every kind of failure: a bad argument (the
    parser's), a refused input (exit 2) and an unexpected exception (exit 1, its trace on
    stderr)."""
    monkeypatch.chdir(tmp_path)
    commands = _subparsers(build_parser())
    assert sorted(REFUSED) == sorted(commands)  # a new command gets its case here
    for name in commands:
        doc = _json_error([name, *REFUSED[name], "--no-such-option", "--json"], capsys, 2)
        assert doc["command"] == name and doc["error"]["type"] == "usage"
        assert "unrecognized arguments: --no-such-option" in doc["error"]["message"]
        doc = _json_error([name, *REFUSED[name], "--json"], capsys, 2)
        assert doc["command"] == name and doc["error"]["type"] in ("ValueError", "usage")
    doc = _json_error(["no-such-command", "--json"], capsys, 2)
    assert doc["command"] == "ldpcompress" and "invalid choice" in doc["error"]["message"]

    cli_main = importlib.import_module("ldpcompress.cli.main")

    def bug():
        raise KeyError("a bug")
    monkeypatch.setattr(cli_main, "command_line", bug)  # fails inside every command's run
    for name in commands:
        doc = _json_error([name, *REFUSED[name], "--json"], capsys, 1)
        assert doc["error"] == dict(message="KeyError: 'a bug' (unexpected: please report it "
                                    "with the trace above)", exit_code=1, type="KeyError")
    monkeypatch.undo()
    with pytest.raises(KeyError, match="a bug"):  # without --json: Python's own traceback
        monkeypatch.setattr(cli_main, "command_line", bug)
        main(["amplify", "--n", "10", "--eps0", "1", "--delta", "1e-6"])


def test_json_stdout_holds_no_partial_output_of_a_failed_command(capsys, monkeypatch):
    from ldpcompress.accounting import amplification

    def half_done(*args, **kwargs):
        print("a line a command printed before failing")
        raise ValueError("refused late")
    monkeypatch.setattr(amplification, "epsilon", half_done)
    doc = _json_error(["amplify", "--n", "1e4", "--eps0", "1", "--delta", "1e-6", "--json"],
                      capsys, 2)
    assert doc["error"]["message"] == "refused late"
