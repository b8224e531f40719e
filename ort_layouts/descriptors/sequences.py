"""What counts as an ordered sequence of integers (sizes, strides, a perm, pads, repeats, a
Case's shape): one rule for the descriptors and the operators, each caller raising its own
error with its own message.

The callers keep their fast path (a tuple of Python ints is taken as it is) and ask these
functions only for anything else.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

__all__ = ["as_int_tuple", "is_integer", "is_ordered_sequence"]

# sequences whose items are characters or bytes: taking them would silently make other integers
_TEXT = (str, bytes, bytearray, memoryview)


def is_ordered_sequence(value: Any) -> bool:
    """Whether ``value`` holds its items in an order that can be read again: it has a length
    and can be iterated, and is not text (str, bytes), a set (no order) or a mapping (its keys).
    A generator or iterator (read once, no length), a scalar and a 0-d array are not."""
    if isinstance(value, (*_TEXT, AbstractSet, Mapping)):
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


def as_int_tuple(value: Any) -> tuple[int, ...] | None:
    """``value`` as a tuple of Python ints, or None when it is not an ordered sequence
    (:func:`is_ordered_sequence`) of integers (:func:`is_integer`)."""
    if type(value) is tuple and all(type(v) is int for v in value):
        return value
    if not is_ordered_sequence(value):
        return None
    out = []
    for v in value:
        if not is_integer(v):
            return None
        out.append(int(v))
    return tuple(out)

