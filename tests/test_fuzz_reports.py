"""Property-based fuzzing of the server side: hostile report batches, byte strings and
constructor parameters (hypothesis).

Every oracle must either count a batch exactly like the brute-force reference below (valid
input) or raise ValueError/TypeError naming the first bad report (invalid input): never crash,
never return a histogram of the wrong length, never miscount. The references are written from
the definitions (which items a report supports), sharing no code with the library.
Run with ``--hypothesis-show-statistics`` to see how many inputs each property tried.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shipped import uncovered

from hang import no_hang
from ldpcompress.compression import wire
from ldpcompress.compression.sampler import compress
from ldpcompress.randomizers.hadamard import HadamardResponse
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.olh import OLH
from ldpcompress.randomizers.pirappor import FieldReports, PIRappor, VectorPIRappor
from ldpcompress.randomizers.rappor import OUE, RAPPOR
from ldpcompress.randomizers.subset import SubsetSelection

FUZZ = settings(max_examples=80, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
K = 5

# -- brute-force references: does report r support item j? -----------------------------------


def popcount(v):
    return bin(v).count("1")


def krr_supports(o, r, j):
    return r == j


def rappor_supports(o, r, j):
    return bool(r[j])


def subset_supports(o, r, j):
    return j in list(r)


def olh_supports(o, r, j):
    a, b, y = (int(v) for v in r)
    return (a * (j + 1) + b) % o.p % o.g == y


def hadamard_supports(o, r, j):
    return popcount((j + 1) & int(r)) % 2 == 0


def general_hadamard_supports(o, r, j):
    return all(popcount(int(row) & int(r)) % 2 == 0 for row in o.rows()[j])


def vector_supports(o, r, j):
    digits = [(j // o.q ** d) % o.q for d in range(o.t)]
    return (sum(int(a) * x for a, x in zip(r[:-1], digits)) + int(r[-1])) % o.q < o.s


def pi_supports(o, r, j):
    a, b = r
    return (int(a) * (j + 1) + int(b)) % o.p < o.s


def reference_counts(o, rows, supports):
    return [sum(bool(supports(o, r, j)) for r in rows) for j in range(o.k)]


# oracle, width of a report (None: scalar reports), bound of each column, bits allowed, rule
CASES = {
    "krr": (lambda: KRR(K, 1.0), None, lambda o: [o.k], krr_supports),
    "krr-randomizer": (lambda: KRR(K, 1.0), None, lambda o: [o.k], krr_supports),
    "rappor": (lambda: OUE(K, 1.0), K, lambda o: [2] * o.k, rappor_supports),
    "rappor-sym": (lambda: RAPPOR(K, 1.0), K, lambda o: [2] * o.k, rappor_supports),
    "subset": (lambda: SubsetSelection(K, 0.5, d=2), 2, lambda o: [o.k] * 2, subset_supports),
    "subset-randomizer": (lambda: SubsetSelection(K, 0.5, d=3), 3, lambda o: [o.k] * 3,
                          subset_supports),
    "olh": (lambda: OLH(K, 1.0), 3, lambda o: [o.p, o.p, o.g], olh_supports),
    "hadamard": (lambda: HadamardResponse(K, 1.0, variant="basic"), None, lambda o: [o.big_k],
                 hadamard_supports),
    "hadamard-general": (lambda: HadamardResponse(K, 3.0), None, lambda o: [o.big_k],
                         general_hadamard_supports),
    "vector-pi-rappor": (lambda: VectorPIRappor(K, 1.0, q=3), 3, lambda o: [o.q] * 3,
                         vector_supports),
}
ORACLES = {name: case[0]() for name, case in CASES.items()}
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
HUGE = [-2 ** 63, -2 ** 31, 2 ** 31, 2 ** 32, 2 ** 63 - 1, 2 ** 64 - 1, 2 ** 70, -2 ** 70]


@st.composite
def hostile_batch(draw, width, highs):
    """A report batch that is valid with decent probability and hostile otherwise: any dtype
    (ints of every width, bool, float with NaN/inf, object with huge Python ints, strings),
    any shape (empty, wrong width, wrong rank), values in range, just outside it, or huge."""
    n = draw(st.integers(0, 5))
    if draw(st.integers(0, 2)) == 0:  # a well-formed batch (a third of the inputs)
        rows = [[draw(st.integers(0, h - 1)) for h in highs] for _ in range(n)]
        if width is None:
            return np.array([r[0] for r in rows], dtype=np.int64)
        return np.array(rows, dtype=np.int64).reshape(n, width)
    shapes = [(n,) if width is None else (n, width)] * 4 + [(n,), (n, 1), (n, 2), (n, 4), (),
                                                           (n, 2, 2), (0,), (2, 0)]
    if width is not None:
        shapes += [(n, width + 1), (n, width - 1) if width > 1 else (n, 3)]
    shape = draw(st.sampled_from(shapes))
    size = int(np.prod(shape)) if shape else 1
    top = max(highs)
    valid = st.integers(0, min(highs) - 1)
    value = st.one_of(valid, valid, valid, valid, valid, valid, valid, valid,
                      st.integers(0, top - 1), st.integers(-3, top + 3), st.sampled_from(HUGE))
    kind = draw(st.sampled_from(INT_DTYPES + ["int64"] * 6 + ["bool", "float64", "object",
                                                                "str", "list"]))
    if kind == "float64":
        vals = draw(st.lists(st.one_of(st.integers(-3, top + 3).map(float),
                                       st.floats(allow_nan=True, allow_infinity=True)),
                             min_size=size, max_size=size))
        return np.array(vals, dtype=float).reshape(shape)
    if kind == "bool":
        return np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)),
                        dtype=bool).reshape(shape)
    if kind == "str":
        return np.array([str(v) for v in draw(st.lists(value, min_size=size,
                                                       max_size=size))]).reshape(shape)
    vals = draw(st.lists(value, min_size=size, max_size=size))
    if kind in ("object", "list"):
        arr = np.empty(size, dtype=object)
        arr[:] = vals
        arr = arr.reshape(shape)
        return arr.tolist() if kind == "list" and shape else arr
    info = np.iinfo(kind)
    vals = [min(max(v, int(info.min)), int(info.max)) for v in vals]  # representable
    return np.array(vals, dtype=kind).reshape(shape)


def classify(batch, width, highs, allow_bool, distinct):
    """(valid, first bad report index or None) by the rules the oracles document."""
    arr = np.asarray(batch) if not isinstance(batch, np.ndarray) else batch
    if arr.shape == (0,) or (width is not None and arr.shape == (0, width)):
        return True, None
    want_ndim = 1 if width is None else 2
    if arr.ndim != want_ndim or (width is not None and arr.shape[1] != width):
        return False, None
    if arr.dtype == bool:
        return allow_bool, None
    if arr.dtype.kind not in "iuO":
        return False, None
    rows = [[row] if width is None else row for row in arr.tolist()]
    if any(isinstance(v, bool) or not isinstance(v, int) for row in rows for v in row):
        return False, None
    for i, row in enumerate(rows):  # range errors are reported first ...
        if any(not 0 <= v < highs[c] for c, v in enumerate(row)):
            return False, i
    for i, row in enumerate(rows):  # ... then repeated items of a subset
        if distinct and len(set(row)) != len(row):
            return False, i
    return True, None


COUNTED = {}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_batches_counted_exactly_or_refused(name):
    make, width, bounds, supports = CASES[name]
    oracle = ORACLES[name]
    highs = bounds(oracle)

    @FUZZ
    @given(batch=hostile_batch(width, highs))
    def check(batch):
        valid, bad = classify(batch, width, highs, allow_bool=name.startswith("rappor"),
                              distinct=name.startswith("subset"))
        outcome = "counted" if valid else "refused"
        COUNTED[(name, outcome)] = COUNTED.get((name, outcome), 0) + 1
        if valid:
            rows = np.asarray(batch).tolist() if np.asarray(batch).size else []
            expected = reference_counts(oracle, rows, supports)
            got = oracle.counts(batch)
            assert got.shape == (oracle.k,) and got.dtype == np.int64
            assert got.tolist() == expected
            est = oracle.estimate(batch)
            assert est.shape == (oracle.k,) and np.all(np.isfinite(est))
            assert oracle.count_one(batch, oracle.k - 1) == expected[-1]
            return
        for call in (oracle.counts, oracle.estimate, lambda r: oracle.count_one(r, 0),
                     lambda r: oracle.estimate_one(r, 0)):
            with pytest.raises((ValueError, TypeError), match="report") as err:
                call(batch)
            if bad is not None:  # a range / duplicate error names the first bad report
                assert f"report {bad}" in str(err.value)

    check()


@st.composite
def hostile_field_reports(draw, p):
    n = draw(st.integers(0, 5))
    value = st.one_of(st.integers(0, p - 1), st.integers(-2, p + 2), st.sampled_from(HUGE))
    dtype = draw(st.sampled_from(["int64", "int64", "int32", "uint64", "object", "float64"]))

    def arr(m):
        vals = draw(st.lists(value, min_size=m, max_size=m))
        if dtype == "object":
            out = np.empty(m, dtype=object)
            out[:] = vals
            return out
        if dtype == "float64":
            return np.array(vals, dtype=float)
        info = np.iinfo(dtype)
        return np.array([min(max(v, int(info.min)), int(info.max)) for v in vals], dtype=dtype)

    m_b = draw(st.sampled_from([n, n, n, n + 1]))
    field = draw(st.sampled_from([p, p, p, p + 2, 2]))
    return FieldReports(arr(n), arr(m_b), field)


def test_hostile_report_cases_cover_every_shipped_oracle():
    # CASES (brute-force rules by class) and PI-RAPPOR (FieldReports, both variants) below
    pi = [PIRappor(K, 1.0, symmetric=s, p=13) for s in (False, True)]
    assert not uncovered(list(ORACLES.values()) + pi)


@pytest.mark.parametrize("symmetric", [False, True])
def test_pi_rappor_hostile_reports(symmetric):
    oracle = PIRappor(K, 1.0, symmetric=symmetric, p=13)

    @FUZZ
    @given(rep=hostile_field_reports(oracle.p))
    def check(rep):
        a, b = list(rep.a), list(rep.b)
        valid = (rep.p == oracle.p and len(a) == len(b) and rep.a.dtype.kind in "iuO"
                 and rep.b.dtype.kind in "iuO"
                 and all(isinstance(v, (int, np.integer)) and 0 <= v < oracle.p for v in a + b))
        COUNTED[("pi-rappor", valid)] = COUNTED.get(("pi-rappor", valid), 0) + 1
        if valid:
            expected = reference_counts(oracle, list(zip(a, b)), pi_supports)
            for alg in ("direct", "enum"):
                assert oracle.counts(rep, algorithm=alg).tolist() == expected
            assert oracle.count_one(rep, 2) == expected[2]
            return
        for call in (oracle.counts, oracle.estimate, lambda r: oracle.count_one(r, 0)):
            with pytest.raises((ValueError, TypeError), match="report"):
                call(rep)

    check()


@FUZZ
@given(j=st.one_of(st.integers(-2 ** 70, 2 ** 70), st.integers(-2, K + 2),
                   st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.text(max_size=2)))
def test_item_index_checked_for_every_oracle(j):
    for oracle in list(ORACLES.values()) + [PIRappor(K, 1.0, p=13)]:
        reps = oracle.randomize_many(np.arange(oracle.k))
        valid = (not isinstance(j, (bool, str)) and isinstance(j, (int, float))
                 and math.isfinite(j) and j == int(j) and 0 <= j < oracle.k)
        if valid:
            assert oracle.count_one(reps, j) == oracle.counts(reps)[int(j)]
        else:
            with pytest.raises((ValueError, TypeError), match="j must be"):
                oracle.count_one(reps, j)
            with pytest.raises((ValueError, TypeError), match="j must be"):
                oracle.estimate_one(reps, j)


@st.composite
def packed_bytes(draw):
    """(data, n): often of the right length ceil(10 n / 8) for F_17 (5-bit elements, so the
    padding bits after the last report are live), sometimes any bytes and any n."""
    n = draw(st.integers(-3, 9))
    if n >= 0 and draw(st.booleans()):
        size = -(-10 * n // 8)
        return draw(st.binary(min_size=size, max_size=size)), n
    return draw(st.binary(max_size=40)), n


@FUZZ
@given(case=packed_bytes())
def test_pi_rappor_unpack_random_bytes(case):
    """Random bytes either decode to reports that pack back to the very same bytes (so no
    padding bit or out-of-field element was silently dropped) or are refused."""
    data, n = case
    oracle = PIRappor(K, 1.0, p=17)
    try:
        rep = oracle.unpack(data, n)
    except (ValueError, TypeError):
        return
    assert len(rep) == n
    assert oracle.pack(rep) == data


@FUZZ
@given(data=st.one_of(st.binary(max_size=40), st.binary(min_size=17, max_size=17),
                      st.binary(min_size=16, max_size=16).map(lambda s: b"\x01" + s)))
def test_seed_report_decoders_random_bytes(data):
    """17-byte reports: version 1 + 16 seed bytes decode (deterministically); anything else is
    refused with ValueError."""
    ok = len(data) == wire.REPORT_BYTES and data[0] == wire.VERSION
    for pr in (compress(RAPPOR(8, 1.0)), compress(KRR(8, 1.0)), compress(SubsetSelection(8, 1.0))):
        if ok:
            first = pr.decode(data)
            assert np.array_equal(np.asarray(first), np.asarray(pr.decode(data)))
        else:
            with pytest.raises(ValueError, match="version"):
                pr.decode(data)


NUMBERS = st.one_of(st.integers(-5, 70), st.integers(-2 ** 70, 2 ** 70),
                    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(
                        [0, 1, 2, 1e3, 2.7, 2 ** 31 - 1, 2 ** 31, 1e300, True, "3", None, 16.0]))
CONSTRUCTORS = {
    "krr": lambda k, e, x: KRR(k, e), "rappor": lambda k, e, x: RAPPOR(k, e, x),
    "subset": lambda k, e, x: SubsetSelection(k, e, x), "olh": lambda k, e, x: OLH(k, e),
    "hadamard": lambda k, e, x: HadamardResponse(k, e),
    "hadamard-basic": lambda k, e, x: HadamardResponse(k, e, "basic"),
    "hadamard-t": lambda k, e, x: HadamardResponse(k, e, t=x),
    "pi-rappor": lambda k, e, x: PIRappor(k, e, x),
    "pi-rappor-p": lambda k, e, x: PIRappor(5, e, p=x),
    "vector": lambda k, e, x: VectorPIRappor(k, e, q=x),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_random_constructor_parameters(name):
    """Any parameters: a working oracle with integral k kept exactly and a finite eps no
    larger than asked, or ValueError/TypeError, within a second (no hang, no overflow)."""

    @FUZZ
    @given(k=st.one_of(st.integers(2, 64), st.integers(2, 64).map(float), NUMBERS),
           eps=st.one_of(st.floats(0.05, 25), NUMBERS),
           extra=st.one_of(st.booleans(), st.sampled_from([None, 3, 5, 7, 11]), NUMBERS))
    def check(k, eps, extra):
        try:
            with no_hang(f"{name}({k!r}, {eps!r}, {extra!r})"):
                o = CONSTRUCTORS[name](k, eps, extra)
        except (ValueError, TypeError):
            COUNTED[(name + "-ctor", "refused")] = COUNTED.get((name + "-ctor", "refused"), 0) + 1
            return
        COUNTED[(name + "-ctor", "built")] = COUNTED.get((name + "-ctor", "built"), 0) + 1
        assert math.isfinite(o.eps) and 0 < o.eps <= float(eps) * (1 + 1e-12)
        if name != "pi-rappor-p":
            assert o.k == k and isinstance(o.k, int)
        assert 0 <= o.a0 < o.a1 <= 1

    check()


def test_print_fuzz_tally():
    """Not a check: prints how many inputs each property classified (for the closing note)."""
    for key in sorted(COUNTED, key=str):
        print(key, COUNTED[key])
