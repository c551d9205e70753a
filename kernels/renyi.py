"""Privacy-loss atoms of the generic clone pair binned on a grid (docs/theory.md §2.1, §3.2).

With m = c + 1 and x = A + Delta in [0, m], the pair of §2.1 is
P(c, x) = w_c B_m(x) 2 (p x + (1-p)(m-x)) / m and Q(c, x) = w_c B_m(x) 2 ((1-p) x + p (m-x)) / m,
w_c = Pr[Bin(n-1, q) = c], B_m = Bin(m, 1/2). The pair is symmetric (x <-> m - x swaps P and Q),
so one direction of every divergence suffices. Complements are passed in (qc = 1 - q,
pc = 1 - p, each computed accurately by the caller), never formed by subtraction: at large eps0
1 - p rounds to a different number and the largest loss log(p/pc) = eps0 would be understated.
"""
import math

import numpy as np

from .decorator import kernel
from .binomial import binom_logpmf, binom_window

__all__ = ["MASS_SLACK", "LOSS_SLACK", "clone_pld_grid"]


MASS_SLACK = 1e-9  # bound on the relative error of the log-space mass recurrence
LOSS_SLACK = 1e-13  # bound on the relative error of a computed loss (a few ulps, generously)

ROUND_DOWN, ROUND_UP, ROUND_MEAN = 0, 1, 2


@kernel
def clone_pld_grid(n, q, qc, p, pc, h, lo_idx, size, tol, mode):
    """Privacy-loss masses of the §2.1 pair binned on the grid {(lo_idx + i) h : i < size}.

    Each loss log(P/Q) = log((p x + pc (m-x)) / (pc x + p (m-x))) is rounded up (mode
    ROUND_UP), down (ROUND_DOWN) or, for ROUND_MEAN, split between its two neighbouring grid
    points with weights that preserve its mean (Gopi-Lee-Wutschitz 2021, randomized rounding);
    its P-mass goes to that bin. Losses above the grid go to the returned infinity mass (up,
    mean) or the top bin (down); losses below go to the bottom bin. The windows' left-out
    P-mass is added to the infinity mass except when rounding down, where it is dropped.
    log B_m(x) moves by one log per atom; its accumulated error is covered by MASS_SLACK.
    Returns (pmf, inf_mass).
    """
    pmf = np.zeros(size)
    inf_mass = 0.0
    down = mode == ROUND_DOWN
    slack = 1.0 - MASS_SLACK if down else 1.0 + MASS_SLACK
    lo, hi, out = binom_window(n - 1, q, qc, tol)
    if not down:
        inf_mass += out
    for c in range(lo, hi + 1):
        m = c + 1.0
        log_w = binom_logpmf(c, n - 1, q, qc)
        xlo, xhi, xout = binom_window(c + 1, 0.5, 0.5, tol)
        if not down:
            inf_mass += math.exp(log_w) * xout * 2.0 * p
        lb = log_w + math.log(2.0 / m) + binom_logpmf(xlo, c + 1, 0.5, 0.5)
        for x in range(xlo, xhi + 1):
            num = p * x + pc * (m - x)
            loss = math.log(num / (pc * x + p * (m - x)))
            mass = math.exp(lb) * num * slack
            lb += math.log((m - x) / (x + 1.0))
            # a few ulps of slack in the rounding direction keep the grid loss on the safe side
            if mode == ROUND_UP:
                j = int(math.ceil((loss + LOSS_SLACK * (1.0 + abs(loss))) / h))
                frac = 0.0
            elif down:
                j = int(math.floor((loss - LOSS_SLACK * (1.0 + abs(loss))) / h))
                frac = 0.0
            else:
                j = int(math.floor(loss / h))
                frac = min(max(loss / h - j, 0.0), 1.0)  # weight of the upper neighbour
            _add(pmf, j - lo_idx, mass * (1.0 - frac), size, down)
            if frac > 0.0:
                _add(pmf, j + 1 - lo_idx, mass * frac, size, down)
            if j - lo_idx >= size and not down:
                inf_mass += mass * (1.0 - frac)
            if frac > 0.0 and j + 1 - lo_idx >= size and not down:
                inf_mass += mass * frac
    return pmf, inf_mass


@kernel
def _add(pmf, i, mass, size, down):
    """Add mass to bin i, clamping below to bin 0; above the grid, to the top bin when
    rounding down (the caller sends it to the infinity atom otherwise)."""
    if i >= size:
        if down:
            pmf[size - 1] += mass
    elif i < 0:
        pmf[0] += mass
    else:
        pmf[i] += mass
