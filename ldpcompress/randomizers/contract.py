"""The randomizer contract: what every local randomizer states, and all that the jobs use
(docs/guide.md, section 7, "Your own randomizer: the contract").

A local randomizer is the hub of the library. :class:`LocalRandomizer` is the one explicit
contract between a randomizer and the jobs; accounting, compression, estimation, report sets,
aggregation (in memory and on Dask) and the command line call only these methods, never a
randomizer's name, so a randomizer written outside the library works in every job.

=============  =================================================================================
part           methods
=============  =================================================================================
identity       ``name`` (registry name), ``params()`` (JSON values that rebuild it through
               ``registry.build(name, params)``), ``describe()``, equality by (name, params)
privacy        ``privacy`` (:class:`Privacy`), ``eps`` (of that kind), ``replacement_eps``
client         ``check_items(xs)``, ``randomize_many(xs, entropy)`` (coins from os.urandom)
server         ``check_reports``, ``n_reports``, ``summarize`` (an additive statistic: shards and
               workers add theirs), ``summary_spec()``, ``estimate_from_summary``, ``estimate``,
               ``intervals``, and ``summary_cost(n, batch)``: the operations and peak memory of
               summarising n reports, stated before any is read (``cost.Cost``)
storage        ``report_columns()`` (name, dtype, width), ``to_columns``, ``from_columns``,
               ``concat``, ``bits_per_report`` (the wire size)
compression    ``deletion_eps``, ``sample(prg)``, ``ratio(x, y)``, ``ratio_bounds()``,
               ``ratio_from_seed``, the batch hooks ``ratios_from_seeds`` and ``summarize_seeds``,
               and ``compression_refusal()`` (why FT21 Alg. 1 does not apply, or None)
accounting     ``shuffle_structure()``: the law of the privacy blanket (binary-support
               randomizers), or None: the generic bound at ``replacement_eps`` applies
=============  =================================================================================
"""
from __future__ import annotations

import abc
import enum
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Mapping

import numpy as np

from ..core import display as D
from ..core.entropy import SYSTEM, Entropy
from ..core.prg import PRG, check_seed, check_seed_rows
from . import cost as C
from .cost import Cost

__all__ = ["Privacy", "Column", "SummarySpec", "LocalRandomizer", "check_randomizer",
           "check_columns", "int_dtype", "seeds_array", "paired", "seed_batch", "PER_SEED",
           "Cost", "fast_hook"]


class Privacy(enum.Enum):
    """The neighbouring relation of a randomizer's eps: REPLACEMENT (R(x), R(x') are
    (eps, 0)-indistinguishable for all x, x'), DELETION (R(x) and a reference law rho are,
    for all x). Replacement eps implies deletion eps; deletion eps implies replacement 2 eps."""

    REPLACEMENT = "replacement"
    DELETION = "deletion"


@dataclass(frozen=True)
class Column:
    """One stored column of a report batch: ``width`` values of ``dtype`` per report (a
    fixed-size list column when width > 1).

    Parameters
    ----------
    name : str
        The column's name.
    dtype : str
        A numpy dtype name.
    width : int, default 1
        Values per report (>= 1).
    """

    name: str
    dtype: str
    width: int = 1

    def __post_init__(self):
        np.dtype(self.dtype)  # a numpy dtype name, or TypeError
        if not (isinstance(self.width, int) and self.width >= 1):
            raise ValueError(f"column {self.name!r}: width must be an integer >= 1")


@dataclass(frozen=True)
class SummarySpec:
    """Shape and dtype of a randomizer's summary (what ``summarize`` returns).

    Parameters
    ----------
    shape : tuple of int
        The summary's shape.
    dtype : str
        A numpy dtype name.
    """

    shape: tuple
    dtype: str


def int_dtype(high: int) -> str:
    """The smallest unsigned dtype holding every integer in [0, high)."""
    for name in ("uint8", "uint16", "uint32"):
        if high <= np.iinfo(name).max + 1:
            return name
    return "int64"


def seeds_array(seeds) -> np.ndarray:
    """Seeds as a C-contiguous (n, 16) uint8 array (from a list of 16-byte strings or such an
    array), ready for the batch kernels."""
    if isinstance(seeds, np.ndarray):
        return check_seed_rows(seeds)
    rows = [np.frombuffer(check_seed(s), dtype=np.uint8) for s in seeds]
    return np.stack(rows) if rows else np.zeros((0, 16), dtype=np.uint8)


def paired(xs: np.ndarray, seeds: np.ndarray) -> None:
    """One input per seed (ValueError naming both lengths: no silent truncation)."""
    if len(xs) != len(seeds):
        raise ValueError(f"ratios_from_seeds needs one input per seed, got {len(xs)} inputs "
                         f"and {len(seeds)} seeds")


PER_SEED = ("sample", "decode_seed", "ratio", "ratio_from_seed")


class seed_batch:
    """Decorator of a randomizer's fast batch hook (``decode_seeds``, ``ratios_from_seeds``,
    ``summarize_seeds``): the hook agrees with the per-seed methods (:data:`PER_SEED`) of the
    class that defines it, so a subclass that overrides one of those without redefining the
    hook gets the contract's slow default, which follows its own per-seed methods (a fast hook
    inherited past a new sampler would decode other outputs than the subclass's)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner, name):
        self.owner, self.name = owner, name

    def __get__(self, obj, objtype=None):
        cls = objtype if obj is None else type(obj)
        if all(getattr(cls, m) is getattr(self.owner, m) for m in PER_SEED):
            return self.fn.__get__(obj, cls)
        return getattr(LocalRandomizer, self.name).__get__(obj, cls)


def check_columns(columns: Mapping[str, np.ndarray], spec: Iterable[Column],
                  source: str = "reports") -> dict[str, np.ndarray]:
    """Untrusted stored columns checked against the randomizer's ``report_columns()``: exactly
    those names, equal lengths, each of its dtype kind and (n, width) shape. Values are the
    randomizer's to check (``from_columns`` calls ``check_reports``)."""
    spec = tuple(spec)
    if not isinstance(columns, Mapping):
        raise TypeError(f"{source}: columns must be a mapping of name -> array")
    want = [c.name for c in spec]
    if sorted(columns) != sorted(want):
        raise ValueError(f"{source}: columns {sorted(columns)}, expected {want}")
    out, n = {}, None
    for c in spec:
        arr = np.asarray(columns[c.name])
        expect = np.dtype(c.dtype)
        if arr.dtype.kind != expect.kind and not (expect.kind in "iu" and arr.dtype.kind in "iu"):
            raise ValueError(f"{source}: column {c.name!r} has dtype {arr.dtype}, expected "
                             f"{expect}")
        if c.width > 1:
            if arr.ndim != 2 or arr.shape[1] != c.width:
                raise ValueError(f"{source}: column {c.name!r} must have shape (n, {c.width}), "
                                 f"got {arr.shape}")
        elif arr.ndim != 1:
            raise ValueError(f"{source}: column {c.name!r} must be 1-D, got shape {arr.shape}")
        if n is not None and arr.shape[0] != n:
            raise ValueError(f"{source}: column {c.name!r} has {arr.shape[0]} rows, the others "
                             f"{n}")
        n = arr.shape[0]
        out[c.name] = arr
    return out


class LocalRandomizer(abc.ABC):
    """The contract of a local randomizer (see the module docstring for its parts).

    Subclasses set the class attribute ``name`` and the instance attributes ``privacy``,
    ``eps`` and ``bits_per_report``, and implement the abstract methods. The compression and
    accounting parts have defaults that say "not available" (``compression_refusal`` names
    why; ``shuffle_structure`` returns None, so accounting uses the generic bound).
    """

    name: ClassVar[str] = ""
    privacy: Privacy
    eps: float
    bits_per_report: int
    deletion_eps: float | None = None  # w.r.t. the reference law of ``sample`` (compression)

    # -- identity ----------------------------------------------------------------------------
    @abc.abstractmethod
    def params(self) -> dict[str, Any]:
        """Constructor arguments (JSON values) that rebuild this randomizer:
        ``type(self).from_params(self.params()) == self``."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "LocalRandomizer":
        """Rebuild from ``params()`` (untrusted: the constructor validates every value).

        Parameters
        ----------
        params : mapping of str to value
            The ``params()`` of a randomizer of this class (untrusted).
        """
        if not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params):
            raise TypeError(f"{cls.name}: params must be a mapping of names to values")
        return cls(**params)

    def identity(self) -> tuple:
        """(name, params) as a hashable value: equal randomizers have equal identities."""
        return (self.name, _freeze(self.params()))

    def __eq__(self, other) -> bool:
        return isinstance(other, LocalRandomizer) and type(other) is type(self) \
            and other.identity() == self.identity()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.identity()))

    def describe(self) -> str:
        """One line, e.g. 'pi-rappor(k=1000, eps=4, symmetric=False, p=5563)'."""
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.params().items())
        return f"{self.name}({shown})"

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.params().items())
        return f"{type(self).__name__}({shown})"

    def _repr_html_(self) -> str:
        """What Jupyter shows: a small table of the name, parameters, eps, eps0 (the
        replacement eps shuffle accounting starts from), bits per report and the kind of
        ``shuffle_structure()``. Every string is escaped (a plug-in's names are untrusted)."""
        structure = self.shuffle_structure()
        kind = "none: the generic bound at eps0" if structure is None else type(structure).__name__
        privacy = getattr(self.privacy, "value", self.privacy)
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.params().items())
        rows = [("name", self.name), ("parameters", shown),
                ("eps", f"{D.number(self.eps)} ({privacy})"),
                ("eps0 (replacement)", self.replacement_eps),
                ("bits per report", self.bits_per_report), ("shuffle structure", kind)]
        return D.html_table(repr(self), ("", "value"), rows)

    # -- privacy -----------------------------------------------------------------------------
    @property
    def replacement_eps(self) -> float:
        """eps under the replacement relation: eps itself, or 2 eps for a deletion eps
        (a randomizer that knows better overrides this)."""
        return self.eps if self.privacy is Privacy.REPLACEMENT else 2.0 * self.eps

    # -- client ------------------------------------------------------------------------------
    @abc.abstractmethod
    def check_items(self, xs) -> np.ndarray:
        """Users' inputs as a validated array (TypeError/ValueError naming the first bad one).

        Parameters
        ----------
        xs : array_like
            The users' inputs, one per report.
        """

    def check_item(self, x):
        """One user's input, validated.

        Parameters
        ----------
        x
            One user's input.
        """
        return self.check_items(np.asarray([x]) if np.ndim(x) == 0 else np.asarray(x)[None])[0]

    @abc.abstractmethod
    def randomize_many(self, xs, entropy: Entropy = SYSTEM):
        """One report per input, coins from ``entropy`` (default os.urandom).

        Parameters
        ----------
        xs : array_like
            The users' inputs, one per report.
        entropy : Entropy, default os.urandom
            The source of coins; seeded sources (``simulation_entropy``) are for simulations only.
        """

    def randomize(self, x, entropy: Entropy = SYSTEM):
        """One report (the batch client on one input).

        Parameters
        ----------
        x
            One user's input.
        entropy : Entropy, default os.urandom
            The source of coins; seeded sources (``simulation_entropy``) are for simulations only.
        """
        return self.randomize_many(np.asarray([x]) if np.ndim(x) == 0 else np.asarray(x)[None],
                                   entropy)[0]

    # -- server ------------------------------------------------------------------------------
    @abc.abstractmethod
    def check_reports(self, reports):
        """Untrusted reports validated (dtype, shape, every field in range) and normalised.

        Parameters
        ----------
        reports
            A batch of reports as ``randomize_many`` returns them (untrusted: validated).
        """

    def n_reports(self, reports) -> int:
        """The number of reports in a validated batch.

        Parameters
        ----------
        reports
            A batch of validated reports (``check_reports``).
        """
        return len(reports)

    @abc.abstractmethod
    def summary_spec(self) -> SummarySpec:
        """Shape and dtype of ``summarize``'s result."""

    @abc.abstractmethod
    def summarize(self, reports) -> np.ndarray:
        """The additive statistic of a batch (validated inside): the summary of a union of
        batches is the sum of their summaries (frequency oracles: support counts).

        Parameters
        ----------
        reports
            A batch of reports as ``randomize_many`` returns them (untrusted: validated).
        """

    @abc.abstractmethod
    def estimate_from_summary(self, summary: np.ndarray, n: int) -> np.ndarray:
        """Unbiased estimates from the summary of n reports.

        Parameters
        ----------
        summary : numpy.ndarray
            The sum of the batches' ``summarize`` results (of ``summary_spec()``'s shape).
        n : int
            The number of reports summarised.
        """

    def estimate(self, reports) -> np.ndarray:
        """Unbiased estimates from a batch of reports (validated inside).

        Parameters
        ----------
        reports
            A batch of reports as ``randomize_many`` returns them (untrusted: validated).
        """
        reports = self.check_reports(reports)
        return self.estimate_from_summary(self.summarize(reports), self.n_reports(reports))

    def summary_cost(self, n: int, batch: int | None = None, *, seeds: bool = False) -> Cost:
        """What summarising n reports costs, stated before any is read: a ``cost.Cost`` of
        ``operations`` (weighted steps, about ns of one core: ``cost``'s weights) and
        ``peak_bytes``, the most this randomizer holds at once while summarising one call of
        at most ``batch`` reports (None: all n): its working arrays, decode buffers, per-chunk
        tables and result, not the validated batch handed to it (the reader counts that).
        ``seeds=True``: the same for ``summarize_seeds`` on n seeds of compressed reports.

        The server refuses a report set whose cost exceeds its limits (docs/guide.md, section
        3, "What aggregation may spend"), so the figure must be an upper bound: a randomizer
        whose summary does more work than this default assumes must override it, derived from
        its own algorithm. The default assumes a linear, dense summary: every report touches
        each of its stored values a few times and each summary entry once (a sum or counts),
        each call fills one summary per kernel chunk; seeds are decoded by the slow
        per-seed default (Python).

        Parameters
        ----------
        n : int
            The number of reports (or seeds) to summarise.
        batch : int, optional
            The most reports handed to one ``summarize`` call (None: all n at once).
        seeds : bool, default False
            State the cost of ``summarize_seeds`` on n seeds instead.
        """
        from .base import chunks_for
        n, b, calls = C.cost_args(n, batch)
        spec = self.summary_spec()
        entries = C.entries_of(spec.shape)
        size = entries * np.dtype(spec.dtype).itemsize
        values = sum(c.width for c in self.report_columns())
        chunks = chunks_for(b, entries)
        per_report = values * 4 * C.SIMPLE + entries * C.walk(C.SIMPLE, size) \
            + (C.PY_SEED if seeds else 0.0)
        ops = n * per_report + calls * (C.CALL + entries * (chunks + 2) * C.SIMPLE)
        peak = b * (values * 8 * 3 + (256 if seeds else 0)) + size * (chunks + 2)
        return Cost(ops, peak, f"n x (stored values + summary entries) = {n} x ({values} + "
                               f"{entries}) steps (the contract's default)")

    @abc.abstractmethod
    def intervals(self, est, n: int, level: float = 0.95,
                  conservative: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Per-entry confidence intervals of ``est`` from n reports at ``level``.

        Parameters
        ----------
        est : numpy.ndarray
            Estimates from ``estimate`` or ``estimate_from_summary``.
        n : int
            The number of reports they come from.
        level : float, default 0.95
            The confidence level, in (0, 1).
        conservative : bool, default False
            Use the variance bound that holds for every input distribution instead of the plug-in
            one.
        """

    def to_frame(self, est, n: int, level: float = 0.95, names=None):
        """``est`` (from n reports) with its confidence intervals at ``level`` as a pandas
        DataFrame: columns estimate, low, high, indexed by item or by ``names`` (an
        ItemDomain or a list). pandas is optional: ImportError names it.

        Parameters
        ----------
        est : numpy.ndarray
            Estimates from ``estimate`` or ``estimate_from_summary``.
        n : int
            The number of reports they come from.
        level : float, default 0.95
            The confidence level, in (0, 1).
        names : ItemDomain or list of str, optional
            A name per entry, for the index.
        """
        from ..core.display import estimates_frame
        return estimates_frame(self, est, n, level, names)

    # -- storage -----------------------------------------------------------------------------
    @abc.abstractmethod
    def report_columns(self) -> tuple[Column, ...]:
        """How a batch of reports is stored: its columns."""

    @abc.abstractmethod
    def to_columns(self, reports) -> dict[str, np.ndarray]:
        """The validated reports as arrays matching ``report_columns()``.

        Parameters
        ----------
        reports
            A batch of validated reports (``check_reports``).
        """

    @abc.abstractmethod
    def from_columns(self, columns: Mapping[str, np.ndarray]):
        """Untrusted stored columns back to validated reports (errors name the first bad one).

        Parameters
        ----------
        columns : mapping of str to numpy.ndarray
            Stored columns (untrusted), named as ``report_columns()``.
        """

    def concat(self, batches: list):
        """One batch from several (validated ones).

        Parameters
        ----------
        batches : list
            Validated report batches (an empty list gives an empty batch).
        """
        return np.concatenate(batches) if batches else self.from_columns(
            {c.name: np.zeros((0, c.width) if c.width > 1 else 0, dtype=c.dtype)
             for c in self.report_columns()})

    # -- compression (FT21 Alg. 1) -----------------------------------------------------------
    def compression_refusal(self) -> str | None:
        """Why ``compress()`` refuses this randomizer, or None when it accepts it: FT21
        Alg. 1 needs a reference law with a deterministic sampler (``sample``), the density
        ratio (``ratio``) and a finite deletion eps w.r.t. that law."""
        own = type(self)
        if own.sample is LocalRandomizer.sample or own.ratio is LocalRandomizer.ratio:
            return (f"{self.name} states no reference sampler and density ratio "
                    "(sample, ratio), which rejection sampling needs")
        if self.deletion_eps is None or not (0 < self.deletion_eps < math.inf):
            return f"{self.name} has no finite deletion eps w.r.t. its reference law"
        return None

    def sample(self, prg: PRG):
        """One output y ~ rho (the reference law) from the PRG stream.

        Parameters
        ----------
        prg : PRG
            The AES-CTR stream of one seed.
        """
        raise NotImplementedError(f"{self.name} has no reference sampler")

    def decode_seed(self, seed: bytes):
        """The output a compressed report's seed stands for: sample(G(seed)).

        Parameters
        ----------
        seed : bytes
            The 16-byte seed of a compressed report.
        """
        return self.sample(PRG(seed))

    def ratio(self, x, y) -> float:
        """R(x)(y) / rho(y).

        Parameters
        ----------
        x
            One user's input.
        y
            One output of the randomizer.
        """
        raise NotImplementedError(f"{self.name} has no density ratio")

    def ratio_from_seed(self, x, seed: bytes) -> float:
        """ratio(x, decode_seed(seed)); subclasses may compute it without the whole output.

        Parameters
        ----------
        x
            One user's input.
        seed : bytes
            The 16-byte seed of a compressed report.
        """
        return self.ratio(x, self.decode_seed(seed))

    def ratio_bounds(self) -> tuple[float, float] | None:
        """(min, max) of the ratio over all inputs and outputs, when known."""
        return None

    def ratios_from_seeds(self, xs, seeds) -> np.ndarray:
        """ratio(x_i, decode_seed(seed_i)) for a batch (slow default: one at a time).

        Parameters
        ----------
        xs : array_like
            The users' inputs, one per report.
        seeds : sequence of bytes or numpy.ndarray
            16-byte seeds of compressed reports (a list of bytes or an (n, 16) uint8 array).
        """
        seeds = seeds_array(seeds)
        paired(xs, seeds)
        return np.array([self.ratio_from_seed(self.check_item(x), bytes(s))
                         for x, s in zip(xs, seeds)], dtype=float)

    def decode_seeds(self, seeds):
        """The outputs of a batch of seeds as one report batch (slow default).

        Parameters
        ----------
        seeds : sequence of bytes or numpy.ndarray
            16-byte seeds of compressed reports (a list of bytes or an (n, 16) uint8 array).
        """
        seeds = seeds_array(seeds)
        outs = [self.decode_seed(bytes(s)) for s in seeds]
        return self.check_reports(np.asarray(outs)) if outs else self.concat([])

    def summarize_seeds(self, seeds) -> np.ndarray:
        """summarize() of the outputs a batch of seeds stands for (slow default).

        Parameters
        ----------
        seeds : sequence of bytes or numpy.ndarray
            16-byte seeds of compressed reports (a list of bytes or an (n, 16) uint8 array).
        """
        return self.summarize(self.decode_seeds(seeds))

    # -- accounting --------------------------------------------------------------------------
    def shuffle_structure(self):
        """The blanket law of a binary-support randomizer (randomizers.structure), or None."""
        return None

    def plateau(self) -> tuple:
        """The discrete choices made from the eps parameter (bucket count, field, subset size
        ...): the realised law jumps where they change, so its privacy need not be monotone in
        the parameter across them, and inverse queries (``max_eps0``) walk them. () when there
        are none (the law is continuous in eps)."""
        return ()


def fast_hook(randomizer: LocalRandomizer, hook: str) -> bool:
    """Whether ``randomizer`` runs its own batch hook ``hook`` (e.g. "summarize_seeds"), not
    the contract's slow default (a subclass that changes a per-seed method falls back to the
    default: :class:`seed_batch`); its ``summary_cost`` must then state the default's cost."""
    return getattr(type(randomizer), hook) is not getattr(LocalRandomizer, hook)


def check_randomizer(obj, also: str = "") -> LocalRandomizer:
    """``obj`` when it is a :class:`LocalRandomizer`, else TypeError naming what was given
    (``also``: other accepted kinds, e.g. " (or a compress() result)")."""
    if not isinstance(obj, LocalRandomizer):
        raise TypeError(f"randomizer must be an ldpcompress LocalRandomizer{also}, got "
                        f"{type(obj).__name__}")
    return obj


def _freeze(value):
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _short(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else repr(value) \
        if isinstance(value, str) else str(value)
