"""Shared primitives under every job: input validation (``validate``), resource limits
(``limits``), optional extras (``optional``), imports at first use (``lazy``), and
randomness: the OS CSPRNG for client coins (``entropy``), the AES-CTR stream that seeds expand
into (``prg``, docs/theory.md §5.1), and exact client coins drawn in bulk from such a stream
(``coins``, docs/theory.md §6)."""

__all__ = []

