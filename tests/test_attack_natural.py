"""The natural-dataset attack (x1, x3, ..., x3) vs (x1', x3, ..., x3) seen through the bits of
three items (docs/theory.md §2.6(d)): exact against a brute force of the shuffled reports."""
import itertools
import math
from fractions import Fraction

import pytest

from ldpcompress.accounting import blanket as BL
from ldpcompress.randomizers.rappor import OUE, RAPPOR
from reference.shuffle import hockey, shuffled_law


def _report_law(st, own):
    """Law of the 3-bit report (k = 3 items) of a user holding item ``own``: bit ``own`` ~
    Bern(a1), the others ~ Bern(a), independent (the oracle's realised rationals)."""
    law = {}
    for bits in itertools.product((0, 1), repeat=3):
        p = Fraction(1)
        for i, b in enumerate(bits):
            q = st.a1 if i == own else st.a
            p *= q if b else 1 - q
        law[bits] = p
    return law


@pytest.mark.parametrize("make", [lambda: RAPPOR(3, 1.5, symmetric=True), lambda: OUE(3, 3.0)],
                         ids=["rappor-sym", "oue"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_natural_attack_is_the_exact_delta_of_the_shuffled_reports(make, n):
    """k = 3: the three bits are the whole report, so the kernel must give the exact delta of
    the shuffled reports (from below, within rounding), and at least the class attack."""
    st = BL.structure(make())
    x1, x1p, x3 = 0, 1, 2
    p = shuffled_law([_report_law(st, x1)] + [_report_law(st, x3)] * (n - 1))
    q = shuffled_law([_report_law(st, x1p)] + [_report_law(st, x3)] * (n - 1))
    prof = BL.OracleLowerProfile(n, st)
    assert prof._triple is not None
    for frac in (0.1, 0.4, 0.8):
        eps = frac * st.eps0
        e = Fraction(math.exp(eps))
        exact = hockey(p, q, e, "forward")
        got = prof.delta(eps, 1e-30)
        assert got <= float(exact) * (1 + 1e-12) + 1e-300
        assert got >= float(exact) * (1 - 1e-9)


def test_natural_attack_reaches_the_exact_natural_value():
    """Symmetric RAPPOR, eps0 = 6, n = 1e4: the attack reaches the exact natural-dataset value
    1.29783 (an independent exact computation), above the class attack's 1.26549."""
    o = RAPPOR(1000, 3.0, symmetric=True)
    prof = BL.OracleLowerProfile(10 ** 4, BL.structure(o))
    assert prof._triple is not None
    assert prof.delta(1.2977, 1e-16) > 1e-6 > prof.delta(1.2980, 1e-16)
