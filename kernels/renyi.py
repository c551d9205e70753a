"""Privacy-loss atoms of the generic clone pair binned on a grid (SPEC S2.1, S3.2).

With m = c + 1 and x = A + Delta in [0, m], the pair of S2.1 is
P(c, x) = w_c B_m(x) 2 (p x + (1-p)(m-x)) / m and Q(c, x) = w_c B_m(x) 2 ((1-p) x + p (m-x)) / m,
w_c = Pr[Bin(n-1, q) = c], B_m = Bin(m, 1/2). The pair is symmetric (x <-> m - x swaps P and Q),
so one direction of every divergence suffices.
"""
import math

import numpy as np
from numba import njit

from .binomial import binom_logpmf, binom_window

MASS_SLACK = 1e-9  # bound on the relative error of the log-space mass recurrence


@njit(cache=True)
def clone_pld_grid(n, q, p, h, lo_idx, size, tol, upper):
    """Privacy-loss masses of the S2.1 pair binned on the grid {(lo_idx + i) h : i < size}.

    Each loss log(P/Q) = log((p x + (1-p)(m-x)) / ((1-p) x + p (m-x))) is rounded up
    (``upper``) or down to the grid and its P-mass added to that bin; losses above the grid go
    to the returned infinity mass (upper) or the top bin (lower); losses below go to the bottom
    bin. The windows' left-out P-mass is added to the infinity mass for an upper bound and
    dropped for a lower one. log B_m(x) moves by one log per atom, its accumulated error is
    covered by MASS_SLACK. Returns (pmf, inf_mass).
    """
    pmf = np.zeros(size)
    inf_mass = 0.0
    slack = 1.0 + MASS_SLACK if upper else 1.0 - MASS_SLACK
    lo, hi, out = binom_window(n - 1, q, 1.0 - q, tol)
    if upper:
        inf_mass += out
    for c in range(lo, hi + 1):
        m = c + 1.0
        log_w = binom_logpmf(c, n - 1, q, 1.0 - q)
        xlo, xhi, xout = binom_window(c + 1, 0.5, 0.5, tol)
        if upper:
            inf_mass += math.exp(log_w) * xout * 2.0 * p
        lb = log_w + math.log(2.0 / m) + binom_logpmf(xlo, c + 1, 0.5, 0.5)
        for x in range(xlo, xhi + 1):
            num = p * x + (1.0 - p) * (m - x)
            loss = math.log(num / ((1.0 - p) * x + p * (m - x)))
            # a few ulps of slack in the rounding direction keep the grid loss on the safe side
            if upper:
                j = int(math.ceil((loss + 1e-13 * (1.0 + abs(loss))) / h))
            else:
                j = int(math.floor((loss - 1e-13 * (1.0 + abs(loss))) / h))
            i = j - lo_idx
            mass = math.exp(lb) * num * slack
            lb += math.log((m - x) / (x + 1.0))
            if i >= size:
                if upper:
                    inf_mass += mass
                else:
                    pmf[size - 1] += mass
            elif i < 0:
                pmf[0] += mass
            else:
                pmf[i] += mass
    return pmf, inf_mass
