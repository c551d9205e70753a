"""A randomizer written outside the library: Warner's randomized response on a yes/no question.

Implementing the contract (ldpcompress.randomizers.LocalRandomizer) is all it takes for every
job: shuffle accounting (its privacy blanket via shuffle_structure), compression to 17-byte
seed reports, report sets on disk, aggregation in memory or on Dask, and intervals.
FrequencyOracle checks the answers and the reports (answers: integers in [0, k)) before the
hooks below see them, and counts the answers the reports give.
"""
from fractions import Fraction
import math

import numpy as np

from ldpcompress.randomizers import FrequencyOracle, Privacy, ShuffleStructure, register
from ldpcompress.randomizers.structure import coin


@register
class YesNo(FrequencyOracle):
    """Answer truthfully w.p. e^eps/(1 + e^eps), else the other answer (replacement eps)."""

    name, privacy = "yes-no", Privacy.REPLACEMENT
    k = 2                                              # answers and reports are 0 or 1
    bits_per_report = 1

    def __init__(self, eps: float):
        self.eps = float(eps)
        self.a1 = 1.0 / (1.0 + math.exp(-self.eps))   # Pr[report = own answer]
        self.a0 = 1.0 - self.a1                        # Pr[report = the other answer]
        self.deletion_eps = math.log(2 * self.a1)      # w.r.t. a fair coin (compression)

    def params(self) -> dict:
        return {"eps": self.eps}

    # client: checked answers, coins from the Entropy source (os.urandom by default)
    def _randomize_many(self, xs, entropy):
        return np.where(entropy.uniform(xs.size) < self.a1, xs, 1 - xs)

    # compression (FT21): the reference law is a fair coin; ratio = R(x)(y) / (1/2)
    def sample(self, prg):
        return int(prg.integers(2, 1)[0])

    def ratio(self, x, y):
        return 2 * (self.a1 if y == x else self.a0)

    # accounting: the blanket law, exactly as realised: w = a fair coin, a report supports
    # one answer (P(1,1) = 0), and Pr[keep] = coin(a1), the probability that the client's
    # 53-bit uniform falls below a1
    def shuffle_structure(self):
        return ShuffleStructure.of(self, a=Fraction(1, 2), a1=coin(self.a1), p11=Fraction(0),
                                   p10=Fraction(1, 2), independent=False)
