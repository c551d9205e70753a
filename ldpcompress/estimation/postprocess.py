"""Optional post-processing of estimated counts: consistency with "counts are >= 0 and sum to n".

The unbiased estimates of a frequency oracle can be negative and need not sum to n. Each
function here is a deterministic function of the estimates only, so it costs no privacy
(post-processing), but it trades the estimator's unbiasedness for a smaller error on most
items (Wang et al. 2020, *Locally Differentially Private Frequency Estimation with
Consistency*, NDSS):

* :func:`clip_nonnegative`: max(est, 0) (Wang et al.'s Base-Pos);
* :func:`project_simplex`: the Euclidean projection onto {x >= 0, sum x = total},
  x = max(est - theta, 0) with theta solving sum x = total, by the O(k log k) sort of Held,
  Wolfe and Crowder (1974) / Duchi et al. (ICML 2008). Projecting onto a convex set that holds
  the true counts never increases the L2 error: |x - f| <= |est - f| for every f in it;
* :func:`norm_sub`: Wang et al.'s Norm-Sub (negatives to 0, one shift of the positive
  estimates to reach the total). It equals the projection whenever the positive estimates sum
  to at least the total (the usual case: for k-RR the estimates always sum to n); otherwise it
  adds the missing mass to the positive estimates only.
"""
from __future__ import annotations

import numpy as np

from ..core.validate import nonnegative, shown
from ..randomizers.estimator import check_estimates

__all__ = ["clip_nonnegative", "project_simplex", "norm_sub"]


def _total(total) -> float:
    v = nonnegative(total, "total")
    if not np.isfinite(v):
        raise ValueError(f"total must be finite and >= 0, got {shown(total)}")
    return v


def clip_nonnegative(est) -> np.ndarray:
    """max(est_j, 0) for every item j (the sum is no longer n).

    Parameters
    ----------
    est : array of float
        The unbiased estimates, one per item (finite).
    """
    return np.maximum(check_estimates(est, "est"), 0.0)


def _projection(y: np.ndarray, total: float) -> np.ndarray:
    """argmin |x - y|_2 over {x >= 0, sum x = total}: x = max(y - theta, 0) with theta =
    (sum of the r largest y - total) / r for the largest r whose r-th largest y exceeds it."""
    if total == 0.0:
        return np.zeros_like(y)
    u = np.sort(y)[::-1]
    excess = np.cumsum(u) - total
    r = np.arange(1, y.size + 1)
    rho = int(np.flatnonzero(u - excess / r > 0)[-1])  # r = 1 always qualifies (total > 0)
    theta = excess[rho] / (rho + 1)
    return np.maximum(y - theta, 0.0)


def project_simplex(est, total) -> np.ndarray:
    """The closest point (Euclidean) to est with every entry >= 0 and entries summing to
    ``total`` (n for counts, 1 for frequencies): max(est - theta, 0), O(k log k).

    Parameters
    ----------
    est : array of float
        The unbiased estimates, one per item (finite).
    total : float
        The sum the result must have (finite, >= 0).
    """
    y = check_estimates(est, "est")
    return _projection(y, _total(total))


def norm_sub(est, total) -> np.ndarray:
    """Norm-Sub (Wang et al. 2020): negative estimates become 0 and the positive ones are
    shifted by one common amount (repeating while a shift makes some negative) so the sum is
    ``total``. When the positive estimates sum to total or more this is
    :func:`project_simplex`; when they sum to less, the missing mass is spread evenly over the
    positive estimates (over every item when none is positive).

    Parameters
    ----------
    est : array of float
        The unbiased estimates, one per item (finite).
    total : float
        The sum the result must have (finite, >= 0).
    """
    y = check_estimates(est, "est")
    total = _total(total)
    pos = y > 0
    have = float(np.sum(y[pos]))
    if have >= total:
        return _projection(y, total)
    out = np.maximum(y, 0.0)
    if not pos.any():
        pos = np.ones_like(pos)
    out[pos] += (total - have) / np.count_nonzero(pos)
    return out
