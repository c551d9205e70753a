"""Property-based fuzzing of the command line (hypothesis): random and hostile values for every
option of simulate, encode, aggregate, mean, demo, plot, amplify, compose and noise, over wide
ranges (eps from 1e-300 to 1e308, n up to 1e11, d, k, rounds, delta, grid steps, orders), and
random CSV files for encode.

Properties: the exit status is 0 or 2 and nothing else escapes (no traceback, no exit 1, no
RuntimeWarning); status 2 comes with exactly one ``ldpcompress: error:`` line on stderr (argparse
errors: ``ldpcompress <command>: error:``, after the usage); status 0 means sane output (JSON is
strict -- no NaN or Infinity -- and its figures are finite and in range; text has no "nan") and
every report asked for was written (simulate: --n reports in --shards shards; encode: one report
per item line, and at eps = 20 with deletion DP the counts are the items' histogram). No example
may run longer than LDPC_FUZZ_TIMEOUT seconds (default 60): a hang fails the test naming the
command line. Outcomes are tallied per command and printed at the end of the module
(``pytest -s``).
"""
import collections
import contextlib
import io
import json
import math
import os
import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("dask.distributed")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hang import no_hang  # noqa: E402
from ldpcompress.cli import main  # noqa: E402
from ldpcompress.randomizers.pirappor import PIRappor  # noqa: E402
from ldpcompress.scale import distributed as D  # noqa: E402
from ldpcompress.scale import report_files as RF  # noqa: E402

# LDPC_FUZZ_EXAMPLES=N: a longer, randomised run (the CI run is short and derandomised)
SCALE = int(os.environ.get("LDPC_FUZZ_EXAMPLES", "0"))
TIMEOUT = float(os.environ.get("LDPC_FUZZ_TIMEOUT", "60"))
FUZZ = settings(max_examples=SCALE or 40, deadline=None, derandomize=not SCALE,
                database=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.function_scoped_fixture])
TALLY = collections.Counter()

HOSTILE = ["0", "-1", "1.5", "2.7", "inf", "-inf", "nan", "1e400", "99999999999999999999",
           "", " ", "abc", "0x10", "1_0", "-0", "3.0", "1e-300", "1e308", "٣", "9007199254740993",
           "1e15", "--", "2**31"]
# wide valid ranges: tiny and large privacy parameters, one to 1e10 users
EPS_WIDE = ["1e-300", "1e-12", "1e-9", "1e-6", "1e-3", "0.5", "1", "4", "8", "14", "20", "21.4",
            "32", "50", "100", "300", "700", "701", "1e308"]
DELTA_WIDE = ["1e-300", "1e-100", "1e-12", "1e-6", "0.01", "0.5", "0.999999"]
N_WIDE = ["1", "2", "3", "10", "1e3", "1e6", "1e9", "1e10", "1e11"]


def value(valid, hostile=()):
    """A small valid value (8 times in 10, so that whole command lines are often valid), a
    hostile one, or random text."""
    return st.integers(0, 9).flatmap(
        lambda i: st.sampled_from(HOSTILE + list(hostile)) if i == 0
        else st.text(max_size=6) if i == 1 else st.sampled_from(valid))


def option(name, valid, hostile=()):
    """Either nothing or [name, value]."""
    return st.one_of(st.just([]), value(valid, hostile).map(lambda v: [name, v]))


ERROR_LINE = re.compile(r"^ldpcompress( [a-z]+)?: error: \S")


def run(argv):
    """(exit status, stdout, stderr) of the CLI; any other exception or warning fails."""
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with no_hang(argv, TIMEOUT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: a missing or unparsable option
                code = exc.code
    stderr = err.getvalue()
    assert code in (0, 2), (argv, code, stderr)
    assert "Traceback" not in stderr, (argv, stderr)
    errors = [line for line in stderr.splitlines() if ": error: " in line]
    if code == 2:
        # one error line, the last one, "ldpcompress: error: ..." (argparse: after its usage)
        assert len(errors) == 1 and stderr.rstrip("\n").splitlines()[-1] == errors[0], \
            (argv, stderr)
        assert ERROR_LINE.match(errors[0]), (argv, stderr)
    else:
        assert not errors, (argv, stderr)
        assert not re.search(r"\bnan\b", out.getvalue(), re.I), (argv, out.getvalue())
    TALLY[(argv[0], code)] += 1
    return code, out.getvalue(), stderr


def _reject(token):
    raise AssertionError(f"invalid JSON token {token}")


def strict_json(text):
    """The results of a command's one --json schema, parsed as the JSON standard defines it
    (NaN, Infinity and -Infinity are refused)."""
    doc = json.loads(text, parse_constant=_reject)
    assert sorted(doc) == ["command", "params", "results", "timings", "version"], sorted(doc)
    return doc["results"]


def finite(x, low=-math.inf, high=math.inf):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) \
        and low <= x <= high


@pytest.fixture(scope="module", autouse=True)
def cli_tally():
    yield
    print("\nfuzzed command lines (command, exit status): count")
    for key, count in sorted(TALLY.items()):
        print(f"  {key}: {count}")
    print(f"  total: {sum(TALLY.values())}")


def parsed_count(text, low):
    """The count a value stands for if the CLI must accept it (integral, in range), else None."""
    try:
        v = float(text.replace("_", ""))
    except ValueError:
        return None
    if not np.isfinite(v) or v != int(v) or v < low or v > 2 ** 53:
        return None
    return int(v)


@FUZZ
@given(n=value(["1", "5", "40", "1e2", "3.0"]), k=option("--k", ["2", "3", "17", "1e2"]),
       eps=option("--eps", ["0.5", "1", "4", "20"] + EPS_WIDE),
       shards=option("--shards", ["1", "2", "7"]),
       seed=option("--seed", ["0", "1", "12345"]), flags=st.sets(st.sampled_from(
           ["--symmetric", "--overwrite"])), out=st.sampled_from(["new", "", "nonempty", "file"]))
def test_simulate(n, k, eps, shards, seed, flags, out):
    with tempfile.TemporaryDirectory() as tmp:
        target = {"new": f"{tmp}/o", "": "", "nonempty": tmp, "file": f"{tmp}/f"}[out]
        Path(tmp, "f").write_text("x")
        argv = ["simulate", "--n", n, "--out", target] + k + eps + shards + seed + sorted(flags)
        if not k:
            argv += ["--k", "10"]
        code, _, _ = run(argv)
        if code == 0:
            want_n = parsed_count(n, 1)
            want_shards = parsed_count(shards[1], 1) if shards else min(8, want_n)
            assert out == "new" or (out == "nonempty" and "--overwrite" in flags)
            assert want_n is not None and want_shards is not None
            res = D.aggregate_in_memory([target])
            assert res["n"] == want_n and res["shards"] == want_shards
            assert np.load(Path(target) / "true_counts.npy").sum() == want_n


ITEMS = [("0", 0), ("3", 3), ("9", 9), ("+4", 4), ("007", 7), (" 5 ", 5), ('"6"', 6),
         ("\ufeff1", None), ("3.0", None), ("1e3", None), ("0x10", None), ("10", None),
         ("-1", None), ("99999999999999999999", None), ("", None), (" ", None), ("1,2", None),
         ("abc", None), ("٣", None), ("1_0", None), ("NaN", None), ("0" * 30 + "2", 2)]


GOOD, BAD = [t for t in ITEMS if t[1] is not None], [t for t in ITEMS if t[1] is None]
LINE = st.integers(0, 9).flatmap(lambda i: st.sampled_from(BAD if i == 0 else GOOD))


@FUZZ
@given(lines=st.lists(LINE, max_size=12), header=st.booleans(),
       flag=st.booleans(), bom=st.booleans(), crlf=st.booleans(),
       shards=st.sampled_from(["1", "2", "3", "0", "1.5"]),
       where=st.sampled_from(["file"] * 5 + ["missing", "", "directory"]))
def test_encode_csv(lines, header, flag, bom, crlf, shards, where):
    # k = 10; expected outcome from the tagged lines, independently of the parser
    eol = "\r\n" if crlf else "\n"
    body = (["item"] if header else []) + [text for text, _ in lines]
    content = ("\ufeff" if bom else "") + eol.join(body) + (eol if body else "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "items.csv")
        path.write_text(content, encoding="utf-8", newline="")
        csv = {"file": str(path), "missing": f"{tmp}/none.csv", "": "", "directory": tmp}[where]
        argv = ["encode", "--csv", csv, "--k", "10", "--eps", "20", "--symmetric",
                "--shards", shards, "--out", f"{tmp}/o"] + (["--header"] if flag else [])
        code, _, err = run(argv)
        tags = ([("item", None)] if header else []) + list(lines)
        if tags and tags[0][0] == "\ufeff1" and not bom:
            tags[0] = ("1", 1)  # a BOM at the start of the file is not part of the item
        if flag and tags and tags[0][1] is not None:
            data, offset = None, 0  # --header but line 1 is an item: refused
        else:
            data, offset = (tags[1:], 1) if flag else (tags, 0)
        items = [v for _, v in data] if data is not None else []
        ok = (where == "file" and data is not None and items and None not in items
              and shards in ("1", "2", "3") and int(shards) <= len(items))
        assert (code == 0) == bool(ok), (content, flag, err)
        if code == 0:
            res = D.aggregate_in_memory([f"{tmp}/o"])
            assert res["n"] == len(items)
            # deletion DP at eps = 20: a0 ~ 1e-9, so the counts are the histogram (a false
            # positive or negative among <= 12 x 10 report/item pairs has probability < 1e-6)
            assert res["summary"].tolist() == np.bincount(items, minlength=10).tolist()
        elif None in items and shards in ("1", "2", "3") and where == "file":
            assert f"line {offset + items.index(None) + 1}" in err, (content, err)


@pytest.fixture(scope="module")
def a_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("agg") / "set"
    oracle = PIRappor(10, 2.0)
    RF.write_reports(out, oracle, oracle.randomize_many(np.arange(50) % 10), shards=2)
    return out


@FUZZ
@given(paths=st.one_of(st.just(["set"]), st.just(["setfile"]), st.lists(st.sampled_from(
           ["set", "missing", "", "file", "setfile", "."]), min_size=1, max_size=3)),
       scheduler=option("--scheduler", ["auto", "memory"], ["tcp://10.9.8.7:8786", "tls://h:1",
                                                            "ucx://h:1", "tcp://", "://", "tls://",
                                                            "localhost.evil.org:1"]),
       retries=option("--retries", ["0", "3"]), out=option("--out", ["est.csv"], ["."]),
       tls=st.one_of(st.just([]), st.lists(st.sampled_from(
           ["--tls-ca-file", "--tls-cert", "--tls-key"]), max_size=2)),
       json_flag=st.booleans())
def test_aggregate(a_set, paths, scheduler, retries, out, tls, json_flag):
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "file").write_text("x")
        named = {"set": str(a_set), "missing": f"{tmp}/missing", "": "", "file": f"{tmp}/file",
                 "setfile": str(a_set / "reports-00000.parquet"), ".": tmp}
        argv = ["aggregate"] + [named[p] for p in paths] + scheduler + retries
        argv += [x for t in tls for x in (t, f"{tmp}/nope.pem")]
        if out:
            argv += ["--out", out[1] if out[1] in ("", ".") else f"{tmp}/{out[1]}"]
        code, stdout, _ = run(argv + (["--json"] if json_flag else []))
        if code == 0:
            assert paths in (["set"], ["setfile"])
            if json_flag:
                assert json.loads(stdout)["results"]["n"] == (50 if paths == ["set"] else 25)


@FUZZ
@given(d=value(["2", "3", "5", "8", "10", "1000"], ["1e10", "1e6"]),
       n=option("--n", ["1", "2", "5"], ["1e12"]),
       eps=value(["0.5", "1", "4"] + EPS_WIDE), split=option("--split", ["1", "2", "1000"]),
       json_flag=st.booleans())
def test_mean(d, n, eps, split, json_flag):
    # n stays small: a valid run costs n x (up to 1e4) trials; wide d and eps, always given
    argv = ["mean", "--d", d, "--eps", eps] + (n or ["--n", "2"]) + split
    code, stdout, _ = run(argv + (["--json"] if json_flag else []))
    if code == 0 and json_flag:
        res = strict_json(stdout)
        for r in res.values():
            if isinstance(r, dict):
                assert finite(r["mse"], 0) and finite(r["predicted"], 0), res
        assert 1 <= res["split"] <= 1000 and finite(res["expected_trials"], 1, 1e4 * 1.000001)


@pytest.mark.parametrize("d", ["2", "3", "5", "10", "1000"])
def test_mean_probe_grid(d):
    # every eps of the audit's probe (a derandomized run of 40 examples can miss a corner)
    for eps in ["1e-6", "1e-3", "1", "8", "14", "20", "32", "50", "100", "300", "700", "1e-300"]:
        code, stdout, err = run(["mean", "--d", d, "--n", "1", "--eps", eps, "--json"])
        if code == 0:
            res = strict_json(stdout)
            assert all(finite(r["predicted"], 0) for r in res.values() if isinstance(r, dict))
        else:
            assert "--eps" in err, err


@FUZZ
@given(n=option("--n", ["1", "2", "50"]), k=option("--k", ["2", "5", "30"]),
       eps=option("--eps", ["0.5", "1", "3"] + EPS_WIDE), delta=option("--delta", ["1e-6", "0.1"]
                                                                      + DELTA_WIDE),
       oracle=st.sampled_from(["pi-rappor", "rappor", "krr", "subset", "olh", "hadamard", "x"]),
       seed=option("--seed", ["0", "7"]))
def test_demo(n, k, eps, delta, oracle, seed):
    argv = ["demo", "--json", "--oracle", oracle] + (n or ["--n", "30"]) + (k or ["--k", "10"])
    code, stdout, _ = run(argv + eps + delta + seed)
    if code == 0:
        res = strict_json(stdout)
        assert res["n"] == parsed_count(n[1] if n else "30", 1)
        assert finite(res["eps0"], 0) and finite(res["central_eps"], 0), res
        assert res["central_eps"] <= res["eps0"] * (1 + 1e-9) or res["kind"] == "deletion", res


@settings(FUZZ, max_examples=SCALE or 15)
@given(what=st.sampled_from(["amplification", "frequency"]),
       eps0=option("--eps0", ["1", "3"]), lo=value(["10", "100"]), hi=value(["100", "1000"]),
       points=option("--points", ["1", "3"]), delta=option("--delta", ["1e-6"]),
       k=option("--k", ["5", "20"]), n=option("--n", ["10", "200"]),
       out=st.sampled_from(["png", "", "dir"]))
def test_plot(what, eps0, lo, hi, points, delta, k, n, out):
    pytest.importorskip("matplotlib")
    with tempfile.TemporaryDirectory() as tmp:
        target = {"png": f"{tmp}/x.png", "": "", "dir": tmp}[out]
        argv = ["plot", what, "--out", target, "--n-range", lo, hi] + eps0 + points + delta
        code, _, _ = run(argv + k + (n or ["--n", "100"]))
        if code == 0:
            assert Path(target).stat().st_size > 1000


AMPLIFY_MODES = {  # the options each query needs; any other combination is refused
    "eps": ("--n", "--eps0", "--delta"), "delta": ("--n", "--eps0", "--eps"),
    "max_eps0": ("--n", "--eps", "--delta"), "min_n": ("--eps0", "--eps", "--delta")}
AMPLIFY_VALUES = {"--n": N_WIDE, "--eps0": EPS_WIDE, "--eps": EPS_WIDE, "--delta": DELTA_WIDE}


@settings(FUZZ, max_examples=SCALE or 30)
@given(mode=st.sampled_from(sorted(AMPLIFY_MODES)), data=st.data(),
       randomizer=st.one_of(st.just([]), option("--k", ["2", "3", "100", "1e6", "2147483647"]),
                            option("--delta0", ["0", "1e-12", "1e-6", "0.5"])),
       extra=st.integers(0, 9).flatmap(lambda i: st.sampled_from(
           [["--n", "10"], ["--eps", "1"], ["--k", "5", "--delta0", "0"]]) if i == 0
           else st.just([])),
       json_flag=st.booleans())
def test_amplify(mode, data, randomizer, extra, json_flag):
    # a query's options (mostly valid, wide ranges), sometimes k or delta0, rarely one too many
    argv = ["amplify"] + (["--inverse"] if mode in ("max_eps0", "min_n") else [])
    for name in AMPLIFY_MODES[mode]:
        argv += [name, data.draw(value(AMPLIFY_VALUES[name]), label=name)]
    code, stdout, _ = run(argv + randomizer + extra + (["--json"] if json_flag else []))
    if code == 0 and json_flag:
        res = strict_json(stdout)
        assert res["query"] == {"eps": "epsilon"}.get(mode, mode), res
        if res["query"] == "max_eps0":
            assert finite(res["value"], 0), res
        elif res["query"] == "min_n":
            assert isinstance(res["value"], int) and res["value"] >= 1, res
        else:
            high = 1.0 if res["query"] == "delta" else math.inf
            assert finite(res["value"], 0, high), res
            if res["lower"] is not None:
                assert finite(res["lower"], 0) and res["lower"] <= res["value"] * (1 + 1e-9) \
                    + 1e-12, res
            for b in res["bounds"]:
                assert b["value"] is None or finite(b["value"], 0), b


@settings(FUZZ, max_examples=SCALE or 30)
@given(n=value(N_WIDE), eps0=value(EPS_WIDE), rounds=value(["1", "2", "10", "1e4", "1e9"]),
       delta=value(DELTA_WIDE), k=option("--k", ["2", "10", "1e6"]),
       h=option("--h", ["1e-3", "0.01", "0.1", "1"], ["1e-9", "1e-300"]), json_flag=st.booleans())
def test_compose(n, eps0, rounds, delta, k, h, json_flag):
    argv = ["compose", "--n", n, "--eps0", eps0, "--rounds", rounds, "--delta", delta] + k + h
    code, stdout, _ = run(argv + (["--json"] if json_flag else []))
    if code == 0 and json_flag:
        res = strict_json(stdout)
        assert finite(res["eps"], 0), res
        assert all(v is None or finite(v, 0) for v in res["methods"].values()), res
        assert res["methods"][res["method"]] == res["eps"]


def test_compose_json_with_an_infinite_unreported_method():
    # found by test_compose: the text output reports RDP (PLD is inf), --json refuses to print
    argv = ["compose", "--n", "1e10", "--eps0", "4", "--rounds", "1e6", "--delta", "1e-6"]
    assert run(argv)[0] == 0
    code, stdout, _ = run(argv + ["--json"])
    assert code == 0 and strict_json(stdout)["methods"]["pld"] is None


@settings(FUZZ, max_examples=SCALE or 25)
@given(n=value(["1", "2", "10"], ["1e4", "1e10"]),
       scale=value(["1e-300", "1e-6", "0.1", "1", "10", "1e6", "1e300"]),
       sensitivity=option("--sensitivity", ["1e-300", "1e-3", "1", "2", "1e3", "1e300"]),
       orders=st.one_of(st.just([]), st.lists(value(["1.0000001", "1.5", "2", "8", "64", "1e3",
                                                     "1e9"], ["1", "0.5"]),
                                              min_size=1, max_size=3).map(
                                                  lambda o: ["--orders"] + o)),
       json_flag=st.booleans())
def test_noise(n, scale, sensitivity, orders, json_flag):
    argv = ["noise", "--n", n, "--scale", scale] + sensitivity + orders
    code, stdout, _ = run(argv + (["--json"] if json_flag else []))
    if code == 0 and json_flag:
        res = strict_json(stdout)
        for key in ("gaussian", "laplace_bound", "laplace_exact"):
            assert len(res[key]) == len(res["orders"]) and all(finite(v, 0) for v in res[key])
