"""Compressed PrivUnit2 with K-copy splitting (FT21 Sec. 5, Lemma 5.1; docs/theory.md §7).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import validate as V
from ..core.entropy import SYSTEM, Entropy, simulation_only
from ..core.limits import check_bytes, check_trials, expected_trials, resolve_max_trials
from ..core.progress import track
from ..randomizers.privunit import (
    PrivUnit2,
    batch_bytes,
    check_dimension,
    check_eps,
    check_vector,
    eps_range,
    round_rows_to_sphere,
    round_to_sphere,
    shown_upper_limit,
)
from .sampler import PseudoRandomizer
from .seeded import SeedReports

__all__ = ['CompressedPrivUnit2', 'choose_split', 'check_split']


class CompressedPrivUnit2(SeedReports):
    """K copies of compressed PrivUnit2 at eps/K each (FT21 Lemma 5.1); a report is K seeds.
    The decoded mean of the K copies is unbiased; expected trials K e^(eps_d(eps/K)). The
    server verbs (``seeds``, ``decode_many``, ``summarize``, ``estimate``) are
    :class:`SeedReports`' with ``group`` = K.

    Parameters
    ----------
    d : int
        Dimension of the vectors (d >= 2).
    eps : float
        The local replacement eps of the whole report (> 0); each copy runs at eps/K.
    split : int, default 1
        K, the number of copies (1 to 1000; :func:`choose_split` finds one).
    tv_target : float, default 2^-40
        Total variation distance of each copy's decoded output to PrivUnit2's law, in (0, 1).
    entropy : Entropy, default os.urandom
        Source of the seeds and coins (seeded sources are for simulations only).
    max_expected_trials : float, optional
        Refuse when the expected trials per report (all K copies) exceed this.
    """

    def __init__(self, d: int, eps: float, split: int = 1, tv_target: float = 2.0 ** -40,
                 entropy: Entropy = SYSTEM, max_expected_trials: float | None = None):
        self.split = self.group = V.integer_at_least(split, "split", 1, 1000)
        eps = V.positive_finite(eps, "eps")
        d = check_dimension(d)
        check_split(d, eps, self.split)
        hint = f"; with d = {d}, ldpcompress.compression.choose_split({d}, {eps!r}) finds K"
        self.inner = PrivUnit2(d, eps / self.split)
        self.pr = PseudoRandomizer(self.inner, tv_target, entropy, max_expected_trials, hint)
        # K copies: K e^eps_d(eps/K) trials per report in all
        total = self.split * self.pr.expected_trials
        check_trials(total, self.pr.eps_d, max_expected_trials, hint)
        self.entropy = entropy
        self.d, self.eps = d, eps

    @property
    def expected_trials(self) -> float:
        return self.split * self.pr.expected_trials

    @property
    def bytes_per_report(self) -> int:
        return self.split * self.pr.bytes_per_report

    def encode(self, x) -> list[bytes]:
        """One report of vector x: K seeds of the copies at eps/K.

        Parameters
        ----------
        x : array_like
            One user's vector (norm <= 1).
        """
        u = round_to_sphere(check_vector(x, self.d), self.entropy)
        return [self.pr.encode(u) for _ in range(self.split)]

    def decode(self, report: list[bytes]) -> np.ndarray:
        """The decoded vector of one report: the mean of its K copies.

        Parameters
        ----------
        report : list of bytes
            K 17-byte reports (untrusted: validated).
        """
        if not isinstance(report, (list, tuple)):
            raise TypeError(f"a report is a list of {self.split} seeds, got {type(report).__name__}")
        if len(report) != self.split:
            raise ValueError(f"a report has {self.split} seeds, got {len(report)}")
        return np.mean([self.pr.decode(r) for r in report], axis=0)

    def encode_many(self, xs, progress: bool = False) -> list[list[bytes]]:
        """One report (K seeds) per vector; ``progress``: a bar of the reports on stderr.

        Parameters
        ----------
        xs : array_like
            The users' vectors (norm <= 1), one per report.
        progress : bool, default False
            Show a bar of the reports on stderr.
        """
        return [self.encode(x) for x in track(xs, "encode", progress, unit="reports")]

    def _decode_seed_rows(self, seeds: np.ndarray) -> np.ndarray:
        """Decoded vectors (the mean of each report's K copies) as an (n, d) array (n = 0
        gives shape (0, d)), refused above the memory limit before decoding."""
        check_bytes(batch_bytes(len(seeds), self.d), f"{len(seeds)} decoded vectors of "
                    f"dimension {self.d}", "n or d")
        return super()._decode_seed_rows(seeds)

    def encode_many_simulated(self, xs, entropy: Entropy) -> np.ndarray:
        """SIMULATION ONLY (see ``PseudoRandomizer.encode_many_simulated``): one report per
        vector, each rounded to the sphere once and compressed K times, as an (n, K, 17) uint8
        array; ``entropy`` must be ``Entropy.seeded_for_simulation(seed)``.

        Parameters
        ----------
        xs : array_like
            The users' vectors (norm <= 1), one per report.
        entropy : Entropy
            ``Entropy.seeded_for_simulation(seed)``: simulation only.
        """
        simulation_only(entropy, "CompressedPrivUnit2.encode_many_simulated")
        us = round_rows_to_sphere(self.inner.check_items(xs), entropy)
        out = self.pr.encode_many_simulated(np.repeat(us, self.split, axis=0), entropy)
        return out.reshape(us.shape[0], self.split, -1)

    def __repr__(self) -> str:
        return (f"CompressedPrivUnit2(d={self.d}, eps={self.eps:g}, split={self.split}: "
                f"{self.bytes_per_report}-byte reports, {self.split} x PrivUnit2 at eps "
                f"{self.eps / self.split:.6g}, expected trials {self.expected_trials:.4g})")

    def variance(self) -> float:
        """E|mean of K copies - u|^2 = (1/m_K^2 - 1)/K."""
        return self.inner.variance() / self.split

def check_split(d: int, eps: float, split: int, names: tuple[str, str] = ("eps", "split")) -> None:
    """Each of the K = split copies runs at eps/K, which must be inside eps_range(d);
    ValueError naming both parameters and the splits that work."""
    lo, hi = eps_range(d)
    if not lo * (1 - 1e-12) <= eps / split <= hi:
        first, last = max(1, math.ceil(eps / hi)), min(1000, math.floor(eps / lo * (1 + 1e-12)))
        fix = (f"choose {names[1]} in [{first}, {last}]" if first <= last else
               f"{names[0]} = {eps:g} cannot be split into at most 1000 copies in range")
        raise ValueError(f"{names[0]}/{names[1]} = {eps / split:g} ({names[0]} = {eps:g}, "
                         f"{names[1]} = {split}) must be in [{lo:g}, "
                         f"{shown_upper_limit(hi):g}] for PrivUnit2 in dimension d = {d}: {fix}")

def choose_split(d: int, eps: float, max_trials: float = 1000.0, name: str = "eps") -> int:
    """Smallest K whose expected trials K e^(eps_d(eps/K)) are at most max_trials (capped at
    ``limits.MAX_EXPECTED_TRIALS``), K copies at eps/K (FT21 Lemma 5.1); K starts where eps/K
    enters eps_range(d). Errors name eps as ``name``.

    Parameters
    ----------
    d : int
        Dimension of the vectors (d >= 2).
    eps : float
        The local eps of the whole report (> 0).
    max_trials : float, default 1000
        The most expected trials per report (capped at ``limits.MAX_EXPECTED_TRIALS``).
    name : str, default "eps"
        The name errors give eps.
    """
    d = check_dimension(d)
    eps = V.positive_finite(eps, name)
    max_trials = min(resolve_max_trials(max_trials), resolve_max_trials(None))
    lo, hi = eps_range(d)
    if eps < lo:
        check_eps(d, eps, name)
    for k in range(max(1, math.ceil(eps / hi)), 1001):
        if eps / k < lo * (1 - 1e-12):
            break
        if k * expected_trials(PrivUnit2(d, eps / k).deletion_eps) <= max_trials:
            return k
    raise ValueError(f"{name} = {eps:g}: no split K up to 1000 brings the expected trials "
                     f"K e^eps_d(eps/K) under {max_trials:g} in dimension d = {d}: use a smaller "
                     f"{name}")
