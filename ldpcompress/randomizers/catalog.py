"""The frequency oracles the command line and the demo offer by name: every registered
:class:`~ldpcompress.randomizers.base.FrequencyOracle` built from (k, eps), a user's own
registered oracle included."""
from __future__ import annotations

import inspect
from typing import Callable, cast

from .base import FrequencyOracle
from .registry import lookup, names

__all__ = ["oracle_names", "make_oracle"]


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


def make_oracle(name: str, k: int, eps: float) -> FrequencyOracle:
    """The oracle called ``name`` on k items with its own eps parameter: replacement eps for
    every oracle except "rappor", the symmetric (classic) RAPPOR, whose eps is its deletion eps
    (replacement 2 eps); "oue" is the asymmetric RAPPOR."""
    if name not in oracle_names():
        raise ValueError(f"oracle must be one of {', '.join(oracle_names())}, got {name!r}")
    # oracle_names() holds the FrequencyOracle classes that (k, eps) builds
    build = cast(Callable[[int, float], FrequencyOracle], lookup(name))
    return build(k, eps)
