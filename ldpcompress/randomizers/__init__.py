"""The local randomizers: one module per randomizer, each class stating its privacy, its
client, its server estimator and variance, what compression needs (reference law, ratio) and
what shuffle accounting needs (its blanket structure). The jobs (``accounting``,
``compression``, ``estimation``, ``scale``) are views over these classes.

| class | module | reports |
|---|---|---|
| :class:`KRR` | krr | k-ary randomized response |
| :class:`RAPPOR`, :class:`OUE` | rappor | unary encoding, symmetric (deletion DP) / optimized (replacement DP) |
| :class:`SubsetSelection` | subset | a d-subset of the items |
| :class:`OLH` | olh | optimized local hashing |
| :class:`HadamardResponse` | hadamard | a Hadamard column |
| :class:`PIRappor`, :class:`VectorPIRappor` | pirappor | PI-RAPPOR over F_p and F_q^t |
| :class:`PrivUnit2` | privunit | mean estimation on the sphere |
| :class:`OneBitSphere` | onebit | the one-bit mean-estimation baseline |
"""
from .base import FrequencyOracle, Randomizer
from .catalog import ORACLES, make_oracle
from .hadamard import HadamardResponse
from .krr import KRR
from .olh import OLH
from .onebit import OneBitSphere
from .pirappor import FieldReports, PIRappor, VectorPIRappor
from .privunit import PrivUnit2
from .rappor import OUE, RAPPOR
from .structure import ShuffleStructure
from .subset import SubsetSelection

__all__ = ["Randomizer", "FrequencyOracle", "KRR", "RAPPOR", "OUE", "SubsetSelection", "OLH",
           "HadamardResponse", "PIRappor", "VectorPIRappor", "FieldReports", "PrivUnit2",
           "OneBitSphere", "ShuffleStructure", "ORACLES", "make_oracle"]
