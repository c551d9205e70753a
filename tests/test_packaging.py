"""Packaging: one [project] table, one version source, an SPDX license, the extras named."""
import importlib.metadata as md
from pathlib import Path

import pytest

import ldpcompress

ROOT = Path(__file__).resolve().parent.parent


def test_one_project_table_and_one_version_source():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert not (ROOT / "setup.cfg").exists() and not (ROOT / "setup.py").exists()
    project = meta["project"]
    assert project["dynamic"] == ["version"] and "version" not in project
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "ldpcompress.__version__"}
    assert project["license"] == "Apache-2.0"  # an SPDX expression, no license classifier
    assert not any(c.startswith("License ::") for c in project["classifiers"])
    assert set(project["optional-dependencies"]) >= {"plot", "dask", "dp-accounting", "test"}


def test_installed_metadata_matches_the_package():
    assert md.version("ldpcompress") == ldpcompress.__version__
    assert md.metadata("ldpcompress")["License-Expression"] == "Apache-2.0"
