"""Inverse queries (accounting/inverse.py): max_eps0 over an oracle whose realised law jumps
with eps0 (OLH's bucket count g = round(e^eps0 + 1)) finds the largest certified eps0."""
import numpy as np

import ldpcompress as L
from ldpcompress.accounting import inverse as I


def test_olh_max_eps0_searches_the_bucket_count_jumps():
    """OLH's realised law jumps with g = round(e^eps + 1): max_eps0 returned 6.378642 (g = 590)
    although 6.37928 (g = 591) is certified too."""
    n, eps, delta, k = 10 ** 4, 1.0, 1e-6, 1000
    factory = lambda e: L.OLH(k, e)  # noqa: E731
    got = L.max_eps0(n, eps, delta, factory)
    assert I.certified(n, None, eps, delta, oracle=factory(got))
    assert got >= 6.37928 and factory(got).g >= 591
    # nothing above it is certified: a fine grid and every plateau start up to +0.05
    grid = list(np.linspace(got, got + 0.05, 80)[1:])
    m = factory(got).g
    while np.log(m - 0.5) < got + 0.05:
        grid += [np.nextafter(np.log(m - 0.5), np.inf), np.log(m - 0.5) + 1e-9]
        m += 1
    for e in sorted(grid):
        if e > got:
            assert not I.certified(n, None, eps, delta, oracle=factory(float(e))), e
