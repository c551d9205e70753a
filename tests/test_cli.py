import json

import pytest

from ldpcompress.cli import main
import ldpcompress as L


def test_amplify_json_matches_api(capsys):
    assert main(["amplify", "--n", "1e5", "--eps0", "2", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == L.epsilon(100000, 2.0, 1e-6).value
    assert {b["name"] for b in out["bounds"]} >= {"closed_form", "general", "lower_binary"}


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
    from ldpcompress.accountant import Accountant, ShuffledRound
    assert main(["compose", "--n", "1e4", "--eps0", "2", "--rounds", "10", "--delta", "1e-6",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
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
    (["noise", "--n", "10000", "--scale", "1"], "GiB"),
    (["noise", "--n", "2.5", "--scale", "1"], "--n must be an integer"),
    (["amplify", "--n", "1e5", "--eps0", "2", "--eps", "1", "--delta", "1e-6"], "not both"),
    (["amplify", "--inverse", "--n", "1e5", "--eps0", "2", "--eps", "1", "--delta", "1e-6"],
     "not both"),
    (["amplify", "--n", "1e5", "--eps0", "2", "--delta", "1e-6", "--k", "10", "--delta0", "1e-9"],
     "cannot be combined"),
    (["amplify", "--inverse", "--n", "1e5", "--eps", "1", "--delta", "1e-6", "--k", "10",
      "--delta0", "1e-9"], "cannot be combined"),
])
def test_cli_refuses_ignored_or_bad_flags(capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_compose_accepts_integral_float_rounds(capsys):
    assert main(["compose", "--n", "1e4", "--eps0", "2", "--rounds", "1e1", "--delta", "1e-6",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["rounds"] == 10


def test_amplify_inverse_honours_delta0(capsys):
    assert main(["amplify", "--inverse", "--n", "1e5", "--eps", "1", "--delta", "1e-6",
                 "--delta0", "1e-9", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == 1.0 and out["params"]["delta0"] == 1e-9
    assert L.epsilon(100000, out["value"], 1e-6, delta0=1e-9).value <= 1.0


def test_noise_table(capsys):
    from ldpcompress import noise
    assert main(["noise", "--n", "100", "--scale", "1", "--orders", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gaussian"][0] == noise.gaussian_sum_rdp(100, 1.0, [2.0])[0]
    assert out["laplace_exact"][0] <= out["laplace_bound"][0]


def test_demo_end_to_end(capsys):
    assert main(["demo", "--n", "20000", "--k", "200", "--eps", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["central_eps"] <= 1.0 and out["central_lower"] <= out["central_eps"]
    assert out["local_eps"] <= out["eps0"] and out["bits"] < out["rappor_bits"]
    # every top item is estimated within 5 standard errors of its own count
    from ldpcompress.pirappor import PIRappor
    orc = PIRappor(200, out["eps0"])
    for _, true, est in out["top"]:
        assert abs(est - true) < 5 * orc.variance(20000, true) ** 0.5


def test_demo_table_and_bad_oracle(capsys):
    assert main(["demo", "--n", "5000", "--k", "50"]) == 0
    assert "top-10 items" in capsys.readouterr().out
    assert main(["demo", "--n", "0"]) == 2


def test_missing_extra_names_it():
    import pytest
    from ldpcompress.optional import require
    with pytest.raises(ImportError, match=r"ldpcompress\[plot\]"):
        require("plot", "no_such_module_xyz")
