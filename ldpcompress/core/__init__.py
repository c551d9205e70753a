"""Shared primitives under every job: input validation (``validate``), resource limits
(``limits``), optional extras (``optional``), and randomness: the OS CSPRNG for client coins
(``entropy``) and the AES-CTR stream that seeds expand into (``prg``, docs/theory.md §5.1)."""

__all__ = []

