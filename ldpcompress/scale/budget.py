"""What an aggregation may spend, stated and checked before any shard is read (docs/guide.md,
section 3, "What aggregation may spend").

A report set's manifest names its randomizer and parameters, so whoever writes the set
chooses how much work and memory summarising it takes. :func:`plan` therefore collects the
sets (``reader.collect``: every manifest checked; with ``expect`` a set recording another
randomizer is refused before its randomizer is built) and states the cost of aggregating them
(:func:`aggregation_cost`): the randomizer's own ``summary_cost`` of the n reports, a batch at a
time, plus reading (every stored byte hashed twice and parsed, every value checked), the
batches held, the running total and the estimates. :meth:`Plan.check` refuses a plan whose
stated seconds or peak bytes exceed the limits (``core.limits``: about a minute and 4 GiB by
default), naming the cost, the limit and the option that raises it; ``distributed.aggregate``
runs only checked plans. The stated peak bounds the memory the process gains while
aggregating (tests/test_budget.py runs aggregations under an address-space limit of that
much).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.limits import SECONDS_PER_OPERATION, check_cost, in_command_line
from ..randomizers import cost as C
from ..randomizers import registry
from ..randomizers.contract import Cost, LocalRandomizer
from .manifest import Shard
from .reader import (READ_BUFFER, VERIFY_BLOCK, VERIFY_CACHE, check_batch_rows, collect,
                     row_memory)

__all__ = ["HASH_BYTE", "VALUE", "SHARD", "ESTIMATE", "READER_BYTES", "Plan", "expected",
           "aggregation_cost", "held_bytes", "worker_bytes", "check_readable", "plan"]

HASH_BYTE = 4.0      # one stored byte through SHA-256 (done twice: the first pass, then as read)
VALUE = 16.0         # one stored value parsed, converted and checked (``from_columns``)
SHARD = 10_000_000.0  # one shard opened: its file, Parquet footer and schema, Python
ESTIMATE = 60.0      # one entry of the estimates from the summary (``estimate_from_summary``)
# the reader's fixed memory: verified blocks, Parquet read buffers and pages, Arrow's pool
READER_BYTES = VERIFY_CACHE * VERIFY_BLOCK + 16 * READ_BUFFER + (32 << 20)


def expected(expect) -> LocalRandomizer | None:
    """The randomizer the server expects: a LocalRandomizer, a registry spec
    ``{"randomizer": name, "params": {...}}`` (rebuilt), or None (no expectation)."""
    if expect is None or isinstance(expect, LocalRandomizer):
        return expect
    if isinstance(expect, dict):
        return registry.check_spec(expect, "expect")
    raise TypeError(f"expect must be a LocalRandomizer or a registry spec {{'randomizer': name, "
                    f"'params': {{...}}}}, got {type(expect).__name__}")


def _summary_bytes(randomizer: LocalRandomizer) -> tuple[int, int]:
    """(entries, bytes) of one summary."""
    spec = randomizer.summary_spec()
    entries = C.entries_of(spec.shape)
    return entries, entries * np.dtype(spec.dtype).itemsize


def aggregation_cost(randomizer: LocalRandomizer, shards: list[Shard],
                     batch_rows: int) -> Cost:
    """The stated cost of aggregating ``shards`` of ``randomizer`` ``batch_rows`` reports at a
    time, in one process (each Dask worker holds no more): the randomizer's ``summary_cost``
    of the n reports plus reading (HASH_BYTE twice per stored byte, VALUE per stored value,
    SHARD per shard), each call's summary added to the total and the estimates (ESTIMATE per
    entry). Peak memory: the larger of the summarising (the reader, two batches, one pooled
    and one being read, the summary's work and the running total) and the end (the total
    and the estimates with their temporaries, :func:`held_bytes`)."""
    n = sum(s.rows for s in shards)
    stored = sum(s.size for s in shards)
    values = sum(c.width for c in randomizer.report_columns())
    entries, _ = _summary_bytes(randomizer)
    summary = randomizer.summary_cost(n, batch_rows)
    ops = summary.operations + 2 * HASH_BYTE * stored + VALUE * values * n \
        + SHARD * len(shards) + (C.calls(n, batch_rows) * 2 * C.SIMPLE + ESTIMATE) * entries
    work = _work_bytes(randomizer, min(n, batch_rows), summary.peak_bytes)
    return Cost(ops, max(work, held_bytes(randomizer)), summary.detail)


def held_bytes(randomizer: LocalRandomizer) -> int:
    """Memory at the end of an aggregation: the total, and the estimates with the two
    temporaries that computing them takes."""
    entries, size = _summary_bytes(randomizer)
    return size + 3 * 8 * entries


def _work_bytes(randomizer: LocalRandomizer, batch: int, summarizing: float) -> float:
    """Memory while summarising: the reader, two batches, the summary's work, the total."""
    return READER_BYTES + 2 * batch * row_memory(randomizer) + summarizing \
        + _summary_bytes(randomizer)[1]


def worker_bytes(randomizer: LocalRandomizer, batch_rows: int) -> float:
    """Memory of one Dask worker summarising shards ``batch_rows`` reports at a time."""
    return _work_bytes(randomizer, batch_rows,
                       randomizer.summary_cost(batch_rows, batch_rows).peak_bytes)


def check_readable(randomizer: LocalRandomizer, where: str, max_bytes=None) -> None:
    """Refuse a randomizer whose reports no server could summarise, even one at a time, within
    the memory limit (a writer asks before writing a set): the ValueError names ``where``."""
    need = max(_work_bytes(randomizer, 1, randomizer.summary_cost(1, 1).peak_bytes),
               held_bytes(randomizer))
    try:
        check_cost(0.0, need, f"summarising reports of {randomizer.describe()}",
                   max_bytes=max_bytes)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


@dataclass(frozen=True)
class Plan:
    """An aggregation stated before it runs (:func:`plan`): the common ``randomizer``, the
    ``shards``, the reports per batch, its ``cost`` (``extra``: the caller's own work on the
    result, included: its operations added, its memory on top of what the result holds),
    whether the randomizer was ``expected`` and whether the cost was ``checked`` against
    limits (``limits``: (max seconds, max bytes) then in force)."""

    randomizer: LocalRandomizer
    shards: tuple
    batch_rows: int
    cost: Cost
    expected: bool
    checked: bool = False
    limits: tuple = ()

    @property
    def n(self) -> int:
        return sum(s.rows for s in self.shards)

    @property
    def seconds(self) -> float:
        """The stated time: operations x SECONDS_PER_OPERATION (one core, no parallelism)."""
        return self.cost.operations * SECONDS_PER_OPERATION

    def check(self, max_seconds=None, max_bytes=None, extra: Cost | None = None) -> "Plan":
        """This plan, its cost plus ``extra`` checked against the limits (None: the defaults,
        ``core.limits.MAX_SECONDS`` and ``MAX_BYTES``; inf: none): a ValueError names the
        stated cost, the limit and the option that raises it (the command line's
        ``--max-seconds``/``--max-memory``, else ``max_seconds``/``max_bytes``)."""
        from ..core.limits import resolve_max_bytes, resolve_max_seconds
        cost = self.cost
        if extra is not None:
            if not isinstance(extra, Cost):
                raise TypeError(f"extra must be a Cost, got {type(extra).__name__}")
            cost = Cost(cost.operations + extra.operations,
                        max(cost.peak_bytes, held_bytes(self.randomizer) + extra.peak_bytes),
                        cost.detail)
        options = ("--max-seconds", "--max-memory") if in_command_line() else \
            ("max_seconds", "max_bytes")
        sets = list(dict.fromkeys(str(s.manifest) for s in self.shards))
        where = sets[0] + (f" and {len(sets) - 1} more set(s)" if len(sets) > 1 else "")
        what = f"{where}: aggregating {self.n} reports of {self.randomizer.describe()} " \
               f"({len(self.shards)} shard{'s' if len(self.shards) != 1 else ''})"
        check_cost(cost.operations, cost.peak_bytes, what, cost.detail, max_seconds,
                   max_bytes, options)
        return replace(self, cost=cost, checked=True,
                       limits=(resolve_max_seconds(max_seconds), resolve_max_bytes(max_bytes)))


def plan(paths, expect=None, batch_rows: int | None = None) -> Plan:
    """Collect the report sets of ``paths`` (``reader.collect``; with ``expect``, a registry
    spec or randomizer, a set recording another randomizer is refused naming both) and state
    the cost of aggregating them (:func:`aggregation_cost`), nothing read but manifests. The
    plan is not yet checked: :meth:`Plan.check`."""
    want = expected(expect)
    randomizer, shards = collect(paths, want)
    batch_rows = check_batch_rows(batch_rows, randomizer)
    return Plan(randomizer, tuple(shards), batch_rows,
                aggregation_cost(randomizer, shards, batch_rows), want is not None)
