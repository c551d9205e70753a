"""The ``randomizers`` command: every registered name (``--plugin MODULE`` ones included) with its
parameters, privacy kind and whether ``--compressed`` takes it. The options that name a
randomizer (``--oracle NAME`` and its parameters) and the one function that builds it from
them are in cli/options.py; everything goes through the registry and the randomizer contract,
so a randomizer written outside the library is offered like the library's own (docs/guide.md,
sections 6 and 7).
"""
from __future__ import annotations

import inspect
import math
import time

from ..randomizers import registry
from .options import add_plugin_option, load_plugins, parameters
from .util import Output, fmt, print_table

__all__ = ["EXAMPLE_VALUES", "register"]

# the values the listing builds each randomizer with, to state its privacy kind and
# compression (only where its own parameter of that name has no default)
EXAMPLE_VALUES = {"k": 16, "eps": 1.0, "d": 16, "q": 5, "lo": 0.0, "hi": 1.0, "sigma": 1.0,
                  "table": [[0.75, 0.25], [0.25, 0.75]],
                  "randomizer": {"randomizer": "krr", "params": {"k": 16, "eps": 1.0}}}


def _json_value(v):
    """A default as JSON: None, a bool, an int, a string, a finite float, else its repr."""
    if v is inspect.Parameter.empty or v is None or isinstance(v, (bool, int, str)):
        return None if v is inspect.Parameter.empty else v
    return v if isinstance(v, float) and math.isfinite(v) else repr(v)


def _listing(name: str) -> dict:
    """One row of the listing: parameters, and privacy kind and compression at example
    values (EXAMPLE_VALUES for parameters without a default)."""
    cls = registry.lookup(name)
    params = parameters(cls)
    row: dict = {"name": name, "class": f"{cls.__module__}.{cls.__qualname__}",
                 "parameters": None if params is None else [
                     {"name": p.name, "default": _json_value(p.default),
                      "required": p.default is p.empty} for p in params]}
    example = {p.name: EXAMPLE_VALUES[p.name] for p in params or ()
               if p.default is p.empty and p.name in EXAMPLE_VALUES}
    row.update(example=example, privacy=None, eps=None, compresses=None, why_not=None)
    if params is None or any(p.default is p.empty and p.name not in example for p in params):
        row["why_not"] = "needs parameters the listing has no example value for"
        return row
    try:
        r = registry.build(name, example)
    except ValueError as err:
        row["why_not"] = f"cannot be built at {example}: {err}"
        return row
    refusal = r.compression_refusal()
    row.update(privacy=r.privacy.value, eps=r.eps if math.isfinite(r.eps) else None,
               compresses=refusal is None, why_not=refusal)
    return row


def _value(v) -> str:
    return fmt(v) if isinstance(v, float) else repr(v)


def _cmd_randomizers(args) -> Output:
    start = time.perf_counter()
    load_plugins(args.plugin)
    rows = [_listing(name) for name in registry.names()]
    broken = [dict(entry_point=where, error=why) for where, why in registry.plugin_errors().items()]

    def envelope() -> tuple[dict, dict, dict]:
        return (dict(plugin=args.plugin or []),
                dict(randomizers=rows, plugins_not_loaded=broken),
                dict(total=time.perf_counter() - start))

    def show() -> None:

        def shown(row):
            if row["parameters"] is None:
                return "any"
            return ", ".join(p["name"] if p["required"] else f"{p['name']}={_value(p['default'])}"
                             for p in row["parameters"])

        table = [(r["name"], shown(r), r["privacy"] or "?",
                  "yes" if r["compresses"] else f"no: {r['why_not']}") for r in rows]
        print_table(table, ("name", "parameters", "privacy", "compresses (--compressed)"))
        print("\nprivacy and compression as built with k = 16, eps = 1, d = 16, q = 5, lo = 0, "
              "hi = 1, sigma = 1 (and k-RR inside 'compressed') where a parameter has no default; "
              "use a name with --oracle NAME and its parameters (--k, --eps, --d, --symmetric, "
              "--param NAME=VALUE)")
        for row in broken:
            print(f"\nplug-in not loaded: {row['entry_point']}: {row['error']}")
    return Output("randomizers", envelope, show)


def register(sub) -> None:
    r = sub.add_parser("randomizers", help="list the registered randomizers (for --oracle)",
                       description="Every registered randomizer (the library's and those your "
                       "--plugin modules register): its constructor parameters, its privacy "
                       "kind (replacement or deletion eps) and whether --compressed takes it "
                       "(and if not, why).")
    add_plugin_option(r)
    r.set_defaults(func=_cmd_randomizers)
