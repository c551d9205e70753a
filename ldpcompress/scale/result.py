"""The result of aggregating report sets: a dict (``summary``, ``estimate``, ``n``,
``randomizer``, ``shards``, ``method``, ``auto``, ``cost``, ``expected``, ``domain``: the item
names the manifests keep) that also reads as an object in a notebook:
attributes, the randomizer's confidence intervals, a short repr, an HTML table and a pandas
DataFrame (``to_frame``, pandas optional)."""
from __future__ import annotations

import numpy as np

from ..core import display as D

__all__ = ["Aggregation"]

SHOWN = 10  # entries of the estimate in the HTML table (the largest first)


class Aggregation(dict):
    """What :func:`ldpcompress.scale.distributed.aggregate` returns. Every key is also an
    attribute (``res.estimate``, ``res.n``); ``intervals(level)`` are the randomizer's own
    (``randomizer.intervals(estimate, n, level)``)."""

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def intervals(self, level: float = 0.95):
        """(low, high): the randomizer's two-sided confidence intervals of every entry."""
        return self["randomizer"].intervals(self["estimate"], self["n"], level)

    def to_frame(self, level: float = 0.95, names=None):
        """The estimates with their intervals as a pandas DataFrame (columns estimate, low,
        high; indexed by ``names``, else by the item names the manifests keep, else by item
        or coordinate)."""
        if names is None:
            names = self.get("domain")
        return D.estimates_frame(self["randomizer"], self["estimate"], self["n"], level, names)

    def __repr__(self) -> str:
        est = np.asarray(self["estimate"])
        return (f"Aggregation({self['randomizer'].describe()}: n = {D.number(self['n'])} reports "
                f"from {self['shards']} shard(s) by {self['method']}; estimate of shape "
                f"{est.shape})")

    def _repr_html_(self) -> str:
        est = np.asarray(self["estimate"], dtype=float).ravel()
        low, high = (np.asarray(v, dtype=float).ravel() for v in self.intervals())
        top = np.argsort(-est, kind="stable")[:SHOWN]
        items = self.get("domain")
        label = (lambda j: items.names[j]) if items is not None else int
        return D.html_table(
            f"{self['randomizer'].describe()}: n = {D.number(self['n'])} reports, "
            f"{self['shards']} shard(s), {self['method']}",
            ("item" if items is not None else "entry", "estimate", "95% low", "95% high"),
            [(label(j), est[j], low[j], high[j]) for j in top],
            [f"the {min(SHOWN, est.size)} largest of {est.size} entries"])
