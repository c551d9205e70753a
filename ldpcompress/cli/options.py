"""The options every command shares, declared once: a randomizer (``--oracle NAME`` with its
parameters ``--k``, ``--eps``/``--eps0``, ``--d``, ``--symmetric``, ``--param NAME=VALUE``,
``--compressed``, ``--plugin MODULE``), turned into one by :func:`randomizer_from_args` (the
one path from parsed options to a randomizer; what differs between commands is its keywords),
and a Dask cluster (``--scheduler``, TLS, ``--allow-insecure``, timeouts, ``--dashboard``:
:func:`add_cluster_options`). A randomizer written outside the library is offered like the
library's own (docs/guide.md, sections 6 and 7).
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import math
import os
from contextlib import contextmanager
from typing import Iterator, Literal, overload

from ..core import limits
from ..core import validate as V
from ..randomizers import registry
from ..randomizers.contract import LocalRandomizer
from .util import count, nonempty, number, positive

__all__ = ["load_plugins", "parse_param", "parameters", "check_parameters", "RandomizerArgs",
           "BestOracle", "randomizer_from_args", "expected_randomizer", "add_oracle_option",
           "add_oracle_parameters", "add_accounted_options", "add_expect_options",
           "add_plugin_option", "add_randomizer_options", "add_cluster_options",
           "cluster_limits", "cluster_access", "cluster_params", "cluster_errors",
           "report_given"]

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


class RandomizerArgs:
    """``--oracle NAME`` and its constructor parameters as one command line gives them: the
    registered class (``--plugin`` modules imported first) and the parameters of --k, --d,
    --symmetric and --param (and --eps when ``eps_option`` is "--eps"), each checked under its
    option's name; calling it with an eps builds the randomizer (its parameters checked
    against the constructor: an unknown or missing one is named). ``eps_option`` is the option
    that gives the randomizer's eps: "--eps" (given now, among ``params``) or "--eps0" (each
    eps0 the command asks about: then --param eps is refused). ``takes_eps`` is False for a
    randomizer without an eps parameter (gaussian-scalar: its noise scale is a --param)."""

    def __init__(self, args, eps_option: Literal["--eps", "--eps0"] = "--eps"):
        load_plugins(getattr(args, "plugin", None))
        self.name, self.eps_option = args.oracle, eps_option
        self.cls = registry.lookup(args.oracle)
        eps = getattr(args, "eps", None) if eps_option == "--eps" else None
        self.params = _given_options(args, {} if eps is None else {"eps": positive(eps, "--eps")})
        if eps_option != "--eps" and "eps" in self.params:
            raise ValueError(f"--param eps: the randomizer's eps is {eps_option} here")
        self.signature = parameters(self.cls)
        self.takes_eps = self.signature is None or "eps" in self._names()

    def __call__(self, eps0: float | None) -> LocalRandomizer:
        """The randomizer with ``eps0`` as its eps (None: without one), for the accounting
        commands' ``eps0 -> randomizer``."""
        given = dict(self.params)
        if eps0 is not None:
            if not self.takes_eps:
                raise ValueError(f"{self.eps_option}: --oracle {self.name} has no eps parameter "
                                 f"(its parameters: {', '.join(self._names())}); omit "
                                 f"{self.eps_option}")
            given["eps"] = eps0
        elif self.takes_eps:
            raise ValueError(f"--oracle {self.name} needs {self.eps_option} (its eps parameter)")
        return self.build(given)

    def build(self, given: dict) -> LocalRandomizer:
        """The randomizer of these constructor parameters, checked against its signature."""
        check_parameters(self.name, self.signature, given)
        return registry.build(self.name, given, f"--oracle {self.name}")

    def _names(self) -> list[str]:
        return [p.name for p in self.signature or ()]


class BestOracle:
    """``--oracle best``: the command ranks the registered frequency oracles on --k items
    itself (no randomizer is built from the options); ``params`` = {"k": k}."""
    name = "best"
    takes_eps = True

    def __init__(self, args):
        stray = [o for o, v in (("--d", args.d), ("--symmetric", args.symmetric or None),
                                ("--param", args.param)) if v]
        if stray:
            raise ValueError(f"{', '.join(stray)}: --oracle best ranks the frequency oracles "
                             "built from (--k, eps) alone")
        if args.k is None:
            raise ValueError("--oracle best needs --k (the number of items)")
        self.params = {"k": count(args.k, "--k", 2, V.MAX_K)}


@overload
def randomizer_from_args(args, *, eps_option: Literal["--eps"] = ...,
                         eps_default: float | None = ..., compressed: bool = ...,
                         client: bool = ...) -> LocalRandomizer: ...
@overload
def randomizer_from_args(args, *, eps_option: Literal["--eps0"], best: Literal[True]
                         ) -> RandomizerArgs | BestOracle: ...
@overload
def randomizer_from_args(args, *, eps_option: Literal["--eps0"], optional: bool = ...
                         ) -> RandomizerArgs | None: ...


def randomizer_from_args(args, *, eps_option: Literal["--eps", "--eps0"] = "--eps",
                         eps_default: float | None = None, compressed: bool = False,
                         client: bool = True, best: bool = False, optional: bool = False
                         ) -> LocalRandomizer | RandomizerArgs | BestOracle | None:
    """The one way every command turns its parsed options into a randomizer; what differs
    between commands is said by the keywords:

    - ``eps_option`` "--eps" (simulate, encode, aggregate's expected randomizer): the
      randomizer itself, its eps --eps or else ``eps_default`` (where its constructor has an
      eps), wrapped by ``--compressed`` when ``compressed`` (``client``: refused when its
      clients' expected trials exceed the limit; a server reading their reports runs none).
      The parameters as validated are kept in ``args.given_params`` (for --json's params).
    - ``eps_option`` "--eps0" (amplify, compose, plot amplification, plan): a
      :class:`RandomizerArgs`, ``eps0 -> randomizer``.
    - ``best``: ``--oracle best`` is accepted (plan): a :class:`BestOracle`.
    - ``optional``: without --oracle, None (--d, --symmetric and --param, which describe its
      randomizer, are then refused rather than ignored).
    """
    if optional and args.oracle is None:
        _refuse_without_oracle([opt for opt, given in (("--d", args.d is not None),
                                                       ("--symmetric", args.symmetric),
                                                       ("--param", bool(args.param))) if given])
        return None
    if best and args.oracle == "best":
        return BestOracle(args)
    family = RandomizerArgs(args, eps_option)
    if eps_option != "--eps":
        return family
    given = dict(family.params)
    if family.signature is not None and "eps" not in given and eps_default is not None \
            and family.takes_eps:
        given["eps"] = eps_default
    randomizer = family.build(given)
    args.given_params = given  # as validated, for --json's params
    if compressed and args.compressed:
        randomizer = _compressed(randomizer, client)
    return randomizer


def _compressed(randomizer: LocalRandomizer, client: bool) -> LocalRandomizer:
    """``--compressed``: 17-byte seed reports of ``randomizer`` (FT21 Alg. 1)."""
    from ..compression.compressed import CompressedRandomizer
    try:
        wrapped = CompressedRandomizer(randomizer)
    except ValueError as err:
        raise ValueError(f"--compressed: {err}") from None
    trials = wrapped.expected_trials
    if client and trials > limits.MAX_EXPECTED_TRIALS:  # FT21 Alg. 1: e^eps_d trials per report
        raise ValueError(f"--compressed: {wrapped.inner.describe()} needs e^eps_d = "
                         f"{trials:.4g} expected trials per report (deletion eps_d = "
                         f"{wrapped.eps_d:.4g}), above the limit of "
                         f"{limits.MAX_EXPECTED_TRIALS:.4g}: use a smaller --eps")
    return wrapped


def _refuse_without_oracle(described: list[str]) -> None:
    """Options that describe the randomizer of --oracle, given without it: refused, not ignored."""
    if described:
        raise ValueError(f"{', '.join(described)} describe{'s' if len(described) == 1 else ''} "
                         "the randomizer of --oracle: give --oracle NAME too")


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
    return randomizer_from_args(args, compressed=True, client=False)


def add_oracle_option(parser, help: str, default: str | None = None) -> None:
    """--oracle NAME, declared alike by every command that names a randomizer: what differs
    is its default (None: no randomizer unless given) and the help sentence, which says what
    the command does with it and whether 'best' is accepted (the command resolves 'best')."""
    parser.add_argument("--oracle", default=default, metavar="NAME", help=help)


def add_oracle_parameters(parser, d_help: str, symmetric_help: str, param_help: str) -> None:
    """--d, --symmetric and --param NAME=VALUE: the constructor parameters of --oracle NAME
    besides k and eps (parsed by :func:`randomizer_from_args`);
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


def add_cluster_options(parser, default: str, scheduler_help: str) -> None:
    """Where a report set is aggregated: --scheduler (its default and help the command's) with
    --tls-ca-file, --tls-cert, --tls-key, --allow-insecure, --retries, --worker-timeout,
    --task-timeout and --dashboard, as ``scale.distributed.aggregate`` takes them
    (:func:`cluster_limits`, :func:`cluster_access`)."""
    parser.add_argument("--scheduler", default=default, help=scheduler_help)
    parser.add_argument("--tls-ca-file", help="CA certificate (PEM) for tls://")
    parser.add_argument("--tls-cert", help="client certificate (PEM) for tls://")
    parser.add_argument("--tls-key", help="client private key (PEM) for tls://")
    parser.add_argument("--allow-insecure", action="store_true",
                        help="allow tcp:// to another host (unencrypted, unauthenticated)")
    parser.add_argument("--retries", type=number, default=3,
                        help="resubmissions of a shard whose worker died (default 3)")
    parser.add_argument("--worker-timeout", type=number, default=60.0,
                        help="seconds to wait for a live Dask worker, per try (--retries more "
                             "tries), before giving up with an error (default 60)")
    parser.add_argument("--task-timeout", type=number, default=None,
                        help="seconds a Dask run waits for the next shard to finish (a stopped "
                             "or stuck worker) before an error naming the shards at work "
                             "(default: the larger of 120 and 4 times the stated time)")
    parser.add_argument("--dashboard", default=None, metavar="HOST:PORT",
                        help="serve the Dask dashboard of a local cluster (--scheduler local or "
                             "auto) at HOST:PORT, e.g. 127.0.0.1:8787 (default: no dashboard; "
                             "another host than loopback needs --allow-insecure)")


def cluster_limits(args) -> dict:
    """--retries, --worker-timeout and --task-timeout, checked: keywords of ``aggregate``."""
    return dict(retries=count(args.retries, "--retries", 0, 100),
                worker_timeout=positive(args.worker_timeout, "--worker-timeout"),
                task_timeout=None if args.task_timeout is None else
                positive(args.task_timeout, "--task-timeout"))


def cluster_access(args) -> dict:
    """Who may run the aggregation, checked before any report set is read: the TLS files
    (--tls-ca-file and --tls-cert together), a scheduler address that would send pickled code
    in the clear to another host refused unless --allow-insecure, and the --dashboard
    address; keywords of ``aggregate`` (security, allow_insecure, dashboard)."""
    from ..scale import distributed
    security = _security(args)
    if args.scheduler not in ("auto", "memory", "local"):
        distributed.check_scheduler(args.scheduler, security, args.allow_insecure)
    try:
        distributed.check_dashboard(args.dashboard, args.allow_insecure)
    except ValueError as err:
        raise ValueError(f"--{err}") from None
    return dict(security=security, allow_insecure=args.allow_insecure, dashboard=args.dashboard)


def cluster_params(args, limits: dict) -> dict:
    """The cluster options as --json's params report them, alike in every command that takes
    :func:`add_cluster_options`: --scheduler, the TLS files' paths as given (never their
    contents), --allow-insecure, --dashboard, and --retries, --worker-timeout, --task-timeout
    as checked (``limits``: :func:`cluster_limits`)."""
    return dict(scheduler=args.scheduler, tls_ca_file=args.tls_ca_file, tls_cert=args.tls_cert,
                tls_key=args.tls_key, allow_insecure=args.allow_insecure,
                retries=limits["retries"], worker_timeout=limits["worker_timeout"],
                task_timeout=limits["task_timeout"], dashboard=args.dashboard)


def report_given(params: dict, args, names: tuple[str, ...]) -> dict:
    """``params`` (a command's --json params, often its query's own) with each option of
    ``names`` it does not hold yet, as given (lists copied; an absent option None or its
    default): every option the command accepted is reported, the checked value where the
    command already reports one."""
    for name in names:
        value = getattr(args, name)
        params.setdefault(name, list(value) if isinstance(value, (list, tuple)) else value)
    return params


def _security(args):
    from ..scale.distributed import tls_security
    for option in ("tls_ca_file", "tls_cert", "tls_key"):
        nonempty(getattr(args, option), "--" + option.replace("_", "-"))
    if args.tls_ca_file is None and args.tls_cert is None and args.tls_key is None:
        return None
    if args.tls_ca_file is None or args.tls_cert is None:
        raise ValueError("TLS needs --tls-ca-file and --tls-cert (and --tls-key unless the "
                         "certificate file holds the key)")
    return tls_security(args.tls_ca_file, args.tls_cert, args.tls_key)


@contextmanager
def cluster_errors(scheduler: str) -> Iterator[None]:
    """A cluster that cannot be used (--scheduler local or an address): a ValueError naming
    --scheduler; in this process ("auto", "memory") or a missing file, the error as raised."""
    try:
        yield
    except (OSError, TimeoutError) as err:
        if scheduler in ("auto", "memory") or isinstance(err, FileNotFoundError):
            raise
        from ..scale.distributed import ClusterError
        if isinstance(err, ClusterError):
            raise ValueError(f"--scheduler {scheduler}: {err}") from None
        raise ValueError(f"--scheduler {scheduler}: cannot use it ({err})") from None
