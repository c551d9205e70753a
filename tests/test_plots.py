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
