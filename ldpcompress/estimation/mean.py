"""Mean estimation end to end: simulated users, PrivUnit2 plain and compressed, the one-bit
baseline (docs/theory.md §7; the ``mean`` command).
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..compression.split import CompressedPrivUnit2
from ..core import validate as V
from ..core.limits import array_bytes, check_bytes, expected_trials
from ..core.progress import track
from ..randomizers.onebit import OneBitSphere
from ..randomizers.privunit import MIN_EPS, PrivUnit2

__all__ = ['simulate', 'run', 'work_warning', 'check_memory', 'shuffled_privacy',
           'choose_eps']

# Cost model of one rejection-sampling trial of compressed PrivUnit2 (AES-CTR seed expansion,
# a Gaussian d-vector, one dot product), measured on one core: about 20 us + 0.02 us x d.
TRIAL_SECONDS, TRIAL_SECONDS_PER_DIM = 2e-5, 2e-8


ARRAYS = 4  # n x d float64 arrays alive at once: the data, its noise, one method's outputs

def check_memory(d: int, n: int) -> None:
    check_bytes(array_bytes((ARRAYS * n, d), np.float64),
                f"mean estimation with n={n}, d={d} ({ARRAYS} n x d float64 arrays)", "--n or --d")

def simulate(d: int, n: int, seed: int = 0) -> np.ndarray:
    """n unit vectors scattered around one direction (simulated users' data, numpy is fine)."""
    d, n = V.integer_at_least(d, "d", 2), V.users(n)
    check_memory(d, n)
    rng = np.random.default_rng(seed)  # simulated users' data, not privacy coins
    center = rng.normal(size=d)
    center /= np.linalg.norm(center)
    x = center + rng.normal(size=(n, d)) / math.sqrt(d)
    return x / np.linalg.norm(x, axis=1, keepdims=True)

def run(d: int, n: int, eps: float, split: int | None = None, progress: bool = False) -> dict:
    """MSE, predicted MSE, bytes and seconds of each method on n simulated vectors in d.
    ``progress``: a bar of each method's n reports on stderr (the compressed one can run for
    minutes: see :func:`work_warning`)."""
    comp = CompressedPrivUnit2(d, eps, 1 if split is None else split)
    xs = simulate(d, n)
    truth = xs.mean(axis=0)
    out: dict[str, Any] = {}
    methods: dict[str, tuple[Any, int]] = {
        "privunit2": (PrivUnit2(d, eps), 8 * d),
        "privunit2-compressed": (comp, comp.bytes_per_report),
        "one-bit (Duchi et al.)": (OneBitSphere(d, eps), 8 * d),
    }
    for name, (mech, nbytes) in methods.items():
        t = time.perf_counter()
        if name == "privunit2-compressed":
            zs = mech.decode_many(mech.encode_many(xs, progress=progress))
        else:
            zs = np.array([mech.randomize(x) for x in track(xs, name, progress,
                                                             unit="reports")])
        secs = time.perf_counter() - t
        out[name] = dict(mse=float(np.sum((zs.mean(axis=0) - truth) ** 2)),
                         predicted=mech.variance() / n, bytes=nbytes, seconds=secs)
    out["split"] = comp.split
    out["expected_trials"] = comp.expected_trials
    return out

WARN_SECONDS = 10.0  # warn (stderr) before a run whose compressed part is expected to take longer

def work_warning(d: int, n: int, eps: float, split: int, chosen: bool) -> str | None:
    """A warning when n x expected trials per report is large, with the estimate and a split
    that brings it under WARN_SECONDS (or the split with the fewest trials); None otherwise."""
    trials = CompressedPrivUnit2(d, eps, split).expected_trials
    per_trial = TRIAL_SECONDS + TRIAL_SECONDS_PER_DIM * d
    seconds = n * trials * per_trial
    if seconds <= WARN_SECONDS:
        return None
    best = None
    for k in range(split + 1, 1001):
        if eps / k < MIN_EPS * (1 - 1e-12):
            break
        t = k * expected_trials(PrivUnit2(d, eps / k).deletion_eps)
        if best is None or t < best[1]:
            best = (k, t)
        if n * t * per_trial <= WARN_SECONDS or k + 1 >= best[1]:  # K copies: >= K trials
            break
    how = "the default split" if chosen else f"--split {split}"
    msg = (f"ldpcompress: warning: compressing {n:,} reports with {how} (K = {split}) needs about "
           f"{trials:,.1f} expected trials per report, {n * trials:.3g} in all (each a "
           f"d = {d} sphere sample): roughly {seconds:,.0f} s at {per_trial * 1e6:.0f} us per trial")
    if best is not None and best[1] < trials:
        msg += (f"; --split {best[0]} needs {best[1]:,.1f} trials per report (about "
                f"{n * best[1] * per_trial:,.0f} s) at the cost of a larger variance (K copies at "
                "eps/K)")
    return msg


def shuffled_privacy(d: int, n: int, eps: float, delta: float) -> dict:
    """Central (eps, delta) of n shuffled PrivUnit2(d, eps) reports by PrivUnit2's own blanket
    bound (docs/theory.md §2.12), with its attack's lower bound and the generic FMT21 bound."""
    from ..accounting.amplification import epsilon

    t = time.perf_counter()
    res = epsilon(n, delta=delta, oracle=PrivUnit2(d, eps))
    generic = next((b.value for b in res.bounds if b.name == "general"), None)
    return dict(eps=res.value, delta=delta, method=res.method, lower=res.lower,
                generic=generic, seconds=time.perf_counter() - t)


def choose_eps(d: int, n: int, central_eps: float, delta: float, rtol: float = 1e-4) -> float:
    """The largest local eps (to relative rtol, the verified lower end) whose n shuffled
    PrivUnit2 reports are (central_eps, delta)-DP by PrivUnit2's own bound; every candidate is
    certified by the forward query itself."""
    from ..accounting.inverse import certified
    from ..accounting.solve import largest_feasible
    from ..randomizers.privunit import eps_range

    lo_eps, hi_eps = eps_range(d)

    def ok(e: float) -> bool:
        return certified(n, None, central_eps, delta, oracle=PrivUnit2(d, e))

    # the shuffled output is eps-DP at local eps, but the realised eps0 (client coins) may lie
    # a hair above the stated one: halve until certified
    start = min(central_eps, hi_eps)
    while start >= lo_eps and not ok(start):
        start /= 2.0
    if start < lo_eps:
        raise ValueError(f"no local eps in [{lo_eps:g}, {hi_eps:g}] makes {n} shuffled PrivUnit2 "
                         f"reports ({central_eps:g}, {delta:g})-DP in dimension d = {d}")
    return largest_feasible(ok, start, hi_eps, rtol=rtol)
