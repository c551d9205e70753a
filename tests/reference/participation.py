"""The exact law of the shuffled view under participation sampling (docs/theory.md §2.7),
written from the sampling schemes directly: each user reports with probability g (Poisson),
or a uniform m-subset of the users reports (fixed size); silent users send nothing.

The laws are dicts from report-count vectors to probabilities, in the number type of the
inputs: floats for a numpy R, exact for a Fraction R and g, mpmath for mpf.
"""
import itertools
from collections import defaultdict

__all__ = ["poisson_law", "fixed_law"]


def poisson_law(R, xs, g):
    """Law of the report counts when each user of xs reports w.p. g (silent: nothing);
    R[x][y] is the randomizer's probability of output y on input x."""
    k = len(R[0])
    law = {(0,) * k: g * 0 + 1}
    for x in xs:
        new = defaultdict(lambda: g * 0)
        for cnt, pr in law.items():
            new[cnt] += pr * (1 - g)
            for y in range(k):
                if R[x][y] > 0:
                    c2 = list(cnt)
                    c2[y] += 1
                    new[tuple(c2)] += pr * g * R[x][y]
        law = new
    return law


def fixed_law(R, xs, m):
    """Law of the report counts when a uniform m-subset of xs reports."""
    one = R[0][0] * 0 + 1
    subsets = list(itertools.combinations(range(len(xs)), m))
    out = defaultdict(lambda: one * 0)
    for S in subsets:
        for cnt, pr in poisson_law(R, [xs[i] for i in S], one).items():
            out[cnt] += pr / len(subsets)
    return out
