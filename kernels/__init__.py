"""Numba kernels of ldpcompress (installed as ``ldpcompress.kernels``).

Pure numeric functions of arrays and scalars, each compiled with ``@kernel``
(decorator.py: Numba's ``njit(cache=True)`` without the C-callable wrapper none of them needs).
"""

__all__ = []

