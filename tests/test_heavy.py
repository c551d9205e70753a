"""The heavy-hitter job (ldpcompress/heavy/): prefix codes, candidate lists, the campaign's
ledger, recall on a synthetic Zipf population, unknown words, empty rounds, the counts CSV
and the CLI."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ldpcompress.accounting import allocation as AL
from ldpcompress.accounting.accountant import Accountant
from ldpcompress.accounting.events import OracleShuffledRound, SampledOracleShuffledRound
from ldpcompress.heavy import Alphabet, TreeShape, plan_rounds, simulate
from ldpcompress.heavy.counts import read_counts
from ldpcompress.heavy.prefix import (Encoded, candidate_indices, check_shape, children,
                                      valid_blocks)
from ldpcompress.randomizers.catalog import make_oracle

ABC = Alphabet("abc")


# -- prefix codes ---------------------------------------------------------------------------
def test_valid_blocks_are_symbols_then_terminators():
    # step 2 over {a, b, c}: "$$", "a$".."c$", "aa".."cc": 1 + 3 + 9 blocks, none with a
    # symbol after a terminator (base 4: a=1, b=2, c=3, $=0)
    blocks = valid_blocks(ABC, 2)
    expect = sorted([0] + [4 * a for a in (1, 2, 3)] + [4 * a + b for a in (1, 2, 3)
                                                          for b in (1, 2, 3)])
    assert blocks.tolist() == expect


def test_children_extend_open_prefixes_and_close_ended_ones():
    # "a" (code 1) is open: 4 children a$, aa, ab, ac; "b$" (code 8 at length 2) ended
    kids = children(np.array([1]), ABC, 1, root=False)
    assert kids.tolist() == [4, 5, 6, 7]
    ended = children(np.array([8]), ABC, 1, root=False)
    assert ended.tolist() == [32]  # b$$ only
    assert children(np.zeros(1, np.int64), ABC, 1, root=True).tolist() == [0, 1, 2, 3]


def test_encoding_round_trips_and_unknown_words_have_no_code():
    words = ["ab", "", "abd", "cccc", "c"]
    enc = Encoded.of(words, ABC, 4, 3)
    assert enc.known.tolist() == [True, True, False, False, True]  # 'd' unknown; 4 > max_len
    codes = enc.prefix_codes(2, ABC.base)
    assert codes.tolist() == [1 * 4 + 2, 0, -1, -1, 3 * 4]
    assert ABC.word(enc.digits[0]) == "ab" and ABC.word(enc.digits[4]) == "c"
    cands = np.array([6, 12])
    # listed prefixes get their position, an unlisted one and the unknown words "other" = 2
    assert candidate_indices(codes, cands).tolist() == [0, 2, 2, 2, 1]


def test_bytes_alphabet_encodes_utf8():
    alpha = Alphabet("bytes")
    enc = Encoded.of(["é", "ab"], alpha, 3, 2)
    assert enc.digits[0, :2].tolist() == [0xC3 + 1, 0xA9 + 1]
    assert alpha.word(enc.digits[0]) == "é" and alpha.word(enc.digits[1]) == "ab"


@pytest.mark.parametrize("bad, match", [
    (dict(symbols="aa"), "distinct"), (dict(symbols=""), "at least one symbol"),
])
def test_alphabet_refuses_bad_tables(bad, match):
    with pytest.raises(ValueError, match=match):
        Alphabet(**bad)


def test_shape_refuses_overflowing_codes_and_bad_max_len():
    with pytest.raises(ValueError, match="prefix codes above 2\\^62"):
        check_shape(Alphabet("bytes"), 4, 6, None)
    with pytest.raises(ValueError, match="max_len must be an integer in \\[0, rounds x step - 1 = 5\\]"):
        check_shape(ABC, 2, 3, 6)
    assert check_shape(ABC, 2, 3, None) == 5
    assert TreeShape.of(ABC, 2, 3, 4).k == 4 * 13 + 1


# -- accounting -----------------------------------------------------------------------------
N, T = 3000, 3


@pytest.fixture(scope="module")
def small_plan():
    shape = TreeShape.of(ABC, 1, T, 2)
    return plan_rounds(N, T, shape.k, 1.0, 1e-6, oracles=["krr"])


def test_ledger_equals_the_campaign_composed_by_hand(small_plan):
    p = small_plan
    assert p.upper <= 1.0
    by_row = {r.assignment: r for r in p.rows}
    assert set(by_row) == {"groups", "poisson", "allocation"}
    k = p.k
    # each row's oracle rebuilt from its eps0 and the events composed here, by hand
    pois = make_oracle("krr", k, by_row["poisson"].eps0)
    hand_p = Accountant(h=1e-4).compose(SampledOracleShuffledRound(N, pois, gamma=1 / T), T)
    assert math.isclose(by_row["poisson"].upper, hand_p.epsilon(1e-6).value, rel_tol=1e-12)
    grp = make_oracle("krr", k, by_row["groups"].eps0)
    hand_g = Accountant(h=1e-4).compose(OracleShuffledRound(N // T, grp))
    from ldpcompress.accounting import amplification as amp
    direct = amp.epsilon(N // T, None, 1e-6, oracle=grp, lower=False).value
    assert math.isclose(by_row["groups"].upper, direct, rel_tol=1e-12)
    assert direct <= hand_g.epsilon(1e-6).value * (1 + 1e-9)  # the finer direct query
    if p.assignment == "groups":
        assert p.upper == min(direct, hand_g.epsilon(1e-6).value)
    alloc = make_oracle("krr", k, by_row["allocation"].eps0)
    ev = AL.AllocatedShuffledRounds(N, T, oracle=alloc, randomizers="adaptive")
    hand_a = min(Accountant(h=1e-4).compose(ev).epsilon(1e-6).value,
                 AL.epsilon(ev, 1e-6, lower=False).value)
    assert math.isclose(by_row["allocation"].upper, hand_a, rel_tol=1e-12)
    # the deployed row has the smallest SE; its lower bound does not exceed its upper bound
    assert p.chosen.se == min(r.se for r in p.rows)
    assert p.assignment != "allocation" and p.lower is not None and p.lower <= p.upper


def test_allocation_with_adaptive_lists_uses_the_generic_bound(small_plan):
    row = {r.assignment: r for r in small_plan.rows}["allocation"]
    # the generic pair at eps0 (any eps0-LDP randomizer): the oracle's blanket would certify
    # a larger eps0 (randomizers="same"), which adaptive candidate lists do not allow
    same = AL.max_eps0(N, T, 1.0, 1e-6,
                       oracle_factory=lambda e: make_oracle("krr", small_plan.k, e))
    assert row.eps0 < same


# -- the campaign ---------------------------------------------------------------------------
def _zipf_population(seed: int, heavy: int = 2):
    """The 12 words of 1-2 symbols over a-c in a random order; the first ``heavy`` with Zipf
    weights 1/i, the others with Zipf weights scaled by 1/20 (a clear gap after rank
    ``heavy``)."""
    rng = np.random.default_rng(seed)
    words = list("abc") + [a + b for a in "abc" for b in "abc"]
    rng.shuffle(words)
    return {w: (1 / (i + 1) if i < heavy else 0.05 / (i + 1)) for i, w in enumerate(words)}


def test_recall_on_a_zipf_population(small_plan):
    p = small_plan
    top = 2  # = keep: the tree keeps 2 prefixes per round
    for seed in (1, 2, 3):
        counts = _zipf_population(seed, top)
        total = sum(counts.values())
        ranked = sorted(counts.values(), reverse=True)
        # margin: the last heavy word's expected count per round against the next word's
        # (whose prefix may carry the whole tail, at most 0.08 of the weight), in standard
        # deviations of one round's estimate (sampling + the oracle's variance at that count)
        m = N / T
        c_last = m * ranked[top - 1] / total
        c_next = m * sum(ranked[top:]) / total
        sd = math.sqrt(c_last + float(p.oracle.variance(int(m), c_last)))
        assert (c_last - c_next) / sd > 6.0  # so a miss has probability < 1e-8 per round
        res = simulate(counts, N, 1.0, 1e-6, top=top, rounds=T, step=1, keep=2,
                       alphabet=ABC, oracles=["krr"], plan=p, seed=seed)
        assert res.recall(top) == 1.0
        for w in res.words:
            assert w.low <= w.estimate <= w.high


def test_unknown_symbols_and_long_words_report_other(small_plan):
    counts = {"ab": 50.0, "aXb": 30.0, "abcab": 20.0, "é": 10.0}
    res = simulate(counts, N, 1.0, 1e-6, top=2, rounds=T, step=1, keep=2, alphabet=ABC,
                   oracles=["krr"], plan=small_plan, seed=4)
    unknown = sum(c for w, c in res.truth.items() if w != "ab")
    assert res.unknown == unknown > 0
    assert all(r.unknown > 0 for r in res.rounds)  # ~unknown / T of them in every round
    assert all(set(w.word) <= set("abc") for w in res.words)
    assert res.words[0].word == "ab"


def test_empty_rounds_give_zero_estimates_not_errors():
    shape = TreeShape.of(ABC, 1, 3, 2)
    p = plan_rounds(4, 3, shape.k, 20.0, 0.1, oracles=["krr"], assignments=["poisson"])
    seen_empty = False
    for seed in range(12):
        res = simulate({"ab": 1.0, "c": 1.0}, 4, 20.0, 0.1, top=2, rounds=3, step=1, keep=2,
                       alphabet=ABC, oracles=["krr"], plan=p, seed=seed)
        for r in res.rounds:
            if r.reports == 0:
                seen_empty = True
                assert not np.any(r.estimates)
    assert seen_empty  # P(no empty round in 36 Poisson rounds of 4 devices at 1/3) < 1e-5


def test_plan_of_another_campaign_is_refused(small_plan):
    with pytest.raises(ValueError, match="plan: made for"):
        simulate({"ab": 1.0}, N + 1, 1.0, 1e-6, rounds=T, step=1, keep=2, alphabet=ABC,
                 plan=small_plan)


# -- the counts file ------------------------------------------------------------------------
@pytest.mark.parametrize("content, match", [
    (b"\xff\xfe,1\n", "not UTF-8"),
    ("a,1,2\n".encode(), "line 1: expected 2 fields"),
    ("a,1\nb,-1\n".encode(), "line 2: count must be a finite number >= 0"),
    ("a,1\nb,nan\n".encode(), "line 2: count must be a finite number >= 0"),
    ("a,1\na,2\n".encode(), "line 2: word 'a' appears twice"),
    ("a,1\nb,x\n".encode(), "line 2: count 'x' is not a number"),
    (",1\n".encode(), "line 1: empty word"),
    ("word,count\n".encode(), "no word with a positive count"),
])
def test_counts_file_is_checked(tmp_path, content, match):
    f = tmp_path / "c.csv"
    f.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        read_counts(f)


def test_counts_file_reads_words_with_a_header(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text("word,count\nthe,10\n\"a,b\",2.5\nété,1\n", encoding="utf-8")
    assert read_counts(f) == {"the": 10.0, "a,b": 2.5, "été": 1.0}


# -- the command line -----------------------------------------------------------------------
def test_cli_simulate_json(tmp_path, capsys):
    from ldpcompress.cli.main import main
    f = tmp_path / "c.csv"
    f.write_text("ab,60\nc,30\nba,10\n", encoding="utf-8")
    rc = main(["heavy-hitters", "simulate", "--counts", str(f), "--n", "2000", "--eps", "5",
               "--delta", "1e-4", "--top", "2", "--rounds", "3", "--step", "1", "--keep", "3",
               "--alphabet", "abc", "--oracles", "krr", "--assignments", "groups", "--json"])
    assert rc in (0, None)
    out = json.loads(capsys.readouterr().out)
    words = out["results"]["words"]
    assert [w["word"] for w in words] == ["ab", "c"]
    assert set(words[0]) == {"word", "estimate", "low", "high"}
    acc = out["results"]["accounting"]
    assert acc["upper"] <= 5.0 and acc["lower"] <= acc["upper"]


@pytest.mark.parametrize("argv, match", [
    (["--n", "10", "--eps", "1"], "--counts"),
    (["--counts", "x.csv", "--n", "0", "--eps", "1"], "--n"),
    (["--counts", "x.csv", "--n", "10", "--eps", "1", "--oracles", "nope"], "--oracles"),
    (["--counts", "x.csv", "--n", "10", "--eps", "1", "--assignments", "x"], "--assignments"),
])
def test_cli_refuses_bad_arguments(argv, match, capsys):
    from ldpcompress.cli.main import main
    assert main(["heavy-hitters", "simulate", *argv]) == 2
    assert match in capsys.readouterr().err


# -- one round of a deployment: candidate lists with digests --------------------------------
def test_rounds_encode_aggregate_and_next_list():
    from ldpcompress.core.entropy import simulation_entropy
    from ldpcompress.heavy.rounds import aggregate_round, encode_words, first_round, next_round
    rl = first_round("abc", 1, 3, 2)
    assert rl.k == 2 * 4 + 1 and list(rl.codes) == [0, 1, 2, 3]
    oracle = make_oracle("krr", rl.k, 12.0)  # nearly exact reports: the counts are the truth
    words = ["ab"] * 30 + ["c"] * 20 + ["d"] * 5 + ["abcd"] * 5
    digest, reports = encode_words(words, rl, oracle, simulation_entropy(5))
    est = aggregate_round(rl, oracle, reports, digest)
    # P(a report is not the device's index) = (k - 1) / (e^12 + k - 1) < 5e-5 per report
    # 'd' is outside the alphabet and 'abcd' longer than max_len = 2: both report other
    assert np.round(est[[1, 3, rl.k - 1]]).tolist() == [30.0, 20.0, 10.0]  # a, c, other
    nxt = next_round(rl, est)
    assert nxt.index == 2 and list(nxt.codes) == [4, 5, 6, 7, 12, 13, 14, 15]  # a$..ac, c$..cc


def test_a_round_read_against_another_list_is_refused():
    from ldpcompress.core.entropy import simulation_entropy
    from ldpcompress.heavy.rounds import aggregate_round, encode_words, first_round, next_round
    rl = first_round("abc", 1, 3, 2)
    oracle = make_oracle("krr", rl.k, 3.0)
    digest, reports = encode_words(["ab", "c"], rl, oracle, simulation_entropy(1))
    other = next_round(rl, np.arange(rl.k, dtype=float))
    with pytest.raises(ValueError, match=f"list {digest[:16]}.*round 2's list {other.digest[:16]}"):
        aggregate_round(other, oracle, reports, digest)


def test_an_edited_candidate_list_is_refused():
    from ldpcompress.heavy.rounds import RoundList, first_round
    rl = first_round("abc", 1, 3, 2)
    doc = json.loads(rl.to_json())
    assert RoundList.from_json(rl.to_json()) == rl
    doc["codes"] = [0, 1, 3]
    with pytest.raises(ValueError, match="stored digest .* differs .*the list was edited"):
        RoundList.from_json(json.dumps(doc))
    doc = json.loads(rl.to_json())
    doc["codes"] = [3, 1]
    with pytest.raises(ValueError, match="strictly increasing"):
        RoundList.from_json(json.dumps(doc))
    with pytest.raises(ValueError, match="not JSON"):
        RoundList.from_json("{")
    doc = json.loads(rl.to_json())
    doc["codes"] = ["0"]
    with pytest.raises(ValueError, match="codes must be a list of integers"):
        RoundList.from_json(json.dumps(doc))


def test_result_views(small_plan, tmp_path):
    res = simulate(_zipf_population(7), N, 1.0, 1e-6, top=2, rounds=T, step=1, keep=2,
                   alphabet=ABC, oracles=["krr"], plan=small_plan, seed=7)
    html = res._repr_html_()
    assert all(w.word in html for w in res.words) and "substitution" in html
    pytest.importorskip("pandas")
    frame = res.to_frame()
    assert list(frame["word"]) == [w.word for w in res.words]
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from ldpcompress.plots import plot_heavy_hitters
    shown = plot_heavy_hitters(res, out=tmp_path / "hh.png")
    assert (tmp_path / "hh.png").stat().st_size > 0
    assert shown == {w.word: (w.estimate, res.truth.get(w.word, 0)) for w in res.words}
