"""Frequency oracles (docs/theory.md §6, §6): exact privacy of PI-RAPPOR, pairwise independence,
unbiasedness with the stated variance, histogram algorithms, wire format, bad input."""
import itertools
import math

import numpy as np
import pytest
from shipped import frequency_cases, uncovered

import ldpcompress as L
from hang import no_hang
from ldpcompress.core.entropy import Entropy, deterministic_source
from ldpcompress.randomizers.hadamard import HadamardResponse
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.olh import OLH
from ldpcompress.randomizers.pirappor import FieldReports, PIRappor, VectorPIRappor
from ldpcompress.randomizers.rappor import OUE, RAPPOR
from ldpcompress.randomizers.subset import SubsetSelection


def exact_report_law(oracle, x):
    """Pr[(a, b) | x] from the client algorithm: a uniform, r uniform in [0,s) w.p. a1 else in
    [s, p), b = r - a (x+1), enumerated over every (a, r)."""
    p, s = oracle.p, oracle.s
    law = np.zeros((p, p))
    for a in range(p):
        for r in range(p):
            pr = (oracle.a1 / s if r < s else (1 - oracle.a1) / (p - s)) / p
            law[a, (r - a * (x + 1)) % p] += pr
    return law


@pytest.mark.parametrize("symmetric", [False, True])
def test_pi_rappor_exact_privacy(symmetric):
    oracle = PIRappor(6, 1.2, symmetric=symmetric, p=13)
    laws = [exact_report_law(oracle, x) for x in range(oracle.k)]
    assert all(abs(l.sum() - 1) < 1e-12 for l in laws)
    worst = max(np.max(l1 / l2) for l1 in laws for l2 in laws)
    if symmetric:  # deletion eps w.r.t. the uniform law on F_p^2
        worst = max(np.max(np.maximum(l * 13 ** 2, 1 / (l * 13 ** 2))) for l in laws)
    assert math.log(worst) == pytest.approx(oracle.eps, rel=1e-12)
    assert oracle.eps <= 1.2 + 1e-12  # the realised eps is never above the requested one


def test_pi_rappor_bits_are_pairwise_independent():
    """Reports drawn by the library's client for input x (a simulation seed): the bit of item j
    is [(a (j+1) + b) mod p < s]; the library's counts are these bits' column sums. As the paper
    states, h(x) and h(j) are independent for j != x (a uniform, b = r - a (x+1)): the true bit
    is Bern(a1), every other bit Bern(s/p), and the true bit is independent of each other one.
    Two bits j1, j2 != x are NOT independent under the client's law (r is not uniform): their
    joint frequency is checked against the exact law enumerated from the client's algorithm.
    Tolerance: 5 standard deviations of a frequency over n reports, sqrt(q (1 - q) / n)."""
    oracle, x, n = PIRappor(6, 1.2, p=13), 2, 200_000
    p, s, a1 = oracle.p, oracle.s, oracle.a1
    reps = oracle.randomize_many(np.full(n, x), Entropy(deterministic_source(31)))
    a, b = np.asarray(reps.a), np.asarray(reps.b)
    bits = np.array([(a * (j + 1) + b) % p < s for j in range(oracle.k)])  # (k, n)
    assert bits.sum(axis=1).tolist() == oracle.counts(reps).tolist()

    def close(freq, q):
        return abs(freq - q) <= 5 * math.sqrt(q * (1 - q) / n)

    law = exact_report_law(oracle, x)  # Pr[(a, b) | x], enumerated
    aa, bb = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    for j in range(oracle.k):
        assert close(bits[j].mean(), a1 if j == x else s / p), j
    for j1, j2 in itertools.combinations(range(oracle.k), 2):
        both = bits[j1] & bits[j2]
        if x in (j1, j2):  # independent of the true bit: Pr = a1 s / p
            assert close(both.mean(), a1 * s / p), (j1, j2)
        exact = law[((aa * (j1 + 1) + bb) % p < s) & ((aa * (j2 + 1) + bb) % p < s)].sum()
        assert close(both.mean(), exact), (j1, j2)
        if x in (j1, j2):
            assert exact == pytest.approx(a1 * s / p, rel=1e-12)


def test_vector_pi_rappor_pairwise_independence():
    q, t, s = 3, 2, 1
    vecs = list(itertools.product(range(q), repeat=t))
    for v1, v2 in itertools.combinations(vecs, 2):
        both = 0
        for a in itertools.product(range(q), repeat=t):
            for b in range(q):
                h1 = (sum(x * y for x, y in zip(a, v1)) + b) % q
                h2 = (sum(x * y for x, y in zip(a, v2)) + b) % q
                both += h1 < s and h2 < s
        assert both == s * s * q ** (t - 1)


ORACLES = [
    lambda: PIRappor(64, 2.0), lambda: PIRappor(64, 1.0, symmetric=True),
    lambda: VectorPIRappor(64, 1.5, q=11), lambda: KRR(64, 2.0),
    lambda: OUE(64, 2.0), lambda: RAPPOR(64, 2.0, symmetric=True),
    lambda: SubsetSelection(64, 1.0), lambda: OLH(64, 2.0), lambda: HadamardResponse(64, 2.0),
    lambda: HadamardResponse(64, 2.0, variant="basic"), lambda: HadamardResponse(64, 4.0, t=4),
]


def test_the_variance_check_covers_every_shipped_oracle():
    # its own parameters (k = 64: the variance check needs many items), every shipped oracle
    assert not uncovered([make() for make in ORACLES])


@pytest.mark.parametrize("make", ORACLES)
def test_estimates_unbiased_with_stated_variance(make):
    oracle = make()
    n = 20_000
    data_rng = np.random.default_rng(1)  # simulated users' data, not privacy coins
    xs = data_rng.zipf(1.3, n) % oracle.k
    f = np.bincount(xs, minlength=oracle.k)
    reps = oracle.randomize_many(xs, Entropy(deterministic_source(2)))
    est = oracle.estimate(reps)
    z = (est - f) / np.sqrt(oracle.variance(n, f))
    assert np.max(np.abs(z)) < 5
    assert abs(np.mean(z ** 2) - 1) < 5 * math.sqrt(2 / oracle.k)  # the variance is right
    j = int(np.argmax(f))
    assert oracle.estimate_one(reps, j) == pytest.approx(est[j])


def test_histogram_algorithms_agree_exactly():
    oracle = PIRappor(500, 3.0)
    xs = np.random.default_rng(3).integers(0, 500, 30_000)
    reps = oracle.randomize_many(xs)
    direct = oracle.counts(reps, "direct")
    assert np.array_equal(direct, oracle.counts(reps, "enum"))
    assert all(direct[j] == oracle.count_one(reps, j) for j in (0, 17, 499))
    # a = 0 reports hit every item or none
    zero = FieldReports(np.zeros(3, np.int64), np.array([0, oracle.s, 1]), oracle.p)
    assert np.array_equal(oracle.counts(zero, "enum"), oracle.counts(zero, "direct"))
    assert np.all(oracle.counts(zero, "enum") == 2)


@pytest.mark.parametrize("eps", [1e-4, 0.01, 0.3])
def test_small_eps_keeps_a_positive_realised_eps(eps):
    oracle = PIRappor(5, eps)
    assert 2 * oracle.s < oracle.p and 0 < oracle.eps <= eps
    assert oracle.a1 > oracle.a0


def test_field_choice_and_wire_format():
    oracle = PIRappor(1000, 4.0)
    assert oracle.p > 1000 and oracle.p >= 100 * (math.exp(4) + 1)
    assert oracle.a0 >= 1 / (math.exp(4) + 1) and oracle.eps <= 4.0
    assert oracle.bits_per_report == 2 * math.ceil(math.log2(oracle.p))
    reps = oracle.randomize_many(np.arange(1000))
    data = oracle.pack(reps)
    assert len(data) == math.ceil(1000 * oracle.bits_per_report / 8)
    back = oracle.unpack(data, 1000)
    assert np.array_equal(back.a, reps.a) and np.array_equal(back.b, reps.b)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: PIRappor(10, 1.0).randomize_many(np.array([10])), ValueError,
     r"every item must be in \[0, 10\); got values in \[10, 10\]"),
    (lambda: PIRappor(10, 1.0).randomize_many(np.array([-1])), ValueError,
     r"every item must be in \[0, 10\); got values in \[-1, -1\]"),
    (lambda: PIRappor(10, 1.0).randomize_many([0.5]), TypeError,
     r"xs must be a 1-D array of integer items"),
    (lambda: PIRappor(10, 1.0, p=15), ValueError, r"p must be a prime > k, got 15"),
    (lambda: PIRappor(10, 1.0, p=7), ValueError,
     r"p must be an integer in \[11, 2147483647\], got 7"),
    (lambda: PIRappor(1, 1.0), ValueError, r"k must be an integer in \[2, 2147483647\], got 1"),
    (lambda: PIRappor(10, 0.0), ValueError, r"eps must be finite and > 0, got 0\.0"),
    (lambda: PIRappor(10, 1.0).unpack(b"\x00" * 3, 5), ValueError,
     r"5 reports over F_373 take 12 bytes, got 3"),
    (lambda: PIRappor(10, 1.0, p=13).unpack(b"\xff\xff", 1), ValueError,
     r"1 reports over F_13 take 1 bytes, got 2"),
    (lambda: PIRappor(10, 1.0, p=13).counts(PIRappor(10, 1.0, p=17).randomize_many([1])),
     ValueError, r"reports are over F_17, this oracle uses F_13"),
    (lambda: PIRappor(10, 1.0).counts(np.zeros((3, 2))), TypeError,
     r"reports must be FieldReports, got ndarray"),
    (lambda: PIRappor(10, 1.0, p=13).counts(FieldReports(np.array([1.5]), np.array([2.0]), 13)),
     TypeError, r"reports must be an integer array, got dtype float64 \(report 0 is 1\.5\)"),
    (lambda: PIRappor(10, 1.0, p=13).counts(FieldReports(np.array([13]), np.array([2]), 13)),
     ValueError, r"report 0: field element a 13 is outside \[0, 13\)"),
    (lambda: PIRappor(10, 1.0, p=13).count_one(FieldReports(np.array([1]), np.array([-2]), 13), 0),
     ValueError, r"report 0: field element b -2 is outside \[0, 13\)"),
    (lambda: VectorPIRappor(10, 1.0, q=9), ValueError, r"q must be prime, got 9"),
    (lambda: VectorPIRappor(10, 0.01, q=5), ValueError, r"q=5 is too small for eps=0\.01"),
    (lambda: PIRappor(10, 0.01, p=13), ValueError, r"p=13 is too small for eps=0\.01"),
    (lambda: VectorPIRappor(10, 1.0, q=5).counts(np.full((2, 3), 7)), ValueError,
     r"report 0: column 0 is 7, outside \[0, 5\)"),
    (lambda: KRR(1, 1.0), ValueError, r"k must be an integer in \[2, 2147483647\], got 1"),
])
def test_bad_input(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


# -- untrusted reports and operator mistakes (issue 13) ---------------------------------------

J_REFUSED = r"j must be (a real number|an integer in \[0, \d+\]), got "


def _error(call, words):
    with pytest.raises((ValueError, TypeError), match=words) as err:
        call()
    return str(err.value)


def test_hadamard_out_of_range_report_is_refused_not_a_memory_error():
    # was: counts ~1e19, a segfault or "free(): invalid next size" (bincount longer than K)
    msg = _error(lambda: HadamardResponse(10, 1.0, variant="basic").estimate(np.array([1, 16])),
                 r"report 1: index 16 is outside \[0, 16\)")
    assert "report 1" in msg and "[0, 16)" in msg


@pytest.mark.parametrize("make, bad, first", [
    (lambda: KRR(10, 1.0), np.array([3, 10, 2]), 1),
    (lambda: KRR(10, 1.0), np.array([3, 4, -1]), 2),
    (lambda: OUE(3, 1.0), np.array([[0, 1, 0], [0, 2, 0]]), 1),
    (lambda: SubsetSelection(6, 1.0, d=2), np.array([[0, 1], [2, 6]]), 1),
    (lambda: SubsetSelection(6, 1.0, d=2), np.array([[0, 1], [3, 3]]), 1),  # one user counted twice
    (lambda: OLH(6, 1.0), np.array([[1, 2, 0], [1, 2, 99]]), 1),
    (lambda: VectorPIRappor(10, 1.0, q=5), np.array([[0, 0, 0], [0, 5, 0]]), 1),
])
def test_out_of_range_reports_name_the_first_bad_one(make, bad, first):
    oracle = make()
    for call in (oracle.counts, oracle.estimate, lambda r: oracle.count_one(r, 0),
                 lambda r: oracle.estimate_one(r, 0)):
        assert f"report {first}" in _error(lambda: call(bad), f"report {first}: ")


@pytest.mark.parametrize("make, bad", [
    (lambda: KRR(10, 1.0), np.array([1.0, 2.0])),          # floats, even integral
    (lambda: KRR(10, 1.0), np.array([1, np.nan])),
    (lambda: KRR(10, 1.0), np.array([[1, 2]])),            # wrong rank
    (lambda: KRR(10, 1.0), np.array([True, False])),
    (lambda: OUE(3, 1.0), np.ones((2, 4), dtype=bool)),  # wrong width
    (lambda: OUE(3, 1.0), np.ones(3, dtype=bool)),
    (lambda: SubsetSelection(6, 1.0, d=2), np.array([[0, 1, 2]])),
    (lambda: OLH(6, 1.0), np.array([[1, 2]])),
    (lambda: HadamardResponse(10, 1.0), np.array(["1"])),
    (lambda: HadamardResponse(10, 1.0), [1, [2, 3]]),                # ragged
])
def test_malformed_report_batches_are_refused(make, bad):
    oracle = make()
    _error(lambda: oracle.estimate(bad), "reports must")


def test_uint64_and_python_int_reports_do_not_wrap():
    # 2^64 - 1 would wrap to -1 in an int64 cast, 2^70 overflows: both must be refused
    assert "report 1" in _error(lambda: KRR(10, 1.0).counts(
        np.array([1, 2 ** 64 - 1], dtype=np.uint64)), r"report 1: item \d+ is outside \[0, 10\)")
    assert "report 1" in _error(lambda: KRR(10, 1.0).counts([1, 2 ** 70]),
                                   r"report 1: item \d+ is outside \[0, 10\)")
    assert KRR(10, 1.0).counts(np.array([9, 9], dtype=np.uint8)).tolist() == [0] * 9 + [2]


FREQUENCY = frequency_cases()


@pytest.mark.parametrize("name,make,inputs", FREQUENCY, ids=[c[0] for c in FREQUENCY])
def test_empty_batch_gives_zero_estimates(name, make, inputs):
    oracle = make()
    empty = (FieldReports(np.zeros(0, np.int64), np.zeros(0, np.int64), oracle.p)
             if isinstance(oracle, PIRappor) else np.array([], dtype=np.int64))
    assert oracle.counts(empty).tolist() == [0] * oracle.k
    assert oracle.estimate(empty).tolist() == [0.0] * oracle.k
    assert oracle.count_one(empty, 0) == 0


@pytest.mark.parametrize("name,make,inputs", FREQUENCY, ids=[c[0] for c in FREQUENCY])
def test_count_one_checks_the_item(name, make, inputs):
    oracle = make()
    reps = oracle.randomize_many(np.arange(oracle.k))
    for j in (oracle.k, -1, 2.5, "0", True):
        _error(lambda: oracle.count_one(reps, j), J_REFUSED)
        _error(lambda: oracle.estimate_one(reps, j), J_REFUSED)
    assert oracle.count_one(reps, float(oracle.k - 1)) == oracle.counts(reps)[-1]


def test_unpack_refuses_nonzero_padding_and_bad_n():
    oracle = PIRappor(10, 1.0, p=17)  # 5-bit elements: one report is 10 bits, 6 padding bits
    good = oracle.pack(FieldReports(np.array([3]), np.array([4]), 17))
    assert oracle.unpack(good, 1).a.tolist() == [3]
    tampered = good[:-1] + bytes([good[-1] | 1])
    assert "padding" in _error(lambda: oracle.unpack(tampered, 1),
                               "padding bits after the last report must be zero")
    _error(lambda: oracle.unpack(good, -1), r"n must be an integer in \[0, \d+\], got -1")
    _error(lambda: oracle.unpack(good, 1.5), r"n must be an integer in \[0, \d+\], got 1\.5")
    assert len(oracle.unpack(b"", 0)) == 0


@pytest.mark.parametrize("eps", [17.2, 20.0, 30.0, 38.9, 39.0, 60.0, 1e6])
def test_large_eps_builds_fast_or_refuses(eps):
    # was: next_prime overflowed int64 in Miller-Rabin and looped forever (eps ~17.2-38.9), or a
    # Numba TypingError (eps >= 39)
    with no_hang(f"PIRappor(16, {eps}) and OLH(16, {eps})"):
        try:
            oracle = PIRappor(16, eps)
        except ValueError as err:
            assert "eps must be in (0, 21.48" in str(err)
        else:
            assert oracle.p <= 2 ** 31 - 1 and eps - 0.7 < oracle.eps <= eps
            reps = oracle.randomize_many(np.arange(16))
            assert oracle.counts(reps, "direct").tolist() == oracle.counts(reps, "enum").tolist()
        try:
            OLH(16, eps)
        except ValueError as err:
            assert "eps must be in [1e-12, 20" in str(err)


def test_miller_rabin_exact_above_2_31():
    from ldpcompress.kernels.field import next_prime, prime
    assert next_prime(2 ** 31) == 2147483659
    assert next_prime(2 ** 61 - 2) == 2 ** 61 - 1  # Mersenne prime M61
    assert not prime(2 ** 61 + 1) and prime(2 ** 61 - 1)
    assert prime(2 ** 62 - 57) and not any(prime(2 ** 62 - i) for i in range(1, 57))
    assert not prime(3215031751)  # strong pseudoprime to bases 2, 3, 5, 7 (above 2^31)
    # independent: trial division by every prime up to sqrt(n) (a sieve), around 2^31 and 2^32
    sieve = np.ones(66000, dtype=bool)
    sieve[:2] = False
    for i in range(2, 257):
        sieve[i * i::i] = False
    small = np.flatnonzero(sieve)
    for centre in (2 ** 31, 2 ** 32):
        for n in range(centre - 150, centre + 150):
            divisors = small[small <= math.isqrt(n)]
            assert prime(n) == bool(np.all(n % divisors)), n
    _error(lambda: next_prime(2 ** 62),
           r"no prime in \[4611686018427387904, .*the field size must stay below")


@pytest.mark.parametrize("call", [
    lambda: RAPPOR(10, 1.0, symmetric="yes"),
    lambda: PIRappor(10, 1.0, symmetric=1),
    lambda: KRR(2.7, 1.0), lambda: KRR(float("inf"), 1.0),
    lambda: KRR(10, float("nan")), lambda: KRR(10, 1000.0),
    lambda: SubsetSelection(10, 1.0, d=2.5), lambda: VectorPIRappor(10, 1.0, q=5, t=1.5),
    lambda: HadamardResponse(10, float("inf")),
])
def test_constructor_parameters_refused(call):
    _error(call, r"^(k|d|t|eps|symmetric) must be ")


def test_integral_floats_accepted():
    assert KRR(1e3, 1.0).k == 1000 and SubsetSelection(10, 1.0, d=3.0).d == 3


def test_server_memory_refused_with_the_figure():
    # k ~ 2^31 from a report file's metadata: the histogram alone is 16 GiB
    msg = _error(lambda: KRR(2 ** 31 - 1, 1.0).counts(np.array([0])),
                 r"16\.0 GiB .*above the limit")
    assert "16.0 GiB" in msg and "reduce k" in msg
    msg = _error(lambda: OUE(10 ** 6, 1.0).randomize_many(np.zeros(10 ** 4, np.int64)),
                 r"would need 9\.3 GiB")
    assert "GiB" in msg and "n" in msg


@pytest.mark.parametrize("make", [lambda e: HadamardResponse(2, e), lambda e: KRR(3, e),
                                  lambda e: OUE(4, e), lambda e: OLH(4, e),
                                  lambda e: SubsetSelection(6, e), lambda e: PIRappor(4, e)])
@pytest.mark.parametrize("eps", [1e-17, 1.6e-92])
def test_an_eps_too_small_for_the_coins_is_refused_or_realised(make, eps):
    """HadamardResponse(2, 1e-17) built an oracle whose coin e^eps/(1 + e^eps) had rounded to
    1/2 (a1 == a0: reports with no information, an estimator dividing by 0): refused now, by
    name; every oracle either refuses such an eps or realises a law with a1 > a0."""
    try:
        o = make(eps)
    except ValueError as err:
        assert "eps" in str(err)
    else:
        assert o.a1 > o.a0 and 0.0 < o.eps <= eps * (1 + 1e-12)


@pytest.mark.parametrize("chunks", [1, 2, 7])
def test_field_histograms_on_threads_count_every_report_once(chunks, monkeypatch):
    """The PI-RAPPOR and OLH histograms run report chunks on threads, each into its own row
    (the kernels were Numba parallel=True, ~3 s more to compile): the counts equal a direct
    numpy evaluation of every (report, item) pair, for any number of chunks and threads."""
    from ldpcompress.randomizers import threads
    monkeypatch.setattr(threads, "num_threads", lambda: 3)
    from ldpcompress.randomizers import olh as olh_module
    from ldpcompress.randomizers import pirappor as pirappor_module
    monkeypatch.setattr(olh_module, "chunks_for", lambda n, k=1: chunks)
    monkeypatch.setattr(pirappor_module, "chunks_for", lambda n, k=1: chunks)
    rng = np.random.default_rng(5)  # test-only reports
    pi = PIRappor(40, 2.0)
    a = rng.integers(0, pi.p, 3001)
    a[::50] = 0  # a = 0: supports every item when b < s
    b = rng.integers(0, pi.p, 3001)
    items = np.arange(1, 41)
    direct = ((a[:, None] * items[None, :] + b[:, None]) % pi.p < pi.s).sum(axis=0)
    for algorithm in ("direct", "enum"):
        assert np.array_equal(pi.counts(FieldReports(a, b, pi.p), algorithm=algorithm), direct)
    o = OLH(40, 2.0)
    rows = np.stack([rng.integers(1, o.p, 2500), rng.integers(0, o.p, 2500),
                     rng.integers(0, o.g, 2500)], axis=1)
    h = (rows[:, :1] * items[None, :] + rows[:, 1:2]) % o.p % o.g
    assert np.array_equal(o.counts(rows), (h == rows[:, 2:3]).sum(axis=0))


def test_pirappor_counting_algorithm_cost_limit():
    oracle = L.PIRappor(2, 1e-9)  # s ~ 1e9: 'enum' costs n s
    reports = oracle.randomize_many(np.zeros(20, np.int64))
    with pytest.raises(ValueError, match=r"algorithm='enum' costs n x s = 2\.06e\+10 steps.*"
                                         r"limit 1e\+10.*'direct' costs 40"):
        oracle.counts(reports, algorithm="enum")
    direct = oracle.counts(reports, algorithm="direct")
    assert np.array_equal(oracle.counts(reports), direct)
    a, b = reports.a, reports.b
    by_definition = [int(np.sum((a * (j + 1) + b) % oracle.p < oracle.s)) for j in range(2)]
    assert direct.tolist() == by_definition


def test_pirappor_counts_in_bounded_calls(monkeypatch):
    """Long counts run as several kernel calls (Ctrl-C is seen between them); same counts."""
    from ldpcompress.randomizers import pirappor as PR
    oracle = L.PIRappor(50, 2.0)
    reports = oracle.randomize_many(np.arange(3000) % 50)
    whole = oracle.counts(reports)
    calls = []
    real = PR.PIRappor._count_slice
    monkeypatch.setattr(PR, "COUNT_WORK_PER_CALL", 50 * 100)
    monkeypatch.setattr(PR.PIRappor, "_count_slice",
                        lambda self, *a: calls.append(1) or real(self, *a))
    for algorithm in ("direct", "enum"):
        assert np.array_equal(oracle.counts(reports, algorithm=algorithm), whole)
    assert len(calls) > 2
