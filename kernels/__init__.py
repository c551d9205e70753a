"""Numba kernels of ldpcompress (installed as ``ldpcompress.kernels``).

Pure numeric functions of arrays and scalars, compiled with ``@njit(cache=True)``.
"""

__all__ = []

