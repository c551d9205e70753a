"""ldpcompress: the shuffle model of differential privacy.

Accounting for shuffled local randomizers (``ldpcompress.amplification``, SPEC S2), inverse
queries (``ldpcompress.inverse``) and a command line (``ldpcompress ...``).
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
        module = _ilu.module_from_spec(spec)
        _sys.modules["ldpcompress.kernels"] = module
        globals()["kernels"] = module
        spec.loader.exec_module(module)


_map_source_kernels()

from .amplification import (AmplificationResult, Bound, clone_pair_delta, delta,  # noqa: E402
                            epsilon)
from .inverse import max_eps0, min_n  # noqa: E402

__all__ = ["AmplificationResult", "Bound", "clone_pair_delta", "delta", "epsilon", "max_eps0",
           "min_n"]
__version__ = "0.1.0"
