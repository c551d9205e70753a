"""Plots draw on the caller's axes, leave the matplotlib backend alone, and draw the numbers the
API computes (lower bounds dashed, below every upper bound; intervals around estimates)."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402

import ldpcompress as L  # noqa: E402
from ldpcompress import plots  # noqa: E402
from ldpcompress.randomizers.pirappor import PIRappor  # noqa: E402


def test_amplification_on_given_axes_keeps_the_backend():
    backend = matplotlib.get_backend()
    ax = Figure().add_subplot()
    data = plots.plot_amplification(3.0, [1000, 10000], 1e-6, k=50, ax=ax)
    assert matplotlib.get_backend() == backend
    assert len(ax.lines) == 4  # closed form, general, k-RR, lower
    lower = ax.lines[-1]
    assert lower.get_linestyle() == "--" and "lower bound" in lower.get_label()
    assert all(l.get_linestyle() == "-" for l in ax.lines[:-1])
    assert data["general"][1] == L.epsilon(10000, 3.0, 1e-6, k=50).bounds[1].value
    for i, n in enumerate(data["n"]):
        assert data["lower"][i] <= min(data["general"][i], data["krr_blanket"][i])
    assert list(lower.get_ydata()) == data["lower"]
    assert "eps0 = 3" in ax.get_title() and "delta = 1e-06" in ax.get_title()


def test_amplification_of_an_oracle():
    ax = Figure().add_subplot()
    o = PIRappor(1000, 4.0)
    data = plots.plot_amplification(None, [10 ** 4, 10 ** 5], 1e-6, oracle=o, ax=ax)
    res = L.epsilon(10 ** 5, delta=1e-6, oracle=o)
    assert data["oracle"][1] == res.value and data["lower"][1] == res.lower
    assert "pi-rappor" in ax.lines[2].get_label()


def test_frequency_intervals_on_given_axes(tmp_path):
    ax = Figure().add_subplot()
    est = np.array([100.0, 50.0, 10.0, -3.0])
    sd = np.array([5.0, 4.0, 3.0, 3.0])
    data = plots.plot_frequency(est, sd, true=[98, 52, 9, 0], top=3, level=0.9, ax=ax,
                                title="eps0 = 4, n = 1000")
    z = 1.6448536269514722  # the two-sided 90% normal quantile
    assert data["items"] == [0, 1, 2]
    assert np.allclose(data["low"], est[:3] - z * sd[:3])
    assert np.allclose(data["high"], est[:3] + z * sd[:3])
    assert ax.get_title() == "eps0 = 4, n = 1000" and len(ax.patches) == 3
    out = tmp_path / "f.png"
    plots.plot_frequency(est, 2.0, out=out)
    assert out.stat().st_size > 1000
    with pytest.raises(ValueError, match="level"):
        plots.plot_frequency(est, sd, level=1.0, ax=ax)


# -- what a reader sees: titles inside the figure, the lower bound visible and named, n/a said --

def _inside(fig, artist) -> bool:
    fig.canvas.draw()
    box, page = artist.get_window_extent(), fig.bbox
    return page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1


def test_a_long_frequency_title_is_wrapped_inside_the_figure():
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    title = ("pi-rappor(k=1000, eps=8.68, symmetric=False, p=872141): n = 1,000,000 reports, "
             "local eps = 8.68 (replacement); shuffled: central (0.412, 1e-06)-DP")
    plots.plot_frequency(np.arange(30.0), 1.0, title=title, ax=ax)
    assert ax.get_title().replace("\n", " ") == title  # every word kept, only wrapped
    assert "\n" in ax.get_title() and _inside(fig, ax.title)


def test_krr_lower_bound_drawn_on_top_and_named_after_krr():
    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.add_subplot()
    data = plots.plot_amplification(3.0, [1000, 10 ** 5], 1e-6, k=20, ax=ax)
    own, lower = ax.lines[2], ax.lines[-1]
    assert "20-ary randomized response" in own.get_label()
    assert "exact attack on 20-ary randomized response" in lower.get_label()
    assert "oracle" not in lower.get_label()
    # the lower bound meets the k-RR upper bound (tight): drawn after it and above it
    assert lower.get_zorder() > own.get_zorder() and lower.get_marker() == "x"
    assert np.allclose(data["lower"], data["krr_blanket"], rtol=0.05)
    assert all(lo <= up for lo, up in zip(data["lower"], data["best"]))
    assert _inside(fig, ax.title)


def test_points_where_a_bound_does_not_apply_are_counted_and_explained():
    """The closed form (FMT21 Thm 3.1) needs eps0 <= log(n / (16 log(4/delta))): at n = 1000,
    eps0 = 3, delta = 1e-6 that is log(1000 / (16 log(4e6))) = 1.41 < 3, so it is n/a there
    and applies at n = 1e6 (log(1e6 / 243.4) = 8.3)."""
    import math
    assert math.log(1000 / (16 * math.log(4e6))) < 3 < math.log(1e6 / (16 * math.log(4e6)))
    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.add_subplot()
    data = plots.plot_amplification(3.0, [1000, 10 ** 6], 1e-6, ax=ax)
    assert data["closed_form"][0] is None and data["closed_form"][1] is not None
    assert [n for n, _ in data["na"]["closed_form"]] == [1000]
    closed = ax.lines[0]
    assert "n/a at 1 of 2 n" in closed.get_label()
    notes = [t.get_text().replace("\n", " ") for t in fig.texts]
    assert any("closed form: n/a at n = 1,000" in t and "outside its condition" in t
               for t in notes), notes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("n/a at 1 of 2 n" in t for t in legend)
    saved = plots.plot_amplification(3.0, [10 ** 6], 1e-6, ax=Figure().add_subplot())
    assert saved["na"] == {} and saved["notes"] == []  # nothing to say, nothing said


def test_frequency_items_labelled_by_name():
    ax = Figure().add_subplot()
    names = ["chrome", "firefox", "safari", "edge"]
    data = plots.plot_frequency([5.0, 40.0, 20.0, 1.0], 1.0, names=names, top=3, ax=ax)
    assert data["names"] == ["firefox", "safari", "chrome"]
    assert [t.get_text() for t in ax.get_xticklabels()] == data["names"]
    assert "top 3 of 4 by estimate" in ax.get_xlabel()
    with pytest.raises(ValueError, match="names has 2 entries for 4 items"):
        plots.plot_frequency([5.0, 40.0, 20.0, 1.0], 1.0, names=names[:2], ax=ax)
    with pytest.raises(ValueError, match="top must be"):
        plots.plot_frequency([5.0, 40.0, 20.0, 1.0], 1.0, top=0, ax=ax)


def test_cli_plot_amplification_of_an_oracle_and_frequency_options(tmp_path, capsys):
    import json
    from ldpcompress.cli import main
    png = tmp_path / "a.png"
    assert main(["plot", "amplification", "--oracle", "pi-rappor", "--k", "100", "--eps0", "2",
                 "--n-range", "1e3", "1e4", "--points", "2", "--out", str(png), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    want = L.epsilon(10 ** 4, delta=1e-6, oracle=PIRappor(100, 2.0))
    assert res["oracle"][1] == want.value and res["lower"][1] == want.lower
    assert png.stat().st_size > 1000
    names = tmp_path / "names.txt"
    names.write_text("\n".join(f"site-{j}" for j in range(40)) + "\n")
    assert main(["plot", "frequency", "--n", "4000", "--domain", str(names), "--top", "5",
                 "--level", "0.8", "--out", str(tmp_path / "f.png"), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert len(res["items"]) == 5 and res["level"] == 0.8
    assert res["names"] == [f"site-{j}" for j in res["items"]]
    for argv, says in [
        (["plot", "amplification", "--oracle", "pi-rappor"], "needs --k"),
        (["plot", "amplification", "--top", "3"], "--top is for 'plot frequency'"),
        (["plot", "frequency", "--top", "0"], "--top must be an integer in [1, 500]"),
        (["plot", "frequency", "--level", "1"], "--level"),
        (["plot", "frequency", "--k", "30", "--domain", str(names)], "holds 40 names, not --k 30"),
    ]:
        assert main(argv + ["--out", str(tmp_path / "x.png")]) == 2
        assert says in capsys.readouterr().err


def test_own_curve_follows_the_randomizers_kernel_at_every_n():
    """k-RR's own bound is its pair kernel above ~2e6 users and a scalar randomizer's is its
    lattice blanket: the curve showed n/a ("not computed") there, though the query answered."""
    data = plots.amplification_curves(4.0, [10 ** 6, 3 * 10 ** 6], 1e-6, k=100)
    for i, n in enumerate(data["n"]):
        res = L.epsilon(n, 4.0, 1e-6, k=100)
        assert data["krr_blanket"][i] == res.value  # the smallest bound is k-RR's own
        assert data["lower"][i] <= data["krr_blanket"][i]
    assert "krr_blanket" not in data["na"]
    from ldpcompress.randomizers import LaplaceScalar
    lap = LaplaceScalar(0.0, 1.0, 2.0)
    data = plots.amplification_curves(None, [10 ** 4], 1e-6, oracle=lap)
    res = L.epsilon(10 ** 4, delta=1e-6, oracle=lap)
    assert res.method == "blanket_scalar" and data["oracle"] == [res.value]
    assert not data["na"]


# -- issue 32 item 8: log axis, the simulated truth, --central-eps, the band ---------------------

def test_frequency_log_axis_keeps_the_tail_visible():
    """Fails before: plot_frequency had no log option (the Zipf tail sat on the zero line)."""
    ax = Figure().add_subplot()
    est = np.array([10_000.0, 900.0, 40.0, 3.0, -2.0])
    data = plots.plot_frequency(est, 5.0, ax=ax, log=True)
    assert ax.get_yscale() == "symlog" and data["yscale"] == "symlog"
    # the linear region is one standard error wide: a count of 40 is drawn on the log part
    assert ax.yaxis.get_transform().linthresh == 5.0
    assert plots.plot_frequency(est, 5.0, ax=Figure().add_subplot())["yscale"] == "linear"


def test_amplification_band_visible_or_said_in_the_legend():
    """With --oracle the upper bound and the attack coincide: the shaded band had no width but
    its legend entry said the true eps lies there (fails before: no 'band' in the result and
    the band's label drawn though nothing is visible)."""
    ax = Figure().add_subplot()
    data = plots.plot_amplification(None, [10 ** 4, 10 ** 5], 1e-6, oracle=PIRappor(100, 4.0),
                                    ax=ax)
    ratio = max(b / l for b, l in zip(data["best"], data["lower"]))
    assert ratio < plots.BAND_VISIBLE and data["band"] == "pinned"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not any("lies in this band" in t for t in labels)
    assert any(t.startswith("no band: the upper and lower bounds agree within") for t in labels)
    wide = plots.plot_amplification(1.0, [10 ** 3, 10 ** 4], 1e-6, ax=Figure().add_subplot())
    assert wide["band"] == "drawn" and wide["band_ratio"] >= plots.BAND_VISIBLE


def test_cli_plot_frequency_truth_central_eps_and_log(tmp_path, capsys):
    """simulate writes true_counts.npy: plot frequency of the set draws it (fails before:
    ignored); its central target is --central-eps, and --eps (the old name) is refused with
    the new one named."""
    import json
    from ldpcompress.cli import main
    d = str(tmp_path / "set")
    assert main(["simulate", "--n", "3000", "--k", "20", "--oracle", "krr", "--eps", "2",
                 "--out", d]) == 0
    capsys.readouterr()
    truth = np.load(tmp_path / "set" / "true_counts.npy")
    png = str(tmp_path / "f.png")
    assert main(["plot", "frequency", d, "--top", "5", "--log", "--out", png, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert res["true"] == sorted(truth.tolist(), reverse=True)[:5]
    assert res["yscale"] == "symlog"
    assert main(["plot", "frequency", "--n", "2000", "--k", "20", "--central-eps", "2",
                 "--out", png, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["central_eps"] == 2.0
    for argv, says in [
        (["plot", "frequency", "--eps", "2"], "the central target of 'plot frequency' is now "
                                              "--central-eps"),
        (["plot", "frequency", "--central-eps", "0"], "--central-eps must be"),
        (["plot", "amplification", "--central-eps", "1"], "--central-eps is for 'plot frequency'"),
        (["plot", "amplification", "--log"], "--log is for 'plot frequency'"),
    ]:
        assert main(argv + ["--out", png]) == 2
        assert says in capsys.readouterr().err
    bad = tmp_path / "set" / "true_counts.npy"
    np.save(bad, np.array([1.5, 2.0]))
    assert main(["plot", "frequency", d, "--out", png]) == 2
    assert "expected 20 non-negative integer counts" in capsys.readouterr().err
