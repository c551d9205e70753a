"""Soundness and accuracy of the amplification bounds (docs/theory.md §2) against independent references."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import krr_worst_delta, mp_binary_rr_lower, mp_clone_delta

import ldpcompress as L
from ldpcompress.accounting import amplification as A
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
