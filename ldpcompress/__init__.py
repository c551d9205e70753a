"""ldpcompress: the shuffle model of differential privacy.

Accounting for shuffled local randomizers (``ldpcompress.amplification``, SPEC S2), inverse
queries (``ldpcompress.inverse``) and a command line (``ldpcompress ...``).
"""
from .amplification import (AmplificationResult, Bound, clone_pair_delta, delta, epsilon)
from .inverse import max_eps0, min_n

__all__ = ["AmplificationResult", "Bound", "clone_pair_delta", "delta", "epsilon", "max_eps0",
           "min_n"]
__version__ = "0.1.0"
