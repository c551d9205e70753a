"""Wire format of compressed reports (docs/theory.md §5.1): one version byte, then the 16 seed
bytes.

A batch of reports travels as a bytes blob of n x 17 bytes, a uint8 array of shape (n, 17), or
a sequence of n 17-byte reports; :func:`seed_rows` validates any of them into the seeds the
batch kernels take.
"""
from __future__ import annotations

import numpy as np

from ..core.limits import array_bytes, check_bytes
from ..core.prg import SEED_BYTES

__all__ = ["VERSION", "REPORT_BYTES", "pack", "unpack", "pack_rows", "seed_rows"]


VERSION = 1
REPORT_BYTES = 1 + SEED_BYTES


def pack(seed: bytes) -> bytes:
    """Report bytes of a seed.

    Parameters
    ----------
    seed : bytes
        A 16-byte seed.
    """
    return bytes([VERSION]) + seed


def unpack(report) -> bytes:
    """The seed inside a report; ValueError for a wrong length or version.

    Parameters
    ----------
    report : bytes
        A 17-byte report (untrusted).
    """
    if not isinstance(report, (bytes, bytearray, memoryview)):
        raise TypeError(f"report must be bytes, got {type(report).__name__}")
    report = bytes(report)
    if len(report) != REPORT_BYTES:
        raise ValueError(f"report must be {REPORT_BYTES} bytes (version + 16-byte seed), "
                         f"got {len(report)}")
    if report[0] != VERSION:
        raise ValueError(f"unknown report format version {report[0]} (this library reads {VERSION})")
    return report[1:]


def pack_rows(seeds: np.ndarray) -> np.ndarray:
    """Reports of a (n, 16) uint8 seed array as a (n, 17) uint8 array (version byte first)."""
    out = np.empty((seeds.shape[0], REPORT_BYTES), dtype=np.uint8)
    out[:, 0] = VERSION
    out[:, 1:] = seeds
    return out


def _rows_of_sequence(reports, group: int | None) -> np.ndarray:
    """A sequence of reports (each a list of ``group`` reports when group is given) as uint8
    rows, every element a bytes-like object of exactly REPORT_BYTES bytes."""
    flat = []
    for i, r in enumerate(reports):
        parts = [r] if group is None else r
        if group is not None:
            if not isinstance(r, (list, tuple)):
                raise TypeError(f"report {i}: a report is a list of {group} seeds, got "
                                f"{type(r).__name__}")
            if len(r) != group:
                raise ValueError(f"report {i}: a report has {group} seeds, got {len(r)}")
        for part in parts:
            if not isinstance(part, (bytes, bytearray, memoryview)):
                raise TypeError(f"report {i}: a compressed report is {REPORT_BYTES} bytes, got "
                                f"{type(part).__name__}")
            if len(part) != REPORT_BYTES:
                raise ValueError(f"report {i}: a compressed report is {REPORT_BYTES} bytes "
                                 f"(version + 16-byte seed), got {len(part)}")
            flat.append(part)
    blob = b"".join(flat)
    return np.frombuffer(blob, dtype=np.uint8).reshape(len(flat), REPORT_BYTES)


def seed_rows(reports, group: int | None = None) -> np.ndarray:
    """The seeds of a batch of n compressed reports, validated, as a C-contiguous uint8 array
    of shape (n K, 16): K = 1, or K = ``group`` when each report is a list of ``group`` seed
    reports (K-copy PrivUnit2). ``reports``: a bytes-like blob of n K 17 bytes, a uint8 array
    of shape (n, 17) (with a group: (n, K, 17)), or a sequence of n reports (17 bytes each,
    with a group lists of K of them). Every report must have the version byte
    :data:`VERSION`; errors name the first bad report."""
    k = 1 if group is None else group
    per = k * REPORT_BYTES
    if isinstance(reports, (bytes, bytearray, memoryview)):
        data = np.frombuffer(reports, dtype=np.uint8)
        if data.size % per:
            raise ValueError(f"a batch of compressed reports is a multiple of {per} bytes "
                             f"({k} x {REPORT_BYTES} bytes a report), got {data.size}")
        rows = data.reshape(-1, REPORT_BYTES)
    elif isinstance(reports, np.ndarray):
        want = (REPORT_BYTES,) if group is None else (group, REPORT_BYTES)
        if reports.dtype != np.uint8 or reports.ndim != 1 + len(want) \
                or reports.shape[1:] != want:
            raise ValueError(f"an array of compressed reports must be uint8 of shape "
                             f"(n, {', '.join(map(str, want))}), got {reports.dtype} of shape "
                             f"{reports.shape}")
        rows = reports.reshape(-1, REPORT_BYTES)
    elif isinstance(reports, str) or not hasattr(reports, "__iter__"):
        raise TypeError(f"reports must be bytes, a uint8 array or a sequence of reports, got "
                        f"{type(reports).__name__}")
    else:
        rows = _rows_of_sequence(reports, group)
    check_bytes(array_bytes((rows.shape[0], SEED_BYTES), np.uint8),
                f"the seeds of {rows.shape[0]} compressed reports", "the batch (split it)")
    bad = rows[:, 0] != VERSION
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"report {i // k}: unknown report format version {rows[i, 0]} "
                         f"(this library reads {VERSION})")
    return np.ascontiguousarray(rows[:, 1:])
