"""Bulk client coins (core.coins) and the unary-encoding clients built on them: the realised
law is exactly the per-bit law the accounting structures describe (structure.coin / kept).

Exact checks use scripted word streams and an independent reference of the stated sampler;
statistical checks use fixed seeds and tolerances from the variance (chi-square quantiles at
1e-6, z-scores within 6)."""
import itertools
import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chi2

from ldpcompress.core import coins
from ldpcompress.core.coins import (CHUNK_BYTES, bernoulli_bits, coin_threshold,
                                    uniform_subsets)
from ldpcompress.core.entropy import Entropy
from ldpcompress.core.prg import PRG, WordStream
from ldpcompress.kernels.coins import bounded_draw
from ldpcompress.randomizers.rappor import OUE, RAPPOR
from ldpcompress.randomizers.structure import coin, kept
from ldpcompress.randomizers.subset import SubsetSelection

TWO53 = 2 ** 53


class Recording(WordStream):
    """Words of a seeded PRG, each served word logged (to rebuild the sampler's decisions)."""

    def __init__(self, seed: int):
        self.prg = PRG(seed.to_bytes(16, "little"))
        self.log = []

    def words(self, count):
        w = self.prg.words(count)
        self.log.append(w.copy())
        return w


def _exact_threshold(p: float) -> int:
    """ceil(p 2^53) in exact rational arithmetic."""
    return math.ceil(Fraction(p) * TWO53)


def _reference_bits(log, count, p, chunk):
    """The sampler's stated law rebuilt from the served words: per chunk, one byte B per bit;
    bit = [B < c >> 45], and where B == c >> 45 the next word's top 45 bits T decide
    [(B << 45) | T < c], i.e. the 53-bit coin j < c."""
    c = _exact_threshold(p)
    calls = iter(log)
    out = []
    for start in range(0, count, chunk):
        size = min(chunk, count - start)
        raw = next(calls).view(np.uint8)[:size]
        ties = [i for i in range(size) if raw[i] == c >> 45]
        tails = next(calls).tolist() if ties else []
        assert len(tails) == len(ties)
        bits = [int(b) << 45 < c for b in raw]  # j = (B << 45) + T < c with T = 0 ...
        for i, w in zip(ties, tails):
            bits[i] = (int(raw[i]) << 45) | (w >> 19) < c  # ... unless the byte ties
        out.extend(bits)
    assert next(calls, None) is None  # every served word was used for a coin
    return np.array(out, dtype=bool)


EDGE_P = [0.0, 1.0, 0.2, 0.5, 2.0 ** -53, 3 * 2.0 ** -53, 1 / (math.exp(36.0) + 1),
          51 / 256, 1 / (math.exp(1.0) + 1), 1 - 2.0 ** -53, math.nextafter(0.5, 0)]


@pytest.mark.parametrize("p", EDGE_P)
def test_threshold_is_the_exact_ceiling_and_matches_the_structures(p):
    assert coin_threshold(p) == _exact_threshold(p)
    assert Fraction(coin_threshold(p), TWO53) == coin(p)  # the law accounting uses
    assert 1 - Fraction(coin_threshold(p), TWO53) == kept(p)


@pytest.mark.parametrize("p", EDGE_P)
def test_bernoulli_bits_are_the_53_bit_coin_exactly(p, monkeypatch):
    chunk = 4096  # several chunks, with ties in most of them
    monkeypatch.setattr(coins, "CHUNK_BYTES", chunk)
    stream = Recording(7)
    count = 3 * chunk + 333
    got = bernoulli_bits(stream, count, p)
    assert got.dtype == np.bool_ and got.shape == (count,)
    assert np.array_equal(got, _reference_bits(stream.log, count, p, chunk))


def test_bernoulli_bits_decide_ties_on_the_45_bit_tail(monkeypatch):
    """A scripted stream: three chunks holding every byte value once; the tied byte 77 takes
    the tail c mod 2^45 - 1 (bit 1), then c mod 2^45 (bit 0), then the largest (bit 0)."""
    p = (77 * 2 ** 45 + 1000) / TWO53  # exact: c = 77 2^45 + 1000
    assert coin_threshold(p) == 77 * 2 ** 45 + 1000
    every_byte = np.arange(256, dtype=np.uint8).view("<u8")
    served = [every_byte, np.array([999 << 19], dtype="<u8"),
              every_byte, np.array([1000 << 19], dtype="<u8"),
              every_byte, np.array([(1 << 64) - 1], dtype="<u8")]

    class Scripted(WordStream):
        def words(self, count):
            w = served.pop(0)
            assert w.size == count
            return w

    monkeypatch.setattr(coins, "CHUNK_BYTES", 256)
    got = bernoulli_bits(Scripted(), 768, p)
    want = np.tile(np.arange(256) < 77, 3)
    want[77] = True
    assert np.array_equal(got, want) and not served


class RecordingEntropy(Entropy):
    """An entropy source whose expand() is a Recording stream (kept for inspection)."""

    def expand(self):
        self.stream = Recording(3)
        return self.stream


class BoundaryUniforms(RecordingEntropy):
    """Its stream's uniform(n) calls (the clients' own-item coins) return j 2^-53 for j at the
    realised threshold c = ceil(a1c 2^53) and its neighbours, in turn."""

    def __init__(self, a1c):
        super().__init__()
        c = coin_threshold(a1c)
        self.js = np.array([c - 2, c - 1, c, c + 1], dtype=np.int64)

    def expand(self):
        stream = super().expand()
        js = self.js
        stream.uniform = lambda n: np.resize(js, n) * 2.0 ** -53
        return stream


@pytest.mark.parametrize("make", [lambda: OUE(50, 1.0), lambda: RAPPOR(50, 3.0),
                                  lambda: RAPPOR(7, 36.0)])
def test_rappor_client_is_exactly_the_per_bit_coins(make, monkeypatch):
    """randomize_many rebuilt from the words it was served: noise bits are the 53-bit coins
    [u < a0] (through the byte-and-tail reference); bit x is [u >= a1c], i.e. 1 iff
    j >= ceil(a1c 2^53) for u = j 2^-53: Pr = kept(a1c), checked at the boundary."""
    monkeypatch.setattr(coins, "CHUNK_BYTES", 1024)
    oracle = make()
    n = 90
    xs = (np.arange(n) * 7) % oracle.k
    ent = BoundaryUniforms(oracle.a1c)
    got = oracle.randomize_many(xs, ent)
    want = _reference_bits(ent.stream.log, n * oracle.k, oracle.a0, 1024).reshape(n, oracle.k)
    want[np.arange(n), xs] = np.resize([False, False, True, True], n)
    assert np.array_equal(got, want)


def test_subset_client_includes_x_exactly_on_the_kept_coin():
    oracle = SubsetSelection(40, 1.0, d=6)
    xs = np.arange(500) % 40
    ent = BoundaryUniforms(oracle.a1c)
    got = oracle.randomize_many(xs, ent)
    assert np.array_equal((got == xs[:, None]).any(axis=1),
                          np.resize([False, False, True, True], xs.size))


@pytest.mark.parametrize("width", [6, 9])
def test_bounded_draw_is_exactly_uniform_for_every_bound(width):
    """Lemire's rule on all words of a small width: each value keeps floor(2^w / b) words."""
    size = 1 << width
    for bound in range(1, size + 1):
        counts = np.zeros(bound, dtype=np.int64)
        for w in range(size):
            v = bounded_draw(w, bound, width)
            assert -1 <= v < bound
            if v >= 0:
                counts[v] += 1
        assert np.all(counts == size // bound), bound


def _chi2_ok(observed, expected, dof):
    """Pearson's statistic within the central 1 - 2e-6 of chi2(dof)."""
    return _in_chi2(float(np.sum((observed - expected) ** 2 / expected)), dof)


def _in_chi2(stat, dof):
    return chi2.sf(stat, dof) > 1e-6 and chi2.cdf(stat, dof) > 1e-6, stat


def _scores_ok(z):
    """Independent standardised scores: each within 6, their sum of squares ~ chi2(size)."""
    return np.max(np.abs(z)) < 6 and _in_chi2(float(np.sum(z ** 2)), z.size)[0]


@pytest.mark.parametrize("make", [lambda: OUE(3, 1.0), lambda: RAPPOR(3, 0.7),
                                  lambda: RAPPOR(4, 2.5)])
def test_rappor_joint_law_of_a_report_is_exact(make):
    """Chi-square over all 2^k reports of one user: independent bits, Bern(kept(a1c)) at x
    and Bern(coin(a0)) elsewhere (the realised law of the accounting structure)."""
    oracle = make()
    k, n, x = oracle.k, 60_000, 1
    reps = oracle.randomize_many(np.full(n, x), Entropy.seeded_for_simulation(21))
    code = reps.astype(np.int64) @ (1 << np.arange(k))
    observed = np.bincount(code, minlength=1 << k)
    probs = [float(kept(oracle.a1c)) if j == x else float(coin(oracle.a0)) for j in range(k)]
    expected = np.array([n * math.prod(q if (c >> j) & 1 else 1 - q
                                       for j, q in enumerate(probs)) for c in range(1 << k)])
    ok, stat = _chi2_ok(observed, expected, (1 << k) - 1)
    assert ok, stat


@pytest.mark.parametrize("make", [lambda: OUE(300, 1.0), lambda: RAPPOR(300, 1.5),
                                  lambda: OUE(300, 6.0)])
def test_rappor_per_position_chi_square(make):
    """Every bit position: the noise bits' count against n_j coin(a0), the user's bits
    against n_x kept(a1c); the per-position statistics summed over positions ~ chi2(2k)."""
    oracle = make()
    k, n = oracle.k, 6000
    xs = np.arange(n) % k
    reps = oracle.randomize_many(xs, Entropy.seeded_for_simulation(4))
    own = np.zeros((n, k), dtype=bool)
    own[np.arange(n), xs] = True
    stat = 0.0
    for mask, q in ((~own, float(coin(oracle.a0))), (own, float(kept(oracle.a1c)))):
        m = mask.sum(axis=0)
        ones = (reps & mask).sum(axis=0)
        z2 = (ones - m * q) ** 2 / (m * q * (1 - q))
        assert np.max(z2) < 36
        stat += float(z2.sum())
    assert _in_chi2(stat, 2 * k)[0], stat


def test_rappor_bits_pairwise_independent_within_and_across_reports():
    """Centred products (B_i - q_i)(B_j - q_j) summed over reports are uncorrelated with
    variance n v_i v_j when bits are independent: every within-report pair, and each position
    of consecutive reports (the stream runs on across rows), as standardised scores."""
    oracle = OUE(48, 2.0)
    n = 30_000
    x = 5
    reps = oracle.randomize_many(np.full(n, x), Entropy.seeded_for_simulation(8)).astype(float)
    q = np.full(oracle.k, float(coin(oracle.a0)))
    q[x] = float(kept(oracle.a1c))
    c = (reps - q) / np.sqrt(q * (1 - q))
    within = (c.T @ c / math.sqrt(n))[np.triu_indices(oracle.k, 1)]
    across = (c[1:] * c[:-1]).sum(axis=0) / math.sqrt(n - 1)
    assert _scores_ok(within) and _scores_ok(across)


def _subset_law(k, d, x, include_p):
    """Exact Pr of each sorted d-subset of [k] for a user holding x."""
    law = {}
    for s in itertools.combinations(range(k), d):
        if x in s:
            law[s] = include_p / math.comb(k - 1, d - 1)
        else:
            law[s] = (1 - include_p) / math.comb(k - 1, d)
    return law


@pytest.mark.parametrize("k,d,eps", [(6, 2, 1.0), (6, 3, 0.5), (5, 4, 2.0), (20, 2, 1.0),
                                     (3, 1, 1.0)])
def test_subset_law_is_exact(k, d, eps):
    """Chi-square over every d-subset, the user's item fixed (k = 20, d = 2 takes the sort
    path, the others the mark scan)."""
    oracle = SubsetSelection(k, eps, d=d)
    n, x = 80_000, min(2, k - 1)
    reps = oracle.randomize_many(np.full(n, x), Entropy.seeded_for_simulation(k + d))
    assert np.all(np.diff(reps, axis=1) > 0) and reps.min() >= 0 and reps.max() < k
    law = _subset_law(k, d, x, float(kept(oracle.a1c)))
    index = {s: i for i, s in enumerate(law)}
    observed = np.bincount([index[tuple(r)] for r in reps.tolist()], minlength=len(law))
    expected = n * np.array(list(law.values()))
    ok, stat = _chi2_ok(observed, expected, len(law) - 1)
    assert ok, stat


@pytest.mark.parametrize("scan", [True, False])
def test_uniform_subsets_every_item_and_both_orderings(scan):
    """Both row orderings, every held item x, include and not: chi-square over (x, include,
    subset) cells; rows are sorted and distinct."""
    k, d, n = 5, 2, 60_000
    stream = PRG(bytes(range(16)))
    xs = np.arange(n, dtype=np.int64) % k
    include = np.arange(n) % 3 == 0
    out = uniform_subsets(stream, xs, k, d, include, scan=scan)
    assert np.all(np.diff(out, axis=1) > 0)
    assert np.all((out == xs[:, None]).any(axis=1) == include)  # x in S iff included
    for x in range(k):
        for inc in (True, False):
            rows = out[(xs == x) & (include == inc)]
            subs = [s for s in itertools.combinations(range(k), d) if (x in s) == inc]
            index = {s: i for i, s in enumerate(subs)}
            observed = np.bincount([index[tuple(r)] for r in rows.tolist()], minlength=len(subs))
            ok, stat = _chi2_ok(observed, np.full(len(subs), len(rows) / len(subs)),
                                len(subs) - 1)
            assert ok, (x, inc, stat)


@pytest.mark.parametrize("scan", [True, False])
def test_uniform_subsets_resume_across_word_batches(scan, monkeypatch):
    """The kernel stops mid-row when its words run out and resumes with the next batch: the
    stream is consumed in order, so 2 words per batch give the same rows as one batch."""
    k, d, n = 30, 7, 400
    xs = np.arange(n, dtype=np.int64) % k
    include = np.arange(n) % 2 == 0
    whole = uniform_subsets(PRG(bytes(16)), xs, k, d, include, scan=scan)
    monkeypatch.setattr(coins, "CHUNK_BYTES", 8)
    pieces = uniform_subsets(PRG(bytes(16)), xs, k, d, include, scan=scan)
    assert np.array_equal(whole, pieces)
    assert np.array_equal(whole, uniform_subsets(PRG(bytes(16)), xs, k, d, include,
                                                 scan=not scan))


def test_subset_marginals_and_pairs_at_moderate_k():
    """k = 100, d = 10: each other item is reported w.p. (pi (d-1) + (1-pi) d)/(k-1) and each
    pair of other items w.p. (pi (d-1)(d-2) + (1-pi) d (d-1))/((k-1)(k-2)), pi = kept(a1c)."""
    oracle = SubsetSelection(100, 2.0, d=10)
    k, d, n, x = 100, 10, 40_000, 7
    reps = oracle.randomize_many(np.full(n, x), Entropy.seeded_for_simulation(3))
    hot = np.zeros((n, k))
    hot[np.arange(n)[:, None], reps] = 1
    pi = float(kept(oracle.a1c))
    others = np.delete(np.arange(k), x)
    m1 = (pi * (d - 1) + (1 - pi) * d) / (k - 1)
    m2 = (pi * (d - 1) * (d - 2) + (1 - pi) * d * (d - 1)) / ((k - 1) * (k - 2))
    counts = hot[:, others].sum(axis=0)
    z = (counts - n * m1) / math.sqrt(n * m1 * (1 - m1))
    assert _scores_ok(z)
    own = hot[:, x].sum()
    assert abs(own - n * pi) < 6 * math.sqrt(n * pi * (1 - pi))
    pairs = (hot[:, others].T @ hot[:, others])[np.triu_indices(k - 1, 1)]
    zp = (pairs - n * m2) / math.sqrt(n * m2 * (1 - m2))
    assert np.max(np.abs(zp)) < 6.5
    assert abs(float(np.mean(zp ** 2)) - 1) < 0.1  # 4851 pair scores, each of variance ~1


def test_expand_keys_a_fresh_aes_stream_from_the_source():
    served = []

    def source(nbytes):
        b = bytes((len(served) * 31 + i) % 256 for i in range(nbytes))
        served.append(b)
        return b

    ent = Entropy(source)
    first, second = ent.expand(), ent.expand()
    assert [len(b) for b in served] == [16, 16]
    assert np.array_equal(first.words(40), PRG(served[0]).words(40))
    assert np.array_equal(second.words(40), PRG(served[1]).words(40))
    a = Entropy.seeded_for_simulation(5).expand().words(8)
    assert np.array_equal(a, Entropy.seeded_for_simulation(5).expand().words(8))
    assert not np.array_equal(a, Entropy.seeded_for_simulation(6).expand().words(8))


@pytest.mark.parametrize("make,row_bytes", [(lambda: OUE(1000, 1.0), 1000),
                                            (lambda: SubsetSelection(1000, 1.0), 269 * 8),
                                            (lambda: SubsetSelection(2 ** 31 - 1, 30.0, d=2),
                                             16)])
def test_client_memory_is_the_output_plus_bounded_chunks(make, row_bytes):
    """Peak allocation of a 20,000-report batch: the reports, plus temporaries bounded by a
    few stream chunks and O(n) per-report coins -- not a multiple of n x k, and no k-sized
    table when k is far above d."""
    oracle = make()
    n = 20_000
    xs = np.arange(n) % oracle.k
    oracle.randomize_many(xs[:10])  # compile outside the measurement
    tracemalloc.start()
    try:
        reps = oracle.randomize_many(xs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert reps.nbytes == n * row_bytes
    assert peak <= reps.nbytes + 8 * CHUNK_BYTES + 64 * n, (peak, reps.nbytes)


@pytest.mark.parametrize("make", [lambda: OUE(10, 1.0), lambda: RAPPOR(10, 1.0),
                                  lambda: SubsetSelection(10, 1.0, d=3)])
def test_unary_clients_name_a_wrong_entropy_and_accept_empty_batches(make):
    oracle = make()
    for bad in (5, PRG(bytes(16))):
        with pytest.raises(TypeError, match="entropy must be an ldpcompress Entropy"):
            oracle.randomize_many(np.array([1]), bad)
    # no source given: the OS CSPRNG (the contract's default), never a seeded one
    assert oracle.randomize_many(np.array([1]), None).shape == (1, getattr(oracle, "d", oracle.k))
    empty = oracle.randomize_many(np.zeros(0, dtype=np.int64))
    assert empty.shape == (0, getattr(oracle, "d", oracle.k))


def test_without_constant_time_aes_real_clients_draw_from_the_source(monkeypatch):
    """No AES instructions: pycryptodome's AES would be table-based (its cache timing can leak
    the key, hence the coins), so a real client's coins come from the source itself, one byte
    per bit; a seeded simulation source still expands (the same reports on any machine)."""
    served = []

    def source(nbytes):
        served.append(nbytes)
        return bytes(nbytes)  # all-zero bytes: every noise bit is [0 < c >> 45] or a tie

    oracle = OUE(64, 1.0)
    xs = np.arange(100) % 64
    sim = oracle.randomize_many(xs, Entropy.seeded_for_simulation(9))
    monkeypatch.setattr(coins, "HARDWARE_AES", False)
    oracle.randomize_many(xs, Entropy(source))
    assert served[0] != 16 and sum(served) >= 100 * 64  # no key drawn, a byte per coin
    assert np.array_equal(oracle.randomize_many(xs, Entropy.seeded_for_simulation(9)), sim)
    monkeypatch.setattr(coins, "HARDWARE_AES", True)
    served.clear()
    oracle.randomize_many(xs, Entropy(source))
    assert served == [16]  # the key; every coin from its AES-CTR stream


@pytest.mark.parametrize("layout, hardware", [
    ({"_raw_aesni_lib": object(), "_raw_aes_lib": object()}, True),   # pycryptodome 3.x, AES-NI
    ({"_raw_aesni_lib": None, "_raw_aes_lib": object()}, False),      # 3.x without AES-NI
    ({"_raw_aes_hw": (object(), object()), "_raw_aes_lib": object()}, True),  # 4.x
    ({"_raw_aes_hw": None, "_raw_aes_lib": object()}, False),         # 4.x, table AES only
    ({"_raw_aes_lib": object()}, False),                              # an unknown layout
])
def test_hardware_aes_is_read_for_every_allowed_pycryptodome(monkeypatch, layout, hardware):
    """HARDWARE_AES read the attribute only pycryptodome 4.x has (_raw_aes_hw): under 3.x
    (allowed by the range >= 3.15; its AES module keeps the AES-NI library as _raw_aesni_lib)
    it was False on an AES-NI machine, and clients took the slower path. A stand-in module
    with each version's layout (as AES.py of 3.15-3.24 and 4.x define it)."""
    import types

    import Crypto.Cipher
    fake = types.ModuleType("Crypto.Cipher.AES")
    fake.__dict__.update(layout)
    monkeypatch.setattr(Crypto.Cipher, "AES", fake)
    assert coins._hardware_aes() is hardware


def _cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            return next((set(line.split(":", 1)[1].split()) for line in f
                         if line.startswith("flags")), set())
    except OSError:
        return set()


@pytest.mark.skipif("aes" not in _cpu_flags(), reason="no AES-NI flag in /proc/cpuinfo")
def test_hardware_aes_on_an_aes_ni_machine():
    """The processor says it has AES-NI: the installed pycryptodome must be seen using it."""
    assert coins.HARDWARE_AES is True
