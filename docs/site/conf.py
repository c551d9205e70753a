"""Sphinx configuration of the documentation site: the user's guide, the theory and the API
reference generated from the docstrings. Build it (the [docs] extra) with

    python -m sphinx -W --keep-going -c docs/site docs build/docs

The sources are docs/*.md (Markdown, read by myst-parser); this directory holds only the
configuration so that docs/ can ship its pages with the package (ldpcompress.pages).
"""
from pathlib import Path

import ldpcompress

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
            parts[j] = parts[j].replace("\\|", "|").replace("|", "\\|")
        lines[i] = "``".join(parts)
        if stripped.endswith("::"):
            literal_indent = indent


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
    app.connect("autodoc-process-docstring", _pipes_are_text)
    app.connect("source-read", _public_api)
