"""The frequency oracles the command line and the demo offer by name: every registered
:class:`~ldpcompress.randomizers.base.FrequencyOracle` built from (k, eps), a user's own
registered oracle included."""
from __future__ import annotations

import inspect
from typing import Callable, cast

from .base import FrequencyOracle
from .registry import lookup, names

__all__ = ["oracle_names", "oracle_class", "make_oracle"]


def _takes_k_eps(cls: type) -> bool:
    """Whether cls(k, eps) builds it (its other constructor parameters have defaults)."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return False
    need = [p.name for p in sig.parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return need == ["k", "eps"]


def oracle_names() -> list[str]:
    """Registered frequency oracles that (k, eps) alone builds, sorted."""
    return [n for n in names() if issubclass(lookup(n), FrequencyOracle)
            and _takes_k_eps(lookup(n))]


def oracle_class(name: str) -> Callable[[int, float], FrequencyOracle]:
    """The registered frequency oracle ``name`` that (k, eps) builds; ValueError listing them
    otherwise. Looks up that one name: the other randomizers (and the installed plug-ins, for
    a library name) are not imported."""
    try:
        cls = lookup(name)
    except (TypeError, ValueError):
        cls = None
    if cls is None or not (issubclass(cls, FrequencyOracle) and _takes_k_eps(cls)):
        raise ValueError(f"oracle must be one of {', '.join(oracle_names())}, got {name!r}")
    return cast(Callable[[int, float], FrequencyOracle], cls)


def make_oracle(name: str, k: int, eps: float) -> FrequencyOracle:
    """The oracle called ``name`` on k items with its own eps parameter: replacement eps for
    every oracle except "rappor", the symmetric (classic) RAPPOR, whose eps is its deletion eps
    (replacement 2 eps); "oue" is the asymmetric RAPPOR.

    Parameters
    ----------
    name : str
        A registered frequency oracle's name (``oracle_names()``).
    k : int
        Domain size (k >= 2).
    eps : float
        The oracle's own eps parameter (> 0), as above.
    """
    return oracle_class(name)(k, eps)
