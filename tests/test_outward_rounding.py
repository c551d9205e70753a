"""Closed forms without cancellation and outward rounding at the last step of every route:
upper bounds never below the exact value, lower bounds never above it (exact arithmetic in
mpmath / fractions)."""
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

import ldpcompress.accounting as L
from ldpcompress import KRR
from ldpcompress.accounting import Accountant, Laplace, PureDP
from ldpcompress.accounting import rdp as R
from ldpcompress.accounting.accountant import rdp_delta
from ldpcompress.accounting.blanket import structure
from ldpcompress.accounting.noise import laplace_sum_rdp
from reference import mp_krr_attack_delta
from reference.composition import mp_rr_composition_delta, mp_rr_composition_epsilon

ORDERS = np.array([1.0 + 1e-6, 1.001, 1.1, 1.5, 2.0, 3.0, 8.0, 32.0, 256.0, 1e4, 1e6])
RATIOS = np.geomspace(1e-12, 1e2, 29)


def mp_laplace_rdp(a, r):
    a, r = mp.mpf(a), mp.mpf(r)
    inner = a / (2 * a - 1) * mp.e ** ((a - 1) * r) + (a - 1) / (2 * a - 1) * mp.e ** (-a * r)
    return mp.log(inner) / (a - 1)


def mp_pure_rdp(a, e):
    a, e = mp.mpf(a), mp.mpf(e)
    return (mp.log(mp.e ** (a * e) + mp.e ** ((1 - a) * e)) - mp.log(1 + mp.e ** e)) / (a - 1)


def _check_grid(fn, exact):
    with mp.workdps(60):
        for r in RATIOS:
            got = fn(float(r))
            for a, g in zip(ORDERS, got):
                e = exact(float(a), float(r))
                assert mp.mpf(float(g)) >= e, (a, r, g, e)
                assert float(g) <= float(e) * (1 + 1e-11) + 1e-300, (a, r, g, e)


def test_laplace_rdp_no_cancellation_against_mpmath():
    _check_grid(lambda r: R.laplace_rdp(1.0, ORDERS, r), mp_laplace_rdp)


def test_laplace_rdp_scaled_sensitivity_and_sign():
    np.testing.assert_array_equal(R.laplace_rdp(2.0, ORDERS, -1.0), R.laplace_rdp(2.0, ORDERS, 1.0))
    assert np.all(R.laplace_rdp(3.0, ORDERS, 0.0) == 0.0)


def test_noise_sum_at_huge_n_is_not_zero():
    # the issue's case: n = 1e8, scale 1, order 2: n D_2(Lap(1/n, 1) || Lap(0, 1)) ~ 1e-8
    got = laplace_sum_rdp(10 ** 8, 1.0, [2.0, 32.0])
    with mp.workdps(60):
        for a, g in zip((2.0, 32.0), got):
            exact = 10 ** 8 * mp_laplace_rdp(a, mp.mpf(1) / 10 ** 8)
            assert mp.mpf(float(g)) >= exact and float(g) <= float(exact) * (1 + 1e-11)
        exact4 = 10 ** 4 * mp_laplace_rdp(2.0, mp.mpf(1) / 10 ** 4)
    assert mp.mpf(float(laplace_sum_rdp(10 ** 4, 1.0, [2.0])[0])) >= exact4


def test_pure_rdp_no_cancellation_against_mpmath():
    _check_grid(lambda e: R.pure_rdp(e, ORDERS), mp_pure_rdp)


def test_gaussian_rdp_rounded_up():
    for sigma in (0.3, 1.0, 3.7, 1e5):
        got = R.gaussian_rdp(sigma, ORDERS)
        exact = [Fraction(a) / (2 * Fraction(sigma) ** 2) for a in ORDERS]
        assert all(Fraction(float(g)) >= e for g, e in zip(got, exact))


def test_log_exp_excess_against_mpmath():
    xs = np.concatenate([-np.geomspace(1e-200, 800, 60), np.geomspace(1e-200, 700, 60)])
    got = R.log_exp_excess(xs)
    with mp.workdps(450):  # e^x - 1 - x at x = 1e-200 needs 400 digits to form
        for x, g in zip(xs, got):
            x = mp.mpf(x)
            exact = mp.log(mp.e ** x - 1 - x)
            assert abs(g - float(exact)) <= 1e-14 * (1 + abs(float(exact))), (x, g, exact)


def test_cks_and_rdp_delta_rounded_up():
    with mp.workdps(60):
        for a in (1.01, 2.0, 50.0, 1e4):
            for rdp in (1e-9, 0.3, 7.0):
                for delta in (1e-12, 1e-6, 0.3):
                    got = R.cks_epsilon(a, rdp, delta)
                    A, D = mp.mpf(a), mp.mpf(delta)
                    exact = mp.mpf(rdp) + mp.log((A - 1) / A) - (mp.log(D) + mp.log(A)) / (A - 1)
                    assert mp.mpf(float(got)) >= max(exact, 0)
                    for eps in (0.0, 0.5, 3.0):
                        got_d = rdp_delta(np.array([a]), np.array([rdp]), eps)
                        ex = mp.e ** ((A - 1) * (mp.mpf(rdp) - eps + mp.log(1 - 1 / A)) - mp.log(A))
                        assert mp.mpf(got_d) >= min(ex, 1)


@pytest.mark.parametrize("eps,times", [(0.5, 10), (2.0, 40), (2.0, 41), (1.0, 3), (0.1, 25),
                                       (3.0, 7)])
def test_pure_dp_composition_never_below_exact(eps, times):
    acct = Accountant().compose(PureDP(eps), times=times)
    for delta in (1e-6, 1e-3):
        res = acct.epsilon(delta, compare=True)
        exact = mp_rr_composition_epsilon(eps, times, mp.mpf(delta))
        for name, value in [(res.method, res.value)] + list(res.others.items()):
            if value is not None:
                assert mp.mpf(value) >= exact, (name, value, exact)
        if res.lower is not None:
            assert mp.mpf(res.lower) <= exact <= res.value, (res.lower, exact)


@pytest.mark.parametrize("h", [0.05, 0.5, None])
def test_pld_lower_never_above_exact_when_the_mass_sits_on_the_top_atom(h):
    """Issue 27: with nearly all composed mass on the top loss atom, the PLD's lower for eps
    was that grid loss (the solution lies below the first atom of the grid), above the exact
    eps: h = 0.05, PureDP(30) x 2, delta 0.3 gave 59.9 where the exact value is 59.64333.
    Every route's upper must be >= the exact eps and every lower <= it, for T = 1..5, eps0 in
    15..60, delta in 0.01..0.3, coarse and default grids; delta queries likewise."""
    for eps0 in (15.0, 22.5, 30.0, 45.0, 60.0):
        for times in range(1, 6):
            acct = Accountant(h=h).compose(PureDP(eps0), times=times)
            for delta in (0.01, 0.05, 0.3):
                exact = mp_rr_composition_epsilon(eps0, times, delta)
                for method in ("auto", "pld"):
                    res = acct.epsilon(delta, method=method, compare=method == "auto")
                    where = (eps0, times, delta, method, res.lower, exact)
                    assert res.lower is not None and mp.mpf(res.lower) <= exact, where
                    for name, value in [(res.method, res.value)] + list(res.others.items()):
                        if value is not None:
                            assert mp.mpf(value) >= exact, (name, value) + where
                x = float(exact) * 0.999
                d_exact = mp_rr_composition_delta(eps0, times, x)
                d = acct.delta(x, method="pld")
                assert mp.mpf(d.lower) <= d_exact <= mp.mpf(d.value), (eps0, times, x, d)


def test_issue_27_pld_lower_cases():
    exact = mp_rr_composition_epsilon(30.0, 2, mp.mpf("0.3"))
    assert abs(exact - mp.mpf("59.64333")) < 1e-5
    res = Accountant(h=0.05).compose(PureDP(30.0), times=2).epsilon(0.3, method="pld")
    assert res.lower <= exact <= res.value  # the lower was 59.9000
    res = Accountant().compose(PureDP(30.0), times=2).epsilon(0.01)
    exact = mp_rr_composition_epsilon(30.0, 2, mp.mpf("0.01"))
    assert res.lower <= exact <= res.value  # the lower was 59.989949664255796 > 59.9899496641465


def test_laplace_composition_rdp_route_rounded_up():
    # RDP route of T Laplace mechanisms: sum of T curves; compare with the mpmath curve
    acct = Accountant().compose(Laplace(scale=50.0), times=7)
    curve = acct._rdp(np.array([2.0, 20.0]))
    with mp.workdps(60):
        for a, g in zip((2.0, 20.0), curve):
            assert mp.mpf(float(g)) >= 7 * mp_laplace_rdp(a, mp.mpf(1) / 50)


def _exact_eps0(st):
    ratio = st.a1 * (1 - st.a) / (st.a * (1 - st.a1))
    return mp.log(mp.mpf(ratio.numerator) / ratio.denominator)


def test_krr_attack_uses_eps0_rounded_down():
    oracle = KRR(3, 0.5)
    # n = 1: delta(eps) of one report is 0 for eps >= the realised eps0 (<= 0.5 here)
    with mp.workdps(60):
        assert _exact_eps0(structure(oracle)) <= mp.mpf(0.5)
    assert L.delta(1, eps=0.5, oracle=oracle).lower == 0.0
    for k, eps0 in ((3, 40.0), (4, 2.0), (3, 0.5)):
        oracle = KRR(k, eps0)
        st = structure(oracle)
        assert st.eps0_lower < st.eps0
        with mp.workdps(60):
            e0 = _exact_eps0(st)
            assert mp.mpf(st.eps0_lower) <= e0 <= mp.mpf(st.eps0)
            for n in (1, 2, 3):
                for eps in (float(e0) - 1e-9, float(e0) * 0.9, float(e0) * 0.5):
                    low = L.delta(n, eps=eps, oracle=oracle).lower
                    exact = mp_krr_attack_delta(n, k, e0, mp.mpf(eps))
                    assert mp.mpf(low) <= exact, (k, eps0, n, eps, low, exact)


def test_underflowed_delta_is_the_smallest_double_not_zero():
    """A Gaussian's delta is positive at every eps: its PLD's mass above the grid and the
    closed form are reported as positive doubles when they underflow, and composed infinity
    atoms keep tiny masses (P(either) = a + b (1 - a), not 1 - (1 - a)(1 - b) = 0)."""
    from ldpcompress.accounting import gaussian as G
    from ldpcompress.accounting import pld as P
    assert P.gaussian(3e4, h=0.04).dirs[0].inf_mass > 0.0
    assert G.delta_bracket(1.0 / 3e4, 5.0)[1] > 0.0
    from ldpcompress.accounting.sampled import GaussianNoise  # its remove loss is unbounded
    assert GaussianNoise(0.8, 0.01).delta("remove", 3000.0)[0] > 0.0
    assert GaussianNoise(0.8, 0.01).delta("add", 0.5)[0] == 0.0  # add's loss <= -log(1 - q)
    tiny = P.approx_dp(1.0, 1e-320, h=0.01)
    assert tiny.compose(tiny).dirs[0].inf_mass >= 2e-320  # exact: 2e-320 - 1e-640
    # pure DP at eps >= its total loss: delta is exactly 0, and so reported
    assert Accountant().compose(PureDP(1.0), times=3).delta(3.0, method="kov").value == 0.0


def test_dots_atoms_span_the_whole_eps_range():
    """Connect-the-dots atoms of a profile evaluated from 0 to 700 (mirrored to -700): the
    hull's e^b - e^a across a gap over 709 overflowed expm1. Profile 1/2 up to 700, then 0:
    the atoms are 1/2 at loss 0 and 1/2 at 700 (each point's delta is then reproduced)."""
    from ldpcompress.accounting import pld as P
    losses, masses, inf_mass = P.profile_atoms_at(lambda e: 0.5 if e < 700 else 0.0,
                                                  np.array([0.0, 1.0, 700.0]))
    atoms = dict(zip(losses.tolist(), masses.tolist()))
    assert inf_mass == 0.0 and atoms[0.0] == pytest.approx(0.5) and atoms[700.0] == 0.5
