"""Every ```python block of docs/*.md runs (examples stay true)."""
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCKS = [(p.name, i, code) for p in sorted(DOCS.glob("*.md"))
          for i, code in enumerate(re.findall(r"```python\n(.*?)```", p.read_text(), re.S))]


@pytest.mark.parametrize("name, index, code", BLOCKS, ids=[f"{n}-{i}" for n, i, _ in BLOCKS])
def test_doc_example_runs(name, index, code):
    exec(compile(code, f"{name}[{index}]", "exec"), {})


def test_docs_have_examples():
    assert len(BLOCKS) >= 5
