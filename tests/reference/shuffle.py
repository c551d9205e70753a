"""The tests' one brute force of the shuffle model: the exact law of the shuffled reports of
independent users, and the hockey-stick divergence between two finite laws.

Written from the definitions (docs/theory.md §2.1): the analyst sees the multiset of the n
reports, so the shuffled law is the law of the sorted tuple of reports; H_E(P||Q) is
sum_o max(0, P(o) - E Q(o)), and an (eps, delta) bound of a neighbouring pair must cover both
orders (``direction="both"``).  The number type is a parameter: ``kind="fraction"`` (exact, for
rational laws), ``"mpmath"`` (at the caller's mp.mp.dps), ``"float"``, or ``None`` (arithmetic in
whatever type the inputs carry).  Nothing here shares code with the library.
"""
from fractions import Fraction

import mpmath as mp

KINDS = (None, "fraction", "mpmath", "float")
DIRECTIONS = ("both", "forward")


def number(x, kind):
    """x converted to the number type ``kind`` (Fractions convert exactly to mpmath)."""
    if kind is None:
        return x
    if kind == "fraction":
        return x if isinstance(x, Fraction) else Fraction(x)  # floats convert exactly
    if kind == "mpmath":
        if isinstance(x, Fraction):
            return mp.mpf(x.numerator) / x.denominator
        return mp.mpf(x)
    if kind == "float":
        return float(x)
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def _items(row):
    return row.items() if isinstance(row, dict) else enumerate(row)


def shuffled_law(rows, kind=None):
    """Exact law of the multiset of independent reports, report i ~ rows[i] (a dict output ->
    probability, or a sequence indexed by output); outcomes are sorted tuples of outputs, those
    of probability 0 left out."""
    law = {(): number(1, kind) if kind else 1}
    for row in rows:
        new = {}
        for h, p in law.items():
            for y, q in _items(row):
                if q == 0:
                    continue
                g = tuple(sorted(h + (y,)))
                new[g] = new.get(g, 0) + p * number(q, kind)
        law = new
    return law


def hockey(p_law, q_law, e, direction="both", kind=None):
    """H_e(P||Q) = sum_o max(0, P(o) - e Q(o)) over the union of the supports (``"forward"``), or
    the max of both orders (``"both"``); e = e^eps in the number type wanted."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    e = number(e, kind)
    zero = number(0, kind) if kind else 0
    keys = set(p_law) | set(q_law)
    pairs = [(number(p_law.get(o, zero), kind), number(q_law.get(o, zero), kind)) for o in keys]
    fwd = sum((max(zero, a - e * b) for a, b in pairs), zero)
    if direction == "forward":
        return fwd
    return max(fwd, sum((max(zero, b - e * a) for a, b in pairs), zero))
