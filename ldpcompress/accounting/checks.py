"""Checks of the accounting's parameters shared by the events (accounting/events.py) and the
bounds: the blanket structure a randomizer states for itself (docs/theory.md §2.5)."""
from __future__ import annotations

from ..randomizers.contract import LocalRandomizer
from ..randomizers.scalar import ScalarStructure
from ..randomizers.structure import BinaryStructure, ShuffleStructure
from ..randomizers.table_law import TableStructure

__all__ = ["structure", "realised_eps0"]


def structure(oracle) -> (ShuffleStructure | ScalarStructure | BinaryStructure | TableStructure
                          | None):
    """The blanket structure a randomizer states for itself (``oracle.shuffle_structure()``,
    derived from its realised parameters; a binary randomizer may state its two probabilities,
    docs/theory.md §2.14), or None when it states none (the generic bound at its replacement
    eps applies); TypeError for anything that is not a randomizer."""
    if not isinstance(oracle, LocalRandomizer):
        raise TypeError(f"oracle must be an ldpcompress randomizer (a LocalRandomizer), got "
                        f"{type(oracle).__name__}")
    st = oracle.shuffle_structure()
    if st is not None and not isinstance(st, (ShuffleStructure, ScalarStructure, BinaryStructure,
                                              TableStructure)):
        raise TypeError(f"{type(oracle).__name__}.shuffle_structure() must return a "
                        "ShuffleStructure, a ScalarStructure, a BinaryStructure, a TableStructure "
                        "or None, got "
                        f"{type(st).__name__}")
    return st


def realised_eps0(oracle) -> float:
    """The replacement eps0 the accounting uses for a randomizer: its structure's realised
    eps0 (rounded up), else its stated replacement eps."""
    st = structure(oracle)
    return oracle.replacement_eps if st is None else st.eps0
