"""The documentation a pip user can reach: the pages ship in the wheel and print from an
installed package (``ldpcompress docs``, ``docs_path()``), and the site (guide, theory, API
reference) builds with warnings as errors when the [docs] extra is installed."""
import enum
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Iterator

import pytest

import ldpcompress
from ldpcompress import docs as D
from ldpcompress.cli import main

ROOT = Path(__file__).resolve().parent.parent


def between(text: str, start: str, stop: str) -> str:
    """The lines of ``text`` from the line starting with ``start`` to the one before the line
    starting with ``stop`` (or the end)."""
    lines = text.splitlines(keepends=True)
    i = next(j for j, line in enumerate(lines) if line.startswith(start))
    end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(stop)), len(lines))
    return "".join(lines[i:end])


def test_docs_path_holds_the_repository_pages():
    path = ldpcompress.docs_path()
    for page in D.PAGES:
        assert (path / f"{page}.md").read_bytes() == (ROOT / "docs" / f"{page}.md").read_bytes()


@pytest.mark.parametrize("section", ["2.5", "§2.5", " 2.5. "])
def test_docs_command_prints_a_theory_section(capsys, section):
    assert main(["docs", "theory", "--section", section]) == 0
    out = capsys.readouterr().out
    theory = (ROOT / "docs" / "theory.md").read_text(encoding="utf-8")
    assert out.strip() == between(theory, "### 2.5 ", "### 2.6 ").strip()


def test_docs_command_prints_a_top_level_section_with_its_subsections(capsys):
    assert main(["docs", "docs/theory.md", "--section", "3"]) == 0
    out = capsys.readouterr().out
    theory = (ROOT / "docs" / "theory.md").read_text(encoding="utf-8")
    assert out.strip() == between(theory, "## 3. ", "## 4. ").strip()
    assert "### 3.4 The accountant" in out


def test_docs_command_finds_a_section_by_words_and_skips_code_comments(capsys):
    assert main(["docs", "guide", "--section", "the contract"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## 7. Your own randomizer: the contract")
    # the guide's python blocks hold '# comment' lines: they are code, not headings
    assert "if s.number" not in out and "def shuffle_structure" in out


def test_docs_command_whole_page_and_contents(capsys):
    assert main(["docs", "guide"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    assert main(["docs"]) == 0
    out = capsys.readouterr().out
    assert str(ldpcompress.docs_path()) in out and "2.5 The privacy blanket" in out
    assert main(["docs", "--path"]) == 0
    assert capsys.readouterr().out.strip() == str(ldpcompress.docs_path())


@pytest.mark.parametrize("argv, says", [
    (["docs", "manual"], "page must be one of guide, theory"),
    (["docs", "theory", "--section", "9.9"], "no section matching '9.9'"),
    (["docs", "theory", "--section", "bound"], "sections matching 'bound'"),
    (["docs", "theory", "--section", ""], "section must be"),
    (["docs", "--section", "2.5"], "--section needs a page"),
])
def test_docs_command_refuses_clearly(capsys, argv, says):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_every_cited_section_exists():
    """Every "theory.md §N" / "guide.md §N" cited in the code, the docs or the README names a
    section that ``ldpcompress docs PAGE --section N`` prints."""
    files = [*ROOT.joinpath("ldpcompress").rglob("*.py"), *ROOT.joinpath("kernels").rglob("*.py"),
             *ROOT.joinpath("docs").glob("*.md"), ROOT / "README.md"]
    numbers = {p: {s.number for s in D.sections(p)} for p in D.PAGES}
    bad = []
    for f in files:
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            for page, cited in re.findall(r"(theory|guide)\.md[, ]+((?:§[\d.]*\d[-+, ]*)+)", line):
                for number in re.findall(r"§([\d.]*\d)", cited):
                    if number not in numbers[page]:
                        bad.append(f"{f.relative_to(ROOT)}:{i}: {page}.md §{number}")
    assert not bad, bad


def test_api_reference_lists_every_subpackage():
    """docs/api.md names each subpackage and top-level module (their modules are found
    recursively at build time); only the internal kernels are left out."""
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   (ldpcompress\.\w+)$", api, re.M))
    present = {f"ldpcompress.{m.name}" for m in pkgutil.iter_modules(ldpcompress.__path__)
               if m.name not in ("kernels", "__main__", "pages")}
    assert listed == present


@pytest.mark.slow
def test_wheel_ships_the_pages_and_an_installed_copy_prints_them(tmp_path):
    """Build the wheel from a copy of the sources (as pip does), check its file list, unpack
    it (a pure-Python wheel installs by unpacking) and ask that copy for a section."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "generated")
    for name in ("ldpcompress", "kernels", "docs"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                          str(tmp_path / "dist"), str(src)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("ldpcompress-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"ldpcompress/pages/guide.md", "ldpcompress/pages/theory.md", "ldpcompress/docs.py",
            "ldpcompress/cli/docs.py", "ldpcompress/py.typed"} <= names
    sources = {f"ldpcompress/{p.relative_to(ROOT / 'ldpcompress').as_posix()}"
               for p in (ROOT / "ldpcompress").rglob("*.py")}
    sources |= {f"ldpcompress/kernels/{p.name}" for p in (ROOT / "kernels").glob("*.py")}
    assert sources <= names, sorted(sources - names)
    assert not [n for n in names if "/site/" in n or n.endswith("conf.py")]  # no build config
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    code = ("import sys, ldpcompress, ldpcompress.cli; print(ldpcompress.__file__); "
            "print(ldpcompress.docs_path());"
            "sys.exit(ldpcompress.cli.main(['docs', 'theory', '--section', '2.5']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    module, path, text = out.stdout.split("\n", 2)
    assert module == str(site / "ldpcompress" / "__init__.py")
    assert path == str(site / "ldpcompress" / "pages")
    theory = (ROOT / "docs" / "theory.md").read_text(encoding="utf-8")
    assert text.strip() == between(theory, "### 2.5 ", "### 2.6 ").strip()


@pytest.mark.slow
def test_site_builds_without_warnings(tmp_path):
    """The one documented command (README, "Documentation") with -W: any warning (a broken
    docstring, a dangling link, a page left out of the table of contents) fails."""
    for module in ("sphinx", "myst_parser", "furo"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the [docs] extra is not installed ({module} is missing)")
    docs = tmp_path / "docs"  # a copy: the build writes the API stubs beside the sources
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("generated", "__pycache__"))
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-c",
                          str(docs / "site"), str(docs), str(tmp_path / "html")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    html = (tmp_path / "html")
    assert (html / "guide.html").is_file() and (html / "theory.html").is_file()
    api = (html / "api.html").read_text(encoding="utf-8")
    for name in ldpcompress.__all__:  # every exported name is in the API tables
        assert f">{name}<" in api or f">{name}</span>" in api, name
    # summaries are whole first paragraphs: KRR's is not cut after "w.p."
    assert "y = x w.p. e^eps/(e^eps+k-1), else uniform other." in api
    # "docs/theory.md §N" are links, and each lands on a heading of the theory page
    theory = (html / "theory.html").read_text(encoding="utf-8")
    links = set()
    for page in (html / "generated").glob("*.html"):
        links |= set(re.findall(r'href="\.\./theory\.html#([^"]+)"', page.read_text(encoding="utf-8")))
    assert len(links) >= 10 and "25-the-privacy-blanket-for-binary-support-oracles-bbgn19-scw25-bd26" in links
    assert not [a for a in links if f'id="{a}"' not in theory]


def test_reference_summaries_are_whole_first_paragraphs():
    """Sphinx's summary stops at the first '. ' and showed KRR as "... y = x w.p."."""
    conf = CONF
    from ldpcompress import KRR
    lines = inspect.cleandoc(KRR.__doc__).splitlines()
    summary = conf.first_paragraph(lines)
    assert summary.startswith("k-ary randomized response (replacement eps): y = x w.p. "
                              "e^eps/(e^eps+k-1), else uniform other. rho = Uniform[k];")
    assert summary.endswith("(ceil(log2 k) bits).") and "Parameters" not in summary
    assert conf.first_paragraph(["", "  One line::", "", "  code"]) == "One line."


def test_theory_citations_become_links_to_their_section():
    conf = CONF
    text = conf.section_links("by the blanket pair (docs/theory.md §2.4(b)); guide.md §7.", "generated/m")
    assert text == ("by the blanket pair (`docs/theory.md §2.4 <../theory.html#24-k-ary-randomized-"
                    "response>`__\\ (b)); `guide.md §7 <../guide.html#7-your-own-randomizer-the-"
                    "contract>`__.")
    assert conf.section_links("theory.md §9.9", "api") == "theory.md §9.9"  # no such section
    # every section the code cites has an anchor (a heading of level <= 3), all distinct
    anchors = conf.anchors()
    assert len(set(anchors.values())) == len(anchors)
    cited = {(page, number) for f in ROOT.joinpath("ldpcompress").rglob("*.py")
             for _, page, number in conf.CITATION.findall(f.read_text(encoding="utf-8"))}
    assert len(cited) >= 20 and not cited - set(anchors)


def test_readme_demo_figures_are_what_the_bounds_give():
    """The README's demo paragraph: the oracle's own bound allows eps0 8.69, the generic one
    7.07 (it said 7.06, the realised eps of PI-RAPPOR asked for 7.07, while the demo prints
    the generic bound's eps0)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    own = ldpcompress.max_eps0(10 ** 5, 1.0, 1e-6, lambda e: ldpcompress.PIRappor(1000, e))
    generic = ldpcompress.max_eps0(10 ** 5, 1.0, 1e-6)
    assert f"central (1, 1e-6)-DP ({own:.2f}, where" in readme
    assert f"allows only {generic:.2f}:" in readme


def test_demo_says_why_it_prints_two_eps0_values(capsys):
    from ldpcompress.estimation import demo
    res = demo.run(n=3000, k=50, eps=2.0)
    demo.show(res)
    out = capsys.readouterr().out
    assert res["local_eps"] < res["eps0"]  # PI-RAPPOR rounds its field parameters
    assert (f"why two values: pi-rappor rounds its parameters, so it realises "
            f"{res['local_eps']:.4f}, at most the {res['eps0']:.4f} asked of it") in out
    res = demo.run(n=3000, k=50, eps=2.0, oracle="krr")
    demo.show(res)
    assert res["local_eps"] == res["eps0"] and "why two values" not in capsys.readouterr().out


def test_guide_table_of_what_compress_takes_matches_the_randomizers():
    """docs/guide.md §2's table says which shipped randomizers compress() takes: each row
    agrees with the randomizers' own compression_refusal() (and compress() itself)."""
    from shipped import SHIPPED

    from ldpcompress import compress
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    table = between(guide, "| randomizer | compressed? |", "\n")
    said = {}
    for row in table.splitlines()[2:]:
        names, verdict = row.split("|")[1:3]
        variant = re.search(r"\((\w+)\)", names)   # a row per variant: `Name` (variant)
        for name in re.findall(r"`(\w+)`", names):
            said[name, variant and variant.group(1)] = verdict.strip().startswith("yes")
    for _, factory, _ in SHIPPED:
        r = factory()
        name = (type(r).__name__, getattr(r, "variant", None))
        if name not in said:
            name = (name[0], None)
        assert name in said, f"{name} is missing from the guide's table"
        assert said[name] == (r.compression_refusal() is None), name
        if said[name]:
            assert len(compress(r).encode(r.check_items(_example_input(r))[0])) == 17
        else:
            with pytest.raises(ValueError, match="compress"):
                compress(r)


def _example_input(r):
    import numpy as np
    if hasattr(r, "k"):
        return np.array([1])
    return np.ones((1, r.d)) / np.sqrt(r.d)


def test_docstring_examples_run():
    """The Examples sections of the API reference (numpy style) run as doctests."""
    import doctest
    import importlib
    failures = tried = 0
    for info in pkgutil.walk_packages(ldpcompress.__path__, "ldpcompress."):
        if info.name.endswith("__main__") or ".kernels" in info.name:
            continue
        result = doctest.testmod(importlib.import_module(info.name), optionflags=doctest.ELLIPSIS)
        failures, tried = failures + result.failed, tried + result.attempted
    assert failures == 0 and tried >= 10


def _site_conf():
    """docs/site/conf.py as a module (it needs Sphinx only inside its setup())."""
    spec = importlib.util.spec_from_file_location("site_conf", ROOT / "docs" / "site" / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONF = _site_conf()


# -- every parameter of the public API is documented -------------------------------------------
# the package and the modules the API reference lists (docs/api.md)
PUBLIC_MODULES = ("ldpcompress", *re.findall(r"^   (ldpcompress\.\w+)$",
                                             (ROOT / "docs" / "api.md").read_text(encoding="utf-8"),
                                             re.M))
# Parameters not yet documented, one "callable parameter" a line. The list may only shrink: a
# parameter documented since must leave it, and any other missing one fails the test.
BACKLOG = ROOT / "tests" / "undocumented_parameters.txt"


def documented_parameters(doc: str | None) -> set[str]:
    """The names a numpy-style docstring lists under Parameters, Other Parameters or (for the
    fields of a dataclass) Attributes: each entry line at the section's indentation, 'name',
    'name : type' or 'a, b : type' ('*args' and '**kwargs' written as such)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    names: set[str] = set()
    inside = False
    for i, line in enumerate(lines):
        if re.fullmatch(r"-{3,}", line.strip()):
            continue
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()) and line.strip():
            inside = line.strip() in ("Parameters", "Other Parameters", "Attributes")
            continue
        if inside and line and not line[0].isspace():
            names.update(n.strip() for n in line.split(" : ")[0].split(","))
    return names


def _public_methods(cls) -> Iterator[tuple[str, object]]:
    """The public functions a class defines or inherits from the package's own classes."""
    for owner in cls.__mro__:
        if not owner.__module__.startswith("ldpcompress"):
            continue
        for name, member in vars(owner).items():
            fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
            if not name.startswith("_") and inspect.isfunction(fn):
                yield f"{owner.__module__}.{owner.__qualname__}.{name}", fn


def _owner(fn):
    return getattr(sys.modules[fn.__module__], fn.__qualname__.rpartition(".")[0])


def public_callables() -> dict[str, tuple[object, str]]:
    """Every public callable of :data:`PUBLIC_MODULES`' ``__all__`` (functions, classes'
    constructors, their public methods) -> (object, the docstring that documents it)."""
    found: dict[str, tuple[object, str]] = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                if issubclass(obj, enum.Enum):
                    continue  # members, not a constructor to call
                init = vars(obj).get("__init__")
                doc = "\n".join(filter(None, [obj.__doc__, getattr(init, "__doc__", None)]))
                found[f"{obj.__module__}.{obj.__qualname__}"] = (obj, doc)
                for key, fn in _public_methods(obj):  # as the reference shows it: an
                    owner = _owner(fn)                  # override's docstring or its base's,
                    lines = (inspect.getdoc(fn) or "").splitlines()  # with the base's
                    lines = CONF.inherited_parameters(owner, fn.__name__, lines)  # Parameters
                    found.setdefault(key, (fn, "\n".join(lines)))
            elif inspect.isfunction(obj):
                found[f"{obj.__module__}.{obj.__qualname__}"] = (obj, obj.__doc__ or "")
    return found


def missing_parameters() -> set[str]:
    missing = set()
    for key, (obj, doc) in public_callables().items():
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):  # no signature to document
            continue
        listed = documented_parameters(doc)
        for p in params.values():
            shown = {p.VAR_POSITIONAL: f"*{p.name}", p.VAR_KEYWORD: f"**{p.name}"}.get(p.kind, p.name)
            if p.name not in ("self", "cls") and shown not in listed:
                missing.add(f"{key} {shown}")
    return missing


def write_backlog() -> None:
    """Rewrite the backlog as the parameters missing now (after documenting some, or when a
    merge brings public parameters in): ``python -c "import sys; sys.path.insert(0, 'tests');
    import test_docs_site as T; T.write_backlog()"``, then review the diff."""
    head = [line for line in BACKLOG.read_text(encoding="utf-8").splitlines()
            if line.startswith("#")]
    BACKLOG.write_text("\n".join([*head, *sorted(missing_parameters())]) + "\n", encoding="utf-8")


def test_the_parameter_check_reads_numpy_sections():
    doc = """Summary.

    Parameters
    ----------
    n : int
        Users.
    a, b
        Two at once.
    *args
        Passed on.

    Returns
    -------
    x : float
        Not a parameter.
    """
    assert documented_parameters(doc) == {"n", "a", "b", "*args"}
    assert documented_parameters("n: users (informal, not a section)") == set()


def test_every_public_parameter_is_documented():
    """Every parameter of every public callable (the public modules' ``__all__``, classes'
    constructors and public methods) is listed in its docstring's Parameters section, except
    the backlog's, which may only shrink."""
    missing = missing_parameters()
    backlog = {line.strip() for line in BACKLOG.read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")}
    assert not missing - backlog, sorted(missing - backlog)  # document these
    assert not backlog - missing, sorted(backlog - missing)  # documented (or gone): remove them
    assert len(public_callables()) > 300
