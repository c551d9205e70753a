"""Planning a deployment (docs/guide.md, "Planning a campaign"): which frequency oracle
(``best_oracle``) and which way of assigning a campaign's rounds (``plan``: public groups,
Poisson participation, random allocation), each at the largest eps0 its own bound certifies
and ranked by the standard error it buys."""
from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports as _lazy_exports

_EXPORTS = {**dict.fromkeys(["best_oracle", "OracleRanking", "OracleChoice"], "oracles"),
            **dict.fromkeys(["estimate_error", "ErrorFigure"], "error"),
            **dict.fromkeys(["plan", "CampaignPlan", "PlanRow"], "campaign")}
__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)  # imported at first use

if TYPE_CHECKING:
    from .error import ErrorFigure, estimate_error
    from .campaign import CampaignPlan, PlanRow, plan
    from .oracles import OracleChoice, OracleRanking, best_oracle

__all__ = ["plan", "CampaignPlan", "PlanRow", "best_oracle", "OracleRanking", "OracleChoice",
           "estimate_error", "ErrorFigure"]
