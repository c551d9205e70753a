"""The answer of an accountant's query (accounting/accountant.py): the smallest sound upper
bound, the method that gave it, every method's value, the PLD's optimistic estimate and the
query's planned cost, shown in notebooks through core/display.py."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core import display as D

__all__ = ["AccountingResult"]


@dataclass(frozen=True)
class AccountingResult:
    """eps or delta of the composition.

    ``value`` is the smallest sound upper bound over the methods evaluated and ``method`` names
    it; ``others`` maps every method evaluated to its upper value (None: not applicable, see
    ``notes``). ``lower`` is the PLD method's optimistic estimate (round-down grid, or the GLW21
    lower estimate of a mean-rounded grid) of the law it accounts; None when there is none.
    For connect-the-dots events that law is the dominating dots pair, so ``lower`` estimates
    the accounted bound rather than the true eps. ``h`` is the PLD grid step used. ``cost``
    states the query's planned cost and limit (accounting/plan.py).

    Attributes
    ----------
    query : {"epsilon", "delta"}
        What was asked.
    value : float
        The smallest sound upper bound.
    lower : float or None
        The PLD method's optimistic estimate (see above).
    method : str
        The method that gave ``value``.
    others : dict
        Every method evaluated and its upper value (None: not applicable).
    seconds : float
        The query's computation time (kernel loading left out).
    h : float or None
        The PLD grid step used.
    notes : tuple of str
        Remarks on the answer (a method not applicable, a grid coarsened ...).
    cost : str
        The query's planned cost and limit.
    """

    query: str
    value: float
    lower: float | None
    method: str
    others: dict = field(default_factory=dict)
    seconds: float = 0.0
    h: float | None = None
    notes: tuple = ()
    cost: str = ""

    def __float__(self) -> float:
        return float(self.value)

    # -- notebooks (core/display.py) ---------------------------------------------------------
    def __repr__(self) -> str:
        lower = "" if self.lower is None else f", lower {self.lower:.6g}"
        others = ", ".join(f"{m} {D.number(v)}" for m, v in self.others.items() if m != self.method)
        grid = "" if self.h is None else f", h = {self.h:.3g}"
        return (f"AccountingResult({self.query} = {self.value:.6g} by {self.method}{lower}{grid}"
                + (f"; others: {others}" if others else "") + ")")

    def _repr_html_(self) -> str:
        lower = "n/a" if self.lower is None else f"{self.lower:.6g}"
        return D.html_table(f"{self.query} = {self.value:.6g} (smallest sound upper bound: "
                            f"{self.method}); lower {lower}", ("method", "upper value"),
                            self._methods().items(), [*self.notes])

    def _methods(self) -> dict:
        """Every method evaluated: the chosen one first, then ``others``."""
        return {self.method: self.value, **self.others}

    def to_frame(self):
        """Every method evaluated and its upper value (the chosen one first) as a pandas
        DataFrame (pandas is optional: ImportError names it)."""
        pd = D.pandas()
        methods = self._methods()
        frame = pd.DataFrame({"value": list(methods.values()),
                              "chosen": [m == self.method for m in methods]},
                             index=pd.Index(list(methods), name="method"))
        frame.attrs.update(query=self.query, value=self.value, lower=self.lower, h=self.h,
                           notes=list(self.notes))
        return frame
