"""Benchmark of the server's limits: what stating a report set's cost takes, what the stated
cost says against what aggregation measures, and the hostile sets of issue 27.

1. Baseline and the cost estimate: a normal set (PI-RAPPOR, k = 1000, eps = 4, 1e6 reports in
   8 shards) aggregated in memory (the plain aggregation, the baseline) against stating its
   cost (``budget.plan``: manifests read, ``summary_cost``, no shard read), in this process.

2. Stated against measured: for randomizers of every kind, compressed and not, the stated
   seconds (``Plan.seconds``: operations x ``core.limits.SECONDS_PER_OPERATION``, one core)
   and the measured in-memory aggregation (this process, kernels warm): wall time and CPU
   time (all threads). The ratio CPU / stated must stay below 1 (the statement is
   conservative); wall time on a machine shared with other jobs can exceed it (the statement
   counts work, not the machine's load).

3. The hostile sets of issue 27, each written through the library's writer with a valid
   manifest (OLH k = 2^26 with 20,000 reports; PI-RAPPOR k = 2^26 with 20,000; compressed
   RAPPOR k = 2^26 with 200; compressed PrivUnit2 d = 2^20 with 200), aggregated by the
   command line in a subprocess with the default limits: exit status, wall time and the
   child's peak resident memory (``/usr/bin/time``), and the first line of its message. Before this
   change (ldpcompress 0.4 main, same machine): OLH and PI-RAPPOR still running after 150 s
   (1.3 GB, 1.8 GB), compressed RAPPOR 127 s and 3.9 GB, compressed PrivUnit2 28.5 s.

Usage: ``python bench/server_limits.py`` (a few minutes on 2 cores); ``--quick`` skips part 2's
larger sets.
"""
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ldpcompress.compression import CompressedRandomizer, wire  # noqa: E402
from ldpcompress.randomizers import registry  # noqa: E402
from ldpcompress.scale import budget  # noqa: E402
from ldpcompress.scale import distributed as D  # noqa: E402
from ldpcompress.scale import report_files as RF  # noqa: E402

from amplification import timed  # noqa: E402  (best of a few warm runs, the sibling bench's)

RNG = np.random.default_rng(27)  # test-only: simulated inputs and seeds, no privacy

# part 2: (registry name, parameters, reports, compressed)
CONFIGS = [
    ("krr", {"k": 1 << 20, "eps": 1.0}, 1_000_000, False),
    ("olh", {"k": 1 << 16, "eps": 2.0}, 20_000, False),
    ("olh", {"k": 1 << 22, "eps": 2.0}, 500, False),
    ("pi-rappor", {"k": 1 << 16, "eps": 1.0}, 50_000, False),
    ("pi-rappor", {"k": 1 << 22, "eps": 3.0}, 2_000, False),
    ("rappor", {"k": 1 << 14, "eps": 1.0}, 20_000, False),
    ("hadamard", {"k": 1 << 20, "eps": 1.0}, 1_000_000, False),
    ("subset", {"k": 1 << 12, "eps": 1.0}, 200_000, False),
    ("pi-rappor-vector", {"k": 1 << 16, "eps": 1.0, "q": 257}, 2_000, False),
    ("privunit2", {"d": 1 << 12, "eps": 2.0}, 20_000, False),
    ("rappor", {"k": 1 << 12, "eps": 1.0}, 100_000, True),
    ("rappor", {"k": 1 << 22, "eps": 1.0}, 300, True),
    ("krr", {"k": 1 << 24, "eps": 1.0}, 200_000, True),
    ("subset", {"k": 1 << 16, "eps": 1.0, "d": 16}, 50_000, True),
    ("privunit2", {"d": 1 << 16, "eps": 1.0}, 2_000, True),
    ("laplace-scalar", {"lo": 0.0, "hi": 1.0, "eps": 1.0}, 20_000, True),
]
QUICK = 6  # --quick: the first configurations only

HOSTILE = [
    ("OLH k = 2^26, 20,000 reports", "olh", {"k": 1 << 26, "eps": 4.0}, 20_000, False),
    ("PI-RAPPOR k = 2^26, 20,000 reports", "pi-rappor", {"k": 1 << 26, "eps": 4.0}, 20_000,
     False),
    ("compressed RAPPOR k = 2^26, 200 reports", "rappor", {"k": 1 << 26, "eps": 1.0}, 200, True),
    ("compressed PrivUnit2 d = 2^20, 200 reports", "privunit2", {"d": 1 << 20, "eps": 1.0}, 200,
     True),
]


def seeds(n: int) -> np.ndarray:
    """n valid compressed reports: the version byte and 16 random seed bytes (any seed is a
    report the server must decode)."""
    out = RNG.integers(0, 256, (n, wire.REPORT_BYTES), dtype=np.uint8)
    out[:, 0] = wire.VERSION
    return out


def write(out: Path, name: str, params: dict, n: int, compressed: bool, shards: int = 2):
    """A report set of n reports through the library's writer (valid manifest and digests)."""
    r = registry.build(name, params)
    if compressed:
        r = CompressedRandomizer(r)
        reports = seeds(n)
    elif hasattr(r, "k"):
        reports = r.randomize_many(RNG.integers(0, r.k, n))
    elif hasattr(r, "d"):
        x = RNG.normal(size=(n, r.d))
        reports = r.randomize_many(x / np.linalg.norm(x, axis=1)[:, None])
    else:
        reports = r.randomize_many(RNG.uniform(params["lo"], params["hi"], n))
    RF.write_reports(out, r, reports, shards=min(shards, n))
    return r


def cpu_timed(fn):
    """(wall seconds, CPU seconds of this process, all threads): the stated cost counts the
    work of one core, which CPU time measures even on a machine shared with other jobs."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def baseline_section(tmp: Path) -> None:
    print("1. The cost estimate against the plain aggregation of a normal set (this process)")
    oracle = registry.build("pi-rappor", {"k": 1000, "eps": 4.0})
    RF.write_items(tmp / "normal", oracle, [RNG.integers(0, 1000, 1_000_000)], 1_000_000, 8)
    agg = timed(lambda: D.aggregate([tmp / "normal"], scheduler="memory"))[1]  # best of 3 warm
    plan = timed(lambda: budget.plan([tmp / "normal"]).check())[1]
    print(f"   plain aggregation (baseline)  {agg * 1e3:9.1f} ms")
    print(f"   stating its cost (plan+check) {plan * 1e3:9.1f} ms   ratio {plan / agg:.4f} of "
          "the baseline")


def stated_section(tmp: Path, quick: bool) -> None:
    print("\n2. Stated against measured (in-memory aggregation, this process, kernels warm)")
    print(f"   {'randomizer':<58} {'n':>9} {'stated s':>9} {'wall s':>7} {'cpu s':>7} "
          f"{'cpu/stated':>10} {'stated MiB':>10}")
    for i, (name, params, n, compressed) in enumerate(CONFIGS[:QUICK] if quick else CONFIGS):
        small, big = tmp / f"w{i}", tmp / f"s{i}"
        write(small, name, params if "d" in params or "k" not in params
              else dict(params, k=64), 64, compressed)
        r = write(big, name, params, n, compressed)
        D.aggregate([small], scheduler="memory")  # this kernel compiled or loaded
        plan = budget.plan([big]).check(float("inf"), float("inf"))
        wall, cpu = cpu_timed(lambda: D.aggregate(plan, scheduler="memory"))
        print(f"   {r.describe()[:58]:<58} {n:>9} {plan.seconds:>9.2f} {wall:>7.2f} {cpu:>7.2f} "
              f"{cpu / plan.seconds:>10.2f} {plan.cost.peak_bytes / 2**20:>10.0f}")
        shutil.rmtree(small)
        shutil.rmtree(big)


def hostile_section(tmp: Path) -> None:
    print("\n3. The hostile sets of issue 27: `ldpcompress aggregate DIR`, default limits")
    for label, name, params, n, compressed in HOSTILE:
        out = tmp / label.split()[0]
        write(out, name, params, n, compressed, shards=1)
        size = sum(p.stat().st_size for p in out.iterdir())
        start = time.perf_counter()
        # /usr/bin/time measures the child alone (ru_maxrss of a direct child of this large
        # process would carry this process's peak over fork)
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(tmp / "rss"),
                               sys.executable, "-m", "ldpcompress", "aggregate", str(out)],
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        rss = int((tmp / "rss").read_text().split()[-1]) / 1024
        said = [line for line in proc.stderr.splitlines() if "error" in line] or \
            proc.stdout.splitlines()[:1]
        print(f"   {label:<44} {size / 1024:6.0f} KiB  exit {proc.returncode}  {wall:6.1f} s  "
              f"{rss:6.0f} MiB")
        print(f"      {said[0][:300] if said else ''}")
        shutil.rmtree(out)


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        baseline_section(Path(tmp))
        stated_section(Path(tmp), quick)
        hostile_section(Path(tmp))


if __name__ == "__main__":
    main()
