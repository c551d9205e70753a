"""PrivUnit2 accounted by the binary-support blanket (docs/theory.md §2.12): the cap measures,
the worst pair (antipodal), a brute force on a discretised circle, and the accounting query."""
import itertools
import math
from fractions import Fraction

import mpmath as mp
import pytest

import ldpcompress as L
from ldpcompress.accounting import blanket as BL
from ldpcompress.randomizers.privunit import PrivUnit2
from ldpcompress.randomizers.privunit_caps import cap_measure, orthogonal_cap_bound
from ldpcompress.randomizers.structure import ShuffleStructure
from reference.shuffle import hockey, shuffled_law

TOL = 1e-30


@pytest.mark.parametrize("d,gamma", [(2, 0.0), (2, 0.6), (3, 0.3), (3, 0.9), (5, 0.5),
                                     (50, 0.2), (1000, 0.05)])
def test_cap_measure_closed_forms(d, gamma):
    """P_cap against closed forms (d = 2: acos(gamma)/pi; d = 3: (1 - gamma)/2, Archimedes)
    and, for other d, against the integral of the density of <v, u> by mpmath quadrature."""
    got = cap_measure(d, gamma)
    mp.mp.dps = 40
    g = mp.mpf(gamma)
    if d == 2:
        exact = mp.acos(g) / mp.pi
    elif d == 3:
        exact = (1 - g) / 2
    else:
        norm = mp.beta(mp.mpf(1) / 2, mp.mpf(d - 1) / 2)
        exact = mp.quad(lambda t: (1 - t * t) ** (mp.mpf(d - 3) / 2), [g, 1]) / norm
    assert abs(mp.mpf(got.numerator) / got.denominator - exact) <= mp.mpf(10) ** -28 * exact


@pytest.mark.parametrize("d,gamma", [(2, 0.3), (3, 0.2), (3, 0.6), (10, 0.3), (100, 0.1)])
def test_orthogonal_cap_bound_is_above_the_exact_measure(d, gamma):
    """The attack's t3 uses an upper value of two orthogonal caps' common measure: compare
    with the exact measure by quadrature over s = <v, u1> (d >= 3) or arcs (d = 2)."""
    mp.mp.dps = 30
    g = mp.mpf(gamma)
    if d == 2:
        exact = max(0, 2 * mp.acos(g) - mp.pi / 2) / (2 * mp.pi)
    else:
        norm = mp.beta(mp.mpf(1) / 2, mp.mpf(d - 1) / 2)
        top = mp.sqrt(1 - g * g)

        def q(x):  # cap measure of S^(d-2) at x
            if x >= 1:
                return mp.mpf(0)
            return mp.betainc(mp.mpf(d - 2) / 2, 0.5, 0, 1 - x * x, regularized=True) / 2

        exact = mp.quad(lambda s: (1 - s * s) ** (mp.mpf(d - 3) / 2) * q(g / mp.sqrt(1 - s * s)),
                        [g, top]) / norm if g < top else mp.mpf(0)
    got = orthogonal_cap_bound(d, gamma)
    assert mp.mpf(got.numerator) / got.denominator >= exact * (1 - mp.mpf(10) ** -20)


# -- brute force on a discretised circle ------------------------------------------------------

N_POINTS, HALF_WIDTH = 8, 1   # 8 directions; the cap of u holds u and its 2 neighbours
P0 = Fraction(3, 4)


def _disc_law(u):
    """Discretised PrivUnit2 on 8 directions: density P0/a on the cap of u, (1-P0)/(1-a) off."""
    cap = {(u + s) % N_POINTS for s in range(-HALF_WIDTH, HALF_WIDTH + 1)}
    a = Fraction(len(cap), N_POINTS)
    return [(P0 / a if v in cap else (1 - P0) / (1 - a)) / N_POINTS for v in range(N_POINTS)], cap


def _disc_structure(sep):
    cap1, cap2 = _disc_law(0)[1], _disc_law(sep)[1]
    a = Fraction(len(cap1), N_POINTS)
    p11 = Fraction(len(cap1 & cap2), N_POINTS)
    return ShuffleStructure("disc-privunit2", (("sep", sep),), a, P0, p11, a - p11, False)


def test_discretised_privunit_brute_force():
    """n = 2, 3 users, every separation of the pair and every input of the others: the exact
    delta of the shuffled reports is below the blanket bound of the pair's own law, which is
    below the bound of the antipodal (disjoint caps, P(1,1) = 0) law: the worst pair."""
    st_anti = _disc_structure(N_POINTS // 2)
    assert st_anti.p11 == 0
    eps0 = st_anti.eps0
    bounds = {}
    for n in (2, 3):
        for frac in (0.2, 0.5, 0.8):
            eps = frac * eps0
            e = Fraction(math.exp(eps))  # delta is non-increasing in e: use e rounded as is
            anti = BL.BlanketProfile(n, st_anti, exact_law=True).delta(eps, TOL)
            for sep in range(1, N_POINTS // 2 + 1):
                st = _disc_structure(sep)
                own = BL.BlanketProfile(n, st, exact_law=True).delta(eps, TOL)
                bounds[n, frac, sep] = own
                assert own <= anti * (1 + 1e-12), (n, frac, sep)
                for others in itertools.combinations_with_replacement(range(N_POINTS), n - 1):
                    exact = hockey(shuffled_law([_disc_law(x)[0] for x in (0,) + others]),
                                   shuffled_law([_disc_law(x)[0] for x in (sep,) + others]),
                                   e * (1 - Fraction(1, 2 ** 50)), "forward")
                    assert float(exact) <= own * (1 + 1e-12), (n, frac, sep, others)
            # the bound is non-increasing in P(1,1): largest where the caps are disjoint
            seq = [bounds[n, frac, s] for s in range(1, N_POINTS // 2 + 1)]
            assert all(x <= y * (1 + 1e-12) for x, y in zip(seq, seq[1:]))


@pytest.mark.parametrize("d,eps0", [(2, 2.0), (3, 4.0), (100, 4.0), (1000, 1.0)])
def test_privunit_accounting(d, eps0):
    """PrivUnit2's own bound: below the generic bound at its eps0, above its attack."""
    o = PrivUnit2(d, eps0)
    st = BL.structure(o)
    assert st.p11 == 0 and st.p10 == st.a and abs(float(st.a) - o.par.cap) <= 1e-12 * o.par.cap
    assert st.eps0 >= o.eps * (1 - 1e-12)
    for n in (10 ** 3, 10 ** 5):
        r = L.epsilon(n, delta=1e-6, oracle=o)
        general = next(b.value for b in r.bounds if b.name == "general")
        assert r.method == "blanket" and r.value < general
        assert r.lower is not None and r.lower <= r.value


def test_mean_cli_chooses_local_eps_by_privunits_own_bound(capsys):
    """`mean --central-eps E`: the local eps it picks is certified (its shuffled bound <= E),
    well above what the generic bound allows, and --eps with it is refused."""
    import json

    from ldpcompress.cli import main

    code = main(["mean", "--d", "50", "--n", "500", "--central-eps", "1.0", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    eps, res = doc["params"]["eps"], doc["results"]
    assert res["central_eps"] <= 1.0 and res["central_lower"] <= res["central_eps"]
    assert res["central_generic"] > res["central_eps"]
    assert L.epsilon(500, delta=1e-6, oracle=PrivUnit2(50, eps)).value <= 1.0
    assert L.epsilon(500, delta=1e-6, oracle=PrivUnit2(50, eps * 1.01)).value > 1.0 - 1e-3
    assert main(["mean", "--d", "50", "--n", "500", "--central-eps", "1", "--eps", "2"]) == 2
    assert "exclude each other" in capsys.readouterr().err


def test_choose_eps_at_a_tiny_delta():
    """delta = 1e-300: the blanket helps little, and the realised eps0 of a local eps equal to
    the target lies a hair above it; a certified local eps is still found (was refused)."""
    from ldpcompress.estimation.mean import choose_eps

    eps = choose_eps(2, 50, 1.0, 1e-300)
    assert 0.5 <= eps and L.epsilon(50, delta=1e-300, oracle=PrivUnit2(2, eps)).value <= 1.0
