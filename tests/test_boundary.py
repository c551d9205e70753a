"""Arguments are validated where they enter (the command line, each public function) and passed
on checked: internal helpers do not check them again."""
import collections
import inspect

import pytest

import ldpcompress as L
from ldpcompress.core import validate as V
from ldpcompress.estimation import demo

N = 4321  # a value no other argument of these calls has


@pytest.fixture
def checks(monkeypatch):
    """Where n = N is validated: (module, function) of each caller of a validator -> count."""
    seen = collections.Counter()
    for name in ("users", "shuffle_users", "integer_at_least"):
        def wrapped(value, *args, _f=getattr(V, name), **kwargs):
            if value == N and not isinstance(value, bool):
                caller = inspect.stack()[1]
                seen[(caller.frame.f_globals["__name__"], caller.function)] += 1
            return _f(value, *args, **kwargs)
        monkeypatch.setattr(V, name, wrapped)
    return seen


def test_an_epsilon_query_checks_n_once(checks):
    # was twice: the query's arguments, then the closed form (a public function) again
    L.epsilon(N, 1.0, 1e-6)
    assert sum(checks.values()) == 1, checks
    checks.clear()
    L.delta(N, 1.0, 0.1)
    assert sum(checks.values()) == 1, checks


def test_the_demo_checks_its_own_arguments_once(checks):
    demo.run(n=N, k=20, eps=1.0, delta=1e-6)
    # run is the boundary; below it, only public entry points check (each query once, and the
    # public blanket profiles), never the demo's internal steps (the simulated data)
    inside = {where for where in checks if where[0] == demo.__name__}
    assert inside == {(demo.__name__, "run")} and checks[(demo.__name__, "run")] == 1, checks
    assert not any(fn.startswith("_closed_form") or fn == "closed_form_epsilon"
                   for _, fn in checks), checks


def test_public_entry_points_still_check():
    with pytest.raises(ValueError, match="n"):
        demo.zipf_data(-1, 5, 1.1, 0)
    with pytest.raises(ValueError, match="n"):
        next(demo.zipf_chunks(1.5, 5, 1.1, 0))
    with pytest.raises(ValueError, match="n"):
        L.accounting.amplification.closed_form_epsilon(0, 1.0, 1e-6)
    with pytest.raises(ValueError, match="delta0"):
        L.accounting.amplification.approx_epsilon(100, 1.0, 1.5, 1e-6)


def test_the_eps0_searches_check_n_once(checks):
    # was once per probe of the search (the public epsilon() and the blanket profiles inside
    # the loop): 102 checks of n in the demo's three searches
    from ldpcompress.accounting import inverse
    from ldpcompress.randomizers import PIRappor
    inverse.max_eps0(N, 1.0, 1e-6)
    assert sum(checks.values()) == 1, checks
    checks.clear()
    inverse.max_eps0(N, 1.0, 1e-6, lambda e: PIRappor(20, e), memo={})
    assert sum(checks.values()) == 1, checks
    checks.clear()
    inverse.min_n(1.0, 1.0, 1e-6, k=4)  # no n given: the search's own n are not checked
    assert sum(checks.values()) == 0, checks


def test_a_ledger_checks_n_when_the_event_is_made(checks):
    from ldpcompress.accounting import Accountant, KRRShuffledRound, ShuffledRound
    acct = Accountant().compose(ShuffledRound(N, 1.0), times=3)
    acct.compose(KRRShuffledRound(N, 1.0, 5))
    assert sum(checks.values()) == 2, checks  # each event's constructor, once
    acct.epsilon(1e-6, compare=True)
    acct.delta(1.0)
    assert sum(checks.values()) == 2, checks  # the queries and the backends: no check of n


def test_the_whole_demo_checks_n_at_most_five_times(checks):
    from ldpcompress.cli.main import main
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["demo", "--n", str(N), "--k", "20"]) == 0
    # the command line, demo.run, the eps0 searches and the chosen oracle's query, counted
    # where they enter (not the validators' calls of each other); was 102 (146 with the
    # randomizers' checks)
    entries = sum(c for (module, _), c in checks.items() if module != V.__name__)
    assert entries <= 5, checks
