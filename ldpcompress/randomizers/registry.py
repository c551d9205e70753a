"""Randomizers by name: how ledgers, report-set manifests and the command line name a
randomizer and rebuild it (docs/guide.md, section 7).

A saved ledger or a report set stores a randomizer as ``{"randomizer": name, "params": {...}}``
and nothing else: the reader rebuilds it with :func:`build`, i.e. through the randomizer's own
constructor, which validates every parameter, and the randomizer's own code derives its law.
No law read from a file is trusted. The library's randomizers are known by name
(``BUILTIN``: name -> module) and their module is imported at the first lookup of one of its
names; yours are registered with :func:`register` (a class decorator), or through the
entry-point group ``ldpcompress.randomizers`` of an installed package.

Installed plug-ins (entry points) load lazily, at the first lookup of a name that is not the
library's, or when :func:`names` lists every name, and each in isolation: one that fails to
import or to register is left out and named with its error (:func:`plugin_errors`), and the
others still load. A library name always means the library's class: a class registered under
it from another module is refused, naming both.
"""
from __future__ import annotations

import importlib
import types
from typing import Any, Mapping

from .contract import LocalRandomizer

__all__ = ["ENTRY_POINTS", "BUILTIN", "register", "names", "lookup", "plugin_errors", "build",
           "spec", "check_spec"]

ENTRY_POINTS = "ldpcompress.randomizers"
# the library's randomizers: registry name -> the module whose import registers it
BUILTIN = {
    "krr": "ldpcompress.randomizers.krr",
    "rappor": "ldpcompress.randomizers.rappor",
    "oue": "ldpcompress.randomizers.rappor",
    "subset": "ldpcompress.randomizers.subset",
    "olh": "ldpcompress.randomizers.olh",
    "hadamard": "ldpcompress.randomizers.hadamard",
    "pi-rappor": "ldpcompress.randomizers.pirappor",
    "pi-rappor-vector": "ldpcompress.randomizers.pirappor",
    "privunit2": "ldpcompress.randomizers.privunit",
    "onebit-sphere": "ldpcompress.randomizers.onebit",
    "laplace-scalar": "ldpcompress.randomizers.scalar",
    "gaussian-scalar": "ldpcompress.randomizers.scalar",
    "table": "ldpcompress.randomizers.table",
    "compressed": "ldpcompress.compression.compressed",
}
_CLASSES: dict[str, type[LocalRandomizer]] = {}
_loaded_plugins = False
_PLUGIN_ERRORS: dict[str, str] = {}  # entry point (as shown) -> why it was not loaded


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register(cls: type) -> type:
    """Register a :class:`LocalRandomizer` subclass under its ``name`` (a class decorator).
    A library name (``BUILTIN``) is the library's: a class from another module is refused
    under it. A second class under a taken name is refused, unless it is the same class
    defined again (same qualified name: a notebook cell or a module run twice, or loaded
    again from its file), which replaces it."""
    if not (isinstance(cls, type) and issubclass(cls, LocalRandomizer)):
        raise TypeError(f"only LocalRandomizer subclasses can be registered, got {cls!r}")
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise ValueError(f"{cls.__name__}.name must be a non-empty name, got {name!r}")
    if BUILTIN.get(name, cls.__module__) != cls.__module__:
        _load_builtin(name)  # a library name stays the library's
        raise ValueError(f"randomizer name {name!r} is taken by the library's "
                         f"{_qualified(_CLASSES[name])}: {_qualified(cls)} cannot replace it "
                         "(register it under another name)")
    old = _CLASSES.get(name, cls)
    if old is not cls and old.__qualname__ != cls.__qualname__:
        raise ValueError(f"randomizer name {name!r} is taken by {_qualified(old)}: "
                         f"{_qualified(cls)} cannot replace it (register it under another name)")
    _CLASSES[name] = cls
    return cls


def _load_builtin(name: str) -> None:
    """Import the library module that registers the randomizer ``name`` (once)."""
    if name not in _CLASSES:
        importlib.import_module(BUILTIN[name])


def _load_plugins() -> None:
    """Register the randomizers that installed packages declare as entry points (once), each
    in isolation: a plug-in whose import or registration fails is recorded in
    ``_PLUGIN_ERRORS`` and whatever it registered before failing is withdrawn (library
    randomizers its import brought in stay); the others load."""
    global _loaded_plugins
    if _loaded_plugins:
        return
    _loaded_plugins = True
    from importlib.metadata import entry_points
    try:
        found = list(entry_points(group=ENTRY_POINTS))
    except Exception as err:  # an installed distribution's metadata is unreadable
        _PLUGIN_ERRORS["(the installed packages' entry points)"] = _error_text(err)
        return
    for ep in found:
        _load_plugin(ep)


def _load_plugin(ep) -> None:
    """Load one entry point: a LocalRandomizer subclass (registered here) or a module whose
    import registers its randomizers."""
    dist = getattr(getattr(ep, "dist", None), "name", None)
    shown = f"{ep.name} = {ep.value}" + (f" (package {dist})" if dist else "")
    before = dict(_CLASSES)
    try:
        obj = ep.load()
        if not isinstance(obj, types.ModuleType):
            register(obj)
    except (Exception, SystemExit) as err:  # a plug-in's own code: any failure, named
        library = set(BUILTIN.values())  # imported on the way: they stay
        for name, cls in list(_CLASSES.items()):
            if before.get(name) is not cls and cls.__module__ not in library:
                del _CLASSES[name]
        _CLASSES.update({k: v for k, v in before.items() if k not in _CLASSES})
        _PLUGIN_ERRORS[shown] = _error_text(err)


def _error_text(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:500]}" if text else type(err).__name__


def plugin_errors() -> dict[str, str]:
    """The installed plug-ins (entry points) that failed to load so far, each with its error
    (empty before any plug-in was looked for: :func:`names` looks for all of them)."""
    return dict(_PLUGIN_ERRORS)


def names() -> list[str]:
    """Every registered name (the library's included, imported or not), sorted."""
    _load_plugins()
    return sorted(set(_CLASSES) | set(BUILTIN))


def lookup(name: str) -> type[LocalRandomizer]:
    """The class registered as ``name``; ValueError listing the known names."""
    if not isinstance(name, str):
        raise TypeError(f"a randomizer name must be a string, got {type(name).__name__}")
    if name in BUILTIN:
        _load_builtin(name)
    if name not in _CLASSES:
        _load_plugins()
    if name not in _CLASSES:
        known = ", ".join(names())
        broken = "".join(f"; plug-in {where} was not loaded: {why}"
                         for where, why in _PLUGIN_ERRORS.items())
        raise ValueError(f"unknown randomizer {name!r}; known: {known} (register your own with "
                         f"ldpcompress.randomizers.registry.register){broken}")
    return _CLASSES[name]


def build(name: str, params: Mapping[str, Any], where: str = "") -> LocalRandomizer:
    """The randomizer ``name`` rebuilt from ``params`` through its own constructor (the
    parameters are untrusted: every error is a ValueError naming ``where``)."""
    prefix = f"{where}: " if where else ""
    try:
        cls = lookup(name)
        if not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params):
            raise ValueError("params must be a JSON object of named values")
        return cls.from_params(params)
    except (TypeError, ValueError, OverflowError, ArithmeticError) as err:
        raise ValueError(f"{prefix}{err}") from None


def spec(randomizer: LocalRandomizer) -> dict[str, Any]:
    """``{"randomizer": name, "params": {...}}``: all a file stores of a randomizer. The
    randomizer must be registered (a file naming it could not be read back otherwise)."""
    if not isinstance(randomizer, LocalRandomizer):
        raise TypeError(f"expected a LocalRandomizer, got {type(randomizer).__name__}")
    if _CLASSES.get(randomizer.name) is not type(randomizer):
        raise ValueError(f"{type(randomizer).__name__} is not registered under its name "
                         f"{randomizer.name!r}: register it before saving it to a file")
    return {"randomizer": randomizer.name, "params": dict(randomizer.params())}


def check_spec(obj: Any, where: str) -> LocalRandomizer:
    """Rebuild a randomizer from an untrusted ``spec()`` object (e.g. parsed JSON)."""
    if not isinstance(obj, dict) or sorted(obj) != ["params", "randomizer"]:
        raise ValueError(f"{where} must be an object with exactly the keys 'randomizer' and "
                         f"'params', got {obj if not isinstance(obj, dict) else sorted(obj)!r}")
    return build(obj["randomizer"], obj["params"], where)
