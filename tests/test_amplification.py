"""Soundness and accuracy of the amplification bounds (docs/theory.md §2) against independent references,
and at the edges: large eps0 (complements formed without cancellation), parameter validation
before any kernel runs, extreme but valid inputs (tiny eps0, denormal delta, huge n), with
expected values from mpmath at high precision, computed from eps0 itself."""
import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    krr_worst_delta,
    mp_binary_rr_lower,
    mp_clone_delta,
    mp_general_delta,
    mp_krr_attack_delta,
    mp_krr_single_outcome_eps,
    mp_krr_worst_delta,
)

import ldpcompress as L
from hang import no_hang
from ldpcompress.accounting import amplification as A
from ldpcompress.accounting.inverse import max_eps0
from ldpcompress.accounting.profiles import BinaryLowerProfile


@pytest.mark.parametrize("n", [1, 2, 5, 30, 120])
@pytest.mark.parametrize("eps0", [0.3, 1.0, 4.0])
def test_clone_kernel_matches_mpmath(n, eps0):
    q, p = math.exp(-eps0), 1 / (1 + math.exp(-eps0))
    for eps in [0.0, 0.05, 0.3, 0.9 * eps0]:
        exact = mp_clone_delta(n, q, p, eps)
        got = L.clone_pair_delta(n, q, p, eps)
        assert got >= exact  # never optimistic
        # relative 1e-10, or the rounding floor 4u(E+1) where p - E(1-p) cancels (n = 1)
        assert got <= exact * (1 + 1e-10) + 4 * 2.0 ** -53 * (math.exp(eps) + 1)


def test_clone_kernel_array_eps():
    grid = np.array([0.0, 0.1, 0.5])
    arr = L.clone_pair_delta(50, 0.3, 0.7, grid)
    assert np.allclose(arr, [L.clone_pair_delta(50, 0.3, 0.7, e) for e in grid], rtol=0, atol=0)
    assert np.all(np.diff(arr) <= 0)


@pytest.mark.parametrize("n", [1, 4, 25])
def test_binary_lower_bound_matches_mpmath(n):
    for eps0 in [0.5, 2.0]:
        for eps in [0.0, 0.1, 0.4]:
            exact = mp_binary_rr_lower(n, eps0, eps)
            got = BinaryLowerProfile(n, eps0).delta_at(eps)  # the §2.6(a) datasets
            assert got <= exact * (1 + 1e-15)
            assert got >= exact * (1 - 1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4, 6])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_krr_bounds_dominate_brute_force(n, k):
    grid = [0.0, 0.1, 0.3, 0.6, 1.0, 1.4]
    for eps0 in [0.5, 1.5]:
        exact = krr_worst_delta(n, k, eps0, grid)
        for eps, ex in zip(grid, exact):
            res = L.delta(n, eps0, eps, k=k)
            for b in res.bounds:
                if b.upper and b.applicable:
                    assert b.value >= ex - 1e-14, (b.name, n, k, eps0, eps)
                elif not b.upper:
                    assert b.value <= ex + 1e-14
            if k == 2:  # binary case sits between §2.6 and §2.1
                low = A.lower_delta(n, eps0, eps, k=2).value
                gen = A.general_delta(n, eps0, eps).value
                assert low - 1e-14 <= ex <= gen + 1e-14


def test_blanket_bound_tight_at_scale():
    """§2.4(b) sits above the exact §2.6(b) attack and within 1e-4 relative (n = 1e4, k = 100)."""
    res = L.epsilon(10_000, 4.0, 1e-6, k=100)
    assert res.method == "krr_blanket"
    assert res.lower <= res.value <= res.lower * (1 + 1e-3)


@pytest.mark.parametrize("n,k,eps0", [(4, 3, 1.5), (5, 4, 0.5), (6, 3, 1.0)])
def test_krr_split_functions_dominate_brute_force_and_invert(n, k, eps0):
    """The split-pair bound's public functions (docs/theory.md §2.4(a)): above the exact
    worst case over all neighbouring datasets, and eps(delta) meets delta."""
    grid = [0.0, 0.2, 0.5, 0.9]
    for eps, exact in zip(grid, krr_worst_delta(n, k, eps0, grid)):
        assert A.krr_split_delta(n, eps0, k, eps).value >= exact - 1e-14
    for delta in (1e-2, 1e-4):
        eps = A.krr_split_epsilon(n, eps0, k, delta).value
        assert 0.0 <= eps and A.krr_split_delta(n, eps0, k, eps).value <= delta


def test_blocking_is_sound_and_nearly_free():
    blocked = A.krr_blanket_epsilon(20_000, 2.0, 50, 1e-6).value  # 64 blocks
    exact = A.krr_blanket_epsilon(20_000, 2.0, 50, 1e-6, blocks=None).value
    assert exact <= blocked <= exact * (1 + 1e-3)


def test_closed_form_not_applicable_outside_condition():
    b = A.closed_form_epsilon(1000, 4.0, 1e-6)
    assert not b.applicable and "log(n/(16" in b.note
    with pytest.raises(ValueError, match="is not applicable"):
        float(b)


def test_closed_form_formula():
    n, eps0, delta = 10 ** 6, 2.0, 1e-6
    e0 = math.exp(eps0)
    want = math.log(1 + (e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4 / delta)) / math.sqrt(n)
                                                + 8 * e0 / n))
    assert A.closed_form_epsilon(n, eps0, delta).value == pytest.approx(want, rel=1e-14)
    # and its delta query certifies its own eps
    assert A.closed_form_delta(n, eps0, want * (1 + 1e-9)).value <= delta


def test_eps_solver_precision():
    """eps(delta) is an upper end: delta(eps) <= target there and > target 1e-9 below."""
    n, eps0, delta = 10 ** 5, 1.0, 1e-6
    eps = A.general_epsilon(n, eps0, delta).value
    assert A.general_delta(n, eps0, eps).value <= delta
    assert A.general_delta(n, eps0, eps * (1 - 1e-9)).value > delta


def test_every_result_capped_by_eps0():
    res = L.epsilon(3, 0.5, 1e-9)
    assert res.value <= 0.5
    assert L.delta(100, 1.0, 1.0).value == 0.0


def test_approx_dp_randomizer():
    n, eps0 = 10 ** 5, 1.0
    pure = A.general_epsilon(n, eps0, 1e-6).value
    approx = A.approx_epsilon(n, eps0, 1e-14, 1e-6).value
    assert pure <= approx <= eps0
    b = A.approx_delta(n, eps0, 1e-14, approx)
    assert b.value <= 1e-6 * (1 + 1e-9)


def test_extreme_valid_input_is_finite():
    cases = [(10 ** 9, 20.0, 1e-300), (10 ** 9, 4.0, 1e-300), (10 ** 9, 0.5, 1e-300),
             (1, 20.0, 1e-300)]
    for n, eps0, delta in cases:
        res = L.epsilon(n, eps0, delta, lower=False)
        assert math.isfinite(res.value) and 0 <= res.value <= eps0


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=100, eps0=0.0, delta=1e-6), "eps0"),
    (dict(n=100, eps0=-1.0, delta=1e-6), "eps0"),
    (dict(n=100, eps0=math.inf, delta=1e-6), "eps0"),
    (dict(n=100, eps0=math.nan, delta=1e-6), "eps0"),
    (dict(n=0, eps0=1.0, delta=1e-6), "n"),
    (dict(n=10.5, eps0=1.0, delta=1e-6), "n"),
    (dict(n=100, eps0=1.0, delta=0.0), "delta"),
    (dict(n=100, eps0=1.0, delta=1.0), "delta"),
    (dict(n=100, eps0=1.0, delta=1e-6, k=1), "k"),
])
def test_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        L.epsilon(**kwargs)


def test_bad_types():
    with pytest.raises(TypeError, match="eps0"):
        L.epsilon(100, "1", 1e-6)
    with pytest.raises(TypeError, match="n"):
        L.epsilon(True, 1.0, 1e-6)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 50_000), eps0=st.floats(0.1, 6.0), ld=st.floats(-12, -2))
def test_monotone_and_ordered(n, eps0, ld):
    delta = 10.0 ** ld
    res = L.epsilon(n, eps0, delta)
    assert res.lower <= res.value <= eps0
    assert A.general_epsilon(2 * n, eps0, delta).value <= res.value * (1 + 1e-9)
    assert A.general_epsilon(n, eps0, delta / 10).value >= res.value * (1 - 1e-9)
    assert A.general_epsilon(n, eps0 * 1.1, delta).value >= res.value * (1 - 1e-9)
    cf = A.closed_form_epsilon(n, eps0, delta)
    if cf.applicable:
        assert cf.value >= A.general_epsilon(n, eps0, delta).value


def test_inverse_queries_round_trip():
    n, eps, delta = 10 ** 5, 0.3, 1e-6
    e0 = L.max_eps0(n, eps, delta)
    assert A.general_epsilon(n, e0, delta).value <= eps
    assert A.general_epsilon(n, e0 * (1 + 1e-6), delta).value > eps * (1 - 1e-9)
    m = L.min_n(e0, eps, delta)
    assert m <= n
    assert A.general_epsilon(m, e0, delta).value <= eps
    assert A.general_delta(m - 1, e0, eps).value > delta


def test_inverse_bad_input():
    with pytest.raises(ValueError, match="delta"):
        L.max_eps0(100, 0.5, 2.0)
    with pytest.raises(ValueError, match="eps"):
        L.min_n(1.0, -0.5, 1e-6)


# ==============================================================================================
# At the edges (large and tiny eps0, denormal delta, huge n, validation before any kernel)
# ==============================================================================================

BIG_EPS0 = [17.0, 20.0, 25.0, 30.0, 36.0, 40.0, 60.0]


def exact_rr1_delta(eps0, eps):
    """n = 1: delta(eps) = (e^eps0 - e^eps)/(e^eps0 + 1) of binary RR, in mpmath."""
    with mp.workdps(60):
        e0 = mp.e ** mp.mpf(eps0)
        return max(mp.mpf(0), (e0 - mp.e ** mp.mpf(eps)) / (e0 + 1))


def exact_rr1_eps(eps0, delta):
    """n = 1: the eps solving (e^eps0 - e^eps)/(e^eps0 + 1) = delta, in mpmath."""
    with mp.workdps(60):
        e0 = mp.e ** mp.mpf(eps0)
        return mp.log(e0 - mp.mpf(delta) * (e0 + 1))


def no_warnings(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kw)


# ----------------------------------------------------------------------------------------------
# Large eps0 against exact binary RR (n = 1) and mpmath (n > 1)
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps0", BIG_EPS0)
@pytest.mark.parametrize("n", [1, 2, 3, 10])
def test_large_eps0_epsilon_sound(eps0, n):
    for delta in (1e-6, 1e-3, 0.5):
        res = no_warnings(L.epsilon, n, eps0, delta)
        # upper: the exact pair's delta at the reported eps is within the target
        assert mp_general_delta(n, eps0, res.value) <= delta, (n, eps0, delta, res.value)
        # lower: the exact binary-RR attack's delta at the reported lower eps exceeds the target
        assert mp_binary_rr_lower(n, eps0, res.lower, dps=60) >= delta, (n, eps0, delta, res.lower)
        if n == 1:  # the bound is exact for one user: tight to the solver's precision
            exact = float(exact_rr1_eps(eps0, delta))
            assert exact <= res.value <= exact * (1 + 1e-9)
            assert exact * (1 - 1e-9) <= res.lower <= exact


@pytest.mark.parametrize("eps0", BIG_EPS0)
@pytest.mark.parametrize("n", [1, 2, 3, 10])
def test_large_eps0_delta_sound(eps0, n):
    for eps in (eps0 - 1e-6, eps0 - 1e-3, eps0 - 0.7, 0.5 * eps0):
        res = no_warnings(L.delta, n, eps0, eps)
        exact_up = mp_general_delta(n, eps0, eps)
        exact_low = mp_binary_rr_lower(n, eps0, eps, dps=60)
        assert res.value >= exact_up, (n, eps0, eps)
        assert res.value <= exact_up * (1 + 1e-8) + 1e-15
        assert res.lower <= exact_low, (n, eps0, eps)
        assert res.lower >= exact_low * (1 - 1e-8) - 1e-15


@pytest.mark.parametrize("eps0", [17.0, 30.0, 40.0])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_large_eps0_krr_against_brute_force(eps0, n):
    """k-RR (k = 3): every upper bound above, the k-RR attack below the exact worst case."""
    for eps in (eps0 - 1e-6, eps0 - 0.5):
        exact = mp_krr_worst_delta(n, 3, eps0, eps)
        res = no_warnings(L.delta, n, eps0, eps, k=3)
        for b in res.bounds:
            if b.upper and b.applicable:
                assert b.value >= exact, (b.name, n, eps0, eps)
            elif not b.upper:
                assert b.value <= exact, (b.name, n, eps0, eps)


# ----------------------------------------------------------------------------------------------
# The numbers quoted in the issue (each failed before the fix)
# ----------------------------------------------------------------------------------------------

def test_issue_n1_eps0_25():
    got = L.epsilon(n=1, eps0=25, delta=1e-6).value  # was 24.9999948 (true delta 5.2e-6)
    assert got >= float(exact_rr1_eps(25, 1e-6))  # 24.9999990
    assert exact_rr1_delta(25, got) <= 1e-6


def test_issue_n1_eps0_33_epsilon():
    got = L.epsilon(n=1, eps0=33, delta=1e-6).value  # true delta was 870x the target
    assert exact_rr1_delta(33, got) <= 1e-6


def test_issue_n1_eps0_33_delta():
    got = L.delta(n=1, eps0=33, eps=32.9995).value  # was 0.0
    exact = exact_rr1_delta(33, 32.9995)  # 5.0e-4
    assert exact >= 4.9e-4
    assert exact <= got <= exact * (1 + 1e-9)


def test_issue_max_eps0():
    got = max_eps0(n=1, eps=32.9995, delta=1e-6)  # was 33.02
    with mp.workdps(60):  # largest eps0 with log(e^eps0 (1 - delta) - delta) <= eps
        top = mp.log((mp.e ** mp.mpf(32.9995) + mp.mpf(1e-6)) / (1 - mp.mpf(1e-6)))
    assert 32.9995 <= got <= top


def test_issue_krr_eps0_30():
    n, eps0, k, delta = 10 ** 6, 30.0, 100, 1e-6
    got = L.epsilon(n=n, eps0=eps0, delta=delta, k=k).value  # was 29.99983
    # Exact attack event: user 1 differs (x0 vs x1), all others hold z; the histogram
    # {x0: 1, z: n-1} alone gives delta(eps) >= A - e^eps B, so the true eps is above the root.
    floor_eps = mp_krr_single_outcome_eps(n, k, eps0, delta)
    assert floor_eps >= 29.99999  # 29.9999989
    assert got >= floor_eps


def test_issue_lower_not_above_exact():
    got = L.epsilon(n=1, eps0=30, delta=0.5).lower  # was 1e-3 above the exact value
    assert got <= float(exact_rr1_eps(30, 0.5))


def test_issue_krr_blocks_zero_refused():
    for bad in (0, -3):
        with pytest.raises(ValueError, match="blocks"):
            L.epsilon(10 ** 5, 2.0, 1e-6, k=10, blocks=bad)
    for bad in (1.5, math.nan):
        with pytest.raises(ValueError, match="blocks"):
            A.krr_blanket_delta(100, 1.0, 10, 0.5, blocks=bad)
    for bad in ("4", True):
        with pytest.raises(TypeError, match="blocks"):
            A.krr_blanket_epsilon(100, 1.0, 10, 1e-6, blocks=bad)


def test_issue_tiny_eps0():
    res = no_warnings(L.epsilon, 100, 1e-300, 1e-6)  # was ZeroDivisionError
    assert 0.0 <= res.value <= 1e-300 and 0.0 <= res.lower <= res.value
    d = no_warnings(L.delta, 100, 1e-300, 0.0)
    assert 0.0 <= d.lower <= d.value <= 1.0


def test_issue_denormal_delta():
    for delta in (5e-324, 1e-310):
        res = no_warnings(L.epsilon, 100, 1.0, delta)  # was math domain error
        assert 0.0 <= res.lower <= res.value <= 1.0
        b = no_warnings(A.closed_form_epsilon, 10 ** 9, 1.0, delta)
        assert b.value is None or b.value <= 1.0


def test_issue_huge_n_answers_or_refuses_fast():
    for n in (2 ** 53, 10 ** 12):
        try:
            with no_hang(f"epsilon at n = {n}"):
                res = L.epsilon(n, 1.0, 1e-6)
        except ValueError as err:
            assert "n" in str(err) and "10000000000" in str(err).replace(",", "")
        else:
            assert 0.0 < res.value < 1e-3


# ----------------------------------------------------------------------------------------------
# Extremes: no exception, warning, nan or inf; results sound
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps0", [1e-300, 1e-20, 700.0])
def test_extreme_eps0_every_query(eps0):
    n, delta0 = 1000, 1e-12
    queries = [
        lambda: L.epsilon(n, eps0, 1e-6), lambda: L.delta(n, eps0, 0.5 * eps0),
        lambda: L.epsilon(n, eps0, 1e-6, k=5), lambda: L.delta(n, eps0, 0.5 * eps0, k=5),
        lambda: A.general_epsilon(n, eps0, 1e-6), lambda: A.general_delta(n, eps0, 0.0),
        lambda: A.closed_form_epsilon(n, eps0, 1e-6), lambda: A.closed_form_delta(n, eps0, 0.1),
        lambda: A.approx_epsilon(n, eps0, delta0, 1e-3), lambda: A.approx_delta(n, eps0, delta0, 0.1),
        lambda: A.lower_epsilon(n, eps0, 1e-6), lambda: A.lower_delta(n, eps0, 0.5 * eps0, k=5),
    ]
    for q in queries:
        out = no_warnings(q)
        value = getattr(out, "value", None)
        assert value is None or (math.isfinite(value) and value >= 0.0)


def test_eps0_above_supported_range_refused():
    with pytest.raises(ValueError, match="eps0"):
        L.epsilon(100, 800.0, 1e-6)
    with pytest.raises(ValueError, match="eps0"):
        L.delta(100, 1e4, 1.0, k=3)


def test_eps0_700_general_matches_rr():
    """At eps0 = 700 (e^eps0 near the top of the double range) n = 1 is still exact."""
    eps = 699.0
    got = no_warnings(A.general_delta, 1, 700.0, eps).value
    exact = exact_rr1_delta(700.0, eps)
    assert exact <= got <= exact * (1 + 1e-9)


# ----------------------------------------------------------------------------------------------
# Validation of every kernel parameter reachable from the API
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, exc, name", [
    (dict(tol=0.0), ValueError, "tol"), (dict(tol=math.nan), ValueError, "tol"),
    (dict(tol=1.5), ValueError, "tol"), (dict(tol="x"), TypeError, "tol"),
    (dict(q=math.nan), ValueError, "q"), (dict(q="0.1"), TypeError, "q"),
    (dict(p=1.0), ValueError, "p"), (dict(p=0.4), ValueError, "p"),
    (dict(pc=0.3), ValueError, "pc"), (dict(pc=0.0), ValueError, "pc"),
    (dict(eps=[0.1, math.nan]), ValueError, "eps"), (dict(eps=[]), ValueError, "eps"),
    (dict(eps=[[0.1], [-1.0]]), ValueError, "eps"), (dict(n=2 ** 60), ValueError, "n"),
])
def test_clone_pair_delta_validates(kwargs, exc, name):
    args = dict(n=10, q=0.1, p=0.8, eps=0.1)
    args.update(kwargs)
    with pytest.raises(exc, match=name):
        L.clone_pair_delta(**args)


def test_clone_pair_delta_accurate_complement():
    """With pc given, a pair whose p rounds to 1.0 is still handled (p = 1 - 1e-20)."""
    got = L.clone_pair_delta(1, 0.0, 1.0, 20.0, pc=1e-20)
    assert got >= 1.0 - math.exp(20.0) * 1e-20 - 1e-15
    with pytest.raises(ValueError, match="pc"):
        L.clone_pair_delta(1, 0.0, 0.75, 1.0, pc=0.2)  # p + pc != 1


@pytest.mark.parametrize("k", [1, 2 ** 40, 2.5, "3"])
def test_k_validated(k):
    with pytest.raises((ValueError, TypeError), match="k"):
        L.epsilon(100, 1.0, 1e-6, k=k)


@pytest.mark.parametrize("n", [10 ** 4, 10 ** 5])
def test_binary_lower_never_above_upper_in_far_tail(n):
    """The binary-RR attack's pmf window is truncated: an outcome at the cut edge must not be
    summed (it used to add about the edge pmf, 1e-53, far above the exact value)."""
    for eps in (0.2, 0.4):
        low = A.lower_delta(n, 1.0, eps).value
        assert low <= A.general_delta(n, 1.0, eps).value


def test_closed_form_delta_never_zero_below_eps0():
    """Thm 3.1 gives delta = 4 e^-L > 0; at n = 2^53 it underflowed to a (pure-DP) 0.0."""
    got = A.closed_form_delta(2 ** 53, 1.0, 0.5).value
    assert got is not None and got > 0.0


# ----------------------------------------------------------------------------------------------
# k-RR exact attack at large eps0 (its f0 - E f1 once cancelled e^eps0-fold)
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps0", [17.0, 20.0, 25.0, 30.0, 40.0])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_krr_attack_lower_bound_large_eps0(eps0, n):
    """lower <= exact attack <= upper, and the lower bound is the attack to 1e-9 relative.
    lower_delta(4, 25, 24.999, k=3) was 0 (exact 9.995e-4); at eps0 = 40, eps = 39.5, 0 vs 0.393."""
    for eps in (eps0 - 1e-3, eps0 - 0.5, eps0 - 3.0, 0.5 * eps0):
        exact = mp_krr_attack_delta(n, 3, eps0, eps)
        low = no_warnings(A.lower_delta, n, eps0, eps, k=3).value
        up = no_warnings(L.delta, n, eps0, eps, k=3, lower=False).value
        assert low <= exact <= up, (n, eps0, eps, low, float(exact), up)
        assert low >= float(exact) * (1 - 1e-9) - 1e-300, (n, eps0, eps, low, float(exact))


def test_krr_attack_lower_eps_large_n():
    """L.epsilon(1e6, 30, 1e-6, k=100).lower was 29.435, far below the single-outcome attack
    (histogram {x0: 1, z: n-1} alone gives delta(eps) >= A - e^eps B)."""
    n, eps0, k, delta = 10 ** 6, 30.0, 100, 1e-6
    res = L.epsilon(n=n, eps0=eps0, delta=delta, k=k)
    floor_eps = mp_krr_single_outcome_eps(n, k, eps0, delta)
    assert floor_eps >= 29.9999989
    assert floor_eps * (1 - 1e-9) <= res.lower <= res.value


# ----------------------------------------------------------------------------------------------
# Upper-bound kernels carry the error bound of their log-pmf weights
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,eps0,eps", [(50, 25.0, 12.5), (150, 25.0, 12.5), (150, 25.0, 24.9),
                                        (20, 30.0, 10.0),
                                        pytest.param(300, 17.0, 8.0, marks=pytest.mark.slow),
                                        (200, 2.0, 0.5)])
def test_general_delta_never_below_mpmath(n, eps0, eps):
    """general_delta(150, 25, 12.5) was 0.9999962722982468, 4.5e-14 below the exact
    0.99999627229829207: the weights exp(binom_logpmf) err by a few ulps of |log w| (7e-14 at
    |log w| = 330) and no allowance covered it."""
    exact = mp_general_delta(n, eps0, eps, dps=50)
    got = no_warnings(A.general_delta, n, eps0, eps).value
    assert got >= exact, (n, eps0, eps, got, mp.nstr(exact, 20))
    assert got <= exact * (1 + 1e-9)
    # the kernel itself (no eps0 cap in the way)
    q, p = math.exp(-eps0), 1 / (1 + math.exp(-eps0))
    pc = math.exp(-eps0) / (1 + math.exp(-eps0))
    assert A.clone_pair_delta(n, q, p, eps, pc=pc) >= mp_clone_delta_exact(n, eps0, eps)


def mp_clone_delta_exact(n, eps0, eps):
    """The clone pair at q = float(e^-eps0) (the kernel's own q, taken as exact) in mpmath."""
    return mp_general_delta(n, eps0, eps, dps=50, q=math.exp(-eps0))


def test_half_binomial_tail_walk_keeps_its_digits():
    """tail_dec_c (c -> c - 1 at fixed t) subtracted without re-anchoring: deep in the upper tail
    the first term dominates and the error grew ~3x per step (2e89 relative after 130 steps)."""
    from ldpcompress.kernels.binomial import tail_dec_c, tail_direct
    c, t = 1000, 850
    u, pm1 = tail_direct(c, t)
    with mp.workdps(50):
        while c > 870:
            u, pm1 = tail_dec_c(c, t, u, pm1)
            c -= 1
            exact = mp.fsum(mp.binomial(c, a) for a in range(t, c + 1)) / mp.mpf(2) ** c
            assert abs(mp.mpf(u) / exact - 1) < 1e-11, c


@pytest.mark.parametrize("eps0", [1e-9, 1e-6, 1e-3])
def test_connect_the_dots_at_tiny_eps(eps0):
    """Connect-the-dots atoms of binary RR(eps0) reproduce its total variation (the profile at
    eps = 0). The hull's e^b - e^a and 1 - e^neg were formed by subtraction: at eps0 = 1e-9 the
    atoms' delta(0) fell 1.3e-7 (relative) below the true one."""
    from ldpcompress.accounting import pld as P

    def profile(e):
        return math.exp(e) * math.expm1(eps0 - e) / (math.exp(eps0) + 1) if e < eps0 else 0.0
    losses, masses, inf_mass = P.profile_atoms(profile, eps0, 8)
    with mp.workdps(40):
        tv = (mp.e ** eps0 - 1) / (mp.e ** eps0 + 1)
        d0 = mp.fsum(mp.mpf(m) * max(0, 1 - mp.e ** (-mp.mpf(l)))
                     for l, m in zip(losses, masses)) + inf_mass
        assert abs(d0 / tv - 1) < 1e-12
