"""The estimation jobs end to end: ``demo`` (simulated users, a frequency oracle at the largest
eps0 its own shuffled bound allows, shuffling, the histogram) and ``mean`` (PrivUnit2 plain and
compressed against the one-bit baseline). The servers themselves are the randomizers'
estimators (``ldpcompress.randomizers``)."""

__all__ = []

