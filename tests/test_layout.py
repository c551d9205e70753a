"""The package's layout stays honest: no private names shared across modules."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "ldpcompress").rglob("*.py"), *(ROOT / "kernels").rglob("*.py")])


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(tree: ast.AST) -> list[str]:
    """`from X import _name` and `module._name` for a module imported by name (aliases such as
    `import os as _os` define a private name, they do not use one)."""
    modules, uses = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            modules.update(a.asname or a.name for a in node.names)
            uses += [f"line {node.lineno}: from {'.' * node.level}{node.module or ''} import "
                     f"{a.name}" for a in node.names if private(a.name)]
    return uses + [f"line {node.lineno}: {node.value.id}.{node.attr}" for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and private(node.attr)
                   and isinstance(node.value, ast.Name) and node.value.id in modules]


def test_the_check_sees_private_imports():
    assert private_uses(ast.parse("from .estimator import _first_bad, ok"))
    assert private_uses(ast.parse("from . import validate as V\nV._real(1, 'x')"))
    assert not private_uses(ast.parse("from __future__ import annotations\n"
                                      "import os as _os\nfrom . import __version__\n"
                                      "from .lazy import lazy_exports as _lazy\nself._x = 1"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_name_crosses_a_module(path):
    uses = private_uses(ast.parse(path.read_text(encoding="utf-8")))
    assert not uses, f"{path.relative_to(ROOT)} uses another module's private names: {uses}"
