"""Binomial log-pmfs, rigorous windows and half-binomial tails (docs/theory.md §2.1).

Everything here is a pure numeric Numba function of scalars.

* ``binom_logpmf`` uses Loader's saddle-point form (stirlerr + bd0), accurate to a few ulps
  even at N = 1e9 where ``lgamma`` differences lose six digits.
* ``binom_window`` returns a window [lo, hi] of Bin(N, p) and a *rigorous upper bound* on the
  mass outside it (geometric bound on the ratio of consecutive pmfs), so callers can add that
  mass to delta.
* The ``tail_*`` functions keep the state (U, pm1) = (Pr[Bin(c,1/2) >= t], Pr[Bin(c,1/2) = t-1])
  and move it by O(1) recurrences when c or t change by one; ``tail_direct`` re-anchors it.
"""
import math

from .decorator import kernel
from .numerics import LOG_DBL_TRUE_MIN, UNIT_ROUNDOFF

__all__ = ["LOG_2PI", "TINY", "stirlerr", "bd0", "binom_logpmf", "pmf_anchor",
           "pmf_rel_err",
           "tail_rel_err", "binom_window", "half_pmf",
           "tail_direct", "tail_dec_c", "tail_dec_t", "tail_inc_t", "tail_move_t", "clone_tail_h",
           "upper_tail_bound", "lower_tail_bound"]


LOG_2PI = math.log(2.0 * math.pi)
TINY = 1e-305  # below this (near denormals) a recurrence value is re-anchored from the log-pmf

_STIRLERR_SMALL = (
    0.0, 0.08106146679532726, 0.0413406959554093, 0.02767792568499834,
    0.020790672103765093, 0.016644691189821193, 0.013876128823070748,
    0.01189670994589177, 0.010411265261972096, 0.009255462182712733,
    0.00833056343336287, 0.007573675487951841, 0.00694284010720953,
    0.006408994188004207, 0.0059513701127588475, 0.005554733551962801,
)


@kernel
def stirlerr(n):
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for integer n >= 0 (table, then the Stirling series)."""
    if n <= 15.0:
        return _STIRLERR_SMALL[int(n)]
    nn = n * n
    s0, s1, s2, s3, s4 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188
    if n > 500.0:
        return (s0 - s1 / nn) / n
    if n > 80.0:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35.0:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


@kernel
def bd0(x, m):
    """x log(x/m) + m - x, without cancellation when x is close to m."""
    if abs(x - m) < 0.1 * (x + m):
        v = (x - m) / (x + m)
        s = (x - m) * v
        ej = 2.0 * x * v
        v2 = v * v
        j = 1
        while j < 1000:
            ej *= v2
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
            j += 1
        return s
    return x * math.log(x / m) + m - x


@kernel
def binom_logpmf(x, n, p, q):
    """log Pr[Bin(n, p) = x] with q = 1 - p passed separately (so tiny q keeps its digits)."""
    if x < 0 or x > n:
        return -math.inf
    if p == 0.0:
        return 0.0 if x == 0 else -math.inf
    if q == 0.0:
        return 0.0 if x == n else -math.inf
    # x = 0 or n: n log(q) or n log(p); the larger of p, q is written as log1p(-smaller), so a q
    # near 1 (whose float carries few digits of 1 - q) does not cost n ulps of the result
    if x == 0:
        return n * math.log1p(-p) if q > 0.5 else n * math.log(q)
    if x == n:
        return n * math.log1p(-q) if p > 0.5 else n * math.log(p)
    fx = float(x)
    fn = float(n)
    lc = stirlerr(fn) - stirlerr(fx) - stirlerr(fn - fx) - bd0(fx, fn * p) - bd0(fn - fx, fn * q)
    lf = LOG_2PI + math.log(fx) + math.log1p(-fx / fn)
    return lc - 0.5 * lf


@kernel
def pmf_rel_err(x, n, p, lp):
    """Bound on the relative error of exp(lp), lp = binom_logpmf(x, n, p, q), against the exact
    Pr[Bin(n, p*) = x] when p and q are within 8 ulps of p* and 1 - p* (every caller forms them
    with a few roundings from e^-eps0 and the like).

    The computed log-pmf is log C(n,x) + x log p + (n-x) log q + n(1 - p - q) + rounding, so a
    relative change d of p (of q) moves it by d |x - n p| (d |n - x - n q|), both at most
    10 u (|x - n p| + 4) for n <= 2^53 (the x = 0 and x = n branches use log1p of the smaller
    probability, which keeps the same sensitivity). The evaluation itself (stirlerr, bd0 with at
    most a 20-fold cancellation outside its series range, the log terms) errs by less than
    128 u (|lp| + log(1 + n) + 4). exp adds one ulp. 0 when the value is exact (0 or 1).
    """
    if not (lp > -math.inf) or p == 0.0 or p == 1.0 or n == 0:
        return 0.0
    err = 128.0 * (abs(lp) + math.log1p(n) + 4.0)
    if p != 0.5:  # p = q = 1/2 are exact: no input error to propagate
        err += 32.0 * (abs(x - n * p) + 4.0)
    return math.expm1(UNIT_ROUNDOFF * err) + 2.0 * UNIT_ROUNDOFF





@kernel(inline="always")
def pmf_anchor(x, n, p, q):
    """(Pr[Bin(n, p) = x], bound on its relative error): the anchor every recurrence over a
    binomial window starts from, and restarts from when the recurrence underflows."""
    lp = binom_logpmf(x, n, p, q)
    return math.exp(lp), pmf_rel_err(x, n, p, lp)

@kernel
def tail_rel_err(t, m, p):
    """Relative error bound of a tail state (Pr[Bin(m,p) >= t], Pr[Bin(m,p) = t]) built from
    binom_logpmf anchors and pmf-ratio sums (see pmf_rel_err).

    Every nonzero pmf of Bin(m, p) has |log pmf| <= min(745.2, m |log min(p, 1-p)|) (the pmf is
    at least min(p, 1-p)^m, and a double is at least e^-745.2). An anchor's sum of pmf ratios
    stops at a 1e-18 remainder; its terms fall geometrically past the mode, so it sums at most
    min(m + 1, 64 sqrt(m + 1) + 64) terms of relative size above 1e-18, each carrying at most
    4 ulps (a chain of ratio products and one addition), and the input sensitivity of a term k
    is |k - m p| <= |t - m p| + that count. Recurrence moves from the anchor are bounded by the
    callers' per-step allowance."""
    terms = min(m + 1.0, 64.0 * math.sqrt(m + 1.0) + 64.0)
    small = min(p, 1.0 - p)
    lp_max = LOG_DBL_TRUE_MIN
    if small > 0.0:
        lp_max = min(lp_max, -m * math.log(small))
    err = 128.0 * (lp_max + math.log1p(m) + 4.0) + 4.0 * terms
    if p != 0.5:  # p = q = 1/2 are exact: no input error to propagate
        err += 32.0 * (abs(t - m * p) + terms + 4.0)
    return math.expm1(UNIT_ROUNDOFF * err) + 2.0 * UNIT_ROUNDOFF


@kernel
def upper_tail_bound(hi, n, p, q):
    """Upper bound on Pr[Bin(n,p) > hi] for hi at or above the mode (ratio of pmfs decreases)."""
    if hi >= n:
        return 0.0
    rho = (n - hi) / (hi + 1.0) * (p / q)
    if rho >= 1.0:
        return 1.0
    return math.exp(binom_logpmf(hi, n, p, q)) * rho / (1.0 - rho)


@kernel
def lower_tail_bound(lo, n, p, q):
    """Upper bound on Pr[Bin(n,p) < lo] for lo at or below the mode."""
    if lo <= 0:
        return 0.0
    sig = lo / (n - lo + 1.0) * (q / p)
    if sig >= 1.0:
        return 1.0
    return math.exp(binom_logpmf(lo, n, p, q)) * sig / (1.0 - sig)


@kernel
def binom_window(n, p, q, tol):
    """Window [lo, hi] of Bin(n, p) with a proven bound ``outside`` >= Pr[X not in window].

    Grows the window from about sqrt(2 log(1/tol)) standard deviations until the geometric
    tail bounds of both sides sum to at most tol (or the window covers [0, n]).
    """
    if n <= 0 or p == 0.0:
        return 0, 0, 0.0
    if q == 0.0:
        return n, n, 0.0
    mode = int(math.floor((n + 1.0) * p))
    if mode > n:
        mode = n
    sd = math.sqrt(n * p * q)
    k = math.sqrt(2.0 * max(-math.log(tol), 1.0)) + 2.0
    step = max(sd, 1.0)
    hi = min(n, mode + int(math.ceil(k * step)))
    up = upper_tail_bound(hi, n, p, q)
    while up > 0.5 * tol and hi < n:
        hi = min(n, hi + int(math.ceil(step)) + 1)
        up = upper_tail_bound(hi, n, p, q)
    lo = max(0, mode - int(math.ceil(k * step)))
    down = lower_tail_bound(lo, n, p, q)
    while down > 0.5 * tol and lo > 0:
        lo = max(0, lo - int(math.ceil(step)) - 1)
        down = lower_tail_bound(lo, n, p, q)
    return lo, hi, up + down


# ---------------------------------------------------------------------------------------------
# Tails of Bin(c, 1/2): state (U, pm1) = (Pr[X >= t], Pr[X = t - 1]).
# ---------------------------------------------------------------------------------------------

@kernel(inline="always")
def half_pmf(a, c):
    """Pr[Bin(c, 1/2) = a]."""
    if a < 0 or a > c:
        return 0.0
    return math.exp(binom_logpmf(a, c, 0.5, 0.5))


@kernel
def _upper_sum(s, c):
    """Pr[Bin(c,1/2) >= s] for s >= c/2: pmf(s) times the sum of pmf ratios, plus the remainder.

    The ratios are summed from 1 (not from the pmf itself), so a tail deep in the denormal
    range neither loses digits nor stalls; the geometric remainder bounds what is cut off.
    """
    if s > c:
        return 0.0
    if s < 0:
        s = 0
    log_head = binom_logpmf(s, c, 0.5, 0.5)
    term = 1.0
    total = 1.0
    a = s
    while a < c:
        term *= (c - a) / (a + 1.0)
        total += term
        a += 1
        nxt = (c - a) / (a + 1.0)
        if nxt < 1.0 and term * nxt / (1.0 - nxt) <= 1e-18 * total:
            total += term * nxt / (1.0 - nxt)
            break
    return math.exp(log_head + math.log(total))


@kernel
def tail_direct(c, t):
    """Anchor the state at (c, t): returns (Pr[Bin(c,1/2) >= t], Pr[Bin(c,1/2) = t-1])."""
    pm1 = half_pmf(t - 1, c)
    if t <= 0:
        return 1.0, pm1
    if t > c:
        return 0.0, pm1
    if 2 * t >= c:
        return min(1.0, _upper_sum(t, c)), pm1
    # t below the median: complement, Pr[X >= t] = 1 - Pr[X >= c - t + 1] by symmetry
    return 1.0 - _upper_sum(c - t + 1, c), pm1


@kernel
def tail_dec_c(c, t, u, pm1):
    """(c, t) -> (c - 1, t): Pr_{c-1}[X >= t] = Pr_c[X >= t] - B_{c-1}(t-1)/2; re-anchors if
    half the value cancels (deep in the upper tail the first term dominates the tail, and the
    difference would carry the rounding of u and b amplified), as tail_inc_t does."""
    b = pm1 * 2.0 * (c - t + 1) / c
    if pm1 < TINY or t > c + 1:
        return tail_direct(c - 1, t)
    nu = u - 0.5 * b
    if nu < 0.5 * u:
        return tail_direct(c - 1, t)
    return nu, b


@kernel(inline="always")
def tail_dec_t(c, t, u, pm1):
    """(c, t) -> (c, t - 1): add the pmf at t - 1 (a stable addition)."""
    if pm1 < TINY or c - t + 2 <= 0:
        return tail_direct(c, t - 1)
    return min(u + pm1, 1.0), pm1 * (t - 1) / (c - t + 2)


@kernel(inline="always")
def tail_inc_t(c, t, u, pm1):
    """(c, t) -> (c, t + 1): subtract the pmf at t; re-anchors if half the value cancels."""
    if pm1 < TINY or t <= 0 or t > c:
        return tail_direct(c, t + 1)
    b = pm1 * (c - t + 1) / t
    nu = u - b
    if nu < 0.5 * u:
        return tail_direct(c, t + 1)
    return nu, b


@kernel
def tail_move_t(c, t, u, pm1, target):
    """Move the state from t to target at fixed c (few steps: recurrences, else re-anchor)."""
    if abs(target - t) > 64:
        u, pm1 = tail_direct(c, target)
        return u, pm1
    while t > target:
        u, pm1 = tail_dec_t(c, t, u, pm1)
        t -= 1
    while t < target:
        u, pm1 = tail_inc_t(c, t, u, pm1)
        t += 1
    return u, pm1


@kernel
def clone_tail_h(c, t, u, pm1, al, be):
    """sum_a max(0, al B_c(a-1) + be B_c(a)) given the state at the threshold t (al > 0 > be).

    The main part is al Pr[X >= t-1] + be Pr[X >= t]; the two boundary terms at t-1 and t are
    then corrected so that a threshold off by one (rounding of theta (c+1)) never lowers H.
    """
    h = al * (u + pm1) + be * u
    bm2 = pm1 * (t - 1) / (c - t + 2) if c - t + 2 > 0 else 0.0
    b0 = pm1 * (c - t + 1) / t if t > 0 else 0.0
    g_prev = al * bm2 + be * pm1
    g_here = al * pm1 + be * b0
    if g_prev > 0.0:
        h += g_prev
    if g_here < 0.0:
        h -= g_here
    return max(h, 0.0)
