"""PI-RAPPOR report files: sharded Parquet with the oracle's parameters in the metadata.

Each shard has int64 columns ``a`` and ``b`` and the schema metadata key ``ldpcompress`` holding
JSON: format version, oracle name, k, requested eps, symmetric, p, s. Readers check every shard
and name the file in every error (needs the optional extra ``[dask]``, which brings pyarrow).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .optional import require
from .pirappor import FieldReports, PIRappor

FORMAT = 1
META_KEY = b"ldpcompress"


def _pyarrow():
    return require("dask", "pyarrow", "pyarrow.parquet")


def oracle_metadata(oracle: PIRappor) -> dict:
    return dict(format=FORMAT, oracle="pi-rappor", k=oracle.k, eps=oracle.requested_eps,
                symmetric=oracle.symmetric, p=oracle.p, s=oracle.s)


def oracle_from_metadata(meta: dict) -> PIRappor:
    """Rebuild the oracle a file was written with (and check its field matches)."""
    oracle = PIRappor(meta["k"], meta["eps"], symmetric=meta["symmetric"], p=meta["p"])
    if oracle.s != meta["s"]:
        raise ValueError(f"inconsistent parameters: s={meta['s']} but p, eps give s={oracle.s}")
    return oracle


def write_reports(out_dir, oracle: PIRappor, reports: FieldReports, shards: int = 4,
                  prefix: str = "reports") -> list[Path]:
    """Write reports as ``shards`` Parquet files in out_dir; returns their paths."""
    pa, pq = _pyarrow()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    oracle.check_reports(reports)
    meta = {META_KEY: json.dumps(oracle_metadata(oracle)).encode()}
    paths = []
    n = len(reports)
    for i in range(shards):
        lo, hi = i * n // shards, (i + 1) * n // shards
        table = pa.table({"a": reports.a[lo:hi], "b": reports.b[lo:hi]}).replace_schema_metadata(meta)
        path = out / f"{prefix}-{i:05d}.parquet"
        pq.write_table(table, path)
        paths.append(path)
    return paths


def read_metadata(path) -> dict:
    """The ldpcompress metadata of one file; ValueError naming the file when it has none."""
    _, pq = _pyarrow()
    try:
        schema = pq.read_schema(path)
    except Exception as err:  # pyarrow raises several types for corrupt files
        raise ValueError(f"{path}: not a readable Parquet report file ({err})") from None
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise ValueError(f"{path}: no ldpcompress metadata (not a report file)")
    meta = json.loads(raw)
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: unknown report file format {meta.get('format')}")
    return meta


def read_reports(path, oracle: PIRappor) -> FieldReports:
    """Reports of one file, checked against the oracle's field."""
    _, pq = _pyarrow()
    meta = read_metadata(path)
    if meta != oracle_metadata(oracle):
        raise ValueError(f"{path}: written with other parameters {meta}, expected "
                         f"{oracle_metadata(oracle)}")
    try:
        table = pq.read_table(path, columns=["a", "b"])
    except Exception as err:
        raise ValueError(f"{path}: unreadable report columns ({err})") from None
    reports = FieldReports(table.column("a").to_numpy(), table.column("b").to_numpy(), oracle.p)
    try:
        return oracle.check_reports(reports)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: {err}") from None


def expand(paths) -> list[str]:
    """Files named directly, or every *.parquet file inside named directories (sorted)."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(str(q) for q in Path(p).glob("*.parquet"))
        else:
            out.append(str(p))
    if not out:
        raise ValueError("no report files given")
    return out


def common_oracle(paths) -> PIRappor:
    """The oracle shared by every file; ValueError naming the first file that disagrees."""
    first = read_metadata(paths[0])
    for p in paths[1:]:
        if read_metadata(p) != first:
            raise ValueError(f"{p}: parameters differ from {paths[0]}")
    return oracle_from_metadata(first)
