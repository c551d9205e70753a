"""Lazy imports of optional extras with an error that names the extra to install."""
from __future__ import annotations

import importlib

__all__ = ["require"]



def require(extra: str, *modules: str):
    """Import ``modules`` (in order) or raise ImportError saying: pip install 'ldpcompress[extra]'."""
    try:
        loaded = [importlib.import_module(m) for m in modules]
    except ImportError as err:
        raise ImportError(f"this needs the optional extra: pip install 'ldpcompress[{extra}]' "
                          f"({err})") from err
    return loaded[0] if len(loaded) == 1 else tuple(loaded)
