"""The randomizer contract: what every local randomizer states, and all that the jobs use
(docs/guide.md, section 7, "Your own randomizer: the contract").

A local randomizer is the hub of the library. :class:`LocalRandomizer` is the one explicit
contract between a randomizer and the jobs; accounting, compression, estimation, report sets,
aggregation (in memory and on Dask) and the command line call only these methods, never a
randomizer's name, so a randomizer written outside the library works in every job.

The contract is five small facets; each public method checks its untrusted arguments once
and calls a private hook that receives checked ones (as scipy.stats' ``cdf`` calls ``_cdf``),
so a randomizer implements only the hooks of the jobs it wants:

==============  ================================================================================
facet           what a randomizer states (hooks in brackets) -> what the contract gives
==============  ================================================================================
Identity        ``name``, ``privacy``, ``eps``, ``bits_per_report``, ``params()`` -> equality,
                ``from_params``, ``describe``, ``replacement_eps`` (2 eps for a deletion eps)
Client          ``check_items`` [``_randomize_many(xs, entropy)``, optional ``_randomize_one``]
                -> ``randomize_many``, ``randomize``, ``check_item`` (coins from os.urandom
                by default)
Reports         ``check_reports``, ``summary_spec``, ``estimate_from_summary``, ``intervals``,
                ``report_columns`` [``_summarize``, ``_to_columns``, ``_from_columns``,
                optional ``_concat``] ->
                ``summarize`` (an additive statistic), ``estimate``, ``to_columns``,
                ``from_columns``, ``concat``, ``n_reports``, ``summary_cost(n, batch)``
ReferenceLaw    ``deletion_eps``, ``sample(prg)``, ``ratio(x, y)`` (optional fast batch hooks,
                ``reference.seed_batch``) -> ``decode_seed(s)``, ``ratio_from_seed``,
                ``ratios_from_seeds``, ``summarize_seeds``, ``compression_refusal()``
Structure       ``shuffle_structure()`` (``ShuffleStructure.of(self, a=..., ...)``), ``plateau()``
                -> accounting by the blanket law, or the generic bound at ``replacement_eps``
==============  ================================================================================

``randomizers/base.py``'s ``FrequencyOracle`` fills the Reports facet for oracles whose report
supports items: a subclass states ``k``, ``a0``, ``a1`` and the client hook; reports are the
items they support unless it states ``report_high`` (reports are integers in [0,
report_high)) and the hook ``_count(reports)`` (support counts of checked reports).
"""
from __future__ import annotations

import abc
import enum
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Mapping, cast

import numpy as np

from ..core import display as D
from ..core.entropy import SYSTEM, Entropy
from . import cost as C
from .cost import Cost
from .reference import PER_SEED, ReferenceLaw, paired, seed_batch, seeds_array

__all__ = ["Privacy", "Column", "SummarySpec", "LocalRandomizer", "check_randomizer",
           "check_columns", "int_dtype", "seeds_array", "paired", "seed_batch", "PER_SEED",
           "Cost", "fast_hook", "Identity", "Client", "Reports", "ReferenceLaw",
           "Structure"]


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


class Identity(abc.ABC):
    """Identity and privacy facet: ``name`` (class attribute), ``privacy``, ``eps`` and
    ``bits_per_report`` (instance attributes), ``params()`` (the one abstract method here)."""

    name: ClassVar[str] = ""
    privacy: Privacy
    eps: float
    bits_per_report: int

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
        return cast("LocalRandomizer", cls(**params))  # every Identity is a LocalRandomizer's

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
        structure = self.shuffle_structure()  # type: ignore[attr-defined]  # Structure's
        kind = "none: the generic bound at eps0" if structure is None else type(structure).__name__
        privacy = getattr(self.privacy, "value", self.privacy)
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.params().items())
        rows = [("name", self.name), ("parameters", shown),
                ("eps", f"{D.number(self.eps)} ({privacy})"),
                ("eps0 (replacement)", self.replacement_eps),
                ("bits per report", self.bits_per_report), ("shuffle structure", kind)]
        return D.html_table(repr(self), ("", "value"), rows)

    @property
    def replacement_eps(self) -> float:
        """eps under the replacement relation: eps itself, or 2 eps for a deletion eps
        (a randomizer that knows better overrides this)."""
        return self.eps if self.privacy is Privacy.REPLACEMENT else 2.0 * self.eps


class Client(abc.ABC):
    """Client facet: ``check_items`` (abstract) and the hook ``_randomize_many(xs, entropy)``,
    which receives items ``check_items`` passed and an :class:`Entropy`; the public
    ``randomize_many`` / ``randomize`` check once and call it."""

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

    def randomize_many(self, xs, entropy: Entropy | None = None):
        """One report per input, coins from ``entropy`` (default os.urandom): the inputs are
        checked once (``check_items``), then handed to the hook ``_randomize_many``.

        Parameters
        ----------
        xs : array_like
            The users' inputs, one per report.
        entropy : Entropy, default os.urandom
            The source of coins; seeded sources (``simulation_entropy``) are for simulations only.
        """
        entropy = self._entropy(entropy)
        return self._randomize_many(self.check_items(xs), entropy)

    def _entropy(self, entropy) -> Any:
        """Hook: the source of coins for ``entropy`` as given (None: os.urandom); TypeError
        for anything but an :class:`Entropy`."""
        if entropy is None:
            return SYSTEM
        if not isinstance(entropy, Entropy):
            raise TypeError(f"entropy must be an ldpcompress Entropy, got {type(entropy).__name__}")
        return entropy

    def _randomize_many(self, xs, entropy: Entropy):
        """Hook: one report per checked input ``xs``, coins from ``entropy``."""
        raise NotImplementedError(f"{type(self).__name__} has no client: implement "
                                  "_randomize_many(xs, entropy)")

    def randomize(self, x, entropy: Entropy | None = None):
        """One report: the input checked once (``check_item``), then the hook
        ``_randomize_one``.

        Parameters
        ----------
        x
            One user's input.
        entropy : Entropy, default os.urandom
            The source of coins; seeded sources (``simulation_entropy``) are for simulations only.
        """
        entropy = self._entropy(entropy)
        return self._randomize_one(self.check_item(x), entropy)

    def _randomize_one(self, x, entropy: Entropy):
        """Hook: one report of the checked input ``x`` (default: the batch hook on one)."""
        return self._randomize_many(np.asarray(x)[None], entropy)[0]


class Reports(abc.ABC):
    """Reports and estimator facet: ``check_reports`` (the one check of untrusted reports),
    ``summary_spec``, ``estimate_from_summary``, ``intervals``, ``report_columns`` (abstract)
    and the hooks ``_summarize(reports)``, ``_to_columns(reports)`` (both given checked
    reports) and ``_from_columns(columns)`` (given columns ``check_columns`` passed; its
    result is then checked once). The public ``summarize``, ``estimate``, ``to_columns``,
    ``from_columns`` check once and call them."""

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

    def summarize(self, reports) -> np.ndarray:
        """The additive statistic of a batch (validated once, then the hook ``_summarize``):
        the summary of a union of batches is the sum of their summaries (frequency oracles:
        support counts).

        Parameters
        ----------
        reports
            A batch of reports as ``randomize_many`` returns them (untrusted: validated).
        """
        return self._summarize(self.check_reports(reports))

    def _summarize(self, reports) -> np.ndarray:
        """Hook: the summary of checked reports (a class that overrides ``summarize`` itself
        is called through it)."""
        if type(self).summarize is not Reports.summarize:
            return self.summarize(reports)
        raise NotImplementedError(f"{type(self).__name__} has no server: implement "
                                  "_summarize(reports)")

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
        return self._estimate_from_summary(self._summarize(reports), self.n_reports(reports))

    def _estimate_from_summary(self, summary: np.ndarray, n: int) -> np.ndarray:
        """Hook: estimates from a summary this process computed of n checked reports (trusted:
        a class may skip ``estimate_from_summary``'s checks). Default: the public method."""
        return self.estimate_from_summary(summary, n)

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
        from .threads import chunks_for
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

    @abc.abstractmethod
    def report_columns(self) -> tuple[Column, ...]:
        """How a batch of reports is stored: its columns."""

    def to_columns(self, reports) -> dict[str, np.ndarray]:
        """The reports, validated once, as arrays matching ``report_columns()`` (the hook
        ``_to_columns``).

        Parameters
        ----------
        reports
            A batch of reports (untrusted: validated).
        """
        return self._to_columns(self.check_reports(reports))

    def _to_columns(self, reports) -> dict[str, np.ndarray]:
        """Hook: checked reports as arrays matching ``report_columns()``."""
        raise NotImplementedError(f"{type(self).__name__} has no storage: implement "
                                  "_to_columns(reports)")

    def from_columns(self, columns: Mapping[str, np.ndarray]):
        """Untrusted stored columns back to validated reports: ``check_columns``, the hook
        ``_from_columns``, then ``check_reports`` once (errors name the first bad one).

        Parameters
        ----------
        columns : mapping of str to numpy.ndarray
            Stored columns (untrusted), named as ``report_columns()``.
        """
        return self.check_reports(self._from_columns(check_columns(columns,
                                                                   self.report_columns())))

    def _from_columns(self, columns: dict[str, np.ndarray]):
        """Hook: columns of the right names, dtype kinds and shapes to one report batch
        (``check_reports`` follows)."""
        raise NotImplementedError(f"{type(self).__name__} has no storage: implement "
                                  "_from_columns(columns)")

    def concat(self, batches: list):
        """One batch from several (validated ones: not checked again).

        Parameters
        ----------
        batches : list
            Validated report batches (an empty list gives an empty batch).
        """
        if not batches:
            return self.from_columns({c.name: np.zeros((0, c.width) if c.width > 1 else 0,
                                                       dtype=c.dtype)
                                      for c in self.report_columns()})
        return self._concat(list(batches))

    def _concat(self, batches: list):
        """Hook: one batch from a non-empty list of validated batches (default: arrays joined
        along the reports)."""
        return np.concatenate(batches)


class Structure:
    """Shuffle-structure facet: ``shuffle_structure()`` (the blanket law of a binary-support
    randomizer, built with ``ShuffleStructure.of``) and ``plateau()``; defaults: None (the
    generic bound at ``replacement_eps`` applies) and ()."""

    def shuffle_structure(self):
        """The blanket law of a binary-support randomizer (randomizers.structure), or None."""
        return None

    def plateau(self) -> tuple:
        """The discrete choices made from the eps parameter (bucket count, field, subset size
        ...): the realised law jumps where they change, so its privacy need not be monotone in
        the parameter across them, and inverse queries (``max_eps0``) walk them. () when there
        are none (the law is continuous in eps)."""
        return ()


class LocalRandomizer(Structure, ReferenceLaw, Reports, Client, Identity):
    """The contract of a local randomizer: its facets (module docstring). A subclass sets
    ``name``, ``privacy``, ``eps``, ``bits_per_report``, implements ``params``,
    ``check_items``, ``check_reports``, ``summary_spec``, ``estimate_from_summary``,
    ``intervals``, ``report_columns`` and the hooks of the jobs it wants (``_randomize_many``,
    ``_summarize``, ``_to_columns``, ``_from_columns``; ``sample``, ``ratio``,
    ``deletion_eps`` for compression; ``shuffle_structure`` for its blanket)."""


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
