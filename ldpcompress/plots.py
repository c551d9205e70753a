"""Plots (optional extra ``[plot]``): amplification bounds vs n (the shape of FMT21 Fig. 2) and
true vs estimated top items. Each function returns the numbers it plotted."""
from __future__ import annotations

import numpy as np

from . import amplification as A
from .optional import require


def _pyplot():
    matplotlib = require("plot", "matplotlib")
    matplotlib.use("Agg")
    return require("plot", "matplotlib.pyplot")


def amplification_curves(eps0: float, ns, delta: float, k: int | None = None) -> dict:
    """eps(delta) vs n for the closed form (None where n/a), the general numerical bound, the
    k-RR blanket bound (with k) and the exact lower bound."""
    out = {"n": [int(n) for n in ns], "closed_form": [], "general": [], "lower": []}
    if k is not None:
        out["krr_blanket"] = []
    for n in out["n"]:
        out["closed_form"].append(A.closed_form_epsilon(n, eps0, delta).value)
        out["general"].append(A.general_epsilon(n, eps0, delta).value)
        out["lower"].append(A.lower_epsilon(n, eps0, delta).value)
        if k is not None:
            out["krr_blanket"].append(A.krr_blanket_epsilon(n, eps0, k, delta).value)
    return out


def plot_amplification(eps0: float, ns, delta: float, out, k: int | None = None) -> dict:
    plt = _pyplot()
    data = amplification_curves(eps0, ns, delta, k)
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = {"closed_form": "closed form (Thm 3.1)", "general": "general numerical (Thm 3.2)",
              "krr_blanket": f"{k}-RR (S2.3b)", "lower": "lower bound, any eps0-LDP (S2.4a)"}
    for key, label in labels.items():
        if key in data:
            ys = [np.nan if v is None else v for v in data[key]]
            ax.plot(data["n"], ys, marker="o", ms=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (users)")
    ax.set_ylabel(f"central eps at delta={delta:g}")
    ax.set_title(f"Amplification by shuffling, eps0 = {eps0:g}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return data


def plot_frequency(true, estimate, out, top: int = 20) -> dict:
    plt = _pyplot()
    true = np.asarray(true)
    order = np.argsort(-true)[:top]
    data = {"items": order.tolist(), "true": true[order].tolist(),
            "estimate": np.asarray(estimate)[order].tolist()}
    fig, ax = plt.subplots(figsize=(7, 4))
    x = np.arange(order.size)
    ax.bar(x - 0.2, data["true"], 0.4, label="true")
    ax.bar(x + 0.2, data["estimate"], 0.4, label="estimated")
    ax.set_xticks(x, [str(j) for j in order], rotation=90)
    ax.set_xlabel("item")
    ax.set_ylabel("count")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return data
