"""Compression by rejection sampling (docs/theory.md §5): exact law, DP bounds, AES wire format."""
import math
import subprocess
import sys

import numpy as np
import pytest
from Crypto.Cipher import AES
from scipy import stats

from hang import no_hang
from reference.compression import SEED_BITS, ToyKRR, exact_law
from ldpcompress.compression import wire
from ldpcompress.compression.sampler import compress, trials_for
from ldpcompress.core.entropy import Entropy, deterministic_source
from ldpcompress.core.prg import PRG, keystream, uniform_at
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.rappor import RAPPOR
from ldpcompress.randomizers.subset import SubsetSelection


def toy_entropy(seed):
    """CSPRNG stand-in for the test: seeds carry only SEED_BITS random bits."""
    src = deterministic_source(seed)

    class Toy(Entropy):
        def seeds(self, count):
            vals = np.frombuffer(src(2 * count), dtype="<u2") % 2 ** SEED_BITS
            return [bytes([v & 255, v >> 8]) + bytes(14) for v in vals]

    return Toy(src)


def test_exact_law_and_dp_bounds_with_a_toy_prg():
    rand = ToyKRR(6, 1.0)
    trials = 5
    laws = [exact_law(rand, x, trials) for x in range(rand.k)]
    assert all(abs(l.sum() - 1) < 1e-12 for l in laws)
    eps = rand.deletion_eps
    uniform = 1 / 2 ** SEED_BITS
    for l in laws:  # deletion 2 eps w.r.t. uniform seeds for ANY PRG (FT21 Lemma 3.6)
        assert np.all(l <= math.exp(2 * eps) * uniform * (1 + 1e-12))
        assert np.all(l >= math.exp(-2 * eps) * uniform * (1 - 1e-12))
    for l1 in laws:
        for l2 in laws:
            assert np.all(l1 <= math.exp(4 * eps) * l2 * (1 + 1e-12))
    # empirical frequencies of the real encoder match the exact law (chi-square, fixed seed)
    pr = compress(rand, tv_target=(1 - math.exp(-eps)) ** trials * 1.0000001,
                  entropy=toy_entropy(7))
    assert pr.max_trials == trials
    x, n = 2, 40_000
    seen = np.zeros(2 ** SEED_BITS)
    for _ in range(n):
        seed = wire.unpack(pr.encode(x))
        seen[rand.toy_seed_value(seed)] += 1
    expected = n * laws[x]
    # pool the law into the decoded outputs (cells with enough mass) for the chi-square
    ys = np.array([rand.decode_seed(bytes([s & 255, s >> 8]) + bytes(14)) for s in range(2 ** SEED_BITS)])
    obs = np.bincount(ys, weights=seen, minlength=rand.k)
    exp = np.bincount(ys, weights=expected, minlength=rand.k)
    chi2 = ((obs - exp) ** 2 / exp).sum()
    assert chi2 < stats.chi2.isf(1e-4, rand.k - 1)
    assert stats.chisquare(seen, expected).pvalue > 1e-5


def test_trials_from_tv_target():
    for eps in (0.5, 2.0, 4.0):
        t = trials_for(eps, 2.0 ** -40)
        assert (1 - math.exp(-eps)) ** t <= 2.0 ** -40 < (1 - math.exp(-eps)) ** (t - 1)


def test_keystream_is_aes_ctr_as_specified():
    # FIPS-197 style known answer: AES-128 with the all-zero key on the all-zero block
    assert keystream(bytes(16), 16).hex() == "66e94bd4ef8a2c3b884cfa59ca342b2e"
    seed = bytes(range(16))
    ecb = AES.new(seed, AES.MODE_ECB)
    blocks = b"".join(ecb.encrypt(bytes(8) + i.to_bytes(8, "big")) for i in range(4))
    assert keystream(seed, 64) == blocks
    words = np.frombuffer(blocks, dtype="<u8")
    assert np.array_equal(PRG(seed).words(8), words)
    assert uniform_at(seed, 3) == (int(words[3]) >> 11) * 2.0 ** -53
    ints = PRG(seed).integers(10, 8)
    assert np.array_equal(ints, (words % np.uint64(10)).astype(np.int64))  # no word rejected here


def test_decode_is_deterministic_across_processes():
    seed = bytes(range(16))
    code = ("from ldpcompress.randomizers import RAPPOR; from ldpcompress.compression import compress;"
            "import sys; pr = compress(RAPPOR(64, 2.0));"
            "sys.stdout.write(''.join('1' if b else '0' for b in pr.decode(bytes([1]) + bytes(range(16)))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    here = compress(RAPPOR(64, 2.0)).decode(wire.pack(seed))
    assert out == "".join("1" if b else "0" for b in here)
    # and it is the documented sampler: bit j = [u_j < a0] on the AES-CTR stream
    u = PRG(seed).uniform(64)
    assert np.array_equal(here, u < RAPPOR(64, 2.0).a0)


@pytest.mark.parametrize("rand", [RAPPOR(32, 2.0), RAPPOR(32, 2.0, symmetric=False)],
                         ids=["rappor-sym", "rappor-asym"])
def test_compressed_rappor_is_unbiased_with_stated_variance(rand):
    n = 3000
    ent = Entropy(deterministic_source(11))
    pr = compress(rand, entropy=ent)
    xs = np.arange(n) % 4  # items 0..3, 750 users each
    ys = np.array(pr.decode_many(pr.encode_many(xs)))
    f = np.bincount(xs, minlength=rand.k)
    est = rand.estimate(ys)
    z = (est - f) / np.sqrt(rand.variance(n, f))
    assert np.max(np.abs(z)) < 5
    # bit frequencies match the uncompressed randomizer's law (a1 on x, a0 elsewhere)
    freq_x = ys[xs == 0][:, 0].mean()
    assert abs(freq_x - rand.a1) < 5 * math.sqrt(rand.a1 * (1 - rand.a1) / (n / 4))


def test_compressed_krr_matches_uncompressed_law():
    rand = KRR(8, 1.5)
    ent = Entropy(deterministic_source(3))
    pr = compress(rand, entropy=ent)
    n = 4000
    comp = np.array(pr.decode_many(pr.encode_many([5] * n)))
    plain = np.array([rand.randomize(5, ent) for _ in range(n)])
    table = np.vstack([np.bincount(comp, minlength=8), np.bincount(plain, minlength=8)])
    assert stats.chi2_contingency(table).pvalue > 1e-5
    assert abs((comp == 5).mean() - rand.a1) < 5 * math.sqrt(rand.a1 * (1 - rand.a1) / n)


def test_subset_selection_estimator_unbiased():
    rand = SubsetSelection(16, 1.0)
    ent = Entropy(deterministic_source(5))
    n = 3000
    xs = np.arange(n) % 3
    ys = [rand.randomize(int(x), ent) for x in xs]
    assert all(len(y) == rand.d and len(set(y.tolist())) == rand.d for y in ys)
    f = np.bincount(xs, minlength=16)
    z = (rand.estimate(ys) - f) / np.sqrt(rand.variance(n, f))
    assert np.max(np.abs(z)) < 5


class LyingRandomizer(KRR):
    """Declares a deletion eps smaller than its ratio really reaches."""

    def __init__(self):
        super().__init__(4, 2.0)
        self.deletion_eps = 0.1


@pytest.mark.parametrize("call, exc, words", [
    (lambda: compress(RAPPOR(8, 1.0)).decode(b"\x01" + bytes(15)), ValueError,
     r"report must be 17 bytes \(version \+ 16-byte seed\), got 16"),
    (lambda: compress(RAPPOR(8, 1.0)).decode(b"\x02" + bytes(16)), ValueError,
     r"unknown report format version 2 \(this library reads 1\)"),
    (lambda: compress(RAPPOR(8, 1.0)).decode("seed"), TypeError, r"report must be bytes, got str"),
    (lambda: compress(RAPPOR(8, 1.0)).encode(8), ValueError, r"x must be in \[0, 8\), got 8"),
    (lambda: compress(RAPPOR(8, 1.0)).encode(-1), ValueError, r"x must be in \[0, 8\), got -1"),
    (lambda: RAPPOR(8, 0.0), ValueError, r"eps must be finite and > 0, got 0\.0"),
    (lambda: KRR(1, 1.0), ValueError, r"k must be an integer in \[2, 2147483647\], got 1"),
    (lambda: compress(LyingRandomizer()).encode(0), ValueError,
     r"leave \[e\^-eps_d, e\^eps_d\] with eps_d = 0\.1: its declared deletion eps is wrong"),
    (lambda: compress(RAPPOR(8, 1.0), tv_target=0.0), ValueError,
     r"tv_target must be in \(0, 1\), got 0\.0"),
    (lambda: PRG(bytes(15)), ValueError, r"seed must be 16 bytes, got 15"),
])
def test_bad_input(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


# -- hangs refused up front (issue 13) ----------------------------------------------------------

def test_compression_refuses_too_many_expected_trials_quickly():
    # was: minutes of rejection sampling (e^16 ~ 8.9e6 expected trials per report)
    with no_hang("compress(RAPPOR(16, 16)).encode"), pytest.raises(ValueError, match="expected trials per report") as err:
        compress(RAPPOR(16, 16.0)).encode(0)
    msg = str(err.value)
    assert "8.886e+06" in msg and "eps/K" in msg and "max_expected_trials" in msg
    # the limit is a parameter: a caller who accepts the cost may raise it
    assert compress(RAPPOR(16, 16.0), max_expected_trials=1e7).expected_trials == \
        pytest.approx(math.exp(16.0))
    with pytest.raises(ValueError, match="expected trials per report"):
        compress(KRR(4, 3.0), max_expected_trials=2.0)  # e^eps_d = (e^3 + 3)/4 ~ 5.8 > 2
    for bad in (0.5, float("nan"), "10", True):
        with pytest.raises((ValueError, TypeError), match="max_expected_trials must be"):
            compress(KRR(4, 1.0), max_expected_trials=bad)


@pytest.mark.parametrize("bad", [float("nan"), 1.0, 0.0, "0.1", True])
def test_tv_target_validated(bad):
    with pytest.raises((ValueError, TypeError), match="tv_target must be"):
        compress(KRR(4, 1.0), tv_target=bad)
