"""calc_buffer_tensor_size, packed_strides, last_element_index."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ort_layouts import DataType, DescriptorError, calc_buffer_tensor_size
from ort_layouts.descriptors.size import last_element_index, packed_strides

DTYPES = [t for t in DataType.known()]


def numpy_minimum(bitwidth: int, sizes: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Independent reference: enumerate every element's offset with numpy."""
    grids = np.indices(sizes, dtype=np.int64).reshape(len(sizes), -1)
    last = int((grids * np.array(strides, dtype=np.int64)[:, None]).sum(axis=0).max())
    bits = (last + 1) * bitwidth
    return ((bits + 7) // 8 + 3) // 4 * 4


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=8).map(tuple)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), sizes=shapes, dtype=st.sampled_from(DTYPES))
def test_size_is_max_offset_plus_one_rounded(data: st.DataObject, sizes: tuple[int, ...],
                                             dtype: DataType) -> None:
    strides = tuple(data.draw(st.lists(st.integers(0, 50), min_size=len(sizes), max_size=len(sizes))))
    assert calc_buffer_tensor_size(dtype, sizes, strides) == numpy_minimum(dtype.bitwidth, sizes, strides)


@settings(max_examples=60, deadline=None)
@given(sizes=shapes, dtype=st.sampled_from(DTYPES))
def test_packed_equals_product(sizes: tuple[int, ...], dtype: DataType) -> None:
    expected = ((math.prod(sizes) * dtype.bitwidth + 7) // 8 + 3) // 4 * 4
    assert calc_buffer_tensor_size(dtype, sizes) == expected
    assert calc_buffer_tensor_size(dtype, sizes, packed_strides(sizes)) == expected


def test_packed_strides() -> None:
    assert packed_strides((2, 2, 3)) == (6, 3, 1)
    assert packed_strides((1, 1, 3, 5)) == (15, 15, 5, 1)
    assert last_element_index((2, 2, 3), None) == 11
    assert last_element_index((2, 3), (5, 1)) == 7


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17],
                         ids=lambda n: f"n{n}")
def test_always_multiple_of_four_and_at_least_the_bytes(size: int) -> None:
    for dtype in DTYPES:
        got = calc_buffer_tensor_size(dtype, (size,))
        assert got % 4 == 0
        assert got * 8 >= size * dtype.bitwidth > (got - 4) * 8


def test_exact_beyond_64_bits_of_bytes() -> None:
    # no 32- or 64-bit intermediate: 2^40 * 2^30 elements of 8 bytes
    assert calc_buffer_tensor_size("int64", (2**40, 2**30)) == 2**73


def test_rejects_bad_input() -> None:
    with pytest.raises(DescriptorError, match="0"):
        calc_buffer_tensor_size("float32", (2, 0))
    with pytest.raises(DescriptorError, match="-1"):
        calc_buffer_tensor_size("float32", (2, 3), (-1, 1))
