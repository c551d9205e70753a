"""The accounting commands (amplify, compose) take any registered randomizer by name with its
parameters (--oracle NAME --k/--d/--symmetric/--param, --plugin), like the report-set commands:
the same value as the API for the library's scalar and vector randomizers and for a randomizer
written outside the library (docs/examples/yes_no.py)."""
import json
import os

import pytest

import ldpcompress.accounting.amplification as A
from ldpcompress.accounting import Accountant, OracleShuffledRound, inverse
from ldpcompress.cli.main import main
from ldpcompress.randomizers import GaussianScalar, LaplaceScalar, PrivUnit2

from shipped import load_example

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "docs", "examples", "yes_no.py")


def _run(argv, capsys):
    assert main(argv + ["--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _refused(argv, capsys, *words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err


def test_amplify_a_laplace_scalar_by_name(capsys):
    doc = _run(["amplify", "--n", "2e4", "--eps0", "1", "--delta", "1e-6", "--oracle",
                "laplace-scalar", "--param", "lo=0", "--param", "hi=1"], capsys)
    api = A.epsilon(20_000, delta=1e-6, oracle=LaplaceScalar(0.0, 1.0, 1.0))
    assert doc["results"]["value"] == api.value and doc["results"]["lower"] == api.lower
    assert doc["results"]["method"] == "blanket_scalar"


def test_amplify_a_gaussian_scalar_has_no_eps0(capsys):
    argv = ["amplify", "--n", "2e4", "--delta", "1e-6", "--oracle", "gaussian-scalar",
            "--param", "lo=0", "--param", "hi=1", "--param", "sigma=2", "--no-lower"]
    doc = _run(argv, capsys)
    api = A.epsilon(20_000, delta=1e-6, oracle=GaussianScalar(0.0, 1.0, 2.0), lower=False)
    assert doc["results"]["value"] == api.value
    assert "sigma=2" in doc["params"]["oracle"]
    _refused(argv + ["--eps0", "1"], capsys, "--eps0", "no eps parameter", "sigma")
    inv = [a for a in argv if a != "--no-lower"] + ["--inverse", "--eps", "1"]
    _refused(inv, capsys, "--inverse", "eps parameter")


def test_amplify_inverse_of_privunit2(capsys):
    """max_eps0 walks the randomizer's plateaus: part of the contract (PrivUnit2 has none),
    not of the frequency oracles only (this failed with AttributeError)."""
    doc = _run(["amplify", "--inverse", "--n", "2e4", "--eps", "1", "--delta", "1e-6",
                "--oracle", "privunit2", "--d", "20"], capsys)
    api = inverse.max_eps0(20_000, 1.0, 1e-6, lambda e: PrivUnit2(20, e))
    assert doc["results"]["value"] == api and api > 1.0
    assert doc["params"]["oracle"] == "privunit2" and doc["params"]["d"] == 20


def test_compose_privunit2_rounds_by_name(capsys):
    doc = _run(["compose", "--n", "2e4", "--eps0", "2", "--rounds", "3", "--delta", "1e-6",
                "--oracle", "privunit2", "--d", "20"], capsys)
    api = Accountant().compose(OracleShuffledRound(20_000, PrivUnit2(20, 2.0)), times=3)
    assert doc["results"]["eps"] == api.epsilon(1e-6).value


def test_a_plugin_randomizer_in_the_accounting_commands(capsys):
    cls = load_example()
    doc = _run(["amplify", "--n", "5000", "--eps0", "2", "--delta", "1e-6", "--oracle",
                "yes-no", "--plugin", EXAMPLE], capsys)
    assert doc["results"]["value"] == A.epsilon(5000, delta=1e-6, oracle=cls(2.0)).value
    doc = _run(["compose", "--n", "5000", "--eps0", "2", "--rounds", "4", "--delta", "1e-6",
                "--oracle", "yes-no", "--plugin", EXAMPLE], capsys)
    api = Accountant().compose(OracleShuffledRound(5000, cls(2.0)), times=4)
    assert doc["results"]["eps"] == api.epsilon(1e-6).value


@pytest.mark.parametrize("argv, words", [
    (["amplify", "--n", "1e4", "--eps0", "2", "--delta", "1e-6", "--d", "5"], ["--d", "--oracle"]),
    (["compose", "--n", "1e4", "--eps0", "2", "--rounds", "2", "--delta", "1e-6", "--param",
      "q=3"], ["--param", "--oracle"]),
    (["amplify", "--n", "1e4", "--eps0", "2", "--delta", "1e-6", "--oracle", "krr"],
     ["--oracle krr", "--k"]),
    (["amplify", "--n", "1e4", "--eps0", "2", "--delta", "1e-6", "--oracle", "privunit2",
      "--d", "8", "--param", "eps=3"], ["--param eps", "--eps0"]),
    (["amplify", "--n", "1e4", "--eps0", "2", "--delta", "1e-6", "--oracle", "oue", "--k", "8",
      "--param", "q=3"], ["--param", "oue", "'q'"]),
    (["amplify", "--n", "1e4", "--eps0", "2", "--delta", "1e-6", "--oracle", "no-such"],
     ["no-such"]),
    (["compose", "--n", "1e4", "--rounds", "2", "--delta", "1e-6", "--oracle", "oue", "--k",
      "8"], ["--eps0"]),
])
def test_refusals_name_the_option(argv, words, capsys):
    _refused(argv, capsys, *words)
