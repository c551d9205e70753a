"""References for the noisy-sum accounting (docs/theory.md §4): the density of a sum of n
Laplace noises by mpmath quadrature of its Gamma-difference form, and a Rényi divergence by
mpmath quadrature of a density given as a function.

Written from the definitions, not from the library's series: S = G1 - G2 with G1, G2 iid
Gamma(n, b), so f(x) = int_0^inf g(t) g(t + |x|) dt.
"""
import mpmath as mp


def laplace_sum_logpdf(x, n, b, dps=30):
    """log f(x) for S the sum of n iid Laplace(b): e^(-z) / (b Gamma(n)^2) times
    int_0^inf t^(n-1) (t + z)^(n-1) e^(-2t) dt, z = |x| / b, the integrand taken relative to
    its value at its peak (quadrature nodes around the peak, by its curvature)."""
    with mp.workdps(dps):
        z = mp.mpf(abs(x)) / b
        if n == 1:
            log_integral = -mp.log(2)
        else:
            def phi(t):
                return (n - 1) * (mp.log(t) + mp.log(t + z)) - 2 * t
            # the positive root of t^2 + (z - n + 1) t - (n - 1) z / 2, without cancellation
            root = mp.sqrt((n - 1 - z) ** 2 + 2 * (n - 1) * z)
            peak = ((n - 1 - z) + root) / 2 if z <= n - 1 else (n - 1) * z / (z - n + 1 + root)
            width = 1 / mp.sqrt((n - 1) / peak ** 2 + (n - 1) / (peak + z) ** 2)
            top = phi(peak)
            nodes = [peak + k * width for k in (-8, -4, -2, 0, 2, 4, 8, 16, 40)]
            pts = [mp.mpf(0)] + [t for t in nodes if t > 0] + [mp.inf]
            log_integral = top + mp.log(mp.quad(lambda t: mp.exp(phi(t) - top), pts))
        return float(log_integral - z - 2 * mp.loggamma(n) - mp.log(b))


def renyi_shift(logpdf, shift, alpha, cuts, dps=30):
    """D_alpha(P + shift || P) = log int p(x - shift)^alpha p(x)^(1 - alpha) dx / (alpha - 1)
    for P given by its mpmath log density, integrated piecewise between ``cuts`` (the kinks)."""
    with mp.workdps(dps):
        a = mp.mpf(alpha)
        f = lambda x: mp.exp(a * logpdf(x - shift) + (1 - a) * logpdf(x))  # noqa: E731
        total = mp.quad(f, [-mp.inf, *cuts, mp.inf])
        return float(mp.log(total) / (a - 1))
