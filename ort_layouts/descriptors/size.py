"""DMLCalcBufferTensorSize, exact for any size and for 4-bit types."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from ort_layouts._errors import DescriptorError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import int_tuple

__all__ = ["calc_buffer_tensor_size", "last_element_index", "packed_strides"]


def check_sizes_strides(
    sizes: Sequence[int], strides: Sequence[int] | None
) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """Normalise to tuples of Python ints; reject empty, zero or negative sizes and bad strides."""
    sz = int_tuple(sizes, "sizes", functools.partial(DescriptorError, "sizes", sizes))
    if not sz:
        raise DescriptorError("dimension-count", 0, "sizes is empty: DimensionCount must be 1..8")
    for axis, s in enumerate(sz):
        if s <= 0:
            raise DescriptorError(
                "size-positive", list(sz),
                f"sizes {list(sz)} has {s} at axis {axis}: every size must be at least 1")
    if strides is None:
        return sz, None
    st = int_tuple(strides, "strides", functools.partial(DescriptorError, "strides", strides))
    if len(st) != len(sz):
        raise DescriptorError(
            "strides-length", list(st),
            f"strides {list(st)} has {len(st)} entries but sizes {list(sz)} has {len(sz)}")
    for axis, s in enumerate(st):
        if s < 0:
            raise DescriptorError(
                "stride-nonnegative", list(st),
                f"strides {list(st)} has {s} at axis {axis}: DirectML strides are unsigned "
                "element counts (0 broadcasts)")
    return sz, st


def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Packed strides in descending order (the strides DirectML assumes when none are given)."""
    if type(sizes) is tuple:
        try:
            return _packed_strides_of_tuple(sizes)
        except TypeError:  # an unhashable entry: let the plain path report it
            pass
    return _packed_strides(sizes)


def _packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    out = [0] * len(sizes)
    step = 1
    for axis in range(len(sizes) - 1, -1, -1):
        out[axis] = step
        step *= int(sizes[axis])
    return tuple(out)


# descriptors are built over and over with the same few shapes
_packed_strides_of_tuple = functools.lru_cache(maxsize=4096)(_packed_strides)


def last_element_index(sizes: Sequence[int], strides: Sequence[int] | None) -> int:
    """``dot(sizes - 1, strides)``: the buffer index (in elements) of the last element."""
    if strides is None:  # packed: the sum telescopes to prod(sizes) - 1
        return math.prod(int(n) for n in sizes) - 1
    return sum((int(n) - 1) * int(s) for n, s in zip(sizes, strides, strict=True))


def calc_buffer_tensor_size(
    data_type: DataType | str | Any,
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
) -> int:
    """DMLCalcBufferTensorSize: the minimum buffer size in bytes, rounded up to 4.

    Works in bits so that UINT4/INT4 fit (``ceil(elements * bitwidth / 8)``), and in Python
    integers so that it never wraps (DirectML's C++ listings accumulate the last index in 32 bits).

    >>> calc_buffer_tensor_size("float16", [1, 1, 3, 5])
    32
    >>> calc_buffer_tensor_size("uint4", [3])
    4
    """
    dtype = DataType.coerce(data_type)
    sz, st = check_sizes_strides(sizes, strides)
    if st is None:
        elements = 1
        for n in sz:
            elements *= n
    else:
        elements = last_element_index(sz, st) + 1
    size_in_bytes = -(-elements * dtype.bitwidth // 8)
    return (size_in_bytes + 3) & ~3
