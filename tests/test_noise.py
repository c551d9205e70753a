"""Amplification by repeated noise addition (accounting/noise.py, docs/theory.md §4): the exact
Laplace-sum density against mpmath quadrature, its Rényi divergence against an mpmath integral,
and its cost (memory and terms) stated before anything is allocated and never exceeded."""
import json
import math
import subprocess
import sys
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest

from hang import no_hang
from ldpcompress.accounting import noise as N
from ldpcompress.cli import main
from ldpcompress.kernels import laplace_sum as K
from reference import noise as ref

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("n", [1, 2, 3, 5, 17, 100, 1000])
@pytest.mark.parametrize("b", [1.0, 0.3, 7.0])
def test_laplace_sum_density_matches_quadrature(n, b):
    """Near the centre, in the body and out in the grid's far tail (where terms at the top
    dominate): within 1e-10 of |log f| (the double-precision cancellation of its log-gamma
    terms is ~1e-12 relative)."""
    xs = np.array([0.0, 1e-9, 0.5, 3.0, 0.7 * n * b, 2.0 * n * b,
                   (n + 60 * math.sqrt(n) + 60) * b])
    got = N.laplace_sum_logpdf(xs, n, b)
    for x, value in zip(xs, got):
        want = ref.laplace_sum_logpdf(x, n, b)
        assert abs(value - want) <= 1e-10 * max(1.0, abs(want)), (n, b, x, value, want)


def test_laplace_sum_density_of_two_noises_in_closed_form():
    # n = 2: f(x) = (1 + |x|/b) e^(-|x|/b) / (4 b), exactly
    xs = np.array([-5.0, -0.25, 0.0, 1.0, 40.0])
    want = [math.log1p(abs(x) / 2.0) - abs(x) / 2.0 - math.log(8.0) for x in xs]
    assert np.allclose(N.laplace_sum_logpdf(xs, 2, 2.0), want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 97, 1000, 10 ** 5])
def test_terms_summed_stay_within_the_stated_bound(n):
    width = n + 60 * math.sqrt(n) + 60
    x = np.linspace(-width, width, 2001)
    out = np.empty_like(x)
    steps = K.laplace_sum_logpdf_into(x, 1.0, 1.0, n, out)
    assert 0 < steps <= N.laplace_sum_terms(2001, n) // 2
    assert np.isfinite(out).all()


# the sums of 2 and 3 Laplace(1) noises by convolving the Laplace density with itself by hand
CLOSED_FORM = {2: lambda x: mp.log((1 + abs(x)) / 4) - abs(x),
               3: lambda x: mp.log((3 + 3 * abs(x) + x * x) / 16) - abs(x)}


@pytest.mark.parametrize("n, alpha", [(2, 2.0), (3, 1.5), (3, 8.0)])
def test_exact_renyi_of_the_noisy_sum_matches_mpmath(n, alpha):
    """D_alpha(S + 1 || S) by the library's quadrature on 200,001 points against mpmath's
    adaptive integral of the convolution's closed form (itself checked against the reference
    quadrature; kinks at 0 and 1)."""
    density = CLOSED_FORM[n]
    for x in (0.0, 0.7, -2.5, 30.0):
        assert float(density(mp.mpf(x))) == pytest.approx(ref.laplace_sum_logpdf(x, n, 1.0),
                                                          rel=1e-12, abs=1e-12)
    want = ref.renyi_shift(density, 1.0, alpha, [0, 1])
    got = N.laplace_sum_exact_rdp(n, 1.0, [alpha])[0]
    assert got == pytest.approx(want, rel=1e-6)
    assert got <= N.laplace_sum_rdp(n, 1.0, [alpha])[0]  # the shift-reduction bound holds


def test_exact_column_cost_is_refused_before_allocation_naming_n():
    # was: the (points x n) tables of n = 10,000 asked for 29.8 GiB; now the work grows with
    # sqrt(n) and the memory not at all, and the refusal states the terms and the limit
    with pytest.raises(ValueError, match=r"1\.16e\+10 density terms, above the limit of "
                                         r"4e\+09 .*reduce n"):
        N.laplace_sum_exact_rdp(10 ** 6, 1.0, [2.0])
    assert N.laplace_sum_bytes(200001) == N.EXACT_ARRAYS * 8 * 200001
    with pytest.raises(ValueError, match="would need"):
        N.laplace_sum_exact_rdp(5, 1.0, [2.0], max_bytes=1000)
    with pytest.raises(ValueError, match="density terms"):
        N.laplace_sum_exact_rdp(50, 1.0, [2.0], max_terms=1e6)
    with pytest.raises((ValueError, TypeError), match="points"):
        N.laplace_sum_exact_rdp(5, 1.0, [2.0], points=2.5)


PEAK_SCRIPT = """
import json, resource, sys, tracemalloc
from ldpcompress.accounting import noise as N
N.laplace_sum_exact_rdp(3, 1.0, [2.0], points=101)  # kernels loaded before the limit
stated = N.laplace_sum_bytes(200001)
vm = [int(line.split()[1]) * 1024 for line in open("/proc/self/status")
      if line.startswith("VmSize")][0]
slack = 64 * 2 ** 20  # the interpreter's own small allocations
resource.setrlimit(resource.RLIMIT_AS, (vm + stated + slack, vm + stated + slack))
tracemalloc.start()
values = N.laplace_sum_exact_rdp(1000, 1.0, [1.5, 2, 4, 8, 16, 32])
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps(dict(peak=peak, stated=stated, values=list(map(float, values)))))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_noise_query_stays_within_its_stated_memory():
    """`noise --n 1000 --scale 1` took 81 s and 9.5 GB while its estimate counted 2 of ~6
    (points x n) arrays. Under an address-space limit of the stated bytes (plus 64 MiB for the
    interpreter) the query now runs, and numpy's traced peak is within the statement."""
    with no_hang("the exact Laplace column at n = 1000", 60):
        done = subprocess.run([sys.executable, "-c", PEAK_SCRIPT], capture_output=True,
                              text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["peak"] <= out["stated"]
    assert all(0 < v for v in out["values"])


def test_noise_command_at_1000_parties_answers(capsys):
    with no_hang("noise --n 1000 --scale 1", 60):
        assert main(["noise", "--n", "1000", "--scale", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    res = doc["results"]
    # the exact curve lies below the shift-reduction bound at every order
    assert all(0 < e <= b for e, b in zip(res["laplace_exact"], res["laplace_bound"]))
    with no_hang("noise --n 1e7 --scale 1", 60):
        assert main(["noise", "--n", "1e7", "--scale", "1"]) == 2
    assert "--no-exact" in capsys.readouterr().err
