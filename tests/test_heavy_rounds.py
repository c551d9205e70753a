"""The per-round deployment of the heavy-hitter job (ldpcompress/heavy/campaign.py, rounds.py,
round_sets.py, deploy.py; CLI heavy-hitters plan | candidates | encode | aggregate | words):
each round as a report set holding its candidate list, and every hostile input refused with a
clear error (exit 2 on the command line), never a traceback."""
from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest

from ldpcompress.cli.main import main
from ldpcompress.core.entropy import simulation_entropy
from ldpcompress.heavy.campaign import Campaign
from ldpcompress.heavy.deploy import candidates, found_words, plan_campaign
from ldpcompress.heavy.round_sets import (read_round_set, set_list, shuffle_round_set,
                                          write_round_set)
from ldpcompress.heavy.rounds import RoundAggregate, RoundList, aggregate_round, encode_words

pytest.importorskip("pyarrow")

N = 3000
WORDS = ["ab"] * 500 + ["c"] * 300 + ["ba"] * 150 + ["abd"] * 30 + ["cccc"] * 20


@pytest.fixture(scope="module")
def campaign():
    return plan_campaign(N, 2.0, 1e-6, rounds=3, step=1, keep=2, alphabet="abc",
                         oracles=["krr"], assignments=["groups"])


@pytest.fixture(scope="module")
def other_campaign():
    return plan_campaign(N, 1.5, 1e-6, rounds=3, step=1, keep=2, alphabet="abc",
                         oracles=["krr"], assignments=["groups"])


@pytest.fixture(scope="module")
def flow(campaign, tmp_path_factory):
    """Every round through report sets (seeded simulation coins), the API's path; the same
    devices report in every round (max_len = 2: 'cccc' is too long, 'abd' has a 'd')."""
    d = tmp_path_factory.mktemp("heavy_rounds")
    lists, aggs = [candidates(campaign)], []
    for j in (1, 2, 3):
        write_round_set(WORDS, campaign, lists[-1], d / f"set{j}",
                        entropy=simulation_entropy(j))
        aggs.append(read_round_set(d / f"set{j}", campaign, lists[-1]))
        if j < 3:
            lists.append(candidates(campaign, aggs[-1]))
    return d, tuple(lists), tuple(aggs)


def _cli(capsys, *argv):
    code = main(["heavy-hitters", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


# -- the plan file --------------------------------------------------------------------------
def test_plan_round_trips_and_an_edited_plan_is_refused(campaign):
    text = campaign.to_json()
    assert Campaign.from_json(text) == campaign
    doc = json.loads(text)
    assert doc["terminator"] == 0 and doc["eps0"] == [campaign.oracle(1).eps] * 3
    assert doc["ledger"]["upper"] <= 2.0 and doc["alphabet"] == "abc"
    doc["eps"] = 3.0
    with pytest.raises(ValueError, match="stored digest .* differs .*the plan was edited"):
        Campaign.from_json(json.dumps(doc))


def _resealed(doc: dict) -> str:
    """The plan's content with a digest recomputed (an edit that also forged the digest)."""
    body = {k: v for k, v in doc.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return json.dumps(dict(body, digest=hashlib.sha256(text.encode()).hexdigest()))


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(k=10), "key 'k' = 10 but the tree has k = 9"),
    (lambda d: d.update(eps0=[9.0] * 3), r"eps0\[0\] = 9.0 differs"),
    (lambda d: d["ledger"].update(upper=5.0), "does not meet the target"),
    (lambda d: d.update(assignment="everyone"), "key 'assignment' must be one of"),
    (lambda d: d.update(terminator=1), "key 'terminator' must be 0"),
    (lambda d: d.update(rounds=True), "key 'rounds' must be an integer"),
    (lambda d: d.pop("relation"), "keys .* expected"),
    (lambda d: d["oracles"][1].update(randomizer="nope"), r"oracles\[1\]"),
])
def test_a_forged_plan_is_refused_naming_the_key(campaign, edit, match):
    doc = json.loads(campaign.to_json())
    edit(doc)
    with pytest.raises(ValueError, match=match):
        Campaign.from_json(_resealed(doc))


def test_plan_file_that_is_not_json_or_not_a_plan(campaign):
    with pytest.raises(ValueError, match="not a JSON plan"):
        Campaign.from_json(b"\xff\xfe{")
    with pytest.raises(ValueError, match="not a heavy-hitter plan"):
        Campaign.from_json("[1, 2]")


# -- each round as a report set -------------------------------------------------------------
def test_round_sets_give_the_in_memory_estimates(campaign, flow):
    d, (l1, *_), (a1, *_) = flow
    # the same seeded coins in memory: the same reports, hence the same estimates
    digest, reports = encode_words(WORDS, l1, campaign.oracle(1), simulation_entropy(1))
    assert np.array_equal(aggregate_round(l1, campaign.oracle(1), reports, digest),
                          a1.estimates)
    assert a1.reports == len(WORDS) and set_list(d / "set1" / "manifest.json") == l1
    # 'a' prefixes 530 devices ('abd' is outside the alphabet: other), 'c' 300 ('cccc' is
    # longer than max_len 1: other): within 6 standard deviations of the oracle's variance
    a, c, other = (l1.codes.index(1), l1.codes.index(3), l1.k - 1)
    for i, true in ((a, 500), (c, 300), (other, 50)):
        assert abs(a1.estimates[i] - true) <= 6 * math.sqrt(a1.variances[i])


def test_words_found_over_the_rounds(campaign, flow):
    _, (_, l2, _), (a1, a2, a3) = flow
    assert l2.index == 2 and l2.campaign == campaign.digest
    found = found_words(campaign, [a3, a1, a2], top=2)
    # frequencies of 'ab' and 'c' among the reporting devices, scaled to n
    assert [w.word for w in found] == ["ab", "c"]
    assert abs(found[0].estimate - N * 500 / len(WORDS)) <= 6 * (found[0].high
                                                                 - found[0].estimate)
    with pytest.raises(ValueError, match=r"one aggregate for each round 1 to 3, got rounds "
                                         r"\[1, 3\]"):
        found_words(campaign, [a1, a3])


def test_a_set_of_another_round_is_refused_naming_both_digests(campaign, flow):
    d, (l1, l2, _), _ = flow
    with pytest.raises(ValueError, match=f"candidate list {l1.digest[:16]}.*round 1.*round 2's "
                                         f"list {l2.digest[:16]}"):
        read_round_set(d / "set1", campaign, l2)


def test_a_list_of_another_campaign_is_refused(campaign, other_campaign, flow):
    d, (l1, *_), _ = flow
    with pytest.raises(ValueError, match=f"plan {campaign.digest[:16]}.*not to this plan "
                                         f"{other_campaign.digest[:16]}"):
        read_round_set(d / "set1", other_campaign, l1)
    with pytest.raises(ValueError, match="not to this plan"):
        write_round_set(["ab"], other_campaign, l1, d / "never")
    assert not (d / "never").exists()


def test_a_replaced_candidate_file_is_refused(campaign, flow, tmp_path):
    import shutil
    d, (l1, l2, _), _ = flow
    shutil.copytree(d / "set1", tmp_path / "s")
    (tmp_path / "s" / "candidates.json").write_text(l2.to_json())
    with pytest.raises(ValueError, match="differs from the SHA-256 its manifest lists"):
        read_round_set(tmp_path / "s", campaign, l1)


def test_a_plain_report_set_is_not_a_round(campaign, tmp_path):
    from ldpcompress.scale.writer import write_reports
    o = campaign.oracle(1)
    write_reports(tmp_path / "plain", o, o.randomize_many(np.zeros(5, np.int64),
                                                          simulation_entropy(0)), shards=1)
    with pytest.raises(ValueError, match="lists no candidate list"):
        read_round_set(tmp_path / "plain", campaign, candidates(campaign))


def test_an_empty_round_and_words_of_no_code(campaign, tmp_path):
    l1 = candidates(campaign)
    with pytest.raises(ValueError, match="no device to encode"):
        write_round_set([], campaign, l1, tmp_path / "empty")
    # an empty round's aggregate (no report): zero estimates, the survivors by code, and the
    # round adds nothing to the words
    empty = RoundAggregate.of_summary(l1, campaign.oracle(1), None, 0)
    assert empty.reports == 0 and not np.any(empty.estimates)
    # ties by code: '$' (ended: '$$' only) and 'a' (a$, aa, ab, ac) survive
    assert candidates(campaign, empty).codes == (0, 4, 5, 6, 7)
    _, other = write_round_set(["ab", "abd", "cccc", "x", "é"], campaign, l1, tmp_path / "s",
                               entropy=simulation_entropy(3))
    assert other == 4  # outside the alphabet or longer than max_len = 2


def test_threshold_with_no_survivor_is_refused(campaign, flow):
    _, (l1, *_), (a1, *_) = flow
    with pytest.raises(ValueError, match="no candidate of round 1 has its 0.95 lower "
                                         "confidence bound above the threshold 1e"):
        candidates(campaign, a1, level=0.95, threshold=1e9)
    with pytest.raises(ValueError, match="threshold must be a finite number of devices"):
        candidates(campaign, a1, level=0.95, threshold=float("nan"))
    adaptive = candidates(campaign, a1, level=0.95, threshold=100.0)
    # only 'a' and 'c' clear 100 devices: each grows into its 4 children (x$, xa, xb, xc)
    assert adaptive.codes == (4, 5, 6, 7, 12, 13, 14, 15)


def test_an_edited_aggregate_is_refused(flow):
    _, _, (a1, *_) = flow
    doc = json.loads(a1.to_json())
    assert RoundAggregate.from_json(a1.to_json()).digest == a1.digest
    doc["estimates"][0] += 1.0
    with pytest.raises(ValueError, match="the aggregate was edited"):
        RoundAggregate.from_json(json.dumps(doc))
    doc = json.loads(a1.to_json())
    doc["variances"][0] = -1.0
    with pytest.raises(ValueError, match="variances >= 0"):
        RoundAggregate.from_json(json.dumps(doc))


def test_huge_alphabet_power_step_refused_before_work():
    with pytest.raises(ValueError, match="exceeds the limit MAX_K = 4,194,304"):
        plan_campaign(10 ** 6, 1.0, 1e-6, rounds=2, step=3, keep=40, alphabet="bytes")
    with pytest.raises(ValueError, match="prefix codes above 2"):
        plan_campaign(10 ** 6, 1.0, 1e-6, rounds=8, step=8, keep=1, alphabet="bytes")


# -- the command line -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def cli_files(campaign, other_campaign, tmp_path_factory):
    d = tmp_path_factory.mktemp("heavy_cli")
    (d / "plan.json").write_text(campaign.to_json())
    (d / "other_plan.json").write_text(other_campaign.to_json())
    (d / "words.txt").write_text("\n".join(WORDS) + "\n")
    return d


def test_cli_runs_every_step(cli_files, capsys):
    d = cli_files
    assert _cli(capsys, "candidates", "--plan", d / "plan.json", "--out", d / "l1.json")[0] == 0
    code, out, _ = _cli(capsys, "encode", "--plan", d / "plan.json", "--list", d / "l1.json",
                        "--words", d / "words.txt", "--out", d / "s1", "--json")
    res = json.loads(out)["results"]
    assert code == 0 and res["reports"] == len(WORDS) and res["other"] == 50
    assert res["coins"] == "os.urandom"
    from ldpcompress.scale.manifest import read_info
    assert read_info(d / "s1" / "manifest.json").coins == "os.urandom"
    assert _cli(capsys, "shuffle", d / "s1", "--plan", d / "plan.json", "--list",
                d / "l1.json", "--out", d / "s1-shuffled")[0] == 0
    assert _cli(capsys, "aggregate", d / "s1-shuffled", "--plan", d / "plan.json", "--list",
                d / "l1.json", "--out", d / "a1.json")[0] == 0
    assert _cli(capsys, "candidates", "--plan", d / "plan.json", "--aggregate", d / "a1.json",
                "--out", d / "l2.json")[0] == 0
    code, out, _ = _cli(capsys, "encode", "--plan", d / "plan.json", "--list", d / "l2.json",
                        "--words", d / "words.txt", "--out", d / "s2", "--simulation-seed", 4)
    assert code == 0 and "NO privacy" in out
    assert read_info(d / "s2" / "manifest.json").coins == "simulated"
    assert _cli(capsys, "aggregate", d / "s2", "--plan", d / "plan.json", "--list",
                d / "l2.json", "--out", d / "a2.json")[0] == 0
    assert _cli(capsys, "candidates", "--plan", d / "plan.json", "--aggregate", d / "a2.json",
                "--out", d / "l3.json", "--threshold-level", 0.9, "--threshold", 50)[0] == 0
    assert _cli(capsys, "encode", "--plan", d / "plan.json", "--list", d / "l3.json",
                "--words", d / "words.txt", "--out", d / "s3")[0] == 0
    assert _cli(capsys, "aggregate", d / "s3", "--plan", d / "plan.json", "--list",
                d / "l3.json", "--out", d / "a3.json")[0] == 0
    code, out, _ = _cli(capsys, "words", d / "a1.json", d / "a2.json", d / "a3.json", "--plan",
                        d / "plan.json", "--top", 2, "--json")
    doc = json.loads(out)
    assert code == 0 and [w["word"] for w in doc["results"]["words"]] == ["ab", "c"]
    assert set(doc["results"]["words"][0]) == {"word", "estimate", "low", "high"}
    # a set of round 1 against round 2's list, naming both lists' digests
    l1 = RoundList.from_json((d / "l1.json").read_text())
    l2 = RoundList.from_json((d / "l2.json").read_text())
    code, _, err = _cli(capsys, "aggregate", d / "s1", "--plan", d / "plan.json", "--list",
                        d / "l2.json", "--out", d / "x.json")
    assert code == 2 and l1.digest[:16] in err and l2.digest[:16] in err
    assert "Traceback" not in err
    # a list of this campaign read with another campaign's plan
    code, _, err = _cli(capsys, "encode", "--plan", d / "other_plan.json", "--list",
                        d / "l1.json", "--words", d / "words.txt", "--out", d / "x")
    assert code == 2 and "not to this plan" in err and "Traceback" not in err
    # an existing output is kept unless --overwrite
    code, _, err = _cli(capsys, "candidates", "--plan", d / "plan.json", "--out", d / "l1.json")
    assert code == 2 and "--overwrite" in err


@pytest.mark.parametrize("write, match", [
    (lambda d: (d / "w.txt").write_bytes(b"ab\n\xff\xfe\n"), "line 2: not UTF-8"),
    (lambda d: (d / "w.txt").write_bytes(b"ab\n\nc\n"), "line 2: empty word"),
    (lambda d: (d / "w.txt").write_bytes(b""), "no word"),
])
def test_cli_refuses_bad_words_files(cli_files, tmp_path, capsys, write, match):
    d = cli_files
    (tmp_path / "l1.json").write_text(Campaign.from_json(
        (d / "plan.json").read_text()).first_list().to_json())
    write(tmp_path)
    code, _, err = _cli(capsys, "encode", "--plan", d / "plan.json", "--list",
                        tmp_path / "l1.json", "--words", tmp_path / "w.txt", "--out",
                        tmp_path / "s")
    assert code == 2 and match in err and "Traceback" not in err


@pytest.mark.parametrize("edit, match", [
    (lambda doc: doc.update(codes=[0, 1, 3]), "the list was edited"),
    (lambda doc: doc.update(index=2), "the list was edited"),
    (lambda doc: doc.update(campaign="0" * 64), "the list was edited"),
    (lambda doc: doc.update(codes=[2 ** 70]), "prefix codes in [0, 4)"),
    (lambda doc: doc.update(codes=[True]), "codes must be a list of integers"),
])
def test_cli_refuses_an_edited_list(cli_files, tmp_path, capsys, edit, match):
    d = cli_files
    doc = json.loads(Campaign.from_json((d / "plan.json").read_text()).first_list().to_json())
    edit(doc)
    (tmp_path / "l.json").write_text(json.dumps(doc))
    code, _, err = _cli(capsys, "encode", "--plan", d / "plan.json", "--list", tmp_path / "l.json",
                        "--words", d / "words.txt", "--out", tmp_path / "s")
    assert code == 2 and match in err and "Traceback" not in err


@pytest.mark.parametrize("argv, match", [
    (["plan", "--n", 1e6, "--eps", 1, "--alphabet", "bytes", "--step", 3, "--rounds", 2,
      "--out", "p.json"],
     "MAX_K"),
    (["plan", "--n", 1e6, "--eps", 1, "--out", "p.json", "--keep", 0], "--keep"),
    (["plan", "--n", 1e6, "--out", "p.json"], "needs --n, --eps and --out"),
    (["candidates", "--plan", "nope.json", "--out", "l.json"], "nope.json"),
    (["words", "--plan", "nope.json"], "every round's aggregate"),
])
def test_cli_refuses_bad_arguments(argv, match, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and match in err and "Traceback" not in err


def test_cli_refuses_an_edited_plan(cli_files, tmp_path, capsys):
    doc = json.loads((cli_files / "plan.json").read_text())
    doc["n"] = 10 ** 6
    (tmp_path / "p.json").write_text(json.dumps(doc))
    code, _, err = _cli(capsys, "candidates", "--plan", tmp_path / "p.json", "--out",
                        tmp_path / "l.json")
    assert code == 2 and "the plan was edited" in err


# -- per-round eps0 from the inverse query on the composed bound ----------------------------
@pytest.mark.slow
def test_per_round_eps0_under_groups_is_the_largest_round(campaign):
    from ldpcompress.accounting import amplification as amp
    from ldpcompress.heavy.accounting import ledger
    from ldpcompress.randomizers.catalog import make_oracle
    c = plan_campaign(N, 2.0, 1e-6, rounds=3, step=1, keep=2, alphabet="abc",
                      oracles=["krr"], assignments=["groups"], eps0_weights=[1, 1, 2])
    common = campaign.oracle(1).eps
    # parallel composition: the largest round alone meets the target, so it gets the common
    # eps0 (the bisection's verified end) and the others half of it
    assert [o.eps for o in c.oracles] == [common / 2, common / 2, common]
    top = make_oracle("krr", c.shape.k, common)
    by_hand = min(ledger(N, 3, "groups", top).epsilon(1e-6).value,
                  amp.epsilon(N // 3, None, 1e-6, oracle=top, lower=False).value)
    assert c.upper == by_hand and c.upper <= 2.0
    assert Campaign.from_json(c.to_json()) == c and c.digest != campaign.digest


@pytest.mark.slow
def test_per_round_eps0_under_poisson_equals_the_ledger_composed_by_hand():
    from ldpcompress.accounting.accountant import Accountant
    from ldpcompress.accounting.events import SampledOracleShuffledRound
    from ldpcompress.planning.campaign import COMPOSE_H
    common = plan_campaign(N, 2.0, 1e-6, rounds=3, step=1, keep=2, alphabet="abc",
                           oracles=["krr"], assignments=["poisson"])
    c = plan_campaign(N, 2.0, 1e-6, rounds=3, step=1, keep=2, alphabet="abc",
                      oracles=["krr"], assignments=["poisson"], eps0_weights=[1, 1, 2])
    e = [o.eps for o in c.oracles]
    assert e[0] == e[1] and e[2] == 2 * e[0]
    # the heavy round is above the common eps0, the light ones below (the trade the
    # composed bound allows)
    assert e[0] < common.oracle(1).eps < e[2]
    acc = Accountant(h=COMPOSE_H)
    for o in c.oracles:
        acc.compose(SampledOracleShuffledRound(N, o, gamma=1 / 3))
    assert c.upper == acc.epsilon(1e-6).value and c.upper <= 2.0
    assert c.lower is not None and c.lower <= c.upper


def test_per_round_eps0_refused_where_not_certified(campaign):
    with pytest.raises(ValueError, match="not under random allocation"):
        plan_campaign(N, 2.0, 1e-6, rounds=3, step=1, keep=2, alphabet="abc",
                      oracles=["krr"], assignments=["allocation"], eps0_weights=[1, 1, 1])
    with pytest.raises(ValueError, match="give 3 finite numbers > 0"):
        plan_campaign(N, 2.0, 1e-6, rounds=3, step=1, keep=2, alphabet="abc",
                      oracles=["krr"], assignments=["groups"], eps0_weights=[1, 0, 1])


def test_the_shuffled_set_keeps_the_round_list(campaign, flow, tmp_path):
    d, (l1, l2, _), (a1, *_) = flow
    shuffle_round_set(d / "set1", campaign, l1, tmp_path / "shuffled",
                      entropy=simulation_entropy(9))
    assert set_list(tmp_path / "shuffled" / "manifest.json") == l1
    again = read_round_set(tmp_path / "shuffled", campaign, l1)
    # a shuffle changes the order only: the same summary, hence the same estimates
    assert np.array_equal(again.estimates, a1.estimates) and again.reports == a1.reports
    with pytest.raises(ValueError, match=f"round 2's list {l2.digest[:16]}"):
        shuffle_round_set(d / "set1", campaign, l2, tmp_path / "x")


def test_aggregates_of_another_run_or_bad_words_are_refused(campaign, flow, tmp_path):
    _, (l1, l2, _), (a1, a2, _) = flow
    # round 2 from the least frequent candidates instead: its round 3 does not grow from the
    # flow's round-2 list
    l2b = candidates(campaign, RoundAggregate(l1, a1.reports, -a1.estimates, a1.variances))
    assert set(l2b.codes).isdisjoint(l2.codes)
    empty = RoundAggregate.of_summary(l2b, campaign.oracle(2), None, 0)
    a3b = RoundAggregate.of_summary(candidates(campaign, empty), campaign.oracle(3), None, 0)
    with pytest.raises(ValueError, match="round 3's list does not grow from round 2's"):
        found_words(campaign, [a1, a2, a3b])
    with pytest.raises(TypeError, match=r"words\[1\] must be a str, got bytes"):
        write_round_set(["ab", b"ab"], campaign, l1, tmp_path / "s")
    with pytest.raises(ValueError, match=r"shards must be an integer in \[1, "):
        write_round_set(["ab"], campaign, l1, tmp_path / "s", shards=0)


def test_cli_simulate_through_report_sets(tmp_path, capsys):
    (tmp_path / "c.csv").write_text("word,count\nab,500\nc,300\nba,150\n")
    code, out, err = _cli(capsys, "simulate", "--counts", tmp_path / "c.csv", "--n", 3000,
                          "--eps", 2, "--rounds", 3, "--step", 1, "--keep", 2, "--top", 2,
                          "--alphabet", "abc", "--oracles", "krr", "--assignments", "groups",
                          "--report-sets", tmp_path / "sets", "--threshold-level", 0.9,
                          "--json")
    assert code == 0, err
    assert [w["word"] for w in json.loads(out)["results"]["words"]] == ["ab", "c"]
    rounds = sorted(p.name for p in (tmp_path / "sets").iterdir())
    assert rounds == ["round-01", "round-02", "round-03"]
    assert set_list(tmp_path / "sets" / "round-02" / "manifest.json").index == 2


def test_a_resealed_plan_with_larger_eps0_fails_before_round_1(campaign):
    from ldpcompress.randomizers import registry
    from ldpcompress.randomizers.catalog import make_oracle
    doc = json.loads(campaign.to_json())
    big = make_oracle("krr", campaign.shape.k, 2 * campaign.oracle(1).eps)
    doc["oracles"] = [registry.spec(big)] * 3
    doc["eps0"] = [big.eps] * 3
    forged = Campaign.from_json(_resealed(doc))  # consistent, digest recomputed: it loads
    assert campaign.certify() == campaign.upper  # the honest plan's bound is reproduced
    with pytest.raises(ValueError, match="the plan's oracles certify central eps .* > its "
                                         "target 2 .*not deployable"):
        candidates(forged)


@pytest.mark.slow
def test_simulate_with_per_round_eps0(tmp_path, capsys):
    (tmp_path / "c.csv").write_text("word,count\nab,500\nc,300\nba,150\n")
    code, out, err = _cli(capsys, "simulate", "--counts", tmp_path / "c.csv", "--n", 3000,
                          "--eps", 2, "--rounds", 3, "--step", 1, "--keep", 2, "--top", 2,
                          "--alphabet", "abc", "--oracles", "krr", "--eps0-weights", "1,1,2",
                          "--assignments", "groups,allocation", "--json")
    assert code == 0, err
    res = json.loads(out)["results"]
    e = res["eps0"]
    # allocation is dropped (one eps0 only); the deployed rounds follow the weights
    assert res["accounting"]["assignment"] == "groups"
    assert e[0] == e[1] and e[2] == pytest.approx(2 * e[0], rel=1e-12)
    assert res["accounting"]["upper"] <= 2.0
    code, _, err = _cli(capsys, "simulate", "--counts", tmp_path / "c.csv", "--n", 3000,
                        "--eps", 2, "--rounds", 3, "--eps0-weights", "1,2")
    assert code == 2 and "--eps0-weights must be 3 comma-separated numbers" in err


@pytest.mark.parametrize("step", ["encode", "shuffle", "aggregate", "words"])
def test_every_cli_step_certifies_the_plan_it_loads(cli_files, campaign, tmp_path, capsys,
                                                     step):
    # before the fix only round-1 `candidates` recomputed the bound: a plan resealed with
    # eps0 = 40 was used by encode/shuffle/aggregate, and `words` printed the stored upper
    from ldpcompress.randomizers import registry
    from ldpcompress.randomizers.catalog import make_oracle
    doc = json.loads(campaign.to_json())
    big = make_oracle("krr", campaign.shape.k, 40.0)
    doc["oracles"], doc["eps0"] = [registry.spec(big)] * 3, [40.0] * 3
    forged = tmp_path / "forged.json"
    forged.write_text(_resealed(doc))
    (tmp_path / "l1.json").write_text(Campaign.from_json(forged.read_text()).first_list()
                                      .to_json())
    argv = {"encode": ["encode", "--list", tmp_path / "l1.json", "--words",
                       cli_files / "words.txt", "--out", tmp_path / "s"],
            "shuffle": ["shuffle", tmp_path / "s", "--list", tmp_path / "l1.json", "--out",
                        tmp_path / "t"],
            "aggregate": ["aggregate", tmp_path / "s", "--list", tmp_path / "l1.json",
                          "--out", tmp_path / "a.json"],
            "words": ["words", tmp_path / "a.json"]}[step]
    code, _, err = _cli(capsys, *argv, "--plan", forged)
    assert code == 2 and "not deployable" in err and str(forged) in err
    assert "Traceback" not in err


def test_words_prints_the_recomputed_bound(campaign, flow, tmp_path, capsys):
    d, _, aggs = flow
    paths = []
    for a in aggs:
        paths.append(tmp_path / f"a{a.index}.json")
        paths[-1].write_text(a.to_json())
    (tmp_path / "plan.json").write_text(campaign.to_json())
    code, out, _ = _cli(capsys, "words", *paths, "--plan", tmp_path / "plan.json", "--json")
    got = json.loads(out)["results"]["accounting"]["upper"]
    assert code == 0 and got == campaign.certify() <= campaign.eps


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(relation="none at all"), "key 'relation' must be"),
    (lambda d: d["ledger"].update(lower=1.99999999999), "must be finite and <="),
])
def test_free_form_plan_fields_are_checked(campaign, edit, match):
    doc = json.loads(campaign.to_json())
    if doc["ledger"]["lower"] is None:
        doc["ledger"]["lower"] = 0.0
    doc["ledger"]["upper"] = 1.5
    edit(doc)
    with pytest.raises(ValueError, match=match):
        Campaign.from_json(_resealed(doc))


def test_a_groups_round_with_too_few_or_too_many_reports_is_refused(campaign, tmp_path):
    # before the fix any count was aggregated: the groups bound assumes n // T = 1000
    # distinct devices in each round's shuffle, and no round may hold more than n = 3000
    l1 = candidates(campaign)
    write_round_set(WORDS[:999], campaign, l1, tmp_path / "few",
                    entropy=simulation_entropy(5))
    with pytest.raises(ValueError, match="999 reports, fewer than the 1,000 distinct"):
        read_round_set(tmp_path / "few", campaign, l1)
    with pytest.raises(ValueError, match="999 reports, fewer than the 1,000 distinct"):
        shuffle_round_set(tmp_path / "few", campaign, l1, tmp_path / "x")
    write_round_set(WORDS * 3 + ["c"], campaign, l1, tmp_path / "many",
                    entropy=simulation_entropy(6))
    with pytest.raises(ValueError, match="3,001 reports, more than the plan's n = 3,000"):
        read_round_set(tmp_path / "many", campaign, l1)


def test_per_round_lower_bound_is_round_1s_attack():
    # before the fix the lower bound was the strongest round's (round 3's) attack, but the
    # attack is proven only for round 1's fixed list
    from ldpcompress.accounting import amplification as amp
    c = plan_campaign(N, 2.0, 1e-6, rounds=3, step=1, keep=2, alphabet="abc",
                      oracles=["krr"], assignments=["groups"], eps0_weights=[1, 1, 2])
    first, last = c.oracle(1), c.oracle(3)
    assert last.eps == pytest.approx(2 * first.eps)
    want = amp.epsilon(N // 3, None, 1e-6, oracle=first, lower=True).lower
    stronger = amp.epsilon(N // 3, None, 1e-6, oracle=last, lower=True).lower
    assert c.lower == want < stronger
    assert c.lower <= c.upper


@pytest.mark.parametrize("option", ["--plan", "--list", "--aggregate"])
def test_deeply_nested_json_is_a_clear_error(cli_files, tmp_path, capsys, option):
    # before the fix json.loads's RecursionError escaped as a traceback
    d = cli_files
    (tmp_path / "l1.json").write_text(Campaign.from_json((d / "plan.json").read_text())
                                      .first_list().to_json())
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    files = {"--plan": d / "plan.json", "--list": tmp_path / "l1.json", option: deep}
    if option == "--aggregate":
        argv = ["candidates", "--plan", files["--plan"], "--aggregate", deep, "--out",
                tmp_path / "l2.json"]
    else:
        argv = ["encode", "--plan", files["--plan"], "--list", files["--list"], "--words",
                d / "words.txt", "--out", tmp_path / "s"]
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and str(deep) in err and "RecursionError" in err
    assert "Traceback" not in err


def test_errors_name_the_plan_and_the_threshold(cli_files, campaign, flow, tmp_path, capsys):
    # before the fix: "alphabet: symbols must be distinct" without the file, and
    # "threshold must be ..." without the flag
    doc = json.loads(campaign.to_json())
    doc["alphabet"] = "aab"
    bad = tmp_path / "dup.json"
    bad.write_text(_resealed(doc))
    code, _, err = _cli(capsys, "candidates", "--plan", bad, "--out", tmp_path / "l.json")
    assert code == 2 and f"--plan {bad}" in err and "repeated" in err
    _, _, (a1, *_) = flow
    (tmp_path / "a1.json").write_text(a1.to_json())
    code, _, err = _cli(capsys, "candidates", "--plan", cli_files / "plan.json", "--aggregate",
                        tmp_path / "a1.json", "--out", tmp_path / "l2.json",
                        "--threshold-level", 0.9, "--threshold", "nan")
    assert code == 2 and "--threshold must be a finite number" in err
    assert "Traceback" not in err
