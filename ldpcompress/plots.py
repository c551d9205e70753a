"""Plots (optional extra ``[plot]``): the amplification bounds against n, and frequency estimates
with their confidence intervals. Every function draws on the matplotlib axes ``ax`` it is given
(a new figure otherwise), never changes the backend (a notebook keeps its own), saves to
``out`` when given, and returns the numbers it drew.
"""
from __future__ import annotations

import numpy as np

from .accounting import amplification as A
from .core.optional import require
from .randomizers.estimator import normal_quantile

__all__ = ["amplification_curves", "plot_amplification", "plot_frequency"]


def _axes(ax, figsize):
    """(figure, axes): the given axes, or a new figure's."""
    if ax is not None:
        return ax.figure, ax
    plt = require("plot", "matplotlib.pyplot")
    return plt.subplots(figsize=figsize)


def _finish(fig, out, own: bool) -> None:
    if out is not None:
        fig.tight_layout()
        fig.savefig(out, dpi=120)
    if own and out is not None:
        require("plot", "matplotlib.pyplot").close(fig)


def amplification_curves(eps0: float, ns, delta: float, k: int | None = None,
                         oracle=None) -> dict:
    """eps(delta) against n: the closed form (None where it does not apply), the general bound,
    the k-RR blanket bound (with k) or the oracle's own bound (with an oracle object), and the
    exact lower bound (the oracle's or k-RR's attack when given, else binary RR's, which any
    eps0-LDP randomizer may meet). With an oracle, eps0 is its realised value."""
    out = {"n": [int(n) for n in ns], "closed_form": [], "general": [], "lower": []}
    own = "oracle" if oracle is not None else "krr_blanket" if k is not None else None
    if own:
        out[own] = []
    for n in out["n"]:
        if oracle is not None:
            res = A.epsilon(n, delta=delta, oracle=oracle)
        else:
            res = A.epsilon(n, eps0, delta, k=k)
        by = {b.name: b.value for b in res.bounds}
        out["closed_form"].append(by.get("closed_form"))
        out["general"].append(by.get("general"))
        if own:
            out[own].append(by.get("blanket", by.get("krr_blanket")))
        out["lower"].append(res.lower)
    out["eps0"] = res.params["eps0"] if out["n"] else eps0
    return out


def plot_amplification(eps0: float, ns, delta: float, out=None, k: int | None = None,
                       oracle=None, ax=None) -> dict:
    """Upper bounds as solid lines, the exact lower bound dashed and grey: the true eps lies
    between the lowest solid line and the dashed one."""
    data = amplification_curves(eps0, ns, delta, k, oracle)
    fig, ax_ = _axes(ax, (6, 4))
    own = None
    if oracle is not None:
        own = ("oracle", f"{getattr(oracle, 'name', 'oracle')}: privacy blanket (upper)")
    elif k is not None:
        own = ("krr_blanket", f"{k}-ary randomized response (upper)")
    uppers = [("closed_form", "closed form, FMT21 Thm 3.1 (upper)"),
              ("general", "any eps0-LDP randomizer, FMT21 Thm 3.2 (upper)")] + ([own] if own else [])
    for key, label in uppers:
        ys = [np.nan if v is None else v for v in data[key]]
        ax_.plot(data["n"], ys, marker="o", ms=3, lw=1.6, label=label)
    attack = "the oracle's attack" if own else "binary randomized response"
    ax_.plot(data["n"], [np.nan if v is None else v for v in data["lower"]], ls="--",
             color="0.45", lw=1.2, label=f"lower bound: exact delta of {attack}")
    ax_.set_xscale("log")
    ax_.set_yscale("log")
    ax_.set_xlabel("n (users)")
    ax_.set_ylabel(f"central eps at delta = {delta:g}")
    ax_.set_title(f"Amplification by shuffling: local eps0 = {data['eps0']:.4g}, "
                  f"delta = {delta:g}")
    ax_.legend(fontsize=8)
    _finish(fig, out, ax is None)
    return data


def plot_frequency(estimate, sd, true=None, out=None, top: int = 20, level: float = 0.95,
                   title: str | None = None, ax=None) -> dict:
    """The ``top`` items (by true count when given, else by estimate) with their estimates and
    two-sided normal confidence intervals estimate +- z sd at ``level`` (sd: each estimate's
    standard deviation, a scalar or one per item, e.g. sqrt(oracle.variance(n, f))), and the
    true counts as markers when given."""
    estimate = np.asarray(estimate, dtype=float)
    sd = np.broadcast_to(np.asarray(sd, dtype=float), estimate.shape)
    z = normal_quantile(level)  # the oracles' intervals use the same quantile
    if true is not None:
        true = np.asarray(true, dtype=float)
        if true.shape != estimate.shape:
            raise ValueError(f"true has shape {true.shape}, estimate {estimate.shape}")
    key = true if true is not None else estimate
    order = np.argsort(-key, kind="stable")[:max(1, int(top))]
    data = {"items": order.tolist(), "estimate": estimate[order].tolist(),
            "low": (estimate[order] - z * sd[order]).tolist(),
            "high": (estimate[order] + z * sd[order]).tolist(), "level": level, "title": title}
    if true is not None:
        data["true"] = true[order].tolist()
    fig, ax_ = _axes(ax, (7, 4))
    x = np.arange(order.size)
    ax_.bar(x, data["estimate"], 0.6, color="C0", alpha=0.75, label="estimate")
    ax_.errorbar(x, data["estimate"], yerr=z * sd[order], fmt="none", ecolor="k", capsize=3,
                 lw=1, label=f"{level:.0%} confidence interval")
    if true is not None:
        ax_.plot(x, data["true"], "D", color="C3", ms=4, label="true count")
    ax_.set_xticks(x, [str(j) for j in order], rotation=90)
    ax_.set_xlabel("item")
    ax_.set_ylabel("count")
    if title:
        ax_.set_title(title)
    ax_.legend(fontsize=8)
    _finish(fig, out, ax is None)
    return data
