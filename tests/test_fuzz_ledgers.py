"""Property-based fuzzing of saved ledgers and item-domain files (hypothesis).

Ledgers: every mutation of a saved ledger's JSON text is either refused with a ValueError
naming what is wrong (and, through ``Accountant.load``, the file), or loads into an accountant
whose eps(delta) is no smaller than the unedited ledger's. The mutations are chosen among
edits that cannot legitimately make a ledger more private (garbage values, deleted or unknown
keys, repeated events, more rounds, deep nesting, truncation, edits of a stored law); they are
applied to whatever paths the saved text holds, so the test follows the format as it changes.
Domain files: any bytes either give a domain whose names are exactly the file's lines (no
name renders like another) or a ValueError naming the file. Outcomes are tallied per kind and
printed at the end of the module (``pytest -s``).
"""
import collections
import json
import os
import unicodedata
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import json_paths

from ldpcompress import ItemDomain, PIRappor, SubsetSelection
from ldpcompress.accounting import (Accountant, AllocatedGaussian, AllocatedLaplace, Gaussian,
                                    KRRShuffledRound, Laplace, OracleShuffledRound, PureDP,
                                    ShuffledRound)
from ldpcompress.accounting.allocation import AllocatedShuffledRounds

SCALE = int(os.environ.get("LDPC_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=SCALE or 60, deadline=None, derandomize=not SCALE,
                database=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.function_scoped_fixture])
TALLY = collections.Counter()
DELTA = 1e-6


@pytest.fixture(scope="module", autouse=True)
def report_tally():
    yield
    print("\nfuzzed ledger and domain inputs (kind, outcome): count")
    for key, value in sorted(TALLY.items()):
        print(f"  {key}: {value}")
    print(f"  total: {sum(TALLY.values())}")


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """A saved ledger (its text) and its eps(DELTA). Fields with defaults hold other values
    where the default would be more private (a sensitivity above 1, epochs and per_record above
    1), so a deleted field read as its default would lower eps."""
    acct = Accountant()
    acct.compose(PureDP(0.25), times=3)
    acct.compose(Gaussian(sigma=8.0, sensitivity=2.0))
    acct.compose(Laplace(scale=6.0, sensitivity=2.0))
    acct.compose(ShuffledRound(n=1000, eps0=1.0), times=2)
    acct.compose(KRRShuffledRound(n=1000, eps0=1.0, k=5))
    acct.compose(OracleShuffledRound(1000, SubsetSelection(8, 2.0)))
    acct.compose(OracleShuffledRound(1000, PIRappor(8, 2.0)))
    acct.compose(AllocatedShuffledRounds(1000, 6, 2, "blocks", eps0=1.0, k_rr=5,
                                         randomizers="adaptive"))
    acct.compose(AllocatedShuffledRounds(1000, 30, 1, "distinct", oracle=PIRappor(8, 2.0)))
    acct.compose(AllocatedGaussian(3.0, steps=200, per_record=2, epochs=2, sensitivity=1.5))
    acct.compose(AllocatedLaplace(6.0, steps=20, per_record=2, epochs=2, sensitivity=2.0))
    path = tmp_path_factory.mktemp("ledger") / "ledger.json"
    acct.save(path)
    return path.read_text(), acct.epsilon(DELTA).value


def _get(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def _set(doc, path, value):
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


def _check(kind, text, base_eps, tmp_path):
    """The property: refused with a clear ValueError (naming the file), or no more private."""
    path = tmp_path / "edited.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        acct = Accountant.load(path)
    except ValueError as err:
        assert str(path) in str(err) and len(str(err)) > len(str(path)) + 5, err
        TALLY[(kind, "refused")] += 1
        return
    try:
        eps = acct.epsilon(DELTA).value
    except ValueError as err:  # e.g. no method applies to an edited but valid setting
        assert str(err)
        TALLY[(kind, "loaded, query refused")] += 1
        return
    assert eps >= base_eps, (kind, eps, base_eps)
    TALLY[(kind, "loaded, no smaller")] += 1


# values no privacy parameter accepts (a valid number such as sigma = 1e308 would make a ledger
# legitimately more private: that is an edit of the parameters, not a lie about a law)
GARBAGE = st.sampled_from([None, 0, -1, -0.5, 0.0, True, False, "", "x", "1/0", "0/1", "-1/2",
                           "nan", [], {}, [1, 2], {"a": 1}, 2 ** 1024, -(2 ** 1024), 10 ** 400,
                           -1e308, "9" * 30000, [[[[[]]]]]])


def _non_event_paths(doc):
    """Every path except whole events (deleting an event is a shorter ledger, not an edit
    that can be refused) and the root."""
    return [p for p in json_paths(doc) if p and not (len(p) == 2 and p[0] == "events")]


@FUZZ
@given(pick=st.integers(0, 10 ** 6), value=GARBAGE)
def test_ledger_field_replaced_by_garbage(ledger, tmp_path_factory, pick, value):
    text, base = ledger
    doc = json.loads(text)
    paths = _non_event_paths(doc)
    where = paths[pick % len(paths)]
    old = _get(doc, where)
    if type(old) is type(value) and old == value:
        return
    _check("field -> garbage", json.dumps(_set(doc, where, value)), base,
           tmp_path_factory.mktemp("g"))


@FUZZ
@given(pick=st.integers(0, 10 ** 6), key=st.text(min_size=1, max_size=8))
def test_ledger_key_deleted_or_added(ledger, tmp_path_factory, pick, key):
    text, base = ledger
    doc = json.loads(text)
    paths = [p for p in _non_event_paths(doc) if isinstance(_get(doc, p[:-1]), dict)]
    where = paths[pick % len(paths)]
    parent = _get(doc, where[:-1])
    if pick % 2:
        del parent[where[-1]]
        kind = "key deleted"
    else:
        if key in parent:
            return
        parent[key] = 1
        kind = "unknown key added"
    _check(kind, json.dumps(doc), base, tmp_path_factory.mktemp("k"))


def test_ledger_each_event_key_deleted(ledger, tmp_path):
    """Every key of every event deleted in turn (the random deletions above may miss the few
    fields with defaults): each is refused (fails before: a deleted sensitivity, epochs or
    per_record was read as its default and the ledger answered a lower eps)."""
    text, base = ledger
    doc = json.loads(text)
    for i, entry in enumerate(doc["events"]):
        for key in entry:
            edited = json.loads(text)
            del edited["events"][i][key]
            before = TALLY[("each event key deleted", "refused")]
            _check("each event key deleted", json.dumps(edited), base, tmp_path)
            assert TALLY[("each event key deleted", "refused")] == before + 1, (entry["event"], key)


@pytest.mark.slow
@settings(FUZZ, max_examples=SCALE or 20)  # every example loads and answers a query (~0.6 s)
@given(pick=st.integers(0, 10 ** 6), more=st.integers(1, 10 ** 9), repeat=st.booleans())
def test_ledger_more_rounds_or_repeated_events(ledger, tmp_path_factory, pick, more, repeat):
    text, base = ledger
    doc = json.loads(text)
    i = pick % len(doc["events"])
    if repeat:
        doc["events"].append(json.loads(json.dumps(doc["events"][i])))
    elif isinstance(doc["events"][i].get("times"), int):
        doc["events"][i]["times"] += more
    _check("more rounds" if not repeat else "event repeated", json.dumps(doc), base,
           tmp_path_factory.mktemp("r"))


@FUZZ
@given(cut=st.floats(0, 1, exclude_max=True), depth=st.integers(1, 200_000),
       how=st.sampled_from(["truncate", "nest", "byte"]), byte=st.integers(0, 255))
def test_ledger_text_damaged(ledger, tmp_path_factory, cut, depth, how, byte):
    text, base = ledger
    at = int(cut * len(text))
    if how == "truncate":
        edited = text[:at]
    elif how == "nest":
        edited = "[" * depth + text + "]" * depth
    else:  # one character replaced by a byte outside the JSON punctuation and digits
        ch = chr(byte)
        if ch in "0123456789.eE+-" or ch == text[at]:
            return
        edited = text[:at] + ch + text[at + 1:]
    _check(f"text {how}", edited, base, tmp_path_factory.mktemp("t"))


def _fraction_paths(doc):
    return [p for p in json_paths(doc) if isinstance(_get(doc, p), str) and "/" in _get(doc, p)]


@FUZZ
@given(pick=st.integers(0, 10 ** 6), factor=st.sampled_from(
    [Fraction(2), Fraction(11, 10), Fraction(1001, 1000), Fraction(1, 2), Fraction(1, 3)]))
def test_ledger_stored_law_edited(ledger, tmp_path_factory, pick, factor):
    """The issue's attack: a stored probability of an oracle's law scaled (a1 = 2a ...). A
    ledger that stores no law (names and parameters only) has nothing to edit here."""
    text, base = ledger
    doc = json.loads(text)
    paths = _fraction_paths(doc)
    if not paths:  # the format stores no law any more: nothing to edit
        TALLY[("stored law edited", "no law stored")] += 1
        return
    where = paths[pick % len(paths)]
    value = Fraction(_get(doc, where)) * factor
    _check("stored law edited", json.dumps(_set(doc, where, f"{value.numerator}/"
                                                      f"{value.denominator}")), base,
           tmp_path_factory.mktemp("l"))


# ------------------------------------------------------------------------------------------------
# Item-domain files
# ------------------------------------------------------------------------------------------------

TRICKY = st.sampled_from(["\ufeff", "\x00", "\x0b", "\x0c", "\u2028", "\u2029", "\u200b",
                          "\u200d", "\u2060", "\u00a0", "\u3000", "\u0301", "e\u0301", "\u00e9",
                          "\r", "\t", " ", "\x85", "\ud800", "\U0001F600", "\u202e", "\x7f"])
PLAIN = st.text(st.characters(categories=["L", "N", "P", "S"]), min_size=1, max_size=6)
NAME = PLAIN | PLAIN | st.lists(PLAIN | st.text(max_size=4) | TRICKY, min_size=1,
                                max_size=3).map("".join)
REFUSED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"}


def _expected(lines):
    """The names a conforming reader must return for these decoded lines, or None when the
    file must be refused."""
    names, seen = [], set()
    for line in lines:
        name = line.strip(" \t\r")
        if not name or name != name.strip():
            return None
        for ch in name:
            cat = unicodedata.category(ch)
            if cat in REFUSED_CATEGORIES or (cat == "Zs" and ch != " "):
                return None
        key = unicodedata.normalize("NFC", name)
        if key in seen:
            return None
        seen.add(key)
        names.append(name)
    return names if len(names) >= 2 else None


def _check_domain(kind, data, tmp_path):
    path = tmp_path / "domain.txt"
    path.write_bytes(data)
    try:
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        expected = _expected(lines)
    except UnicodeDecodeError:
        expected = None
    try:
        domain = ItemDomain.from_file(path)
    except ValueError as err:
        assert str(err).startswith(f"{path}: "), err
        assert expected is None, (data, expected, err)
        TALLY[(kind, "refused")] += 1
        return
    assert expected is not None and list(domain.names) == expected, (data, domain.names)
    TALLY[(kind, "accepted, exact names")] += 1


@FUZZ
@given(names=st.lists(NAME, min_size=0, max_size=6), bom=st.booleans(),
       eol=st.sampled_from(["\n", "\r\n"]), final=st.booleans())
def test_domain_file_of_tricky_names(tmp_path_factory, names, bom, eol, final):
    text = eol.join(names) + (eol if final and names else "")
    data = ("\ufeff" if bom else "").encode() + text.encode("utf-8", "surrogatepass")
    _check_domain("domain names", data, tmp_path_factory.mktemp("d"))


@FUZZ
@given(data=st.binary(max_size=64))
def test_domain_file_of_random_bytes(tmp_path_factory, data):
    _check_domain("domain bytes", data, tmp_path_factory.mktemp("b"))


def test_domain_file_special_paths(tmp_path):
    for path in (tmp_path, "/dev/null", tmp_path / "missing"):  # (FIFOs: test_accountant_state)
        with pytest.raises(ValueError, match=str(path)):
            ItemDomain.from_file(path)
        TALLY[("domain special path", "refused")] += 1
