"""The numeric constants the library's bounds and ranges rest on, in one place.

IEEE-754 double precision (binary64, round to nearest):

- ``UNIT_ROUNDOFF`` u = 2^-53: a correctly rounded operation on normal doubles errs by at most
  u relative (|fl(x op y) - x op y| <= u |x op y|); the bounds widen their results by multiples
  of it, outward.
- ``DBL_MIN`` = 2^-1022, the smallest normal double: an absolute allowance per term for mass
  that may have underflowed.
- ``SUBNORMAL_ULP`` = 2^-1074, the smallest positive (subnormal) double: the absolute rounding
  error of an operation whose result is subnormal.
- ``EXP_MAX`` = 700: the largest exponent at which e^x is formed. e^700 ~ 1.0e304 leaves a factor
  e^9.78 ~ 1.8e4 below the largest double (1.8e308), so e^eps0 (k - 1), e^eps + 1 and similar
  stay finite; an eps above it is refused or clamped to it (where the quantity is monotone and
  the clamp can only raise a bound), and a tail below e^-700 is negligible mass, added whole.
- ``TOL_MIN`` = 1e-300: the smallest window tolerance (mass a window may leave out) accepted.

Fields:

- ``MAX_FIELD`` = 2^31 - 1, a Mersenne prime: the largest field of the oracles that hash over
  F_p (PI-RAPPOR, OLH); products a (x + 1) + b of field elements stay below 2^62 in int64.

The Numba kernels keep compile-time copies of the ones they use in ``kernels/numerics.py``
(the kernels import nothing from the package); a test asserts the two agree.
"""
from __future__ import annotations

__all__ = ["UNIT_ROUNDOFF", "DBL_MIN", "SUBNORMAL_ULP", "EXP_MAX", "TOL_MIN", "MAX_FIELD"]

UNIT_ROUNDOFF = 2.0 ** -53
DBL_MIN = 2.0 ** -1022
SUBNORMAL_ULP = 2.0 ** -1074
EXP_MAX = 700.0
TOL_MIN = 1e-300
MAX_FIELD = 2 ** 31 - 1
