"""Export to Google's dp_accounting (optional extra ``[dp-accounting]``), SPEC S3.2."""
from __future__ import annotations

from .pld import PLD


def _require_dp_accounting():
    try:
        from dp_accounting.pld import pld_pmf, privacy_loss_distribution
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("this needs the optional extra: pip install 'ldpcompress[dp-accounting]'"
                          ) from err
    return pld_pmf, privacy_loss_distribution


def to_dp_accounting(pld: PLD):
    """A dp_accounting ``PrivacyLossDistribution`` with the same grid arrays (no dicts):
    the first direction becomes ``pmf_remove``, the second (if any) ``pmf_add``."""
    pld_pmf, privacy_loss_distribution = _require_dp_accounting()
    pmfs = [pld_pmf.DensePLDPmf(pld.h, int(d.lo), d.pmf.copy(), float(d.inf_mass + d.err),
                                pld.upper) for d in pld.dirs]
    return privacy_loss_distribution.PrivacyLossDistribution(pmfs[0], pmfs[1] if len(pmfs) > 1 else None)
