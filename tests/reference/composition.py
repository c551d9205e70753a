"""Exact privacy profiles of composed randomized response (mpmath), the tight composition of
PureDP(eps): T-fold randomized response has the privacy loss (T - 2i) eps with probability
C(T, i) p^(T-i) (1-p)^i, p = e^eps / (1 + e^eps), so delta(x) = sum_i m_i (1 - e^(x - L_i))_+
in closed form. Written from that formula alone (nothing shared with the library)."""
import mpmath as mp

__all__ = ["mp_rr_composition_delta", "mp_rr_composition_epsilon", "mp_krr_pair", "mp_renyi"]


def _atoms(eps, times):
    e = mp.mpf(eps)
    p = 1 / (1 + mp.e ** -e)
    return [(mp.binomial(times, i) * p ** (times - i) * (1 - p) ** i, (times - 2 * i) * e)
            for i in range(times + 1)]


def mp_rr_composition_delta(eps, times, x, dps=50):
    """Exact delta(x) of `times`-fold randomized response with parameter eps."""
    with mp.workdps(dps):
        x = mp.mpf(x)
        return sum(m * (1 - mp.e ** (x - loss)) for m, loss in _atoms(eps, times) if loss > x)


def mp_rr_composition_epsilon(eps, times, delta, dps=50):
    """Exact eps(delta) of `times`-fold randomized response: the lower end of a bisection
    bracket narrower than 1e-45 (delta(eps) is continuous and decreasing)."""
    with mp.workdps(dps):
        atoms = _atoms(eps, times)
        delta = mp.mpf(delta)

        def d(x):
            return sum(m * (1 - mp.e ** (x - loss)) for m, loss in atoms if loss > x)
        lo, hi = mp.mpf(0), times * mp.mpf(eps)
        if d(lo) <= delta:
            return lo
        for _ in range(180):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
        return lo


def mp_krr_pair(p, k, dps=50):
    """Randomized response over k buckets with noise parameter p, inputs 0 and 1, as exact
    pmfs over the outputs (0, 1, any other bucket): (1 - p + p/k, p/k, (k-2) p/k) and its
    mirror, in mpmath from the mechanism's definition."""
    with mp.workdps(dps):
        p = mp.mpf(p)
        stay, move = 1 - p + p / k, p / k
        return [stay, move, (k - 2) * move], [move, stay, (k - 2) * move]


def mp_renyi(p_law, q_law, alpha, dps=50):
    """Renyi divergence of order alpha of two finite pmfs (mpmath)."""
    with mp.workdps(dps):
        a = mp.mpf(alpha)
        s = mp.fsum(x ** a * y ** (1 - a) for x, y in zip(p_law, q_law) if x > 0)
        return mp.log(s) / (a - 1)
