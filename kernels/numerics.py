"""Double-precision constants of the kernels, compile-time constants for Numba.

The library's home of these constants is ``ldpcompress.core.numerics`` (what each means and
why it holds); the kernels import nothing from the package, so the ones they use are copied
here, and a test asserts that every name defined in both has the same value. The last two are
the kernels' own:

- ``LOG_DBL_TRUE_MIN`` = 745.2 >= -log(2^-1074) = 744.44: |log x| of any positive double x is
  at most this (an upper bound on |log pmf| of a pmf that did not underflow).
- ``LOG_UNDERFLOW`` = 745 <= -log(2^-1075) = 745.13: a positive value that rounded to 0 was
  below 2^-1075 < e^-745, so e^-745 times its (unrounded) weight bounds it from above.
"""
__all__ = ["UNIT_ROUNDOFF", "DBL_MIN", "SUBNORMAL_ULP", "EXP_MAX", "LOG_DBL_TRUE_MIN",
           "LOG_UNDERFLOW"]

UNIT_ROUNDOFF = 2.0 ** -53
DBL_MIN = 2.0 ** -1022
SUBNORMAL_ULP = 2.0 ** -1074
EXP_MAX = 700.0
LOG_DBL_TRUE_MIN = 745.2
LOG_UNDERFLOW = 745.0
