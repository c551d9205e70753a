"""Compressed reports as a randomizer of their own: FT21 seed reports of any compressible
randomizer through the randomizer contract (docs/guide.md, section 2), so that report sets,
aggregation in memory and on Dask, intervals and the command line take them like any other.

A report is the 17-byte wire format (``wire``: a version byte, then the 16-byte AES-CTR seed s)
standing for the inner randomizer's output S(G(s)). The client is the pseudo-randomizer of
FT21 Alg. 1 (``sampler.PseudoRandomizer``, coins from os.urandom); the server's summary of a
batch is the inner randomizer's summary of the outputs the seeds stand for, computed by its
batch hook ``summarize_seeds`` (seeds are public once sent); estimates and intervals are the
inner randomizer's. Privacy, as proven for *any* PRG (FT21 Lemma 3.6, truncation to T trials
included): deletion 2 eps_d-DP w.r.t. uniform seeds, where eps_d is the inner randomizer's
deletion eps w.r.t. its reference law; that is what ``eps`` states, so accounting through the
contract is never optimistic. With AES-CTR taken as a secure PRG the reports are
computationally indistinguishable from the inner randomizer's, up to ``tv_target`` (FT21
Thm 3.5, Lemma 3.7): an analyst who accepts that assumption accounts for the inner randomizer.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..core import validate as V
from ..core.entropy import Entropy
from ..core.limits import expected_trials
from ..core.prg import SEED_BYTES
from ..randomizers import registry
from ..randomizers import cost as C
from ..randomizers.contract import Column, Cost, LocalRandomizer, Privacy, SummarySpec
from ..randomizers.estimator import integer_reports
from . import wire
from .sampler import PseudoRandomizer, check_compressible
from .seeded import SeedReports

__all__ = ["SEED_BATCH", "CompressedRandomizer"]

SEED_BATCH = 1 << 14  # seeds handed to the inner randomizer's summarize_seeds at a time


@registry.register
class CompressedRandomizer(LocalRandomizer, SeedReports):
    """17-byte seed reports of a compressible randomizer (FT21 Alg. 1; module docstring):
    ``summarize`` and ``estimate`` are the contract's (reports checked once, then the hook
    ``_summarize``), ``seeds`` and ``decode_many`` :class:`SeedReports`'.

    ``CompressedRandomizer(randomizer, tv_target=2**-40)`` wraps a :class:`LocalRandomizer`
    whose ``compression_refusal()`` is None (a ValueError names the reason otherwise);
    ``CompressedRandomizer(compress(randomizer, ...))`` takes a pseudo-randomizer's
    randomizer and TV target, and uses it as the client (its entropy and trial limit). Registry name "compressed", parameters
    ``{"randomizer": <the inner randomizer's spec>, "tv_target": ...}``. Reports are (n, 17)
    uint8 arrays (a list of 17-byte strings is accepted too), stored as one 17-byte column.

    Parameters
    ----------
    randomizer : LocalRandomizer or PseudoRandomizer
        The randomizer to compress (its ``compression_refusal()`` must be None), or a
        :func:`~ldpcompress.compression.sampler.compress` result.
    tv_target : float, default 2^-40
        Total variation distance of the decoded output to the randomizer's law, in (0, 1).
    """

    name = "compressed"
    seeds_per_call = SEED_BATCH

    def __init__(self, randomizer, tv_target: float = 2.0 ** -40):
        client = None
        if isinstance(randomizer, PseudoRandomizer):  # its TV target, entropy and trial limit
            client, randomizer, tv_target = randomizer, randomizer.randomizer, \
                randomizer.tv_target
        if isinstance(randomizer, Mapping):  # a spec read from a file: rebuilt, checked
            randomizer = registry.check_spec(dict(randomizer), "randomizer")
        self.inner = randomizer = check_compressible(randomizer, " (or a compress() result)")
        self.tv_target = V.probability_open(tv_target, "tv_target")
        eps_d = randomizer.deletion_eps
        if eps_d is None:  # compression_refusal() says why, above
            raise ValueError(f"compress() does not take {randomizer.describe()}: no deletion eps")
        self.eps_d = float(eps_d)
        self.privacy = Privacy.DELETION
        self.eps = 2.0 * self.eps_d  # FT21 Lemma 3.6: deletion 2 eps_d-DP for any G
        self.bits_per_report = 8 * wire.REPORT_BYTES
        self._clients: dict = {} if client is None else {id(None): (None, client)}

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "CompressedRandomizer":
        """Rebuild from ``params()``: the key "randomizer" (a spec) and "tv_target" (default
        2^-40), nothing else."""
        if not isinstance(params, Mapping) or "randomizer" not in params or \
                not set(params) <= {"randomizer", "tv_target"}:
            shown = sorted(params) if isinstance(params, Mapping) else type(params).__name__
            raise ValueError(f"compressed: params must have the key 'randomizer' (and "
                             f"'tv_target'), nothing else, got {shown}")
        if not isinstance(params["randomizer"], Mapping):
            raise ValueError("compressed: params.randomizer must be a randomizer's spec "
                             "{'randomizer': name, 'params': {...}}")
        return cls(params["randomizer"], params.get("tv_target", 2.0 ** -40))

    def params(self) -> dict[str, Any]:
        return {"randomizer": {"randomizer": self.inner.name, "params": self.inner.params()},
                "tv_target": self.tv_target}

    def describe(self) -> str:
        return f"compressed({self.inner.describe()}, tv_target={self.tv_target:.3g})"

    def __getstate__(self) -> dict:  # the client's cached pseudo-randomizers stay home
        state = dict(self.__dict__)
        state["_clients"] = {}
        return state

    def compression_refusal(self) -> str:
        return "its reports are already 17-byte seed reports"

    # -- client ------------------------------------------------------------------------------
    def pseudo_randomizer(self, entropy: Entropy | None = None) -> PseudoRandomizer:
        """The FT21 Alg. 1 client with coins from ``entropy`` (default: os.urandom, or the
        pseudo-randomizer this wrapper was built from); refuses a randomizer whose expected
        trials per report exceed ``limits.MAX_EXPECTED_TRIALS`` (build the wrapper from
        ``compress(randomizer, max_expected_trials=...)`` to raise it).

        Parameters
        ----------
        entropy : Entropy, optional
            The source of seeds and coins (see above).
        """
        if entropy is not None and not isinstance(entropy, Entropy):
            raise TypeError(f"entropy must be an ldpcompress Entropy, got "
                            f"{type(entropy).__name__}")
        key = id(entropy)
        if key not in self._clients:
            client = PseudoRandomizer(self.inner, self.tv_target) if entropy is None else \
                PseudoRandomizer(self.inner, self.tv_target, entropy)
            self._clients[key] = (entropy, client)
        return self._clients[key][1]

    def check_items(self, xs):
        return self.inner.check_items(xs)

    def check_item(self, x):
        return self.inner.check_item(x)

    def _entropy(self, entropy) -> Entropy | None:
        """None stays None: the client this wrapper was built with (``pseudo_randomizer``)."""
        return None if entropy is None else super()._entropy(entropy)

    def _randomize_many(self, xs, entropy: Entropy | None) -> np.ndarray:
        """One 17-byte report per input, as an (n, 17) uint8 array: the client's
        ``encode_many``, or with a seeded simulation source (no privacy) the batch simulator
        ``encode_many_simulated`` (the same law, FT21 Alg. 1)."""
        pr = self.pseudo_randomizer(entropy)
        if getattr(pr.entropy, "for_simulation", False):
            return self.check_reports(pr.encode_many_simulated(xs, pr.entropy))
        return self.check_reports(pr.encode_many(xs))

    # -- server ------------------------------------------------------------------------------
    def check_reports(self, reports) -> np.ndarray:
        """Reports as an (n, 17) uint8 array, each with this library's format version byte;
        errors name the first bad report."""
        if isinstance(reports, (list, tuple)) and reports and \
                all(isinstance(r, (bytes, bytearray, memoryview)) for r in reports):
            sizes = {len(r) for r in reports}
            if sizes != {wire.REPORT_BYTES}:
                i = next(i for i, r in enumerate(reports) if len(r) != wire.REPORT_BYTES)
                raise ValueError(f"report {i} has {len(reports[i])} bytes, a compressed report "
                                 f"has {wire.REPORT_BYTES} (version + {SEED_BYTES}-byte seed)")
            reports = np.frombuffer(b"".join(bytes(r) for r in reports), np.uint8).reshape(
                -1, wire.REPORT_BYTES)
        arr = np.asarray(reports)
        if not (arr.dtype == np.uint8 and arr.ndim == 2 and arr.shape[1] == wire.REPORT_BYTES):
            arr = integer_reports(arr, 256, width=wire.REPORT_BYTES, what="byte").astype(np.uint8)
        bad = arr[:, 0] != wire.VERSION
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"report {i}: unknown report format version {arr[i, 0]} (this "
                             f"library reads {wire.VERSION})")
        return arr

    def seeds(self, reports) -> np.ndarray:
        """The (n, 16) seeds of validated reports.

        Parameters
        ----------
        reports
            A batch of 17-byte reports (untrusted: validated).
        """
        return np.ascontiguousarray(self.check_reports(reports)[:, 1:])

    def summary_spec(self) -> SummarySpec:
        return self.inner.summary_spec()

    def _summarize(self, reports) -> np.ndarray:
        """The summary of checked reports (``SeedReports``: ``summarize_seeds`` of the inner
        randomizer, SEED_BATCH seeds at a time)."""
        return self._summarize_seed_rows(np.ascontiguousarray(reports[:, 1:]))

    def summary_cost(self, n, batch=None, *, seeds=False) -> Cost:
        """The inner randomizer's cost of ``summarize_seeds`` on n seeds, SEED_BATCH at a time
        (its decode buffers and per-chunk tables: ``summary_cost(..., seeds=True)``), plus the
        17-byte reports checked and their seeds copied, and the running total of one summary.
        ``seeds`` does not apply (a compressed report is not compressed again: ValueError)."""
        if seeds:
            raise ValueError("compressed reports are not compressed again: summary_cost of "
                             "their seeds does not apply")
        n, b, calls = C.cost_args(n, batch)
        inner = self.inner.summary_cost(n, min(b, SEED_BATCH), seeds=True)
        spec = self.inner.summary_spec()
        entries = C.entries_of(spec.shape)
        total = entries * np.dtype(spec.dtype).itemsize
        seed_calls = C.calls(n, min(b, SEED_BATCH)) + calls
        ops = inner.operations + n * 4 * C.SIMPLE * 17 \
            + seed_calls * (C.CALL + 2 * entries * C.SIMPLE)
        return Cost(ops, inner.peak_bytes + total + b * (16 + 17 * 2),
                    f"{inner.detail} ({self.inner.name} decoded from seeds)")

    def estimate_from_summary(self, summary, n: int) -> np.ndarray:
        return self.inner.estimate_from_summary(summary, n)

    def intervals(self, est, n: int, level: float = 0.95,
                  conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return self.inner.intervals(est, n, level, conservative)

    # -- storage -----------------------------------------------------------------------------
    def report_columns(self) -> tuple[Column, ...]:
        return (Column("report", "uint8", wire.REPORT_BYTES),)

    def _to_columns(self, reports) -> dict[str, np.ndarray]:
        return {"report": reports}

    def _from_columns(self, columns) -> np.ndarray:
        return columns["report"]

    @property
    def expected_trials(self) -> float:
        """e^eps_d: expected trials per report of the client."""
        return expected_trials(self.eps_d)
