"""The frequency oracles by name, as the command line and the demo choose them."""
from __future__ import annotations

from .oracles import HadamardOracle, KRROracle, OLHOracle, RAPPOROracle, SubsetOracle
from .pirappor import PIRappor

__all__ = ["ORACLES", "make_oracle"]

ORACLES = {"pi-rappor": PIRappor, "rappor": RAPPOROracle, "oue": RAPPOROracle,
           "krr": KRROracle, "subset": SubsetOracle, "olh": OLHOracle, "hadamard": HadamardOracle}


def make_oracle(name: str, k: int, eps: float):
    """The oracle called ``name`` on k items at local eps ("oue" and "rappor" are the asymmetric,
    replacement-DP RAPPOR; every oracle here is replacement eps-DP)."""
    if name not in ORACLES:
        raise ValueError(f"oracle must be one of {', '.join(sorted(ORACLES))}, got {name!r}")
    return ORACLES[name](k, eps)
