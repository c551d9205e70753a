"""Installed plug-ins (entry points of the group ``ldpcompress.randomizers``): loaded lazily and
in isolation, never replacing a library name (randomizers/registry.py).

A fake installed distribution (a ``*.dist-info`` with ``entry_points.txt`` on PYTHONPATH)
declares, in this order, a plug-in module that does not exist, one that raises on import, one
that registers a class named like the library's k-RR, one that registers a randomizer and
then fails, and a working one (the guide's yes-no randomizer). Each check runs in a fresh
interpreter: entry points are read once per process."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shipped import EXAMPLE

ROOT = Path(__file__).resolve().parent.parent

ENTRY_POINTS = """\
[ldpcompress.randomizers]
missing = fakeplug_missing:Nothing
raising = fakeplug_raising:Thing
clash = fakeplug_clash:KRR
partial = fakeplug_partial
good = fakeplug_good:YesNo
"""
MODULES = {
    "fakeplug_raising.py": "raise RuntimeError('the plug-in cannot start: no licence file')\n",
    "fakeplug_clash.py": ("from ldpcompress.randomizers import register\n"
                          "from ldpcompress.randomizers.krr import KRR as _LibraryKRR\n\n\n"
                          "@register\n"
                          "class KRR(_LibraryKRR):  # same class name, same registry name\n"
                          "    def randomize(self, x, entropy=None):\n"
                          "        return 0\n"),
    "fakeplug_partial.py": ("from ldpcompress.randomizers import register\n"
                            "from fakeplug_good import YesNo\n\n\n"
                            "@register\n"
                            "class Half(YesNo):\n"
                            "    name = 'half-registered'\n\n\n"
                            "raise ImportError('a dependency of the plug-in is missing')\n"),
}
BROKEN = ("missing", "raising", "clash", "partial")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A directory holding the fake distribution and its modules."""
    root = tmp_path_factory.mktemp("site")
    info = root / "fakeplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    for name, text in MODULES.items():
        (root / name).write_text(text)
    (root / "fakeplug_good.py").write_text(Path(EXAMPLE).read_text())
    return root


def _run(site, *args, code=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]))
    argv = [sys.executable, "-c", code] if code else [sys.executable, "-m", "ldpcompress", *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def test_library_commands_do_not_load_plugins(site):
    """One broken plug-in made every command fail, `docs` included (entry points were loaded
    while building the parser): a command naming only library randomizers loads none."""
    for args in (["docs", "theory", "--section", "2.5"], ["--version"],
                 ["amplify", "--n", "1e4", "--eps0", "1", "--delta", "1e-6"],
                 ["demo", "--n", "2000", "--k", "10", "--json"]):
        done = _run(site, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "plug-in" not in done.stderr, (args, done.stderr)


def test_the_listing_names_each_broken_plugin_and_keeps_the_others(site):
    done = _run(site, "randomizers", "--json")
    assert done.returncode == 0, done.stderr
    res = json.loads(done.stdout)["results"]
    rows = {row["name"]: row for row in res["randomizers"]}
    assert rows["yes-no"]["class"] == "fakeplug_good.YesNo"  # after the broken ones
    assert rows["krr"]["class"] == "ldpcompress.randomizers.krr.KRR"
    assert "half-registered" not in rows  # withdrawn with its failing plug-in
    broken = {row["entry_point"].split(" =")[0]: row["error"] for row in res["plugins_not_loaded"]}
    assert sorted(broken) == sorted(BROKEN)
    assert broken["missing"].startswith("ModuleNotFoundError: No module named 'fakeplug_missing'")
    assert broken["raising"] == "RuntimeError: the plug-in cannot start: no licence file"
    assert broken["clash"] == ("ValueError: randomizer name 'krr' is taken by the library's "
                               "ldpcompress.randomizers.krr.KRR: fakeplug_clash.KRR cannot "
                               "replace it (register it under another name)")
    assert broken["partial"] == "ImportError: a dependency of the plug-in is missing"
    text = _run(site, "randomizers")
    assert text.returncode == 0 and "yes-no" in text.stdout
    assert text.stdout.count("plug-in not loaded: ") == len(BROKEN)


def test_a_plugin_randomizer_works_and_the_broken_ones_are_named_on_stderr(site):
    done = _run(site, "amplify", "--oracle", "yes-no", "--eps0", "1", "--n", "1e4", "--delta",
                "1e-6", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["params"]["oracle"] == "yes-no(eps=1)"
    warnings = [line for line in done.stderr.splitlines() if "plug-in" in line]
    assert len(warnings) == len(BROKEN)
    assert all(line.startswith("ldpcompress: warning: plug-in ") and "was not loaded: " in line
               for line in warnings)
    # an unknown name lists the known ones and why the broken plug-ins are missing
    done = _run(site, "amplify", "--oracle", "nope", "--eps0", "1", "--n", "1e4", "--delta", "1e-6")
    assert done.returncode == 2
    assert "unknown randomizer 'nope'" in done.stderr and "yes-no" in done.stderr
    assert "plug-in raising = fakeplug_raising:Thing (package fakeplug) was not loaded" \
        in done.stderr


def test_files_and_the_api_keep_the_librarys_class_for_its_names(site):
    """A ledger or a manifest naming 'krr' is read with the library's k-RR, before and after
    the plug-ins are loaded (the clash plug-in's k-RR would always answer 0)."""
    code = ("import json\n"
            "from ldpcompress.randomizers import registry\n"
            "before = registry.build('krr', {'k': 4, 'eps': 1.0})\n"
            "names = registry.names()  # loads every plug-in\n"
            "after = registry.check_spec({'randomizer': 'krr', 'params': {'k': 4, 'eps': 1.0}}, 'x')\n"
            "print(json.dumps(dict(before=type(before).__module__, after=type(after).__module__,\n"
            "    lookup=registry.lookup('krr').__module__, good='yes-no' in names,\n"
            "    broken=sorted(k.split(' =')[0] for k in registry.plugin_errors()))))\n")
    done = _run(site, code=code)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["before"] == out["after"] == out["lookup"] == "ldpcompress.randomizers.krr"
    assert out["good"] and out["broken"] == sorted(BROKEN)


def test_a_user_name_is_replaced_only_by_the_same_class_defined_again():
    """The same class defined again (a notebook cell re-run, a file loaded twice) replaces
    itself; another class under the name is refused, naming both."""
    from ldpcompress.randomizers import registry
    namespace, other = {"__name__": "cells_a"}, {"__name__": "cells_b"}
    code = ("from ldpcompress.randomizers import registry\n"
            "from ldpcompress.randomizers.krr import KRR\n"
            "class {cls}(KRR):\n"
            "    name = 'test-registry-mine'\n"
            "registry.register({cls})\n")
    exec(code.format(cls="Mine"), namespace)
    exec(code.format(cls="Mine"), namespace)  # re-run: replaces
    assert registry.lookup("test-registry-mine") is namespace["Mine"]
    with pytest.raises(ValueError, match=r"taken by cells_a\.Mine: cells_b\.Yours cannot "
                                         r"replace it"):
        exec(code.format(cls="Yours"), other)
    assert registry.lookup("test-registry-mine") is namespace["Mine"]
