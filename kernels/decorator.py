"""The kernels' decorator: Numba's ``njit(cache=True)`` without the C-callable wrapper.

Numba builds two entry points around every function it compiles: the one Python calls, and a
C-ABI one ("cfunc wrapper") used only where a compiled function is taken as a first-class
function value inside another kernel, which none of ours is. That second wrapper is lowered,
optimised and machine-compiled for every kernel and costs ~15 ms of compilation each; the
first ``ldpcompress demo`` compiles ~60 kernels. ``no_cfunc_wrapper`` is an option of Numba's
CPU target (``numba.core.cpu.CPUTargetOptions``); should a release drop it, ``kernel`` falls
back to plain ``njit(cache=True)``. The compiled code, and so every number, is the same.

Helpers of a few lines that other kernels call are declared ``@kernel(inline="always")``:
Numba inlines them into each caller's IR, so they add no compilation unit (typing, wrapper,
LLVM module, cache file) of their own, ~60 ms each on the first run; Python calls still
compile them as usual.
"""
from numba import njit
from numba.core.cpu import CPUTargetOptions

__all__ = ["OPTIONS", "kernel"]

OPTIONS = {"cache": True}
if hasattr(CPUTargetOptions, "no_cfunc_wrapper"):
    OPTIONS["no_cfunc_wrapper"] = True


def kernel(fn=None, **options):
    """``@kernel`` or ``@kernel(nogil=True)``: ``njit(**OPTIONS, **options)``."""
    if fn is None:
        return lambda f: njit(f, **OPTIONS, **options)
    return njit(fn, **OPTIONS, **options)
