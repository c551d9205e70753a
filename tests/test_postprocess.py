"""Post-processing of estimated counts (estimation/postprocess.py): the projection onto the
simplex against a brute force over supports, Norm-Sub against its published description, the
optimality conditions on a simulated estimate, and argument checks."""
import itertools
import math

import numpy as np
import pytest

from estimates import simulated
from ldpcompress.estimation import clip_nonnegative, norm_sub, project_simplex


def brute_force_projection(y, total):
    """argmin |x - y| over {x >= 0, sum x = total} by trying every support S: on S the optimum
    is y - theta with theta fixed by the sum, off S it is 0."""
    best, best_dist = None, math.inf
    k = len(y)
    for size in range(1, k + 1):
        for support in itertools.combinations(range(k), size):
            s = list(support)
            theta = (sum(y[j] for j in s) - total) / size
            x = np.zeros(k)
            x[s] = np.asarray(y)[s] - theta
            if np.all(x >= -1e-12):
                dist = float(np.sum((x - y) ** 2))
                if dist < best_dist:
                    best, best_dist = x, dist
    return best


def norm_sub_as_published(y, total):
    """Wang et al. 2020's Norm-Sub, literally: negatives to 0, shift the positive ones by one
    amount to reach the total, repeat while the shift makes some negative."""
    x = np.maximum(np.asarray(y, float), 0.0)
    while True:
        pos = x > 0
        if not pos.any():
            pos[:] = True
        x[pos] -= (x.sum() - total) / pos.sum()
        if np.all(x >= 0):
            return x
        x = np.maximum(x, 0.0)


@pytest.mark.parametrize("seed", range(40))
def test_projection_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 8))
    y = rng.normal(0, 5, k) + rng.choice([0, 3])
    total = float(rng.choice([0.0, 1.0, 10.0, rng.uniform(0, 30)]))
    assert np.allclose(project_simplex(y, total), brute_force_projection(y, total), atol=1e-9)
    ns = norm_sub(y, total)
    assert np.allclose(ns, norm_sub_as_published(y, total), atol=1e-9)
    assert np.all(ns >= 0) and ns.sum() == pytest.approx(total, abs=1e-9)
    if np.maximum(y, 0).sum() >= total:  # the usual case: Norm-Sub is the projection
        assert np.allclose(ns, project_simplex(y, total), atol=1e-9)


def test_projection_optimality_and_error_on_simulated_estimates():
    oracle, n, f, est = simulated("olh")
    x = project_simplex(est, n)
    # optimality conditions (sufficient for this convex problem): x >= 0, sum = n, and one
    # theta with x_j = est_j - theta where x_j > 0 and est_j <= theta where x_j = 0
    assert np.all(x >= 0) and x.sum() == pytest.approx(n, rel=1e-12)
    pos = x > 0
    theta = est[pos] - x[pos]
    assert np.allclose(theta, theta[0], atol=1e-8 * n)
    assert np.all(est[~pos] <= theta[0] + 1e-8 * n)
    # projecting onto a convex set that holds the truth never increases the L2 error
    assert np.linalg.norm(x - f) <= np.linalg.norm(est - f)
    assert np.allclose(project_simplex(x, n), x)  # idempotent
    assert np.allclose(project_simplex(est + 123.0, n), x)  # a common shift does not matter
    c = clip_nonnegative(est)
    assert np.all(c >= 0) and np.array_equal(c[est > 0], est[est > 0])
    assert np.linalg.norm(c - f) <= np.linalg.norm(est - f)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: project_simplex([1.0, 2.0], -1.0), ValueError, r"total must be >= 0, got -1\.0"),
    (lambda: project_simplex([1.0, 2.0], float("inf")), ValueError,
     r"total must be finite and >= 0, got inf"),
    (lambda: project_simplex([1.0, 2.0], "3"), TypeError, r"total must be a real number, got str"),
    (lambda: project_simplex([], 1.0), ValueError,
     r"est must be a non-empty array of shape \(k,\), got shape \(0,\)"),
    (lambda: project_simplex([[1.0, 2.0]], 1.0), ValueError,
     r"est must be a non-empty array of shape \(k,\), got shape \(1, 2\)"),
    (lambda: project_simplex([1.0, float("nan")], 1.0), ValueError,
     r"est must be finite, got nan at index 1"),
    (lambda: norm_sub([1.0, float("inf")], 1.0), ValueError,
     r"est must be finite, got inf at index 1"),
    (lambda: clip_nonnegative("12"), TypeError, r"est must be an array of real numbers, got str"),
    (lambda: clip_nonnegative(np.array([True, False])), TypeError,
     r"est must be an array of real numbers, got dtype bool"),
])
def test_postprocess_arguments_are_validated(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
