"""What counts as an ordered sequence of integers (sizes, strides, a perm, pads, repeats, a
Case's shape): one rule, and one message for what breaks it, for the descriptors and the
operators; each caller names the value and picks its error type (:func:`int_tuple`).

The fast path (a tuple of Python ints is taken as it is, :func:`is_int_tuple`) is
:func:`as_int_tuple`'s own: callers ask it for every value.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, TypeGuard

from ort_layouts._errors import ShapeError

__all__ = ["INT64_MAX", "INT64_MIN", "TEXT_TYPES", "as_int_tuple", "int_tuple", "is_int_tuple", "is_integer",
           "is_ordered_sequence"]

#: the int64 range: ONNX's dimensions, Slice bounds and other int64 attributes and inputs
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: sequences whose items are characters or bytes: taking them would silently make other integers
TEXT_TYPES = (str, bytes, bytearray, memoryview)


def is_ordered_sequence(value: Any) -> bool:
    """Whether ``value`` holds its items in an order that can be read again: it has a length
    and can be iterated, and is not text (str, bytes), a set (no order) or a mapping (its keys).
    A generator or iterator (read once, no length), a scalar and a 0-d array are not."""
    if isinstance(value, (*TEXT_TYPES, AbstractSet, Mapping)):
        return False
    try:
        len(value)
        iter(value)
    except TypeError:
        return False
    return True


def is_integer(value: Any) -> bool:
    """Whether ``value`` is an integer item: a Python or numpy integer, not a bool (True would
    silently be 1) nor a float (2.0)."""
    return type(value) is int or (not isinstance(value, bool) and isinstance(value, numbers.Integral))


def is_int_tuple(value: Any) -> TypeGuard[tuple[int, ...]]:
    """Whether ``value`` is already a tuple of Python ints (as a Case holds them): a cache key
    that equals only itself, where 1.0 and True would equal 1 but are no integers here."""
    return type(value) is tuple and all(type(v) is int for v in value)


def as_int_tuple(value: Any) -> tuple[int, ...] | None:
    """``value`` as a tuple of Python ints, or None when it is not an ordered sequence
    (:func:`is_ordered_sequence`) of integers (:func:`is_integer`)."""
    if is_int_tuple(value):
        return value
    if not is_ordered_sequence(value):
        return None
    out = []
    for v in value:
        if not is_integer(v):
            return None
        out.append(int(v))
    return tuple(out)


def int_tuple(value: Any, what: str, error: Callable[[str], Exception] = ShapeError, *,
              low: int | None = None) -> tuple[int, ...]:
    """``value`` as a tuple of Python ints (:func:`as_int_tuple`), each at least ``low`` where
    given.

    Args:
        value: the sequence.
        what: names it in the message ("sizes", "Tile repeats").
        error: makes the exception from the message (a ShapeError by default).
        low: the least valid item, if any.

    Raises:
        Exception: ``error(message)``, the message naming ``what``, the value, its first bad
            item and what is valid.

    >>> int_tuple([2, 3], "shape")
    (2, 3)
    >>> int_tuple((2, -1), "shape", low=0)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ort_layouts._errors.ShapeError: shape (2, -1) holds -1, which is less than 0; valid: a list,
    tuple or array of integers >= 0
    """
    out = as_int_tuple(value)
    if out is None:
        if is_ordered_sequence(value):
            bad = next(v for v in value if not is_integer(v))
            problem = f"holds {bad!r}, which is not an integer"
        else:
            problem = "is not a sequence of integers"
    elif low is None or min(out, default=low) >= low:
        return out
    else:
        problem = f"holds {next(v for v in out if v < low)}, which is less than {low}"
    valid = "a list, tuple or array of integers" + ("" if low is None else f" >= {low}")
    raise error(f"{what} {value!r} {problem}; valid: {valid}")
