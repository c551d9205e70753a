"""The user's guide and the theory, shipped with the package.

Docstrings and the command line cite "docs/theory.md §2.5" or "docs/guide.md §7": the two
pages are installed with the package (as ``ldpcompress/pages/``), so an installed copy can show
them without the repository: :func:`docs_path` is their directory, :func:`read_page` returns a
page or one section of it, and on the command line ``ldpcompress docs theory --section 2.5``
prints that section. The documentation site (with the API reference) is built from the same
files (README, "Documentation").
"""
from __future__ import annotations

import re
from pathlib import Path

__all__ = ["PAGES", "docs_path", "page_path", "Section", "sections", "read_page"]

PAGES = ("guide", "theory")  # docs/guide.md (how to use it), docs/theory.md (why it is sound)

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\.?(?:\s|$)")


def docs_path() -> Path:
    """The directory holding ``guide.md`` and ``theory.md``: inside the installed package, or
    the repository's ``docs/`` in a source checkout or an editable install."""
    here = Path(__file__).resolve().parent
    for place in (here / "pages", here.parent / "docs"):
        if all((place / f"{p}.md").is_file() for p in PAGES):
            return place
    raise FileNotFoundError(f"the documentation pages ({', '.join(p + '.md' for p in PAGES)}) "
                            f"are neither in {here / 'pages'} nor in {here.parent / 'docs'}: "
                            "the installation is incomplete; reinstall ldpcompress")


def _page_name(page: str) -> str:
    """'theory', 'theory.md' and 'docs/theory.md' all name the theory page."""
    if not isinstance(page, str):
        raise TypeError(f"page must be a string, one of {PAGES}, got {type(page).__name__}")
    name = page.strip().replace("\\", "/").rsplit("/", 1)[-1]
    name = name[:-3] if name.endswith(".md") else name
    if name not in PAGES:
        raise ValueError(f"page must be one of {', '.join(PAGES)}, got {page!r}")
    return name


def page_path(page: str) -> Path:
    """The file of ``page`` ('guide' or 'theory').

    Parameters
    ----------
    page : str
        'guide' or 'theory' ('theory.md' and 'docs/theory.md' name the same page).
    """
    return docs_path() / f"{_page_name(page)}.md"


class Section:
    """One heading of a page: its ``level`` (1 for '#'), ``number`` ('2.5', or '' when the
    title has none), ``title`` and the ``text`` from the heading to the next heading of the same
    or a higher level.

    Parameters
    ----------
    level : int
        The heading's level (1 for '#').
    number : str
        Its section number ('2.5'), or ''.
    title : str
        The heading's text, number included.
    text : str
        The section's text, heading included.
    """

    def __init__(self, level: int, number: str, title: str, text: str):
        self.level, self.number, self.title, self.text = level, number, title, text

    def __repr__(self) -> str:
        return f"Section({self.number or '-'}: {self.title!r}, {len(self.text)} chars)"


def sections(page: str) -> list[Section]:
    """The headings of ``page`` in order, each with its text (headings inside code blocks are
    code, not headings).

    Parameters
    ----------
    page : str
        'guide' or 'theory' ('theory.md' and 'docs/theory.md' name the same page).
    """
    lines = page_path(page).read_text(encoding="utf-8").splitlines(keepends=True)
    heads, fence = [], None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
            continue
        match = None if fence else _HEADING.match(line.rstrip("\n"))
        if match:
            heads.append((i, len(match.group(1)), match.group(2)))
    out = []
    for j, (i, level, title) in enumerate(heads):
        end = next((k for k, lv, _ in heads[j + 1:] if lv <= level), len(lines))
        number = _NUMBER.match(title)
        out.append(Section(level, number.group(1) if number else "", title,
                           "".join(lines[i:end]).rstrip() + "\n"))
    return out


def read_page(page: str, section: str | None = None) -> str:
    """The text of ``page`` ('guide' or 'theory'), or of one of its sections: ``section`` is a
    number as the docs cite it ('2.5', '§2.5', '7') or words of a heading ('contract').
    ValueError names the section and lists those the page has.

    Parameters
    ----------
    page : str
        'guide' or 'theory' ('theory.md' and 'docs/theory.md' name the same page).
    section : str, optional
        A section number ('2.5', '§2.5') or words of a heading; None: the whole page.
    """
    if section is None:
        return page_path(page).read_text(encoding="utf-8")
    if not isinstance(section, str) or not section.strip():
        raise ValueError(f"section must be a section number such as '2.5' or words of a "
                         f"heading, got {section!r}")
    heads = sections(page)
    want = section.strip().lstrip("§").strip().rstrip(".")
    found = [s for s in heads if s.number and s.number == want]
    if not found:
        found = [s for s in heads if want.lower() in s.title.lower()]
    if len(found) != 1:
        numbered = ", ".join(s.number for s in heads if s.number)
        what = "no section" if not found else f"{len(found)} sections"
        raise ValueError(f"{_page_name(page)}.md has {what} matching {section!r}; its sections "
                         f"are {numbered} (or give words of one heading)")
    return found[0].text
