"""The ``ldpcompress`` parser and entry point; each command group module (``amplify``,
``accounting``, ``demo``, ``mean``, ``scale``) registers its commands."""
from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext

from ..core.limits import command_line
from ..core.progress import JitClock

__all__ = ["DESCRIPTION", "build_parser", "main"]


def one_line(message: str) -> str:
    """The message on one line: control characters (a newline or carriage return inside an
    echoed option value) are shown escaped, as Python would write them."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


DESCRIPTION = """\
Shuffle-model differential privacy: what central (eps, delta) shuffled local reports give
(amplify, compose, noise), compressed and fast frequency and mean estimation (demo, mean), and a
server for report sets of any randomizer at scale (simulate, encode, aggregate, plot;
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


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__
    from . import accounting, amplify, demo, docs, mean, plot, randomizers, scale
    parser = argparse.ArgumentParser(prog="ldpcompress", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ldpcompress {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands")
    for module in (amplify, accounting, demo, mean, scale, plot, randomizers, docs):
        module.register(sub)
    parser.set_defaults(commands=sub.choices, kernels=True)  # docs runs none: no Numba
    return parser


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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if _json_help(parser, argv):
        return 0
    args = parser.parse_args(argv)
    try:
        with command_line(), JitClock(announce=True) if args.kernels else nullcontext():
            args.func(args)  # the clock says once when kernels compile
    except (ValueError, TypeError, ImportError, OSError) as err:
        print(f"ldpcompress: error: {one_line(str(err))}", file=sys.stderr)
        return 2
    except (ArithmeticError, MemoryError) as err:  # an input beyond what was foreseen
        print(f"ldpcompress: error: {type(err).__name__}: {one_line(str(err))} (the inputs are "
              "outside the range this command handles; please report it)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
