"""Every parser of the ``ldpcompress`` command line that runs a command (subcommands
included), by its full name: shared by the tests that walk them."""
from ldpcompress.cli import build_parser


def command_parsers():
    """(name, parser) of each command, e.g. ("heavy-hitters aggregate", its parser)."""
    def walk(parser, name):
        if parser._subparsers is None:
            yield name, parser
            return
        for action in parser._subparsers._group_actions:
            for sub, child in action.choices.items():
                yield from walk(child, f"{name} {sub}".strip())
    yield from walk(build_parser(), "")
