"""Every ```python block of docs/*.md runs (examples stay true)."""
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = [*sorted(DOCS.glob("*.md")), DOCS.parent / "README.md"]
BLOCKS = [(p.name, i, code) for p in PAGES
          for i, code in enumerate(re.findall(r"```python\n(.*?)```", p.read_text(), re.S))]


def _registrations_before(name: str, index: int) -> list[tuple[int, str]]:
    """The page's earlier blocks that register a randomizer: a later block may look it up by
    name ("the class above"), so each block runs after them, in any order and on any worker."""
    return [(i, code) for n, i, code in BLOCKS if n == name and i < index and "@register" in code]


@pytest.mark.parametrize("name, index, code", BLOCKS, ids=[f"{n}-{i}" for n, i, _ in BLOCKS])
def test_doc_example_runs(name, index, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files (a saved accountant, report sets)
    for i, earlier in _registrations_before(name, index):
        exec(compile(earlier, f"{name}[{i}]", "exec"), {})
    exec(compile(code, f"{name}[{index}]", "exec"), {})


def test_docs_have_examples():
    assert len(BLOCKS) >= 5


def test_project_cites_papers_and_its_own_docs_only():
    """No SPEC section numbers or paths outside the repository in code, docs or README: users
    cannot read those (docs/theory.md carries the mathematics)."""
    root = DOCS.parent
    files = [*root.joinpath("ldpcompress").rglob("*.py"), *root.joinpath("kernels").rglob("*.py"),
             *DOCS.glob("*.md"), root / "README.md"]
    bad = [f"{p.relative_to(root)}:{i}" for p in files
           for i, line in enumerate(p.read_text().splitlines(), 1)
           if re.search(r"\bSPEC\b|\.\./shared", line)]
    assert not bad, bad
