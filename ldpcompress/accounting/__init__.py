"""Questions asked of a randomizer (or of eps0 alone) about shuffled reports: one round
(``amplification``: generic, k-RR and privacy-blanket bounds with exact lower bounds; the
bounds' profiles in ``profiles``, ``blanket``, ``scalar`` and ``table``), inverse queries (``inverse``), composition
over many rounds (``accountant`` over ``pld``, ``rdp`` and ``kov``; shuffled rounds with
participation sampling in ``participation``, campaigns with random allocation in
``allocation`` and ``allocation_central``; its saved state in ``state``), noise addition
(``noise``) and dp_accounting both ways (``interop``).
docs/theory.md §2-§4."""
from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports as _lazy_exports

_EXPORTS = {
    **dict.fromkeys(["epsilon", "delta", "clone_pair_delta", "AmplificationResult", "Bound"],
                    "amplification"),
    **dict.fromkeys(["max_eps0", "min_n"], "inverse"),
    **dict.fromkeys(["Accountant", "AccountingResult"], "accountant"),
    **dict.fromkeys(["ShuffledRound", "KRRShuffledRound", "OracleShuffledRound", "Gaussian",
                     "Laplace", "PureDP", "ApproxDP", "PairOfPmfs", "PoissonSampledGaussian",
                     "PoissonSampledLaplace", "ShuffledSGDPass", "SampledShuffledRound",
                     "SampledKRRShuffledRound", "SampledOracleShuffledRound"], "events"),
    **dict.fromkeys(["AllocatedGaussian", "AllocatedLaplace"], "allocation_central"),
    "AllocatedShuffledRounds": "allocation",
    **dict.fromkeys(["RandomizedResponse"], "pure"),
}
__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)  # imported at first use

if TYPE_CHECKING:
    from .accountant import Accountant, AccountingResult
    from .amplification import AmplificationResult, Bound, clone_pair_delta, delta, epsilon
    from .events import (ApproxDP, Gaussian, KRRShuffledRound, Laplace, OracleShuffledRound,
                         PairOfPmfs, PoissonSampledGaussian, PoissonSampledLaplace, PureDP,
                         SampledKRRShuffledRound, SampledOracleShuffledRound,
                         SampledShuffledRound, ShuffledRound, ShuffledSGDPass)
    from .allocation import AllocatedShuffledRounds
    from .allocation_central import AllocatedGaussian, AllocatedLaplace
    from .pure import RandomizedResponse
    from .inverse import max_eps0, min_n

__all__ = ["epsilon", "delta", "max_eps0", "min_n", "clone_pair_delta", "AmplificationResult",
           "Bound", "Accountant", "AccountingResult", "ShuffledRound", "KRRShuffledRound",
           "OracleShuffledRound", "Gaussian", "Laplace", "PureDP", "ApproxDP", "PairOfPmfs",
           "PoissonSampledGaussian", "PoissonSampledLaplace", "ShuffledSGDPass",
           "SampledShuffledRound", "SampledKRRShuffledRound", "SampledOracleShuffledRound",
           "AllocatedGaussian", "AllocatedLaplace", "AllocatedShuffledRounds", "RandomizedResponse"]
