"""An accountant's state as JSON (dp_accounting's DpEvents are read in ``interop``).

Long-running telemetry keeps one ledger per population: ``save``/``load`` write and read the
recorded (event, times) pairs and the accountant's settings, so the next round's query
composes everything spent so far. The file is untrusted on reading: its format name and
version, every key, every event type (a closed list) and every parameter are checked, and the
events are rebuilt through their own constructors (which validate their ranges). Floats are
written with full precision (JSON floats round-trip exactly); fractions as "p/q" strings.
The accountant passes its class and its registry of event classes (``events.EVENTS``), so
this module depends on nothing above it.

    acct.save("ledger.json");  acct = Accountant.load("ledger.json")   # (methods of Accountant)
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import stat
import tempfile
from fractions import Fraction

from ..randomizers.structure import ShuffleStructure

__all__ = ["FORMAT", "VERSION", "to_state", "from_state", "dumps", "loads", "save", "load"]

FORMAT, VERSION = "ldpcompress.accountant", 1
SETTINGS = ("h", "max_size", "orders", "gap")
MAX_STATE_BYTES = 64 * 2 ** 20  # a ledger is small; refuse anything larger before parsing


def _encode(value):
    if isinstance(value, ShuffleStructure):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
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


def save(acct, path) -> None:
    """Write the state to ``path`` atomically: a new temporary file in the same directory,
    flushed to disk, then renamed over it (readers see the old or the new ledger, never part
    of one; concurrent writers do not share the temporary file)."""
    text = dumps(acct)
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ledger-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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


def _fraction(text, where: str) -> Fraction:
    if not isinstance(text, str) or text.count("/") != 1:
        raise ValueError(f"{where} must be a fraction string 'p/q', got {text!r}")
    num, den = text.split("/")
    if not (num.lstrip("-").isdigit() and den.isdigit()) or int(den) == 0 \
            or len(num) + len(den) > 20000:
        raise ValueError(f"{where} must be a fraction string 'p/q', got {text[:40]!r}")
    return Fraction(int(num), int(den))


def _structure(obj, where: str) -> ShuffleStructure:
    names = [f.name for f in dataclasses.fields(ShuffleStructure)]
    obj = _keys(obj, where, tuple(names))
    params = obj["params"]
    if not (isinstance(params, list) and all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
            and isinstance(p[1], (int, float, bool)) for p in params)):
        raise ValueError(f"{where}.params must be a list of [name, number] pairs")
    items = obj["attack_items"]
    if not (isinstance(items, list) and len(items) == 3
            and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in items)):
        raise ValueError(f"{where}.attack_items must be three item indices")
    if not isinstance(obj["oracle"], str) or not isinstance(obj["independent"], bool):
        raise ValueError(f"{where}: 'oracle' must be a string and 'independent' a boolean")
    t3 = None if obj["t3"] is None else _fraction(obj["t3"], f"{where}.t3")
    return ShuffleStructure(obj["oracle"], tuple(tuple(p) for p in params),
                            *(_fraction(obj[k], f"{where}.{k}") for k in ("a", "a1", "p11", "p10")),
                            obj["independent"], t3, tuple(items))


def _event(obj, where: str, events: dict):
    if not isinstance(obj, dict) or obj.get("event") not in events:
        got = obj.get("event") if isinstance(obj, dict) else obj
        raise ValueError(f"{where}: 'event' must be one of {sorted(events)}, got {got!r}")
    cls = events[obj["event"]]
    fields = dataclasses.fields(cls)
    required = tuple(f.name for f in fields if f.default is dataclasses.MISSING)
    optional = tuple(f.name for f in fields if f.default is not dataclasses.MISSING)
    obj = _keys(obj, where, ("event", "times") + required, optional)
    kwargs = {}
    for f in fields:
        if f.name not in obj:
            continue
        value = obj[f.name]
        if f.name == "oracle":
            value = _structure(value, f"{where}.oracle")
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
    if state["format"] != FORMAT or state["version"] != VERSION:
        raise ValueError(f"not an accountant state of this library: format {state['format']!r} "
                         f"version {state['version']!r} (expected {FORMAT!r} version {VERSION})")
    settings = _keys(state["settings"], "settings", SETTINGS)
    acct = accountant_cls(h=settings["h"], max_size=settings["max_size"],
                        orders=settings["orders"], gap=settings["gap"])
    if not isinstance(state["events"], list):
        raise ValueError("events must be a JSON list")
    for i, obj in enumerate(state["events"]):
        event, times = _event(obj, f"events[{i}]", events)
        acct.compose(event, times)
    return acct


def loads(text: str, accountant_cls, events: dict):
    if len(text) > MAX_STATE_BYTES:
        raise ValueError(f"an accountant state is at most {MAX_STATE_BYTES} bytes, got {len(text)}")
    try:
        state = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ValueError(f"accountant state is not valid JSON: {err}") from None
    return from_state(state, accountant_cls, events)


def _no_constant(name):
    raise ValueError(f"accountant state holds {name}, which is not a number")


def load(path, accountant_cls, events: dict):
    """Read an accountant saved by :func:`save` (errors name the file). Only a regular file is
    opened: a FIFO or a device would block or never end."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError(f"{path}: an accountant state must be a regular file")
    size = os.path.getsize(path)
    if size > MAX_STATE_BYTES:
        raise ValueError(f"{path}: an accountant state is at most {MAX_STATE_BYTES} bytes, "
                         f"the file has {size}")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        return loads(text, accountant_cls, events)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
