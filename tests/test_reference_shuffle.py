"""The brute force of tests/reference/shuffle.py checked against closed forms it must reproduce,
and its number types against each other."""
import math
from fractions import Fraction as F

import mpmath as mp
import pytest

from reference.shuffle import hockey, shuffled_law


def _rr(e0):
    """Binary randomized response with e^eps0 = e0: rows of input 0 and input 1."""
    return [e0 / (e0 + 1), 1 / (e0 + 1)], [1 / (e0 + 1), e0 / (e0 + 1)]


@pytest.mark.parametrize("e0,e", [(F(3), F(1)), (F(3), F(2)), (F(3), F(3)), (F(5, 2), F(7, 5))])
def test_rr_exact_shuffled_delta_for_one_user_is_the_local_hockey_stick(e0, e):
    """n = 1: the shuffled law is the local law, and H_e(R_0||R_1) = (e0 - e)/(e0 + 1), both orders."""
    r0, r1 = _rr(e0)
    closed = max(F(0), (e0 - e) / (e0 + 1))
    for direction in ("forward", "both"):
        assert hockey(shuffled_law([r0]), shuffled_law([r1]), e, direction) == closed


def test_rr_exact_shuffled_delta_for_two_users_by_hand():
    """n = 2, the other user on 0, e0 = 3: P = law of {y1, y2} with y1 ~ R_0 / R_1, y2 ~ R_0.
    Counts of ones: P = (9, 6, 1)/16, Q = (3, 10, 3)/16; H_2(P||Q) = (9 - 6)/16, H_2(Q||P) = 1/16."""
    r0, r1 = _rr(F(3))
    p, q = shuffled_law([r0, r0]), shuffled_law([r1, r0])
    assert p == {(0, 0): F(9, 16), (0, 1): F(6, 16), (1, 1): F(1, 16)}
    assert q == {(0, 0): F(3, 16), (0, 1): F(10, 16), (1, 1): F(3, 16)}
    assert hockey(p, q, F(2), "forward") == F(3, 16)
    assert hockey(q, p, F(2), "forward") == F(1, 16)
    assert hockey(p, q, F(2)) == hockey(q, p, F(2)) == F(3, 16)


def test_identical_users_give_the_multinomial_law():
    """n users with one row: P(sorted tuple) = multinomial coefficient * product of the row."""
    row = {"a": F(1, 2), "b": F(1, 3), "c": F(1, 6)}
    law = shuffled_law([row] * 4)
    assert sum(law.values()) == 1 and len(law) == math.comb(4 + 2, 2)
    for out, pr in law.items():
        counts = [out.count(s) for s in "abc"]
        coef = math.factorial(4) // math.prod(math.factorial(c) for c in counts)
        assert pr == coef * math.prod(row[s] ** c for s, c in zip("abc", counts))


def test_number_types_agree():
    """k-RR (k = 3, e^eps0 = 7/2), n = 3, mixed inputs: Fraction and mpmath agree to 1e-30, float
    to 1e-15, for the law and for the hockey stick in both directions."""
    e0 = F(7, 2)
    rows = [[(e0 if y == x else 1) / (e0 + 2) for y in range(3)] for x in range(3)]
    mp.mp.dps = 50
    for e in (F(1), F(3, 2), F(3)):
        for direction in ("forward", "both"):
            exact = hockey(shuffled_law([rows[0], rows[2], rows[2]]),
                           shuffled_law([rows[1], rows[2], rows[2]]), e, direction)
            assert exact > 0 or e == 3
            pm = shuffled_law([rows[0], rows[2], rows[2]], kind="mpmath")
            qm = shuffled_law([rows[1], rows[2], rows[2]], kind="mpmath")
            got = hockey(pm, qm, e, direction, kind="mpmath")
            assert isinstance(got, mp.mpf)
            assert abs(got - mp.mpf(exact.numerator) / exact.denominator) < mp.mpf(10) ** -30
            pf = shuffled_law([rows[0], rows[2], rows[2]], kind="float")
            qf = shuffled_law([rows[1], rows[2], rows[2]], kind="float")
            assert abs(hockey(pf, qf, e, direction, kind="float") - float(exact)) < 1e-15


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="direction must be one of"):
        hockey({0: 1}, {0: 1}, 1, direction="backward")
    with pytest.raises(ValueError, match="kind must be one of"):
        shuffled_law([[1]], kind="decimal")


def test_krr_histogram_law_number_types_and_one_user():
    """reference.krr_histogram_law: one user's law is the k-RR row; floats and mpmath agree."""
    from reference import krr_histogram_law
    mp.mp.dps = 40
    e0 = mp.e ** mp.mpf(1.5)
    assert krr_histogram_law((1,), 3, 1.5, kind="mpmath") == {
        (0,): 1 / (e0 + 2), (1,): e0 / (e0 + 2), (2,): 1 / (e0 + 2)}
    lf = krr_histogram_law((0, 1, 1), 3, 1.5)
    lm = krr_histogram_law((0, 1, 1), 3, 1.5, kind="mpmath")
    assert set(lf) == set(lm) and all(abs(lf[o] - lm[o]) < 1e-16 for o in lf)
