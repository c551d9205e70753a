"""ldpcompress amplify with several values per option: a grid of queries in one call."""
import json

import pytest

import ldpcompress as L
from ldpcompress.accounting import inverse
from ldpcompress.cli import main


def test_grid_answers_every_combination_as_the_api_does(capsys):
    assert main(["amplify", "--n", "1e3", "1e4", "--eps0", "1", "4", "--delta", "1e-6",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["results"]["queries"]
    assert [(r["params"]["n"], r["params"]["eps0"]) for r in rows] == [
        (1000, 1.0), (1000, 4.0), (10000, 1.0), (10000, 4.0)]
    for r in rows:
        api = L.epsilon(r["params"]["n"], r["params"]["eps0"], 1e-6)
        assert (r["value"], r["method"], r["lower"]) == (api.value, api.method, api.lower)
    assert out["params"]["n"] == [1000, 10000] and out["params"]["delta"] == [1e-6]
    assert len(out["timings"]["queries"]) == 4


def test_grid_text_has_one_line_a_query(capsys):
    assert main(["amplify", "--n", "1e4", "--eps0", "2", "--eps", "0.5", "1"]) == 0
    out = capsys.readouterr().out
    for eps in (0.5, 1.0):
        value = L.delta(10_000, 2.0, eps).value
        assert any(line.split()[:2] == ["10000", "2"] and f"{value:.6g}" in line
                   for line in out.splitlines())
    assert "2 queries in" in out


def test_grid_of_inverse_queries(capsys):
    assert main(["amplify", "--inverse", "--n", "1e4", "1e5", "--eps", "1", "--delta", "1e-6",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]["queries"]
    assert [r["value"] for r in rows] == [inverse.max_eps0(n, 1.0, 1e-6) for n in (10_000,
                                                                                   100_000)]


def test_one_value_keeps_the_single_query_output(capsys):
    assert main(["amplify", "--n", "1e4", "--eps0", "2", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["params"]["n"] == 10000 and "queries" not in out["results"]


@pytest.mark.parametrize("argv, message", [
    (["--n", "1e4", "-3", "--eps0", "1", "--delta", "1e-6"], "--n must be"),
    (["--n", "1e4", "--eps0", "1", "nan", "--delta", "1e-6"], "--eps0"),
    (["--n", *["1e4"] * 101, "--eps0", *["1"] * 100, "--delta", "1e-6"], "at most 10000"),
])
def test_grid_refuses_a_bad_value_or_a_huge_grid(capsys, argv, message):
    assert main(["amplify", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
