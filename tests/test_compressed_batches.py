"""Compressed reports in batches (docs/theory.md §5.3): the batch decoders and summaries of every
compressible randomizer equal the per-report ones, the server API validates its batches, the
simulated batch encoder has exactly the law of FT21 Alg. 1, and compress() says why it
refuses a randomizer."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from shipped import EXAMPLES, SHIPPED
from reference.compression import SEED_BITS, ToyKRR, exact_law

from ldpcompress import compress
from ldpcompress.compression import CompressedPrivUnit2, wire
from ldpcompress.core.entropy import SYSTEM, Entropy, deterministic_source, simulation_entropy
from ldpcompress.core.prg import PRG
from ldpcompress.kernels.seeds import bounded_draws
from ldpcompress.randomizers import (
    KRR, OLH, OUE, RAPPOR, HadamardResponse, LocalRandomizer, OneBitSphere, PIRappor,
    PrivUnit2, SubsetSelection, VectorPIRappor)

COMPRESSIBLE = [c for c in SHIPPED + EXAMPLES if c[1]().compression_refusal() is None] + [
    ("rappor-k1000", lambda: RAPPOR(1000, 2.0), lambda n, rng: rng.integers(0, 1000, n)),
    ("subset-d=k-1", lambda: SubsetSelection(9, 1.0, d=8), lambda n, rng: rng.integers(0, 9, n)),
    ("krr-k2", lambda: KRR(2, 0.5), lambda n, rng: rng.integers(0, 2, n)),
    ("privunit2-odd-d", lambda: PrivUnit2(9, 3.0), lambda n, rng: _unit_rows(n, 9, rng)),
]
IDS = [c[0] for c in COMPRESSIBLE]


def _unit_rows(n, d, rng):
    x = rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[::3] *= 0.4  # some inputs inside the ball: PrivUnit2's ratio is then a mixture
    x[1] = 0.0
    return x


def test_the_shipped_compressible_randomizers():
    names = {c[1]().name for c in COMPRESSIBLE}
    assert {"krr", "rappor", "oue", "subset", "privunit2", "yes-no"} <= names


@pytest.mark.parametrize("case", COMPRESSIBLE, ids=IDS)
def test_batch_hooks_equal_the_per_report_path(case):
    _, make, inputs = case
    r = make()
    rng = np.random.default_rng(11)
    seeds = rng.integers(0, 256, (600, 16), dtype=np.uint8)
    seeds[0], seeds[1] = 0, 255
    decoded = r.decode_seeds(seeds)
    one = [r.decode_seed(bytes(s)) for s in seeds]
    assert len(decoded) == len(one)
    for i in range(len(one)):
        np.testing.assert_array_equal(np.asarray(decoded[i]), np.asarray(one[i]), err_msg=str(i))
    # and the seeds as 16-byte strings give the same
    np.testing.assert_array_equal(r.decode_seeds([bytes(s) for s in seeds[:20]]), decoded[:20])
    summary = r.summarize_seeds(seeds)
    want = r.summarize(decoded)
    assert summary.dtype == want.dtype and summary.shape == want.shape
    if summary.dtype.kind == "f":  # the same terms summed in another order
        np.testing.assert_allclose(summary, want, rtol=1e-12, atol=1e-12 * len(seeds))
    else:
        np.testing.assert_array_equal(summary, want)
    xs = r.check_items(inputs(len(seeds), rng))
    ratios = r.ratios_from_seeds(xs, seeds)
    np.testing.assert_array_equal(ratios, [r.ratio_from_seed(x, bytes(s))
                                           for x, s in zip(xs, seeds)])
    with pytest.raises(ValueError, match="one input per seed"):
        r.ratios_from_seeds(xs[:-1], seeds)
    empty = r.summarize_seeds(np.zeros((0, 16), dtype=np.uint8))
    assert empty.shape == want.shape and not empty.any()


def test_rejected_words_are_skipped_as_the_reference_sampler_does():
    # m = 2^62 + 1 rejects about a quarter of the words, m = 3 almost none, 2^40 none
    rng = np.random.default_rng(4)
    seeds = rng.integers(0, 256, (400, 16), dtype=np.uint8)
    moduli = np.array([2 ** 62 + 1, 3, 2 ** 40, 2 ** 62 + 1, 2 ** 63 - 1, 7], dtype=np.int64)
    draws = bounded_draws(seeds, moduli, 3)
    for s, row in zip(seeds, draws):
        prg = PRG(s.tobytes())
        assert row.tolist() == [int(prg.integers(int(m), 1)[0]) for m in moduli]
    # the first modulus really rejected words: the stream position moved past some
    words = PRG(seeds[0].tobytes()).words(64)
    assert np.any(words > np.uint64(2 ** 64 - (2 ** 64 % (2 ** 62 + 1)) - 1))


# -- the server API over batches of 17-byte reports ---------------------------------------------

def _reports(pr, n, seed=3):
    seeds = simulation_entropy(seed).seed_array(n)
    return seeds, wire.pack_rows(seeds)


def test_summarize_and_estimate_over_every_batch_form():
    r = RAPPOR(40, 2.0)
    pr = compress(r)
    seeds, rows = _reports(pr, 300)
    blob = rows.tobytes()
    listed = [bytes(x) for x in rows]
    want = r.summarize(r.decode_seeds(seeds))
    for batch in (rows, blob, listed, bytearray(blob), memoryview(blob), tuple(listed)):
        np.testing.assert_array_equal(pr.summarize(batch), want)
        np.testing.assert_array_equal(pr.decode_many(batch), np.array([pr.decode(x)
                                                                       for x in listed]))
    np.testing.assert_allclose(pr.estimate(blob), (want - 300 * r.a0) / (r.a1 - r.a0))
    np.testing.assert_array_equal(pr.seeds(blob), seeds)
    assert pr.summarize(b"").tolist() == [0] * 40 and pr.decode_many([]).shape == (0, 40)


@pytest.mark.parametrize("batch, exc, words", [
    (bytes(16), ValueError, "multiple of 17"),
    (b"\x01" * 35, ValueError, "multiple of 17"),
    (b"\x01" * 17 + b"\x02" + bytes(16), ValueError, "report 1: unknown report format version 2"),
    (np.ones((3, 16), dtype=np.uint8), ValueError, "shape"),
    (np.ones((3, 17), dtype=np.int64), ValueError, "uint8"),
    (np.ones(17, dtype=np.uint8), ValueError, "shape"),
    ([b"\x01" * 17, b"\x01" * 16], ValueError, "report 1: a compressed report is 17 bytes"),
    ([b"\x01" * 17, "x" * 17], TypeError, "report 1"),
    ([b"\x01" * 17, None], TypeError, "report 1"),
    ("\x01" * 17, TypeError, "reports must be bytes"),
    (17, TypeError, "reports must be bytes"),
    ([bytes([0]) + bytes(16)], ValueError, "report 0: unknown report format version 0"),
])
def test_bad_batches_are_refused_naming_the_report(batch, exc, words):
    pr = compress(KRR(8, 1.0))
    for call in (pr.summarize, pr.decode_many, pr.estimate):
        with pytest.raises(exc, match=words):
            call(batch)


def test_a_report_array_is_checked_row_by_row():
    pr = compress(RAPPOR(8, 1.0))
    _, rows = _reports(pr, 50)
    rows[37, 0] = 9
    with pytest.raises(ValueError, match="report 37: unknown report format version 9"):
        pr.summarize(rows)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.binary(max_size=17 * 5), version=st.booleans())
def test_random_blobs_decode_as_their_reports_or_are_refused(data, version):
    if version and data:  # mostly valid versions, so that decoding is exercised too
        data = bytes(b if i % 17 else wire.VERSION for i, b in enumerate(data))
    pr = compress(SubsetSelection(8, 1.0))
    chunks = [data[i:i + 17] for i in range(0, len(data), 17)]
    ok = len(data) % 17 == 0 and all(c[0] == wire.VERSION for c in chunks)
    if not ok:
        with pytest.raises(ValueError, match="a batch of compressed reports is a multiple of 17 bytes"):
            pr.decode_many(data)
        return
    got = pr.decode_many(data)
    assert got.shape == (len(chunks), pr.randomizer.d)
    for c, row in zip(chunks, got):
        np.testing.assert_array_equal(pr.decode(c), row)


def test_compressed_privunit2_batches():
    comp = CompressedPrivUnit2(12, 4.0, split=2, entropy=Entropy(deterministic_source(5)))
    x = _unit_rows(40, 12, np.random.default_rng(2))
    reps = comp.encode_many(x)
    dec = comp.decode_many(reps)
    np.testing.assert_array_equal(dec, np.array([comp.decode(r) for r in reps]))
    arr = np.array([[np.frombuffer(s, dtype=np.uint8) for s in r] for r in reps])
    np.testing.assert_array_equal(comp.decode_many(arr), dec)
    np.testing.assert_array_equal(comp.decode_many(arr.tobytes()), dec)
    np.testing.assert_allclose(comp.summarize(reps), dec.sum(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(comp.estimate(reps), dec.mean(axis=0), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="report 1: a report has 2 seeds"):
        comp.decode_many([reps[0], reps[1][:1]])
    with pytest.raises(ValueError, match="multiple of 34"):
        comp.summarize(arr.tobytes()[:-17])


# -- the simulated batch encoder ------------------------------------------------------------------

class ToySimulation(Entropy):
    """Seeded simulation entropy whose seeds carry only SEED_BITS random bits (the toy PRG of
    test_compression: the exact output law is then enumerable)."""

    def __init__(self, seed):
        super().__init__(deterministic_source(seed))
        self.for_simulation = True

    def seed_array(self, count):
        vals = np.frombuffer(self.source(2 * count), dtype="<u2") % 2 ** SEED_BITS
        out = np.zeros((count, 16), dtype=np.uint8)
        out[:, 0], out[:, 1] = vals & 255, vals >> 8
        return out


@pytest.mark.parametrize("trials", [5, 1])
def test_simulated_encoder_has_the_exact_alg1_law_on_a_toy_prg(trials):
    """Chi-square of the seeds the batch encoder outputs against the enumerated law of FT21
    Alg. 1 with T trials (docs/theory.md §5.2), which includes the fresh seed sent when every
    trial rejects ((1 - a)^5 ~ 4% here, so that branch is exercised)."""
    rand = ToyKRR(6, 1.0)
    eps = rand.deletion_eps
    pr = compress(rand, tv_target=(1 - math.exp(-eps)) ** trials * 1.0000001)
    assert pr.max_trials == trials
    x, n = 2, 40_000
    out = pr.encode_many_simulated(np.full(n, x), ToySimulation(17))
    assert out.shape == (n, 17) and np.all(out[:, 0] == wire.VERSION) and not out[:, 3:].any()
    seen = np.bincount(out[:, 1].astype(int) | (out[:, 2].astype(int) << 8),
                       minlength=2 ** SEED_BITS)
    expected = n * exact_law(rand, x, trials)
    assert stats.chisquare(seen, expected).pvalue > 1e-5
    # pooled into the decoded outputs: the law of the compressed k-RR report
    ys = np.array([rand.decode_seed(bytes([s & 255, s >> 8]) + bytes(14))
                   for s in range(2 ** SEED_BITS)])
    obs = np.bincount(ys, weights=seen, minlength=rand.k)
    exp = np.bincount(ys, weights=expected, minlength=rand.k)
    assert ((obs - exp) ** 2 / exp).sum() < stats.chi2.isf(1e-4, rand.k - 1)


@pytest.mark.parametrize("rand", [RAPPOR(64, 2.0), OUE(64, 2.0)], ids=["rappor", "oue"])
def test_simulated_rappor_is_unbiased_with_the_stated_variance(rand):
    n = 20_000
    pr = compress(rand)
    xs = np.arange(n) % 8  # items 0..7, 2,500 users each
    reps = pr.encode_many_simulated(xs, simulation_entropy(21))
    f = np.bincount(xs, minlength=rand.k)
    est = pr.estimate(reps)
    var = rand.variance(n, f)
    z = (est - f) / np.sqrt(var)
    assert np.max(np.abs(z)) < 5
    # the mean of k squared z-scores is about 1 (sd sqrt(2/k) = 0.18 for independent items)
    assert 0.45 < np.mean(z ** 2) < 1.7
    # bit frequencies of the decoded reports of users holding 0: a1 at bit 0, a0 elsewhere
    bits = pr.decode_many(reps[xs == 0])
    m = bits.shape[0]
    assert abs(bits[:, 0].mean() - rand.a1) < 5 * math.sqrt(rand.a1 * (1 - rand.a1) / m)
    rest = bits[:, 1:].mean(axis=0)
    assert np.max(np.abs(rest - rand.a0)) < 5 * math.sqrt(rand.a0 * (1 - rand.a0) / m)


def test_simulated_encoder_is_reproducible_and_matches_the_client_law_for_krr():
    rand = KRR(8, 1.5)
    pr = compress(rand)
    a = pr.encode_many_simulated(np.full(4000, 5), simulation_entropy(1))
    assert np.array_equal(a, pr.encode_many_simulated(np.full(4000, 5), simulation_entropy(1)))
    comp = pr.decode_many(a)
    plain = rand.randomize_many(np.full(4000, 5), simulation_entropy(2))
    table = np.vstack([np.bincount(comp, minlength=8), np.bincount(plain, minlength=8)])
    assert stats.chi2_contingency(table).pvalue > 1e-5


def test_simulated_privunit2_means_are_unbiased():
    d, n = 16, 4000
    comp = CompressedPrivUnit2(d, 4.0, split=2)
    x = _unit_rows(n, d, np.random.default_rng(8))
    reps = comp.encode_many_simulated(x, simulation_entropy(4))
    assert reps.shape == (n, 2, 17)
    zs = comp.decode_many(reps)
    z = (zs.mean(axis=0) - x.mean(axis=0)) / np.sqrt(np.var(zs, axis=0) / n)
    assert np.max(np.abs(z)) < 5
    np.testing.assert_allclose(comp.estimate(reps), zs.mean(axis=0), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("entropy", [SYSTEM, Entropy(), Entropy(deterministic_source(1)), None,
                                     "seed"])
def test_the_simulated_encoders_refuse_client_entropy(entropy):
    with pytest.raises(ValueError, match="simulations"):
        compress(RAPPOR(8, 1.0)).encode_many_simulated([1, 2], entropy)
    with pytest.raises(ValueError, match="simulations"):
        CompressedPrivUnit2(4, 1.0).encode_many_simulated(np.eye(4)[:2], entropy)


def test_simulated_encoder_checks_inputs_and_ratios():
    pr = compress(RAPPOR(8, 1.0))
    with pytest.raises(ValueError, match="every item must be in"):
        pr.encode_many_simulated([0, 8], simulation_entropy(1))
    assert pr.encode_many_simulated(np.zeros(0, dtype=int), simulation_entropy(1)).shape == (0, 17)

    class Lying(KRR):
        def ratios_from_seeds(self, xs, seeds):
            return np.full(len(xs), 1e9)

    with pytest.raises(ValueError, match="deletion eps is wrong"):
        compress(Lying(4, 1.0)).encode_many_simulated([1, 2], simulation_entropy(1))


# -- what compress() takes, and why not ---------------------------------------------------------

@pytest.mark.parametrize("rand, why", [
    (PIRappor(100, 2.0), r"PI-RAPPOR report is \d+ bits, already shorter than a 17-byte"),
    (VectorPIRappor(100, 2.0, 5), r"report is \d+ bits, already shorter than a 17-byte"),
    (OLH(100, 2.0), r"OLH report is \d+ bits, already shorter than a 17-byte"),
    (HadamardResponse(100, 2.0, variant="basic"), r"Hadamard response report is 7 bits"),
    (OneBitSphere(8, 1.0), "no reference sampler"),
])
def test_compress_refuses_naming_the_reason(rand, why):
    assert rand.compression_refusal() is not None
    with pytest.raises(ValueError, match=why):
        compress(rand)


def test_a_user_randomizer_without_a_reference_law_is_refused_by_the_default():
    base = EXAMPLES[0][1]()

    class NoSampler(type(base)):
        name = "no-sampler-test"
        sample = LocalRandomizer.sample

    r = NoSampler(1.0)
    assert "no reference sampler" in r.compression_refusal()
    with pytest.raises(ValueError, match="does not take .*no reference sampler"):
        compress(r)


def test_a_zero_gaussian_vector_decodes_to_e0_instead_of_failing():
    """In d = 2 a seed whose first word has its top 53 bits zero (u1 = 0, so both Gaussians
    are 0) can be found by search; the server must not divide by zero on it."""
    from ldpcompress.kernels.seeds import sphere_from_words
    for d in (2, 3, 5):
        v = np.full(d, np.nan)
        sphere_from_words(np.zeros(2 * ((d + 1) // 2), dtype=np.uint64), v)
        np.testing.assert_array_equal(v, np.eye(d)[0])
    words = np.array([1 << 11, 0], dtype=np.uint64)  # u1 = 2^-53: tiny but not zero
    v = np.empty(2)
    sphere_from_words(words, v)
    np.testing.assert_allclose(v, [1.0, 0.0])
