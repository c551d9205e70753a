"""Shared pytest configuration.

In the accounting tests a numpy floating-point warning (overflow, invalid, divide) is an error:
a RuntimeWarning is never the only signal of a wrong privacy number , so any such
warning in these modules fails the test, and the library must avoid it rather than the test
silencing it.
"""
import os
import warnings

import numpy as np
import pytest

ACCOUNTING_MODULES = {
    "test_amplification.py",
    "test_blanket.py",
    "test_accountant.py",
    "test_composition.py",
    "test_oracle_accounting.py",
    "test_participation.py",
    "test_scalar_accounting.py",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if os.path.basename(str(item.fspath)) in ACCOUNTING_MODULES:
            item.add_marker(pytest.mark.filterwarnings("error::RuntimeWarning"))


@pytest.fixture
def fp_errors():
    """numpy floating-point errors raise (overflow, invalid, divide), RuntimeWarnings too."""
    with np.errstate(over="raise", invalid="raise", divide="raise"), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield
