"""IdentityOp (DML_OPERATOR_ELEMENT_WISE_IDENTITY): an output whose elements share a buffer
offset is refused when the operator is made."""

from __future__ import annotations

import pytest

from ort_layouts import BufferTensorDesc, DescriptorError, IdentityOp

F32_2x3 = BufferTensorDesc("float32", (2, 3))


@pytest.mark.parametrize(("sizes", "strides"),
                         [((2, 3), (0, 1)),   # a broadcast row: (0, j) and (1, j) share offset j
                          ((2, 3), (1, 1)),   # (0, 1) and (1, 0) both at offset 1
                          ((2, 3), (2, 1)),   # (0, 2) and (1, 0) both at offset 2
                          ((3, 2), (1, 0))],  # a broadcast column
                         ids=["stride-0-row", "diagonal", "short-row-pitch", "stride-0-column"])
def test_an_overlapping_output_is_refused_when_made(sizes: tuple[int, int], strides: tuple[int, int]) -> None:
    source = BufferTensorDesc("float32", sizes)
    packed = [sizes[1], 1]  # row-major, by hand
    with pytest.raises(DescriptorError) as info:
        IdentityOp(source, BufferTensorDesc("float32", sizes, strides))
    assert (f"output strides {list(strides)} for sizes {list(sizes)} make distinct elements share a buffer "
            f"offset; an output must not overlap; valid: strides that give each element its own offset, e.g. "
            f"packed {packed}") in str(info.value)
    assert info.value.rule == "output-overlap"


@pytest.mark.parametrize(("sizes", "strides"),
                         [((2, 3), (3, 1)), ((2, 3), (1, 2)), ((2, 3), (4, 1)), ((1, 3), (0, 1))],
                         ids=["packed", "column-major", "row-pitch-4", "stride-0-on-size-1"])
def test_an_output_of_distinct_offsets_is_taken(sizes: tuple[int, int], strides: tuple[int, int]) -> None:
    # every index has its own offset (a size-1 axis has a single index whatever its stride)
    op = IdentityOp(BufferTensorDesc("float32", sizes), BufferTensorDesc("float32", sizes, strides))
    offsets = {op.output.offset_of((i, j)) for i in range(sizes[0]) for j in range(sizes[1])}
    assert len(offsets) == sizes[0] * sizes[1]


def test_an_overlapping_input_is_taken() -> None:
    # reading one element twice is a broadcast, as the DML EP builds Expand
    op = IdentityOp(BufferTensorDesc("float32", (2, 3), (0, 1)), F32_2x3)
    assert op.input.strides == (0, 1)
