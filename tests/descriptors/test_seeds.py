"""Every worked example of DirectML's documentation (the seeds) and of directml-facts.md.

Expected values are copied from those documents, never from this package's output.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from ort_layouts import (
    BufferTensorDesc,
    DataType,
    DescriptorError,
    NotExpressibleError,
    PaddingMode,
    PaddingOp,
    TensorFlags,
    calc_buffer_tensor_size,
    calculate_strides,
)
from ort_layouts.reports.render import render_text

LETTERS = np.frombuffer(b"ABCDEFGHIJKL", dtype=np.uint8)


def buffer_row(text: str) -> list[str]:
    """The Value: cells of a rendered buffer table."""
    values: list[str] = []
    for line in text.splitlines():
        if line.startswith("Value:"):
            values += [c.strip() for c in line.split("|")[1:-1]]
    return values


def logical_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index("Logical view:") + 1
    end = lines.index("Buffer (elements):")
    return [" ".join(line.split()) for line in lines[start:end]]


def as_chars(desc: BufferTensorDesc, buffer: bytes) -> list[str]:
    return [bytes([b]).decode() for b in desc.view(buffer).ravel()]


# ---- "Using strides to express padding and memory layout" ----------------------------------
class TestTwoDimensional:
    """Height 2, width 3: logical A B C / D E F."""

    def test_hw_row_major_table(self) -> None:
        desc = BufferTensorDesc.packed("uint8", (2, 3), layout="HW")
        assert desc.strides == (3, 1)  # width stride 1, height stride = width = 3
        # Offset 0..5 holds A B C D E F
        assert [desc.offset_of((h, w)) for h in range(2) for w in range(3)] == [0, 1, 2, 3, 4, 5]
        buffer = b"ABCDEF" + b"\0\0"
        assert as_chars(desc, buffer) == list("ABCDEF")
        text = render_text(desc)
        assert logical_rows(text) == ["A B C", "D E F"]
        assert buffer_row(text)[:6] == list("ABCDEF")

    def test_wh_column_major_table(self) -> None:
        desc = BufferTensorDesc.packed("uint8", (2, 3), layout="WH")
        assert desc.strides == (1, 2)  # height stride 1, width stride 2 (the height)
        buffer = b"ADBECF" + b"\0\0"  # the seed's column-major table
        assert as_chars(desc, buffer) == list("ABCDEF")
        text = render_text(desc)
        assert logical_rows(text) == ["A B C", "D E F"]
        assert buffer_row(text)[:6] == list("ADBECF")

    def test_named_layouts_of_the_2d_tables(self) -> None:
        assert BufferTensorDesc("uint8", (2, 3), (3, 1)).layout() == "HW"
        assert BufferTensorDesc("uint8", (2, 3), (1, 2)).layout() == "WH"


class TestThreeDimensional:
    """Depth 2, height 2, width 3: A..L stored DHW."""

    def test_dhw_strides(self) -> None:
        # D-stride = 2 * 3 = 6, H-stride = 3, W-stride = 1
        assert calculate_strides("DHW", (2, 2, 3)) == (6, 3, 1)

    def test_dhw_table(self) -> None:
        desc = BufferTensorDesc.packed("uint8", (2, 2, 3), layout="DHW")
        assert as_chars(desc, bytes(LETTERS)) == list("ABCDEFGHIJKL")
        text = render_text(desc)
        assert logical_rows(text) == ["A B C", "D E F", "", "G H I", "J K L"]
        assert buffer_row(text) == list("ABCDEFGHIJKL")
        assert desc.layout() == "DHW"

    def test_offset_of_h(self) -> None:
        desc = BufferTensorDesc("uint8", (2, 2, 3), (6, 3, 1))
        # {1, 0, 1} . {6, 3, 1} = 7, and the element there is H
        assert desc.offset_of((1, 0, 1)) == 1 * 6 + 0 * 3 + 1 * 1 == 7
        assert chr(LETTERS[7]) == "H"
        assert desc.view(bytes(LETTERS))[1, 0, 1] == ord("H")

    def test_whd(self) -> None:
        # "WHD": width is the highest-order dimension, then height, then depth
        assert calculate_strides("WHD", (2, 2, 3)) == (1, 2, 4)

    def test_packed_2x2x3_is_12_elements(self) -> None:
        desc = BufferTensorDesc("uint8", (2, 2, 3))
        assert desc.is_packed and desc.element_count == 12
        assert desc.last_element_index + 1 == 12


class TestBroadcast:
    """Logically 2x3 with the second row equal to the first: 3 stored elements, height-stride 0."""

    def test_height_stride_zero(self) -> None:
        desc = BufferTensorDesc("uint8", (2, 3), (0, 1))
        assert desc.broadcast_axes == (0,)
        assert desc.element_count == 6
        assert desc.addressed_element_count == 3  # physical size 3 elements, logical 6
        assert as_chars(desc, b"ABC\0") == list("ABCABC")
        assert not desc.is_packed

    def test_picture(self) -> None:
        text = render_text(BufferTensorDesc("uint8", (2, 3), (0, 1)))
        assert logical_rows(text) == ["A B C", "A B C"]
        assert buffer_row(text) == ["A", "B", "C", "x"]  # 4 bytes: one byte of end padding

    def test_c_stride_zero_repeats_channels(self) -> None:
        # "if the tensor is NCHW and the C-stride is 0, then each channel has the same values"
        strides = calculate_strides("NCHW", (1, 3, 2, 2), [False, True, False, False])
        assert strides == (4, 0, 2, 1)
        view = BufferTensorDesc("uint8", (1, 3, 2, 2), strides).view(bytes(LETTERS[:4]))
        assert all(np.array_equal(view[0, c], view[0, 0]) for c in range(3))


class TestPaddedRowPitch:
    """A B C x x D E F x x: height-stride 5 instead of 3."""

    def test_table(self) -> None:
        desc = BufferTensorDesc("float32", (2, 3), (5, 1), total_tensor_size_in_bytes=40)
        text = render_text(desc)
        assert logical_rows(text) == ["A B C", "D E F"]
        assert buffer_row(text) == ["A", "B", "C", "x", "x", "D", "E", "F", "x", "x"]
        assert desc.padding_bytes == 4 * 4
        assert not desc.is_packed

    def test_values(self) -> None:
        desc = BufferTensorDesc("uint8", (2, 3), (5, 1), total_tensor_size_in_bytes=12)
        assert as_chars(desc, b"ABCxxDEFxx\0\0") == list("ABCDEF")
        assert desc.minimum_implied_size_in_bytes == 8  # (1*5 + 2*1 + 1) = 8 bytes


class TestNchwNhwc:
    """Height 3, width 5 as {1, 1, 3, 5}."""

    def test_packed_nchw_explicit(self) -> None:
        assert calculate_strides("NCHW", (1, 1, 3, 5)) == (15, 15, 5, 1)

    def test_packed_nhwc(self) -> None:
        assert calculate_strides("NHWC", (1, 1, 3, 5)) == (15, 1, 5, 1)

    def test_implicit_strides_mean_packed_nchw(self) -> None:
        implicit = BufferTensorDesc("float32", (1, 1, 3, 5))
        assert implicit.strides is None
        assert implicit.effective_strides == (15, 15, 5, 1)
        explicit = BufferTensorDesc("float32", (1, 1, 3, 5), (15, 15, 5, 1))
        assert implicit.total_tensor_size_in_bytes == explicit.total_tensor_size_in_bytes == 60

    def test_layout_names(self) -> None:
        assert BufferTensorDesc("float32", (1, 1, 3, 5), (15, 15, 5, 1)).layout() == "NCHW"
        assert BufferTensorDesc("float32", (1, 1, 3, 5), (15, 1, 5, 1)).layout() == "NHWC"

    def test_hw_filled_with_leading_ones(self) -> None:
        # an "HW" tensor is set using Sizes = {1, 1, H, W}
        assert BufferTensorDesc("float32", (3, 5)).coerce_rank(4).sizes == (1, 1, 3, 5)


# ---- "DirectML helper functions": DMLCalcBufferTensorSize ----------------------------------
def dml_calc_buffer_tensor_size_cpp(element_size: int, sizes: list[int], strides: list[int] | None) -> int:
    """The newer C++ listing, transcribed: the last index accumulates in a 32-bit UINT."""
    if strides is None:
        size = sizes[0]
        for n in sizes[1:]:
            size = (size * n) & 0xFFFFFFFFFFFFFFFF
        size = (size * element_size) & 0xFFFFFFFFFFFFFFFF
    else:
        index = np.uint32(0)
        with np.errstate(over="ignore"):
            for n, s in zip(sizes, strides, strict=True):
                index = np.uint32(index + np.uint32(np.uint32(n - 1) * np.uint32(s)))
        size = (int(index) + 1) * element_size
    return (size + 3) & ~3


class TestCalcBufferTensorSize:
    @pytest.mark.parametrize(
        ("data_type", "sizes", "strides", "expected"),
        [
            ("float16", (1, 1, 3, 5), None, 32),  # 15 * 2 = 30 -> 32
            ("float32", (2, 3), (5, 1), 32),  # (5 + 2 + 1) * 4
            ("uint8", (2, 3), None, 8),  # 6 -> 8
            ("uint8", (2, 3), (0, 1), 4),  # 3 -> 4
            ("float64", (3,), None, 24),
            ("uint4", (3,), None, 4),
            ("int4", (2, 5), (5, 1), 8),
            ("uint4", (9,), None, 8),
        ],
        ids=["f16-1x1x3x5", "f32-row-pitch-5", "u8-2x3", "u8-broadcast", "f64-3", "uint4-3",
             "int4-2x5-strided", "uint4-9"],
    )
    def test_vectors(self, data_type: str, sizes: tuple[int, ...], strides: tuple[int, ...] | None,
                     expected: int) -> None:
        assert calc_buffer_tensor_size(data_type, sizes, strides) == expected

    @pytest.mark.parametrize(
        ("sizes", "strides"),
        [((1, 1, 3, 5), None), ((2, 3), (5, 1)), ((2, 3), (0, 1)), ((4, 2, 3), (1, 12, 4))],
        ids=["packed", "row-pitch", "broadcast", "transposed"])
    def test_matches_cpp_listing_when_it_does_not_wrap(
            self, sizes: tuple[int, ...], strides: tuple[int, ...] | None) -> None:
        for dt in ("float32", "float16", "uint8", "int64"):
            element = DataType.from_name(dt).bitwidth // 8
            cpp = dml_calc_buffer_tensor_size_cpp(element, list(sizes), None if strides is None
                                                  else list(strides))
            assert calc_buffer_tensor_size(dt, sizes, strides) == cpp

    def test_32bit_wrap_case(self) -> None:
        sizes, strides = [65537, 65536], [65536, 1]
        # the C++ listing's UINT index wraps: (65536 * 65536 + 65535) mod 2^32 = 65535 -> 65536 bytes
        assert dml_calc_buffer_tensor_size_cpp(1, sizes, strides) == 65536
        exact = 65536 * 65536 + 65535 + 1
        assert calc_buffer_tensor_size("uint8", sizes, strides) == exact == 4295032832
        with pytest.raises(DescriptorError, match="4295032832") as info:
            BufferTensorDesc("uint8", tuple(sizes), tuple(strides))
        assert info.value.rule == "element-count"


# ---- directml-facts.md ---------------------------------------------------------------------
class TestFacts:
    def test_dml_enum_values(self) -> None:
        expected = {"UNKNOWN": 0, "FLOAT32": 1, "FLOAT16": 2, "UINT32": 3, "UINT16": 4, "UINT8": 5,
                    "INT32": 6, "INT16": 7, "INT8": 8, "FLOAT64": 9, "UINT64": 10, "INT64": 11,
                    "UINT4": 12, "INT4": 13}
        assert {t.name: t.value for t in DataType} == expected
        assert (TensorFlags.NONE.value, TensorFlags.OWNED_BY_DML.value) == (0, 1)

    def test_padding_mode_values(self) -> None:
        assert {m.name: m.value for m in PaddingMode} == {
            "CONSTANT": 0, "EDGE": 1, "REFLECTION": 2, "SYMMETRIC": 3, "WRAP": 4}

    @pytest.mark.parametrize(
        ("onnx_type", "dml_type"),
        [(TensorProto.BOOL, DataType.UINT8), (TensorProto.DOUBLE, DataType.FLOAT64),
         (TensorProto.INT64, DataType.INT64), (TensorProto.FLOAT, DataType.FLOAT32),
         (TensorProto.FLOAT16, DataType.FLOAT16), (TensorProto.UINT8, DataType.UINT8),
         (TensorProto.INT8, DataType.INT8), (TensorProto.UINT16, DataType.UINT16),
         (TensorProto.INT16, DataType.INT16), (TensorProto.UINT32, DataType.UINT32),
         (TensorProto.INT32, DataType.INT32), (TensorProto.UINT64, DataType.UINT64),
         (TensorProto.UINT4, DataType.UINT4), (TensorProto.INT4, DataType.INT4)],
        ids=lambda v: TensorProto.DataType.Name(v) if isinstance(v, int) and not isinstance(
            v, DataType) else str(v))
    def test_onnx_to_dml(self, onnx_type: int, dml_type: DataType) -> None:
        assert DataType.from_onnx(onnx_type) is dml_type

    def test_transpose_vector(self) -> None:
        desc = BufferTensorDesc.packed("float32", (2, 3, 4), layout="NCW").transpose((2, 0, 1))
        assert desc.sizes == (4, 2, 3)
        assert desc.strides == (1, 12, 4)
        assert desc.total_tensor_size_in_bytes == 96
        out = BufferTensorDesc("float32", desc.sizes)
        assert out.effective_strides == (6, 3, 1) and out.total_tensor_size_in_bytes == 96

    def test_transpose_default_perm_reverses(self) -> None:
        desc = BufferTensorDesc("float32", (2, 3, 4)).transpose()
        assert desc.sizes == (4, 3, 2) and desc.strides == (1, 4, 12)

    def test_expand_vector(self) -> None:
        desc = BufferTensorDesc("float32", (3,)).broadcast_to((2, 3))
        assert desc.sizes == (2, 3) and desc.strides == (0, 1)
        assert desc.total_tensor_size_in_bytes == 12

    def test_expand_ort_comment(self) -> None:
        desc = BufferTensorDesc("float32", (2, 1, 4)).broadcast_to((2, 3, 4))
        assert desc.strides == (4, 0, 1)

    def test_pad_vector(self) -> None:
        op = PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [1, 2, 3, 4])
        assert op.input.sizes == (1, 1, 3, 4)
        assert op.start_padding == (0, 0, 1, 2)
        assert op.end_padding == (0, 0, 3, 4)
        assert op.output.sizes == (1, 1, 7, 10)
        assert op.mode is PaddingMode.CONSTANT

    @pytest.mark.parametrize(("onnx_mode", "dml_mode"),
                             [("constant", PaddingMode.CONSTANT), ("edge", PaddingMode.EDGE),
                              ("reflect", PaddingMode.REFLECTION), ("wrap", PaddingMode.WRAP)],
                             ids=["constant", "edge", "reflect", "wrap"])
    def test_pad_modes(self, onnx_mode: str, dml_mode: PaddingMode) -> None:
        op = PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [1, 2, 3, 4], mode=onnx_mode)
        assert op.mode is dml_mode

    def test_negative_pads_not_expressible(self) -> None:
        with pytest.raises(NotExpressibleError, match="-1"):
            PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [0, -1, 0, 0])

    def test_rank_coercion(self) -> None:
        desc = BufferTensorDesc("float32", (5,))
        four = desc.coerce_rank(4)
        assert four.sizes == (1, 1, 1, 5)
        assert four.strides[:3] == (0, 0, 0)  # filler dimensions get stride 0
        assert desc.coerce_rank(5).sizes == (1, 1, 1, 1, 5)
        assert BufferTensorDesc("float32", (3, 4)).coerce_rank(4).sizes == (1, 1, 3, 4)

    def test_fold_to_3d(self) -> None:
        folded = BufferTensorDesc("float32", (2, 3, 4, 5)).coerce_rank(1, 3)
        assert folded.sizes == (6, 4, 5)
        assert folded.effective_strides == (20, 5, 1)

    def test_int64_as_uint32(self) -> None:
        desc = BufferTensorDesc("int64", (2, 3)).as_uint32_view()
        assert desc.data_type is DataType.UINT32
        assert desc.strides == (6, 2)
        assert desc.total_tensor_size_in_bytes == (11 + 1) * 4 == 6 * 8 == 48
        # the view reads the low word of each little-endian int64
        values = np.array([[1, -1, 2**31 - 1], [-(2**31), 7, 2**40 + 5]], dtype="<i8")
        low = desc.view(values.tobytes())
        assert np.array_equal(low, (values & 0xFFFFFFFF).astype(np.uint32))

    def test_dimension_count_range(self) -> None:
        BufferTensorDesc("float32", (1,) * 8)
        with pytest.raises(DescriptorError, match="9") as info:
            BufferTensorDesc("float32", (1,) * 9)
        assert info.value.rule == "dimension-count"

    def test_alignment_rule(self) -> None:
        assert BufferTensorDesc("float32", (4,), guaranteed_base_offset_alignment=16)
        with pytest.raises(DescriptorError, match="2"):
            BufferTensorDesc("float32", (4,), guaranteed_base_offset_alignment=2)  # < element size
        with pytest.raises(DescriptorError, match="24"):
            BufferTensorDesc("float32", (4,), guaranteed_base_offset_alignment=24)
