"""The ``ldpcompress`` parser and entry point; each command group module (``amplify``,
``accounting``, ``demo``, ``mean``, ``scale``) registers its commands."""
from __future__ import annotations

import argparse
import io
import sys
import traceback
from contextlib import nullcontext, redirect_stdout
from typing import NoReturn

from ..core.limits import command_line
from ..core.progress import JitClock
from .util import JSON_HELP

__all__ = ["DESCRIPTION", "UsageError", "build_parser", "main"]


def one_line(message: str) -> str:
    """The message on one line: control characters (a newline or carriage return inside an
    echoed option value) are shown escaped, as Python would write them."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


DESCRIPTION = """\
Shuffle-model differential privacy: what central (eps, delta) shuffled local reports give
(amplify, compose, noise), compressed and fast frequency and mean estimation (demo, mean), and a
server for report sets of any randomizer at scale (simulate, encode, aggregate, shuffle, plot;
'randomizers' lists them). Every command takes --json
(one schema: command, version, params, results, timings). The mathematics and its sources are in
docs/theory.md, usage in docs/guide.md; both are installed with the package: 'docs/theory.md
§2.5' is 'ldpcompress docs theory --section 2.5'."""

EPILOG = """\
examples:
  ldpcompress demo
  ldpcompress amplify --n 1e6 --eps0 4 --delta 1e-6 --oracle pi-rappor --k 1000
  ldpcompress amplify --inverse --n 1e5 --eps 1 --delta 1e-6
  ldpcompress compose --n 1e6 --eps0 1 --rounds 1e4 --delta 1e-6
  ldpcompress docs theory --section 2.5"""


class UsageError(Exception):
    """A command line argparse cannot parse: raised by the parser (instead of printing and
    exiting), so that :func:`main` reports it like any error (as JSON under --json)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str):
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are raised as :class:`UsageError` (the command
    parsers are of the same class: add_subparsers makes them so)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__
    from . import (accounting, amplify, demo, docs, heavy, mean, plan, plot, randomizers,
                   scale)
    parser = _Parser(prog="ldpcompress", description=DESCRIPTION, epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ldpcompress {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands")
    for module in (amplify, accounting, plan, heavy, demo, mean, scale, plot, randomizers,
                   docs):
        module.register(sub)
    for command in _leaves(parser):  # the one --json of every command, after its own options
        if "--json" not in command._option_string_actions:  # (a command may still declare it)
            command.add_argument("--json", action="store_true", help=JSON_HELP)
    parser.set_defaults(commands=sub.choices, kernels=True)  # docs runs none: no Numba
    return parser


def _leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that run a command (those without subcommands), in registration order."""
    if parser._subparsers is None:
        return [parser]
    return [leaf for action in parser._subparsers._group_actions
            if isinstance(action.choices, dict)
            for child in action.choices.values() for leaf in _leaves(child)]


def _options(argv: list[str]) -> list[str]:
    """The tokens that can be options: those before a lone '--'."""
    return argv[:argv.index("--")] if "--" in argv else argv


def _json_help(parser: argparse.ArgumentParser, argv: list[str]) -> bool:
    """``COMMAND --help --json``: the command's help as the one --json schema (results.help),
    not as text; True when it was printed."""
    if "--json" not in argv or not ({"-h", "--help"} & set(argv)):
        return False
    from .util import emit_json
    commands = parser.get_default("commands")
    name = next((a for a in argv if a in commands), None)
    target = commands[name] if name is not None else parser
    emit_json(name or "ldpcompress", {}, dict(usage=target.format_usage().strip(),
                                              help=target.format_help()))
    return True


def _failed(command: str, message: str, code: int, kind: str, json_out: bool,
            prog: str = "ldpcompress") -> int:
    """Report a failure: one line on stderr and, under --json, one JSON object on stdout (the
    usual envelope with ``error``: the message, the exit code and the kind of error)."""
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    if json_out:
        from .util import dump_json, envelope
        doc = envelope(command, {}, {}, {})
        doc["error"] = dict(message=one_line(message), exit_code=code, type=kind)
        print(dump_json(doc))
    return code


def main(argv: list[str] | None = None) -> int:
    """Run the ``ldpcompress`` command line; returns its exit status (0 done; 2 input refused,
    the reason on stderr or in the JSON envelope; 1 an unexpected error under --json).

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    json_out = "--json" in _options(argv)
    parser = build_parser()
    commands = parser.get_default("commands")
    command = next((a for a in _options(argv) if a in commands), "ldpcompress")
    if _json_help(parser, argv):
        return 0
    try:
        args = parser.parse_args(argv)
    except UsageError as err:  # as argparse reports it: the usage, then the error
        err.parser.print_usage(sys.stderr)
        return _failed(command, str(err), 2, "usage", json_out, err.parser.prog)
    stdout = io.StringIO() if json_out else None  # what the command prints, kept until it ends
    try:
        with command_line(), JitClock(announce=True) if args.kernels else nullcontext(), \
                redirect_stdout(stdout) if stdout is not None else nullcontext():
            answer = args.func(args)  # the clock says once when kernels compile
            if answer is not None:  # the one runner: text, or the --json envelope
                answer.emit(args.json)
    except (ValueError, TypeError, ImportError, OSError) as err:
        return _failed(command, str(err), 2, type(err).__name__, json_out)
    except (ArithmeticError, MemoryError) as err:  # an input beyond what was foreseen
        return _failed(command, f"{type(err).__name__}: {err} (the inputs are outside the "
                       "range this command handles; please report it)", 2, type(err).__name__,
                       json_out)
    except Exception as err:  # a bug: under --json still one JSON object, the trace on stderr
        if not json_out:
            raise
        traceback.print_exc()
        return _failed(command, f"{type(err).__name__}: {err} (unexpected: please report it "
                       "with the trace above)", 1, type(err).__name__, True)
    finally:
        _plugin_warnings(args)
    if stdout is not None:
        sys.stdout.write(stdout.getvalue())
    return 0


def _plugin_warnings(args) -> None:
    """Name on stderr each installed plug-in that failed to load during the command (the
    ``randomizers`` listing shows them itself); nothing when the registry was not used."""
    registry = sys.modules.get("ldpcompress.randomizers.registry")
    if registry is None or getattr(args, "command", None) == "randomizers":
        return
    for where, why in registry.plugin_errors().items():
        print(f"ldpcompress: warning: plug-in {where} was not loaded: {one_line(why)}",
              file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
