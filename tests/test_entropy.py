"""Seeded simulation mode (core/entropy.py): the same seed gives the same reports for every
shipped randomizer, a different seed different ones; the seeded source is labelled as for
simulation only and its seed checked."""
import numpy as np
import pytest
from shipped import EXAMPLES, SCALARS, SHIPPED

import ldpcompress as L
from ldpcompress.core.entropy import SYSTEM, Entropy
from ldpcompress.randomizers import PrivUnit2
from ldpcompress.randomizers.pirappor import FieldReports


EVERY = SHIPPED + SCALARS + EXAMPLES


def as_array(reports):
    if isinstance(reports, FieldReports):
        return np.stack([reports.a, reports.b])
    return np.asarray(reports)


@pytest.mark.parametrize("name,make,inputs", EVERY, ids=[c[0] for c in EVERY])
def test_same_seed_same_reports(name, make, inputs):
    oracle = make()
    xs = inputs(200, np.random.default_rng(0))  # the users' data, not privacy coins
    first = as_array(oracle.randomize_many(xs, entropy=L.simulation_entropy(7)))
    again = as_array(oracle.randomize_many(xs, entropy=Entropy.seeded_for_simulation(7)))
    other = as_array(oracle.randomize_many(xs, entropy=L.simulation_entropy(8)))
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_seeded_privunit_is_reproducible():
    pu = PrivUnit2(5, 2.0)
    x = np.ones(5) / 5
    assert np.array_equal(pu.randomize(x, L.simulation_entropy(3)),
                          pu.randomize(x, L.simulation_entropy(3)))


def test_simulation_entropy_is_labelled_and_checked():
    ent = L.simulation_entropy(11)
    assert ent.for_simulation and ent.seed == 11 and "SIMULATION ONLY" in repr(ent)
    assert not SYSTEM.for_simulation and "urandom" in repr(SYSTEM)
    for bad, exc in [(-1, ValueError), (1.5, TypeError), ("3", TypeError), (True, TypeError),
                     (None, TypeError)]:
        with pytest.raises(exc, match="seed"):
            L.simulation_entropy(bad)
    assert L.simulation_entropy(2 ** 80).seed == 2 ** 80  # any integer seed, exactly
