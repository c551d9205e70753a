"""Helpers shared by the CLI commands: number parsing and plain-text tables."""
from __future__ import annotations

import argparse


def number(text: str) -> float:
    """Parse 1e6, 1_000_000 or 0.5 as a float (integers are checked by the API)."""
    try:
        return float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def fmt(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return str(value)
    return f"{value:.6g}"


def print_table(rows: list[tuple[str, ...]], head: tuple[str, ...], rule: bool = True) -> None:
    """Left-aligned columns as wide as their widest cell; a dashed rule under the head."""
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
    print(line)
    if rule:
        print("-" * len(line))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
