"""Per-draw privacy-loss laws of scalar randomizers on a lattice (docs/theory.md §2.11).

A scalar randomizer reports x + noise for x in [lo, hi]. The blanket bound and the attack of
§2.11 both need the law of one draw's loss X = (R_lo(Y) - E R_hi(Y)) / base(Y), Y ~ base,
E = e^eps. X is a non-increasing function of Y, so its upper and lower tails are read off the
noise's cdf at one point u_v (X >= v iff Y <= u_v):

    G(v) = Pr[X >= v],  T(v) = E[X; X >= v] = F_lo(u_v) - E F_hi(u_v)      (upper side)
    Gc(v) = Pr[X < v],  Tc(v) = E[X; X < v]                                (lower side)

Units: the noise scale (Laplace b, Gaussian sigma) is 1 and the midpoint of [lo, hi] is 0.

``law_tail(kind, par, e, v, upper)`` gives (mass, moment) of either tail, each side in its own
accurate form (no 1 - small). The lattice laws (step h) are then

* ``split_cells`` (upper bounds): every value x moved to its two neighbouring lattice points
  with probabilities keeping its mean (X <=_cx the lattice law: E[X' | X] = X). Per cell
  [k h, (k+1) h) this needs only the cell's mass and first moment.
* ``lump_cells`` (lower bounds): the law cut into consecutive pieces whose means lie exactly on
  lattice points (a conditional expectation: the lattice law <=_cx X).
"""
import math

import numpy as np

from .decorator import kernel
from .numerics import LOG_UNDERFLOW, UNIT_ROUNDOFF

__all__ = ["LAPLACE", "GAUSS_BLANKET", "GAUSS_ATTACK", "ATOMS", "LAPLACE_EDGE", "GAUSS_EDGE",
           "law_range", "law_tail",
           "end_atoms", "snap_width", "split_cells", "lump_cells", "clip_moments",
           "log_mgf", "tilt", "power_spectrum"]

LAPLACE = 0        # par = (a,): lo = -a, hi = a, base = Lap(0, 1) (the blanket law and R_mid)
GAUSS_BLANKET = 1  # par = (d,): lo = -d/2, hi = d/2, base = the blanket law of N(., 1)
GAUSS_ATTACK = 2   # par = (d,): base = R_mid = N(0, 1) (others at the midpoint)
ATOMS = 3          # par = (p_0.., r1_0.., r2_0..): a finite law, X = r1 - E r2 w.p. p
LAPLACE_EDGE = 4   # par = (a, s): base = R_lo (others at lo), r = R_hi/R_lo; s = 1: X = r - E
GAUSS_EDGE = 5     # (user 1 at hi vs lo), s = 0: X = 1 - E r (user 1 at lo vs hi); (d, s)

_SQRT2 = math.sqrt(2.0)


@kernel
def _phi_lo(x):
    """Phi(x) = Pr[N(0,1) <= x], accurate in the lower tail."""
    return 0.5 * math.erfc(-x / _SQRT2)


@kernel
def _phi_hi(x):
    """1 - Phi(x), accurate in the upper tail."""
    return 0.5 * math.erfc(x / _SQRT2)


@kernel
def _gauss_gamma(d):
    return math.erfc(d / (2.0 * _SQRT2))  # 2 Phi(-d/2)


@kernel
def law_range(kind, par, e):
    """(min, max, mean) of X: -inf/inf for unbounded sides."""
    if kind == LAPLACE:
        a = par[0]
        ea, e_a = math.exp(-a), math.exp(a)
        return ea - e * e_a, e_a - e * ea, 1.0 - e
    if kind == ATOMS:
        m = par.size // 3
        lo, hi, mean = math.inf, -math.inf, 0.0
        for i in range(m):
            if par[i] > 0.0:
                x = par[m + i] - e * par[2 * m + i]
                lo, hi = min(lo, x), max(hi, x)
                mean += par[i] * x
        return lo, hi, mean
    if kind == LAPLACE_EDGE:
        r_lo, r_hi = math.exp(-2.0 * par[0]), math.exp(2.0 * par[0])
        if par[1] == 1.0:
            return r_lo - e, r_hi - e, 1.0 - e
        return 1.0 - e * r_hi, 1.0 - e * r_lo, 1.0 - e
    if kind == GAUSS_EDGE:
        return (-e, math.inf, 1.0 - e) if par[1] == 1.0 else (-math.inf, 1.0, 1.0 - e)
    return -math.inf, math.inf, 1.0 - e


@kernel
def _edge_above(kind, par, t):
    """(R_lo mass, R_hi mass) of {Y > t} (t = -inf: everything; t = inf: nothing)."""
    if t == math.inf:
        return 0.0, 0.0
    if t == -math.inf:
        return 1.0, 1.0
    if kind == LAPLACE_EDGE:
        a = par[0]
        lo = 0.5 * math.exp(-(t + a)) if t >= -a else 1.0 - 0.5 * math.exp(t + a)
        hi = 0.5 * math.exp(-(t - a)) if t >= a else 1.0 - 0.5 * math.exp(t - a)
        return lo, hi
    d = par[0]
    return _phi_hi(t + 0.5 * d), _phi_hi(t - 0.5 * d)


@kernel
def _edge_threshold(kind, par, rho, strict):
    """t with {r >= rho} = {Y >= t} (strict: {r > rho} = {Y > t}), up to null sets;
    r = R_hi/R_lo is non-decreasing in Y (Laplace: e^(2 clip(Y, -a, a)), atoms at both ends;
    Gaussian: e^(d Y))."""
    if kind == GAUSS_EDGE:
        return -math.inf if rho <= 0.0 else math.log(rho) / par[0]
    a = par[0]
    if rho <= 0.0:
        return -math.inf
    t = 0.5 * math.log(rho)
    if t < -a or (t == -a and not strict):
        return -math.inf
    if t > a or (t == a and strict):
        return math.inf
    return t


@kernel
def _edge_tail(kind, par, e, v, upper):
    """law_tail of the edge attacks: X = r - E (s = 1) or 1 - E r (s = 0), Y ~ R_lo; the
    moment of a set S is E[X; S] = alpha R_lo(S) + beta R_hi(S) (r R_lo = R_hi)."""
    if par[1] == 1.0:  # X >= v iff r >= v + E: the set {Y >= t}
        lo_m, hi_m = _edge_above(kind, par, _edge_threshold(kind, par, v + e, False))
        if upper:
            return lo_m, hi_m - e * lo_m
        return 1.0 - lo_m, (1.0 - hi_m) - e * (1.0 - lo_m)
    # X < v iff r > (1 - v)/E: the set {Y > t}
    lo_m, hi_m = _edge_above(kind, par, _edge_threshold(kind, par, (1.0 - v) / e, True))
    if upper:
        return 1.0 - lo_m, (1.0 - lo_m) - e * (1.0 - hi_m)
    return lo_m, lo_m - e * hi_m


@kernel
def end_atoms(kind, par, e):
    """Laplace's losses have an atom at each end: (x_min, its mass, x_max, its mass)."""
    x_min, x_max, _ = law_range(kind, par, e)
    a = par[0]
    if kind == LAPLACE:
        return x_min, 0.5 * math.exp(-a), x_max, 0.5 * math.exp(-a)
    if par[1] == 1.0:  # X = r - E, Y ~ R_lo: r = e^(-2a) on Y <= -a, e^(2a) on Y >= a
        return x_min, 0.5, x_max, 0.5 * math.exp(-2.0 * a)
    return x_min, 0.5 * math.exp(-2.0 * a), x_max, 0.5


@kernel
def snap_width(kind, par, e):
    """Laplace's tails within this distance of an end are read as exactly at the end (the
    atom's side is decided without rounding; the continuous mass moved is within it)."""
    x_min, x_max, _ = law_range(kind, par, e)
    return 1e-12 * (abs(x_min) + abs(x_max) + 1.0)


@kernel
def law_tail(kind, par, e, v, upper):
    """(mass, moment) of X >= v (upper) or X < v (not upper); see the module docstring."""
    if kind == LAPLACE or kind == LAPLACE_EDGE:
        x_min, m_min, x_max, m_max = end_atoms(kind, par, e)
        tiny = snap_width(kind, par, e)
        mean = 1.0 - e
        if v <= x_min + tiny:
            return (1.0, mean) if upper else (0.0, 0.0)
        if v > x_max + tiny:
            return (0.0, 0.0) if upper else (1.0, mean)
        if v > x_max - tiny:
            return (m_max, m_max * x_max) if upper else (1.0 - m_max, mean - m_max * x_max)
    if kind == LAPLACE_EDGE or kind == GAUSS_EDGE:
        return _edge_tail(kind, par, e, v, upper)
    if kind == LAPLACE:
        a = par[0]
        ea = math.exp(-a)
        x_max, x_mid, x_min = math.exp(a) - e * ea, ea * (1.0 - e), ea - e * math.exp(a)
        if v > x_max:
            return (0.0, 0.0) if upper else (1.0, 1.0 - e)
        if v <= x_min:
            return (1.0, 1.0 - e) if upper else (0.0, 0.0)
        if v > x_mid:  # u_v in [-a, 0)
            u = -0.5 * (a + math.log(v + e * ea))
            u = min(max(u, -a), 0.0)
        else:          # u_v in [0, a]
            u = 0.5 * (a + math.log((ea - v) / e))
            u = min(max(u, 0.0), a)
        lo_tail = 0.5 * math.exp(-(u + a))  # Pr_lo[Y > u], u >= -a
        hi_cdf = 0.5 * math.exp(u - a)      # Pr_hi[Y <= u], u <= a
        if upper:
            g = 0.5 * math.exp(u) if u <= 0.0 else 1.0 - 0.5 * math.exp(-u)
            return g, (1.0 - lo_tail) - e * hi_cdf
        g = 1.0 - 0.5 * math.exp(u) if u <= 0.0 else 0.5 * math.exp(-u)
        return g, lo_tail - e * (1.0 - hi_cdf)
    if kind == GAUSS_BLANKET:
        d = par[0]
        gam = _gauss_gamma(d)
        x0 = gam * (1.0 - e)
        if v > x0:
            u = -math.log(v / gam + e) / d  # < 0: Y <= u is the upper tail of X
            up_m = _phi_lo(u - 0.5 * d) / gam
            up_t = _phi_lo(u + 0.5 * d) - e * _phi_lo(u - 0.5 * d)
            if upper:
                return up_m, up_t
            return 1.0 - up_m, (1.0 - e) - up_t
        u = math.log((1.0 - v / gam) / e) / d  # >= 0: Y > u is the lower tail of X
        lo_m = _phi_hi(u + 0.5 * d) / gam
        lo_t = _phi_hi(u + 0.5 * d) - e * _phi_hi(u - 0.5 * d)
        if upper:
            return 1.0 - lo_m, (1.0 - e) - lo_t
        return lo_m, lo_t
    if kind == GAUSS_ATTACK:
        d = par[0]
        c = v * math.exp(d * d / 8.0)
        root = math.sqrt(c * c + 4.0 * e)
        z = 2.0 / (c + root) if c >= 0.0 else (root - c) / (2.0 * e)  # e^(d u / 2)
        u = 2.0 * math.log(z) / d
        if u <= 0.0:
            up_m = _phi_lo(u)
            up_t = _phi_lo(u + 0.5 * d) - e * _phi_lo(u - 0.5 * d)
            if upper:
                return up_m, up_t
            return 1.0 - up_m, (1.0 - e) - up_t
        lo_m = _phi_hi(u)
        lo_t = _phi_hi(u + 0.5 * d) - e * _phi_hi(u - 0.5 * d)
        if upper:
            return 1.0 - lo_m, (1.0 - e) - lo_t
        return lo_m, lo_t
    # ATOMS
    m = par.size // 3
    g, t = 0.0, 0.0
    for i in range(m):
        x = par[m + i] - e * par[2 * m + i]
        if (x >= v) == upper:
            g += par[i]
            t += par[i] * x
    return g, t


@kernel
def _cell(kind, par, e, lo_v, hi_v, split_v):
    """(mass, moment) of X in [lo_v, hi_v), from the tail on the side of split_v."""
    if lo_v >= split_v:
        g1, t1 = law_tail(kind, par, e, lo_v, True)
        g2, t2 = law_tail(kind, par, e, hi_v, True)
        return max(g1 - g2, 0.0), t1 - t2
    g1, t1 = law_tail(kind, par, e, hi_v, False)
    g2, t2 = law_tail(kind, par, e, lo_v, False)
    return max(g1 - g2, 0.0), t1 - t2


@kernel
def split_cells(kind, par, e, h, k_lo, k_hi, split_v):
    """Mean-preserving split of X onto the lattice points k h, k in [k_lo, k_hi + 1]: the law
    of X' with E[X' | X] = X for X in [k_lo h, (k_hi + 1) h). X outside that range must have
    been handled by the caller (clipped, or proven absent). Returns (pmf, moment error bound):
    each cell's moment is clamped into [k h q, (k+1) h q]; the bound covers rounding of q, t."""
    size = k_hi - k_lo + 2
    p = np.zeros(size)
    err = 0.0
    for j in range(k_hi - k_lo + 1):
        k = k_lo + j
        lo_v, hi_v = k * h, (k + 1) * h
        q, t = _cell(kind, par, e, lo_v, hi_v, split_v)
        if q <= 0.0:
            continue
        err += 4.0 * 2.0 ** -52 * (abs(t) + q * max(abs(lo_v), abs(hi_v)) + 1e-300)
        t = min(max(t, lo_v * q), hi_v * q)
        up = (t - lo_v * q) / h            # mass sent to (k + 1) h
        up = min(max(up, 0.0), q)
        p[j] += q - up
        p[j + 1] += up
    return p, err


@kernel
def _sweep(kind, par, e, h, c0, k_lo, sub, j_first, j_last, down, split_v, p, x_cap):
    """Lump the cells j_first..j_last (increasing, or decreasing when ``down``) into p; returns
    the last open lump (mass, moment in lattice units). See lump_cells."""
    w = h / sub
    size = p.size
    sgn = -1.0 if down else 1.0
    acc_m, acc_t = 0.0, 0.0
    last_q, last_x = 0.0, 0.0  # what the most recent cell put into the open lump
    count = j_last - j_first + 1
    for jj in range(count):
        j = j_last - jj if down else j_first + jj
        lo_v = c0 + k_lo * h + j * w  # every boundary computed from its own index: adjacent
        hi_v = c0 + k_lo * h + (j + 1) * w  # cells share it exactly (an atom is never lost)
        lo_v, hi_v = min(lo_v, x_cap), min(hi_v, x_cap)  # X >= x_cap is the caller's
        if lo_v >= hi_v:
            continue
        q, t = _cell(kind, par, e, lo_v, hi_v, split_v)
        if q <= 0.0:
            continue
        x = (min(max(t / q, lo_v), hi_v) - c0) / h  # conditional mean, lattice units
        last_q, last_x = 0.0, x
        while q > 0.0:
            if acc_m == 0.0:
                acc_m, acc_t = q, q * x
                last_q = q
                q = 0.0
                continue
            mean = acc_t / acc_m
            # the next lattice point at or beyond the lump's mean in the sweep's direction
            target = math.floor(mean + 1e-9) if down else math.ceil(mean - 1e-9)
            if sgn * (x - target) <= 0.0:
                acc_m += q
                acc_t += q * x
                last_q += q
                q = 0.0
                continue
            need = (target * acc_m - acc_t) / (x - target)  # mass of x bringing the mean there
            take = min(max(need, 0.0), q)
            acc_m += take
            acc_t += take * x
            last_q += take
            q -= take
            if take == need or q > 0.0:
                idx = min(max(int(target) - k_lo, 0), size - 1)
                p[idx] += acc_m
                acc_m, acc_t = 0.0, 0.0
                last_q = 0.0
    return acc_m, acc_t, last_q, last_x


@kernel
def lump_cells(kind, par, e, h, c0, k_lo, k_hi, split_v, sub, k_mid, x_cap):
    """A lattice law below X in the convex order, on the points c0 + k h, k in [k_lo, k_hi].

    X restricted to [c0 + k_lo h, min(x_cap, c0 + (k_hi + 1) h)) is cut into cells of width h / sub, each
    replaced by its conditional mean (a conditional expectation). The atoms are grouped into
    consecutive lumps (an atom may be shared by two) whose means lie exactly on lattice
    points: sweeping up from the bottom to c0 + k_mid h, each lump closes at the first lattice
    point at or above its mean; sweeping down from the top, at or below. The two lumps left
    open at k_mid merge into one, rounded down (a lower value: still below X in the icx
    order), except that a last cell whose mean is a lattice point (an end atom placed there,
    as Laplace's are) keeps its own lump. Pass k_mid beyond an end to sweep one way only, so
    that the rounded lump lies in a far tail. Mass outside the range is the caller's. Returns
    the pmf on [k_lo, k_hi]."""
    size = k_hi - k_lo + 1
    p = np.zeros(size)
    j_mid = min(max((k_mid - k_lo) * sub, 0), size * sub)
    m1, t1, q1, x1 = _sweep(kind, par, e, h, c0, k_lo, sub, 0, j_mid - 1, False, split_v, p,
                            x_cap)
    m2, t2, q2, x2 = _sweep(kind, par, e, h, c0, k_lo, sub, j_mid, size * sub - 1, True,
                            split_v, p, x_cap)
    for q, x in ((q1, x1), (q2, x2)):
        r = round(x)
        if q > 0.0 and abs(x - r) <= 1e-9:  # on a lattice point: its own exact lump
            p[min(max(int(r) - k_lo, 0), size - 1)] += q
            if q1 == q and x1 == x:
                m1, t1 = m1 - q, t1 - q * x
            else:
                m2, t2 = m2 - q, t2 - q * x
    acc_m, acc_t = max(m1 + m2, 0.0), t1 + t2
    if acc_m > 0.0:  # rounded down; a mean within 1e-9 steps below a point counts as on it
        idx = min(max(int(math.floor(acc_t / acc_m + 1e-9)) - k_lo, 0), size - 1)
        p[idx] += acc_m
    return p


@kernel
def clip_moments(kind, par, e, lo_v, hi_v):
    """(mean, second moment) of min(max(X, lo_v), hi_v), lo_v <= 0 <= hi_v, estimated: the
    clipped masses at the ends, and between them cells growing by 5% outward from 0, from
    1e-9 (1 + E) (the losses' own scale: X = r1 - E r2 with density ratios r of order 1), each
    cell's E[X^2] read as its first moment times the geometric middle of its ends (within 5%;
    the first cell's at its far end). Used to choose lattice steps and clip levels, never in a
    bound."""
    g_lo, _ = law_tail(kind, par, e, lo_v, False)  # X < lo_v: raised to lo_v
    g_hi, _ = law_tail(kind, par, e, hi_v, True)   # X >= hi_v: lowered to hi_v
    m1 = g_lo * lo_v + g_hi * hi_v
    m2 = g_lo * lo_v * lo_v + g_hi * hi_v * hi_v
    s0 = 1e-9 * (1.0 + e)
    if not hi_v - lo_v > 0.0:
        return m1, m2
    for side in range(2):
        end = hi_v if side == 0 else -lo_v
        a, b = 0.0, min(s0, end)
        while a < end:
            if side == 0:
                q, t = _cell(kind, par, e, a, b, 0.0)
            else:
                q, t = _cell(kind, par, e, -b, -a, 0.0)
            m1 += t
            m2 += abs(t) * (math.sqrt(a * b) if a > 0.0 else b)
            a, b = b, min(b * 1.05, end)
    return m1, max(m2, m1 * m1)


@kernel
def log_mgf(p, ks, t):
    """log sum_i p_i e^(t k_i), shifted by the largest exponent; the sum of the positive terms
    compensated (Neumaier: relative error 2u + O(size u^2), within the log2(size) u that
    accounting/lattice_sum.py allows for it)."""
    top = -math.inf
    for i in range(p.size):
        if p[i] > 0.0:
            top = max(top, t * ks[i])
    total, comp = 0.0, 0.0
    for i in range(p.size):
        if p[i] > 0.0:
            x = p[i] * math.exp(t * ks[i] - top)
            s = total + x
            comp += (total - s) + x if abs(total) >= abs(x) else (x - s) + total
            total = s
    return top + math.log(total + comp)


@kernel
def _tilted_moments(p, ks, t):
    """(mean, variance) of k under p e^(t k), normalised."""
    top = -math.inf
    for i in range(p.size):
        if p[i] > 0.0:
            top = max(top, t * ks[i])
    s0, s1, s2 = 0.0, 0.0, 0.0
    for i in range(p.size):
        if p[i] > 0.0:
            w = p[i] * math.exp(t * ks[i] - top)
            s0 += w
            s1 += w * ks[i]
            s2 += w * ks[i] * ks[i]
    m = s1 / s0
    return m, max(s2 / s0 - m * m, 0.0)


@kernel
def tilt(p, ks):
    """theta >= 0 with sum p k e^(theta k) = 0 (mean 0 after tilting): inf when no k > 0 has
    mass, 0 when the mean is >= 0; else Newton steps on the tilted mean (increasing in theta,
    slope the tilted variance) kept inside a bracket that bisection shrinks when they leave
    it. Any theta is sound in accounting/lattice_sum.py (the tilt only centres the window)."""
    m0, _ = _tilted_moments(p, ks, 0.0)
    if m0 >= 0.0:
        return 0.0
    k_top = -math.inf
    for i in range(p.size):
        if p[i] > 0.0:
            k_top = max(k_top, ks[i])
    if k_top <= 0.0:
        return math.inf
    lo, hi = 0.0, 1.0 / max(k_top, 1.0)
    for _ in range(200):
        m, _ = _tilted_moments(p, ks, hi)
        if m > 0.0:
            break
        lo, hi = hi, 2.0 * hi
    x = 0.5 * (lo + hi)
    for _ in range(100):
        m, v = _tilted_moments(p, ks, x)
        if m > 0.0:
            hi = x
        else:
            lo = x
        if hi - lo <= 1e-12 * hi or abs(m) <= 1e-12 * (1.0 + math.sqrt(v)):
            break
        step = x - m / v if v > 0.0 else 0.5 * (lo + hi)
        x = step if lo < step < hi else 0.5 * (lo + hi)
    return x


@kernel
def power_spectrum(coef, n, e1, size):
    """coef^n for the half spectrum of a real FFT of ``size`` points, with a bound on the
    error of every entry of the inverse transform (docs/theory.md §2.11): per frequency
    |a^n - b^n| <= n |a - b| max(|a|, |b|)^(n-1) with |a - b| <= e1, plus the rounding of the
    power itself (exp/log and the angle n arg(a)), summed with the Hermitian weights / size,
    plus the inverse transform's own rounding. Returns (powered, entry error bound)."""
    out = np.zeros(coef.size, dtype=np.complex128)
    u = UNIT_ROUNDOFF
    err_sum, mod_sum = 0.0, 0.0
    last = coef.size - 1
    for j in range(coef.size):
        w = 1.0 if (j == 0 or (j == last and size % 2 == 0)) else 2.0
        c = coef[j]
        mod = abs(c)
        top = min(mod + e1, 1.0)
        if top <= 0.0:
            continue
        lt = math.log(top)
        if (n - 1) * lt < -LOG_UNDERFLOW:  # every term below is 0 in double precision
            continue
        e_prop = n * e1 * math.exp((n - 1) * lt)
        e_pow = 0.0
        if mod > 0.0:
            lm = math.log(mod)
            r = math.exp(n * lm)
            ang = n * math.atan2(c.imag, c.real)
            out[j] = complex(r * math.cos(ang), r * math.sin(ang))
            e_pow = r * u * (n * (math.pi + abs(lm)) + 8.0)
        err_sum += w * (e_prop + e_pow)
        mod_sum += w * (abs(out[j]) + e_prop + e_pow)
    log2n = math.log(size) / math.log(2.0)
    return out, (err_sum + 5.0 * u * log2n * mod_sum) / size
