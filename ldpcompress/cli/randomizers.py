"""Randomizers on the command line: ``--oracle NAME`` with its parameters (``--k``, ``--eps``,
``--d``, ``--symmetric`` and ``--param NAME=VALUE`` for any other), ``--compressed``,
``--plugin MODULE`` (a user's module that registers randomizers) and the ``randomizers``
command, which lists every registered name with its parameters, privacy kind and whether it
compresses. Everything goes through the registry and the randomizer contract: a randomizer
written outside the library is offered like the library's own (docs/guide.md, sections 6 and 7).
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import math
import os
import time

from ..core import limits
from ..core import validate as V
from ..randomizers import registry
from ..randomizers.contract import LocalRandomizer
from .util import Output, count, fmt, nonempty, number, positive, print_table

__all__ = ["EXAMPLE_VALUES", "load_plugins", "parse_param", "parameters", "build_randomizer",
           "check_parameters", "AccountedRandomizer", "accounted", "add_accounted_options",
           "add_plugin_option", "add_oracle_option", "add_oracle_parameters",
           "add_randomizer_options", "add_expect_options",
           "expected_randomizer", "register"]

# the values the listing builds each randomizer with, to state its privacy kind and
# compression (only where its own parameter of that name has no default)
EXAMPLE_VALUES = {"k": 16, "eps": 1.0, "d": 16, "q": 5, "lo": 0.0, "hi": 1.0, "sigma": 1.0,
                  "table": [[0.75, 0.25], [0.25, 0.75]],
                  "randomizer": {"randomizer": "krr", "params": {"k": 16, "eps": 1.0}}}
_OPTIONS = {"k": "--k", "eps": "--eps", "d": "--d", "symmetric": "--symmetric"}
_loaded: dict[str, object] = {}


def load_plugins(plugins) -> None:
    """Import each ``--plugin``: a module name (importable: Dask workers import it too) or the
    path of a .py file (loaded once; shipped to Dask workers by value). Its code runs here:
    give only your own modules."""
    for plugin in plugins or ():
        if not isinstance(plugin, str) or not plugin.strip():
            raise ValueError(f"--plugin must name a module or a .py file, got {plugin!r}")
        if plugin in _loaded:
            continue
        try:
            if plugin.endswith(".py") or os.sep in plugin:
                if not os.path.isfile(plugin):
                    raise ValueError(f"--plugin {plugin}: no such file")
                name = f"ldpcompress_plugin_{len(_loaded)}"
                spec = importlib.util.spec_from_file_location(name, plugin)
                if spec is None or spec.loader is None:
                    raise ValueError(f"--plugin {plugin}: not a Python source file")
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            else:
                module = importlib.import_module(plugin)
        except ValueError as err:
            if str(err).startswith(f"--plugin {plugin}"):
                raise
            raise ValueError(f"--plugin {plugin}: importing it failed: {err}") from None
        except Exception as err:  # the user's code: any failure is reported, named
            raise ValueError(f"--plugin {plugin}: importing it failed: "
                             f"{type(err).__name__}: {err}") from None
        _loaded[plugin] = module


def parse_param(text: str) -> tuple[str, object]:
    """'NAME=VALUE' -> (NAME, value): an integer, a number (1e6, 0.5), true/false, null, a
    JSON object/list/string, or else the text itself."""
    if not isinstance(text, str) or "=" not in text or not text.split("=", 1)[0].strip():
        raise ValueError(f"--param must be NAME=VALUE, got {text!r}")
    name, raw = (part.strip() for part in text.split("=", 1))
    for parse in (lambda t: int(t.replace("_", "")), json.loads, number):
        try:
            value = parse(raw)
        except Exception:  # not of this form: try the next
            continue
        if isinstance(value, float) and not math.isfinite(value):
            break  # nan, inf: passed on as text, for the constructor to refuse by name
        return name, value
    return name, raw


def parameters(cls: type) -> list[inspect.Parameter] | None:
    """The constructor parameters a randomizer is built with (None: any keyword)."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return [p for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _option(name: str) -> str:
    return _OPTIONS.get(name, f"--param {name}=VALUE")


def _given_options(args, first: dict) -> dict:
    """``first``, then --k, --d, --symmetric and each --param NAME=VALUE as constructor
    parameters, checked under their own option names (a parameter given twice is refused)."""
    given: dict[str, object] = dict(first)
    if getattr(args, "k", None) is not None:
        given["k"] = count(args.k, "--k", 2, V.MAX_K)
    if getattr(args, "d", None) is not None:
        given["d"] = count(args.d, "--d", 1, 1 << 20)
    if getattr(args, "symmetric", False):
        given["symmetric"] = True
    for text in getattr(args, "param", None) or ():
        name, value = parse_param(text)
        if name in given:
            raise ValueError(f"--param {name}: given twice (also as {_option(name)})")
        given[name] = value
    return given


def build_randomizer(args, eps_default: float | None = None,
                     client: bool = True) -> LocalRandomizer:
    """The randomizer of ``--oracle`` with the parameters given (checked against its
    constructor: an unknown or missing one is named), wrapped by ``--compressed``
    (``client``: refused when its clients' expected trials exceed the limit; a server
    reading their reports does not run them)."""
    load_plugins(getattr(args, "plugin", None))
    cls = registry.lookup(args.oracle)
    given = _given_options(args, {} if args.eps is None else {"eps": positive(args.eps, "--eps")})
    params = parameters(cls)
    if params is not None and "eps" not in given and eps_default is not None \
            and "eps" in [p.name for p in params]:
        given["eps"] = eps_default
    check_parameters(args.oracle, params, given)
    randomizer = registry.build(args.oracle, given, f"--oracle {args.oracle}")
    args.given_params = given  # as validated, for --json's params
    if getattr(args, "compressed", False):
        from ..compression.compressed import CompressedRandomizer
        try:
            randomizer = CompressedRandomizer(randomizer)
        except ValueError as err:
            raise ValueError(f"--compressed: {err}") from None
        trials = randomizer.expected_trials
        if client and trials > limits.MAX_EXPECTED_TRIALS:  # FT21 Alg. 1: e^eps_d trials per report
            raise ValueError(f"--compressed: {randomizer.inner.describe()} needs e^eps_d = "
                             f"{trials:.4g} expected trials per report (deletion eps_d = "
                             f"{randomizer.eps_d:.4g}), above the limit of "
                             f"{limits.MAX_EXPECTED_TRIALS:.4g}: use a smaller --eps")
    return randomizer


def check_parameters(name: str, params: list[inspect.Parameter] | None, given: dict) -> None:
    """Every given parameter is one of the constructor's and none it needs is missing (each
    named with its option); ``params`` None: the constructor takes any keyword."""
    if params is None:
        return
    names = [p.name for p in params]
    for key in given:
        if key not in names:
            raise ValueError(f"{_option(key).split('=')[0]}: --oracle {name} takes no parameter "
                             f"{key!r} (its parameters: {', '.join(names) or 'none'})")
    missing = [p.name for p in params if p.default is p.empty and p.name not in given]
    if missing:
        raise ValueError(f"--oracle {name} needs {', '.join(map(_option, missing))} "
                         f"(its parameter{'s' if len(missing) > 1 else ''} {', '.join(missing)})")


class AccountedRandomizer:
    """``eps0 -> randomizer`` for the accounting commands (amplify, compose, plot
    amplification): ``--oracle NAME`` (any registered randomizer, ``--plugin`` ones included)
    built with ``--k``, ``--d``, ``--symmetric`` and ``--param``, its ``eps`` parameter set to
    ``--eps0``. ``takes_eps`` is False for a randomizer without one (gaussian-scalar: its
    noise scale is a --param, and it has no eps0); ``params`` are the parameters as checked."""

    def __init__(self, args):
        load_plugins(getattr(args, "plugin", None))
        self.name = args.oracle
        self.cls = registry.lookup(args.oracle)
        given = _given_options(args, {})
        if "eps" in given:
            raise ValueError("--param eps: the randomizer's eps is --eps0 here")
        self.params = given
        self._signature = parameters(self.cls)
        self.takes_eps = self._signature is None or "eps" in [p.name for p in self._signature]

    def __call__(self, eps0: float | None) -> LocalRandomizer:
        given = dict(self.params)
        if eps0 is not None:
            if not self.takes_eps:
                raise ValueError(f"--eps0: --oracle {self.name} has no eps parameter (its "
                                 f"parameters: {', '.join(self._names())}); omit --eps0")
            given["eps"] = eps0
        elif self.takes_eps:
            raise ValueError(f"--oracle {self.name} needs --eps0 (its eps parameter)")
        check_parameters(self.name, self._signature, given)
        return registry.build(self.name, given, f"--oracle {self.name}")

    def _names(self) -> list[str]:
        return [p.name for p in self._signature or ()]


def _refuse_without_oracle(described: list[str]) -> None:
    """Options that describe the randomizer of --oracle, given without it: refused, not ignored."""
    if described:
        raise ValueError(f"{', '.join(described)} describe{'s' if len(described) == 1 else ''} "
                         "the randomizer of --oracle: give --oracle NAME too")


def accounted(args) -> AccountedRandomizer | None:
    """The --oracle randomizer of an accounting command, or None without --oracle (then
    --d, --symmetric and --param, which describe it, are refused rather than ignored)."""
    if args.oracle is None:
        _refuse_without_oracle([opt for opt, given in (("--d", args.d is not None),
                                                       ("--symmetric", args.symmetric),
                                                       ("--param", bool(args.param))) if given])
        return None
    return AccountedRandomizer(args)


def add_oracle_option(parser, help: str, default: str | None = None) -> None:
    """--oracle NAME, declared alike by every command that names a randomizer: what differs
    is its default (None: no randomizer unless given) and the help sentence, which says what
    the command does with it and whether 'best' is accepted (the command resolves 'best')."""
    parser.add_argument("--oracle", default=default, metavar="NAME", help=help)


def add_oracle_parameters(parser, d_help: str, symmetric_help: str, param_help: str) -> None:
    """--d, --symmetric and --param NAME=VALUE: the constructor parameters of --oracle NAME
    besides k and eps (parsed by :func:`build_randomizer` and :class:`AccountedRandomizer`);
    each command says in its help what they mean there."""
    parser.add_argument("--d", type=number, help=d_help)
    parser.add_argument("--symmetric", action="store_true", help=symmetric_help)
    parser.add_argument("--param", action="append", metavar="NAME=VALUE", help=param_help)


def add_accounted_options(parser, plugin: bool = True, oracle_help: str | None = None) -> None:
    """--oracle NAME with --d, --symmetric, --param (and --plugin unless the command has it)
    for the accounting commands (--k and --eps0 are theirs already)."""
    add_oracle_option(parser, oracle_help or "account the shuffled reports of this randomizer "
                      "(any registered name, 'ldpcompress randomizers' lists them) by its own "
                      "bound (its blanket) and exact attack, built with --eps0 as its eps and "
                      "--k, --d, --symmetric, --param")
    add_oracle_parameters(parser, "with --oracle: its dimension (privunit2)",
                          "with --oracle: its symmetric variant (pi-rappor)",
                          "with --oracle: any other constructor parameter (repeatable), "
                          "e.g. lo=0, hi=1, sigma=2")
    if plugin:
        add_plugin_option(parser)


def add_expect_options(parser) -> None:
    """The randomizer a server expects (``aggregate``): --oracle NAME with its parameters
    (--k, --eps, --d, --symmetric, --param, --compressed), or a saved ledger's round
    (--expect-ledger FILE --round I)."""
    add_oracle_option(parser, "the randomizer the reports must be of (any registered name) "
                      "with --k, --eps, --d, --symmetric, --param NAME=VALUE, --compressed: a "
                      "set whose manifest records another is refused, naming both")
    parser.add_argument("--k", type=number, help="with --oracle: its number of items")
    parser.add_argument("--eps", type=number, help="with --oracle: its eps parameter")
    add_oracle_parameters(parser, "with --oracle: its dimension",
                          "with --oracle: its symmetric variant",
                          "with --oracle: any other constructor parameter (repeatable)")
    parser.add_argument("--compressed", action="store_true",
                        help="with --oracle: 17-byte seed reports of it (FT21 Alg. 1)")
    parser.add_argument("--expect-ledger", metavar="FILE",
                        help="expect the randomizer of a round of this saved ledger (with "
                             "--round) instead of --oracle")
    parser.add_argument("--round", type=number, metavar="I",
                        help="with --expect-ledger: the ledger's event I, counting from 0 as "
                             "the ledger lists them (-1: the last)")


def expected_randomizer(args) -> LocalRandomizer | None:
    """The randomizer of :func:`add_expect_options`, or None when none is given (options that
    describe one without --oracle or --expect-ledger are refused, not ignored)."""
    described = [opt for opt, given in (
        ("--k", args.k is not None), ("--eps", args.eps is not None), ("--d", args.d is not None),
        ("--symmetric", args.symmetric), ("--param", bool(args.param)),
        ("--compressed", args.compressed)) if given]
    if args.expect_ledger is not None:
        if args.oracle is not None or described:
            raise ValueError("--expect-ledger takes the randomizer from the ledger: give it "
                             f"without {', '.join(['--oracle'] * (args.oracle is not None) + described)}")
        if args.round is None:
            raise ValueError("--expect-ledger needs --round I (the ledger's event, from 0)")
        from ..accounting.events import EVENTS
        from ..accounting.state import round_randomizer
        path = nonempty(args.expect_ledger, "--expect-ledger")
        index = count(args.round, "--round", -(1 << 31), 1 << 31)
        try:
            return round_randomizer(path, index, EVENTS)
        except ValueError as err:
            raise ValueError(f"--expect-ledger {err}") from None
    if args.round is not None:
        raise ValueError("--round names a round of --expect-ledger FILE: give that too")
    if args.oracle is None:
        _refuse_without_oracle(described)
        return None
    return build_randomizer(args, client=False)


def add_plugin_option(parser) -> None:
    parser.add_argument("--plugin", action="append", metavar="MODULE",
                        help="import MODULE (a module name or a .py file) first: your own "
                             "randomizers, registered with ldpcompress.randomizers.register "
                             "(repeatable; its code runs: give only your own)")


def add_randomizer_options(parser, eps_default: float | None) -> None:
    add_oracle_option(parser, "the randomizer, by registered name (default pi-rappor; "
                      "'ldpcompress randomizers' lists them)", default="pi-rappor")
    parser.add_argument("--k", type=number, help="its number of items (items 0 .. k-1)")
    parser.add_argument("--eps", type=number,
                        help="its eps parameter, e.g. from 'amplify --inverse --oracle NAME'"
                             + ("" if eps_default is None else f" (default {eps_default:g})"))
    add_oracle_parameters(parser, "its dimension (mean estimation: privunit2)",
                          "its symmetric (deletion DP) variant: pi-rappor, rappor, "
                          "pi-rappor-vector",
                          "any other constructor parameter (repeatable), e.g. q=11, p0=0.6 "
                          "(integers, numbers, true/false or JSON)")
    parser.add_argument("--compressed", action="store_true",
                        help="write 17-byte seed reports of the randomizer (FT21 Alg. 1) "
                             "instead of its own reports")
    add_plugin_option(parser)


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
