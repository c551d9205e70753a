"""The package's layout stays honest: no private names shared across modules, no references
to files or functions that no longer exist."""
import ast
import importlib
import io
import re
import tokenize
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


# -- references in docstrings, comments and docs name files and functions that exist -----------

DOC_FILES = sorted([*SOURCES, *(ROOT / "docs").glob("*.md"), ROOT / "README.md"])
PATH = re.compile(r"(?<![\w./-])((?:[A-Za-z_][\w.-]*/)+[\w-]+\.(?:py|md|toml))\b")
DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*)+)(\()?")
OTHER_LIBRARIES = {"distributed"}  # dask's, not scale/distributed.py
NOT_NAMES = {"csv", "txt", "lock", "py", "md", "json", "npy", "parquet", "png", "toml"}


def module_names(path: Path) -> set[str]:
    """Names a module defines or exports in __all__ (not all it imports), and Class.member for
    its classes' members."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for item in ast.walk(node):
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(f"{node.name}.{item.name}")
                elif isinstance(item, ast.Attribute) and getattr(item.value, "id", "") == "self":
                    names.add(f"{node.name}.{item.attr}")
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(f"{node.name}.{item.target.id}")
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) else [])
        names.update(t.id for t in targets if isinstance(t, ast.Name))
        if any(getattr(t, "id", "") == "__all__" for t in targets):
            names.update(ast.literal_eval(node.value))  # what it re-exports too
    return names


MODULES: dict[str, list[tuple[Path, set[str]]]] = {}
for _path in SOURCES:
    _key = _path.parent.name if _path.stem == "__init__" else _path.stem
    MODULES.setdefault(_key, []).append((_path, module_names(_path)))


def prose(path: Path):
    """(line, text) of what a reader reads: docstrings and comments of a module (and its string
    constants, for call forms only: messages that tell the user what to call), a Markdown file
    outside its code blocks."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        fenced = False
        for number, line in enumerate(text.splitlines(), 1):
            fenced ^= line.lstrip().startswith("```")
            if not fenced:
                yield number, line, False
        return
    tree = ast.parse(text)
    docs = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            for k, line in enumerate(node.value.value.splitlines()):
                if not line.lstrip().startswith((">>>", "...")):  # doctests are code
                    yield node.lineno + k, line, False
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docs:
            yield node.lineno, node.value, True
        elif isinstance(node, ast.JoinedStr):
            yield node.lineno, "".join(v.value for v in node.values
                                       if isinstance(v, ast.Constant)), True
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string, False


def resolves(head: str, rest: list[str]) -> bool | None:
    """True/False when ``head.rest`` names something of the package; None when ``head`` is no
    module of it (a variable, another library)."""
    if head in ("ldpcompress", "kernels"):
        return attribute_path(importlib.import_module(
            "ldpcompress" if head == "ldpcompress" else "ldpcompress.kernels"), rest)
    if head not in MODULES or head in OTHER_LIBRARIES or rest[0] in NOT_NAMES:
        return None
    for path, names in MODULES[head]:
        if path.stem == "__init__":  # a package: what it exports (lazily) and its modules
            parts = path.parent.relative_to(ROOT).parts
            package = ".".join(("ldpcompress",) * (parts[0] == "kernels") + parts)
            if attribute_path(importlib.import_module(package), rest[:1]):
                return True
            continue
        members = {name.split(".")[1] for name in names if "." in name}
        if rest[0] in names or ".".join(rest[:2]) in names or rest[0] in members:
            return True  # a function, Class.member, or an object's method (entropy.expand)
    return False


def attribute_path(obj, rest: list[str]) -> bool:
    """Whether obj.rest[0].rest[1]... exists (submodules imported on the way)."""
    for part in rest:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")
            except (ImportError, AttributeError):
                return False
    return True


ROLE = re.compile(r":(?:func|meth|class|attr|data|mod):`~?([A-Za-z_][\w.]*)`")


def namespace(path: Path) -> set[str]:
    """Every name a module binds (defined, imported, assigned, set on self)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return names


def stale_roles(path: Path) -> list[str]:
    """Sphinx roles (:func:`name`, :class:`a.b.C` ...) of a module naming nothing: a bare name
    must be bound in the module or exported by its package."""
    text, found = path.read_text(encoding="utf-8"), []
    names, package = namespace(path), None
    for match in ROLE.finditer(text):
        head, *rest = match.group(1).split(".")
        if rest:
            ok = resolves(head, rest) is not False
        else:
            if package is None:
                parts = path.parent.relative_to(ROOT).parts
                package = importlib.import_module(
                    ".".join(("ldpcompress",) * (parts[0] == "kernels") + parts))
            ok = head in names or hasattr(package, head)
        if not ok:
            found.append(f"{path.relative_to(ROOT)}:{text[:match.start()].count(chr(10)) + 1}: "
                         f"{match.group(0)}")
    return found


def stale_references(path: Path) -> list[str]:
    found = stale_roles(path) if path.suffix == ".py" else []
    for number, line, calls_only in prose(path):
        for match in PATH.finditer(line):
            target = match.group(1)
            if not any((base / target).exists()
                       for base in (ROOT, ROOT / "ldpcompress", ROOT / "docs", ROOT / "tests")):
                found.append(f"{path.relative_to(ROOT)}:{number}: {target}")
        for match in DOTTED.finditer(line):
            if calls_only and not match.group(3):
                continue
            head, rest = match.group(1), match.group(2).split(".")[1:]
            if resolves(head, rest) is False:
                found.append(f"{path.relative_to(ROOT)}:{number}: {head}.{'.'.join(rest)}")
    return found


def test_the_reference_check_sees_stale_names():
    assert resolves("mean", ["choose_split"]) is False       # the old hint
    assert resolves("split", ["choose_split"]) is True
    assert resolves("ldpcompress", ["compression", "choose_split"]) is True
    assert resolves("ldpcompress", ["solve"]) is False
    assert resolves("blanket", ["BlanketProfile", "check_oracle"]) is True
    assert resolves("np", ["exp"]) is None
    assert ROLE.findall("see :func:`~ldpcompress.accounting.solve.bisect_int` and "
                        ":class:`Profile`") == ["ldpcompress.accounting.solve.bisect_int",
                                                "Profile"]


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_references_name_files_and_functions_that_exist(path):
    stale = stale_references(path)
    assert not stale, f"references to files or names that do not exist: {stale}"


# -- kernels are internal: each is called by the package (or a bench) ---------------------------

def used_names(paths) -> set[str]:
    """Names read anywhere in these modules (as a name or an attribute)."""
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.ImportFrom):
                names.update(a.name for a in node.names)
    return names


@pytest.mark.slow  # ~9 s in a full run
def test_every_kernel_is_called():
    callers = used_names([p for p in SOURCES if p.parent.name != "kernels"]
                         + sorted((ROOT / "bench").glob("*.py")))
    kernels = sorted((ROOT / "kernels").glob("*.py"))
    unused = []
    for path in kernels:
        others = used_names([p for p in kernels if p != path]) | callers
        own = used_names([path])
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name not in others | own:
                unused.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert not unused, f"kernels no module calls: {unused}"


def test_every_private_function_is_called_in_its_module():
    unused = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = used_names([path])
        unused += [f"{path.relative_to(ROOT)}: {node.name}" for node in tree.body
                   if isinstance(node, ast.FunctionDef) and private(node.name)
                   and node.name not in used]
    assert not unused, f"private functions nothing calls: {unused}"


# -- every pytest.raises states the error it expects -------------------------------------------

TESTS = sorted((ROOT / "tests").rglob("*.py"))


def raises_without_match(tree: ast.AST) -> list[int]:
    """Lines of `pytest.raises(...)` calls (as a context manager or called directly) that pass
    no `match=`: such a test passes on any error of that type, the wrong one included."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "raises" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "pytest"
            and not any(k.arg == "match" for k in node.keywords)]


def test_the_match_check_sees_a_bare_raises():
    assert raises_without_match(ast.parse("with pytest.raises(ValueError):\n    f()")) == [1]
    assert raises_without_match(ast.parse("pytest.raises((ValueError, TypeError), f, 1)")) == [1]
    assert not raises_without_match(ast.parse("with pytest.raises(ValueError, match='k must'):"
                                              "\n    f()"))
    assert not raises_without_match(ast.parse("with np.testing.raises(ValueError):\n    f()"))


def test_every_raises_states_the_expected_message():
    bare = {str(path.relative_to(ROOT)): lines for path in TESTS
            if (lines := raises_without_match(ast.parse(path.read_text(encoding="utf-8"))))}
    assert not bare, f"pytest.raises without match= (file: lines): {bare}"
