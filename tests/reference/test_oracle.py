"""The reference executor against numpy (np.transpose, np.broadcast_to, np.pad) as the independent
reference, bit for bit, for every numpy-backed data type."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from ort_layouts._errors import DataTypeError, DescriptorError, ShapeError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator as operator_for
from ort_layouts.operators.identity import IdentityOp
from ort_layouts.operators.padding import PaddingMode, PaddingOp, padding_for
from ort_layouts.reference.buffers import nibble_values, pack, unpack, values_dtype
from ort_layouts.reference.copy import strided_copy
from ort_layouts.reference.execute import execute, output_values

NUMPY_TYPES = [t for t in DataType.known() if t.bitwidth % 8 == 0]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.dtype.itemsize])


def random_values(dtype: DataType, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random bit patterns (every float NaN payload and sign of zero is fair game)."""
    rng = np.random.default_rng(seed)
    npt = dtype.to_numpy()
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * npt.itemsize, dtype=np.uint8)
    return raw.view(npt).reshape(shape)


SPECIAL_F32 = np.array([0x7FC00001, 0xFFA00000, 0x80000000, 0x00000001, 0x7F800000, 0xFF800000,
                        0x007FFFFF, 0x3F800000], dtype=np.uint32).view(np.float32)


def special_values(dtype: DataType, shape: tuple[int, ...]) -> np.ndarray:
    npt = dtype.to_numpy()
    n = int(np.prod(shape))
    if dtype is DataType.FLOAT32:
        pool = SPECIAL_F32
    elif dtype is DataType.FLOAT16:
        pool = np.array([0x7E01, 0xFD00, 0x8000, 0x0001, 0x7C00, 0x03FF], dtype=np.uint16).view(np.float16)
    elif dtype is DataType.FLOAT64:
        pool = np.array([0x7FF8000000000001, 0xFFF4000000000000, 0x8000000000000000, 1],
                        dtype=np.uint64).view(np.float64)
    else:
        info = np.iinfo(npt)
        pool = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=npt)
    return np.resize(pool, n).reshape(shape)


# ---- identity: Transpose and Expand ------------------------------------------------------
def test_seed_vector_transpose_descriptor_executes_as_np_transpose() -> None:
    # directml-facts: float32 [2,3,4] perm [2,0,1] -> input sizes [4,2,3] strides [1,12,4]
    source = BufferTensorDesc("float32", (4, 2, 3), (1, 12, 4))
    op = IdentityOp(source, BufferTensorDesc("float32", (4, 2, 3)))
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = execute(op, x)
    assert out.dtype == np.uint8 and out.size == 96
    assert np.array_equal(out.view(np.float32).reshape(4, 2, 3), np.transpose(x, (2, 0, 1)))


def test_seed_vector_padded_row_pitch() -> None:
    # seed 000: A B C x x D E F x x, height stride 5 -> logical [[A,B,C],[D,E,F]]
    buf = np.array([1, 2, 3, 99, 99, 4, 5, 6, 99, 99], dtype=np.uint8)
    desc = BufferTensorDesc("uint8", (2, 3), (5, 1), total_tensor_size_in_bytes=12)
    out = execute(IdentityOp(desc, BufferTensorDesc("uint8", (2, 3))), buf)  # 10 of 12 bytes: enough
    assert out[:6].tolist() == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("dtype", NUMPY_TYPES, ids=lambda t: t.name.lower())
@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (0, 3, 1, 2), (3, 2, 1, 0), (1, 0, 2, 3)],
                         ids=lambda p: "perm" + "".join(map(str, p)))
def test_transpose_matches_np_transpose_bitwise(dtype: DataType, perm: tuple[int, ...]) -> None:
    x = random_values(dtype, (2, 3, 4, 5), seed=sum(perm))
    op = operator_for(Case("Transpose", dtype, x.shape, perm=perm))
    assert np.array_equal(bits(unpack(op.output, execute(op, x))), bits(np.transpose(x, perm)))


@pytest.mark.parametrize("dtype", NUMPY_TYPES, ids=lambda t: t.name.lower())
def test_special_values_survive_transpose_and_expand(dtype: DataType) -> None:
    x = special_values(dtype, (2, 1, 4))
    op = operator_for(Case("Transpose", dtype, x.shape, perm=(2, 0, 1)))
    assert np.array_equal(bits(unpack(op.output, execute(op, x))), bits(np.transpose(x, (2, 0, 1))))
    op = operator_for(Case("Expand", dtype, x.shape, target_shape=(3, 2, 5, 4)))
    assert np.array_equal(bits(unpack(op.output, execute(op, x))), bits(np.broadcast_to(x, (3, 2, 5, 4))))


@pytest.mark.parametrize("shape,target", [((3,), (2, 3)), ((2, 1, 4), (2, 3, 4)), ((1,), (2, 2, 2)),
                                          ((4, 1), (3, 1, 5)), ((), (2, 3))],
                         ids=["3-to-2x3", "2x1x4-to-2x3x4", "1-to-2x2x2", "4x1-to-3x4x5", "scalar"])
def test_expand_matches_np_broadcast_to(shape: tuple[int, ...], target: tuple[int, ...]) -> None:
    x = random_values(DataType.FLOAT32, shape, seed=3)
    op = operator_for(Case("Expand", "float32", shape, target_shape=target))
    expected = np.broadcast_to(x, np.broadcast_shapes(shape, target))
    # the output descriptor has the EP's leading 1s (4-D at least): the same elements in order
    assert np.array_equal(bits(unpack(op.output, execute(op, x))).reshape(expected.shape), bits(expected))


def test_strided_output_leaves_gap_bytes_alone_and_unaddressed_bytes_are_zero() -> None:
    out_desc = BufferTensorDesc("uint16", (2, 3), (4, 1))  # row pitch 4: element 3 is a gap
    op = IdentityOp(BufferTensorDesc("uint16", (2, 3)), out_desc)
    x = np.arange(1, 7, dtype=np.uint16).reshape(2, 3)
    buf = execute(op, x)
    assert buf.size == out_desc.total_tensor_size_in_bytes == 16
    assert buf.view(np.uint16).tolist() == [1, 2, 3, 0, 4, 5, 6, 0]
    caller = np.full(16, 0xEE, dtype=np.uint8)
    result = execute(op, x, out=caller)
    assert np.shares_memory(result, caller)
    assert caller.view(np.uint16).tolist() == [1, 2, 3, 0xEEEE, 4, 5, 6, 0xEEEE]


def test_execute_rejects_small_buffers_and_overlapping_outputs() -> None:
    op = IdentityOp(BufferTensorDesc("float32", (2, 3)), BufferTensorDesc("float32", (2, 3)))
    with pytest.raises(DescriptorError, match="smaller than the 24 bytes"):
        execute(op, bytes(20))
    with pytest.raises(DescriptorError, match="smaller than"):
        execute(op, bytes(24), out=np.zeros(8, dtype=np.uint8))
    with pytest.raises(DescriptorError) as info:  # refused when made, before any execute
        IdentityOp(BufferTensorDesc("float32", (2, 3)), BufferTensorDesc("float32", (2, 3), (0, 1)))
    assert info.value.rule == "output-overlap"
    with pytest.raises(ShapeError, match="sizes"):
        IdentityOp(BufferTensorDesc("float32", (2, 3)), BufferTensorDesc("float32", (3, 2)))
    with pytest.raises(TypeError):
        execute("identity", bytes(24))  # type: ignore[arg-type]


def test_identity_op_round_trips_through_dict() -> None:
    op = operator_for(Case("Transpose", "float16", (2, 3, 4), perm=(1, 2, 0)))
    assert isinstance(op, IdentityOp)
    assert IdentityOp.from_dict(op.to_dict()) == op
    assert op.to_dict()["operator"] == "DML_OPERATOR_ELEMENT_WISE_IDENTITY"


# ---- padding ------------------------------------------------------------------------------
NP_MODES = {PaddingMode.CONSTANT: "constant", PaddingMode.EDGE: "edge", PaddingMode.REFLECTION: "reflect",
            PaddingMode.SYMMETRIC: "symmetric", PaddingMode.WRAP: "wrap"}


def np_pad(x: np.ndarray, begins: list[int], ends: list[int], mode: PaddingMode,
           value: bytes = b"") -> np.ndarray:
    widths = list(zip(begins, ends, strict=True))
    if mode == PaddingMode.CONSTANT:
        # place the constant bit for bit (np.pad's constant_values could canonicalise a NaN)
        out = np.empty(tuple(n + b + e for n, b, e in zip(x.shape, begins, ends, strict=True)), x.dtype)
        fill = np.frombuffer(value, dtype=x.dtype)[0] if value else x.dtype.type(0)
        bits(out)[...] = bits(np.array(fill, dtype=x.dtype))
        out[tuple(slice(b, b + n) for b, n in zip(begins, x.shape, strict=True))] = x
        return out
    return np.pad(x, widths, mode=NP_MODES[mode])


@pytest.mark.parametrize("mode", list(PaddingMode), ids=lambda m: m.name.lower())
@pytest.mark.parametrize("pads", [(1, 2, 3, 4), (0, 0, 1, 0), (5, 7, 9, 6), (2, 11, 0, 13)],
                         ids=["small", "one-end", "wider-than-size", "many-periods"])
def test_padding_matches_np_pad(mode: PaddingMode, pads: tuple[int, ...]) -> None:
    x = random_values(DataType.FLOAT32, (3, 4), seed=7)
    value = np.uint32(0x7FC00001).tobytes()
    op = padding_for(BufferTensorDesc("float32", (3, 4)), pads, mode=mode,
                     value_hex=value.hex() if mode == PaddingMode.CONSTANT else "")
    got = unpack(op.output, execute(op, x)).reshape(op.output.sizes[2:])
    ref = np_pad(x, [pads[0], pads[1]], [pads[2], pads[3]], mode, value)
    assert np.array_equal(bits(got), bits(ref))


@pytest.mark.parametrize("dtype", NUMPY_TYPES, ids=lambda t: t.name.lower())
@pytest.mark.parametrize("mode", list(PaddingMode), ids=lambda m: m.name.lower())
def test_padding_every_type_with_special_values(dtype: DataType, mode: PaddingMode) -> None:
    x = special_values(dtype, (2, 3, 2))
    begins, ends = [1, 4, 0], [2, 3, 5]
    value = special_values(dtype, (1,)).tobytes()  # a NaN with payload, or the type's minimum
    op = padding_for(BufferTensorDesc(dtype, x.shape), [*begins, *ends], mode=mode,
                     value_hex=value.hex() if mode == PaddingMode.CONSTANT else "")
    got = unpack(op.output, execute(op, x)).reshape([n + b + e for n, b, e in zip(x.shape, begins, ends,
                                                                                   strict=True)])
    assert np.array_equal(bits(got), bits(np_pad(x, begins, ends, mode, value)))


def test_padding_onnx_example_and_axes() -> None:
    # directml-facts: [3,4] pads [1,2,3,4] -> start [0,0,1,2] end [0,0,3,4] output [1,1,7,10]
    x = random_values(DataType.INT16, (3, 4))
    op = operator_for(Case("Pad", "int16", (3, 4), pads=(1, 2, 3, 4), mode="edge"))
    assert op.output.sizes == (1, 1, 7, 10)
    got = unpack(op.output, execute(op, x)).reshape(7, 10)
    assert np.array_equal(got, np.pad(x, [(1, 3), (2, 4)], mode="edge"))
    op = operator_for(Case("Pad", "int16", (3, 4), pads=(2, 1), axes=(-1,), mode="wrap"))
    got = unpack(op.output, execute(op, x)).reshape(3, 7)
    assert np.array_equal(got, np.pad(x, [(0, 0), (2, 1)], mode="wrap"))


def test_padding_with_strided_input_and_output() -> None:
    x = random_values(DataType.UINT16, (3, 5))
    inp = BufferTensorDesc("uint16", (1, 1, 3, 5), (0, 0, 1, 3))  # column-major source
    raw = pack(inp, x.reshape(1, 1, 3, 5))
    out = BufferTensorDesc("uint16", (1, 1, 5, 8), (0, 0, 9, 1))  # row pitch 9
    op = PaddingOp(inp, out, (0, 0, 1, 2), (0, 0, 1, 1), PaddingMode.REFLECTION)
    buf = execute(op, raw)
    got = as_strided(buf.view(np.uint16), (5, 8), (18, 2))
    assert np.array_equal(got, np.pad(x, [(1, 1), (2, 1)], mode="reflect"))


def test_constant_padding_value_must_have_the_element_size() -> None:
    inp = BufferTensorDesc("float32", (1, 1, 1, 2))
    op = PaddingOp(inp, BufferTensorDesc("float32", (1, 1, 1, 3)), (0, 0, 0, 1), (0, 0, 0, 0),
                   PaddingMode.CONSTANT, b"\x01\x02")
    with pytest.raises(DataTypeError, match="needs 4"):
        execute(op, bytes(8))


# ---- 4-bit types --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [DataType.UINT4, DataType.INT4], ids=["uint4", "int4"])
def test_nibbles_low_first_transpose_and_pad(dtype: DataType) -> None:
    values = np.arange(6, dtype=np.int8).reshape(2, 3) - (3 if dtype is DataType.INT4 else 0)
    desc = BufferTensorDesc(dtype, (2, 3))
    raw = pack(desc, values)
    assert raw.size == 4
    low, high = (int(v) & 0xF for v in values.flat[:2])
    assert int(raw[0]) == low | (high << 4)  # uint4: 0x10; int4 (-3, -2): 0xED
    assert np.array_equal(unpack(desc, raw), values)
    op = operator_for(Case("Transpose", dtype, (2, 3), perm=(1, 0)))
    assert np.array_equal(unpack(op.output, execute(op, raw)), values.T)
    op = operator_for(Case("Pad", dtype, (2, 3), pads=(1, 1, 0, 2), mode="reflect"))
    got = unpack(op.output, execute(op, raw)).reshape(3, 6)
    assert np.array_equal(got, np.pad(values, [(1, 0), (1, 2)], mode="reflect"))
    op = operator_for(Case("Pad", dtype, (2, 3), pads=(0, 1, 0, 0), pad_value_hex="07"))
    got = unpack(op.output, execute(op, raw)).reshape(2, 4)
    assert got[:, 0].tolist() == [7, 7]
    assert unpack(desc, raw).dtype == values_dtype(dtype) == (np.int8 if dtype is DataType.INT4 else np.uint8)


def test_nibble_values_sign_extend_int4_alone() -> None:
    """Nibbles 0x0..0xF: UINT4 0..15; INT4 two's complement in 4 bits, 0..7 then -8..-1."""
    nibbles = np.arange(16, dtype=np.uint8)
    uint4 = nibble_values(nibbles, DataType.UINT4)
    int4 = nibble_values(nibbles, DataType.INT4)
    assert uint4.dtype == np.uint8 and uint4.tolist() == list(range(16))
    assert int4.dtype == np.int8 and int4.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1]


# ---- pack / unpack ------------------------------------------------------------------------
def test_pack_stores_a_big_endian_arrays_values_little_endian() -> None:
    desc = BufferTensorDesc("float32", (2,))
    big = np.array([1.0, 2.0], dtype=">f4")
    assert pack(desc, big).tobytes() == np.array([1.0, 2.0], dtype="<f4").tobytes()  # 0000803f 00000040
    assert unpack(desc, pack(desc, big)).tolist() == [1.0, 2.0]


def test_pack_is_the_inverse_of_view_and_checks_types() -> None:
    x = random_values(DataType.FLOAT64, (2, 3, 4))
    desc = BufferTensorDesc.packed("float64", (2, 3, 4), layout=(0, 2, 1))
    raw = pack(desc, x)
    assert np.array_equal(bits(desc.view(raw)), bits(x))
    assert np.array_equal(bits(unpack(desc, raw)), bits(x))
    with pytest.raises(DataTypeError, match="FLOAT32"):
        pack(desc, np.zeros((2, 3, 4), dtype=np.float32))
    with pytest.raises(ShapeError, match="does not fit"):
        pack(desc, x.reshape(4, 3, 2))
    assert pack(BufferTensorDesc("uint8", (2,)), np.array([True, False])).tolist() == [1, 0, 0, 0]


# ---- speed-path: the tiled copy must equal np.copyto -------------------------------------------
@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (3, 2, 1, 0), (0, 1, 3, 2)],
                         ids=lambda p: "perm" + "".join(map(str, p)))
@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
def test_tiled_copy_equals_numpy(perm: tuple[int, ...], threads: int) -> None:
    x = random_values(DataType.UINT16, (3, 37, 70, 129), seed=1)  # ~2 MB, odd sizes: ragged tiles
    view = np.transpose(x, perm)
    out = np.empty(view.shape, dtype=x.dtype)
    strided_copy(out, view, threads=threads)
    assert np.array_equal(out, view)


# ---- properties -----------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_property_transpose_then_inverse_is_identity(data: st.DataObject) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=5), label="shape"))
    perm = tuple(data.draw(st.permutations(range(len(shape))), label="perm"))
    x = random_values(DataType.UINT8, shape, seed=len(shape))
    op = operator_for(Case("Transpose", "uint8", shape, perm=perm))
    y = unpack(op.output, execute(op, x))
    assert np.array_equal(y, np.transpose(x, perm))
    inverse = tuple(int(i) for i in np.argsort(perm))
    back = operator_for(Case("Transpose", "uint8", y.shape, perm=inverse))
    assert np.array_equal(unpack(back.output, execute(back, y)), x)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_property_padding_equals_np_pad(data: st.DataObject) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="shape"))
    mode = data.draw(st.sampled_from(list(PaddingMode)), label="mode")
    begins = data.draw(st.lists(st.integers(0, 9), min_size=len(shape), max_size=len(shape)))
    ends = data.draw(st.lists(st.integers(0, 9), min_size=len(shape), max_size=len(shape)))
    x = random_values(DataType.INT32, shape, seed=sum(begins))
    op = padding_for(BufferTensorDesc("int32", shape), [*begins, *ends], mode=mode)
    got = unpack(op.output, execute(op, x)).reshape([n + b + e for n, b, e in zip(shape, begins, ends,
                                                                                   strict=True)])
    assert np.array_equal(got, np_pad(x, begins, ends, mode))


# ---- output_values: the logical output without the intermediate buffer ----------------------
@pytest.mark.parametrize("dtype", NUMPY_TYPES, ids=lambda t: t.name.lower())
def test_output_values_of_a_transpose_and_an_expand_equal_numpy(dtype: DataType) -> None:
    x = random_values(dtype, (2, 3, 4), seed=3)
    transpose = IdentityOp(BufferTensorDesc(dtype, (2, 3, 4)).transpose((2, 0, 1)),
                           BufferTensorDesc(dtype, (4, 2, 3)))
    assert np.array_equal(bits(output_values(transpose, x)), bits(np.transpose(x, (2, 0, 1))))
    y = random_values(dtype, (3, 1), seed=4)
    expand = IdentityOp(BufferTensorDesc(dtype, (3, 1)).broadcast_to((2, 3, 5)),
                        BufferTensorDesc(dtype, (2, 3, 5)))
    assert np.array_equal(bits(output_values(expand, y)), bits(np.broadcast_to(y, (2, 3, 5))))


@pytest.mark.parametrize("mode", list(PaddingMode), ids=lambda m: m.name.lower())
def test_output_values_of_a_padding_equal_np_pad(mode: PaddingMode) -> None:
    x = random_values(DataType.FLOAT16, (3, 4), seed=5)
    value = np.uint16(0x7E01).tobytes()
    op = padding_for(BufferTensorDesc("float16", (3, 4)), (2, 5, 4, 1), mode=mode,
                     value_hex=value.hex() if mode == PaddingMode.CONSTANT else "")
    got = output_values(op, x).reshape(op.output.sizes[2:])
    assert np.array_equal(bits(got), bits(np_pad(x, [2, 5], [4, 1], mode, value)))


def test_output_values_with_a_strided_output_or_nibbles_is_unpack_of_execute() -> None:
    x = np.arange(6, dtype=np.uint8).reshape(2, 3)
    pitched = IdentityOp(BufferTensorDesc("uint8", (2, 3)), BufferTensorDesc("uint8", (2, 3), (4, 1)))
    assert np.array_equal(output_values(pitched, x), x)
    nibbles = IdentityOp(BufferTensorDesc("uint4", (2, 3)).transpose((1, 0)),
                         BufferTensorDesc("uint4", (3, 2)))
    packed = np.array([0x21, 0x43, 0x65], dtype=np.uint8)  # values 1..6, low nibble first
    assert np.array_equal(output_values(nibbles, packed), np.array([[1, 4], [2, 5], [3, 6]], np.uint8))
    with pytest.raises(DescriptorError):
        output_values(IdentityOp(BufferTensorDesc("uint32", (2, 3)), BufferTensorDesc("uint32", (2, 3))),
                      np.zeros(5, np.uint32))


@pytest.mark.parametrize("limit", [0, 1_000_000], ids=["one-gather", "slice-per-run"])
@pytest.mark.parametrize("mode", ["reflect", "edge", "wrap", "symmetric"])
def test_both_border_paths_match_np_pad(monkeypatch: pytest.MonkeyPatch, mode: str, limit: int) -> None:
    """Borders with many runs are copied with one gather, the others a slice per run: both equal
    numpy.pad, pads wider than the tensor included."""
    from ort_layouts.operators import padding as _oracle

    monkeypatch.setattr(_oracle, "_MAX_PYTHON_RUNS", limit)
    x = np.random.default_rng(5).integers(0, 255, size=(3, 5), dtype=np.uint8)
    dml_mode = PaddingMode.SYMMETRIC if mode == "symmetric" else mode
    op = PaddingOp.from_onnx(BufferTensorDesc("uint8", x.shape), [7, 9, 11, 13], mode=dml_mode)
    got = unpack(op.output, execute(op, x)).reshape(3 + 7 + 11, 5 + 9 + 13)
    assert np.array_equal(got, np.pad(x, ((7, 11), (9, 13)), mode=mode))
