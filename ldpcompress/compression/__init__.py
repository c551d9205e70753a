"""Compression of local randomizers (FT21; docs/theory.md §5): any deletion-DP randomizer
becomes one that sends a 17-byte seed report (``wire``) by rejection sampling on the AES-CTR
stream (``sampler``); those reports as a randomizer of their own for report sets and
aggregation (``compressed``); PrivUnit2 with K-copy splitting (``split``)."""
from .compressed import CompressedRandomizer
from .sampler import PseudoRandomizer, compress, trials_for
from .split import CompressedPrivUnit2, choose_split
from .wire import pack, unpack

__all__ = ["compress", "PseudoRandomizer", "CompressedRandomizer", "trials_for",
           "CompressedPrivUnit2", "choose_split", "pack", "unpack"]
