"""k-RR blanket pair with the blanket count revealed (Balle et al. 2019; docs/theory.md),
blocked over m.

m ~ Bin(n-1, k/Z) others draw from the blanket; s ~ Bin(m, 2/k) of them land on {x1, x1'}.
With T = V1 + V2, the pair given (m, T) is the clone pair with c = T - 1, split
p_eff = (p + rho/2)/(1 + rho), rho = C/(A+B) = cw (m - T + 1)/T, and mass A + B + C.
A block of consecutive m uses its smallest m (largest p_eff, least private) for all its
mass, which is sound because the pair is monotone in p_eff.

Every probability is formed from x = e^-eps0 (Z = e^eps0 + k - 1, so x Z = 1 + (k-1) x): no
complement is formed by subtraction and nothing overflows for large eps0.
"""
import math

import numpy as np

from .decorator import kernel
from .binomial import (
    TINY,
    binom_logpmf,
    binom_window,
    clone_tail_h,
    pmf_rel_err,
    tail_dec_c,
    tail_direct,
    tail_move_t,
    tail_rel_err,
)
from .clones import clone_threshold, pair_coefficients, rr_split
from .numerics import DBL_MIN, UNIT_ROUNDOFF

__all__ = ["krr_probs", "blanket_tables", "blanket_delta"]



@kernel
def krr_probs(k, eps0):
    """(g, gc, r, rc, alpha, beta) of k-RR: blanket weight g = k/Z and 1 - g = (e^eps0-1)/Z,
    r = 2/Z and 1 - r = (e^eps0+k-3)/Z, alpha = e^eps0/Z, beta = 1/Z, all from x = e^-eps0."""
    x = math.exp(-eps0)
    xz = 1.0 + (k - 1.0) * x
    g = k * x / xz
    gc = -math.expm1(-eps0) / xz
    r = 2.0 * x / xz
    rc = (-math.expm1(-eps0) + (k - 2.0) * x) / xz
    return g, gc, r, rc, 1.0 / xz, x / xz


@kernel
def _add_row(row, s_lo, s_hi, m, pm, wk, wkc):
    """row[s - s_lo] += pm * Bin(m, wk)(s) for s in the window (wkc = 1 - wk), each term rounded
    up: pm carries its own error bound already, Bin(m, wk)(start) its log-pmf error bound
    (pmf_rel_err, plus |log pm| ulps for log(pm)), and each ratio-recurrence step 8 ulps.
    Returns the count of terms."""
    top = min(s_hi, m)
    if s_lo > top or pm == 0.0:
        return 0
    if wk >= 1.0:
        if s_lo <= m <= s_hi:
            row[m - s_lo] += pm
        return 1
    start = int(math.floor((m + 1.0) * wk))
    start = min(max(start, s_lo), top)
    lw = binom_logpmf(start, m, wk, wkc)
    lpm = math.log(pm)
    v0 = math.exp(lpm + lw)
    rel0 = pmf_rel_err(start, m, wk, lw) + 2.0 * UNIT_ROUNDOFF * (abs(lpm) + 2.0)
    up = wk / wkc
    v = v0
    s = start
    count = 0
    while s <= top and v >= TINY:
        row[s - s_lo] += v * (1.0 + rel0 + 8.0 * (s - start + 1) * UNIT_ROUNDOFF)
        v *= (m - s) / (s + 1.0) * up
        s += 1
        count += 1
    v = v0 * start / (m - start + 1.0) / up
    s = start - 1
    while s >= s_lo and v >= TINY:
        row[s - s_lo] += v * (1.0 + rel0 + 8.0 * (start - s + 1) * UNIT_ROUNDOFF)
        v *= s / (m - s + 1.0) / up
        s -= 1
        count += 1
    return count


@kernel
def blanket_tables(n, k, eps0, nblocks, tol):
    """Eps-independent part of §2.4(b): block masses M[j, s] = sum_{m in block j} Pr[m] W_m(s).

    Returns (M, m_first, s_lo, outside) where outside >= the mass left out of the m and s
    windows (union bound) plus DBL_MIN-size allowances for underflowed terms.
    """
    g, gc, r, rc, _, _ = krr_probs(k, eps0)
    big_n = n - 1
    m_lo, m_hi, om = binom_window(big_n, g, gc, 0.5 * tol)
    s_lo, s_hi, os_ = binom_window(big_n, r, rc, 0.5 * tol)
    width = m_hi - m_lo + 1
    nb = max(1, min(nblocks, width))
    m_first = np.empty(nb, dtype=np.int64)
    for j in range(nb):
        m_first[j] = m_lo + (j * width) // nb
    tables = np.zeros((nb, s_hi - s_lo + 1))
    wk = 2.0 / k
    wkc = (k - 2.0) / k
    terms = 0
    j = 0
    for m in range(m_lo, m_hi + 1):
        while j + 1 < nb and m >= m_first[j + 1]:
            j += 1
        lpm = binom_logpmf(m, big_n, g, gc)
        pm = math.exp(lpm) * (1.0 + pmf_rel_err(m, big_n, g, lpm))  # rounded up
        terms += _add_row(tables[j], s_lo, s_hi, m, pm, wk, wkc) + 2
    return tables, m_first, s_lo, om + os_ + terms * TINY


@kernel
def blanket_delta(tables, m_first, s_lo, k, eps0, eps, outside):
    """delta(eps) <= sum_blocks sum_T mass_j(T) H(pair(c = T-1, p_eff_j(T))) + outside."""
    _, _, _, _, alpha, beta = krr_probs(k, eps0)
    p, pc = rr_split(eps0)
    # (k-2) beta/(alpha+beta) * (2/k)/((k-2)/k) simplifies to 2 pc
    cw = 0.0 if k == 2 else 2.0 * pc
    ns = tables.shape[1]
    s_hi = s_lo + ns - 1
    total = 0.0
    steps = 0
    for j in range(tables.shape[0]):
        row = tables[j]
        mj = m_first[j]
        big_t = s_hi + 1
        t = np.int64(-1)  # typed: the tail kernels compile once, for int64
        u = 0.0
        pm1 = 0.0
        while big_t >= max(1, s_lo):
            c = big_t - 1
            mass = 0.0
            if s_lo <= big_t - 1 <= s_hi:
                mass += (alpha + beta) * row[big_t - 1 - s_lo]
            if big_t <= s_hi:
                mass += (k - 2.0) * beta * row[big_t - s_lo]
            rho = cw * max(0.0, mj - big_t + 1.0) / big_t
            al, be, theta, _ = pair_coefficients((p + 0.5 * rho) / (1.0 + rho),
                                                 (pc + 0.5 * rho) / (1.0 + rho), eps)
            if al <= 0.0:
                break  # p_eff only falls as T falls: every smaller T is private too
            nt = clone_threshold(c, theta)
            if t < 0:
                u, pm1 = tail_direct(c, nt)
            else:
                u, pm1 = tail_dec_c(c + 1, t, u, pm1)
                u, pm1 = tail_move_t(c, t, u, pm1, nt)
            t = nt
            if mass > 0.0:
                total += mass * clone_tail_h(c, t, u, pm1, al, be)
            steps += 1
            if steps % 4096 == 0:
                u, pm1 = tail_direct(c, t)
            big_t -= 1
    # tail anchors of Bin(T - 1, 1/2) (tail_rel_err), rounding of the walk
    total *= (1.0 + 8.0 * (steps + 16) * UNIT_ROUNDOFF) \
        * (1.0 + tail_rel_err(np.int64(0), s_hi, 0.5))
    return min(1.0, total + outside + steps * DBL_MIN)

