"""The estimation jobs end to end: ``demo`` (simulated users, a frequency oracle at the largest
eps0 its own shuffled bound allows, shuffling, the histogram) and ``mean`` (PrivUnit2 plain and
compressed against the one-bit baseline), and ``postprocess`` (optional consistency of the
estimated counts: clipping, projection onto the simplex, Norm-Sub). The servers themselves are
the randomizers' estimators (``ldpcompress.randomizers``: ``estimate``, ``variance``,
``intervals``)."""
from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports as _lazy_exports

_EXPORTS = dict.fromkeys(["clip_nonnegative", "project_simplex", "norm_sub"], "postprocess")
__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)  # imported at first use

if TYPE_CHECKING:
    from .postprocess import clip_nonnegative, norm_sub, project_simplex

__all__ = ["clip_nonnegative", "project_simplex", "norm_sub"]
