"""Startup: ``import ldpcompress`` and the command line's parser load no heavy dependency (Numba,
SciPy, the extras); every public name still resolves, to the object its module defines, and
the library's randomizers are found by name without being imported first. Each check runs in
a fresh interpreter (this one has imported everything already). No timing is asserted."""
import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ldpcompress
from ldpcompress.randomizers import registry

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numba", "llvmlite", "scipy", "pyarrow", "dask", "distributed", "matplotlib", "pandas",
         "mpmath", "dp_accounting")
LAZY_PACKAGES = ("ldpcompress", "ldpcompress.accounting", "ldpcompress.compression",
                 "ldpcompress.estimation", "ldpcompress.randomizers")


def fresh(code: str) -> dict:
    """Run ``code`` in a new interpreter; it leaves its findings in the dict ``out``, returned
    with ``heavy`` (the HEAVY modules imported by then) and ``ours`` (ldpcompress modules)."""
    script = (f"import json, sys\nout = {{}}\n{code}\n"
              f"out['heavy'] = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
              "out['ours'] = sorted(m for m in sys.modules if m.startswith('ldpcompress.'))\n"
              "print(json.dumps(out))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_loads_no_heavy_dependency():
    out = fresh("import ldpcompress")
    assert out["heavy"] == []
    # nothing of the jobs either: the public names import their module when first used
    assert not [m for m in out["ours"] if m.split(".")[1] in
                ("accounting", "randomizers", "compression", "estimation", "scale", "cli")]


def test_every_public_name_resolves_in_a_fresh_process():
    code = ("import importlib\n"
            f"for p in {LAZY_PACKAGES!r}:\n"
            "    m = importlib.import_module(p)\n"
            "    out[p] = {n: getattr(m, n).__module__ for n in m.__all__}\n"
            "    out[p + ' dir'] = sorted(set(m.__all__) - set(dir(m)))\n"
            "from ldpcompress import Accountant, KRR, compress, docs_path\n"
            "import ldpcompress as L\n"
            "out['submodule'] = L.accounting.__name__\n")
    out = fresh(code)
    for package in LAZY_PACKAGES:
        exports = importlib.import_module(package)._EXPORTS
        assert sorted(out[package]) == sorted(importlib.import_module(package).__all__)
        assert out[package + " dir"] == []
        for name, module in out[package].items():
            # the object its module defines (a re-export names where it is defined)
            assert importlib.import_module(f"{package}.{exports[name]}").__dict__[name] is \
                getattr(importlib.import_module(package), name)
            assert module.startswith("ldpcompress.")
    assert out["submodule"] == "ldpcompress.accounting"


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_names_are_the_type_checkers_names(package):
    """The names of ``_EXPORTS`` (what ``__getattr__`` imports) are exactly ``__all__`` and
    the ``if TYPE_CHECKING:`` imports (what type checkers and readers see), from the same
    modules."""
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    checked = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level >= 1
                where = imp.module if imp.level == 1 else f"{'.' * (imp.level - 1)}{imp.module}"
                checked.update({alias.name: where for alias in imp.names})
    assert checked == dict(module._EXPORTS)
    assert sorted(module._EXPORTS) == sorted(module.__all__)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ldpcompress.nope  # noqa: B018
    with pytest.raises(ImportError, match="cannot import name"):
        exec("from ldpcompress.accounting import nope", {})


def test_parser_and_every_help_load_no_heavy_dependency():
    code = ("from ldpcompress.cli import build_parser\n"
            "parser = build_parser()\n"
            "texts = [parser.format_help()] + [c.format_help() for c in "
            "parser.get_default('commands').values()]\n"
            "out['helps'] = len(texts)\n")
    out = fresh(code)
    assert out["heavy"] == []
    assert out["helps"] > 10
    assert not [m for m in out["ours"] if m.split(".")[1] in ("accounting", "scale")]


def test_docs_command_runs_without_numba():
    out = fresh("from ldpcompress.cli import main\n"
                "import contextlib, io\n"
                "with contextlib.redirect_stdout(io.StringIO()):\n"
                "    out['rc'] = main(['docs', 'theory', '--section', '2.5'])\n")
    assert out["rc"] == 0 and out["heavy"] == []


def test_builtin_randomizers_are_known_by_name_and_import_light():
    out = fresh("from ldpcompress.randomizers import registry\n"
                "out['names'] = registry.names()\n"
                "out['before'] = sorted(m for m in sys.modules if m.startswith('ldpcompress.randomizers.'))\n"
                "out['classes'] = {n: [registry.lookup(n).__module__, registry.lookup(n).name] "
                "for n in registry.names()}\n")
    assert set(registry.BUILTIN) <= set(out["names"])
    # names() imports none of them; every lookup finds the class its BUILTIN module defines
    assert not set(out["before"]) & set(registry.BUILTIN.values())
    for name, module in registry.BUILTIN.items():
        assert out["classes"][name] == [module, name]
    assert out["heavy"] == []  # no randomizer module imports Numba or SciPy at import


def test_a_library_name_stays_the_librarys_before_its_module_is_imported():
    out = fresh("from ldpcompress.randomizers import registry, LocalRandomizer\n"
                "class Mine(LocalRandomizer):\n"
                "    name = 'krr'\n"
                "try:\n"
                "    registry.register(Mine)\n"
                "    out['error'] = None\n"
                "except ValueError as err:\n"
                "    out['error'] = str(err)\n"
                "out['krr'] = registry.lookup('krr').__module__\n")
    assert out["error"] == ("randomizer name 'krr' is taken by the library's "
                            "ldpcompress.randomizers.krr.KRR: __main__.Mine cannot replace it "
                            "(register it under another name)")
    assert out["krr"] == "ldpcompress.randomizers.krr"


def test_version_loads_no_heavy_dependency_and_no_randomizer():
    """`ldpcompress --version` (and building the parser) imports neither Numba nor SciPy, and no
    randomizer module: demo's --oracle listed its choices at start-up, importing every
    randomizer and every installed plug-in (one broken plug-in broke --version)."""
    out = fresh("from ldpcompress.cli import main\n"
                "import contextlib, io\n"
                "with contextlib.redirect_stdout(io.StringIO()):\n"
                "    try:\n"
                "        main(['--version'])\n"
                "    except SystemExit as stop:\n"
                "        out['rc'] = stop.code\n"
                "from ldpcompress.randomizers import registry\n"
                "out['plugins'] = registry.plugin_errors() or registry._loaded_plugins\n")
    assert out["rc"] == 0 and out["heavy"] == [] and out["plugins"] is False
    assert not set(out["ours"]) & set(registry.BUILTIN.values())
    assert not [m for m in out["ours"] if m.split(".")[1] in ("accounting", "compression")]


def test_a_plain_amplify_query_loads_only_its_own_kernels():
    """`amplify --n --eps0 --delta` (any eps0-LDP randomizer) needs the clone-pair and lower-bound
    kernels only: not SciPy's FFT and special functions (the scalar blanket's), nor the
    oracles' blanket, participation sampling or scalar accounting and their kernels."""
    out = fresh("from ldpcompress.cli import main\n"
                "import contextlib, io\n"
                "with contextlib.redirect_stdout(io.StringIO()):\n"
                "    out['rc'] = main(['amplify', '--n', '1e4', '--eps0', '2', '--delta', '1e-6'])\n"
                "out['scipy'] = sorted(m for m in ('scipy.fft', 'scipy.special', 'scipy.stats', "
                "'scipy.optimize') if m in sys.modules)\n")
    assert out["rc"] == 0 and out["scipy"] == []
    loaded = set(out["ours"])
    for module in ("accounting.blanket", "accounting.participation", "accounting.scalar",
                   "kernels.blanket_indep", "kernels.participation", "kernels.scalar",
                   "randomizers.scalar"):
        assert f"ldpcompress.{module}" not in loaded, module


def test_the_demo_compiles_each_kernel_once_and_without_the_cfunc_wrapper():
    """The first `ldpcompress demo` of an installation compiles every kernel it runs (~60 with
    their callees), so each must be built for one type signature only, and without the
    C-callable wrapper no kernel needs (kernels/decorator.py: ~15 ms of compilation each)."""
    out = fresh("from ldpcompress.estimation import demo\n"
                "demo.run(quiet=True)\n"
                "seen = {}\n"
                "for name, mod in list(sys.modules.items()):\n"
                "    if name.startswith('ldpcompress.kernels.'):\n"
                "        for f in vars(mod).values():\n"
                "            if hasattr(f, 'signatures') and hasattr(f, 'targetoptions'):\n"
                "                seen[f.py_func.__module__ + '.' + f.py_func.__name__] = (\n"
                "                    [str(s) for s in f.signatures],\n"
                "                    bool(f.targetoptions.get('no_cfunc_wrapper')))\n"
                "out['kernels'] = {k: v for k, v in seen.items() if v[0]}\n")
    ran = out["kernels"]
    for name in ("clones.clone_delta", "blanket_indep.indep_tables",
                 "blanket_attack.split_attack_delta", "field.pi_hist_enum"):
        assert f"ldpcompress.kernels.{name}" in ran, name
    assert {k: v[0] for k, v in ran.items() if len(v[0]) > 1} == {}
    assert sorted(k for k, v in ran.items() if not v[1]) == []
