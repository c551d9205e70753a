"""The balanced lower grid of one direction's privacy loss (docs/theory.md §3.2): each loss cell
(l_k, l_(k+1)] is sent partly down to the grid point l_k and partly up to l_(k+1), top down,
so that every grid point receives at least as much loss excess as deficit: the grid pair is a
post-processing of the true pair with every loss rounded down to its grid point.

Inputs are bounds on, per cell k, its probability P_k (lower), its excess at the lower end
A_k = P_k - e^(l_k) Q_k (lower) and its deficit at the upper end B_k = e^(l_(k+1)) Q_k - P_k
(upper). Grid point l_(k+1) takes the down-part d_(k+1) of cell k+1 and the up-part
u_k = min(1, d_(k+1) A_(k+1) / B_k) of cell k; its loss is >= l_(k+1) exactly when
u_k B_k <= d_(k+1) A_(k+1)."""
import numpy as np

from .decorator import kernel

__all__ = ["balanced_masses"]

_SHRINK = 1.0 - 2.0 ** -49  # 4 ulps of 1: u_k rounded down past the quotient's rounding


@kernel
def balanced_masses(p_cell, a_cell, b_cell):
    """(masses, up): masses at the grid points l_0..l_K of K cells (length K + 1) and the
    fractions u_j (length K). Cell j sends the fraction
    d_j = 1 - u_j of its mass p_j down to point j and u_j up to point j + 1. The top cell goes
    down whole (an up part alone would sit above its loss); below it, top down,
    u_j = min(1, d_(j+1) A_(j+1) / B_j), rounded down."""
    k = p_cell.size
    out = np.zeros(k + 1)
    ups = np.zeros(k)
    down = 1.0  # d_(j+1): the top cell's whole mass goes down
    for j in range(k - 1, -1, -1):
        u = 0.0
        if j < k - 1:
            a = a_cell[j + 1]
            b = b_cell[j]
            if a > 0.0 and down > 0.0:
                u = 1.0 if b <= 0.0 else min(1.0, down * a / b * _SHRINK)
        ups[j] = u
        out[j + 1] += u * p_cell[j]
        down = 1.0 - u
        out[j] += down * p_cell[j]
    return out, ups
