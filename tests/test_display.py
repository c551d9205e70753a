"""Notebook ergonomics: short reprs that say what an object holds, HTML tables for Jupyter,
and to_frame() with pandas optional (an ImportError naming it when absent)."""
import sys

import numpy as np
import pytest

import ldpcompress as L
from ldpcompress import (Accountant, Gaussian, ItemDomain, KRR, OracleShuffledRound, PIRappor,
                         RAPPOR, ShuffledRound, compress)
from ldpcompress.compression import CompressedPrivUnit2


@pytest.fixture(scope="module")
def krr_result():
    return L.epsilon(10 ** 4, 3.0, 1e-6, k=20)


def test_amplification_result_repr_names_the_answer_and_its_source(krr_result):
    r = krr_result
    text = repr(r)
    assert text.startswith(f"AmplificationResult(epsilon = {r.value:.6g} by {r.method}")
    assert f"lower {r.lower:.6g}" in text and "n=10,000" in text and "k=20" in text
    assert f"{len(r.bounds)} bounds" in text and len(text) < 300
    closed = r.bounds[0]  # applies at n = 1e4, eps0 = 3: log(1e4 / (16 log 4e6)) = 3.7 >= 3
    assert repr(closed) == f"Bound(closed_form = {closed.value:.6g} (upper); {closed.label})"
    na = next(b for b in L.epsilon(1000, 3.0, 1e-6).bounds if b.value is None)
    assert "n/a: needs eps0" in repr(na)


def test_amplification_result_html_and_frame(krr_result):
    r = krr_result
    page = r._repr_html_()
    assert page.count("<tr>") == len(r.bounds) + 1  # head + one row per bound
    for b in r.bounds:
        assert b.label in page
    pd = pytest.importorskip("pandas")
    frame = r.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.index) == [b.name for b in r.bounds]
    assert frame.loc[r.method, "value"] == r.value
    assert frame.attrs["lower"] == r.lower and frame.attrs["method"] == r.method


def test_accountant_repr_is_short_and_lists_events_and_settings():
    acct = Accountant(h=1e-3)
    assert repr(acct) == "Accountant(0 rounds in 0 events; h = 0.001, max_size = 1,048,576)"
    acct.compose(OracleShuffledRound(10 ** 5, PIRappor(1000, 4.0)), times=100)
    acct.compose(Gaussian(sigma=20.0))
    for i in range(50):
        acct.compose(ShuffledRound(10 ** 4, 1.0 + i / 100), times=2)
    text = repr(acct)
    assert text.startswith("Accountant(201 rounds in 52 events: 100 x OracleShuffledRound(")
    assert "1 x Gaussian(sigma=20.0" in text and "... 49 more" in text and "h = 0.001" in text
    assert len(text) < 600  # short whatever the ledger's length
    page = acct._repr_html_()
    assert page.count("<tr>") == 53 and "max_size = 1,048,576" in page


def test_accounting_result_repr_and_frame():
    acct = Accountant().compose(ShuffledRound(10 ** 4, 1.0), times=3)
    r = acct.epsilon(1e-6)
    text = repr(r)
    assert text.startswith(f"AccountingResult(epsilon = {r.value:.6g} by {r.method}")
    for method, value in r.others.items():
        assert f"{method} {value:.6g}" in text
    assert r._repr_html_().count("<tr>") == 1 + 1 + len(r.others)
    pytest.importorskip("pandas")
    frame = r.to_frame()
    assert list(frame.index) == [r.method, *r.others]
    assert frame.loc[r.method, "value"] == r.value and frame["chosen"].sum() == 1


def test_compressor_reprs():
    text = repr(compress(RAPPOR(64, 2.0)))
    assert text.startswith("PseudoRandomizer(RAPPOR(k=64, eps=2, symmetric=True): 17-byte")
    assert "TV <= 2^-40" in text and f"{np.exp(2.0):.4g}" in text  # e^eps_d expected trials
    text = repr(CompressedPrivUnit2(16, 4.0, split=2))
    assert text.startswith("CompressedPrivUnit2(d=16, eps=4, split=2: 34-byte reports")


def test_estimates_to_frame_with_names():
    pd = pytest.importorskip("pandas")
    oracle = KRR(3, 2.0)
    reports = oracle.randomize_many(np.array([0, 1, 2, 2] * 50),
                                    entropy=L.simulation_entropy(seed=3))
    est = oracle.estimate(reports)
    frame = oracle.to_frame(est, 200, level=0.9, names=ItemDomain(["a", "b", "c"]))
    low, high = oracle.intervals(est, 200, 0.9)
    assert list(frame.index) == ["a", "b", "c"] and frame.index.name == "name"
    assert np.array_equal(frame["estimate"], est)
    assert np.array_equal(frame["low"], low) and np.array_equal(frame["high"], high)
    assert frame.attrs["n"] == 200 and frame.attrs["level"] == 0.9
    assert list(oracle.to_frame(est, 200).index) == [0, 1, 2]
    with pytest.raises(ValueError, match="names has 2 entries for 3 estimates"):
        oracle.to_frame(est, 200, names=["a", "b"])
    assert isinstance(frame, pd.DataFrame)


def test_to_frame_without_pandas_names_it(monkeypatch, krr_result):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    with pytest.raises(ImportError, match=r"pip install 'ldpcompress\[pandas\]'.*pandas"):
        krr_result.to_frame()
    with pytest.raises(ImportError, match=r"pip install 'ldpcompress\[pandas\]'.*pandas"):
        Accountant().compose(Gaussian(sigma=2.0)).to_frame()


def test_accountant_to_frame_has_one_row_per_event_in_order():
    pd = pytest.importorskip("pandas")
    oracle = PIRappor(1000, 4.0)
    acct = Accountant(h=1e-3).compose(OracleShuffledRound(10 ** 5, oracle), times=100)
    acct.compose(Gaussian(sigma=20.0)).compose(ShuffledRound(10 ** 4, 0.5), times=7)
    frame = acct.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["event", "parameters", "times"]
    assert list(frame["event"]) == ["OracleShuffledRound", "Gaussian", "ShuffledRound"]
    assert list(frame["times"]) == [100, 1, 7] and frame["times"].sum() == acct.rounds == 108
    assert frame.loc[0, "parameters"].startswith(f"n=100000, oracle={oracle!r}")
    assert frame.loc[1, "parameters"] == "sigma=20, sensitivity=1"
    assert frame.loc[2, "parameters"].startswith("n=10000, eps0=0.5")
    assert frame.attrs["rounds"] == 108 and frame.attrs["h"] == 1e-3
    empty = Accountant().to_frame()
    assert len(empty) == 0 and list(empty.columns) == ["event", "parameters", "times"]


def test_randomizer_html_table_states_the_contract_parts():
    for r in (KRR(10, 2.0), PIRappor(1000, 4.0), L.PrivUnit2(8, 2.0), L.LaplaceScalar(0.0, 1.0, 1.0)):
        page = r._repr_html_()
        assert page.count("<tr>") == 1 + 6  # head + name, parameters, eps, eps0, bits, structure
        assert f"<td>{r.name}</td>" in page and f"<td>{r.bits_per_report:,}</td>" in page
        assert f"<td>{r.replacement_eps:.6g}</td>" in page
        kind = type(r.shuffle_structure()).__name__
        assert f"<td>{kind}</td>" in page and f"<td>{r.eps:.6g} (replacement)</td>" in page
        for key in r.params():
            assert f"{key}=" in page


def test_randomizer_html_escapes_a_plug_ins_names():
    """A plug-in's registry name, class name and string parameters are untrusted: nothing of
    them reaches the page unescaped."""
    from shipped import load_example
    base = load_example()

    class Evil(base):
        name = "<script>alert(1)</script>"

        def params(self):
            return {"eps": self.eps, "label": "<img src=x onerror=alert(2)> & \"'"}

    Evil.__name__ = "Evil<b>"
    page = Evil(1.0)._repr_html_()
    assert "<script>" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "Evil&lt;b&gt;(" in page
    assert "&lt;img src=x onerror=alert(2)&gt; &amp; &quot;" in page


def test_aggregation_is_a_result_object(tmp_path):
    """aggregate() returns a dict that reads as an object: attributes, the randomizer's own
    intervals, a repr naming what was counted, an HTML table and a DataFrame."""
    pytest.importorskip("pyarrow")
    from ldpcompress.cli.main import main
    from ldpcompress.scale import distributed
    out = str(tmp_path / "set")
    assert main(["simulate", "--n", "2000", "--oracle", "krr", "--k", "12", "--eps", "2",
                 "--out", out]) == 0
    res = distributed.aggregate([out], scheduler="memory")
    assert res.n == res["n"] == 2000 and res.method == "memory"
    assert np.array_equal(res.estimate, res["estimate"])
    low, high = res.intervals(0.9)
    want = KRR(12, 2.0).intervals(res["estimate"], 2000, 0.9)
    assert np.array_equal(low, want[0]) and np.array_equal(high, want[1])
    text = repr(res)
    assert text.startswith("Aggregation(krr(") and "n = 2,000 reports" in text
    page = res._repr_html_()
    assert "<table>" in page and "the 10 largest of 12 entries" in page
    with pytest.raises(AttributeError, match="no_such_key"):
        res.no_such_key
    pytest.importorskip("pandas")
    frame = res.to_frame(0.9)
    assert list(frame.columns) == ["estimate", "low", "high"] and len(frame) == 12
    assert np.allclose(frame["low"], low)
