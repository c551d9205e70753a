"""Compression by rejection sampling (docs/theory.md §5.2) on a toy PRG, exactly: ``ToyKRR``'s
reference sampler reads only the first SEED_BITS bits of a seed, so the law of the compressed
report over all 2^SEED_BITS toy seeds can be written down (``exact_law``) and compared."""
import math

import numpy as np

from ldpcompress.randomizers.krr import KRR

__all__ = ["SEED_BITS", "ToyKRR", "exact_law"]

SEED_BITS = 10


class ToyKRR(KRR):
    """k-RR whose reference sampler reads only the first 10 bits of the seed (a toy PRG:
    y = (a s + b) mod 2^10 mod k, deliberately weak)."""

    def __init__(self, k, eps):
        super().__init__(k, eps)
        self.inner = KRR(k, eps)

    def ratio_from_seed(self, x, seed):
        return self.ratio(x, self.decode_seed(seed))

    def toy_seed_value(self, seed):
        return seed[0] | ((seed[1] & 3) << 8)

    def decode_seed(self, seed):
        return ((277 * self.toy_seed_value(seed) + 91) % 2 ** SEED_BITS) % self.k

    def ratio(self, x, y):
        return self.inner.ratio(x, y)


def exact_law(rand, x, trials):
    """§5.2: Pr[out = s] = 2^-l [r_s/e^eps (1 - (1-a)^T)/a + (1-a)^T] for every toy seed s."""
    size = 2 ** SEED_BITS
    e = math.exp(rand.deletion_eps)
    acc = np.array([rand.ratio(x, rand.decode_seed(bytes([s & 255, s >> 8]) + bytes(14))) / e
                    for s in range(size)])
    a = acc.mean()
    miss = (1 - a) ** trials
    return (acc * (1 - miss) / a + miss) / size
