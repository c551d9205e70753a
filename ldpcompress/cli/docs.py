"""CLI command ``docs``: the guide and the theory shipped with the package, whole or by section
(what "docs/theory.md §2.5" in a help text or a docstring refers to)."""
from __future__ import annotations

from .. import docs as D
from .util import Output

__all__ = ["register"]


def _contents(page: str) -> list[str]:
    """The numbered headings of a page, indented by level."""
    return [f"  {'  ' * (s.level - 2)}{s.title}" for s in D.sections(page)
            if s.number and s.level >= 2]


def _cmd_docs(args) -> Output:
    if args.page is None:
        if args.section is not None:
            raise ValueError("--section needs a page: ldpcompress docs theory --section 2.5")
        path = D.docs_path()

        def listing() -> None:
            if args.path:
                print(path)
                return
            print(f"The documentation pages installed with ldpcompress are in {path}:")
            for page in D.PAGES:
                print(f"\n{page}.md\n" + "\n".join(_contents(page)))
            print("\nldpcompress docs PAGE [--section N] prints a page or a section, e.g. "
                  "'docs/theory.md §2.5' is: ldpcompress docs theory --section 2.5")
        return Output("docs", lambda: (
            dict(page=None, section=None, path_only=args.path),
            dict(path=str(path), pages={p: str(D.page_path(p)) for p in D.PAGES}), {}), listing)
    text = D.read_page(args.page, args.section)
    path = D.page_path(args.page)
    return Output("docs", lambda: (dict(page=args.page, section=args.section,
                                        path_only=args.path), dict(path=str(path), text=text), {}),
                  lambda: print(path) if args.path else print(text, end=""))


def register(sub) -> None:
    d = sub.add_parser("docs", help="print the guide or the theory shipped with the package "
                                    "(docs/theory.md §2.5: docs theory --section 2.5)",
                       description="Print the user's guide or the theory (the mathematics and "
                       "its sources), whole or one section; they are installed with the "
                       "package. Help texts cite them as 'docs/theory.md §2.5', which is "
                       "'ldpcompress docs theory --section 2.5'. Without PAGE: where they are "
                       "and their sections.")
    d.add_argument("page", nargs="?", metavar="PAGE",
                   help="guide or theory (theory.md and docs/theory.md are accepted)")
    d.add_argument("--section", help="a section number as cited (2.5, §2.5, 7) or words of a "
                                     "heading")
    d.add_argument("--path", action="store_true", help="print only the file's (or the "
                                                       "directory's) path")
    d.set_defaults(func=_cmd_docs, kernels=False)
