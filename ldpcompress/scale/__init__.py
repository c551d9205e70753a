"""The server at scale: report sets on disk with a manifest and digests (``report_files``, the
public face of ``writer``, ``reader``, ``manifest``, ``metadata``, ``output_dir``,
``items_csv``; only regular files are read: ``core.regular_files``) and their aggregation in
memory or on Dask (``distributed``). Needs the extra ``[dask]`` (pyarrow, dask.distributed), imported when
used."""

__all__ = []
