"""Queries of large ledgers state their cost and stay within it (issue 27, accounting/plan.py):
identical events are grouped, a ledger too costly for full constructions is answered with
cheaper sound ones (connect-the-dots pairs of fewer points), a PLD pass over the limit is not
run, and a ledger too costly even so is refused before any work, naming the cost, the limit and
the option. A 108 KB ledger of 1,000 distinct shuffled rounds ran past 400 s on every query."""
import json
import math
import random
import re

import pytest

from hang import no_hang
from ldpcompress.accounting import Accountant, PureDP, ShuffledRound
from ldpcompress import accounting as L
from ldpcompress.accounting import plan as PL
from ldpcompress.cli.main import main
from ldpcompress.accounting import event_pld as EPLD
from ldpcompress.accounting import event_profiles as EP
from ldpcompress.accounting import event_rdp as ERDP

DELTA = 1e-6


def _distinct(count, seed=1):
    """Distinct shuffled rounds (n in [1e3, 1e6], eps0 in [0.5, 5]) of a fixed seed."""
    rng = random.Random(seed)  # test-only: the ledger's parameters, not privacy randomness
    return [ShuffledRound(rng.randrange(1000, 10 ** 6), round(rng.uniform(0.5, 5.0), 6))
            for _ in range(count)]


def test_identical_events_are_composed_once():
    """500 separate appends of one round are 500 x that round: one distinct event, composed
    by squaring, the same answer as compose(times=500) (it was 500 sequential convolutions)."""
    event = ShuffledRound(10_000, 1.0)
    one = Accountant().compose(event, times=500).epsilon(DELTA, compare=True)
    many = Accountant()
    for _ in range(500):
        many.compose(event)
    res = many.epsilon(DELTA, compare=True)
    assert res.value == one.value and res.others == one.others and res.lower == one.lower
    assert "1 distinct events of 500 recorded" in res.cost
    mixed = Accountant()
    for i in range(6):
        mixed.compose(event if i % 2 else PureDP(0.5), times=i + 1)
    assert PL.group(mixed.events) == [(PureDP(0.5), 9), (event, 12)]
    assert "2 distinct events of 6 recorded" in mixed.epsilon(DELTA).cost


def test_a_too_costly_ledger_is_refused_before_any_work(monkeypatch):
    acct = Accountant(max_seconds=1.0)
    for event in _distinct(300):
        acct.compose(event)

    def spent(*args, **kwargs):
        raise AssertionError("work was spent before the refusal")
    for module, name in ((EPLD, "pld"), (ERDP, "rdp"), (EP, "profile")):
        monkeypatch.setattr(module, name, spent)
    with no_hang("a refused query"):
        with pytest.raises(PL.QueryTooCostly, match=r"(?s)would take about .* s \(300 distinct "
                           r"events of 300 recorded.*12-point.*0\.5 s of the 1 s limit: refused "
                           r"before any is spent.*max_seconds, --max-seconds"):
            acct.epsilon(DELTA)
        with pytest.raises(PL.QueryTooCostly, match="refused before any is spent"):
            acct.delta(1.0, method="rdp")


def test_economy_constructions_are_sound_and_stated():
    """Ten rounds whose exact grids cost ~0.6 s each: under a 4 s limit the costliest are built
    as 48-point connect-the-dots pairs (each dominates its round: an upper bound), a little
    looser than the full constructions and never below their optimistic estimate."""
    events = [ShuffledRound(20_000 + 3_000 * i, 1.0) for i in range(10)]
    full = Accountant(max_seconds=None)
    cheap = Accountant(max_seconds=4.0)
    for event in events:
        full.compose(event)
        cheap.compose(event)
    a, b = full.epsilon(DELTA, compare=True), cheap.epsilon(DELTA, compare=True)
    assert "no time limit" in a.cost and not any("connect-the-dots" in n for n in a.notes)
    assert any(re.search(r"[1-9]0? built as connect-the-dots pairs of 48 points", n)
               for n in b.notes)
    assert b.value >= a.lower and b.value >= a.value * (1 - 1e-3)
    assert b.value <= a.value * 1.05
    assert b.others["rdp"] >= a.others["rdp"] * (1 - 1e-9)  # the dots curve alone: looser


def test_economy_keeps_cheap_events_and_regroups():
    """Only the costliest events are swapped for economy pairs; a swap that makes two events
    equal composes them as one."""
    costly = ShuffledRound(60_000, 1.0)
    cheap = ShuffledRound(60_000, 1.0, pld_method="dots", points=48)
    plan = PL.plan([(costly, 3), (cheap, 2), (PureDP(1.0), 1)], ("rdp", "kov", "pld"), 1e-3,
                   80, 1.0, 0.0)
    assert plan.points == 48 and plan.events == [(cheap, 5), (PureDP(1.0), 1)]
    assert "1 built as connect-the-dots pairs of 48 points" in plan.note
    assert PL.economy(PureDP(1.0), 12) == PureDP(1.0)
    assert PL.economy(costly, 12) == ShuffledRound(60_000, 1.0, pld_method="dots", points=12)


def test_a_pld_pass_over_the_limit_is_not_run(monkeypatch):
    monkeypatch.setattr(PL, "SECONDS_PER_FFT", 10.0)  # every convolution now costs minutes
    acct = Accountant().compose(ShuffledRound(10_000, 1.0), times=3).compose(PureDP(0.1))
    res = acct.epsilon(DELTA)
    assert res.method == "rdp" and math.isfinite(res.value)
    assert any("pld: the PLD would take about" in n and "60 s limit" in n for n in res.notes)
    with pytest.raises(PL.QueryTooCostly, match="not run.*--max-seconds"):
        acct.epsilon(DELTA, method="pld")
    assert Accountant(max_seconds=None).compose(PureDP(0.1)).epsilon(DELTA, method="pld").value


def test_the_backstop_stops_a_misjudged_query(monkeypatch):
    monkeypatch.setattr(PL, "BACKSTOP", 1e-12)  # the limit passes at once
    acct = Accountant().compose(ShuffledRound(10_000, 1.0), times=2)
    res = acct.epsilon(DELTA)  # KOV and pure (no loop) still answer; the others were stopped
    # pure: (2, 0)-DP read at DELTA, 2 + log(1 - DELTA (1 + e^-2)), a hair below KOV's 2.0
    assert res.method == "pure" and res.others["kov"] == 2.0
    assert 2.0 + math.log1p(-DELTA * 1.2) <= res.value < 2.0
    assert any("rdp: the Renyi curve ran" in n for n in res.notes)
    assert any("pld: the PLD's composition ran" in n for n in res.notes)
    with pytest.raises(PL.QueryTooCostly, match="stopped"):
        acct.epsilon(DELTA, method="rdp")


@pytest.mark.parametrize("value, words", [(0, "positive"), (-1.0, "positive"),
                                          (float("nan"), "positive"), ("60", "number"),
                                          (True, "number")])
def test_the_limit_is_checked(value, words):
    with pytest.raises((ValueError, TypeError), match=words):
        Accountant(max_seconds=value)
    assert Accountant(max_seconds=float("inf")).max_seconds is None


@pytest.mark.slow
def test_the_1000_event_ledger_is_answered_within_its_limit(tmp_path, capsys):
    """Issue 27: a 108 KB ledger of 1,000 distinct ShuffledRound events ran past 400 s on every
    query. Now its cost is stated and it is answered with economy constructions (about 20 s
    on 2 idle cores); with a 5 s limit it is refused before any work, naming the cost."""
    path = tmp_path / "ledger.json"
    acct = Accountant()
    for event in _distinct(1000):
        acct.compose(event)
    acct.save(path)
    assert path.stat().st_size > 100_000
    with no_hang("the 1,000-event ledger", 300):
        assert main(["compose", "--delta", "1e-6", "--ledger", str(path), "--max-seconds", "5",
                     "--json"]) == 2
        err = capsys.readouterr().err
        assert "1000 distinct events" in err and "5 s limit" in err and "--max-seconds" in err
        assert main(["compose", "--delta", "1e-6", "--ledger", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["results"]
    assert math.isfinite(doc["eps"]) and 0 < doc["eps"] < 10
    assert any("connect-the-dots pairs of" in n for n in doc["notes"])
    # never below the exact attack on any one of its rounds (composing more only adds)
    for event in sorted(_distinct(1000), key=lambda e: e.eps0 - math.log(e.n) / 4)[-3:]:
        assert doc["eps"] >= L.epsilon(event.n, event.eps0, 1e-6).lower
