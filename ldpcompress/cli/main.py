"""Command line: ``ldpcompress amplify|compose|noise|demo|mean|simulate|encode|aggregate|plot``;
each command group registers its commands (``amplify``, ``accounting``, ``demo``, ``mean``,
``scale``)."""
from __future__ import annotations

import argparse
import sys

from ..core.limits import command_line

__all__ = ["build_parser", "main"]


def one_line(message: str) -> str:
    """The message on one line: control characters (a newline or carriage return inside an
    echoed option value) are shown escaped, as Python would write them."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def build_parser() -> argparse.ArgumentParser:
    from . import accounting, amplify, demo, mean, scale
    parser = argparse.ArgumentParser(prog="ldpcompress", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (amplify, accounting, demo, mean, scale):
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with command_line():
            args.func(args)
    except (ValueError, TypeError, ImportError, OSError) as err:
        print(f"ldpcompress: error: {one_line(str(err))}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
