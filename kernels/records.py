"""Named argument records of the kernels (one typed NamedTuple per kernel family).

A record is built in Python by keyword through ``record(cls, **fields)``: a missing or unknown
field is a TypeError, a non-finite-where-finite or NaN value a ValueError, and every field is
coerced to its declared type (float, int or bool) so a kernel family compiles to one signature.
The kernel unpacks the record by name at its entry: no positional order to get wrong.
"""
import math

import numpy as np

__all__ = ["record"]


def record(cls, **fields):
    """cls(**fields) with each field coerced to its annotation (float, int or bool); loud on a
    missing, unknown, NaN, non-integral or non-boolean field."""
    names = tuple(cls._fields)
    missing = [f for f in names if f not in fields]
    unknown = [f for f in fields if f not in names]
    if missing or unknown:
        raise TypeError(f"{cls.__name__} needs exactly the fields {names}; missing {missing}, "
                        f"unknown {unknown}")
    out = {}
    for name in names:
        kind = cls.__annotations__[name]
        value = fields[name]
        if kind is bool:
            if value is not True and value is not False and not isinstance(value, np.bool_):
                raise ValueError(f"{cls.__name__}.{name} must be True or False, got {value!r}")
            out[name] = bool(value)
        elif kind is int:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(f"{cls.__name__}.{name} must be an integer, got {value!r}")
            out[name] = int(value)
        else:
            value = float(value)
            if math.isnan(value):
                raise ValueError(f"{cls.__name__}.{name} is NaN")
            out[name] = value
    return cls(**out)
