"""A heavy-hitter Campaign is certified at the API boundary (ldpcompress/heavy/campaign.py:
Campaign.certified, certified_campaign): every public function that takes one (deploy.candidates,
deploy.found_words, round_sets.write_round_set / write_round_inputs / read_round_set /
shuffle_round_set) recomputes its bounds from its own n, assignment and oracles and refuses a
Campaign built by hand, made by dataclasses.replace or changed in place whose stored ledger or
oracles do not hold, naming the field and both values."""
from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np
import pytest

from ldpcompress.accounting import amplification as amp
from ldpcompress.cli.main import main
from ldpcompress.core.entropy import simulation_entropy
from ldpcompress.heavy.campaign import Campaign, certified_campaign
from ldpcompress.heavy.deploy import candidates, found_words, plan_campaign
from ldpcompress.heavy.round_sets import (read_round_set, shuffle_round_set, write_round_inputs,
                                          write_round_set)
from ldpcompress.randomizers.catalog import make_oracle

pytest.importorskip("pyarrow")

N = 3000
WORDS = ["ab"] * 500 + ["c"] * 300 + ["ba"] * 150 + ["a"] * 50
TREE = dict(rounds=3, step=1, keep=2, alphabet="abc", oracles=["krr"], assignments=["groups"])


@pytest.fixture(scope="module")
def campaign():
    """A 3-round plan of n = 3000 devices at (2, 1e-6) under public groups."""
    return plan_campaign(N, 2.0, 1e-6, **TREE)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def round1(campaign, tmp_path_factory):
    """Round 1's list, report set and aggregate of the honest campaign."""
    d = tmp_path_factory.mktemp("heavy_campaign")
    l1 = candidates(campaign)
    write_round_set(WORDS, campaign, l1, d / "set1", entropy=simulation_entropy(1))
    return l1, d / "set1", read_round_set(d / "set1", campaign, l1)


def _forgeries(c: Campaign):
    """(name, forged campaign, the error it must raise): eps0 = 40, a wrong k, a lowered
    and a raised certificate, a changed lower bound; through the public API only."""
    k, e0 = c.shape.k, c.oracle(1).eps
    big = (make_oracle("krr", k, 40.0),) * 3
    return [
        ("eps0 40", dataclasses.replace(c, oracles=big),
         r"certify central eps \S+ > its target 2 .*key 'eps'; eps0 = \[40.0, 40.0, 40.0\]"),
        ("hand-built eps0 40", Campaign(c.shape, c.n, c.eps, c.delta, c.assignment, big,
                                        c.upper, c.lower),
         r"certify central eps \S+ > its target 2 .*eps0 = \[40.0"),
        ("wrong k", dataclasses.replace(c, oracles=(make_oracle("krr", k + 1, e0),) * 3),
         rf"round 1's oracle must be a frequency oracle on k = {k} indices, got .*k={k + 1}"),
        ("lowered upper", dataclasses.replace(c, upper=c.upper - 1e-3),
         rf"ledger.upper = {c.upper - 1e-3!r} differs from the central eps {c.upper!r}"),
        ("raised upper", dataclasses.replace(c, upper=2.0),
         rf"ledger.upper = 2.0 differs from the central eps {c.upper!r}"),
        ("changed lower", dataclasses.replace(c, lower=c.lower / 2),
         rf"ledger.lower = {c.lower / 2!r} differs from round 1's exact attack {c.lower!r}"),
    ]


CALLS = {
    "candidates round 1": lambda c, l1, s, a, tmp: candidates(c),
    "candidates round 2": lambda c, l1, s, a, tmp: candidates(c, a),
    "write_round_set": lambda c, l1, s, a, tmp: write_round_set(
        ["ab"], c, c.first_list(), tmp / "w", entropy=simulation_entropy(2)),
    "write_round_inputs": lambda c, l1, s, a, tmp: write_round_inputs(
        np.zeros(3, np.int64), c, c.first_list(), tmp / "w", entropy=simulation_entropy(2)),
    "read_round_set": lambda c, l1, s, a, tmp: read_round_set(s, c, c.first_list()),
    "shuffle_round_set": lambda c, l1, s, a, tmp: shuffle_round_set(
        s, c, c.first_list(), tmp / "t", entropy=simulation_entropy(3)),
    "found_words": lambda c, l1, s, a, tmp: found_words(c, [a]),
}


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("which", range(6))
def test_every_public_function_certifies_its_campaign(campaign, round1, tmp_path, call, which):
    # before the fix read_round_set, found_words, write_round_* and shuffle_round_set used the
    # Campaign as given (candidates checked only eps <= target): eps0 = 40, a wrong k or a
    # lowered stored certificate was accepted and its stored ledger reported
    name, forged, match = _forgeries(campaign)[which]
    l1, s, a = round1
    with pytest.raises(ValueError, match=match):
        CALLS[call](forged, l1, s, a, tmp_path)


def test_the_honest_campaign_is_certified_once(campaign, round1, monkeypatch):
    # the seal: one recomputation per content; a replace() (a new object) or an in-place
    # change of a sealed Campaign is certified again
    c = dataclasses.replace(campaign)
    calls = []
    real = Campaign.certify
    monkeypatch.setattr(Campaign, "certify", lambda self: calls.append(1) or real(self))
    l1, s, a = round1
    assert certified_campaign(c) is c and c.certified() == campaign.upper
    read_round_set(s, c, l1)
    candidates(c, a)
    assert len(calls) == 1
    assert dataclasses.replace(c).certified() == campaign.upper and len(calls) == 2
    object.__setattr__(c, "upper", campaign.upper - 1e-3)  # a change that bypasses frozen
    with pytest.raises(ValueError, match="ledger.upper = .* differs from the central eps"):
        found_words(c, [a])


def test_a_campaign_of_another_type_is_refused(round1):
    l1, s, _ = round1
    with pytest.raises(TypeError, match="campaign must be a Campaign, got dict"):
        read_round_set(s, {"n": N}, l1)
    with pytest.raises(TypeError, match="campaign must be a Campaign, got str"):
        candidates("plan.json")
    with pytest.raises(TypeError, match="campaign: not a plan"):
        candidates(Campaign(None, N, 2.0, 1e-6, "groups", (), 1.0, None))  # type: ignore


def test_the_stored_lower_bound_is_recomputed(campaign):
    # independent of the planner: round 1's exact attack on n // T devices of its oracle
    want = amp.epsilon(N // 3, None, 1e-6, oracle=campaign.oracle(1), lower=True).lower
    assert campaign.lower == want <= campaign.upper
    assert certified_campaign(campaign) is campaign


def _resealed(doc: dict) -> str:
    body = {k: v for k, v in doc.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return json.dumps(dict(body, digest=hashlib.sha256(text.encode()).hexdigest()))


@pytest.mark.parametrize("key, value, match", [
    ("lower", 0.5, r"ledger.lower = 0.5 differs from round 1's exact attack"),
    ("upper", 1.9999, r"ledger.upper = 1.9999 differs from the central eps"),
])
def test_a_plan_file_with_another_ledger_is_refused_at_load(campaign, tmp_path, capsys, key,
                                                            value, match):
    # before the fix the CLI range-checked the stored lower bound (0 <= lower <= upper) and
    # printed it; a resealed ledger.upper within the target loaded too
    doc = json.loads(campaign.to_json())
    doc["ledger"][key] = value
    plan = tmp_path / "plan.json"
    plan.write_text(_resealed(doc))
    forged = Campaign.from_json(plan.read_text())  # the file's checks: in range, it loads
    with pytest.raises(ValueError, match=match):
        candidates(forged)
    code = main(["heavy-hitters", "candidates", "--plan", str(plan), "--out",
                 str(tmp_path / "l1.json")])
    err = capsys.readouterr().err
    assert code == 2 and f"--plan {plan}" in err and "differs" in err
    assert "Traceback" not in err
