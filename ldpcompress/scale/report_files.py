"""Report sets of any registered randomizer: the public face of the modules that write, list
and read them.

A report set is one directory holding shards ``reports-00000.parquet``, ... and
``manifest.json`` (format in docs/guide.md, section 2, "Wire formats"; checks in section 3,
"Report sets and aggregation"). This module defines nothing: it hands on the public names of
the modules that do each job, so that ``from ldpcompress.scale import report_files`` keeps
working. Each job has its own module, data flowing one way (each imports only modules listed
below it)::

    shuffle        the shuffler step: a set rewritten in a uniform random order (two passes)
    items_csv      users' items (or vectors) from a strict CSV, one per line, streamed
    writer         ReportSetWriter, write_reports, write_items: shards, then the manifest
    reader         collect the sets named by paths; hash, parse and check shards in batches
    output_dir     the directory written into: created, locked, emptied of an old set only
    manifest       manifest.json and its Shard records, every field checked
    columns        a randomizer's report columns <-> Arrow/Parquet (layout and encodings)
    metadata       the randomizer's spec <-> the randomizer; each shard's metadata; JSON checks
    core.regular_files  only regular files are read (a FIFO could block); output files checked

A constant is read by the module that defines it: to change one (in a test, say), set it
there (``writer.CHUNK``), not here.
"""
from __future__ import annotations

from ..core.regular_files import check_output_file, check_regular, open_regular
from .columns import arrow_schema, row_bytes
from .items_csv import CSV_CHUNK, count_csv_items, csv_items
from .manifest import (KIND, MANIFEST, MAX_MANIFEST_BYTES, MAX_SHARDS, SetInfo, Shard,
                       common_items, read_info, read_manifest)
from .metadata import (FORMAT, MAX_META_BYTES, META_KEY, RANDOMIZER_KEY, randomizer_from_spec,
                       shard_meta)
from .output_dir import LOCK, prepare_output
from .reader import (READ_BATCH_BYTES, READ_BATCH_ROWS, READ_BUFFER, VERIFY_BLOCK, VERIFY_CACHE,
                     batch_rows_for, collect, iter_shard, read_shard, summarize_shard)
from .shuffle import shuffle_report_set
from .writer import (CHUNK, PAGE_BYTES, ROW_GROUP_ROWS, ReportSetWriter, check_disk, write_items,
                     write_reports)

__all__ = ["FORMAT", "META_KEY", "RANDOMIZER_KEY", "MANIFEST", "KIND", "CHUNK",
           "ROW_GROUP_ROWS", "CSV_CHUNK", "MAX_SHARDS", "MAX_MANIFEST_BYTES", "MAX_META_BYTES",
           "READ_BATCH_BYTES", "READ_BATCH_ROWS", "READ_BUFFER", "PAGE_BYTES", "VERIFY_BLOCK",
           "VERIFY_CACHE", "randomizer_from_spec", "shard_meta", "arrow_schema", "row_bytes",
           "Shard", "check_regular", "open_regular", "read_manifest", "LOCK", "prepare_output",
           "ReportSetWriter", "write_reports", "write_items", "check_output_file", "check_disk",
           "csv_items", "count_csv_items", "collect", "iter_shard", "summarize_shard",
           "read_shard", "batch_rows_for", "SetInfo", "read_info", "common_items",
           "shuffle_report_set"]
