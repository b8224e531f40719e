"""PaddingOp: the DirectML description of ONNX Pad, against numpy.pad."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ort_layouts import (
    BufferTensorDesc,
    Case,
    DescriptorError,
    NotExpressibleError,
    PaddingMode,
    PaddingOp,
    ShapeError,
    dml_operator,
    expected_output,
)
from ort_layouts.operators.padding import split_onnx_pads
from ort_layouts.operators.registry import operator_for_type

NUMPY_MODE = {"constant": "constant", "edge": "edge", "reflect": "reflect", "wrap": "wrap"}


@st.composite
def pad_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int], str]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=8)))
    mode = draw(st.sampled_from(sorted(NUMPY_MODE)))
    # reflect needs pads < size (ONNX), the others take anything
    limits = [n - 1 if mode == "reflect" else 3 for n in shape]
    begins = [draw(st.integers(0, lim)) for lim in limits]
    ends = [draw(st.integers(0, lim)) for lim in limits]
    return shape, begins + ends, mode


@settings(max_examples=150, deadline=None)
@given(case=pad_cases(), seed=st.integers(0, 2**32 - 1))
def test_geometry_matches_numpy_pad(case: tuple[tuple[int, ...], list[int], str], seed: int) -> None:
    shape, pads, mode = case
    rank = len(shape)
    x = np.random.default_rng(seed).integers(-100, 100, size=shape).astype(np.int16)
    op = PaddingOp.from_onnx(BufferTensorDesc("int16", shape), pads, mode=mode)
    expected = np.pad(x, list(zip(pads[:rank], pads[rank:], strict=True)), mode=NUMPY_MODE[mode])
    extra = op.dimension_count - rank
    assert op.dimension_count == max(4, rank)
    assert op.output.sizes == (1,) * extra + expected.shape
    assert op.input.sizes == (1,) * extra + shape
    assert op.mode is PaddingMode.from_onnx(mode)
    # the interior of the padded output, located via start_padding, is the input
    out_buffer = expected.tobytes().ljust(op.output.total_tensor_size_in_bytes, b"\0")
    out = op.output.view(out_buffer)
    assert np.array_equal(out, expected.reshape(op.output.sizes))
    interior = tuple(slice(s, s + n) for s, n in zip(op.start_padding, op.input.sizes, strict=True))
    assert np.array_equal(out[interior], x.reshape(op.input.sizes))
    # the input descriptor still reads the input buffer as the input
    buffer = x.tobytes().ljust(op.input.total_tensor_size_in_bytes, b"\0")
    assert np.array_equal(op.input.view(buffer), x.reshape(op.input.sizes))


def test_axes_input() -> None:
    desc = BufferTensorDesc("float32", (2, 3, 4))
    op = PaddingOp.from_onnx(desc, [1, 2, 3, 4], axes=[-1, 0])
    assert op.start_padding == (0, 2, 0, 1) and op.end_padding == (0, 4, 0, 3)
    assert op.output.sizes == (1, 2 + 2 + 4, 3, 4 + 1 + 3)
    assert split_onnx_pads([1, 2], 3, axes=[1]) == ((0, 1, 0), (0, 2, 0))


def test_an_empty_axes_input_is_not_expressible_as_the_dml_ep_refuses_it() -> None:
    # ONNX pads no axis (the CPU EP returns the input); the EP's PaddingHelper reads empty axes as
    # every axis (HandleEmptyAxes), then checks axes.size() * 2 == padding.size(): 4 != 0
    case = Case("Pad", "float32", (3, 4), pads=(), axes=(), opset=18)
    with pytest.raises(NotExpressibleError, match=r"empty axes input.*HandleEmptyAxes"):
        PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [], axes=[])
    with pytest.raises(NotExpressibleError, match="HandleEmptyAxes"):
        dml_operator(case)
    assert "HandleEmptyAxes" in operator_for_type("Pad").inexpressible_reason(case)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert expected_output(case, x).tobytes() == x.tobytes()  # numpy's reading: nothing padded
    # axes given, not empty: expressible
    assert dml_operator(Case("Pad", "float32", (3, 4), pads=(1, 1), axes=(1,), opset=18)).end_padding == (
        0, 0, 0, 1)


def test_rank_five_keeps_five() -> None:
    op = PaddingOp.from_onnx(BufferTensorDesc("uint8", (1, 2, 3, 4, 5)), [0] * 9 + [1])
    assert op.dimension_count == 5 and op.output.sizes == (1, 2, 3, 4, 6)


@pytest.mark.parametrize(
    ("dtype", "value", "hex_bytes"),
    [("float32", float("nan"), "0000c07f"), ("float32", -0.0, "00000080"), ("float16", 1.0, "003c"),
     ("uint8", 255, "ff"), ("int64", -1, "ffffffffffffffff"),
     ("float32", np.frombuffer(bytes.fromhex("0100c07f"), "<f4")[0], "0100c07f"),
     ("float32", bytes.fromhex("0100807f"), "0100807f"), ("float64", 0, "0000000000000000"),
     ("float16", 0, "0000"), ("int8", 0, "00"), ("bool", 0, "00"), ("float32", 0.0, "00000000")],
    ids=["nan", "neg-zero", "f16-one", "u8-max", "i64-minus-one", "nan-payload", "raw-bytes", "f64-zero",
         "f16-zero", "i8-zero", "bool-zero", "f32-float-zero"])
def test_padding_value_bytes(dtype: str, value: object, hex_bytes: str) -> None:
    op = PaddingOp.from_onnx(BufferTensorDesc(dtype, (2,)), [1, 1], value=value)
    assert op.padding_value_bytes.hex() == hex_bytes
    assert op.padding_value.tobytes().hex() == hex_bytes


def test_dict_round_trip() -> None:
    op = PaddingOp.from_onnx(BufferTensorDesc("float16", (3, 4)), [1, 2, 3, 4], mode="wrap", value=2.5)
    assert PaddingOp.from_dict(op.to_dict()) == op
    assert op.to_dict()["mode"] == "WRAP" and op.to_dict()["operator"] == "DML_OPERATOR_PADDING1"


def test_mode_names() -> None:
    assert PaddingMode.REFLECTION.onnx_name == "reflect" and PaddingMode.SYMMETRIC.onnx_name is None
    assert PaddingMode.WRAP.dml_name == "DML_PADDING_MODE_WRAP"


def test_negative_pads_at_any_position() -> None:
    desc = BufferTensorDesc("float32", (3, 4))
    for i in range(4):
        pads = [1, 1, 1, 1]
        pads[i] = -2
        with pytest.raises(NotExpressibleError, match="-2"):
            PaddingOp.from_onnx(desc, pads)


def test_direct_construction_checks_sizes() -> None:
    desc = BufferTensorDesc("float32", (1, 1, 3, 4))
    with pytest.raises(ShapeError, match="8"):
        PaddingOp(desc, BufferTensorDesc("float32", (1, 1, 8, 4)), (0, 0, 1, 0), (0, 0, 1, 0))


def test_the_split_cache_keeps_integers_apart_from_floats_and_bools() -> None:
    # a Case's tuples are cached by value; 1.0 and True equal 1 but are no pads
    assert split_onnx_pads((1, 2), 1) == ((1,), (2,))
    for bad in ((1.0, 2), (True, 2)):
        with pytest.raises(ShapeError, match="which is not an integer"):
            split_onnx_pads(bad, 1)
    assert split_onnx_pads([np.int64(1), 2], 1) == ((1,), (2,))


@pytest.mark.parametrize("shape", [(3, 5), (300, 250)])  # a small output, and one of 90,000 elements
def test_constant_padding_writes_the_value_bits_around_the_input(shape: tuple[int, int]) -> None:
    from ort_layouts.reference.buffers import unpack
    from ort_layouts.reference.execute import execute

    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, size=shape, dtype=np.uint32).view(np.float32)  # NaN payloads among them
    op = PaddingOp.from_onnx(BufferTensorDesc("float32", shape), [1, 2, 3, 4], mode="constant",
                             value=bytes.fromhex("0100c07f"))  # a quiet NaN with payload 1
    got = unpack(op.output, execute(op, x)).reshape(shape[0] + 4, shape[1] + 6)
    want = np.pad(x.view(np.uint32), ((1, 3), (2, 4)), constant_values=0x7FC00001)
    assert got.view(np.uint32).tobytes() == want.tobytes()


@settings(max_examples=150, deadline=None)
@given(case=pad_cases(), seed=st.integers(0, 2**32 - 1))
def test_execute_matches_numpy_pad_by_one_gather_and_axis_by_axis(
        case: tuple[tuple[int, ...], list[int], str], seed: int) -> None:
    """A small output is one gather through each axis's index map; a large one is PADDING1's
    interior, then its borders axis by axis: both give numpy.pad's bytes (the axis-by-axis way
    taken here by lowering the size limit of the gather to nothing)."""
    from unittest import mock

    from ort_layouts.operators import padding
    from ort_layouts.reference.buffers import unpack
    from ort_layouts.reference.execute import execute

    shape, pads, mode = case
    rank = len(shape)
    x = np.random.default_rng(seed).integers(0, 2**16, size=shape, dtype=np.uint16).view(np.float16)
    op = PaddingOp.from_onnx(BufferTensorDesc("float16", shape), pads, mode=mode)
    want = np.pad(x.view(np.uint16), list(zip(pads[:rank], pads[rank:], strict=True)), mode=NUMPY_MODE[mode])
    for limit in (padding._SMALL_ELEMENTS, 0):
        with mock.patch.object(padding, "_SMALL_ELEMENTS", limit):
            got = unpack(op.output, execute(op, x))
        assert got.view(np.uint16).reshape(want.shape).tobytes() == want.tobytes(), limit


@pytest.mark.parametrize("dtype, value, fragment", [
    ("uint8", 1.5, "Pad value 1.5 is not a whole number; uint8 holds the integers 0..255"),
    ("int32", -2.25, "Pad value -2.25 is not a whole number"),
    ("float32", 1e40, "Pad value 1e+40 is out of float32's range (largest finite 3.40282e+38)"),
    ("float16", 70000.0, "Pad value 70000.0 is out of float16's range"),
], ids=["uint8-fraction", "int32-fraction", "float32-overflow", "float16-overflow"])
def test_a_pad_value_the_type_cannot_hold_is_refused_not_rounded(dtype: str, value: float,
                                                                 fragment: str) -> None:
    with pytest.raises(ShapeError) as raised:
        PaddingOp.from_onnx(BufferTensorDesc(dtype, (3, 4)), [1, 2, 3, 4], value=value)
    assert fragment in str(raised.value)
    # what the type holds is taken: an integral float for an integer type, inf and nan for a float one
    two = PaddingOp.from_onnx(BufferTensorDesc("uint8", (3, 4)), [1, 2, 3, 4], value=2.0)
    assert two.padding_value_bytes == b"\x02"
    inf = PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [1, 2, 3, 4], value=float("inf"))
    assert inf.padding_value_bytes == np.float32(np.inf).tobytes()


@pytest.mark.parametrize(("value", "hex_"), [(True, "01"), (np.bool_(False), "00"), (np.bool_(True), "01")])
def test_a_bool_pad_value_is_its_0_or_1(value: Any, hex_: str) -> None:
    """A bool tensor's constant_value, as ONNX gives it (numpy's bool): the byte 0 or 1."""
    op = PaddingOp.from_onnx(BufferTensorDesc("uint8", (2, 3)), [1, 1, 1, 1], value=value)
    assert op.to_dict()["padding_value_hex"] == hex_


@pytest.mark.parametrize(("mode", "numpy_mode"), [
    (PaddingMode.EDGE, "edge"), (PaddingMode.REFLECTION, "reflect"), (PaddingMode.WRAP, "wrap"),
    (PaddingMode.SYMMETRIC, "symmetric"),
], ids=["edge", "reflect", "wrap", "symmetric"])
def test_a_border_element_names_the_input_element_it_reads(mode: PaddingMode, numpy_mode: str) -> None:
    """numpy.pad of the input's flat indexes says which element each output position reads."""
    shape, pads = (3, 4), ((2, 1), (1, 3))
    op = PaddingOp(BufferTensorDesc("float32", shape), BufferTensorDesc("float32", (6, 8)), (2, 1), (1, 3),
                   mode)
    reads = np.pad(np.arange(12).reshape(shape), pads, mode=numpy_mode)
    for index in np.ndindex(*reads.shape):
        in_offset, out_offset = op.buffer_offsets_in_elements(index)
        assert in_offset == reads[index], index
        assert out_offset == np.ravel_multi_index(index, reads.shape)


def test_a_constant_border_element_reads_nothing() -> None:
    op = PaddingOp.from_onnx(BufferTensorDesc("float32", (3,)), (2, 1))
    assert [op.buffer_offsets_in_elements((i,))[0] for i in range(6)] == [None, None, 0, 1, 2, None]


# ---- 4-bit Pads and the dimension count -----------------------------------------------------
@pytest.mark.parametrize(("dtype", "value", "nibble"),
                         [("uint4", 0, 0x0), ("uint4", 15, 0xF), ("uint4", 9.0, 0x9),
                          ("int4", -1, 0xF), ("int4", -8, 0x8), ("int4", 7, 0x7), ("int4", b"\xa3", 0x3)],
                         ids=["uint4-0", "uint4-15", "uint4-whole-float", "int4-minus-1", "int4-min",
                              "int4-max", "int4-byte"])
def test_a_4bit_pad_is_built_as_directml_reads_it(dtype: str, value: Any, nibble: int) -> None:
    # ONNX [3] pads [1, 2] coerced to 4D by hand: input [1, 1, 1, 3], start [0, 0, 0, 1], end
    # [0, 0, 0, 2], output [1, 1, 1, 6]; 6 nibbles are 3 bytes, rounded up to 4 (DirectMLX)
    op = PaddingOp.from_onnx(BufferTensorDesc(dtype, (3,)), [1, 2], value=value)
    assert op.input.sizes == (1, 1, 1, 3) and op.output.sizes == (1, 1, 1, 6)
    assert op.start_padding == (0, 0, 0, 1) and op.end_padding == (0, 0, 0, 2)
    assert op.output.total_tensor_size_in_bytes == 4
    assert op.padding_value_bytes == bytes([nibble])  # two's complement low nibble


def test_a_4bit_pad_runs_as_numpy_pads_its_values() -> None:
    from ort_layouts import execute, pack, unpack

    values = np.array([[1, -2, 3], [-8, 7, 0]], dtype=np.int8)  # INT4 values
    op = PaddingOp.from_onnx(BufferTensorDesc("int4", (2, 3)), [0, 1, 1, 0], value=-3)
    out = unpack(op.output, execute(op, pack(op.input, values.reshape(1, 1, 2, 3))))
    expected = np.pad(values, [(0, 1), (1, 0)], constant_values=-3)
    assert out.reshape(expected.shape).tolist() == expected.tolist()


@pytest.mark.parametrize(("dtype", "value", "needle"),
                         [("uint4", 16, "Pad value 16 does not fit uint4; valid: the integers 0..15"),
                          ("uint4", -1, "Pad value -1 does not fit uint4"),
                          ("int4", 8, "Pad value 8 does not fit int4; valid: the integers -8..7"),
                          ("int4", 1.5, "Pad value 1.5 does not fit int4"),
                          ("int4", True, "Pad value True does not fit int4"),
                          ("uint4", b"\x01\x02", "Pad value 0102 has 2 bytes; UINT4 takes 1")],
                         ids=["uint4-16", "uint4-negative", "int4-8", "int4-fraction", "int4-bool",
                              "two-bytes"])
def test_a_4bit_pad_value_out_of_range_is_refused(dtype: str, value: Any, needle: str) -> None:
    with pytest.raises(ShapeError, match=needle):
        PaddingOp.from_onnx(BufferTensorDesc(dtype, (3,)), [1, 1], value=value)


def test_a_4bit_pad_is_the_one_the_pad_module_builds() -> None:
    from ort_layouts import Case, dml_operator

    case = Case("Pad", "uint4", (3, 4), pads=(1, 0, 0, 2), pad_value_hex="0b")
    op = PaddingOp.from_onnx(BufferTensorDesc("uint4", (3, 4)), [1, 0, 0, 2], value=11)
    assert dml_operator(case) == op


@pytest.mark.parametrize(("count", "sizes"), [(1, (3, 4)), (2, (3, 4)), (5, (1, 1, 1, 3, 4)),
                                              (8, (1,) * 6 + (3, 4))])
def test_min_dimension_count_pads_with_leading_ones_up_to_it(count: int, sizes: tuple[int, ...]) -> None:
    op = PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [1, 0, 0, 2], min_dimension_count=count)
    assert op.input.sizes == sizes
    assert op.output.sizes == (*sizes[:-2], 4, 6)


@pytest.mark.parametrize("count", [0, 9, -1, 4.0, "4", None], ids=["0", "9", "-1", "float", "str", "None"])
def test_min_dimension_count_outside_directml_is_refused(count: Any) -> None:
    # DML_TENSOR_DIMENSION_COUNT_MAX1 is 8: no descriptor holds 9 dimensions, and 0 is none
    with pytest.raises(DescriptorError, match=f"min_dimension_count {count!r} is not valid; valid: an "
                                              "integer 1..8") as info:
        PaddingOp.from_onnx(BufferTensorDesc("float32", (3, 4)), [1, 0, 0, 2], min_dimension_count=count)
    assert info.value.rule == "dimension-count"
