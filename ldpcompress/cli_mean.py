"""CLI command ``mean``: PrivUnit2 (plain and compressed) vs the one-bit baseline (S7)."""
from __future__ import annotations

import math
import time

import numpy as np

from . import mean as M
from . import validate as V
from .cli_util import count, dump_json, number, positive
from .limits import array_bytes, check_bytes

ARRAYS = 4  # n x d float64 arrays alive at once: the data, its noise, one method's outputs
MAX_EPS = 700.0  # the one-bit baseline's range (e^eps finite): every compared method needs eps


def simulate(d: int, n: int, seed: int = 0) -> np.ndarray:
    """n unit vectors scattered around one direction (simulated users' data, numpy is fine)."""
    d, n = V.integer_at_least(d, "d", 2), V.users(n)
    check_bytes(array_bytes((ARRAYS * n, d), np.float64),
                f"mean estimation with n={n}, d={d} ({ARRAYS} n x d float64 arrays)", "n or d")
    rng = np.random.default_rng(seed)  # simulated users' data, not privacy coins
    center = rng.normal(size=d)
    center /= np.linalg.norm(center)
    x = center + rng.normal(size=(n, d)) / math.sqrt(d)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def run(d: int, n: int, eps: float, split: int | None = None) -> dict:
    """MSE, predicted MSE, bytes and seconds of each method on n simulated vectors in d."""
    comp = M.CompressedPrivUnit2(d, eps, 1 if split is None else split)
    xs = simulate(d, n)
    truth = xs.mean(axis=0)
    out = {}
    methods = {
        "privunit2": (M.PrivUnit2(d, eps), 8 * d),
        "privunit2-compressed": (comp, comp.bytes_per_report),
        "one-bit (Duchi et al.)": (M.OneBitSphere(d, eps), 8 * d),
    }
    for name, (mech, nbytes) in methods.items():
        t = time.perf_counter()
        if name == "privunit2-compressed":
            zs = mech.decode_many(mech.encode_many(xs))
        else:
            zs = np.array([mech.randomize(x) for x in xs])
        secs = time.perf_counter() - t
        out[name] = dict(mse=float(np.sum((zs.mean(axis=0) - truth) ** 2)),
                         predicted=mech.variance() / n, bytes=nbytes, seconds=secs)
    out["split"] = comp.split
    out["expected_trials"] = comp.expected_trials
    return out


def _cmd_mean(args) -> None:
    d, n, eps = count(args.d, "--d", 2), count(args.n, "--n"), positive(args.eps, "--eps")
    if eps > MAX_EPS:
        raise ValueError(f"--eps must be in (0, {MAX_EPS:g}] (e^eps must stay finite), got {eps:g}")
    split = count(args.split, "--split", 1, 1000)
    split = split if split is not None else M.choose_split(d, eps)
    res = run(d, n, eps, split)
    if args.json:
        print(dump_json(res))
        return
    print(f"mean of n={n:,} unit vectors in d={d}, eps={eps:g} "
          f"(compressed: K={res['split']} copies, {res['expected_trials']:.1f} expected trials)")
    print(f"{'method':<24}{'MSE':>12}{'predicted':>12}{'bytes':>8}{'seconds':>9}")
    for name, r in res.items():
        if isinstance(r, dict):
            print(f"{name:<24}{r['mse']:>12.4g}{r['predicted']:>12.4g}{r['bytes']:>8}"
                  f"{r['seconds']:>9.2f}")


def register(sub) -> None:
    m = sub.add_parser("mean", help="mean estimation: PrivUnit2, compressed, one-bit (S7)")
    m.add_argument("--d", type=number, default=1000, help="dimension (default 1000)")
    m.add_argument("--n", type=number, default=10_000, help="users (default 10,000)")
    m.add_argument("--eps", type=number, default=4.0)
    m.add_argument("--split", type=number, help="K copies at eps/K in [1, 1000] (default: "
                   "capped trials)")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_cmd_mean)
