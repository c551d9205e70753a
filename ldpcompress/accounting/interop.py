"""Export to Google's dp_accounting (optional extra ``[dp-accounting]``), docs/theory.md §3.2."""
from __future__ import annotations

from ..core.optional import require
from .pld import PLD

__all__ = ["to_dp_accounting"]



def to_dp_accounting(pld: PLD):
    """A dp_accounting ``PrivacyLossDistribution`` with the same grid arrays (no dicts):
    the first direction becomes ``pmf_remove``, the second (if any) ``pmf_add``. Grids with
    mean-preserving (GLW21) rounding are refused: dp_accounting would read them without the
    concentration correction, i.e. optimistically."""
    if pld.mean_steps:
        raise ValueError("a PLD with mean-preserving rounding cannot be exported: build it with "
                         "mean=False (round up) for dp_accounting")
    pld_pmf, privacy_loss_distribution = require(
        "dp-accounting", "dp_accounting.pld.pld_pmf", "dp_accounting.pld.privacy_loss_distribution")
    pmfs = [pld_pmf.DensePLDPmf(pld.h, int(d.lo), d.pmf.copy(), float(d.inf_mass + d.err),
                                pld.upper) for d in pld.dirs]
    return privacy_loss_distribution.PrivacyLossDistribution(pmfs[0], pmfs[1] if len(pmfs) > 1 else None)
