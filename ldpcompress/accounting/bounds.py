"""What a one-round query answers: each bound's value (:class:`Bound`), the query's result
(:class:`AmplificationResult`: the smallest sound upper bound, the bound that gave it, the exact
lower bound) and the choice among the bounds (:func:`best_upper`), docs/theory.md §2. Shared by
the unsampled queries (accounting/amplification.py), the sampled ones
(accounting/participation.py) and the campaigns (accounting/allocation.py)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence

from ..core import display as D

__all__ = ["NoSoundBound", "Bound", "AmplificationResult", "best_upper"]


class NoSoundBound(ValueError):
    """Valid arguments, but no bound certifies any eps at this delta (e.g. delta below the
    FMT21 Thm 3.8 floor of an approximate-DP randomizer). Inverse queries read it as "not
    certified"; every other ValueError is a bad argument and reaches the caller."""


@dataclass(frozen=True)
class Bound:
    """One bound's answer: ``value`` is eps or delta, None when the bound does not apply.

    Attributes
    ----------
    name : str
        The bound's short name (e.g. "closed_form", "clone_pair").
    label : str
        What it is, with its citation.
    value : float or None
        Its eps or delta; None when it does not apply (``note`` says why).
    upper : bool, default True
        An upper bound (rounded up) or a lower one (an exact attack, rounded down).
    note : str, default ""
        Why it does not apply, or a remark on its value.
    seconds : float, default 0
        Its computation time (kernel loading left out).
    """

    name: str
    label: str
    value: float | None
    upper: bool = True
    note: str = ""
    seconds: float = 0.0

    @property
    def applicable(self) -> bool:
        return self.value is not None

    def __float__(self) -> float:
        if self.value is None:
            raise ValueError(f"{self.label} is not applicable: {self.note}")
        return float(self.value)

    def __repr__(self) -> str:
        kind = "upper" if self.upper else "lower"
        shown = f"n/a: {self.note}" if self.value is None else f"{self.value:.6g} ({kind})"
        return f"Bound({self.name} = {shown}; {self.label})"


@dataclass(frozen=True)
class AmplificationResult:
    """Answer of an eps or delta query: best sound upper value, its source, and the lower bound.

    ``value`` is the smallest upper bound among ``bounds``; ``method`` names it; ``lower`` is the
    exact lower bound (§2.6) when one is computed, so ``value - lower`` shows the tightness.

    Attributes
    ----------
    query : {"epsilon", "delta"}
        What was asked.
    value : float
        The smallest sound upper bound.
    method : str
        The name of the bound that gave ``value``.
    lower : float or None
        The exact lower bound, when one is computed.
    bounds : tuple of Bound
        Every bound evaluated, applicable or not.
    params : dict
        The query's parameters as validated (n, eps0, delta ...).
    seconds : float
        The query's computation time (kernel loading left out).
    """

    query: str  # "epsilon" or "delta"
    value: float
    method: str
    lower: float | None
    bounds: tuple[Bound, ...]
    params: dict = field(default_factory=dict)
    seconds: float = 0.0

    def __float__(self) -> float:
        return float(self.value)

    def as_dict(self) -> dict:
        return asdict(self)

    # -- notebooks (core/display.py) ---------------------------------------------------------
    def __repr__(self) -> str:
        asked = ", ".join(f"{k}={D.number(v)}" for k, v in self.params.items()
                          if v is not None and k != "lower")
        lower = "" if self.lower is None else f", lower {self.lower:.6g}"
        return (f"AmplificationResult({self.query} = {self.value:.6g} by {self.method}{lower}; "
                f"{asked}; {len(self.bounds)} bounds)")

    def _repr_html_(self) -> str:
        lower = "n/a" if self.lower is None else f"{self.lower:.6g}"
        return D.html_table(
            f"{self.query} = {self.value:.6g} (smallest sound upper bound: {self.method}); "
            f"exact lower bound {lower}", ("bound", "value", "kind", "note", "seconds"),
            [(b.label, b.value, "upper" if b.upper else "lower", b.note, b.seconds)
             for b in self.bounds],
            [", ".join(f"{k} = {D.number(v)}" for k, v in self.params.items())])

    def to_frame(self):
        """The bounds as a pandas DataFrame (one row per bound, indexed by name; pandas is
        optional: ImportError names it)."""
        pd = D.pandas()
        frame = pd.DataFrame([dict(name=b.name, label=b.label, value=b.value, upper=b.upper,
                                   note=b.note, seconds=b.seconds) for b in self.bounds])
        frame = frame.set_index("name")
        frame.attrs.update(query=self.query, value=self.value, method=self.method,
                           lower=self.lower, params=dict(self.params))
        return frame


def best_upper(bounds: Sequence[Bound]) -> tuple[Bound, float]:
    """The applicable upper bound of smallest value (the first of equal ones), with its value:
    what a query reports. ValueError when none applies."""
    ups = [(b, b.value) for b in bounds if b.upper and b.value is not None]
    return min(ups, key=lambda bv: bv[1])
