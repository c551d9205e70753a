"""ItemDomain (core/items.py): the catch-all item, bad lines of domain files counted and
dropped or mapped, the manifest record of the names; hostile domain files (format characters,
a line spelling the catch-all's name, duplicates after mapping, huge names, the catch-all at
every position)."""
from __future__ import annotations

import hashlib
import math
import os
import unicodedata

import numpy as np
import pytest

import ldpcompress as L
from hang import refused_promptly
from ldpcompress import ItemDomain
from ldpcompress.core import items as ITEMS
from ldpcompress.core.items import CATCH_ALL, MAX_NAME_CHARS, NAMED_BAD_LINES
from ldpcompress.randomizers import KRR


def _file(tmp_path, body: bytes, name="d.txt"):
    path = tmp_path / name
    path.write_bytes(body)
    return path


def test_catch_all_is_the_last_item_and_takes_unknown_names():
    dom = ItemDomain(["a", "b"], catch_all=True)
    assert dom.k == 3 and dom.names == ("a", "b", CATCH_ALL) and dom.catch_all_index == 2
    assert dom.index(["b", "zz", "a", "", "x\u200by"]).tolist() == [1, 2, 0, 2, 2]
    assert dom.lookup("nope") == 2 and dom.position("nope") is None
    plain = ItemDomain(["a", "b"])
    assert plain.catch_all_index is None and plain.lookup("nope") is None
    with pytest.raises(ValueError, match=r"items\[1\] = 'zz' is not in the item domain"):
        plain.index(["a", "zz"])
    with pytest.raises(TypeError, match=r"items\[0\] must be a str"):
        dom.index([3])  # a non-str is never mapped to the catch-all
    assert ItemDomain(["a"], catch_all=True).k == 2  # one name and the catch-all: k = 2
    with pytest.raises(TypeError, match="catch_all must be True or False"):
        ItemDomain(["a", "b"], catch_all="yes")


@pytest.mark.parametrize("spelling", ["(out of domain)", "(OUT OF DOMAIN)", "(out  of domain)",
                                      "(out\u3000of domain)", CATCH_ALL, "(out\tof domain)"])
def test_no_name_can_spell_the_catch_all(tmp_path, spelling):
    with pytest.raises(ValueError, match=r"names\[1\]"):
        ItemDomain(["a", spelling], catch_all=True)
    path = _file(tmp_path, f"a\n{spelling}\nb\n".encode())
    with pytest.raises(ValueError, match=f"{path}: line 2 "):
        ItemDomain.from_file(path, catch_all=True)
    dom = ItemDomain.from_file(path, bad_lines="catch-all")  # the line dropped, counted
    assert dom.names == ("a", "b", CATCH_ALL) and dom.bad_lines.count == 1
    assert dom.bad_lines[0][0] == 2


def test_every_bad_line_is_counted_and_the_first_few_named(tmp_path):
    good = [f"w{i}" for i in range(50)]
    lines = list(good)
    bad_at = []
    for j, bad in enumerate(["", "w3", "x\u200dy", "\ud83d\udc68\u200d\ud83d\udc69", "a\x00b",
                             "x" * (MAX_NAME_CHARS + 1), "cafe\u0301", "caf\u00e9"]):
        lines.insert(5 * j + 3, bad)
    body = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n\xff\xfe\n"
    bad_at = [i + 1 for i, line in enumerate(lines)
              if line not in good or lines.index(line) != i]
    # "caf\u00e9" is NFC-equal to "cafe\u0301" (the first stays): 8 bad lines and the bytes
    expected = sorted(set(bad_at) - {lines.index("cafe\u0301") + 1}) + [len(lines) + 1]
    path = _file(tmp_path, body)
    with pytest.raises(ValueError, match=f"{len(expected)} bad lines in all") as err:
        ItemDomain.from_file(path)
    text = str(err.value)
    assert text.startswith(f"{path}: line {expected[0]} ")
    for number in expected[:NAMED_BAD_LINES]:
        assert f"line {number}" in text
    assert f"line {expected[NAMED_BAD_LINES]}:" not in text and "; ..." in text
    dropped = ItemDomain.from_file(path, bad_lines="drop")
    assert dropped.bad_lines.count == len(expected) and dropped.bad_lines.action == "drop"
    assert [n for n, _ in dropped.bad_lines] == expected[:NAMED_BAD_LINES]
    kept = [line for i, line in enumerate(lines) if i + 1 not in expected]
    assert list(dropped.names) == kept and "cafe\u0301" in kept and not dropped.catch_all
    mapped = ItemDomain.from_file(path, bad_lines="catch-all")
    assert mapped.names == dropped.names + (CATCH_ALL,)
    assert mapped.index(["x\u200dy", "w3", "caf\u00e9"]).tolist() == [mapped.k - 1, 3,
                                                                         mapped.k - 1]
    assert "mapped to the catch-all" in mapped.bad_lines.describe()


def test_wordfreq_like_list_with_one_emoji_zwj_sequence(tmp_path):
    """The issue's case: one ZWJ sequence among 50,000 words refused the whole list."""
    words = [f"word{i}" for i in range(50_000)]
    words[46_283] = "\U0001F469\u200d\U0001F4BB"
    path = _file(tmp_path, "\n".join(words).encode())
    with pytest.raises(ValueError, match=f"{path}: line 46284 .*U\\+200D.*1 bad line in all"):
        ItemDomain.from_file(path)
    dom = ItemDomain.from_file(path, bad_lines="catch-all")
    assert dom.k == 50_000 and dom.bad_lines.count == 1 and dom.names[-1] == CATCH_ALL


def test_bad_lines_option_and_small_domains(tmp_path):
    path = _file(tmp_path, b"a\n\n")
    with pytest.raises(ValueError, match="bad_lines must be one of 'error', 'drop'"):
        ItemDomain.from_file(path, bad_lines="skip")
    with pytest.raises(ValueError, match="holds 1 valid item names, a domain needs at least 2"):
        ItemDomain.from_file(path, bad_lines="drop")
    assert ItemDomain.from_file(path, bad_lines="catch-all").names == ("a", CATCH_ALL)


@pytest.mark.parametrize("position", range(4))
def test_catch_all_name_at_every_position_of_a_file(tmp_path, position):
    names = ["a", "b", "c"]
    names.insert(position, CATCH_ALL)
    path = _file(tmp_path, "\n".join(names).encode())
    with pytest.raises(ValueError, match=f"line {position + 1} .*U\\+00A0"):
        ItemDomain.from_file(path, catch_all=True)
    dom = ItemDomain.from_file(path, bad_lines="catch-all")
    assert dom.names == ("a", "b", "c", CATCH_ALL)  # only ever the last item


def test_record_round_trip_and_tampering():
    dom = ItemDomain(["apple", "banana", "\u6771\u4eac"], catch_all=True)
    rec = dom.to_record()
    assert rec["names"] == ["apple", "banana", "\u6771\u4eac"] and rec["catch_all"] is True
    digest = hashlib.sha256("".join(n + "\n" for n in dom.names).encode()).hexdigest()
    assert rec["sha256"] == digest
    assert ItemDomain.from_record(rec, "m.json") == dom
    for bad, words in [(dict(rec, names=["apple", "cherry", "\u6771\u4eac"]), "sha256"),
                       (dict(rec, catch_all=False), "sha256"),
                       (dict(rec, names=["a", "a"]), "repeats"),
                       (dict(rec, names=["a", "b\u200b"]), "U\\+200B"),
                       (dict(rec, extra=1), "keys names, catch_all and sha256"),
                       (dict(rec, catch_all=1), "boolean catch_all"),
                       ([1], "keys names")]:
        with pytest.raises(ValueError, match=f"m.json: key 'items'.*{words}"):
            ItemDomain.from_record(bad, "m.json")
    assert ItemDomain(["a", "b"]) != ItemDomain(["a", "b"], catch_all=True)
    assert np.array_equal(dom.index(["x"]), [3])


_PIECES = ["a", "b", "apple", "", " ", "\u200d", "\u200b", "\ufeff", "\x00", "\u00a0", "\t",
           "(out of domain)", CATCH_ALL, "caf\u00e9", "cafe\u0301", "\U0001F469\u200d\U0001F4BB",
           "\r", "\u2028", "\udcff", "x" * (MAX_NAME_CHARS + 1)]


def test_hostile_domain_files_drop_or_map_and_never_crash(tmp_path):
    """800 files of tricky pieces (test-only seeded choices) in every bad_lines mode: a
    ValueError naming the file, or a domain whose names are all valid, distinct, the catch-all
    only last, and kept + bad lines = lines."""
    import random
    rng = random.Random(11)  # test-only: which pieces make up the lines
    path = tmp_path / "d.txt"
    outcomes = set()
    for _ in range(800):
        lines = ["".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 3)))
                 for _ in range(rng.randint(0, 8))]
        body = "\n".join(lines).encode("utf-8", "surrogatepass")
        path.write_bytes(body)
        for mode in ("error", "drop", "catch-all"):
            try:
                dom = ItemDomain.from_file(path, bad_lines=mode)
            except ValueError as err:
                assert str(err).startswith(f"{path}: "), err
                outcomes.add((mode, "refused"))
                continue
            listed = dom.names[:-1] if dom.catch_all else dom.names
            assert CATCH_ALL not in listed and len(set(dom.names)) == dom.k
            assert dom.catch_all == (mode == "catch-all")
            raw = body[3:] if body.startswith(b"\xef\xbb\xbf") else body
            count = len(raw.split(b"\n")) - (raw.endswith(b"\n") or raw == b"")
            assert len(listed) + dom.bad_lines.count == count
            assert ItemDomain.from_record(dom.to_record(), "m") == dom
            outcomes.add((mode, "built"))
    assert len(outcomes) == 6  # every mode both refused and built some files


def test_domain_file_refuses_fifos_devices_directories_and_huge_files(tmp_path, monkeypatch):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, what in ((fifo, "FIFO"), ("/dev/zero", "character device"),
                       (tmp_path, "directory")):
        refused_promptly(ItemDomain.from_file, path, fifo, f"{path}: is a {what}")
    big = tmp_path / "big.txt"
    big.write_text("a\nb\nc\n")
    monkeypatch.setattr(ITEMS, "MAX_DOMAIN_FILE_BYTES", 4)
    with pytest.raises(ValueError, match=f"{big}: an item domain file is at most 4 bytes"):
        ItemDomain.from_file(big)
    with pytest.raises(ValueError, match="missing"):  # not a raw OSError
        ItemDomain.from_file(tmp_path / "nothing")


@pytest.mark.parametrize("body,culprit", [
    ("a\n\ufeffb\n", "U+FEFF"), ("a\nb\x00\n", "U+0000"), ("a\nb\x0bc\n", "U+000B"),
    ("a\nb\u2028c\n", "U+2028"), ("a\nb\u2029c\n", "U+2029"), ("a\nb\u200b\n", "U+200B"),
    ("a\nx\u00a0y\n", "U+00A0"), ("caf\u00e9\ncafe\u0301\n", "canonically equivalent"),
    ("a\nb\u202ec\n", "U+202E")])
def test_domain_names_that_render_alike_are_refused(tmp_path, body, culprit):
    path = tmp_path / "d.txt"
    path.write_bytes(body.encode("utf-8"))
    with pytest.raises(ValueError, match=f"{path}: line 2") as err:
        ItemDomain.from_file(path)
    assert culprit in str(err.value)
    names = body.strip("\n").split("\n")
    with pytest.raises(ValueError, match="names\\[1\\]"):
        ItemDomain(names)


def test_domain_accepts_plain_unicode_names(tmp_path):
    names = ["caf\u00e9", "na\u00efve", "\u6771\u4eac", "a b", "\U0001F600"]
    path = tmp_path / "d.txt"
    path.write_bytes(("\ufeff" + "\r\n".join(names) + "\r\n").encode())
    assert list(ItemDomain.from_file(path).names) == names
    assert all(unicodedata.is_normalized("NFC", n) for n in names)


FRUIT = ["apple", "banana", "cherry", "dürian"]


def test_item_domain_maps_names_and_labels_estimates():
    dom = L.ItemDomain(FRUIT)
    assert dom.k == len(dom) == 4 and dom.names == tuple(FRUIT) and "dürian" in dom
    idx = dom.index(["cherry", "apple", "cherry", "dürian"])
    assert idx.dtype == np.int64 and idx.tolist() == [2, 0, 2, 3]
    assert dom.index(np.array(["banana"])).tolist() == [1] and dom.index([]).size == 0
    assert dom.label([1, 2, 3, 4]) == {"apple": 1, "banana": 2, "cherry": 3, "dürian": 4}
    assert dom.label([1, 2, 3, 4], [0, 0, 0, 0])["cherry"] == (3, 0)
    # end to end: names -> indices -> reports -> estimate labelled by name
    users = ["banana"] * 3000 + ["cherry"] * 1000
    oracle = KRR(dom.k, 4.0)
    est = oracle.estimate(oracle.randomize_many(dom.index(users), L.simulation_entropy(1)))
    sd = math.sqrt(oracle.variance(4000, 3000))
    assert abs(dom.label(est)["banana"] - 3000) < 5 * sd


@pytest.mark.parametrize("items, exc, words", [
    (["apple", "kiwi"], ValueError, "items[1] = 'kiwi' is not in the item domain"),
    (["apple", "Apple"], ValueError, "items[1]"),
    (["apple", 3], TypeError, "items[1]"),
    (["apple", None], TypeError, "items[1]"),
    ("apple", TypeError, "single str"),
    (5, TypeError, "items"),
])
def test_item_domain_refuses_unknown_items(items, exc, words):
    with pytest.raises(exc, match="items") as err:
        L.ItemDomain(FRUIT).index(items)
    assert words in str(err.value)


@pytest.mark.parametrize("names, exc, words", [
    (["a", "b", "a"], ValueError, "names[2] = 'a' repeats names[0]"),
    (["a", ""], ValueError, "names[1] is empty"),
    (["a", " b"], ValueError, "names[1]"),
    (["a", "b\nc"], ValueError, "line break"),
    (["a", 2], TypeError, "names[1]"),
    (["a"], ValueError, "at least 2"),
    ("ab", TypeError, "single str"),
])
def test_item_domain_refuses_bad_names(names, exc, words):
    with pytest.raises(exc, match="names") as err:
        L.ItemDomain(names)
    assert words in str(err.value)


def test_item_domain_from_file(tmp_path):
    path = tmp_path / "items.txt"
    path.write_bytes(b"\xef\xbb\xbfapple\r\nbanana\r\n  cherry \nd\xc3\xbcrian")
    assert L.ItemDomain.from_file(path).names == tuple(FRUIT)
    path.write_text("apple\nbanana\n", encoding="utf-8")  # final newline: no extra line
    assert L.ItemDomain.from_file(str(path)).k == 2
    for data, words in [(b"apple\nbanana\n\ncherry\n", "line 3 is empty"),
                        (b"apple\nbanana\ncherry\nbanana\n", "line 4 repeats the name 'banana' "
                                                             "of line 2"),
                        (b"apple\nban\xffana\n", "line 2 is not UTF-8"),
                        (b"apple\n", "at least 2"),
                        (b"", "at least 2")]:
        path.write_bytes(data)
        with pytest.raises(ValueError, match="items.txt: ") as err:
            L.ItemDomain.from_file(path)
        assert words in str(err.value) and str(path) in str(err.value)
    with pytest.raises(TypeError, match="path must be a file path"):
        L.ItemDomain.from_file(3)


def test_item_domain_label_checks_the_length():
    dom = L.ItemDomain(FRUIT)
    with pytest.raises(ValueError, match="k = 4"):
        dom.label([1, 2, 3])
    with pytest.raises(TypeError, match="label needs at least one column"):
        dom.label()
