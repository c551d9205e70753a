"""One list of the shipped randomizers (small parameters) and the worked example of a
user-defined one (docs/examples/yes_no.py), with inputs for each: shared by the tests."""
import importlib.util
import os

import numpy as np

from ldpcompress.randomizers import (
    KRR, OLH, OUE, RAPPOR, GaussianScalar, HadamardResponse, LaplaceScalar, OneBitSphere,
    PIRappor, PrivUnit2, SubsetSelection, TableRandomizer, VectorPIRappor)

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "docs", "examples", "yes_no.py")


def load_example():
    """The YesNo class of docs/examples/yes_no.py (registered once per process)."""
    from ldpcompress.randomizers import registry
    try:
        return registry.lookup("yes-no")
    except ValueError:
        spec = importlib.util.spec_from_file_location("yes_no_example", EXAMPLE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.YesNo


def frequency_inputs(k):
    return lambda n, rng: rng.integers(0, k, size=n)


def vector_inputs(d):
    def make(n, rng):
        x = rng.normal(size=(n, d))
        return x / np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(0.2, 1.0, (n, 1))
    return make


def scalar_inputs(lo, hi):
    return lambda n, rng: rng.uniform(lo, hi, size=n)


# (id, factory, inputs(n, rng))
SHIPPED = [
    ("krr", lambda: KRR(12, 1.5), frequency_inputs(12)),
    ("rappor", lambda: RAPPOR(12, 1.0), frequency_inputs(12)),
    ("oue", lambda: OUE(12, 1.5), frequency_inputs(12)),
    ("subset", lambda: SubsetSelection(12, 1.5), frequency_inputs(12)),
    ("olh", lambda: OLH(12, 1.5), frequency_inputs(12)),
    ("hadamard", lambda: HadamardResponse(12, 1.5), frequency_inputs(12)),
    ("hadamard-basic", lambda: HadamardResponse(12, 1.5, variant="basic"), frequency_inputs(12)),
    ("pi-rappor", lambda: PIRappor(12, 1.5), frequency_inputs(12)),
    ("pi-rappor-sym", lambda: PIRappor(12, 1.0, symmetric=True), frequency_inputs(12)),
    ("pi-rappor-vector", lambda: VectorPIRappor(12, 1.5, 5), frequency_inputs(12)),
    ("privunit2", lambda: PrivUnit2(6, 2.0), vector_inputs(6)),
    ("onebit-sphere", lambda: OneBitSphere(6, 2.0), vector_inputs(6)),
    ("table", lambda: TableRandomizer([[0.5, 0.25, 0.125, 0.125], ["1/8", "1/2", "1/4", "1/8"],
                                       ["1/6", "1/6", "1/2", "1/6"]]), frequency_inputs(3)),
]
# scalar means (the Gaussian is not pure DP: eps = inf, delta from its own accounting)
SCALARS = [
    ("laplace-scalar", lambda: LaplaceScalar(-1.0, 2.0, 1.5), scalar_inputs(-1.0, 2.0)),
    ("gaussian-scalar", lambda: GaussianScalar(0.0, 1.0, 0.5), scalar_inputs(0.0, 1.0)),
]
EXAMPLES = [("yes-no (docs/examples)", lambda: load_example()(1.0), frequency_inputs(2))]


def compressed_cases(cases):
    """The compressed wrapper (17-byte seed reports) of every case that compresses."""
    from ldpcompress.compression import CompressedRandomizer
    return [(f"compressed {name}", (lambda make=make: CompressedRandomizer(make())), inputs)
            for name, make, inputs in cases if make().compression_refusal() is None]


def frequency_cases(cases=None):
    """The cases (of SHIPPED and EXAMPLES by default) whose randomizer is a frequency oracle."""
    from ldpcompress.randomizers.base import FrequencyOracle
    cases = SHIPPED + EXAMPLES if cases is None else cases
    return [c for c in cases if isinstance(c[1](), FrequencyOracle)]


def variant(randomizer) -> str:
    """A randomizer's class, with the flag that makes another mechanism of the same class."""
    name = type(randomizer).__name__
    if getattr(randomizer, "variant", None) == "basic":  # HadamardResponse's one-bit code
        return f"{name}(basic)"
    return f"{name}(symmetric)" if getattr(randomizer, "symmetric", False) else name


def uncovered(randomizers, cases=None) -> list[str]:
    """Ids of the cases (shipped frequency oracles by default) whose class (and symmetric
    variant) none of ``randomizers`` has: a test keeping its own parameters covers them all."""
    have = {variant(r) for r in randomizers}
    cases = frequency_cases(SHIPPED) if cases is None else cases
    return [name for name, make, _ in cases if variant(make()) not in have]
