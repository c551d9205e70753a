"""The documentation a pip user can reach: the pages ship in the wheel and print from an
installed package (``ldpcompress docs``, ``docs_path()``), and the site (guide, theory, API
reference) builds with warnings as errors when the [docs] extra is installed."""
import importlib.util
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

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
