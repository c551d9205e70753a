"""The events are data-only records (accounting/events.py) and the backends dispatch on them:
every event class a ledger may name is known to the PLD backend, the backends say what they
support, and the deprecated event methods warn and answer as the backends do."""
import ast
import math
from pathlib import Path

import numpy as np
import pytest

from ldpcompress.accounting import accountant  # noqa: F401  (registers every event class)
from ldpcompress.accounting import event_pld as EPLD
from ldpcompress.accounting import event_rdp as ERDP
from ldpcompress.accounting import events as E
from ldpcompress.accounting import interop as IO
from ldpcompress.accounting import kov as KOV
from ldpcompress.accounting import plan as PL
from ldpcompress.accounting import pure as PU
from ldpcompress.accounting.allocation import AllocatedShuffledRounds
from ldpcompress.accounting.allocation_central import AllocatedGaussian, AllocatedLaplace

EVENTS_PY = Path(E.__file__)
VALIDATION = {"checks", "sampling"}  # the accounting modules the records may import


def _module_imports(tree: ast.Module) -> set[str]:
    """Relative modules imported at module level (not inside functions)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names.update([node.module] if node.module else [a.name for a in node.names])
    return names


def test_events_import_only_validation_helpers_of_the_accounting():
    tree = ast.parse(EVENTS_PY.read_text(encoding="utf-8"))
    assert _module_imports(tree) <= VALIDATION, _module_imports(tree)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name != "Event"]
    behaviour = {"pld", "rdp", "approx_dp", "pure_eps", "to_dp_event", "work", "gaussian_mu",
                 "_profile"}
    for cls in classes:  # the records define no accounting behaviour of their own
        methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
        assert not methods & behaviour, (cls.name, methods & behaviour)


def _samples() -> list:
    from ldpcompress.randomizers import PIRappor
    return [E.ShuffledRound(1000, 1.0), E.KRRShuffledRound(1000, 1.0, 4),
            E.OracleShuffledRound(1000, PIRappor(20, 1.0)), E.Gaussian(2.0), E.Laplace(2.0),
            E.PureDP(0.5), E.ApproxDP(0.5, 1e-6), E.PairOfPmfs((0.6, 0.4), (0.4, 0.6)),
            E.PoissonSampledGaussian(1.0, 0.01), E.PoissonSampledLaplace(2.0, 0.1),
            E.ShuffledSGDPass(1000, 1.0, delta0=1e-9),
            E.SampledShuffledRound(1000, 1.0, gamma=0.5),
            E.SampledKRRShuffledRound(1000, 1.0, 4, sample=100),
            E.SampledOracleShuffledRound(1000, PIRappor(20, 1.0), gamma=0.5),
            PU.RandomizedResponse(0.5, 3), AllocatedGaussian(2.0, steps=10),
            AllocatedLaplace(2.0, steps=10),
            AllocatedShuffledRounds(1000, 4, eps0=1.0)]


def test_every_event_a_ledger_may_name_has_a_pld():
    samples = _samples()
    assert {type(e).__name__ for e in samples} == set(E.EVENTS)  # the registry, filled once accountant is imported
    for event in samples:
        assert EPLD.supports(event), type(event).__name__
        assert EPLD.pld(event, 1e-2, "up") is not None, type(event).__name__


def test_backends_say_what_they_support():
    assert KOV.supports(E.PureDP(1.0)) and not KOV.supports(E.Gaussian(1.0))
    assert KOV.approx_dp(E.ApproxDP(0.5, 1e-6)) == (0.5, 1e-6)
    assert PU.supports(E.Laplace(2.0)) and not PU.supports(E.ApproxDP(0.5, 1e-6))
    assert PU.pure_eps(E.Laplace(2.0, sensitivity=1.0)) == 0.5  # exact rational 1/2
    assert ERDP.supports(E.Gaussian(1.0)) and not ERDP.supports(E.ApproxDP(0.5, 1e-6))
    assert ERDP.rdp(E.ApproxDP(0.5, 1e-6), np.array([2.0])) is None
    assert IO.supports(E.Gaussian(1.0)) and not IO.supports(E.ShuffledRound(100, 1.0))
    assert not EPLD.supports(E.Event())
    with pytest.raises(TypeError, match="Event has no PLD"):
        EPLD.pld(E.Event(), 1e-3, "up")
    # connect-the-dots events have no optimistic grid; Gaussians have no mean-rounded one
    assert EPLD.pld(E.KRRShuffledRound(1000, 1.0, 4), 1e-3, "down") is None
    assert not EPLD.mean_grid(E.Gaussian(1.0)) and EPLD.mean_grid(E.PureDP(1.0))


def test_pure_dp_rdp_is_randomized_responses_closed_form():
    """Independent check of one dispatched kernel: the Renyi divergence of binary randomized
    response at eps, order 2: log(p^2/q + q^2/p) with p = e^eps/(1+e^eps), q = 1 - p."""
    eps = 0.7
    p = math.exp(eps) / (1.0 + math.exp(eps))
    q = 1.0 - p
    got = float(ERDP.rdp(E.PureDP(eps), np.array([2.0]))[0])
    assert got == pytest.approx(math.log(p * p / q + q * q / p), rel=1e-9)


@pytest.mark.parametrize("method, backend, args", [
    ("pld", lambda e: EPLD.pld(e, 1e-3, "up"), (1e-3, "up")),
    ("rdp", lambda e: ERDP.rdp(e, np.array([2.0, 8.0])), (np.array([2.0, 8.0]),)),
    ("approx_dp", KOV.approx_dp, ()),
    ("pure_eps", PU.pure_eps, ()),
    ("work", lambda e: PL.work(e, 1e-3, 8), (1e-3, 8)),
])
def test_deprecated_event_methods_warn_and_delegate(method, backend, args):
    event = E.PureDP(0.8)
    with pytest.warns(DeprecationWarning, match=rf"Event\.{method}\(\) is deprecated"):
        old = getattr(event, method)(*args)
    new = backend(event)
    if method == "pld":
        assert old.epsilon(1e-6) == new.epsilon(1e-6)
    elif method == "rdp":
        assert np.array_equal(old, new)
    else:
        assert old == new
