"""How results look in a notebook: short ``repr`` strings, small HTML tables (``_repr_html_``,
which Jupyter shows instead of the repr) and pandas DataFrames (``to_frame()``).

pandas is not a dependency of ldpcompress (the extra ``[pandas]``): :func:`pandas` imports it
when a ``to_frame()`` is called and otherwise raises ImportError naming it.
"""
from __future__ import annotations

import dataclasses
import html
import math
from typing import Any, Iterable, Sequence

import numpy as np

from .optional import require

__all__ = ["number", "pandas", "html_table", "estimates_frame", "fields", "ledger_frame"]


def number(value: Any, digits: int = 6) -> str:
    """A value as a short string: 'n/a' for None, integers with thousands separators, floats
    with ``digits`` significant digits."""
    if value is None:
        return "n/a"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{digits}g}" if math.isfinite(value) else str(float(value))
    return str(value)


def pandas():
    """The pandas module, or ImportError naming it and the extra that installs it."""
    return require("pandas", "pandas")


def html_table(caption: str, head: Sequence[str], rows: Iterable[Sequence[Any]],
               lines: Sequence[str] = ()) -> str:
    """A small HTML table with a caption and optional lines of text under it (every cell and
    line escaped)."""
    esc = html.escape
    out = [f"<div><strong>{esc(caption)}</strong>"]
    out += [f"<div>{esc(line)}</div>" for line in lines]
    out.append("<table><thead><tr>" + "".join(f"<th>{esc(str(h))}</th>" for h in head)
               + "</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{esc(number(c))}</td>" for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def estimates_frame(randomizer, estimate, n: int, level: float = 0.95, names=None):
    """A DataFrame of ``randomizer``'s estimates from n reports with their confidence
    intervals at ``level`` (``randomizer.intervals``): columns estimate, low, high, indexed by
    item (or coordinate), or by ``names`` (an ItemDomain or a list, one per entry)."""
    pd = pandas()
    est = np.asarray(estimate, dtype=float)
    low, high = randomizer.intervals(est, n, level)
    index = pd.RangeIndex(est.size, name="item")
    if names is not None:
        labels = list(getattr(names, "names", names))
        if len(labels) != est.size:
            raise ValueError(f"names has {len(labels)} entries for {est.size} estimates")
        index = pd.Index(labels, name="name")
    frame = pd.DataFrame({"estimate": est, "low": low, "high": high}, index=index)
    frame.attrs.update(randomizer=randomizer.describe(), n=int(n), level=float(level))
    return frame


def fields(obj: Any) -> str:
    """The fields of a dataclass instance as 'name=value, ...': floats with 6 significant
    digits, other values by their repr (integers without separators: commas part fields)."""
    def shown(v):
        return f"{float(v):.6g}" if isinstance(v, (float, np.floating)) else repr(v)
    return ", ".join(f"{f.name}={shown(getattr(obj, f.name))}" for f in dataclasses.fields(obj))


def ledger_frame(events: Sequence[tuple[Any, int]], **attrs):
    """A DataFrame of a ledger, one row per (event, times) in order: columns event (its class
    name), parameters (:func:`fields`) and times, indexed from 0; ``attrs`` are kept in
    ``frame.attrs``."""
    pd = pandas()
    frame = pd.DataFrame({"event": [type(e).__name__ for e, _ in events],
                          "parameters": [fields(e) for e, _ in events],
                          "times": np.array([t for _, t in events], dtype=np.int64)},
                         index=pd.RangeIndex(len(events), name="position"))
    frame.attrs.update(attrs)
    return frame
