"""ldpcompress: the shuffle model of differential privacy.

The local randomizer is the hub (``ldpcompress.randomizers``: k-RR, RAPPOR/OUE, subset
selection, OLH, Hadamard response, PI-RAPPOR, PrivUnit2); the jobs are views over it:
``accounting`` (what central (eps, delta) shuffled reports give, over many rounds),
``compression`` (a 17-byte seed report instead of the long output), ``estimation`` (the
frequency and mean jobs end to end), ``scale`` (report sets on disk, Dask) and ``cli``.
The mathematics, with citations, is in docs/theory.md; how to use it in docs/guide.md. Both
are installed with the package: :func:`docs_path` is their directory, and
``ldpcompress docs theory --section 2.5`` prints the section "docs/theory.md §2.5".
"""
import importlib.util as _ilu
import os as _os
import sys as _sys


def _map_source_kernels() -> None:
    """In a source checkout (not installed), ``kernels/`` sits beside this package: register it
    as ``ldpcompress.kernels``, as the installed package-dir mapping does."""
    here = _os.path.dirname(__file__)
    src = _os.path.join(_os.path.dirname(here), "kernels")
    if "ldpcompress.kernels" in _sys.modules or _os.path.isdir(_os.path.join(here, "kernels")):
        return
    if _ilu.find_spec("ldpcompress.kernels") is None and _os.path.isfile(_os.path.join(src, "__init__.py")):
        spec = _ilu.spec_from_file_location("ldpcompress.kernels", _os.path.join(src, "__init__.py"),
                                            submodule_search_locations=[src])
        if spec is None or spec.loader is None:  # a source file is always loadable
            raise ImportError(f"cannot load the kernels from {src}")
        module = _ilu.module_from_spec(spec)
        _sys.modules["ldpcompress.kernels"] = module
        globals()["kernels"] = module
        spec.loader.exec_module(module)


_map_source_kernels()

from typing import TYPE_CHECKING  # noqa: E402

from .core.lazy import lazy_exports as _lazy_exports  # noqa: E402

# Each public name and the module that defines it, imported when the name is first used: the
# package imports in milliseconds, Numba and SciPy load with the first computation.
_EXPORTS = {
    **dict.fromkeys(["epsilon", "delta", "clone_pair_delta", "AmplificationResult", "Bound"],
                    "accounting.amplification"),
    **dict.fromkeys(["max_eps0", "min_n"], "accounting.inverse"),
    "Accountant": "accounting.accountant",
    **dict.fromkeys(["ShuffledRound", "KRRShuffledRound", "OracleShuffledRound", "Gaussian",
                     "Laplace", "PureDP", "ApproxDP", "PairOfPmfs", "PoissonSampledGaussian",
                     "PoissonSampledLaplace", "ShuffledSGDPass", "SampledShuffledRound",
                     "SampledKRRShuffledRound", "SampledOracleShuffledRound"],
                    "accounting.events"),
    "KRR": "randomizers.krr",
    **dict.fromkeys(["RAPPOR", "OUE"], "randomizers.rappor"),
    "SubsetSelection": "randomizers.subset",
    "OLH": "randomizers.olh",
    "HadamardResponse": "randomizers.hadamard",
    **dict.fromkeys(["PIRappor", "VectorPIRappor", "FieldReports"], "randomizers.pirappor"),
    "PrivUnit2": "randomizers.privunit",
    **dict.fromkeys(["LaplaceScalar", "GaussianScalar"], "randomizers.scalar"),
    "TableRandomizer": "randomizers.table",
    **dict.fromkeys(["LocalRandomizer", "Privacy"], "randomizers.contract"),
    "compress": "compression.sampler",
    "CompressedRandomizer": "compression.compressed",
    "ItemDomain": "core.items",
    **dict.fromkeys(["clip_nonnegative", "project_simplex", "norm_sub"],
                    "estimation.postprocess"),
    "simulation_entropy": "core.entropy",
    "docs_path": "docs",
}
_SUBMODULES = ("accounting", "cli", "compression", "core", "docs", "estimation", "kernels",
               "plots", "randomizers", "scale")
__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, _SUBMODULES)

if TYPE_CHECKING:  # the same names, for type checkers and readers
    from .accounting.accountant import Accountant
    from .accounting.amplification import (AmplificationResult, Bound, clone_pair_delta, delta,
                                           epsilon)
    from .accounting.events import (ApproxDP, Gaussian, KRRShuffledRound, Laplace,
                                    OracleShuffledRound, PairOfPmfs, PoissonSampledGaussian,
                                    PoissonSampledLaplace, PureDP, SampledKRRShuffledRound,
                                    SampledOracleShuffledRound, SampledShuffledRound,
                                    ShuffledRound, ShuffledSGDPass)
    from .accounting.inverse import max_eps0, min_n
    from .compression.compressed import CompressedRandomizer
    from .compression.sampler import compress
    from .core.entropy import simulation_entropy
    from .core.items import ItemDomain
    from .docs import docs_path
    from .estimation.postprocess import clip_nonnegative, norm_sub, project_simplex
    from .randomizers.contract import LocalRandomizer, Privacy
    from .randomizers.hadamard import HadamardResponse
    from .randomizers.krr import KRR
    from .randomizers.olh import OLH
    from .randomizers.pirappor import FieldReports, PIRappor, VectorPIRappor
    from .randomizers.privunit import PrivUnit2
    from .randomizers.rappor import OUE, RAPPOR
    from .randomizers.scalar import GaussianScalar, LaplaceScalar
    from .randomizers.subset import SubsetSelection
    from .randomizers.table import TableRandomizer

__all__ = ["epsilon", "delta", "max_eps0", "min_n", "clone_pair_delta", "AmplificationResult",
           "Bound", "Accountant", "ShuffledRound",
           "KRRShuffledRound", "OracleShuffledRound", "Gaussian", "Laplace", "PureDP",
           "ApproxDP", "PairOfPmfs", "PoissonSampledGaussian", "PoissonSampledLaplace",
           "ShuffledSGDPass", "SampledShuffledRound", "SampledKRRShuffledRound",
           "SampledOracleShuffledRound", "KRR", "RAPPOR", "OUE", "SubsetSelection", "OLH",
           "HadamardResponse", "PIRappor", "VectorPIRappor", "FieldReports", "PrivUnit2",
           "LaplaceScalar", "GaussianScalar", "TableRandomizer", "LocalRandomizer", "Privacy", "compress", "CompressedRandomizer",
           "ItemDomain", "clip_nonnegative", "project_simplex", "norm_sub", "simulation_entropy",
           "docs_path"]
__version__ = "0.3.0"
