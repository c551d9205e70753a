"""The command line: ``ldpcompress amplify|compose|noise|demo|mean|simulate|encode|aggregate|plot|docs``;
one module per command group (``main`` holds the parser and ``amplify``)."""
from .main import build_parser, main

__all__ = ["main", "build_parser"]
