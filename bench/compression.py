"""Benchmark of compressed randomizers (issue: speed targets), every ratio in one process.

1. The server: decode and aggregate 1e6 compressed RAPPOR(k=1024, eps=2) reports with the batch
   API (``PseudoRandomizer.summarize`` over an (n, 17) array: bit counts straight from the
   keystream) against the per-report path (``decode`` of each report, then the bit counts;
   timed on a subset and extrapolated linearly to 1e6) and against pycryptodome AES-CTR over
   the same keystream bytes (1024 words = 8 KiB per report): one stream of n x 8 KiB (its
   throughput), and one stream per seed (its own key: what a per-report server does), the
   latter timed on a subset and extrapolated.
2. Batch encoding for simulations (``encode_many_simulated``) against the client's per-report
   ``encode_many`` (os.urandom coins, pycryptodome AES per trial).
3. PrivUnit2 (d=1000, eps=4 in one copy): batch decode and sum of 1e5 reports against the
   per-report decode (subset, extrapolated), with the shared Box-Muller kernel and with numpy's
   Box-Muller as the decoder did before the batch kernels.
4. k-RR (k=1024) and subset selection (k=1024, eps=2): batch summary against per-report decode.

Every time is the fastest of a few runs (the machine may be shared). Usage:
python bench/compression.py [n_rappor] (default 1e6).
"""
import sys
import time

import numpy as np
from Crypto.Cipher import AES

from ldpcompress.compression import compress
from ldpcompress.compression.wire import pack_rows
from ldpcompress.core.entropy import simulation_entropy
from ldpcompress.core.prg import PRG
from ldpcompress.kernels.aes import AES_NI
from ldpcompress.randomizers import KRR, RAPPOR, PrivUnit2, SubsetSelection
from ldpcompress.randomizers.base import num_threads


def seconds(fn, repeat: int = 3):
    """(the fastest of ``repeat`` runs in seconds, the last result): the machine is shared,
    so the minimum is the figure least disturbed by other work."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def pycryptodome_one_stream(nbytes: int) -> float:
    """Seconds of one AES-128-CTR stream of nbytes (a reused 64 MiB output buffer)."""
    cipher = AES.new(bytes(16), AES.MODE_CTR, nonce=bytes(8), initial_value=0)
    chunk = 64 << 20
    zeros, out = bytes(chunk), bytearray(chunk)
    t = time.perf_counter()
    for _ in range(nbytes // chunk):
        cipher.encrypt(zeros, output=out)
    if nbytes % chunk:
        cipher.encrypt(bytes(nbytes % chunk))
    return time.perf_counter() - t


def pycryptodome_per_seed(seeds: np.ndarray, nbytes: int) -> float:
    zeros = bytes(nbytes)
    t = time.perf_counter()
    for s in seeds:
        AES.new(s.tobytes(), AES.MODE_CTR, nonce=bytes(8), initial_value=0).encrypt(zeros)
    return time.perf_counter() - t


def server(n: int, subset: int = 20_000):
    rand = RAPPOR(1024, 2.0)
    pr = compress(rand)
    seeds = simulation_entropy(1).seed_array(n)
    reports = pack_rows(seeds)
    pr.summarize(reports[:100])  # compile outside the timing
    t_batch, counts = seconds(lambda: pr.summarize(reports))
    listed = [bytes(r) for r in reports[:subset]]
    t_old, old = seconds(lambda: np.array([pr.decode(r) for r in listed]).sum(axis=0))
    assert np.array_equal(old, pr.summarize(reports[:subset]))
    t_old *= n / subset
    stream_bytes = 8 * rand.k  # the words the reference sampler reads per report
    t_one = min(pycryptodome_one_stream(n * stream_bytes) for _ in range(2))
    t_keyed = min(pycryptodome_per_seed(seeds[:subset], stream_bytes)
                  for _ in range(3)) * n / subset
    print(f"server, RAPPOR(k=1024, eps=2), n = {n:,} reports ({stream_bytes} keystream bytes "
          f"each, {n * stream_bytes / 1e9:.2f} GB):")
    print(f"  batch decode + bit counts (summarize): {t_batch:.2f} s "
          f"({n / t_batch:,.0f} reports/s)")
    print(f"  per-report decode + counts: {t_old:.1f} s (timed on {subset:,}, extrapolated): "
          f"{t_old / t_batch:.1f}x the batch time")
    print(f"  pycryptodome AES-CTR, one stream of the same bytes: {t_one:.2f} s "
          f"({n * stream_bytes / t_one / 1e9:.2f} GB/s): batch / this = {t_batch / t_one:.2f}")
    print(f"  pycryptodome AES-CTR, one keyed stream per seed: {t_keyed:.1f} s (timed on "
          f"{subset:,}, extrapolated): batch / this = {t_batch / t_keyed:.2f}")
    print(f"  counts sum to {int(counts.sum()):,} bits ({counts.sum() / n:.1f} per report, "
          f"a0 k = {rand.a0 * rand.k:.1f})")


def encoding(n: int = 100_000, subset: int = 3_000):
    rand = RAPPOR(1024, 2.0)
    pr = compress(rand)
    xs = np.arange(n) % 1024
    pr.encode_many_simulated(xs[:100], simulation_entropy(0))
    t_batch, reps = seconds(lambda: pr.encode_many_simulated(xs, simulation_entropy(2)))
    t_old, _ = seconds(lambda: pr.encode_many(xs[:subset].tolist()), 2)
    old_rate, new_rate = subset / t_old, n / t_batch
    est = pr.estimate(reps)
    f = np.bincount(xs, minlength=1024)
    mse, var = np.mean((est - f) ** 2), np.mean(rand.variance(n, f))
    print(f"encode, RAPPOR(k=1024, eps=2), expected trials {pr.expected_trials:.2f}:")
    print(f"  encode_many_simulated: {new_rate:,.0f} reports/s (n = {n:,}); per-report "
          f"encode_many: {old_rate:,.0f} reports/s (n = {subset:,}): {new_rate / old_rate:.1f}x")
    print(f"  MSE of the estimates {mse:,.0f} vs the variance formula {var:,.0f} "
          f"(ratio {mse / var:.3f})")


def privunit(n: int = 100_000, d: int = 1000, subset: int = 2_000):
    rand = PrivUnit2(d, 4.0)
    pr = compress(rand)
    seeds = simulation_entropy(3).seed_array(n)
    reports = pack_rows(seeds)
    pr.summarize(reports[:10])
    pr.decode_many(reports[:10])
    t_sum, _ = seconds(lambda: pr.summarize(reports))
    t_dec, _ = seconds(lambda: pr.decode_many(reports))
    listed = [bytes(r) for r in reports[:subset]]
    t_old, _ = seconds(lambda: np.array([pr.decode(r) for r in listed]).sum(axis=0))
    t_old *= n / subset
    m = rand.par.m  # the decoder before the batch kernels: numpy's Box-Muller and norm
    t_numpy, _ = seconds(lambda: np.array([PRG(s.tobytes()).sphere(d) / m
                                           for s in seeds[:subset]]).sum(axis=0))
    t_numpy *= n / subset
    print(f"PrivUnit2(d={d}, eps=4), n = {n:,} reports:")
    print(f"  batch summarize (sum of decoded vectors): {t_sum:.2f} s; batch decode_many "
          f"(n x d array): {t_dec:.2f} s")
    print(f"  per-report decode + sum (timed on {subset:,}, extrapolated): {t_old:.1f} s with "
          f"the shared Box-Muller kernel ({t_old / t_sum:.1f}x the batch summary), {t_numpy:.1f} s "
          f"with numpy's as before ({t_numpy / t_sum:.1f}x)")


def oracles(n: int = 200_000, subset: int = 10_000):
    for rand in (KRR(1024, 4.0), SubsetSelection(1024, 2.0)):
        pr = compress(rand)
        reports = pack_rows(simulation_entropy(4).seed_array(n))
        pr.summarize(reports[:10])
        t_new, _ = seconds(lambda: pr.summarize(reports))
        listed = [bytes(r) for r in reports[:subset]]
        t_old, _ = seconds(lambda: rand.summarize([pr.decode(r) for r in listed]))
        t_old *= n / subset
        print(f"{rand.describe()}: batch summarize {n / t_new:,.0f} reports/s; per-report "
              f"decode + summarize {n / t_old:,.0f} reports/s: {t_old / t_new:.1f}x")


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10 ** 6
    print(f"AES implementation of the batch kernels: {'AES-NI' if AES_NI else 'T-tables'}; "
          f"{num_threads()} Numba threads")
    server(n)
    encoding()
    privunit()
    oracles()


if __name__ == "__main__":
    main()
