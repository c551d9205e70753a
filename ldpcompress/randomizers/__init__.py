"""The local randomizers: one module per randomizer, each class implementing the one
contract of ``contract.LocalRandomizer`` (its identity, privacy, client, server, storage, what
compression needs and what shuffle accounting needs). The jobs (``accounting``,
``compression``, ``estimation``, ``scale``, ``cli``) consume only that contract; ``registry``
names randomizers for files and the command line.

===============================================  ========  ==================================
class                                            module    reports
===============================================  ========  ==================================
:class:`KRR`                                     krr       k-ary randomized response
:class:`RAPPOR`, :class:`OUE`                    rappor    unary encoding, symmetric / optimized
:class:`SubsetSelection`                         subset    a d-subset of the items
:class:`OLH`                                     olh       optimized local hashing
:class:`HadamardResponse`                        hadamard  a Hadamard column
:class:`PIRappor`, :class:`VectorPIRappor`       pirappor  PI-RAPPOR over F_p and F_q^t
:class:`PrivUnit2`                               privunit  mean estimation on the sphere
:class:`OneBitSphere`                            onebit    the one-bit mean-estimation baseline
:class:`LaplaceScalar`, :class:`GaussianScalar`  scalar    a bounded value plus Laplace/Gaussian noise
:class:`TableRandomizer`                         table     any finite randomizer, from its table
===============================================  ========  ==================================
"""
from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports as _lazy_exports

_EXPORTS = {
    **dict.fromkeys(["LocalRandomizer", "Privacy", "Column", "SummarySpec"], "contract"),
    "FrequencyOracle": "base",
    "VectorMeanEstimator": "vectors",
    "register": "registry",
    "KRR": "krr",
    **dict.fromkeys(["RAPPOR", "OUE"], "rappor"),
    "SubsetSelection": "subset",
    "OLH": "olh",
    "HadamardResponse": "hadamard",
    **dict.fromkeys(["PIRappor", "VectorPIRappor", "FieldReports"], "pirappor"),
    "PrivUnit2": "privunit",
    "OneBitSphere": "onebit",
    **dict.fromkeys(["LaplaceScalar", "GaussianScalar", "ScalarStructure"], "scalar"),
    **dict.fromkeys(["ShuffleStructure", "BinaryStructure"], "structure"),
    "TableRandomizer": "table",
    "TableStructure": "table_law",
    **dict.fromkeys(["oracle_names", "make_oracle"], "catalog"),
}
__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)  # imported at first use

if TYPE_CHECKING:
    from .base import FrequencyOracle
    from .catalog import make_oracle, oracle_names
    from .contract import Column, LocalRandomizer, Privacy, SummarySpec
    from .hadamard import HadamardResponse
    from .krr import KRR
    from .olh import OLH
    from .onebit import OneBitSphere
    from .pirappor import FieldReports, PIRappor, VectorPIRappor
    from .privunit import PrivUnit2
    from .rappor import OUE, RAPPOR
    from .registry import register
    from .scalar import GaussianScalar, LaplaceScalar, ScalarStructure
    from .structure import BinaryStructure, ShuffleStructure
    from .subset import SubsetSelection
    from .table import TableRandomizer
    from .table_law import TableStructure
    from .vectors import VectorMeanEstimator

__all__ = ["LocalRandomizer", "Privacy", "Column", "SummarySpec", "FrequencyOracle",
           "VectorMeanEstimator", "register", "KRR", "RAPPOR", "OUE", "SubsetSelection", "OLH",
           "HadamardResponse", "PIRappor", "VectorPIRappor", "FieldReports", "PrivUnit2",
           "OneBitSphere", "LaplaceScalar", "GaussianScalar", "ScalarStructure", "ShuffleStructure", "BinaryStructure",
           "TableRandomizer", "TableStructure", "oracle_names", "make_oracle"]
