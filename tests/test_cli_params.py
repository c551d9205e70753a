"""--json's params hold every option a command accepts: the argparse parser of each command
is walked and each of its options must be a key of the params that command prints (or be
listed below with the reason it is reported otherwise). Before this test, heavy-hitters
aggregate reported --scheduler alone of its cluster options, amplify's params were its
query's own (no --oracle, --gamma, --allocation, --inverse ...), and aggregate lacked the
TLS files, --allow-insecure and --worker-timeout."""
from __future__ import annotations

import json

import pytest

from commands import command_parsers
from ldpcompress.cli.main import main

pytest.importorskip("pyarrow")

# (command, option's dest) -> why params does not hold it under that name
EXCEPTIONS = {
    **{("aggregate", dest): "a part of the expected randomizer: params.expected is the "
       "registry spec of the randomizer these options build (None without --oracle)"
       for dest in ("oracle", "k", "eps", "d", "symmetric", "param", "compressed")},
    **{(command, dest): "a constructor parameter of --oracle: reported under the parameter's "
       "own name when given (--param NAME=VALUE as params.NAME), absent when not given (the "
       "randomizer then has no such parameter)"
       for command in ("simulate", "encode") for dest in ("d", "symmetric", "param")},
    **{("plan", dest): "a constructor parameter of --oracle: params.params holds them as "
       "validated (the oracle's parameters, --param NAME=VALUE under NAME)"
       for dest in ("k", "d", "symmetric", "param")},
    ("plan", "eps"): "never accepted with a value: refused, naming --central-eps (its old "
                     "meaning must not be reinterpreted)",
    ("plot", "eps"): "never accepted with a value: refused, naming --central-eps (its old "
                     "meaning must not be reinterpreted)",
    ("plot", "n"): "the devices of a simulated 'plot frequency' (its params.n); 'plot "
                   "amplification' draws --n-range and ignores --n: not reported as if used",
    ("docs", "path"): "reported as params.path_only: results.path is the page's path",
}
NOT_OPTIONS = {"help", "json"}  # --help prints and exits; --json selects this very output


def _command_parsers():
    return dict(command_parsers())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The inputs the commands below read: a report set, a CSV, and a one-round heavy-hitter
    campaign (plan, candidate list, report set and aggregate of 300 devices)."""
    from ldpcompress.core.entropy import simulation_entropy
    from ldpcompress.heavy.deploy import candidates, plan_campaign
    from ldpcompress.heavy.round_sets import read_round_set, write_round_set
    d = tmp_path_factory.mktemp("params")
    assert main(["simulate", "--n", "300", "--k", "20", "--out", str(d / "sim")]) == 0
    (d / "items.csv").write_text("1\n2\n3\n")
    (d / "counts.csv").write_text("ab,60\nc,30\nba,10\n")
    words = ["ab", "c", "ba"] * 100
    (d / "words.txt").write_text("\n".join(words) + "\n")
    campaign = plan_campaign(300, 2.0, 1e-6, rounds=1, step=2, keep=2, alphabet="abc",
                             oracles=["krr"], assignments=["groups"])
    first = candidates(campaign)
    write_round_set(words, campaign, first, d / "hs", entropy=simulation_entropy(1))
    (d / "plan.json").write_text(campaign.to_json())
    (d / "l1.json").write_text(first.to_json())
    (d / "a1.json").write_text(read_round_set(d / "hs", campaign, first).to_json())
    return d


def _invocations(d) -> dict[str, list[str]]:
    """One command line each command runs (with --json) in well under a second."""
    plan, l1 = str(d / "plan.json"), str(d / "l1.json")
    return {
        "amplify": ["--n", "1e4", "--eps0", "2", "--delta", "1e-6"],
        "compose": ["--n", "1e4", "--eps0", "2", "--rounds", "10", "--delta", "1e-6"],
        "noise": ["--n", "10", "--scale", "1", "--orders", "2"],
        "plan": ["--n", "1e4", "--rounds", "1", "--central-eps", "1", "--delta", "1e-6",
                 "--oracle", "krr", "--k", "10"],
        "heavy-hitters simulate": ["--counts", str(d / "counts.csv"), "--n", "2000", "--eps",
                                   "5", "--delta", "1e-4", "--top", "2", "--rounds", "3",
                                   "--step", "1", "--keep", "3", "--alphabet", "abc",
                                   "--oracles", "krr", "--assignments", "groups"],
        "heavy-hitters plan": ["--n", "300", "--eps", "2", "--rounds", "1", "--step", "2",
                               "--keep", "2", "--alphabet", "abc", "--oracles", "krr",
                               "--assignments", "groups", "--out", str(d / "plan2.json")],
        "heavy-hitters candidates": ["--plan", plan, "--out", str(d / "l1b.json")],
        "heavy-hitters encode": ["--plan", plan, "--list", l1, "--words", str(d / "words.txt"),
                                 "--out", str(d / "hs2"), "--simulation-seed", "1"],
        "heavy-hitters aggregate": [str(d / "hs"), "--plan", plan, "--list", l1, "--out",
                                    str(d / "a1b.json"), "--scheduler", "memory"],
        "heavy-hitters shuffle": [str(d / "hs"), "--plan", plan, "--list", l1, "--out",
                                  str(d / "hs3")],
        "heavy-hitters words": [str(d / "a1.json"), "--plan", plan],
        "demo": ["--n", "2000", "--k", "20"],
        "mean": ["--d", "5", "--n", "20"],
        "simulate": ["--n", "300", "--k", "20", "--out", str(d / "sim2")],
        "encode": ["--csv", str(d / "items.csv"), "--k", "5", "--eps", "2", "--out",
                   str(d / "enc")],
        "aggregate": [str(d / "sim"), "--scheduler", "memory"],
        "shuffle": [str(d / "sim"), str(d / "shuffled")],
        "plot": ["amplification", "--n-range", "1e3", "1e4", "--points", "2", "--out",
                 str(d / "a.png")],
        "randomizers": [],
        "docs": ["theory", "--section", "2.5"],
    }


def test_every_command_has_an_invocation_here(tmp_path):
    assert sorted(_invocations(tmp_path)) == sorted(_command_parsers())
    stale = [key for key in EXCEPTIONS
             if key[1] not in {a.dest for a in _command_parsers()[key[0]]._actions}]
    assert stale == []  # each exception names an option its command has


@pytest.mark.parametrize("command", sorted(_command_parsers()))
def test_json_params_hold_every_accepted_option(command, files, capsys):
    if command == "plot":
        pytest.importorskip("matplotlib")
    argv = command.split() + _invocations(files)[command] + ["--json"]
    assert main(argv) == 0, capsys.readouterr().err
    params = json.loads(capsys.readouterr().out)["params"]
    accepted = [a.dest for a in _command_parsers()[command]._actions
                if a.dest not in NOT_OPTIONS]
    missing = [dest for dest in accepted
               if dest not in params and (command, dest) not in EXCEPTIONS]
    assert missing == [], f"{command}: --json params lack {missing}"


def test_options_reported_as_given_never_make_the_json_invalid(tmp_path, capsys):
    """An option without a finite value (--lock-timeout inf: wait as long as it takes) is
    reported as null, and an option the command ignores is not reported at all: with them
    printed as given, --json failed ("a result is not a finite number") where it ran before."""
    argv = ["compose", "--n", "1e4", "--eps0", "2", "--rounds", "10", "--delta", "1e-6",
            "--lock-timeout", "inf", "--max-seconds", "inf", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    params = json.loads(capsys.readouterr().out)["params"]
    assert params["lock_timeout"] is None and params["max_seconds"] is None
    pytest.importorskip("matplotlib")
    argv = ["plot", "frequency", "--n", "500", "--k", "10", "--eps0", "nan", "--points", "inf",
            "--out", str(tmp_path / "f.png"), "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    params = json.loads(capsys.readouterr().out)["params"]
    assert params["n"] == 500 and not {"eps0", "points", "n_range"} & set(params)
