"""Saving and loading an accountant (JSON), and events from dp_accounting's DpEvents."""
import json

import pytest

from ldpcompress.accounting import (
    Accountant,
    ApproxDP,
    Gaussian,
    KRRShuffledRound,
    Laplace,
    OracleShuffledRound,
    PairOfPmfs,
    PureDP,
    ShuffledRound,
)
from ldpcompress.randomizers.pirappor import PIRappor


def ledger():
    acct = Accountant(gap=0.02)
    acct.compose(ShuffledRound(n=10 ** 4, eps0=2.0), times=30)
    acct.compose(KRRShuffledRound(n=10 ** 4, eps0=2.0, k=50), times=3)
    acct.compose(OracleShuffledRound(10 ** 4, PIRappor(100, 2.0)), times=4)
    acct.compose(Gaussian(sigma=7.0), times=2)
    acct.compose(Laplace(scale=20.0, sensitivity=0.5))
    acct.compose(PairOfPmfs(p=(0.5, 0.3, 0.2), q=(0.2, 0.3, 0.5)))
    return acct


def test_round_trip_gives_the_same_events_and_answers(tmp_path):
    acct = ledger()
    path = tmp_path / "ledger.json"
    acct.save(path)
    back = Accountant.load(path)
    assert back.events == acct.events
    assert (back.h, back.max_size, back.gap) == (acct.h, acct.max_size, acct.gap)
    assert list(back.orders) == list(acct.orders)
    assert back.epsilon(1e-6).value == acct.epsilon(1e-6).value
    # the saved state keeps growing: compose more and save again
    back.compose(PureDP(0.1), times=5).save(path)
    assert Accountant.load(path).rounds == acct.rounds + 5


def test_pure_and_approximate_events_round_trip():
    acct = Accountant().compose(ApproxDP(1.0, 1e-9), times=7)
    assert Accountant.from_json(acct.to_json()).epsilon(1e-6).value == acct.epsilon(1e-6).value


@pytest.mark.parametrize("mutate, message", [
    (lambda s: s.update(format="other"), "not an accountant state"),
    (lambda s: s.update(version=2), "not an accountant state"),
    (lambda s: s.pop("settings"), "missing keys"),
    (lambda s: s.update(extra=1), "unknown keys"),
    (lambda s: s["events"][0].update(event="os.system"), "'event' must be one of"),
    (lambda s: s["events"][0].update(times=0), "times must be an integer >= 1"),
    (lambda s: s["events"][0].update(times=1.5), "times must be an integer >= 1"),
    (lambda s: s["events"][0].update(n=-5), "n"),
    (lambda s: s["events"][0].update(eps0="2"), "eps0"),
    (lambda s: s["events"][0].update(eps0=True), "must be a number"),
    (lambda s: s["events"][0].pop("n"), "missing keys"),
    (lambda s: s["events"][2]["oracle"].update(a="1/0"), "fraction"),
    (lambda s: s["events"][2]["oracle"].update(a1="1/1"), "0 < a < a1 < 1"),
    (lambda s: s["events"][2]["oracle"].update(params="x"), "params"),
    (lambda s: s["settings"].update(gap=-1), "gap"),
    (lambda s: s.update(events={}), "events must be a JSON list"),
])
def test_hostile_states_are_refused_with_a_clear_error(mutate, message):
    state = json.loads(ledger().to_json())
    mutate(state)
    with pytest.raises((ValueError, TypeError), match=message):
        Accountant.from_json(json.dumps(state))


def test_non_json_and_non_finite_are_refused(tmp_path):
    with pytest.raises(ValueError, match="not valid JSON"):
        Accountant.from_json("{")
    text = ledger().to_json().replace('"gap": 0.02', '"gap": NaN')
    with pytest.raises(ValueError, match="NaN"):
        Accountant.from_json(text)
    path = tmp_path / "bad.json"
    path.write_text("[]")
    with pytest.raises(ValueError, match="bad.json"):
        Accountant.load(path)


def test_dp_accounting_events():
    dp = pytest.importorskip("dp_accounting")
    event = dp.ComposedDpEvent([dp.SelfComposedDpEvent(dp.GaussianDpEvent(3.0), 10),
                                dp.LaplaceDpEvent(5.0), dp.NoOpDpEvent()])
    acct = Accountant().compose_dp_event(event)
    assert acct.events == [(Gaussian(3.0), 10), (Laplace(5.0), 1)]
    # the same composition through dp_accounting's own PLD accountant: ours is an upper bound
    # of the same mechanisms, within the grids' discretisation of theirs
    theirs = dp.pld.PLDAccountant().compose(event).get_epsilon(1e-6)
    ours = acct.epsilon(1e-6)
    assert ours.lower <= theirs * 1.001 and theirs <= ours.value * 1.01
    with pytest.raises(ValueError, match="SampledWithReplacementDpEvent is not supported"):
        Accountant().compose_dp_event(
            dp.SampledWithReplacementDpEvent(100, 10, dp.GaussianDpEvent(1.0)))


def test_an_edited_oracle_law_is_refused_not_under_reported():
    """Found by the issue-12 audit: a ledger edited to mark subset selection's law
    'independent' was loaded and gave delta(0.3) = 9.4e-6 instead of 1.93e-5 (unsound)."""
    from ldpcompress.randomizers import KRR, SubsetSelection
    acct = Accountant().compose(OracleShuffledRound(2000, SubsetSelection(20, 3.0)), times=2)
    acct.compose(OracleShuffledRound(2000, KRR(20, 3.0)))
    state = json.loads(acct.to_json())
    assert Accountant.from_json(json.dumps(state)).events == acct.events
    for mutate, message in [
        (lambda s: s["events"][0]["oracle"].update(independent=True), "independent"),
        (lambda s: s["events"][0]["oracle"].update(p10="1/1000"), "Pr\\[b1 = 1\\]"),
        (lambda s: s["events"][1]["oracle"].update(params=[["k", 1000], ["a1", 0.5]]), "krr"),
    ]:
        bad = json.loads(json.dumps(state))
        mutate(bad)
        with pytest.raises(ValueError, match=message):
            Accountant.from_json(json.dumps(bad))
