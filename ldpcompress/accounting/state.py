"""An accountant's state as JSON (dp_accounting's DpEvents are read in ``interop``).

Long-running telemetry keeps one ledger per population: ``save``/``load`` write and read the
recorded (event, times) pairs and the accountant's settings, so the next round's query
composes everything spent so far. The file is untrusted on reading: its format name and
version, every key, every event type (a closed list) and every parameter are checked (every
field of an event is written and required, defaults included: a deleted field is never read as
its default, which could lower eps), and the events are rebuilt through their own constructors
(which validate their ranges). A randomizer (the oracle of a shuffled round) is stored as its
registry name and parameters only, ``{"randomizer": name, "params": {...}}``, and rebuilt
through ``randomizers.registry``: its law always comes from its own code, never from the file
(an edited law cannot under-report). Floats are written with full precision (JSON floats
round-trip exactly); fractions as "p/q" strings.
The accountant passes its class and its registry of event classes (``events.EVENTS``), so
this module depends on nothing above it. Usage::

    acct.save("ledger.json");  acct = Accountant.load("ledger.json")   # (methods of Accountant)
    with Accountant.ledger("ledger.json") as acct:   # locked read-modify-write
        acct.compose(event, times=10); acct.epsilon(1e-6)   # written only if this succeeds
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
from fractions import Fraction
from typing import Iterator

from ..core import locked_files as LF
from ..core.regular_files import read_regular
from ..randomizers import registry
from ..randomizers.contract import LocalRandomizer

__all__ = ["LOCK_TIMEOUT", "FORMAT", "VERSION", "to_state", "from_state", "dumps", "loads", "save", "load",
           "ledger", "round_randomizer"]

FORMAT, VERSION = "ldpcompress.accountant", 2
# version 1 stored an oracle's law (its ShuffleStructure) in the file; it is read only for
# ledgers without oracle rounds (their other events are unchanged)
READABLE_VERSIONS = (1, 2)
SETTINGS = ("h", "max_size", "orders", "gap")
LOCK_TIMEOUT = LF.LOCK_TIMEOUT  # seconds a writer waits for the ledger's lock
MAX_STATE_BYTES = 64 * 2 ** 20  # a ledger is small; refuse anything larger before parsing


def _encode(value):
    if isinstance(value, LocalRandomizer):
        return registry.spec(value)
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"cannot save a non-finite parameter {value!r}")
    return value


def to_state(acct) -> dict:
    """The accountant as a plain dict (see the module docstring for the layout)."""
    events = []
    for event, times in acct.events:
        entry = {"event": type(event).__name__, "times": times}
        entry.update({f.name: _encode(getattr(event, f.name)) for f in dataclasses.fields(event)})
        events.append(entry)
    return {"format": FORMAT, "version": VERSION,
            "settings": {"h": acct.h, "max_size": acct.max_size,
                         "orders": [float(a) for a in acct.orders], "gap": acct.gap},
            "events": events}


def dumps(acct) -> str:
    return json.dumps(to_state(acct), indent=1, allow_nan=False)


def save(acct, path, lock_timeout: float = LF.LOCK_TIMEOUT, option: str = "lock_timeout") -> None:
    """Write the state to the file ``path`` names (core/locked_files.py): through a symlink to
    its target, under the ledger's lock, atomically (a temporary file in the target's
    directory, fsynced, renamed over it: readers see the old or the new ledger, never part of
    one), keeping the target's mode; a read-only ledger is refused and left as it was."""
    LF.write_atomic(path, dumps(acct), "the ledger", lock_timeout, option)


@contextlib.contextmanager
def ledger(path, accountant_cls, events: dict, lock_timeout: float = LF.LOCK_TIMEOUT,
           option: str = "lock_timeout", **settings) -> Iterator:
    """Read-modify-write of a saved ledger that cannot lose a round: the ledger's lock is held
    for the whole block (concurrent writers queue, each sees the others' rounds); the block
    gets the saved accountant (a new one with ``settings`` when the file is absent), and the
    ledger is written when the block ends normally with events added. An exception in the
    block (a query that failed) leaves the file as it was, or absent. ``option`` names the
    setting of the timeout in a refusal."""
    with LF.exclusive(path, lock_timeout, "the ledger", option):
        existed = os.path.lexists(path)
        acct = load(path, accountant_cls, events) if existed else accountant_cls(**settings)
        before = list(acct.events)
        yield acct
        if acct.events != before:
            save(acct, path, lock_timeout, option)


# ------------------------------------------------------------------------------------------------
# Reading (untrusted)
# ------------------------------------------------------------------------------------------------

def _keys(obj, where: str, required: tuple, optional: tuple = ()) -> dict:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(obj).__name__}")
    missing = [k for k in required if k not in obj]
    extra = sorted(set(obj) - set(required) - set(optional))
    if missing or extra:
        raise ValueError(f"{where}: missing keys {missing}, unknown keys {extra}" if missing
                         and extra else f"{where}: missing keys {missing}" if missing
                         else f"{where}: unknown keys {extra}")
    return obj


def _event(obj, where: str, events: dict, version: int = VERSION):
    if not isinstance(obj, dict) or not isinstance(obj.get("event"), str) \
            or obj["event"] not in events:
        got = obj.get("event") if isinstance(obj, dict) else obj
        raise ValueError(f"{where}: 'event' must be one of {sorted(events)}, got {got!r}")
    cls = events[obj["event"]]
    fields = dataclasses.fields(cls)
    # every field, those with defaults too: both versions wrote them all, and a default read in
    # place of a deleted field (epochs, per_record, a sensitivity) could lower eps
    obj = _keys(obj, f"{where} ({obj['event']})",
                ("event", "times") + tuple(f.name for f in fields))
    kwargs = {}
    for f in fields:
        value = obj[f.name]
        if f.name == "oracle" and value is not None:
            if version == 1:
                raise ValueError(f"{where}.oracle: a version 1 ledger stored the oracle's law, "
                                 "which is no longer read from a file (a law edited in the file "
                                 "could under-report); re-create this ledger with this version")
            value = registry.check_spec(value, f"{where}.oracle")
        elif isinstance(value, list):
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                raise ValueError(f"{where}.{f.name} must be a list of numbers")
            value = tuple(value)
        elif value is not None and not isinstance(value, (int, float, str)) \
                or isinstance(value, bool):
            raise ValueError(f"{where}.{f.name} must be a number or a string, got {value!r}")
        kwargs[f.name] = value
    times = obj["times"]
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise ValueError(f"{where}.times must be an integer >= 1, got {times!r}")
    try:
        return cls(**kwargs), times
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where} ({obj['event']}): {err}") from None


def from_state(state: dict, accountant_cls, events: dict):
    """Rebuild an accountant from :func:`to_state`'s dict, checking everything."""
    state = _keys(state, "accountant state", ("format", "version", "settings", "events"))
    version = state["version"]
    if state["format"] != FORMAT or isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise ValueError(f"not an accountant state of this library: format {state['format']!r} "
                         f"version {version!r} (expected {FORMAT!r} version "
                         f"{' or '.join(map(str, READABLE_VERSIONS))})")
    settings = _keys(state["settings"], "settings", SETTINGS)
    try:
        acct = accountant_cls(h=settings["h"], max_size=settings["max_size"],
                              orders=settings["orders"], gap=settings["gap"])
    except (TypeError, ValueError) as err:
        raise ValueError(f"settings: {err}") from None
    if not isinstance(state["events"], list):
        raise ValueError("events must be a JSON list")
    for i, obj in enumerate(state["events"]):
        event, times = _event(obj, f"events[{i}]", events, version)
        acct.compose(event, times)
    return acct


def loads(text: str, accountant_cls, events: dict):
    if len(text) > MAX_STATE_BYTES:
        raise ValueError(f"an accountant state is at most {MAX_STATE_BYTES} bytes, got {len(text)}")
    try:
        state = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ValueError(f"accountant state is not valid JSON: {err}") from None
    except RecursionError:
        raise ValueError("accountant state is nested too deeply to be a ledger (JSON arrays or "
                         "objects nested thousands deep)") from None
    try:
        return from_state(state, accountant_cls, events)
    except TypeError as err:  # a value of the wrong type deep inside: never a traceback
        raise ValueError(f"accountant state holds a value of the wrong type ({err})") from None


def _no_constant(name):
    raise ValueError(f"accountant state holds {name}, which is not a number")


def load(path, accountant_cls, events: dict):
    """Read an accountant saved by :func:`save` (errors name the file)."""
    raw = read_regular(path, "an accountant state", MAX_STATE_BYTES)  # no FIFO, no device
    try:
        return loads(raw.decode("utf-8"), accountant_cls, events)
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def round_randomizer(path, index: int, events: dict) -> LocalRandomizer:
    """The randomizer of round ``index`` (``events[index]``, counting from 0; negative counts
    from the end) of the saved ledger at ``path``, rebuilt from the name and parameters the
    ledger stores (what a report-set server expects: ``aggregate --expect-ledger``). Only that
    entry is rebuilt; an entry without a randomizer (e.g. a PureDP event) is refused naming
    its type. Errors name the file."""
    raw = read_regular(path, "an accountant state", MAX_STATE_BYTES)
    try:
        state = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ValueError(f"{path}: not a saved ledger ({type(err).__name__}: "
                         f"{str(err)[:200]})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT \
            or state.get("version") not in READABLE_VERSIONS \
            or isinstance(state.get("version"), bool) or not isinstance(state.get("events"), list):
        raise ValueError(f"{path}: not an accountant state of this library (format {FORMAT!r} "
                         f"version {' or '.join(map(str, READABLE_VERSIONS))} with a list of "
                         "events)")
    entries = state["events"]
    if isinstance(index, bool) or not isinstance(index, int) \
            or not -len(entries) <= index < len(entries):
        raise ValueError(f"{path}: round {index!r} is not in the ledger, which holds "
                         f"{len(entries)} event(s): give 0 to {len(entries) - 1} (or -1 for "
                         "the last)")
    i = index % len(entries)
    obj = entries[i]
    name = obj.get("event") if isinstance(obj, dict) else None
    cls = events.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"{path}: events[{i}].event must be one of {sorted(events)}, got "
                         f"{name!r}")
    if "oracle" not in {f.name for f in dataclasses.fields(cls)}:
        raise ValueError(f"{path}: events[{i}] is a {name} event, which names no randomizer: "
                         "give the round of a randomizer (an --oracle round)")
    if state["version"] == 1:
        raise ValueError(f"{path}: events[{i}].oracle: a version 1 ledger stored the oracle's "
                         "law, which is no longer read; re-create this ledger with this version")
    if "oracle" not in obj:
        raise ValueError(f"{path}: events[{i}]: missing key 'oracle'")
    return registry.check_spec(obj["oracle"], f"{path}: events[{i}].oracle")
