"""Plots (optional extra ``[plot]``): the amplification bounds against n, and frequency estimates
with their confidence intervals. Every function draws on the matplotlib axes ``ax`` it is given
(a new figure otherwise), never changes the backend (a notebook keeps its own), saves to
``out`` when given, and returns the numbers it drew.

What a reader of the figure needs is on it: titles are wrapped to the figure's width, the
exact lower bound is drawn on top of the upper bounds (it may coincide with one), and a point
where a bound does not apply ("n/a": outside its condition, or beyond what it computes) is
counted in the curve's legend entry and explained in a note under the axes, never dropped
without a word.
"""
from __future__ import annotations

import math
import textwrap

import numpy as np

from .accounting import amplification as A
from .core.optional import require
from .randomizers.estimator import normal_quantile

__all__ = ["amplification_curves", "plot_amplification", "plot_frequency", "plot_plan"]

CURVES = ("closed_form", "general", "oracle", "krr_blanket", "lower")
# upper / lower at which the band between the bounds is drawn: below it (the bounds agree
# within 2%) it would be thinner than the lines on a log axis, so it is said in the legend
BAND_VISIBLE = 1.02


def _axes(ax, figsize):
    """(figure, axes, own): the given axes, or a new figure's (own: we made it)."""
    if ax is not None:
        return ax.figure, ax, False
    plt = require("plot", "matplotlib.pyplot")
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax, True


def _finish(fig, out, own: bool) -> None:
    if out is not None:
        fig.savefig(out, dpi=150, bbox_inches="tight")  # every title, legend and note inside
    if own and out is not None:
        require("plot", "matplotlib.pyplot").close(fig)


def _fit_text(fig, artist, text: str) -> None:
    """Set ``text`` on ``artist`` (a title or a note), wrapped at spaces until it is no wider
    than the figure (a long title would otherwise be cut off on both sides)."""
    if not hasattr(fig.canvas, "get_renderer"):  # a bare Figure(): give it a raster canvas
        require("plot", "matplotlib.backends.backend_agg").FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    limit = 0.9 * fig.bbox.width
    width = max(len(line) for line in text.splitlines())
    while True:
        wrapped = "\n".join(textwrap.fill(line, width) for line in text.splitlines())
        artist.set_text(wrapped)
        if width <= 20 or artist.get_window_extent(renderer).width <= limit:
            return
        width = int(width * 0.9)


def _compact(n: int) -> str:
    return f"{n:,}" if n < 10 ** 5 else f"{n:.2g}".replace("e+0", "e").replace("e+", "e")


def _where(ns: list[int]) -> str:
    """The n where a curve is n/a, e.g. 'n = 1,000-31,623 (3 points)'."""
    if len(ns) == 1:
        return f"n = {_compact(ns[0])}"
    return f"n = {_compact(ns[0])}-{_compact(ns[-1])} ({len(ns)} points)"


def amplification_curves(eps0: float | None, ns, delta: float, k: int | None = None,
                         oracle=None) -> dict:
    """eps(delta) against n for every curve of :func:`plot_amplification`.

    Returns a dict: ``n``; ``closed_form`` (FMT21 Thm 3.1) and ``general`` (Thm 3.2), sound
    for any eps0-LDP randomizer; ``krr_blanket`` (with ``k``: k-ary randomized response's
    blanket pair) or ``oracle`` (with an oracle object: its own privacy-blanket bound);
    ``best``, the smallest sound upper bound at each n (what :func:`ldpcompress.epsilon`
    reports); ``lower``, the exact lower bound (an attack on the oracle or on k-RR when given,
    else on binary randomized response, an eps0-LDP randomizer); ``na``, for each curve, the
    points where it is None ("n/a") with the reason; ``eps0`` (with an oracle: its realised
    replacement eps0). Each value is None where that bound does not apply.

    Parameters
    ----------
    eps0 : float or None
        The local randomizer's replacement eps (None with ``oracle``).
    ns : iterable of int
        The numbers of users n at which eps is computed.
    delta : float
        The central delta, in (0, 1).
    k : int, optional
        The randomizer is k-ary randomized response: adds its blanket bound and attack.
    oracle : LocalRandomizer, optional
        A frequency oracle instead of eps0: its own blanket bound and attack.
    """
    out: dict = {"n": [int(n) for n in ns], "closed_form": [], "general": [], "best": [],
                 "lower": []}
    own = "oracle" if oracle is not None else "krr_blanket" if k is not None else None
    if own:
        out[own] = []
    na: dict = {key: [] for key in CURVES if key in out}
    res = None
    for n in out["n"]:
        if oracle is not None:
            res = A.epsilon(n, delta=delta, oracle=oracle)
        else:
            res = A.epsilon(n, eps0, delta, k=k)
        by = {b.name: b for b in res.bounds}
        lower = next((b for b in res.bounds if not b.upper), None)
        picks = {"closed_form": by.get("closed_form"), "general": by.get("general"),
                 "lower": lower}
        if own:
            picks[own] = _own_bound(res.bounds)
        for key, bound in picks.items():
            value = None if bound is None else bound.value
            out[key].append(value)
            if value is None:
                na[key].append((n, "not computed" if bound is None else bound.note))
        out["best"].append(res.value)
    out["na"] = {key: points for key, points in na.items() if points}
    out["eps0"] = res.params["eps0"] if res is not None else eps0
    return out


GENERIC = ("closed_form", "general", "krr_split")  # bounds that do not use the blanket


def _own_bound(bounds):
    """The randomizer's own (blanket) upper bound at this n: the smallest applicable of its
    kernels (k-RR: the blanket pair, or its pair kernel at large n; an oracle: its blanket,
    a scalar randomizer's lattice blanket), else the first with its note; None if it has none."""
    own = [b for b in bounds if b.upper and b.name not in GENERIC]
    valued = [b for b in own if b.value is not None]
    if valued:
        return min(valued, key=lambda b: b.value)
    return own[0] if own else None


def _na_reason(note: str) -> str:
    """A short reason for a legend entry, from a bound's note."""
    if "limit" in note or "terms" in note:
        return "beyond its computation limit"
    if note.startswith("needs") or "condition" in note:
        return "outside its condition"
    return "not applicable"


def plot_amplification(eps0: float | None, ns, delta: float, out=None, k: int | None = None,
                       oracle=None, ax=None) -> dict:
    """Central eps at ``delta`` against the number of users n, on log-log axes.

    Upper bounds are solid lines (the closed form and the numerical bound for any eps0-LDP
    randomizer, and with ``k`` or ``oracle`` that randomizer's own, tighter bound); the exact
    lower bound (an attack) is dashed with crosses, drawn last so that it stays visible where
    it meets an upper bound; the band between the lower bound and the smallest upper bound is
    where the true eps lies (where the two agree within 2% at every n the band would be thinner
    than the lines: it is not drawn, and the legend says the bounds agree; ``band`` in the
    result says which). Points where a bound is n/a are counted in its legend entry and
    explained in a note under the axes. Returns :func:`amplification_curves`' numbers.

    Parameters
    ----------
    eps0 : float or None
        The local randomizer's replacement eps (None with ``oracle``).
    ns : iterable of int
        The numbers of users n at which eps is computed.
    delta : float
        The central delta, in (0, 1).
    out : str or path, optional
        File the figure is saved to (150 dpi); None: not saved.
    k : int, optional
        The randomizer is k-ary randomized response: adds its blanket bound and attack.
    oracle : LocalRandomizer, optional
        A frequency oracle instead of eps0: its own blanket bound and attack.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    """
    data = amplification_curves(eps0, ns, delta, k, oracle)
    fig, ax_, own_fig = _axes(ax, (7, 5.2))
    if oracle is not None:
        who = oracle.describe() if hasattr(oracle, "describe") else getattr(oracle, "name", "oracle")
        own = ("oracle", f"{who} only: its privacy blanket (BBGN19)")
        attacked = who
        short = {"oracle": "privacy blanket"}
    elif k is not None:
        own = ("krr_blanket", f"{k}-ary randomized response only: blanket pair")
        attacked = f"{k}-ary randomized response"
        short = {"krr_blanket": "k-RR blanket pair"}
    else:
        own, attacked, short = None, "binary randomized response (an eps0-LDP randomizer)", {}
    short.update(closed_form="closed form", general="numerical bound", lower="lower bound")
    curves = [("closed_form", "any eps0-LDP randomizer: closed form, FMT21 Thm 3.1", "C0"),
              ("general", "any eps0-LDP randomizer: numerical, FMT21 Thm 3.2", "C1")]
    if own:
        curves.append((*own, "C2"))
    notes = []

    def label_of(key: str, label: str) -> str:
        missing = data["na"].get(key)
        if not missing:
            return label
        notes.append(f"{short[key]}: n/a at {_where([n for n, _ in missing])}, "
                     f"{_na_reason(missing[0][1])} (at n = {_compact(missing[0][0])}: {missing[0][1]})")
        return f"{label} [n/a at {len(missing)} of {len(data['n'])} n: see the note]"

    xs = data["n"]
    for key, label, color in curves:
        ys = [np.nan if v is None else v for v in data[key]]
        ax_.plot(xs, ys, marker="o", ms=3.5, lw=1.6, color=color, label=label_of(key, label))
    lows = np.array([np.nan if v is None else v for v in data["lower"]])
    best = np.array(data["best"], dtype=float)
    both = np.isfinite(lows) & np.isfinite(best) & (lows > 0)
    # the band's largest width on the log axis, as a ratio upper / lower (1: no width)
    ratio = float(np.max(best[both] / lows[both])) if both.any() else math.nan
    if both.any() and ratio >= BAND_VISIBLE:
        ax_.fill_between(xs, lows, best, where=both, color="0.5", alpha=0.18, lw=0,
                         label="the true eps lies in this band")
        data["band"] = "drawn"
    elif both.any():  # the curves coincide: a band would have no visible width
        ax_.fill_between([], [], [], color="none", label=f"no band: the upper and lower "
                         f"bounds agree within {100 * (ratio - 1):.2g}% at every n (the true "
                         "eps is pinned)")
        data["band"] = "pinned"
    else:
        data["band"] = None
    data["band_ratio"] = None if math.isnan(ratio) else ratio
    ax_.plot(xs, lows, ls="--", color="k", lw=1.2, marker="x", ms=6, zorder=5,
             label=label_of("lower", f"lower bound: exact attack on {attacked}"))
    ax_.set_xscale("log")
    ax_.set_yscale("log")
    ax_.set_xlabel("n (users)")
    ax_.set_ylabel(f"central eps at delta = {delta:g}")
    ax_.grid(True, which="major", color="0.9", lw=0.6)
    title = ax_.set_title("x")
    realised = " (as the oracle realises it)" if oracle is not None else ""
    _fit_text(fig, title, f"Amplification by shuffling: local eps0 = {data['eps0']:.4g}"
                          f"{realised}, delta = {delta:g}")
    ax_.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1,
               frameon=False)
    data["notes"] = notes
    if notes:
        note = fig.text(0.01, 0.0, "x", fontsize=7.5, va="top", ha="left", color="0.25")
        _fit_text(fig, note, "\n".join(notes))
    _finish(fig, out, own_fig)
    return data


def plot_frequency(estimate, sd, true=None, out=None, top: int = 20, level: float = 0.95,
                   title: str | None = None, ax=None, names=None, log: bool = False) -> dict:
    """The ``top`` items (by true count when given, else by estimate) with their estimates and
    two-sided normal confidence intervals estimate +- z sd at ``level`` (sd: each estimate's
    standard deviation, a scalar or one per item, e.g. sqrt(oracle.variance(n, f))), and the
    true counts as markers when given. ``names`` (one per item, e.g. an ItemDomain's) label
    the items instead of their indices. The title is wrapped to the figure's width.
    ``log``: a symmetric-log count axis (linear within one standard error of 0, where estimates
    may be negative, logarithmic above), so the tail of Zipf-like data and its intervals stay
    visible beside the largest counts.

    Parameters
    ----------
    estimate : array of float
        The estimated counts, one per item.
    sd : float or array of float
        The standard deviation of each estimate (one for all, or one per item).
    true : array of float, optional
        The true counts (markers; they also choose the top items).
    out : str or path, optional
        File the figure is saved to (150 dpi); None: not saved.
    top : int, default 20
        How many items are shown (>= 1).
    level : float, default 0.95
        The confidence level of the intervals.
    title : str, optional
        The figure's title (wrapped to its width).
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    names : sequence of str, optional
        A name per item (e.g. an ItemDomain), shown instead of the indices.
    log : bool, default False
        A symmetric-log count axis (see above).
    """
    estimate = np.asarray(estimate, dtype=float)
    sd = np.broadcast_to(np.asarray(sd, dtype=float), estimate.shape)
    z = normal_quantile(level)  # the oracles' intervals use the same quantile
    if true is not None:
        true = np.asarray(true, dtype=float)
        if true.shape != estimate.shape:
            raise ValueError(f"true has shape {true.shape}, estimate {estimate.shape}")
    if names is not None:
        names = [str(x) for x in names]
        if len(names) != estimate.size:
            raise ValueError(f"names has {len(names)} entries for {estimate.size} items")
    top = int(top)
    if top < 1:
        raise ValueError(f"top must be an integer >= 1, got {top}")
    key = true if true is not None else estimate
    order = np.argsort(-key, kind="stable")[:top]
    data = {"items": order.tolist(), "estimate": estimate[order].tolist(),
            "low": (estimate[order] - z * sd[order]).tolist(),
            "high": (estimate[order] + z * sd[order]).tolist(), "level": level, "title": title}
    if true is not None:
        data["true"] = true[order].tolist()
    if names is not None:
        data["names"] = [names[j] for j in order]
    fig, ax_, own_fig = _axes(ax, (max(7.0, 0.3 * order.size + 2), 4.6))
    x = np.arange(order.size)
    ax_.bar(x, data["estimate"], 0.6, color="C0", alpha=0.75, label="estimate (unbiased)")
    ax_.errorbar(x, data["estimate"], yerr=z * sd[order], fmt="none", ecolor="k", capsize=3,
                 lw=1, label=f"{100 * level:.4g}% confidence interval")
    if true is not None:
        ax_.plot(x, data["true"], "D", color="C3", ms=4, label="true count")
    labels = data.get("names", [str(j) for j in order])
    ax_.set_xticks(x, labels, rotation=90 if names is not None or order.size > 12 else 0)
    by = "true count" if true is not None else "estimate"
    ax_.set_xlabel(f"{'item' if names is None else 'item name'} (top {order.size} of "
                   f"{estimate.size:,} by {by})")
    ax_.set_ylabel("count" + (" (symmetric log scale)" if log else ""))
    if log:
        linear = float(np.max(sd[order])) if order.size else 1.0
        ax_.set_yscale("symlog", linthresh=max(linear, 1.0))
    data["yscale"] = "symlog" if log else "linear"
    ax_.axhline(0, color="0.3", lw=0.6)
    ax_.grid(True, axis="y", color="0.9", lw=0.6)
    if title:
        _fit_text(fig, ax_.set_title("x"), title)
    ax_.legend(fontsize=8)
    _finish(fig, out, own_fig)
    return data


def plot_plan(plan, out=None, ax=None) -> dict:
    """The standard error of one round's estimates (of a frequency, or of a mean) against the
    number of rounds T (log-log),
    one curve per assignment of a :class:`~ldpcompress.planning.CampaignPlan` (public groups,
    Poisson 1/T, allocation), each at its largest certified eps0; the row to deploy at each T
    is ringed. Returns {label: [(T, SE, eps0), ...]} and the deployed labels by T.

    Parameters
    ----------
    plan : CampaignPlan
        What :func:`ldpcompress.planning.plan` returned.
    out : str or path, optional
        File the figure is saved to (150 dpi); None: not saved.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure's).
    """
    fig, ax_, own_fig = _axes(ax, (7, 4.8))
    curves: dict[str, list] = {}
    for row in plan.rows:
        curves.setdefault(row.label, []).append((row.rounds, row.error.scaled_se, row.eps0))
    styles = {"public groups": ("C3", "s"), "Poisson 1/T": ("C1", "^")}
    for i, (label, pts) in enumerate(sorted(curves.items())):
        pts.sort()
        color, marker = styles.get(label, (f"C{(i % 3) * 2}", "o"))
        ax_.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, ms=4, lw=1.6,
                 color=color, label=label)
    deploy = {t: plan.deploy(t) for t in plan.rounds}
    ax_.scatter([t for t in deploy], [r.error.scaled_se for r in deploy.values()], s=140,
                facecolors="none", edgecolors="k", lw=1.2, zorder=5, label="deploy (smallest SE)")
    what = plan.rows[0].error.what if plan.rows else "count"
    ax_.set_xscale("log")
    ax_.set_yscale("log")
    ax_.set_xticks(plan.rounds, [str(t) for t in plan.rounds])
    ax_.minorticks_off()
    ax_.set_xlabel("T (rounds)")
    ax_.set_ylabel(f"standard error of one {'frequency' if what == 'count' else what}, "
                   "per round")
    ax_.grid(True, which="major", color="0.9", lw=0.6)
    title = ax_.set_title("x")
    _fit_text(fig, title, f"Planning a campaign: n = {_compact(plan.n)} devices, {plan.family},"
                          f" central ({plan.eps:g}, {plan.delta:g})")
    ax_.legend(fontsize=8, frameon=False)
    _finish(fig, out, own_fig)
    return dict(curves=curves, deploy={t: r.label for t, r in deploy.items()})


def plot_heavy_hitters(result, out=None, ax=None) -> dict:
    """The words a :class:`~ldpcompress.heavy.HeavyResult` found, in order: each estimate with
    its interval, beside the true count in a simulation. Returns {word: (estimate, true)}."""
    fig, ax_, own_fig = _axes(ax, (max(6.0, 0.35 * len(result.words) + 2), 4.8))
    xs = list(range(len(result.words)))
    est = [w.estimate for w in result.words]
    err = [[w.estimate - w.low for w in result.words], [w.high - w.estimate for w in result.words]]
    ax_.errorbar(xs, est, yerr=err, fmt="o", ms=4, color="C0", capsize=2,
                 label=f"estimate, {result.level:.0%} interval")
    shown = {w.word: (w.estimate, None) for w in result.words}
    if result.truth:
        true = [result.truth.get(w.word, 0) for w in result.words]
        ax_.scatter(xs, true, marker="x", color="C3", zorder=5, label="true count")
        shown = {w.word: (w.estimate, t) for w, t in zip(result.words, true)}
    ax_.set_xticks(xs, [w.word for w in result.words], rotation=60, fontsize=8)
    ax_.set_ylabel(f"count among n = {_compact(result.n)} devices")
    ax_.grid(True, axis="y", color="0.9", lw=0.6)
    p = result.plan
    title = ax_.set_title("x")
    _fit_text(fig, title, f"Heavy hitters: {p.assignment}, {p.oracle.describe()}, central "
                          f"({p.upper:.3g}, {p.delta:g})")
    ax_.legend(fontsize=8, frameon=False)
    _finish(fig, out, own_fig)
    return shown
