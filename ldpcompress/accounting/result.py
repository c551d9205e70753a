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
    states the query's planned cost and limit (accounting/plan.py). ``gap_target`` is the
    accountant's target for (value - lower) / value when it chose h itself (None when h was
    fixed or no grid was built); ``target_met`` says whether the answer meets it, and the repr
    and the CLI's JSON say so when it does not.

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
    gap_target : float or None
        The target for (value - lower) / value when the accountant chose h (see above).
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
    gap_target: float | None = None

    @property
    def gap(self) -> float | None:
        """value - lower (None without a lower estimate)."""
        return None if self.lower is None else self.value - self.lower

    @property
    def target_met(self) -> bool | None:
        """Whether the gap meets the accountant's target (None: no target or no lower);
        a value with no room left below it (value == lower, an exact answer) meets any."""
        if self.gap_target is None or self.lower is None:
            return None
        return self.value - self.lower <= self.gap_target * self.value

    def __float__(self) -> float:
        return float(self.value)

    # -- notebooks (core/display.py) ---------------------------------------------------------
    def __repr__(self) -> str:
        lower = "" if self.lower is None else f", lower {self.lower:.6g}"
        others = ", ".join(f"{m} {D.number(v)}" for m, v in self.others.items() if m != self.method)
        grid = "" if self.h is None else f", h = {self.h:.3g}"
        missed = ""
        if self.target_met is False:
            assert self.gap_target is not None and self.gap is not None
            missed = (f"; gap target missed: value - lower = {self.gap:.3g} > "
                      f"{self.gap_target:.3g} x value")
        return (f"AccountingResult({self.query} = {self.value:.6g} by {self.method}{lower}{grid}"
                + (f"; others: {others}" if others else "") + missed + ")")

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
