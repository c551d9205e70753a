"""The frequency oracles by name, as the command line and the demo choose them."""
from __future__ import annotations

from .hadamard import HadamardResponse
from .krr import KRR
from .olh import OLH
from .pirappor import PIRappor
from .rappor import OUE, RAPPOR
from .subset import SubsetSelection

__all__ = ["ORACLES", "make_oracle"]

ORACLES = {"pi-rappor": PIRappor, "oue": OUE, "rappor": RAPPOR, "krr": KRR,
           "subset": SubsetSelection, "olh": OLH, "hadamard": HadamardResponse}


def make_oracle(name: str, k: int, eps: float):
    """The oracle called ``name`` on k items with its own eps parameter: replacement eps for
    every oracle except "rappor", the symmetric (classic) RAPPOR, whose eps is its deletion eps
    (replacement 2 eps); "oue" is the asymmetric RAPPOR."""
    if name not in ORACLES:
        raise ValueError(f"oracle must be one of {', '.join(sorted(ORACLES))}, got {name!r}")
    return ORACLES[name](k, eps)
