"""The numeric constants: one home (ldpcompress.core.numerics), the kernels' compile-time copies
equal to it, each value checked against what it claims (the platform's doubles, exact
arithmetic), and no copy of them written out as a literal elsewhere in the code."""
import io
import math
import sys
import tokenize
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from ldpcompress.core import numerics as N
from ldpcompress.kernels import numerics as KN

ROOT = Path(__file__).resolve().parent.parent
SHARED = sorted(set(N.__all__) & set(KN.__all__))


def test_the_kernels_copies_equal_the_home():
    assert SHARED == ["DBL_MIN", "EXP_MAX", "SUBNORMAL_ULP", "UNIT_ROUNDOFF"]
    for name in SHARED:
        assert getattr(KN, name) == getattr(N, name), name
        assert type(getattr(KN, name)) is type(getattr(N, name)), name  # float stays float


def test_double_precision_constants_are_the_platforms():
    assert N.UNIT_ROUNDOFF == sys.float_info.epsilon / 2 == Fraction(1, 2 ** 53)
    assert N.DBL_MIN == sys.float_info.min == Fraction(1, 2 ** 1022)
    assert N.SUBNORMAL_ULP == math.ulp(0.0) == Fraction(1, 2 ** 1074)
    assert N.SUBNORMAL_ULP / 2 == 0.0  # below it, a value rounds to 0
    assert sys.float_info.min_exp - 1 == -1022 and sys.float_info.mant_dig == 53


def test_exp_max_leaves_headroom_for_the_products_formed():
    top = mpmath.mpf(sys.float_info.max)
    e = mpmath.exp(N.EXP_MAX)
    assert e * 10 ** 4 < top  # e^eps (k - 1) with small k, e^eps + 1, (e^eps + 1) e^eps0 / ...
    assert math.isfinite(math.exp(N.EXP_MAX)) and math.exp(-N.EXP_MAX) > N.DBL_MIN


def test_kernel_log_bounds_bracket_the_subnormal_range():
    with mpmath.workdps(50):
        log_min = mpmath.log(mpmath.mpf(2) ** -1074)   # the smallest positive double
        log_zero = mpmath.log(mpmath.mpf(2) ** -1075)  # below it, a value rounds to 0
        assert KN.LOG_DBL_TRUE_MIN >= -log_min       # |log x| <= it for every positive double
        assert KN.LOG_UNDERFLOW <= -log_zero          # what rounded to 0 is below e^-it
    assert 2.0 ** -1075 == 0.0 and math.nextafter(0.0, 1.0) == 2.0 ** -1074


def test_the_kernels_uniforms_are_the_prgs():
    from ldpcompress.core import prg
    from ldpcompress.kernels import seeds
    assert seeds.UNIFORM_BITS == prg.UNIFORM_BITS == 53
    assert seeds.UNIFORM_SCALE == Fraction(1, 2 ** prg.UNIFORM_BITS)


def test_tol_min_is_a_positive_normal_double():
    assert N.DBL_MIN < N.TOL_MIN < 1e-299


def test_max_field_is_a_prime_whose_affine_hashes_fit_int64():
    p = N.MAX_FIELD
    assert p == 2 ** 31 - 1
    assert all(p % d for d in range(2, math.isqrt(p) + 1))
    assert (p - 1) * p + (p - 1) < 2 ** 62  # a (x + 1) + b with a, b, x + 1 in [0, p)


def _numbers(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every number token of the file's code (comments and docstrings are not
    tokens of this kind), with ``2.0 ** -53``-style powers joined."""
    toks = list(tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline))
    out = []
    for i, tok in enumerate(toks):
        if tok.type == tokenize.NUMBER:
            text = tok.string
            if i + 3 < len(toks) and toks[i + 1].string == "**" and toks[i + 2].string == "-":
                text = f"{text} ** -{toks[i + 3].string}"
            out.append((tok.start[0], text))
    return out


COPIES = {"700", "700.0", "745.0", "745.2", "2.0 ** -53", "2 ** -53", "2.0 ** -1074",
          "2.0 ** -1022", "2.2250738585072014e-308"}


@pytest.mark.parametrize("package", ["ldpcompress", "kernels"])
def test_no_constant_is_written_out_again(package):
    homes = {"ldpcompress/core/numerics.py", "kernels/numerics.py"}
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in homes:
            continue
        found += [f"{rel}:{line}: {text}" for line, text in _numbers(path) if text in COPIES]
    assert found == []
