"""Independent reference implementations for the tests: mpmath sums and direct enumeration.

The one home of the tests' brute-force references: this module holds the shared ones; a topic
with several references gets its own module here (``from reference.allocation import ...``).

Nothing here shares code with the library: they are written from the formulas of docs/theory.md directly.
"""
import itertools
import math

import mpmath as mp
import numpy as np

from reference.shuffle import hockey as shuffle_hockey
from reference.shuffle import shuffled_law


def mp_clone_delta(n, q, p, eps, dps=40):
    """H_{e^eps}(P||Q) of the §2.1 pair by direct double sum over (c, a) in mpmath."""
    with mp.workdps(dps):
        q, p, e = mp.mpf(q), mp.mpf(p), mp.e ** mp.mpf(eps)
        total = mp.mpf(0)
        for c in range(n):
            wc = mp.binomial(n - 1, c) * q ** c * (1 - q) ** (n - 1 - c)
            for a in range(c + 2):
                b_prev = mp.binomial(c, a - 1) / mp.mpf(2) ** c if a >= 1 else 0
                b_here = mp.binomial(c, a) / mp.mpf(2) ** c if a <= c else 0
                pa = p * b_prev + (1 - p) * b_here
                qa = (1 - p) * b_prev + p * b_here
                total += wc * max(0, pa - e * qa)
        return float(total)


def mp_binary_rr_lower(n, eps0, eps, dps=40):
    """Exact delta(eps) of §2.6(a): K|X = B + Bern(1-p), K|X' = B + Bern(p), both directions."""
    with mp.workdps(dps):
        e0 = mp.e ** mp.mpf(eps0)
        p = e0 / (e0 + 1)
        e = mp.e ** mp.mpf(eps)
        b = [mp.binomial(n - 1, k) * (1 - p) ** k * p ** (n - 1 - k) for k in range(n)]
        bb = lambda k: b[k] if 0 <= k < n else 0
        P = [p * bb(k) + (1 - p) * bb(k - 1) for k in range(n + 1)]
        Q = [(1 - p) * bb(k) + p * bb(k - 1) for k in range(n + 1)]
        h1 = sum(max(0, x - e * y) for x, y in zip(P, Q))
        h2 = sum(max(0, y - e * x) for x, y in zip(P, Q))
        return float(max(h1, h2))


def krr_rows(k, e0):
    """k-RR's rows R_x(y) = (e0 if y == x else 1) / (e0 + k - 1), e0 = e^eps0 in the caller's type."""
    return [[(e0 if y == x else 1) / (e0 + k - 1) for y in range(k)] for x in range(k)]


def krr_histogram_law(values, k, eps0, kind="float"):
    """Exact law of the shuffled k-RR reports of users holding `values` (dict: sorted reports ->
    prob), in floats or (kind="mpmath") with e^eps0 formed at the current mp.mp.dps."""
    e0 = mp.e ** mp.mpf(eps0) if kind == "mpmath" else math.exp(eps0)
    rows = krr_rows(k, e0)
    return shuffled_law([rows[x] for x in values])


def hockey(p_law, q_law, eps):
    """max of both directions of H_{e^eps} between two finite laws given as dicts (floats)."""
    return shuffle_hockey(p_law, q_law, math.exp(eps), kind="float")


def krr_worst_delta(n, k, eps0, eps_grid):
    """Exact worst-case delta(eps) of shuffled k-RR over every pair of neighbouring datasets.

    By symmetry of the shuffle the differing user is user 1; user 1 holds 0 or 1 (relabelling),
    the other n-1 users range over all multisets of [k].
    """
    worst = np.zeros(len(eps_grid))
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        law0 = krr_histogram_law((0,) + others, k, eps0)
        law1 = krr_histogram_law((1,) + others, k, eps0)
        for i, eps in enumerate(eps_grid):
            worst[i] = max(worst[i], hockey(law0, law1, eps))
    return worst


def mp_general_delta(n, eps0, eps, dps=60, q=None):
    """H_{e^eps}(P||Q) of the FMT21 Thm 3.2 pair (q = e^-eps0, p = e^eps0/(e^eps0+1)) in mpmath,
    with q and p formed from eps0 at dps digits (not from rounded floats); a given q (e.g. the
    kernel's own rounded one) is taken as exact."""
    with mp.workdps(dps):
        e0 = mp.e ** mp.mpf(eps0)
        p, pc = e0 / (e0 + 1), 1 / (e0 + 1)
        q = 1 / e0 if q is None else mp.mpf(q)
        e = mp.e ** mp.mpf(eps)
        total = mp.mpf(0)
        for c in range(n):
            wc = mp.binomial(n - 1, c) * q ** c * (1 - q) ** (n - 1 - c)
            for a in range(c + 2):
                b_prev = mp.binomial(c, a - 1) / mp.mpf(2) ** c if a >= 1 else 0
                b_here = mp.binomial(c, a) / mp.mpf(2) ** c if a <= c else 0
                total += wc * max(0, (p - e * pc) * b_prev + (pc - e * p) * b_here)
        return total


def _mp_krr_law(values, k, e0):
    """Law of the shuffled k-RR reports of users holding ``values`` (e0 = e^eps0 at the caller's
    precision)."""
    rows = krr_rows(k, e0)
    return shuffled_law([rows[x] for x in values])


def product_delta(p, q, times, eps):
    """Exact delta(eps) of the T-fold product pair by enumeration (both directions)."""
    best = 0.0
    for a, b in ((p, q), (q, p)):
        total = mp.mpf(0)
        for idx in itertools.product(range(len(a)), repeat=times):
            pa = mp.fprod(mp.mpf(a[i]) for i in idx)
            pb = mp.fprod(mp.mpf(b[i]) for i in idx)
            total += max(mp.mpf(0), pa - mp.e ** eps * pb)
        best = max(best, float(total))
    return best


def mp_krr_worst_delta(n, k, eps0, eps, dps=50):
    """Exact worst-case delta(eps) of shuffled k-RR over all neighbouring datasets, in mpmath
    (k-RR probabilities e^eps0/Z and 1/Z formed at dps digits)."""
    with mp.workdps(dps):
        e0 = mp.e ** mp.mpf(eps0)
        e = mp.e ** mp.mpf(eps)
        worst = mp.mpf(0)
        for others in itertools.combinations_with_replacement(range(k), n - 1):
            l0, l1 = _mp_krr_law((0,) + others, k, e0), _mp_krr_law((1,) + others, k, e0)
            for a, b in ((l0, l1), (l1, l0)):
                worst = max(worst, sum(max(0, a[o] - e * b.get(o, 0)) for o in a))
        return worst


def mp_krr_single_outcome_eps(n, k, eps0, delta, dps=60):
    """The eps at which the k-RR attack's single outcome (docs/theory.md §2.6(b)) reaches delta:
    user 1 holds x0 or x1, the n - 1 others z; the histogram {x0: 1, z: n - 1} alone gives
    delta(eps) >= A - e^eps B, so the exact eps is at least log((A - delta) / B), in mpmath."""
    with mp.workdps(dps):
        e0 = mp.e ** mp.mpf(eps0)
        z = e0 + k - 1
        al, be = e0 / z, 1 / z
        a = al ** n + (n - 1) * be ** 2 * al ** (n - 2)
        b = be * al ** (n - 1) + (n - 1) * be ** 2 * al ** (n - 2)
        return float(mp.log((a - mp.mpf(delta)) / b))


def mp_krr_attack_delta(n, k, eps0, eps, dps=60):
    """Exact delta(eps) of the k-RR attack of docs/theory.md §2.6(b): datasets (x0, z, ..., z) vs
    (x1, z, ..., z), by enumerating the shuffled histogram law (values 0 = x0, 1 = x1, 2 = z),
    both directions, k-RR probabilities formed at dps digits."""
    with mp.workdps(dps):
        e0 = mp.e ** mp.mpf(eps0)
        e = mp.e ** mp.mpf(eps)
        p0 = _mp_krr_law((0,) + (2,) * (n - 1), k, e0)
        p1 = _mp_krr_law((1,) + (2,) * (n - 1), k, e0)
        keys = set(p0) | set(p1)
        h1 = sum(max(0, p0.get(o, 0) - e * p1.get(o, 0)) for o in keys)
        h2 = sum(max(0, p1.get(o, 0) - e * p0.get(o, 0)) for o in keys)
        return max(h1, h2)


def json_paths(doc, prefix=()):
    """Every path (tuple of keys and indices) inside a JSON document, the root first."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from json_paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from json_paths(v, prefix + (i,))
