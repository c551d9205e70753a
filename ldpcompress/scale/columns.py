"""How a randomizer's report columns are laid out in a Parquet shard.

A randomizer states its storage as ``report_columns()`` (name, numpy dtype, width) and converts
its reports with ``to_columns`` / ``from_columns`` (randomizers/contract.py). This module maps
those columns to Arrow types and back, the same way for every randomizer:

- width 1: the Arrow type of the dtype (uint8 ... int64, float64, bool);
- width w > 1: fixed-size binary of w x itemsize bytes per report, the row's values
  little-endian (RAPPOR's packed bits, a compressed report's 17 bytes, a PrivUnit2 vector).

Encodings keep the files near the wire size (``bits_per_report``): integer columns use
DELTA_BINARY_PACKED (about log2(range) + 1 bits a value), integer and boolean fixed-size
columns zstd (biased bits compress below the wire size), floats plain; no dictionaries. The
figures per randomizer are in docs/guide.md, section 2, "Wire formats" (bench/scale.py prints
them). Reading checks the schema exactly and hands the arrays to ``from_columns``, which
validates every value; a missing value (null) is refused here.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..core.optional import require
from ..randomizers.contract import Column, LocalRandomizer

__all__ = ["DECODE_FACTOR", "arrow_type", "arrow_schema", "row_bytes", "to_table",
           "from_batch", "write_options", "describe_columns"]

# memory of one report while a batch is read, checked and summarized, as a multiple of its
# stored bytes: Arrow buffers, numpy views, the randomizer's validated copy (uint8 -> int64 and
# packed bits -> bools are 8x) and the summary's temporaries
DECODE_FACTOR = 18


def _pa():
    return require("dask", "pyarrow")


def _dtype(c: Column) -> np.dtype:
    return np.dtype(c.dtype).newbyteorder("<") if np.dtype(c.dtype).itemsize > 1 \
        else np.dtype(c.dtype)


def arrow_type(c: Column):
    """The Arrow type of one column (see the module docstring)."""
    pa = _pa()
    if c.width > 1:
        return pa.binary(c.width * np.dtype(c.dtype).itemsize)
    return pa.from_numpy_dtype(np.dtype(c.dtype))


def arrow_schema(randomizer: LocalRandomizer, metadata: Mapping[bytes, bytes] | None = None):
    """The Arrow schema of the randomizer's shards (its columns, in order)."""
    pa = _pa()
    return pa.schema([(c.name, arrow_type(c)) for c in randomizer.report_columns()],
                     metadata=metadata)


def row_bytes(randomizer: LocalRandomizer) -> int:
    """Bytes of one report in its columns (what a batch of reports occupies as arrays)."""
    return sum(c.width * np.dtype(c.dtype).itemsize for c in randomizer.report_columns())


def describe_columns(randomizer: LocalRandomizer) -> str:
    """'a uint16, b uint16' (fixed-size columns as 'bits uint8[128]'): the layout column of
    the bench's table of bytes per report on disk."""
    return ", ".join(f"{c.name} {c.dtype}" + (f"[{c.width}]" if c.width > 1 else "")
                     for c in randomizer.report_columns())


def to_table(randomizer: LocalRandomizer, columns: Mapping[str, np.ndarray], schema):
    """Validated columns (``to_columns``' output) as an Arrow table of ``schema``."""
    pa = _pa()
    arrays = []
    for c in randomizer.report_columns():
        arr = np.asarray(columns[c.name])
        if c.width > 1:
            size = c.width * np.dtype(c.dtype).itemsize
            raw = np.ascontiguousarray(arr, dtype=_dtype(c)).view(np.uint8).reshape(
                arr.shape[0], size)
            arrays.append(pa.FixedSizeBinaryArray.from_buffers(
                arrow_type(c), arr.shape[0], [None, pa.py_buffer(raw)]))
        else:
            arrays.append(pa.array(np.ascontiguousarray(arr, dtype=np.dtype(c.dtype))))
    return pa.Table.from_arrays(arrays, schema=schema)


def from_batch(randomizer: LocalRandomizer, batch, source: str, first_row: int
               ) -> dict[str, np.ndarray]:
    """The numpy columns of an Arrow record batch (schema already checked): width-1 columns
    as their dtype, fixed-size ones as (n, width) arrays. A null is refused naming the row."""
    out = {}
    for i, c in enumerate(randomizer.report_columns()):
        col = batch.column(i)
        if col.null_count:
            row = first_row + int(np.flatnonzero(
                ~np.asarray(col.is_valid().to_numpy(zero_copy_only=False)))[0])
            raise ValueError(f"{source}: column {c.name!r} has a missing value (null) in row "
                             f"{row}")
        if c.width > 1:
            size = c.width * np.dtype(c.dtype).itemsize
            data = np.frombuffer(col.buffers()[1], dtype=np.uint8)
            data = data[col.offset * size:(col.offset + len(col)) * size]
            out[c.name] = data.view(_dtype(c)).reshape(len(col), c.width).astype(
                np.dtype(c.dtype), copy=False)
        else:
            out[c.name] = col.to_numpy(zero_copy_only=False)
    return out


def write_options(randomizer: LocalRandomizer) -> dict:
    """Keyword arguments of ``pyarrow.parquet.ParquetWriter`` for these columns: integers
    delta-packed, integer/boolean fixed-size columns zstd, the rest plain; no dictionaries;
    page checksums on."""
    encoding, compression = {}, {}
    for c in randomizer.report_columns():
        kind = np.dtype(c.dtype).kind
        if c.width == 1 and kind in "iu":
            encoding[c.name], compression[c.name] = "DELTA_BINARY_PACKED", "none"
        elif c.width > 1 and kind in "iub":
            compression[c.name] = "zstd"
        else:
            compression[c.name] = "none"
    return dict(use_dictionary=False, column_encoding=encoding or None,
                compression=compression, write_page_checksum=True)
