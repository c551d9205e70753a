"""Google's dp_accounting both ways (optional extra ``[dp-accounting]``), docs/theory.md §3.2, §3.6.

* :func:`events_from_dp_event`: a DpEvent tree as (event, times) pairs the accountant composes:
  Gaussian and Laplace mechanisms (noise multiplier = sigma or scale at sensitivity 1), their
  PoissonSampledDpEvent forms (add/remove neighbours, as dp_accounting's default),
  RandomizedResponseDpEvent (as :class:`RandomizedResponse`, same noise_parameter and
  num_buckets; substitution neighbours, dp_accounting's REPLACE_ONE, which it accepts for this
  event besides REPLACE_SPECIAL, a weaker relation the REPLACE_ONE bound covers), NoOp, and
  SelfComposedDpEvent / ComposedDpEvent at any depth (walked with an explicit stack, never by
  recursion). Anything else is refused naming the event and where it sits in the tree.
  ``RandomAllocationDpEvent`` (a Gaussian or Laplace step, k of T steps, add/remove) is read
  as :class:`AllocatedGaussian` / :class:`AllocatedLaplace` when the installed dp_accounting
  has it: it landed on dp_accounting's main branch after release 0.6.0, which lacks it (then
  such events are simply unknown to it, and exporting one says so).
* :func:`to_dp_event`: a ledger back as a DpEvent tree, where every event has one.
* :func:`to_dp_accounting`: a composed PLD as dp_accounting's PrivacyLossDistribution.
* :func:`dp_event_of`: the interop backend, one event as a DpEvent (dispatch on its type; the
  events defined beside their mathematics register where they are defined).
"""
from __future__ import annotations

import functools
import math

from scipy import special

from ..core.optional import require
from .events import Event, Gaussian, Laplace, PoissonSampledGaussian, PoissonSampledLaplace, PureDP
from .pld import PLD

__all__ = ["MAX_NODES", "RANDOM_ALLOCATION", "events_from_dp_event", "to_dp_event",
           "to_dp_accounting", "dp_event_of", "supports"]

MAX_NODES = 10 ** 6  # DpEvent nodes visited in one import (a shared subtree counts each time)
_MAX_TIMES = 10 ** 9  # the accountant's own limit on composed rounds
RANDOM_ALLOCATION = "RandomAllocationDpEvent"  # not in dp_accounting 0.6.0 (main branch after it)


def _version() -> str:
    from importlib import metadata
    try:
        return metadata.version("dp-accounting")
    except metadata.PackageNotFoundError:  # imported from a source tree
        return "(version unknown)"


def _count(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}.count must be an integer >= 0, got {value!r}")
    return value


def _noise(value, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}.{name} must be a number, got {value!r}")
    if isinstance(value, int) and abs(value) > 2 ** 1000:
        raise ValueError(f"{where}.{name} must be finite and > 0, got an integer of "
                         f"{value.bit_length()} bits")
    value = float(value)
    if value == 0.0:
        raise ValueError(f"{where}.{name} = 0 adds no noise: the event is not differentially "
                         "private (eps is infinite)")
    if not (value > 0.0 and value < float("inf")):
        raise ValueError(f"{where}.{name} must be finite and > 0, got {value!r}")
    return value


def _leaf(dp, node, where: str, events: dict):
    """The accountant event of a Gaussian or Laplace DpEvent, None for NoOp."""
    if isinstance(node, dp.GaussianDpEvent):
        return events["Gaussian"](sigma=_noise(node.noise_multiplier, where, "noise_multiplier"))
    if isinstance(node, dp.LaplaceDpEvent):
        return events["Laplace"](scale=_noise(node.noise_multiplier, where, "noise_multiplier"))
    return None


def _randomized_response(node, where: str, events: dict):
    """A RandomizedResponseDpEvent as RandomizedResponse; None when it releases nothing about
    its input (one bucket, or noise_parameter = 1: a uniform output), as dp_accounting."""
    k, p = node.num_buckets, node.noise_parameter
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{where}.num_buckets must be an integer >= 1, got {k!r}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{where}.noise_parameter must be a number in [0, 1], got {p!r}")
    if k == 1 or p == 1.0:
        return None
    if p == 0.0:
        raise ValueError(f"{where}: noise_parameter = 0 releases the input: the event is not "
                         "differentially private (eps is infinite)")
    try:
        return events["RandomizedResponse"](noise_parameter=float(p), num_buckets=k)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def _sampled(dp, node, where: str, events: dict):
    """A PoissonSampledDpEvent as an event (None when q = 0: nothing is released)."""
    q = node.sampling_probability
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0.0 <= q <= 1.0:
        raise ValueError(f"{where}.sampling_probability must be in [0, 1], got {q!r}")
    inner, inner_where = node.event, f"{where}.event"
    if not isinstance(inner, (dp.GaussianDpEvent, dp.LaplaceDpEvent)):
        raise ValueError(f"{inner_where}: PoissonSampledDpEvent of {type(inner).__name__} is not "
                         "supported (only of GaussianDpEvent or LaplaceDpEvent, as dp_accounting's "
                         "PLD accountant); account it with dp_accounting itself")
    if q == 0.0:
        return None
    plain = _leaf(dp, inner, inner_where, events)
    if q == 1.0:
        return plain
    if isinstance(inner, dp.GaussianDpEvent):
        return events["PoissonSampledGaussian"](sigma=plain.sigma, q=float(q))
    return events["PoissonSampledLaplace"](scale=plain.scale, q=float(q))


def _allocated(dp, node, where: str, events: dict):
    """A RandomAllocationDpEvent (fields event, num_selected, num_steps) as an allocated event."""
    inner, inner_where = node.event, f"{where}.event"
    if not isinstance(inner, (dp.GaussianDpEvent, dp.LaplaceDpEvent)):
        raise ValueError(f"{inner_where}: {RANDOM_ALLOCATION} of {type(inner).__name__} is not "
                         "supported (only of GaussianDpEvent or LaplaceDpEvent)")
    for name in ("num_steps", "num_selected"):
        value = getattr(node, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}.{name} must be an integer, got {value!r}")
    plain = _leaf(dp, inner, inner_where, events)
    kind, scale = (("AllocatedGaussian", "sigma") if isinstance(inner, dp.GaussianDpEvent)
                   else ("AllocatedLaplace", "scale"))
    try:
        return events[kind](getattr(plain, scale), steps=node.num_steps,
                            per_record=node.num_selected)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def events_from_dp_event(dp_event, events: dict) -> list:
    """(event, times) pairs equivalent to a dp_accounting DpEvent tree, equal events merged
    (composition is commutative) in the order first met. Raises ValueError naming the
    unsupported event and its path (e.g. ``events[3].event``)."""
    dp = require("dp-accounting", "dp_accounting")
    if not isinstance(dp_event, dp.DpEvent):
        raise TypeError(f"dp_event must be a dp_accounting DpEvent, got {type(dp_event).__name__}")
    allocation = getattr(dp, RANDOM_ALLOCATION, None)  # absent from dp_accounting 0.6.0
    totals: dict = {}
    stack = [(dp_event, 1, "dp_event")]
    visited = 0
    while stack:
        node, times, where = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            raise ValueError(f"the DpEvent tree has more than {MAX_NODES} nodes (shared subtrees "
                             "count each time they appear); compose it in parts")
        if isinstance(node, dp.NoOpDpEvent):
            continue
        if isinstance(node, dp.SelfComposedDpEvent):
            count = _count(node.count, where)
            if count and times * count > _MAX_TIMES:
                raise ValueError(f"{where}: composes {times * count} mechanisms; at most "
                                 f"{_MAX_TIMES:.0e} are supported")
            if count:
                stack.append((node.event, times * count, f"{where}.event"))
            continue
        if isinstance(node, dp.ComposedDpEvent):
            children = node.events
            if not isinstance(children, (list, tuple)):
                raise ValueError(f"{where}.events must be a list of DpEvents, got "
                                 f"{type(children).__name__}")
            for i in range(len(children) - 1, -1, -1):  # kept in order when popped
                stack.append((children[i], times, f"{where}.events[{i}]"))
            continue
        if isinstance(node, dp.PoissonSampledDpEvent):
            event = _sampled(dp, node, where, events)
        elif allocation is not None and isinstance(node, allocation):
            event = _allocated(dp, node, where, events)
        elif isinstance(node, (dp.GaussianDpEvent, dp.LaplaceDpEvent)):
            event = _leaf(dp, node, where, events)
        elif isinstance(node, dp.RandomizedResponseDpEvent):
            event = _randomized_response(node, where, events)
        elif isinstance(node, dp.NonPrivateDpEvent):
            raise ValueError(f"{where}: NonPrivateDpEvent is not differentially private (eps is "
                             "infinite): nothing can be accounted")
        else:
            raise ValueError(f"{where}: {type(node).__name__} is not supported by this accountant "
                             "(it models Gaussian, Laplace, their PoissonSampledDpEvent and "
                             f"{RANDOM_ALLOCATION} forms, RandomizedResponseDpEvent and their "
                             "compositions); account it with "
                             "dp_accounting itself")
        if event is not None:
            totals[event] = totals.get(event, 0) + times
    return list(totals.items())


def to_dp_event(pairs):
    """A DpEvent tree for (event, times) pairs: ComposedDpEvent of SelfComposedDpEvents (or the
    one event). Every event must have a DpEvent (Gaussian, Laplace, their Poisson-sampled
    forms, randomized response); the error names the first that has none."""
    dp = require("dp-accounting", "dp_accounting")
    parts = []
    for i, (event, times) in enumerate(pairs):
        one = dp_event_of(event, dp)
        if one is None and getattr(event, "DP_EVENT", None) == RANDOM_ALLOCATION:
            raise ValueError(f"events[{i}] ({type(event).__name__}) is a {RANDOM_ALLOCATION}, "
                             f"which the installed dp_accounting {_version()} lacks (it was "
                             "added on dp_accounting's main branch after release 0.6.0): "
                             "install a later dp_accounting, or export the ledger's PLD "
                             "(Accountant.to_dp_accounting)")
        if one is None:
            raise ValueError(f"events[{i}] ({type(event).__name__}) has no dp_accounting DpEvent: "
                             "export the ledger's PLD instead (Accountant.to_dp_accounting)")
        parts.append(one if times == 1 else dp.SelfComposedDpEvent(one, times))
    if not parts:
        return dp.NoOpDpEvent()
    return parts[0] if len(parts) == 1 else dp.ComposedDpEvent(parts)


def to_dp_accounting(pld: PLD):
    """A dp_accounting ``PrivacyLossDistribution`` with the same grid arrays (no dicts):
    the first direction becomes ``pmf_remove``, the second (if any) ``pmf_add``. Grids with
    mean-preserving (GLW21) rounding are refused: dp_accounting would read them without the
    concentration correction, i.e. optimistically."""
    if pld.mean_steps:
        raise ValueError("a PLD with mean-preserving rounding cannot be exported: build it with "
                         "mean=False (round up) for dp_accounting")
    pld_pmf, privacy_loss_distribution = require(
        "dp-accounting", "dp_accounting.pld.pld_pmf", "dp_accounting.pld.privacy_loss_distribution")
    pmfs = [pld_pmf.DensePLDPmf(pld.h, int(d.lo), d.pmf.copy(), float(d.inf_mass + d.err),
                                pld.upper) for d in pld.dirs]
    return privacy_loss_distribution.PrivacyLossDistribution(pmfs[0], pmfs[1] if len(pmfs) > 1 else None)


# -- the interop backend: one event as a dp_accounting DpEvent ---------------------------------

@functools.singledispatch
def dp_event_of(event: Event, dp):
    """The same mechanism as a dp_accounting DpEvent, or None when it has none.

    Parameters
    ----------
    event : Event
        The mechanism.
    dp : module
        The dp_accounting module (an optional extra, imported by the caller).
    """
    return None  # no dp_accounting equivalent


def supports(event: Event) -> bool:
    """Whether the event has a dp_accounting equivalent (when the installed dp_accounting has
    its class)."""
    return dp_event_of.dispatch(type(event)) is not dp_event_of.dispatch(object)


def _gaussian_dp_event_of(event, dp):
    return dp.GaussianDpEvent(event.sigma / event.sensitivity)


dp_event_of.register(Gaussian, _gaussian_dp_event_of)


def _laplace_dp_event_of(event, dp):
    return dp.LaplaceDpEvent(event.scale / event.sensitivity)


dp_event_of.register(Laplace, _laplace_dp_event_of)


def _pure_dp_dp_event_of(event, dp):
    """Randomized response over 2 buckets, the dominating pair of eps-DP: noise parameter
    p = 2 / (e^eps + 1), rounded down (less noise: an eps at least this one's)."""
    p = math.nextafter(2.0 * float(special.expit(-event.eps)), 0.0)
    return dp.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)


dp_event_of.register(PureDP, _pure_dp_dp_event_of)


def _poisson_sampled_gaussian_dp_event_of(event, dp):
    return dp.PoissonSampledDpEvent(event.q, dp.GaussianDpEvent(event.sigma / event.sensitivity))


dp_event_of.register(PoissonSampledGaussian, _poisson_sampled_gaussian_dp_event_of)


def _poisson_sampled_laplace_dp_event_of(event, dp):
    return dp.PoissonSampledDpEvent(event.q, dp.LaplaceDpEvent(event.scale / event.sensitivity))


dp_event_of.register(PoissonSampledLaplace, _poisson_sampled_laplace_dp_event_of)

