"""Compressed reports as a randomizer (compression/compressed.py): the privacy it states is the
bound proven for any PRG, it is built from a randomizer, a pseudo-randomizer or a file's spec,
and its reports are checked like any other randomizer's."""
import math
import pickle

import numpy as np
import pytest
from reference.compression import ToyKRR, exact_law

import ldpcompress as L
from ldpcompress.compression import CompressedRandomizer, compress
from ldpcompress.core.entropy import simulation_entropy
from ldpcompress.randomizers import Privacy, registry


def test_the_stated_privacy_holds_for_any_prg():
    """Deletion 2 eps_d w.r.t. uniform seeds and replacement 4 eps_d (FT21 Lemma 3.6, the
    truncation to T trials included), checked on the exact output law of a deliberately weak
    10-bit PRG at the wrapper's own T."""
    rand = ToyKRR(6, 1.0)
    c = CompressedRandomizer(rand)
    assert c.privacy is Privacy.DELETION
    assert c.eps == 2 * rand.deletion_eps and c.replacement_eps == 4 * rand.deletion_eps
    trials = c.pseudo_randomizer().max_trials
    laws = np.array([exact_law(rand, x, trials) for x in range(rand.k)])
    uniform = 1 / laws.shape[1]
    assert np.abs(laws.sum(axis=1) - 1).max() < 1e-12
    assert np.log(laws / uniform).max() <= c.eps * (1 + 1e-12)
    assert np.log(uniform / laws).max() <= c.eps * (1 + 1e-12)
    pairs = np.log(laws[:, None, :] / laws[None, :, :]).max()
    assert pairs <= c.replacement_eps * (1 + 1e-12)
    assert pairs > rand.deletion_eps  # the toy PRG is weak: more than eps_d is really lost


def test_built_from_a_randomizer_a_pseudo_randomizer_or_a_spec():
    inner = L.RAPPOR(16, 2.0)
    a = CompressedRandomizer(inner)
    pr = compress(inner, tv_target=2.0 ** -30, entropy=simulation_entropy(4))
    b = CompressedRandomizer(pr)
    assert b.tv_target == 2.0 ** -30 and b != a and b.pseudo_randomizer() is pr
    spec = registry.spec(b)
    assert spec == {"randomizer": "compressed", "params": {
        "randomizer": {"randomizer": "rappor", "params": {"k": 16, "eps": 2.0,
                                                          "symmetric": True}},
        "tv_target": 2.0 ** -30}}
    assert registry.check_spec(spec, "here") == b
    # the pseudo-randomizer's coins: the same seeded reports as compress() gives (a seeded
    # simulation source: its batch simulator)
    xs = np.arange(30) % 16
    again = compress(inner, tv_target=2.0 ** -30, entropy=simulation_entropy(4))
    want = again.encode_many_simulated(xs, again.entropy)
    np.testing.assert_array_equal(b.randomize_many(xs), want)
    real = CompressedRandomizer(inner).randomize_many(xs)  # os.urandom: the client's encode
    assert real.shape == (30, 17) and np.all(real[:, 0] == 1)
    # pickled for a Dask worker: the client's pseudo-randomizers stay home
    clone = pickle.loads(pickle.dumps(b))
    assert clone == b and clone._clients == {}


@pytest.mark.parametrize("params, message", [
    ({"randomizer": {"randomizer": "pi-rappor", "params": {"k": 5, "eps": 1.0}}},
     "does not take pi-rappor"),
    ({"randomizer": {"randomizer": "compressed", "params": {"randomizer": {
        "randomizer": "krr", "params": {"k": 3, "eps": 1.0}}}}}, "already 17-byte"),
    ({"randomizer": {"randomizer": "nope", "params": {}}}, "unknown randomizer 'nope'"),
    ({"randomizer": "krr"}, "must be a randomizer's spec"),
    ({"randomizer": {"randomizer": "krr", "params": {"k": 3, "eps": 1.0}}, "tv_target": 1.5},
     "tv_target"),
    ({"randomizer": {"randomizer": "krr", "params": {"k": 3, "eps": 1.0}}, "entropy": 1},
     "nothing else"),
    ({}, "the key 'randomizer'"),
])
def test_bad_specs_are_refused_by_name(params, message):
    with pytest.raises(ValueError, match=message):
        registry.build("compressed", params, "file.json: key 'randomizer'")


def test_reports_are_checked():
    c = CompressedRandomizer(L.KRR(5, 1.0))
    rep = c.randomize_many(np.arange(10) % 5, simulation_entropy(1))
    as_bytes = [bytes(r) for r in rep]
    np.testing.assert_array_equal(c.check_reports(as_bytes), rep)
    bad = rep.copy()
    bad[3, 0] = 2
    with pytest.raises(ValueError, match="report 3: unknown report format version 2"):
        c.check_reports(bad)
    with pytest.raises(ValueError, match="report 1 has 16 bytes"):
        c.check_reports([as_bytes[0], as_bytes[1][:16]])
    with pytest.raises(ValueError, match="outside"):
        c.check_reports(rep.astype(np.int64) + 255)
    with pytest.raises(TypeError, match="reports must be an integer array"):
        c.check_reports(rep.astype(float))
    np.testing.assert_array_equal(c.summarize(rep), c.inner.summarize(c.decode_many(rep)))
    assert c.summarize(rep[:0]).tolist() == [0] * 5
    assert math.isclose(c.expected_trials, math.exp(c.inner.deletion_eps))
