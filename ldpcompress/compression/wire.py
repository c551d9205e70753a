"""Wire format of compressed reports (docs/theory.md §5.1): one version byte, then the 16 seed bytes."""
from __future__ import annotations

from ..core.prg import SEED_BYTES

__all__ = ["VERSION", "REPORT_BYTES", "pack", "unpack"]


VERSION = 1
REPORT_BYTES = 1 + SEED_BYTES


def pack(seed: bytes) -> bytes:
    """Report bytes of a seed."""
    return bytes([VERSION]) + seed


def unpack(report) -> bytes:
    """The seed inside a report; ValueError for a wrong length or version."""
    if not isinstance(report, (bytes, bytearray, memoryview)):
        raise TypeError(f"report must be bytes, got {type(report).__name__}")
    report = bytes(report)
    if len(report) != REPORT_BYTES:
        raise ValueError(f"report must be {REPORT_BYTES} bytes (version + 16-byte seed), "
                         f"got {len(report)}")
    if report[0] != VERSION:
        raise ValueError(f"unknown report format version {report[0]} (this library reads {VERSION})")
    return report[1:]
