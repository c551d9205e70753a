"""Seeded estimates for the tests of what is computed from them (intervals, post-processing):
every frequency oracle at k = 1000 and one simulated campaign on Zipf(1.3) data."""
import numpy as np

import ldpcompress as L
from ldpcompress.randomizers import (
    KRR,
    OLH,
    OUE,
    RAPPOR,
    HadamardResponse,
    PIRappor,
    SubsetSelection,
    VectorPIRappor,
)

__all__ = ["K", "ORACLES", "simulated"]

K = 1000
ORACLES = {
    "krr": lambda: KRR(K, 2.0),
    "oue": lambda: OUE(K, 2.0),
    "rappor": lambda: RAPPOR(K, 1.0),
    "subset": lambda: SubsetSelection(K, 1.0),
    "olh": lambda: OLH(K, 2.0),
    "hadamard": lambda: HadamardResponse(K, 2.0),
    "hadamard-basic": lambda: HadamardResponse(K, 2.0, variant="basic"),
    "pi-rappor": lambda: PIRappor(K, 2.0),
    "pi-rappor-symmetric": lambda: PIRappor(K, 1.0, symmetric=True),
    "pi-rappor-vector": lambda: VectorPIRappor(K, 2.0, q=37),
}


def simulated(name, seed=2):
    """An oracle, its users' true counts (Zipf(1.3) data) and the estimate from seeded coins."""
    oracle = ORACLES[name]()
    n = 5000 if name in ("oue", "rappor") else 20_000  # k-bit reports: keep the batch small
    xs = np.random.default_rng(1).zipf(1.3, n) % K  # simulated users' data
    f = np.bincount(xs, minlength=K)
    est = oracle.estimate(oracle.randomize_many(xs, entropy=L.simulation_entropy(seed)))
    return oracle, n, f, est
