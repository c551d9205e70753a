"""Compression of local randomizers (FT21; docs/theory.md §5): any deletion-DP randomizer
becomes one that sends a 17-byte seed report (``wire``) by rejection sampling on the AES-CTR
stream (``sampler``); those reports as a randomizer of their own for report sets and
aggregation (``compressed``); PrivUnit2 with K-copy splitting (``split``)."""
from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports as _lazy_exports

_EXPORTS = {"CompressedRandomizer": "compressed",
            **dict.fromkeys(["PseudoRandomizer", "compress", "trials_for"], "sampler"),
            **dict.fromkeys(["CompressedPrivUnit2", "choose_split"], "split"),
            **dict.fromkeys(["pack", "unpack"], "wire")}
__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)  # imported at first use

if TYPE_CHECKING:
    from .compressed import CompressedRandomizer
    from .sampler import PseudoRandomizer, compress, trials_for
    from .split import CompressedPrivUnit2, choose_split
    from .wire import pack, unpack

__all__ = ["compress", "PseudoRandomizer", "CompressedRandomizer", "trials_for",
           "CompressedPrivUnit2", "choose_split", "pack", "unpack"]
