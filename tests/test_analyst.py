"""The analyst's next questions: confidence intervals of every estimate (coverage on simulated
data), post-processing of estimated counts (against brute force and optimality conditions),
string items (ItemDomain) and the seeded simulation mode (reproducible reports)."""
import itertools
import math
import re
from statistics import NormalDist

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import beta as beta_law
from shipped import EXAMPLES, SCALARS, SHIPPED, uncovered

import ldpcompress as L
from ldpcompress.core.entropy import SYSTEM, Entropy
from ldpcompress.estimation import clip_nonnegative, norm_sub, project_simplex
from ldpcompress.randomizers import (
    KRR,
    OLH,
    OUE,
    RAPPOR,
    HadamardResponse,
    PIRappor,
    PrivUnit2,
    SubsetSelection,
    VectorPIRappor,
)
from ldpcompress.randomizers.pirappor import FieldReports
from ldpcompress.randomizers.privunit import projection_second_moment

LEVEL = 0.95
Z95 = 1.959963984540054  # Pr[|N(0,1)| <= Z95] = 0.95 (tables)


def coverage_tolerance(trials: int, level: float = LEVEL, z: float = 4.0) -> float:
    """z standard deviations of a Binomial(trials, level) coverage count, as a fraction (the
    items' estimates are nearly independent; a fixed seed makes the check deterministic)."""
    return z * math.sqrt(level * (1 - level) / trials)


# -- 1. confidence intervals of frequency estimates ---------------------------------------------

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


def test_interval_cases_cover_every_shipped_oracle():
    # their own parameters (k = 1000: the coverage check counts items), every shipped oracle
    assert not uncovered([make() for make in ORACLES.values()])


@pytest.mark.parametrize("name", list(ORACLES))
def test_interval_coverage_on_simulated_data(name):
    oracle, n, f, est = simulated(name)
    low, high = oracle.intervals(est, n, level=LEVEL)
    cover = np.mean((low <= f) & (f <= high))
    tol = coverage_tolerance(K)
    assert abs(cover - LEVEL) <= tol, (name, cover, tol)
    # the conservative variant (worst-case variance over f in [0, n]) is never narrower and
    # covers at least as often
    clow, chigh = oracle.intervals(est, n, level=LEVEL, conservative=True)
    assert np.all(chigh - clow >= (high - low) * (1 - 1e-12))
    assert np.all(np.isclose(chigh - clow, chigh[0] - clow[0]))  # one width for every item
    assert np.mean((clow <= f) & (f <= chigh)) >= LEVEL - tol
    # a lower level gives narrower intervals around the same centre
    l80, h80 = oracle.intervals(est, n, level=0.8)
    assert np.all(h80 - l80 < high - low) and np.allclose((l80 + h80) / 2, est)


def test_intervals_by_hand():
    # KRR with k = 4, e^eps = 3: a1 = 3/6 = 1/2, a0 = 1/6, a1 - a0 = 1/3, so
    # Var(f) = 9 (n (1/6)(5/6) + f (1/4 - 5/36)) = 125 + f for n = 100
    oracle = KRR(4, math.log(3.0))
    est = np.array([10.0, -5.0, 200.0, 0.0])
    low, high = oracle.intervals(est, 100)
    var = np.array([135.0, 125.0, 225.0, 125.0])  # f = est clipped to [0, 100]
    assert np.allclose(high - est, Z95 * np.sqrt(var), rtol=1e-9)
    assert np.allclose(est - low, Z95 * np.sqrt(var), rtol=1e-9)
    low, high = oracle.intervals(est, 100, conservative=True)  # max(125 + 0, 125 + 100)
    assert np.allclose(high - est, Z95 * 15.0, rtol=1e-9)
    one_low, one_high = oracle.intervals(-5.0, 100, level=0.99)  # one estimate (estimate_one)
    z99 = 2.5758293035489004
    assert float(one_high) - (-5.0) == pytest.approx(z99 * math.sqrt(125.0), rel=1e-9)
    low, high = oracle.intervals(np.zeros(4), 0)  # no reports: the estimate is exact
    assert np.all(low == 0) and np.all(high == 0)


def test_every_frequency_oracle_has_intervals():
    from ldpcompress.randomizers import make_oracle, oracle_names
    for oracle in [*(make_oracle(name, 10, 1.0) for name in oracle_names()),
                   VectorPIRappor(10, 1.0, 5)]:
        low, high = oracle.intervals(np.zeros(10), 100)
        assert np.all(low < 0) and np.all(high > 0), oracle


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(est=[1.0, 2.0, 3.0]), ValueError, "shape (4,)"),
    (dict(est=[1.0, 2.0, 3.0, float("nan")]), ValueError, "finite"),
    (dict(est=[[1.0, 2.0, 3.0, 4.0]]), ValueError, "est"),
    (dict(est="1234"), TypeError, "est"),
    (dict(est=["1", "2", "3", "4"]), TypeError, "est"),
    (dict(est=None), TypeError, "est"),
    (dict(n=-1), ValueError, "n must be"),
    (dict(n=2.5), ValueError, "n must be"),
    (dict(level=1.0), ValueError, "level must be in (0, 1)"),
    (dict(level=0.0), ValueError, "level must be in (0, 1)"),
    (dict(level="0.95"), TypeError, "level"),
    (dict(conservative="yes"), TypeError, "conservative"),
])
def test_interval_arguments_are_validated(kwargs, exc, words):
    args = dict(est=[1.0, 2.0, 3.0, 4.0], n=10, level=0.9, conservative=False) | kwargs
    with pytest.raises(exc, match=re.escape(words)) as err:
        KRR(4, 1.0).intervals(**args)
    assert words in str(err.value)


# -- 1b. PrivUnit2 mean estimates ------------------------------------------------------------

@pytest.mark.parametrize("d, eps", [(2, 1.0), (5, 2.0), (16, 4.0), (100, 1.0), (1000, 8.0),
                                    (3, 20.0)])
def test_privunit_projection_moment_against_quadrature(d, eps):
    """A = E[<V, u>^2] by numerical integration of t's density ((1+t)/2 ~ Beta(a, a))."""
    par = PrivUnit2(d, eps).par
    a, g = (d - 1) / 2, par.gamma

    def dens(t):
        return beta_law.pdf((1 + t) / 2, a, a) / 2

    def quad(fun, lo, hi):
        return integrate.quad(fun, lo, hi, limit=200, epsabs=0, epsrel=1e-9)[0]

    cap = quad(dens, g, 1)
    on, off = quad(lambda t: t * t * dens(t), g, 1), quad(lambda t: t * t * dens(t), -1, g)
    want = par.p0 * on / cap + (1 - par.p0) * off / (1 - cap)
    assert projection_second_moment(par) == pytest.approx(want, rel=1e-8)
    # E[t] = m (unbiasedness) by the same quadrature: checks the density's parameters
    mean_t = (par.p0 * quad(lambda t: t * dens(t), g, 1) / cap
              + (1 - par.p0) * quad(lambda t: t * dens(t), -1, g) / (1 - cap))
    assert mean_t == pytest.approx(par.m, rel=1e-8)


def privunit_runs(pu, vectors, runs, seed):
    """``runs`` means of one report per row of ``vectors`` (seeded coins)."""
    ent = L.simulation_entropy(seed)
    return np.array([np.mean([pu.randomize(x, ent) for x in vectors], axis=0)
                     for _ in range(runs)])


def test_privunit_coordinate_variance_by_simulation():
    pu = PrivUnit2(8, 3.0)
    u = np.random.default_rng(4).normal(size=8)
    u /= np.linalg.norm(u)
    ent = L.simulation_entropy(6)
    zs = np.array([pu.randomize(u, ent) for _ in range(12_000)])
    var = pu.coordinate_variance(u)
    assert var.sum() == pytest.approx(pu.variance(), rel=1e-9)  # trace = E|Z - u|^2
    centred = zs - u
    s2 = np.mean(centred ** 2, axis=0)  # unbiased for Var(Z_i): the mean u is known
    sd_s2 = np.sqrt((np.mean(centred ** 4, axis=0) - s2 ** 2) / zs.shape[0])
    assert np.all(np.abs(s2 - var) <= 5 * sd_s2)
    assert pu.coordinate_variance() >= var.max()  # the worst case over unit inputs


def test_privunit_mean_interval_coverage():
    d, n, runs = 16, 400, 40
    pu = PrivUnit2(d, 4.0)
    u = np.random.default_rng(3).normal(size=d)
    u /= np.linalg.norm(u)
    means = privunit_runs(pu, [u] * n, runs, seed=5)  # every user holds u: plug-in is exact
    hits = chits = misses = 0
    for m in means:
        low, high = pu.mean_intervals(m, n, LEVEL)
        clow, chigh = pu.mean_intervals(m, n, LEVEL, conservative=True)
        assert np.all(chigh - clow >= high - low)
        hits += np.sum((low <= u) & (u <= high))
        chits += np.sum((clow <= u) & (u <= chigh))
        misses += np.linalg.norm(m - u) >= pu.error_radius(n, LEVEL)
    tol = coverage_tolerance(d * runs)
    assert abs(hits / (d * runs) - LEVEL) <= tol
    assert chits / (d * runs) >= LEVEL - tol
    assert misses / runs <= (1 - LEVEL) + coverage_tolerance(runs)


def test_privunit_conservative_intervals_cover_mixed_users():
    """Users with different vectors of norm <= 1 (rounded to the sphere by the client)."""
    d, n, runs = 6, 300, 30
    pu = PrivUnit2(d, 2.0)
    rng = np.random.default_rng(8)
    xs = rng.normal(size=(n, d))
    xs *= (rng.uniform(0, 1, size=(n, 1)) / np.linalg.norm(xs, axis=1, keepdims=True))
    truth = xs.mean(axis=0)
    means = privunit_runs(pu, xs, runs, seed=9)
    hits = sum(np.sum((lo <= truth) & (truth <= hi)) for lo, hi in
               (pu.mean_intervals(m, n, LEVEL, conservative=True) for m in means))
    assert hits / (d * runs) >= LEVEL - coverage_tolerance(d * runs)


def test_privunit_interval_arguments_are_validated():
    pu = PrivUnit2(4, 1.0)
    for call, exc, words in [
        (lambda: pu.mean_intervals(np.zeros(3), 10), ValueError,
         r"mean must be a non-empty array of shape \(4,\), got shape \(3,\)"),
        (lambda: pu.mean_intervals(np.zeros(4), 0), ValueError,
         r"n must be an integer in \[1, 9007199254740992\], got 0"),
        (lambda: pu.mean_intervals(np.zeros(4), 10, level=1.5), ValueError,
         r"level must be in \(0, 1\), got 1\.5"),
        (lambda: pu.mean_intervals(np.zeros(4), 10, conservative=1), TypeError,
         "conservative must be True or False, got 1"),
        (lambda: pu.coordinate_variance(1.5), ValueError,
         r"u must be in \[-1, 1\] \(a coordinate of a unit vector\), got 1\.5"),
        (lambda: pu.error_radius(10, level=0), ValueError, r"level must be in \(0, 1\), got 0"),
        (lambda: pu.error_radius(0), ValueError,
         r"n must be an integer in \[1, 9007199254740992\], got 0"),
    ]:
        with pytest.raises(exc, match=words):
            call()


# -- 2. post-processing ----------------------------------------------------------------------

def brute_force_projection(y, total):
    """argmin |x - y| over {x >= 0, sum x = total} by trying every support S: on S the optimum
    is y - theta with theta fixed by the sum, off S it is 0."""
    best, best_dist = None, math.inf
    k = len(y)
    for size in range(1, k + 1):
        for support in itertools.combinations(range(k), size):
            s = list(support)
            theta = (sum(y[j] for j in s) - total) / size
            x = np.zeros(k)
            x[s] = np.asarray(y)[s] - theta
            if np.all(x >= -1e-12):
                dist = float(np.sum((x - y) ** 2))
                if dist < best_dist:
                    best, best_dist = x, dist
    return best


def norm_sub_as_published(y, total):
    """Wang et al. 2020's Norm-Sub, literally: negatives to 0, shift the positive ones by one
    amount to reach the total, repeat while the shift makes some negative."""
    x = np.maximum(np.asarray(y, float), 0.0)
    while True:
        pos = x > 0
        if not pos.any():
            pos[:] = True
        x[pos] -= (x.sum() - total) / pos.sum()
        if np.all(x >= 0):
            return x
        x = np.maximum(x, 0.0)


@pytest.mark.parametrize("seed", range(40))
def test_projection_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 8))
    y = rng.normal(0, 5, k) + rng.choice([0, 3])
    total = float(rng.choice([0.0, 1.0, 10.0, rng.uniform(0, 30)]))
    assert np.allclose(project_simplex(y, total), brute_force_projection(y, total), atol=1e-9)
    ns = norm_sub(y, total)
    assert np.allclose(ns, norm_sub_as_published(y, total), atol=1e-9)
    assert np.all(ns >= 0) and ns.sum() == pytest.approx(total, abs=1e-9)
    if np.maximum(y, 0).sum() >= total:  # the usual case: Norm-Sub is the projection
        assert np.allclose(ns, project_simplex(y, total), atol=1e-9)


def test_projection_optimality_and_error_on_simulated_estimates():
    oracle, n, f, est = simulated("olh")
    x = project_simplex(est, n)
    # optimality conditions (sufficient for this convex problem): x >= 0, sum = n, and one
    # theta with x_j = est_j - theta where x_j > 0 and est_j <= theta where x_j = 0
    assert np.all(x >= 0) and x.sum() == pytest.approx(n, rel=1e-12)
    pos = x > 0
    theta = est[pos] - x[pos]
    assert np.allclose(theta, theta[0], atol=1e-8 * n)
    assert np.all(est[~pos] <= theta[0] + 1e-8 * n)
    # projecting onto a convex set that holds the truth never increases the L2 error
    assert np.linalg.norm(x - f) <= np.linalg.norm(est - f)
    assert np.allclose(project_simplex(x, n), x)  # idempotent
    assert np.allclose(project_simplex(est + 123.0, n), x)  # a common shift does not matter
    c = clip_nonnegative(est)
    assert np.all(c >= 0) and np.array_equal(c[est > 0], est[est > 0])
    assert np.linalg.norm(c - f) <= np.linalg.norm(est - f)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: project_simplex([1.0, 2.0], -1.0), ValueError, r"total must be >= 0, got -1\.0"),
    (lambda: project_simplex([1.0, 2.0], float("inf")), ValueError,
     r"total must be finite and >= 0, got inf"),
    (lambda: project_simplex([1.0, 2.0], "3"), TypeError, r"total must be a real number, got str"),
    (lambda: project_simplex([], 1.0), ValueError,
     r"est must be a non-empty array of shape \(k,\), got shape \(0,\)"),
    (lambda: project_simplex([[1.0, 2.0]], 1.0), ValueError,
     r"est must be a non-empty array of shape \(k,\), got shape \(1, 2\)"),
    (lambda: project_simplex([1.0, float("nan")], 1.0), ValueError,
     r"est must be finite, got nan at index 1"),
    (lambda: norm_sub([1.0, float("inf")], 1.0), ValueError,
     r"est must be finite, got inf at index 1"),
    (lambda: clip_nonnegative("12"), TypeError, r"est must be an array of real numbers, got str"),
    (lambda: clip_nonnegative(np.array([True, False])), TypeError,
     r"est must be an array of real numbers, got dtype bool"),
])
def test_postprocess_arguments_are_validated(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


# -- 3. string items -------------------------------------------------------------------------

FRUIT = ["apple", "banana", "cherry", "dürian"]


def test_item_domain_maps_names_and_labels_estimates():
    dom = L.ItemDomain(FRUIT)
    assert dom.k == len(dom) == 4 and dom.names == tuple(FRUIT) and "dürian" in dom
    idx = dom.index(["cherry", "apple", "cherry", "dürian"])
    assert idx.dtype == np.int64 and idx.tolist() == [2, 0, 2, 3]
    assert dom.index(np.array(["banana"])).tolist() == [1] and dom.index([]).size == 0
    assert dom.label([1, 2, 3, 4]) == {"apple": 1, "banana": 2, "cherry": 3, "dürian": 4}
    assert dom.label([1, 2, 3, 4], [0, 0, 0, 0])["cherry"] == (3, 0)
    # end to end: names -> indices -> reports -> estimate labelled by name
    users = ["banana"] * 3000 + ["cherry"] * 1000
    oracle = KRR(dom.k, 4.0)
    est = oracle.estimate(oracle.randomize_many(dom.index(users), L.simulation_entropy(1)))
    sd = math.sqrt(oracle.variance(4000, 3000))
    assert abs(dom.label(est)["banana"] - 3000) < 5 * sd


@pytest.mark.parametrize("items, exc, words", [
    (["apple", "kiwi"], ValueError, "items[1] = 'kiwi' is not in the item domain"),
    (["apple", "Apple"], ValueError, "items[1]"),
    (["apple", 3], TypeError, "items[1]"),
    (["apple", None], TypeError, "items[1]"),
    ("apple", TypeError, "single str"),
    (5, TypeError, "items"),
])
def test_item_domain_refuses_unknown_items(items, exc, words):
    with pytest.raises(exc, match="items") as err:
        L.ItemDomain(FRUIT).index(items)
    assert words in str(err.value)


@pytest.mark.parametrize("names, exc, words", [
    (["a", "b", "a"], ValueError, "names[2] = 'a' repeats names[0]"),
    (["a", ""], ValueError, "names[1] is empty"),
    (["a", " b"], ValueError, "names[1]"),
    (["a", "b\nc"], ValueError, "line break"),
    (["a", 2], TypeError, "names[1]"),
    (["a"], ValueError, "at least 2"),
    ("ab", TypeError, "single str"),
])
def test_item_domain_refuses_bad_names(names, exc, words):
    with pytest.raises(exc, match="names") as err:
        L.ItemDomain(names)
    assert words in str(err.value)


def test_item_domain_from_file(tmp_path):
    path = tmp_path / "items.txt"
    path.write_bytes(b"\xef\xbb\xbfapple\r\nbanana\r\n  cherry \nd\xc3\xbcrian")
    assert L.ItemDomain.from_file(path).names == tuple(FRUIT)
    path.write_text("apple\nbanana\n", encoding="utf-8")  # final newline: no extra line
    assert L.ItemDomain.from_file(str(path)).k == 2
    for data, words in [(b"apple\nbanana\n\ncherry\n", "line 3 is empty"),
                        (b"apple\nbanana\ncherry\nbanana\n", "line 4 repeats the name 'banana' "
                                                             "of line 2"),
                        (b"apple\nban\xffana\n", "line 2 is not UTF-8"),
                        (b"apple\n", "at least 2"),
                        (b"", "at least 2")]:
        path.write_bytes(data)
        with pytest.raises(ValueError, match="items.txt: ") as err:
            L.ItemDomain.from_file(path)
        assert words in str(err.value) and str(path) in str(err.value)
    with pytest.raises(TypeError, match="path must be a file path"):
        L.ItemDomain.from_file(3)


def test_item_domain_label_checks_the_length():
    dom = L.ItemDomain(FRUIT)
    with pytest.raises(ValueError, match="k = 4"):
        dom.label([1, 2, 3])
    with pytest.raises(TypeError, match="label needs at least one column"):
        dom.label()


# -- 4. seeded simulation ----------------------------------------------------------------------

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


def test_normal_quantile_used_by_intervals_is_the_textbook_one():
    from ldpcompress.randomizers.estimator import normal_quantile
    assert normal_quantile(0.95) == pytest.approx(Z95, rel=1e-12)
    assert normal_quantile(0.5) == pytest.approx(NormalDist().inv_cdf(0.75), rel=1e-12)
