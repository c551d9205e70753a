"""Sphinx configuration of the documentation site: the user's guide, the theory and the API
reference generated from the docstrings. Build it (the [docs] extra) with

    python -m sphinx -W --keep-going -c docs/site docs build/docs

The sources are docs/*.md (Markdown, read by myst-parser); this directory holds only the
configuration so that docs/ can ship its pages with the package (ldpcompress.pages).
"""
import inspect
import posixpath
import re
import sys
from pathlib import Path

import ldpcompress
from ldpcompress import docs as D

project = "ldpcompress"
author = "the ldpcompress authors"
copyright = "the ldpcompress authors, Apache-2.0"
release = version = ldpcompress.__version__

extensions = [
    "myst_parser",             # guide.md and theory.md as they are on GitHub
    "sphinx.ext.autodoc",      # the API reference from the docstrings
    "sphinx.ext.autosummary",  # one page per module, generated at build time
    "sphinx.ext.napoleon",     # numpy-style docstring sections
]
root_doc = "index"
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["site", "examples", "_build", "**/__pycache__"]

myst_heading_anchors = 3   # "theory.md#25-the-privacy-blanket-..." links to a section
myst_enable_extensions = ["dollarmath"]

templates_path = [str(Path(__file__).resolve().parent / "_templates")]  # absolute: autosummary reads it from the source directory
autosummary_generate = True
autosummary_imported_members = False     # re-exports are documented where they are defined
autosummary_ignore_module_all = True     # every public name a module defines (not only its __all__)
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

html_theme = "furo"
html_title = f"ldpcompress {release}"


# Docstrings write mathematics as plain text: |x| is a norm or an absolute value, never a
# reStructuredText substitution, and the package has no line blocks or grid tables in its
# docstrings. So every | outside inline literals (``...``) and literal blocks (after "::") is
# escaped before docutils reads it: the page shows the formula as the source writes it.
def _pipes_are_text(app, what, name, obj, options, lines: list[str]) -> None:
    literal_indent = None  # indentation of the paragraph that opened a literal block
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        parts = line.split("``")
        for j in range(0, len(parts), 2):  # even parts are outside inline literals
            parts[j] = section_links(parts[j].replace("\\|", "|").replace("|", "\\|"),
                                     _docname(app))
        lines[i] = "``".join(parts)
        if stripped.endswith("::"):
            literal_indent = indent


# "docs/theory.md §2.5" (or "guide.md §7") in a docstring becomes a link to that section of
# the page, at the anchor myst-parser gives its heading (GitHub's slug, myst_heading_anchors).
CITATION = re.compile(r"((?:docs/)?(theory|guide)\.md[, ]+§([\d.]*\d))")


def slug(title: str) -> str:
    """The anchor of a heading: GitHub's rule (lower case, spaces to '-', only word
    characters and '-' kept), as myst-parser computes it."""
    return re.sub(r"[^\w\- ]", "", title.lower().replace(" ", "-"))


def anchors() -> dict[tuple[str, str], str]:
    """(page, section number) -> the anchor of that section's heading (levels 1-3 have one)."""
    if not _ANCHORS:
        for page in D.PAGES:
            for s in D.sections(page):
                if s.number and s.level <= myst_heading_anchors:
                    _ANCHORS[(page, s.number)] = slug(s.title)
    return _ANCHORS


_ANCHORS: dict[tuple[str, str], str] = {}


def section_links(text: str, docname: str) -> str:
    """``text`` with each "docs/PAGE.md §N" made a reStructuredText link to section N of PAGE,
    relative to the document ``docname`` being written (an unknown section stays text)."""
    def link(m: re.Match) -> str:
        anchor = anchors().get((m[2], m[3]))
        if anchor is None:
            return m[1]
        target = posixpath.relpath(m[2], posixpath.dirname(docname) or ".")
        # inline markup starts after a space or one of -:/'"<([{ and ends before a space or
        # one of -.,:;!?\/'")]}>: elsewhere an escaped space (which shows as nothing) parts it
        before = "" if m.start() == 0 or text[m.start() - 1] in " -:/'\"<([{" else "\\ "
        after = "" if m.end() == len(text) or text[m.end()] in " -.,:;!?\\/'\")]}>" else "\\ "
        return f"{before}`{m[1]} <{target}.html#{anchor}>`__{after}"
    return CITATION.sub(link, text)


def _docname(app) -> str:
    env = getattr(app, "env", None)
    return getattr(env, "docname", None) or "api"


def first_paragraph(lines) -> str:
    """The summary autosummary shows of a docstring: its whole first paragraph on one line
    (Sphinx's rule stops at the first '. ', which cuts "y = x w.p. e^eps/..." after "w.p.")."""
    para: list[str] = []
    for line in lines:
        if line.strip():
            para.append(line.strip())
        elif para:
            break
    text = " ".join(para)
    return text[:-2] + "." if text.endswith("::") else text


def _section(lines, title: str) -> list[str]:
    """The lines of a numpy-style section (title, underline, entries) of a docstring."""
    for i in range(len(lines) - 1):
        if lines[i].strip() == title and set(lines[i + 1].strip()) == {"-"}:
            end = next((j for j in range(i + 2, len(lines) - 1) if lines[j].strip()
                        and not lines[j][0].isspace() and set(lines[j + 1].strip()) == {"-"}),
                       len(lines))
            return [line for line in lines[i:end]]
    return []


def inherited_parameters(cls, name: str, lines: list[str]) -> list[str]:
    """The docstring lines of method ``name`` of ``cls``, with the Parameters section of the
    method it overrides (the nearest base class's with one, e.g. the randomizer contract's)
    appended when its own docstring has none and both take the same parameters."""
    own = _function(vars(cls).get(name))
    if _section(lines, "Parameters") or own is None:
        return lines
    for base in cls.__mro__[1:]:
        theirs = _function(vars(base).get(name))
        if theirs is not None:
            section = _section(inspect.cleandoc(theirs.__doc__ or "").splitlines(), "Parameters")
            if section and _names(own) == _names(theirs):
                return [*lines, "", *section, ""]
    return lines


def _function(member):
    """The function of a class member (a classmethod's or staticmethod's too), else None."""
    member = getattr(member, "__func__", member)
    return member if inspect.isfunction(member) else None


def _names(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)[1:]


def _inherit(app, what, name, obj, options, lines: list[str]) -> None:
    if what != "method" or not inspect.isfunction(getattr(obj, "__func__", obj)):
        return
    fn = getattr(obj, "__func__", obj)
    owner_name, _, method = fn.__qualname__.rpartition(".")
    owner = getattr(sys.modules.get(fn.__module__), owner_name, None)
    if inspect.isclass(owner):
        lines[:] = inherited_parameters(owner, method, list(lines))


JOBS = {"accounting": "Accounting", "randomizers": "Randomizers", "compression": "Compression",
        "estimation": "Estimation", "core": "Items, seeds and documentation", "docs": "Items, seeds and documentation"}
PUBLIC_API = "<!-- public-api"


def _public_api(app, docname: str, source: list[str]) -> None:
    """Replace the marker line of api.md by tables of ``ldpcompress.__all__``, one per job,
    so that a name exported later is listed without editing the page."""
    if docname != "api" or PUBLIC_API not in source[0]:
        return
    groups: dict[str, list[str]] = {}
    for name in ldpcompress.__all__:
        module = getattr(ldpcompress, name).__module__
        job = JOBS.get(module.split(".")[1], "Other")
        groups.setdefault(job, []).append(f"{module}.{name}")
    tables = []
    for job, names in groups.items():
        rows = "\n".join(f"   ~{n}" for n in names)
        tables.append(f"## {job}\n\n```{{eval-rst}}\n.. autosummary::\n\n{rows}\n```\n")
    lines = source[0].splitlines(keepends=True)
    source[0] = "".join("\n".join(tables) if line.startswith(PUBLIC_API) else line
                        for line in lines)


def setup(app) -> None:
    from sphinx.ext import autosummary
    autosummary.extract_summary = lambda doc, settings: first_paragraph(doc)
    app.connect("autodoc-process-docstring", _inherit, priority=400)  # before napoleon's
    app.connect("autodoc-process-docstring", _pipes_are_text)
    app.connect("source-read", _public_api)
