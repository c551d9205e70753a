"""The table randomizer (randomizers/table.py, table_law.py): validation of hostile tables, the
exact alias client, the least-squares estimator and its variance, compression and storage.
Expected values come from the definitions (exact rationals, the multinomial covariance), never
from the code under test."""
import json
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hang import no_hang

import ldpcompress as L
from ldpcompress.core.entropy import Entropy, simulation_entropy
from ldpcompress.randomizers import TableRandomizer, registry
from ldpcompress.randomizers.table_law import COIN_BITS, MAX_CELLS, check_table, realise

GOOD = [[0.5, 0.25, 0.125, 0.125], ["1/8", "1/2", "1/4", "1/8"], [Fraction(1, 6)] * 3 + ["1/2"]]


# -- hostile tables: clear errors naming the row and column ------------------------------------

HOSTILE = [
    ("abc", TypeError, "list of rows"),
    (5, TypeError, "list of rows"),
    ({"a": [0.5, 0.5]}, TypeError, "list of rows"),
    (None, TypeError, "list of rows"),
    ([[0.5, 0.5]], ValueError, "at least 2 rows"),
    ([[1.0], [1.0]], ValueError, "at least 2 columns"),
    ([[0.5, 0.5], [0.2, 0.3, 0.5]], ValueError, "row 1 has 3 entries, row 0 has 2"),
    ([[0.5, 0.5], 3], TypeError, "table row 1"),
    ([[0.5, 0.5], "ab"], TypeError, "table row 1"),
    ([[True, False], [0.5, 0.5]], TypeError, r"table\[0\]\[0\].*boolean"),
    ([[0.5, None], [0.5, 0.5]], TypeError, r"table\[0\]\[1\] is a NoneType"),
    ([[0.5, 0.5j], [0.5, 0.5]], TypeError, r"table\[0\]\[1\] is a complex"),
    ([[0.5, float("nan")], [0.5, 0.5]], ValueError, r"table\[0\]\[1\].*finite"),
    ([[0.5, 0.5], [float("inf"), 0.5]], ValueError, r"table\[1\]\[0\].*finite"),
    ([[0.5, 0.5], [Decimal("NaN"), 0.5]], ValueError, r"table\[1\]\[0\].*finite"),
    ([[0.5, 0.5], [Decimal("1e99999999"), 0.5]], ValueError, r"table\[1\]\[0\].*exponents"),
    ([[1.5, -0.5], [0.5, 0.5]], ValueError, r"table\[0\]\[0\] = 1.5 is outside \[0, 1\]"),
    ([[0.5, 0.5], [0.3, -0.3]], ValueError, r"table\[1\]\[1\] = -0.3 is outside"),
    ([[10 ** 400, 0], [0.5, 0.5]], ValueError, r"table\[0\]\[0\] = 1e\+308 or more is outside"),
    ([[0.5, 0.5], [0.5, 0.4]], ValueError, "row 1 sums to 0.9, not 1"),
    ([[0.5, 0.5], [0.5, 0.5 + 3e-9]], ValueError, "row 1 sums to .*tolerance 1e-09"),
    ([[0.5, 0.5], ["abc", 0.5]], ValueError, r"table\[1\]\[0\] is 'abc': not a number"),
    ([[0.5, 0.5], ["1e999999", 0.5]], ValueError, "not a number"),
    ([[0.5, 0.5], ["1" * 1001, 0.5]], ValueError, "at most 1000 characters"),
    ([[0.5, 0.5], ["1/0", 0.5]], ValueError, "zero denominator"),
    ([[0.5, 0.5 - 1e-13, 1e-13], [0.5, 0.5 - 1e-13, 1e-13]], ValueError,
     r"table\[0\]\[2\] = 1e-13 is positive but below 1e-12"),
    ([[0.5, 0.0, 0.5], [0.25, 0.0, 0.75]], ValueError, "column 1 is 0 in every row"),
    ([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]], ValueError,
     r"table\[0\]\[2\] = 0 while table\[1\]\[2\] = 0.5 > 0.*eps0 is infinite"),
    ([[0.3, 0.7], [0.3, 0.7]], ValueError, "identical"),
    (np.full((2, 2, 2), 0.25), ValueError, "must be 2-D"),
    ([[1.0 / MAX_CELLS] * MAX_CELLS] * 2, ValueError, f"at most {MAX_CELLS}"),
    ([[0.5, 0.5]] * (MAX_CELLS // 2 + 1), ValueError, "rows: at most"),
]


@pytest.mark.parametrize("table, error, match", HOSTILE, ids=[h[2][:30] for h in HOSTILE])
def test_hostile_tables_are_refused_naming_row_and_column(table, error, match):
    with pytest.raises(error, match=match):
        TableRandomizer(table)


def test_rows_within_the_tolerance_are_normalised_exactly():
    exact, canon = check_table([[0.5, 0.5 + 5e-10], ["1/3", "2/3"]])
    total = Fraction(0.5) + Fraction(0.5 + 5e-10)
    assert sum(exact[0]) == 1 and exact[0][0] == Fraction(0.5) / total
    assert canon == [[0.5, 0.5 + 5e-10], ["1/3", "2/3"]]


def test_identity_is_the_table_as_given_and_survives_json():
    r = TableRandomizer(GOOD)
    assert r.params() == {"table": [[0.5, 0.25, 0.125, 0.125], ["1/8", "1/2", "1/4", "1/8"],
                                    ["1/6", "1/6", "1/6", "1/2"]]}
    again = registry.build("table", json.loads(json.dumps(r.params())))
    assert again == r and hash(again) == hash(r)
    assert r.k == 3 and r.m == 4 and "3 inputs x 4 outputs" in r.describe()
    # the same law written with other entry types is the same randomizer
    np.testing.assert_array_equal(TableRandomizer(np.array(r.table)).table, r.table)


# -- the realised law: the alias tables draw exactly the rounded table ---------------------------

def test_alias_tables_realise_their_counts_exactly():
    rng = np.random.default_rng(1)
    for m in (2, 3, 7, 64):
        w = rng.integers(1, 1000, size=m)
        probs = [Fraction(int(v), int(w.sum())) for v in w]
        a = realise(probs)
        c = 1 << COIN_BITS
        # Pr[y] = (1/m) sum_col (thr/c [col = y] + (1 - thr/c) [alias = y]), from the table itself
        law = [Fraction(0)] * m
        for col in range(m):
            law[col] += Fraction(a.thr[col], m * c)
            law[a.alias[col]] += Fraction(c - a.thr[col], m * c)
        assert law == [Fraction(v, m * c) for v in a.counts]
        assert sum(law) == 1
        assert all(abs(q - p) <= Fraction(1, m * c) for q, p in zip(law, probs))


def _crafted(cols, coins):
    """An entropy source whose words are ``cols`` then ``coins`` (the client's two draws)."""
    words = np.array(list(cols) + list(coins), dtype="<u8").tobytes()
    state = {"at": 0}

    def source(nbytes):
        out = words[state["at"]: state["at"] + nbytes]
        state["at"] += nbytes
        return out
    return Entropy(source)


def test_client_draw_is_column_then_coin_below_the_threshold():
    r = TableRandomizer(GOOD)
    thr, alias = r._thr, r._alias  # the realised tables the test reads back
    for x in range(r.k):
        for col in range(r.m):
            t = int(thr[x, col])
            for coin, want in ((t - 1, col), (t, int(alias[x, col]))):
                if 0 <= coin < 1 << COIN_BITS:
                    y = r.randomize_many([x], _crafted([col], [coin]))
                    assert int(y[0]) == want, (x, col, coin)


def test_client_frequencies_match_the_realised_table():
    r = TableRandomizer(GOOD)
    n = 100_000
    for x in range(r.k):
        ys = r.randomize_many(np.full(n, x), simulation_entropy(10 + x))
        freq = np.bincount(ys, minlength=r.m)
        p = r.table[x]
        assert np.all(np.abs(freq - n * p) <= 5 * np.sqrt(n * p * (1 - p)))
    # the realised table is the given one to 1 / (m 2^62)
    given = [[Fraction(v) for v in row] for row in check_table(GOOD)[0]]
    st = r.table_structure
    assert all(abs(st.entry(x, y) - given[x][y]) <= Fraction(1, st.denominator)
               for x in range(3) for y in range(4))


# -- the estimator ---------------------------------------------------------------------------

def test_estimator_is_a_left_inverse_and_its_variance_is_the_multinomial_one():
    r = TableRandomizer(GOOD)
    p = np.array([[float(v) for v in row] for row in r.table_structure.rows()])
    big_l = r._inverse
    np.testing.assert_allclose(big_l @ p.T, np.eye(3), atol=1e-12)
    counts = np.array([700.0, 200.0, 100.0])
    cov = sum(c * (np.diag(p[x]) - np.outer(p[x], p[x])) for x, c in enumerate(counts))
    np.testing.assert_allclose(r.variance(counts), np.diag(big_l @ cov @ big_l.T), rtol=1e-10)


def test_estimates_are_unbiased_within_their_standard_deviation():
    r = TableRandomizer(GOOD)
    truth = np.array([60_000, 30_000, 10_000])
    xs = np.repeat(np.arange(3), truth)
    est = r.estimate(r.randomize_many(xs, simulation_entropy(5)))
    sd = np.sqrt(r.variance(truth))
    assert np.all(np.abs(est - truth) <= 5 * sd)
    low, high = r.intervals(est, len(xs))
    wide_low, wide_high = r.intervals(est, len(xs), conservative=True)
    assert np.all(low <= truth) and np.all(truth <= high)
    assert np.all(wide_high - wide_low >= high - low - 1e-9)


def test_hostile_summaries_and_dependent_rows_are_refused():
    r = TableRandomizer(GOOD)
    s = r.summarize([0, 1, 2, 3, 3])
    with pytest.raises(ValueError, match="sum to n = 6"):
        r.estimate_from_summary(s, 6)
    with pytest.raises(ValueError, match="int64"):
        r.estimate_from_summary(s.astype(float), 5)
    with pytest.raises(ValueError, match=r"int64\[4\]"):
        r.estimate_from_summary(s[:3], 5)
    with pytest.raises(ValueError, match="in \\[0, n\\]"):
        r.estimate_from_summary(np.array([-1, 2, 2, 2]), 5)
    with pytest.raises(ValueError, match="output 7 is outside"):
        r.check_reports([0, 7])
    dep = TableRandomizer([[0.5, 0.5], [0.5, 0.5], [0.2, 0.8]])  # rank 2 < k = 3
    with pytest.raises(ValueError, match=r"linearly dependent \(rank 2 < k = 3\)"):
        dep.estimate([0, 1])
    assert L.epsilon(1000, delta=1e-6, oracle=dep).value > 0  # accounting still answers


# -- compression -------------------------------------------------------------------------------

@pytest.mark.parametrize("table, ref", [
    (GOOD, "uniform"),
    ([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]], "uniform"),
    ([[0.02, 0.49, 0.49], [0.03, 0.485, 0.485]], "blanket"),
])
def test_compression_samples_its_reference_and_bounds_its_ratios(table, ref):
    r = TableRandomizer(table)
    assert r.reference == ref
    st = r.table_structure
    rows = st.rows()
    if ref == "blanket":
        mins = st.mins()
        rho = np.array([float(v / sum(mins)) for v in mins])
    else:
        rho = np.full(r.m, 1.0 / r.m)
    seeds = simulation_entropy(3).seed_array(60_000)
    ys = r.decode_seeds(seeds)
    assert [r.decode_seed(bytes(s)) for s in seeds[:50]] == ys[:50].tolist()
    freq = np.bincount(ys, minlength=r.m)
    assert np.all(np.abs(freq - 60_000 * rho) <= 5 * np.sqrt(60_000 * rho * (1 - rho)))
    top = max(abs(math.log(float(rows[x][y]) / rho[y])) for x in range(r.k) for y in range(r.m))
    assert top <= r.deletion_eps <= top * (1 + 1e-9) + 1e-12
    pr = L.compress(r, entropy=simulation_entropy(4))
    out = pr.decode_many(pr.encode_many([0] * 3000))
    p0 = np.array([float(v) for v in rows[0]])
    assert np.all(np.abs(np.bincount(out, minlength=r.m) - 3000 * p0)
                  <= 5 * np.sqrt(3000 * p0 * (1 - p0)))
    with pytest.raises(ValueError, match="output"):
        r.ratio(0, r.m)


def test_storage_uses_the_smallest_integer_column():
    r = TableRandomizer([[1 / 300] * 300, [0.5 / 299] * 299 + [0.5]])
    assert r.report_columns()[0].dtype == "uint16"
    cols = r.to_columns([0, 299])
    assert cols["report"].dtype == np.uint16
    with pytest.raises(ValueError, match="report 1: output 300 is outside"):
        r.from_columns({"report": np.array([0, 300], dtype=np.uint16)})


# -- a saved ledger whose table was edited: read back through the same validation ---------------

@pytest.mark.parametrize("bad, match", [
    ([[0.75, 0.25], [0.25, 0.7]], "row 1 sums to 0.95, not 1"),
    ([[1.0, 0.0], [0.25, 0.75]], "eps0 is infinite"),
    ("abc", "list of rows"),
    ([[0.5, 0.5], [0.5, 0.5]], "identical"),
    ([[1e-300, 1.0], [0.5, 0.5]], "positive but below"),
])
def test_a_ledger_with_an_edited_table_is_refused_naming_the_event(bad, match):
    acct = L.Accountant().compose(
        L.OracleShuffledRound(1000, TableRandomizer([[0.75, 0.25], [0.25, 0.75]])), times=2)
    saved = json.loads(acct.to_json())
    saved["events"][0]["oracle"]["params"]["table"] = bad
    with pytest.raises((ValueError, TypeError), match=r"events\[0\]\.oracle: .*" + match):
        L.Accountant.from_json(json.dumps(saved))


# -- hostile input: the largest tables the validator accepts (issue 27 item 3) -------------------

def _wide(k, m, seed):
    rng = np.random.default_rng(seed)  # test-only: a table's entries, not privacy coins
    p = rng.uniform(1.0, 3.0, size=(k, m))
    return (p / p.sum(axis=1, keepdims=True)).tolist()


@pytest.mark.slow
@pytest.mark.parametrize("k, m", [(2, 32768), (2, 1024)])
def test_a_wide_table_answers_a_query_by_the_generic_bound_without_hanging(k, m):
    # before: epsilon(1e6) lumped every law's m atoms in exact rationals at each eps tried
    # (2 x 1024: 90 s; 2 x 32768: not done in 400 s)
    r = TableRandomizer(_wide(k, m, 4))
    with no_hang(f"epsilon of a {k} x {m} table"):
        res = L.epsilon(10 ** 6, delta=1e-6, oracle=r)
    assert res.method == "general"
    assert res.value == L.epsilon(10 ** 6, r.eps, 1e-6, lower=False).value
    note = [b.note for b in res.bounds if b.name == "blanket_table"][0]
    assert f"m = {m} outputs" in note and "[2, 64]" in note
    with no_hang(f"the client of a {k} x {m} table"):
        ys = r.randomize_many(np.zeros(1000, dtype=np.int64))
        counts = r.summarize(ys)
    assert counts.sum() == 1000 and ys.min() >= 0 and ys.max() < m
