"""Imports at first use, so that ``import ldpcompress`` and ``ldpcompress --help`` stay fast:
Numba (and the kernels it compiles), SciPy and the extras load only when a computation needs
them.

- :func:`lazy_module`: a stand-in for a module (``special = lazy_module("scipy.special")``)
  that imports it at the first use of one of its names; ``special.expit(x)`` is then the
  module's own function, read from the module at each use (so a name replaced in the module,
  e.g. by a test, is seen).
- :func:`lazy_exports`: the ``__getattr__`` and ``__dir__`` of a package (PEP 562) whose
  public names are defined in its submodules and imported when first asked for.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping

__all__ = ["LazyModule", "lazy_module", "lazy_exports"]


class LazyModule:
    """A module imported at the first use of one of its names (thread-safe: Python's import
    lock guards the import)."""

    def __init__(self, name: str) -> None:
        self._lazy_name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # introspection (copy, pickle, inspect) imports nothing
            raise AttributeError(attr)
        module = self.__dict__.get("_module")
        if module is None:
            module = self.__dict__["_module"] = importlib.import_module(self._lazy_name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<module {self._lazy_name!r}, imported at its first use>"


def lazy_module(name: str) -> Any:
    """A stand-in for the module ``name`` (absolute), imported at its first use."""
    return LazyModule(name)


def lazy_exports(package: str, exports: Mapping[str, str],
                 submodules: tuple[str, ...] = ()) -> tuple[Callable[[str], Any],
                                                              Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps each public name to
    the submodule (relative to the package, e.g. "accounting.events") that defines it, which
    is imported when the name is first asked for; ``submodules`` are subpackages reachable as
    attributes (``ldpcompress.accounting``) before anything imported them."""
    def __getattr__(name: str) -> Any:
        where = exports.get(name)
        if where is not None:
            value = getattr(importlib.import_module(f"{package}.{where}"), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        importlib.import_module(package).__dict__[name] = value  # later reads: no call
        return value

    def __dir__() -> list[str]:
        return sorted(set(importlib.import_module(package).__dict__) | set(exports)
                      | set(submodules))

    return __getattr__, __dir__
