import json

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
    acct = Accountant().compose(ShuffledRound(10_000, 2.0), times=10)
    assert out["results"]["pld"]["eps"] == acct.epsilon(1e-6).value
    assert out["results"]["pld"]["lower"] <= out["results"]["pld"]["eps"] <= out["results"]["rdp"]["eps"]


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
