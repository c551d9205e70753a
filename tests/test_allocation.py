"""Random allocation of shuffled rounds (docs/theory.md §2.16): the theorems checked by exact
enumeration (tests/reference/allocation.py), the bounds against the exact worst case, the
event in the accountant and in saved ledgers, and the validation."""
import itertools
import math
from dataclasses import replace
from fractions import Fraction as F

import pytest

from reference.allocation import (campaign_law, eps0_of, hockey, krr_table, mapped_table,
                                  mp_clone_pair, mp_product_delta, one_round_law, oue_like_table,
                                  product_law, rr_table, split_factor, worst_delta)

from ldpcompress.accounting import allocation as AL
from ldpcompress.accounting.accountant import Accountant
from ldpcompress.accounting.events import OracleShuffledRound, ShuffledRound
from ldpcompress.randomizers.krr import KRR
from ldpcompress.randomizers.pirappor import PIRappor
from ldpcompress.randomizers.rappor import OUE
from ldpcompress.accounting import kov as KOV

RR3 = rr_table(F(3))
KRR3 = krr_table(3, F(4))
OUE3 = oue_like_table(F(1, 2), F(1, 4))
ES = (F(1), F(3, 2), F(2))


def below(e: F) -> float:
    """A float eps <= log(e): the library's delta there is >= its delta at log(e)."""
    return math.nextafter(math.log(e), 0.0) if e > 1 else 0.0


def slack(x: float) -> float:
    return x * (1 + 1e-9) + 1e-15


def exact_worst(table_or_policy, inputs, n, T, e, k=1, scheme="one"):
    policy = table_or_policy if callable(table_or_policy) else [table_or_policy] * T
    return worst_delta(lambda vals: campaign_law(vals, T, k, scheme, policy), inputs, n, e)


# ---------------------------------------------------------------------------------------------
# Theorem 1: one report per device, the same randomizer: the view is a data-independent split
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table, inputs, n_max", [
    (RR3, 2, 4), (KRR3, 3, 3), pytest.param(OUE3, 3, 3, marks=pytest.mark.slow)],
    ids=["binary RR", "3-RR", "OUE, 3 items"])
@pytest.mark.parametrize("T", [2, 3])
def test_one_report_campaign_is_a_random_split_of_one_round(table, inputs, n_max, T):
    """P(view) = P_one-round(union of the rounds) x the split's probability, exactly, for every
    dataset: the view is a data-independent post-processing of one round and determines it."""
    for n in range(1, n_max + 1):
        for values in itertools.combinations_with_replacement(range(inputs), n):
            law = campaign_law(values, T, 1, "one", [table] * T)
            one = one_round_law(table, values)
            assert sum(law.values()) == 1
            for view, p in law.items():
                union = tuple(sorted(y for outs in view for y in outs))
                assert p == one[union] * split_factor(view)


def test_fixed_size_batches_are_one_round_too():
    """True shuffling then batches (an exchangeable assignment, not independent): the same
    data-independent split of one round, exactly."""
    for table, inputs in ((RR3, 2), (KRR3, 3)):
        for values in itertools.combinations_with_replacement(range(inputs), 4):
            law = campaign_law(values, 2, 1, "batches", [table] * 2)
            one = one_round_law(table, values)
            merged: dict = {}
            for view, p in law.items():
                union = tuple(sorted(y for outs in view for y in outs))
                merged[union] = merged.get(union, 0) + p
            assert merged == one
        for e in ES:
            assert (exact_worst(table, inputs, 4, 2, e, 1, "batches")
                    == worst_delta(lambda v: one_round_law(table, v), inputs, 4, e))


@pytest.mark.parametrize("T", [2, 3])
def test_one_report_campaign_has_the_one_round_divergence(T):
    for e in ES:
        for others in itertools.product(range(3), repeat=2):
            a = hockey(campaign_law((0,) + others, T, 1, "one", [KRR3] * T),
                       campaign_law((1,) + others, T, 1, "one", [KRR3] * T), e)
            b = hockey(one_round_law(KRR3, (0,) + others), one_round_law(KRR3, (1,) + others), e)
            assert a == b


# ---------------------------------------------------------------------------------------------
# The library's bound >= the exact worst case >= its attack, one report per device
# ---------------------------------------------------------------------------------------------

def _bracket(ev, table, inputs, n, T, policy=None):
    for e, exact in zip(ES, exact_worst(policy or table, inputs, n, T, list(ES))):
        exact = float(exact)
        res = AL.delta(ev, below(e))
        assert exact <= slack(res.value), (e, exact, res.value)
        if res.lower is not None and policy is None:
            assert res.lower <= slack(exact)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_binary_rr_campaign_between_bound_and_attack(n):
    for ev in (AL.AllocatedShuffledRounds(n, 3, eps0=math.log(3)),
               AL.AllocatedShuffledRounds(n, 3, eps0=math.log(3), k_rr=2)):
        _bracket(ev, RR3, 2, n, 3)


@pytest.mark.parametrize("n", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_krr_and_oracles_campaign_between_bound_and_attack(n):
    _bracket(AL.AllocatedShuffledRounds(n, 3, eps0=math.log(4), k_rr=3), KRR3, 3, n, 3)
    krr = KRR(3, 1.5)
    st = krr.shuffle_structure()
    table = [[st.a1 if y == x else (1 - st.a1) / 2 for y in range(3)] for x in range(3)]
    _bracket(AL.AllocatedShuffledRounds(n, 2, oracle=krr), table, 3, n, 2)
    oue = OUE(3, 1.1)
    st = oue.shuffle_structure()
    _bracket(AL.AllocatedShuffledRounds(n, 2, oracle=oue), oue_like_table(st.a1, st.a), 3, n, 2)


# ---------------------------------------------------------------------------------------------
# Theorem 2: adaptive rounds (items or randomizers chosen from earlier rounds)
# ---------------------------------------------------------------------------------------------

MAPS3 = [(0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 0, 1), (1, 1, 2), (2, 1, 1)]


def item_policy(table, choose):
    """Round t feeds item maps[choose(t, past)][x] to ``table`` (maps may merge x1 and x1')."""
    def policy(t, past):
        return tuple(tuple(r) for r in mapped_table(table, MAPS3[choose(t, past) % len(MAPS3)]))
    return policy


CHOICES = [
    lambda t, past: t,                                            # fixed, different per round
    lambda t, past: 3 + sum(y == 0 for outs in past for y in outs),  # merges items adaptively
    lambda t, past: len(past[-1]) if past else 0,                    # by the last round's size
    lambda t, past: sum(sum(outs) for outs in past),
]


@pytest.mark.slow
@pytest.mark.parametrize("choose", range(len(CHOICES)))
def test_adaptive_items_below_the_adaptive_bound(choose):
    """k-RR and an OUE-like oracle fed per-round items chosen from earlier rounds (some rounds
    mapping x1 and x1' to one item): exact worst case <= the adaptive (generic) bound."""
    oue = OUE(3, 1.1)
    st = oue.shuffle_structure()
    for n, T, ev, table in (
            (3, 3, AL.AllocatedShuffledRounds(3, 3, eps0=math.log(4), k_rr=3,
                                              randomizers="adaptive"), KRR3),
            (2, 3, AL.AllocatedShuffledRounds(2, 3, oracle=oue, randomizers="adaptive"),
             oue_like_table(st.a1, st.a))):
        policy = item_policy(table, CHOICES[choose])
        _bracket(ev, table, 3, n, T, policy)
        # the check can fail: the exact value is above the (non-adaptive) one-round bound of
        # twice as many devices
        e = ES[1]
        assert float(exact_worst(policy, 3, n, T, e)) > AL.delta(
            replace(ev, n=2 * n, randomizers="same"), below(e)).value


def test_adaptive_rounds_use_the_generic_pair_and_the_same_randomizer_attack():
    """Adaptive rounds: the upper bound is the generic one at the realised eps0 (no blanket:
    docs/theory.md §2.16); the lower bound the attack on the same randomizer in every round.
    Fails before: the adaptive event used k-RR's and the oracles' blankets."""
    from ldpcompress.accounting import amplification as amp
    o = PIRappor(100, 3.0)
    ev = AL.AllocatedShuffledRounds(10**4, 30, oracle=o, randomizers="adaptive")
    res = AL.epsilon(ev, 1e-6)
    eps0 = o.shuffle_structure().eps0
    assert ev.round_event == ShuffledRound(10**4, eps0)
    assert res.value == amp.epsilon(10**4, eps0, 1e-6, lower=False).value
    same = amp.epsilon(10**4, delta=1e-6, oracle=o)
    assert res.lower == same.lower and res.value > same.value
    krr = AL.AllocatedShuffledRounds(10**4, 30, eps0=2.0, k_rr=50, randomizers="adaptive")
    e0 = krr.round_event.eps0
    assert 2.0 <= e0 <= 2.0 * (1 + 1e-12)  # k-RR's realised eps0, rounded up
    assert AL.delta(krr, 0.5).value == amp.delta(10**4, e0, 0.5, lower=False).value


@pytest.mark.parametrize("n", [2, 3])
def test_adaptive_mixed_randomizers_below_the_generic_bound_at_the_largest_eps0(n):
    """Two different randomizers (binary RR at e^eps0 = 2 and 3, and a flipped one) chosen from
    the past: the generic bound at the largest eps0 holds, one round at n."""
    tables = [rr_table(F(2)), rr_table(F(3)), [row[::-1] for row in rr_table(F(3))]]
    e0 = max(eps0_of(t) for t in tables)
    ev = AL.AllocatedShuffledRounds(n, 3, eps0=e0 * (1 + 1e-12), randomizers="adaptive")
    for pick in (lambda t, past: t, lambda t, past: sum(sum(o) for o in past) + t):
        _bracket(ev, None, 2, n, 3, lambda t, past, pick=pick: tables[pick(t, past) % 3])


# ---------------------------------------------------------------------------------------------
# Several reports per device
# ---------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("table, inputs, eps0, k_rr, n", [(RR3, 2, math.log(3), None, 3),
                                                          (KRR3, 3, math.log(4), 3, 2)],
                         ids=["binary RR (any eps0-LDP)", "3-RR"])
def test_two_reports_per_device_below_their_bounds(table, inputs, eps0, k_rr, n):
    for scheme, T in (("independent", 3), ("blocks", 4), ("distinct", 3), ("distinct", 4)):
        ev = AL.AllocatedShuffledRounds(n, T, 2, scheme, eps0=eps0, k_rr=k_rr)
        for e, exact in zip(ES, exact_worst(table, inputs, n, T, list(ES), 2, scheme)):
            exact = float(exact)
            res = AL.delta(ev, below(e))
            assert exact <= slack(res.value), (scheme, T, e)
            assert res.lower is not None and res.lower <= slack(exact), (scheme, T, e)


def _mp_union_delta(n, k, p, q, eps):
    """The union count's hockey-stick divergence by exact binomials at 40 digits (mpmath)."""
    import mpmath as mp
    with mp.workdps(40):
        p, q, m = mp.mpf(p), mp.mpf(q), k * n
        Q = [mp.binomial(m, c) * q ** c * (1 - q) ** (m - c) for c in range(m + 1)]
        own = [mp.binomial(k, j) * p ** j * (1 - p) ** (k - j) for j in range(k + 1)]
        R = [mp.binomial(m - k, c) * q ** c * (1 - q) ** (m - k - c) for c in range(m - k + 1)]
        P = [sum(own[j] * R[c - j] for j in range(k + 1) if 0 <= c - j <= m - k)
             for c in range(m + 1)]
        E = mp.exp(eps)
        return max(sum(max(a - E * b, 0) for a, b in zip(P, Q)),
                   sum(max(b - E * a, 0) for a, b in zip(P, Q)))


@pytest.mark.parametrize("n, k, eps0, K, eps", [(3, 2, 1.0, 2, 0.3), (10, 3, 2.0, 2, 0.5),
                                                (50, 2, 1.5, 5, 0.1), (200, 4, 3.0, 100, 1.0)])
def test_union_count_attack_against_mpmath(n, k, eps0, K, eps):
    z = math.exp(eps0) + K - 1
    p, q = math.exp(eps0) / z, 1 / z
    got, exact = AL.union_count_delta(n, k, p, q, eps), float(_mp_union_delta(n, k, p, q, eps))
    assert got <= exact <= got * (1 + 1e-7) + 1e-9


def test_union_attack_is_reported_for_every_scheme_without_an_oracle():
    for scheme in ("independent", "distinct", "blocks"):
        res = AL.epsilon(AL.AllocatedShuffledRounds(10**4, 30, 2, scheme, eps0=3.0, k_rr=10),
                         1e-6)
        union = next(b for b in res.bounds if b.name == "lower_union").value
        assert 0 < union <= res.lower <= res.value
    res = AL.epsilon(AL.AllocatedShuffledRounds(10**4, 30, 2, "distinct",
                                                oracle=PIRappor(100, 3.0)), 1e-6)
    assert res.lower is None


def test_blocks_are_exactly_the_composition_of_one_round():
    """Non-adaptive blocks: the k-fold product of the one-round view (block by block)."""
    for others in itertools.product(range(2), repeat=2):
        for e in ES:
            a = hockey(campaign_law((0,) + others, 4, 2, "blocks", [RR3] * 4),
                       campaign_law((1,) + others, 4, 2, "blocks", [RR3] * 4), e)
            b = hockey(product_law([one_round_law(RR3, (0,) + others)] * 2),
                       product_law([one_round_law(RR3, (1,) + others)] * 2), e)
            assert a == b


def test_adaptive_blocks_below_the_composed_adaptive_bound():
    n, T = 3, 4
    tables = [rr_table(F(2)), rr_table(F(3)), [row[::-1] for row in rr_table(F(3))]]
    ev = AL.AllocatedShuffledRounds(n, T, 2, "blocks", eps0=math.log(3) * (1 + 1e-12),
                                    randomizers="adaptive")
    policy = lambda t, past: tables[(sum(sum(o) for o in past) + t) % 3]  # noqa: E731
    for e, exact in zip(ES, exact_worst(policy, 2, n, T, list(ES), 2, "blocks")):
        assert float(exact) <= slack(AL.delta(ev, below(e)).value)


@pytest.mark.slow
def test_distinct_rounds_evidence_below_the_composition():
    """Evidence only (not used for soundness, docs/theory.md §2.16): distinct rounds are
    never above the 2-fold composition of the exact one-round pair in these cases."""
    for table, inputs, sizes in ((RR3, 2, ((2, 3), (3, 3), (3, 4))),
                                 (KRR3, 3, ((2, 3), (2, 4), (3, 3)))):
        for n, T in sizes:
            dist = exact_worst(table, inputs, n, T, list(ES), 2, "distinct")
            comp = worst_delta(lambda v: product_law([one_round_law(table, v)] * 2), inputs, n,
                               list(ES))
            assert all(d <= c for d, c in zip(dist, comp))


def test_composed_bound_against_mpmath_composition_of_the_clone_pair():
    """Blocks of the generic bound: the accountant's 2-fold composition is above the exact
    2-fold product of the FMT21 pair (mpmath) and close to it (PLD grid)."""
    n, eps0 = 4, 1.0
    P, Q = mp_clone_pair(n, eps0)
    ev = AL.AllocatedShuffledRounds(n, 8, 2, "blocks", eps0=eps0)
    for eps in (0.3, 0.8, 1.5):
        exact = float(mp_product_delta(P, Q, 2, eps))
        got = AL.delta(ev, eps).value
        assert exact <= got <= exact * 1.05 + 1e-6


# ---------------------------------------------------------------------------------------------
# The event: one round at n, composition, ledgers, validation
# ---------------------------------------------------------------------------------------------

def test_one_report_event_is_the_one_round_event():
    o = PIRappor(100, 3.0)
    ev = AL.AllocatedShuffledRounds(10**4, 30, oracle=o)
    assert ev.round_event == OracleShuffledRound(10**4, o)
    assert KOV.approx_dp(ev) == KOV.approx_dp(OracleShuffledRound(10**4, o))
    ev = AL.AllocatedShuffledRounds(10**4, 30, eps0=2.0, randomizers="adaptive")
    assert ev.round_event == ShuffledRound(10**4, 2.0)
    a = Accountant(h=1e-3).compose(AL.AllocatedShuffledRounds(10**4, 30, 3, "blocks", eps0=2.0))
    b = Accountant(h=1e-3).compose(ShuffledRound(10**4, 2.0), 3)
    assert a.epsilon(1e-6, method="pld").value == b.epsilon(1e-6, method="pld").value
    assert a.epsilon(1e-6, method="rdp").value == pytest.approx(
        b.epsilon(1e-6, method="rdp").value, rel=1e-12)


def test_distinct_rounds_use_the_linked_bound():
    ev = AL.AllocatedShuffledRounds(10**4, 30, 2, "distinct", eps0=1.5)
    assert ev.round_event == ShuffledRound(10**4, 3.0)
    assert ev.times == 1


def test_campaign_query_matches_one_round_query_and_ledger_round_trip(tmp_path):
    from ldpcompress.accounting import amplification as amp
    o = PIRappor(1000, 6.0)
    ev = AL.AllocatedShuffledRounds(10**5, 6, oracle=o)
    res, one = AL.epsilon(ev, 1e-6), amp.epsilon(10**5, delta=1e-6, oracle=o)
    assert (res.value, res.lower) == (one.value, one.lower)
    acct = Accountant().compose(ev).compose(AL.AllocatedShuffledRounds(10**5, 30, 2, "blocks",
                                                                       eps0=2.0, k_rr=50))
    path = tmp_path / "ledger.json"
    acct.save(path)
    back = Accountant.load(path)
    assert back.events == acct.events
    assert back.epsilon(1e-6).value == acct.epsilon(1e-6).value


@pytest.mark.parametrize("kw, match", [
    (dict(rounds=0), r"rounds must be an integer in \[1, 1000000000\]"),
    (dict(rounds=2.5), r"rounds must be an integer"),
    (dict(per_device=31), r"per_device must be an integer in \[1, 30\]"),
    (dict(per_device=0), r"per_device must be an integer in \[1, 30\]"),
    (dict(n=0), r"n must be an integer in \[1, 10000000000\]"),
    (dict(scheme="random"), r"scheme must be one of"),
    (dict(randomizers="mixed"), r"randomizers must be one of"),
    (dict(relation="add_remove"), r"total number of reports"),
    (dict(per_device=2, scheme="independent", randomizers="adaptive"), r"scheme='blocks'"),
    (dict(eps0=None), r"give eps0="),
    (dict(eps0=-1.0), r"eps0"),
    (dict(eps0=400.0, per_device=2), r"above the supported"),
])
def test_validation_names_the_parameter(kw, match):
    args = dict(n=100, rounds=30, eps0=1.0)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        AL.AllocatedShuffledRounds(**args)


def test_adaptive_gaussian_scalar_is_refused_with_the_reason():
    from ldpcompress.randomizers import registry
    g = registry.build("gaussian-scalar", dict(lo=0.0, hi=1.0, sigma=1.0))
    AL.AllocatedShuffledRounds(1000, 5, oracle=g)  # same input every round: its blanket
    with pytest.raises(ValueError, match="no finite eps0"):
        AL.AllocatedShuffledRounds(1000, 5, oracle=g, randomizers="adaptive")


def test_max_eps0_one_report_is_the_one_round_inverse():
    from ldpcompress.accounting import inverse
    a = AL.max_eps0(10**4, 30, 1.0, 1e-6, k_rr=100)
    assert a == inverse.max_eps0(10**4, 1.0, 1e-6, k=100)
    b = AL.max_eps0(10**4, 30, 1.0, 1e-6, k_rr=100, randomizers="adaptive")
    assert b <= a  # the split pair is not used for adaptive rounds
    ev = AL.AllocatedShuffledRounds(10**4, 30, eps0=b, k_rr=100, randomizers="adaptive")
    assert AL.epsilon(ev, 1e-6, lower=False).value <= 1.0


def test_saved_campaign_edits_never_lower_the_bound(tmp_path):
    """Every key of a saved campaign deleted, and garbage in every field: refused (naming the
    file) or no more private (per_device, scheme and randomizers are required in a file)."""
    import json
    acct = Accountant().compose(AL.AllocatedShuffledRounds(1000, 6, 2, "blocks", eps0=1.0,
                                                           k_rr=5, randomizers="adaptive"))
    base = acct.epsilon(1e-6).value
    doc = json.loads(acct.to_json())
    entry = doc["events"][0]
    edits = []
    for key in [k for k in entry if k != "event"]:
        edits.append({k: v for k, v in entry.items() if k != key})
        for garbage in (None, 0, -1, 2.5, "x", [], True, 10 ** 400):
            edits.append(dict(entry, **{key: garbage}))
    refused = 0
    for edit in edits:
        path = tmp_path / "ledger.json"
        path.write_text(json.dumps(dict(doc, events=[edit])))
        try:
            loaded = Accountant.load(path)
        except ValueError as err:
            assert str(path) in str(err)
            refused += 1
            continue
        assert loaded.epsilon(1e-6).value >= base, edit
    assert refused >= len(edits) // 2


# ---------------------------------------------------------------------------------------------
# The CLI: compose and amplify with --allocation
# ---------------------------------------------------------------------------------------------

def _cli(argv, capsys):
    import json
    from ldpcompress.cli.main import main
    code = main(argv)
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 and "--json" in argv else out.out), out.err


def test_cli_compose_allocation_matches_the_api(capsys, tmp_path):
    path = tmp_path / "ledger.json"
    code, out, _ = _cli(["compose", "--n", "1e4", "--eps0", "2", "--k", "20", "--allocation",
                         "6", "--per-device", "2", "--scheme", "blocks", "--delta", "1e-6",
                         "--ledger", str(path), "--json"], capsys)
    assert code == 0
    ev = AL.AllocatedShuffledRounds(10**4, 6, 2, "blocks", eps0=2.0, k_rr=20)
    assert Accountant.load(path).events == [(ev, 1)]
    assert out["results"]["eps"] == Accountant().compose(ev).epsilon(1e-6).value
    assert out["results"]["ledger"]["events"][0]["params"]["per_device"] == 2


def test_cli_amplify_allocation_is_the_one_round_answer(capsys):
    code, out, _ = _cli(["amplify", "--n", "1e4", "--eps0", "3", "--oracle", "pi-rappor",
                         "--k", "100", "--allocation", "30", "--delta", "1e-6", "--json"], capsys)
    assert code == 0
    from ldpcompress.accounting import amplification as amp
    one = amp.epsilon(10**4, delta=1e-6, oracle=PIRappor(100, 3.0))
    assert (out["results"]["value"], out["results"]["lower"]) == (one.value, one.lower)
    assert out["params"]["rounds"] == 30
    code, out, _ = _cli(["amplify", "--inverse", "--n", "1e4", "--k", "20", "--allocation",
                         "6", "--eps", "0.5", "--delta", "1e-6", "--json"], capsys)
    assert code == 0 and out["results"]["value"] == AL.max_eps0(10**4, 6, 0.5, 1e-6, k_rr=20)


@pytest.mark.parametrize("argv, match", [
    (["--allocation", "6", "--gamma", "0.1"], "--allocation and --gamma cannot be combined"),
    (["--allocation", "6", "--sample", "10"], "--allocation and --sample cannot be combined"),
    (["--allocation", "0"], r"--allocation must be an integer in \[1, 1000000000\]"),
    (["--allocation", "6", "--per-device", "7"], r"--per-device must be an integer in \[1, 6\]"),
    (["--allocation", "6", "--per-device", "0"], r"--per-device must be an integer in \[1, 6\]"),
    (["--allocation", "2.5"], r"--allocation must be an integer"),
    (["--allocation", "6", "--n", "0"], r"--n must be an integer in \[1, "),
    (["--allocation", "6", "--relation", "add_remove"], "reveals whether device 1 is present"),
    (["--per-device", "2"], "give --allocation"),
    (["--allocation", "6", "--per-device", "2", "--adaptive"], "scheme='blocks'"),
])
@pytest.mark.parametrize("command", ["compose", "amplify"])
def test_cli_allocation_bad_input_exit_2(capsys, command, argv, match):
    base = ["--n", "1e4", "--eps0", "2", "--delta", "1e-6"] + (["--rounds", "2"] if
                                                                 "--allocation" not in argv
                                                                 and command == "compose"
                                                                 else [])
    code, _, err = _cli([command] + base + argv, capsys)
    assert code == 2
    import re
    assert re.search(match, err), err
