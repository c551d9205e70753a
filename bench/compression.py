"""Benchmark of compressed randomizers (issue: speed targets).

PRG keystream throughput; encode+decode throughput of compressed k-RR (k=1024, eps=4) and
RAPPOR (k=1024, eps=2) against the uncompressed randomizer in the same process; bytes per
report and expected trials.
"""
import time

from ldpcompress.compression.sampler import compress
from ldpcompress.core.prg import keystream
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.rappor import RAPPOR


def rate(fn, count):
    t = time.perf_counter()
    fn()
    return count / (time.perf_counter() - t)


def main():
    t = time.perf_counter()
    keystream(bytes(16), 256 * 2 ** 20)
    print(f"AES-CTR keystream: {256 / (time.perf_counter() - t):.0f} MB/s")
    for rand, n in ((KRR(1024, 4.0), 2000), (RAPPOR(1024, 2.0), 5000),
                    (RAPPOR(1024, 2.0, symmetric=False), 5000)):
        name = f"{type(rand).__name__}({rand.privacy.value}) k=1024 eps={rand.eps:g}"
        pr = compress(rand)
        xs = [i % 1024 for i in range(n)]
        reps = []
        enc = rate(lambda: reps.extend(pr.encode_many(xs)), n)
        dec = rate(lambda: pr.decode_many(reps), n)
        plain = rate(lambda: [rand.randomize(x) for x in xs], n)
        out_bytes = 2 if isinstance(rand, KRR) else 1024 // 8
        print(f"{name}: encode {enc:,.0f}/s, decode {dec:,.0f}/s, uncompressed randomize "
              f"{plain:,.0f}/s (encode/plain {enc / plain:.2f}); {pr.bytes_per_report} bytes vs "
              f"{out_bytes}; expected trials <= {pr.expected_trials:.1f}, cap {pr.max_trials}")


if __name__ == "__main__":
    main()
