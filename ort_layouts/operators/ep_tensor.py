"""The descriptor the DML EP gives an ONNX tensor by default: ``DmlOperator::Initialize`` makes a
``TensorDesc`` of its shape, right-aligned to at least ``minDimensionCount`` dimensions
(``NchwDimensionCount``, 4, by default: leading 1s), packed, with no strides (``TensorDesc.cpp``
sets them only where it broadcasts). The copies, Expand, Concat and Split start from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.buffer_tensor import MAX_DIMENSION_COUNT, BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import int_tuple, is_integer

__all__ = ["MIN_DIMENSION_COUNT", "checked_min_dimension_count", "padded", "padded_desc"]

MIN_DIMENSION_COUNT = 4  # DmlOperator::Initialize's default minDimensionCount (NchwDimensionCount)


def padded_desc(data_type: DataType | str, shape: Sequence[int],
                min_dimension_count: int = MIN_DIMENSION_COUNT) -> BufferTensorDesc:
    """The packed descriptor the EP builds for an ONNX shape: right-aligned to at least
    ``min_dimension_count`` dimensions with leading 1s, Strides null.

    Raises:
        DescriptorError: a 0-sized dimension or more than 8 dimensions (the EP's TensorDesc
            throws for rank > 8).
        ShapeError: ``min_dimension_count`` is not an integer 1..8.
    """
    dims = int_tuple(shape, "shape")
    count = checked_min_dimension_count(min_dimension_count)
    return padded(DataType.coerce(data_type), dims, count)


def padded(data_type: DataType, dims: tuple[int, ...], count: int = MIN_DIMENSION_COUNT) -> BufferTensorDesc:
    """:func:`padded_desc` of arguments already checked (a DataType, a tuple of ints, a count
    that :func:`checked_min_dimension_count` took)."""
    return BufferTensorDesc(data_type, (1,) * max(0, count - len(dims)) + dims)


def checked_min_dimension_count(value: Any) -> int:
    """``value`` as a minimum dimension count.

    Raises:
        ShapeError: ``value`` is not an integer 1..8 (DirectML's DimensionCount range).
    """
    if not is_integer(value) or not 1 <= value <= MAX_DIMENSION_COUNT:
        raise ShapeError(f"min_dimension_count {value!r:.80} is not valid; valid: an integer "
                         f"1..{MAX_DIMENSION_COUNT} (the EP's default is {MIN_DIMENSION_COUNT})")
    return int(value)
