"""What a report set says about itself: the oracle's parameters, each shard's metadata, and the
checks that turn untrusted JSON back into them.

``oracle_metadata`` gives the parameters that rebuild a PI-RAPPOR oracle; ``oracle_from_metadata``
rebuilds it from untrusted JSON, every key checked and the server's memory for its k estimated
first (a set the server could not count is refused with the figure). Each shard carries, under
the Parquet schema metadata key ``META_KEY``, the format version, the set's id, its index and
those parameters (``shard_meta``); its columns are ``COLUMNS``, int64. ``get_key``,
``get_int`` and ``parse_json`` are the checks every reader of the set's JSON uses: each
error is a ValueError naming the source (the file) and the key. The formats are in
docs/guide.md, section 2, "Wire formats"; the checks in section 3, "Report sets and
aggregation".
"""
from __future__ import annotations

import json

from ..core import validate as V
from ..randomizers.estimator import histogram_bytes
from ..randomizers.pirappor import MAX_PRIME, PIRappor

__all__ = ["FORMAT", "META_KEY", "MAX_META_BYTES", "COLUMNS", "oracle_metadata",
           "oracle_from_metadata", "shard_meta", "get_key", "get_int", "parse_json"]


FORMAT = 2
META_KEY = b"ldpcompress"
MAX_META_BYTES = 1 << 16
COLUMNS = ("a", "b")


def oracle_metadata(oracle: PIRappor) -> dict:
    """The parameters that rebuild the oracle (and the field check s)."""
    return dict(oracle="pi-rappor", k=oracle.k, eps=oracle.requested_eps,
                symmetric=oracle.symmetric, p=oracle.p, s=oracle.s)


def get_key(doc: object, key: str, kinds: tuple[type, ...], source: str, what: str):
    """doc[key] of the given JSON type(s); ValueError naming the source and the key."""
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: {what or 'metadata'} must be a JSON object, got "
                         f"{type(doc).__name__}")
    name = f"{what}.{key}" if what else key
    if key not in doc:
        raise ValueError(f"{source}: missing key {name!r}")
    value = doc[key]
    bad = isinstance(value, bool) and bool not in kinds
    if bad or not isinstance(value, kinds):
        want = "/".join(k.__name__ for k in kinds)
        raise ValueError(f"{source}: key {name!r} must be {want}, got {value!r}")
    return value


def get_int(doc: object, key: str, source: str, what: str = "", low: int = 0,
            high: int = V.MAX_N) -> int:
    """doc[key], an integer in [low, high]; ValueError naming the source and the key."""
    value = get_key(doc, key, (int,), source, what)
    if not low <= value <= high:
        name = f"{what}.{key}" if what else key
        raise ValueError(f"{source}: key {name!r} must be an integer in [{low}, {high}], "
                         f"got {value!r}")
    return value


def parse_json(raw: bytes, source: str, what: str):
    """Untrusted bytes as JSON; ValueError naming the source and what they should have been."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ValueError(f"{source}: the {what} is not valid JSON ({type(err).__name__}: "
                         f"{str(err)[:200]})") from None


def oracle_from_metadata(meta: object, source: str = "metadata",
                         max_bytes: float | None = None) -> PIRappor:
    """Rebuild (and check) the oracle described by untrusted metadata. The server's memory for
    this k is estimated first and refused with the figure; every error names source and key."""
    name = get_key(meta, "oracle", (str,), source, "oracle")
    if name != "pi-rappor":
        raise ValueError(f"{source}: key 'oracle.oracle' must be 'pi-rappor', got {name!r}")
    k = get_int(meta, "k", source, "oracle", 2, MAX_PRIME - 1)
    eps = get_key(meta, "eps", (int, float), source, "oracle")
    symmetric = get_key(meta, "symmetric", (bool,), source, "oracle")
    p = get_int(meta, "p", source, "oracle", 3, MAX_PRIME)
    s = get_int(meta, "s", source, "oracle", 1, MAX_PRIME)
    from ..randomizers.base import chunks_for
    try:  # the worst case: one histogram row per kernel chunk, plus counts and estimates
        histogram_bytes(k, chunks_for(1 << 40, k) + 3, max_bytes, "the server histogram")
    except ValueError as err:
        raise ValueError(f"{source}: key 'oracle.k' = {k}: {err}") from None
    try:
        oracle = PIRappor(k, eps, symmetric=symmetric, p=p)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{source}: invalid oracle parameters: {err}") from None
    if oracle.s != s:
        raise ValueError(f"{source}: inconsistent parameters: s={s} but p, eps give s={oracle.s}")
    return oracle


def shard_meta(set_id: str, index: int, oracle: dict) -> dict:
    """The metadata a shard carries under ``META_KEY``: format, set id, index, oracle."""
    return dict(format=FORMAT, set=set_id, shard=index, oracle=oracle)
