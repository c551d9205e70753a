import json
import math
import os

import pytest

import ldpcompress as L
from commands import command_parsers
from hang import cli_in_child
from ldpcompress.cli import main


def test_amplify_json_matches_api(capsys):
    assert main(["amplify", "--n", "1e5", "--eps0", "2", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["results"]
    assert out["value"] == L.epsilon(100000, 2.0, 1e-6).value
    assert {b["name"] for b in out["bounds"]} >= {"closed_form", "general", "lower_generic"}


def test_amplify_table_with_k(capsys):
    assert main(["amplify", "--n", "1e4", "--eps0", "4", "--delta", "1e-6", "--k", "10"]) == 0
    out = capsys.readouterr().out
    assert "k-RR blanket" in out and "n/a" in out  # closed form does not apply at n = 1e4


def test_amplify_inverse(capsys):
    assert main(["amplify", "--inverse", "--n", "1e5", "--eps", "0.5", "--delta", "1e-6"]) == 0
    assert "Largest local eps0" in capsys.readouterr().out


def test_amplify_bad_input(capsys):
    assert main(["amplify", "--n", "0", "--eps0", "1", "--delta", "1e-6"]) == 2
    assert "n must be" in capsys.readouterr().err


def test_compose_json_matches_accountant(capsys):
    from ldpcompress.accounting import Accountant, ShuffledRound
    assert main(["compose", "--n", "1e4", "--eps0", "2", "--rounds", "10", "--delta", "1e-6",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["results"]
    res = Accountant().compose(ShuffledRound(10_000, 2.0), times=10).epsilon(1e-6)
    assert out["eps"] == res.value and out["method"] == res.method
    assert out["eps"] == min(v for v in out["methods"].values() if v is not None)
    assert out["lower"] <= out["eps"] <= out["methods"]["rdp"]


def test_compose_reports_the_smallest_method(capsys):
    # a coarse fixed grid loses to RDP: the table must report RDP, not the PLD value
    assert main(["compose", "--n", "1e4", "--eps0", "1", "--rounds", "1e3", "--delta", "1e-6",
                 "--h", "1e-2"]) == 0
    out = capsys.readouterr().out
    assert "RDP, the smallest sound bound" in out


@pytest.mark.parametrize("argv, message", [
    (["compose", "--n", "1e4", "--eps0", "2", "--rounds", "2.5", "--delta", "1e-6"],
     "--rounds must be an integer"),
    (["compose", "--n", "1e4", "--eps0", "2", "--rounds", "10", "--delta", "1e-6", "--h", "1e-9"],
     "MiB"),
    (["noise", "--n", "100", "--scale", "1", "--sensitivity", "nan"], "sensitivity"),
    (["noise", "--n", "100", "--scale", "1", "--sensitivity", "inf", "--json"], "sensitivity"),
    (["noise", "--n", "100", "--scale", "1", "--sensitivity", "1e300", "--json"], "overflow"),
    (["noise", "--n", "1e7", "--scale", "1"], "density terms"),
    (["noise", "--n", "2.5", "--scale", "1"], "--n must be an integer"),
    (["amplify", "--n", "1e5", "--eps0", "2", "--eps", "1", "--delta", "1e-6"], "not both"),
    (["amplify", "--inverse", "--n", "1e5", "--eps0", "2", "--eps", "1", "--delta", "1e-6"],
     "not both"),
    (["amplify", "--n", "1e5", "--eps0", "2", "--delta", "1e-6", "--k", "10", "--delta0", "1e-9"],
     "cannot be combined"),
    (["amplify", "--inverse", "--n", "1e5", "--eps", "1", "--delta", "1e-6", "--k", "10",
      "--delta0", "1e-9"], "cannot be combined"),
    (["amplify", "--inverse", "--n", "1e5", "--eps", "1", "--delta", "1e-6", "--no-lower"],
     "--no-lower"),
    (["compose", "--n", "1e4", "--eps0", "701", "--rounds", "10", "--delta", "1e-6"],
     "(0, 700]"),
])
def test_cli_refuses_ignored_or_bad_flags(capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    if "--json" in argv:  # stdout: the error as the one JSON object
        assert message in json.loads(captured.out)["error"]["message"]
    else:
        assert captured.out == ""


def test_compose_accepts_integral_float_rounds(capsys):
    assert main(["compose", "--n", "1e4", "--eps0", "2", "--rounds", "1e1", "--delta", "1e-6",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["rounds"] == 10


def test_amplify_inverse_honours_delta0(capsys):
    assert main(["amplify", "--inverse", "--n", "1e5", "--eps", "1", "--delta", "1e-6",
                 "--delta0", "1e-9", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    out = doc["results"]
    assert out["value"] == 1.0 and doc["params"]["delta0"] == 1e-9
    assert L.epsilon(100000, out["value"], 1e-6, delta0=1e-9).value <= 1.0


def test_noise_table(capsys):
    from ldpcompress.accounting import noise
    assert main(["noise", "--n", "100", "--scale", "1", "--orders", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["results"]
    assert out["gaussian"][0] == noise.gaussian_sum_rdp(100, 1.0, [2.0])[0]
    assert out["laplace_exact"][0] <= out["laplace_bound"][0]


def test_demo_end_to_end(capsys):
    assert main(["demo", "--n", "20000", "--k", "200", "--eps", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["results"]
    assert out["central_eps"] <= 1.0 and out["central_lower"] <= out["central_eps"]
    assert out["local_eps"] <= out["eps0"] and out["bits"] < out["rappor_bits"]
    # every top item is estimated within 5 standard errors of its own count
    from ldpcompress.randomizers.pirappor import PIRappor
    orc = PIRappor(200, out["eps0"])
    for _, true, est in out["top"]:
        assert abs(est - true) < 5 * orc.variance(20000, true) ** 0.5


def test_demo_table_and_bad_oracle(capsys):
    assert main(["demo", "--n", "5000", "--k", "50"]) == 0
    assert "top-10 items" in capsys.readouterr().out
    assert main(["demo", "--n", "0"]) == 2


def test_demo_best_oracle(capsys):
    """demo --oracle best runs the oracle planning.best_oracle ranks first (fails before: 'best'
    was refused as an unknown oracle)."""
    from ldpcompress.planning import best_oracle
    assert main(["demo", "--n", "5000", "--k", "30", "--oracle", "best", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["results"]
    ranking = best_oracle(30, 5000, 1.0, 1e-6, server_time=False)
    assert out["oracle"] == ranking.best.name
    assert [r["oracle"] for r in out["ranking"]] == [c.name for c in ranking.choices]
    assert out["eps0"] == ranking.best.eps0 and out["central_eps"] <= 1.0
    assert main(["demo", "--n", "100", "--oracle", "nope"]) == 2
    assert "(or best)" in capsys.readouterr().err


def test_missing_extra_names_it():
    import pytest

    from ldpcompress.core.optional import require
    with pytest.raises(ImportError, match=r"ldpcompress\[plot\]"):
        require("plot", "no_such_module_xyz")


# -- wording of refusals, demo at large eps (issue 13 follow-up) -------------------------------

@pytest.mark.parametrize("oracle, eps, eps0", [
    ("pi-rappor", "100", 21.487562596426983), ("olh", "20", 20.0), ("subset", "100", 700.0)])
def test_demo_runs_at_the_oracles_largest_eps0(capsys, oracle, eps, eps0):
    # was: "eps must be in (0, 21.4876] ..., got 60.0" (an internal value, not --eps), "got
    # 20.00000098720193" for OLH, and "math domain error" for subset selection. The largest
    # parameter each oracle accepts (subset selection: 700, realising a smaller eps0 with
    # 53-bit coins) is found by bisection (relative width 1e-9, lower end)
    argv = ["demo", "--n", "200", "--k", "10", "--eps", eps, "--oracle", oracle, "--json"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert eps0 * (1 - 1e-8) <= res["eps0"] <= eps0 and res["eps0_capped"]
    assert res["central_eps"] <= float(eps)
    assert main(argv[:-1]) == 0
    assert "(capped" in capsys.readouterr().out


def test_demo_refuses_an_eps_beyond_the_range_naming_the_option(capsys):
    assert main(["demo", "--n", "100", "--eps", "701"]) == 2
    assert capsys.readouterr().err.strip() == "ldpcompress: error: --eps must be in (0, 700], " \
                                              "got 701.0"


def test_subset_selection_at_large_eps():
    from ldpcompress.randomizers.subset import SubsetSelection
    for eps in (37.0, 60.0, 700.0):
        o = SubsetSelection(10, eps)
        assert o.q1 > 0 and o.a1 <= 1 and math.isfinite(o.deletion_eps)
        lo, hi = o.ratio_bounds()
        assert 0 < lo <= hi < math.inf


def test_limit_errors_tell_the_command_line_user_what_to_do(capsys):
    # was: "... reduce n or d (or raise max_bytes)": the command line has no max_bytes
    assert main(["mean", "--d", "1e6", "--n", "1e4"]) == 2
    err = capsys.readouterr().err
    assert "reduce --n or --d" in err and "(or raise max_bytes)" not in err
    assert "the command line keeps this limit" in err
    from ldpcompress.core.limits import check_bytes
    with pytest.raises(ValueError, match=r"\(or raise max_bytes\)"):  # the API still says it
        check_bytes(2 ** 40, "a table", "n")


def test_error_messages_are_one_line(capsys):
    assert main(["aggregate", ".", "--scheduler", "tcp://10.0.0.1:1\r\nfake line"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "\\r\\n" in err


def test_noise_orders_near_one_and_extreme_scales(capsys):
    from ldpcompress.accounting import noise as N
    from ldpcompress.accounting import rdp as R
    # was -0.032 at order 1 + 1e-7 (quadrature error / (alpha - 1)); the limit is the KL
    # divergence of Lap(1, 1) from Lap(0, 1), e^-1
    exact = N.laplace_sum_exact_rdp(1, 1.0, [1.0000001, 2.0])
    assert exact[0] == pytest.approx(math.exp(-1), rel=1e-5)
    assert exact[1] == pytest.approx(N.laplace_sum_rdp(1, 1.0, [2.0])[0], rel=1e-5)
    assert R.gaussian_rdp(1e300, [2.0])[0] == 0.0  # was OverflowError (sigma ** 2)
    assert (N.laplace_sum_exact_rdp(1, 1e-6, [1.5, 2.0], 1e-300) >= 0).all()
    assert (R.laplace_rdp(1e300, [1.5, 2.0]) >= 0).all()
    assert main(["noise", "--n", "1", "--scale", "1e300", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert all(v >= 0 for key in ("gaussian", "laplace_bound", "laplace_exact") for v in res[key])


def test_compose_with_a_vanishing_eps0_has_no_nan_in_the_pld(capsys):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # was: invalid value in divide (0/0)
        assert main(["compose", "--n", "1", "--eps0", "1e-300", "--rounds", "1", "--delta",
                     "1e-300", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    # one (1e-300, 0)-DP round has delta(0) <= tanh(1e-300 / 2) = 5e-301 <= 1e-300: eps = 0 is
    # the exact answer (the pure closed form reaches it); every method is a number >= 0
    assert res["eps"] == 0.0 and res["method"] == "pure"
    assert all(v is None or v >= 0 for v in res["methods"].values())


def test_amplify_inverse_at_vanishing_eps(capsys):
    # was: UnboundLocalError in solve.epsilon_for_delta when eps_max <= 1e-300 (found by
    # tests/test_fuzz_cli.py::test_amplify)
    assert main(["amplify", "--eps0", "1e-300", "--delta", "1e-300", "--eps", "1e-300",
                 "--inverse"]) == 0
    assert "Smallest n" in capsys.readouterr().out
    assert main(["amplify", "--n", "5", "--delta", "1e-300", "--eps", "1e-300",
                 "--inverse"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.endswith("1.00000e-300") and len(line) < 100  # not 300 digits


def test_floor_digits_never_rounds_up():
    from ldpcompress.cli.amplify import _floor_digits
    assert _floor_digits(1.2345678e-7) == "1.23456e-7"
    assert _floor_digits(9.99999999e-6) == "9.99999e-6"
    assert _floor_digits(3.7024171743541956) == "3.70241"


@pytest.mark.parametrize("oracle", ["pi-rappor", "rappor", "krr", "subset", "olh", "hadamard"])
def test_demo_at_a_vanishing_eps_is_refused_naming_the_option(capsys, oracle):
    # was (found by the fuzz suite): a division by zero in the estimator (a1 = a0 in double
    # precision) and infinite estimates, or an error naming the internal eps0
    assert main(["demo", "--eps", "1e-300", "--delta", "1e-300", "--oracle", oracle, "--n", "30",
                 "--k", "10", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ldpcompress: error: --eps = 1e-300") and "use a larger --eps" in err
    from ldpcompress.randomizers.estimator import binary_estimate
    with pytest.raises(ValueError, match="a1 > a0"):
        binary_estimate([1, 2], 3, 0.5, 0.5)


def test_every_command_has_one_json_option_after_its_own():
    """--json is declared once for all commands (the parser adds it), after their own options."""
    names = []
    for name, parser in command_parsers():
        names.append(name)
        flags = [a.option_strings for a in parser._actions]
        assert flags.count(["--json"]) == 1 and flags[-1] == ["--json"], name
        assert "--json" in parser.format_usage(), name
    assert {"amplify", "demo", "aggregate", "docs", "heavy-hitters simulate",
            "heavy-hitters words"} <= set(names)


def test_commands_print_through_the_one_runner():
    """No command module declares --json or prints the JSON envelope itself: the handlers
    return an Output and ldpcompress.cli.main prints it."""
    import ast
    from pathlib import Path

    import ldpcompress.cli as C
    for path in sorted(Path(C.__file__).parent.glob("*.py")):
        if path.name in ("util.py", "main.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        assert not [c for c in calls if getattr(c.func, "id", None) == "emit_json"], path.name
        assert not [c for c in calls if getattr(c.func, "attr", None) == "add_argument"
                    and c.args and getattr(c.args[0], "value", None) == "--json"], path.name


def test_output_runner_prints_text_or_one_envelope(capsys):
    """A command's Output: under --json only the envelope (on one line when indent is None),
    as text only show(); the other form is never computed."""
    from ldpcompress import __version__
    from ldpcompress.cli.util import Output

    def fail():
        raise AssertionError("the form not printed was computed")
    Output("x", lambda: ({"a": 1}, {"b": [1, 2]}, {"total": 0.5}), fail, indent=None).emit(True)
    line = capsys.readouterr().out
    assert line.count("\n") == 1
    assert json.loads(line) == dict(command="x", version=__version__, params={"a": 1},
                                    results={"b": [1, 2]}, timings={"total": 0.5})
    Output("x", fail, lambda: print("text")).emit(False)
    assert capsys.readouterr().out == "text\n"


@pytest.mark.parametrize("command", ["aggregate", "encode"])
def test_cli_domain_fifo_does_not_hang(tmp_path, command):
    pytest.importorskip("pyarrow")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    csv = tmp_path / "items.csv"
    csv.write_text("a\nb\n")
    args = ["aggregate", tmp_path / "none", "--domain", fifo] if command == "aggregate" else \
        ["encode", "--csv", csv, "--domain", fifo, "--eps", 1, "--out", tmp_path / "o"]
    r = cli_in_child(*args, timeout=60)
    assert r.returncode == 2 and f"--domain {fifo}: is a FIFO" in r.stderr, r.stderr


def test_seed_is_taken_exactly_or_refused(capsys):
    assert main(["demo", "--n", "1000", "--k", "4", "--seed", "9007199254740993",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["seed"] == 9007199254740993
    assert main(["demo", "--n", "1000", "--k", "4", "--seed", "9.007199254740993e15"]) == 2
    assert "must be given as digits" in capsys.readouterr().err


def test_cli_messages_name_the_culprit(tmp_path, capsys):
    assert main(["amplify", "--k", "1", "--n", "10", "--eps0", "1", "--delta", "1e-6"]) == 2
    assert "--k must be an integer in [2, 2147483647], got 1" in capsys.readouterr().err
    assert main(["simulate", "--n", "10", "--k", "4", "--out", "/proc/1"]) == 2
    assert "/proc/1: is on a file system without storage" in capsys.readouterr().err
    assert main(["amplify", "--help", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["command"] == "amplify" and "--oracle" in out["results"]["help"]
