"""BufferTensorDesc: queries, transformations (against numpy), export and validation."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from ort_layouts import BufferTensorDesc, DataType, DataTypeError, DescriptorError, ShapeError, TensorFlags

SETTINGS = settings(max_examples=150, deadline=None)
DTYPES = ["uint8", "int16", "float16", "float32", "int64", "float64"]

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=8).map(tuple)


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random bits (NaN payloads and -0.0 included for floats)."""
    item = np.dtype(dtype).itemsize
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * item, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def padded(array: np.ndarray, desc: BufferTensorDesc) -> bytes:
    """The array's bytes, zero-filled up to the descriptor's TotalTensorSizeInBytes."""
    return array.tobytes().ljust(desc.total_tensor_size_in_bytes, b"\0")


def addressed_minimum(desc: BufferTensorDesc) -> int:
    """Independent: the byte after the last addressed element, by numpy enumeration, rounded to 4."""
    item = desc.data_type.to_numpy().itemsize
    idx = np.indices(desc.sizes, dtype=np.int64).reshape(desc.dimension_count, -1)
    last = int((idx * np.array(desc.effective_strides)[:, None]).sum(axis=0).max())
    return ((last + 1) * item + 3) // 4 * 4


# ---- properties against numpy ------------------------------------------------------------------
@SETTINGS
@given(data=st.data(), shape=shapes, dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_transpose_view_equals_numpy(data: st.DataObject, shape: tuple[int, ...], dtype: str,
                                     seed: int) -> None:
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    array = random_array(np.random.default_rng(seed), shape, dtype)
    desc = BufferTensorDesc(dtype, shape).transpose(perm)
    assert same_bits(desc.view(padded(array, desc)), np.transpose(array, perm))
    assert desc.total_tensor_size_in_bytes == BufferTensorDesc(dtype, shape).total_tensor_size_in_bytes
    assert desc.minimum_implied_size_in_bytes == addressed_minimum(desc)


@SETTINGS
@given(data=st.data(), shape=shapes)
def test_transpose_then_inverse_is_identity(data: st.DataObject, shape: tuple[int, ...]) -> None:
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    desc = BufferTensorDesc.packed("float32", shape, layout=tuple(range(len(shape))))
    assert desc.transpose(perm).transpose(tuple(np.argsort(perm).tolist())) == desc


@st.composite
def broadcast_pairs(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(source, target) that ONNX broadcasts: source right-aligned, 1s anywhere."""
    target = draw(st.lists(st.integers(1, 4), min_size=1, max_size=8))
    rank = draw(st.integers(1, len(target)))
    source = [n if draw(st.booleans()) else 1 for n in target[len(target) - rank:]]
    # multidirectional: the target may also hold a 1 where the source does not
    target = [1 if draw(st.integers(0, 5)) == 0 else n for n in target]
    return tuple(source), tuple(target)


@SETTINGS
@given(pair=broadcast_pairs(), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_broadcast_view_equals_numpy(pair: tuple[tuple[int, ...], tuple[int, ...]], dtype: str,
                                     seed: int) -> None:
    source, target = pair
    array = random_array(np.random.default_rng(seed), source, dtype)
    base = BufferTensorDesc(dtype, source)
    desc = base.broadcast_to(target)
    shape = np.broadcast_shapes(source, target)
    assert desc.sizes == shape
    assert same_bits(desc.view(padded(array, desc)), np.broadcast_to(array, shape))
    assert desc.total_tensor_size_in_bytes == base.total_tensor_size_in_bytes  # never changes
    assert desc.minimum_implied_size_in_bytes == addressed_minimum(desc)
    stretched = {len(shape) - len(source) + a for a, n in enumerate(source) if n == 1}
    stretched |= set(range(len(shape) - len(source)))
    assert set(desc.broadcast_axes) == {a for a in stretched if shape[a] > 1}


@SETTINGS
@given(data=st.data(), shape=shapes, dtype=st.sampled_from(DTYPES))
def test_size_holds_every_addressed_byte(data: st.DataObject, shape: tuple[int, ...], dtype: str) -> None:
    strides = tuple(data.draw(st.lists(st.integers(0, 40), min_size=len(shape), max_size=len(shape))))
    desc = BufferTensorDesc(dtype, shape, strides)
    minimum = addressed_minimum(desc)
    assert desc.total_tensor_size_in_bytes == desc.minimum_implied_size_in_bytes == minimum
    desc.view(bytes(minimum))  # fits exactly
    if minimum > 4:
        with pytest.raises(DescriptorError):
            BufferTensorDesc(dtype, shape, strides, total_tensor_size_in_bytes=minimum - 4)


@SETTINGS
@given(data=st.data(), shape=shapes)
def test_overlap_matches_enumeration(data: st.DataObject, shape: tuple[int, ...]) -> None:
    strides = tuple(data.draw(st.lists(st.integers(0, 12), min_size=len(shape), max_size=len(shape))))
    desc = BufferTensorDesc("uint8", shape, strides)
    idx = np.indices(shape).reshape(len(shape), -1)
    moving = [a for a, (n, s) in enumerate(zip(shape, strides, strict=True)) if n > 1 and s > 0]
    offsets = (idx[moving] * np.array([strides[a] for a in moving])[:, None]).sum(axis=0)
    distinct_positions = np.unique(idx[moving], axis=1).shape[1] if moving else 1
    assert desc.overlaps() == (np.unique(offsets).size < distinct_positions)
    assert desc.addressed_element_count == np.unique(offsets).size


# ---- queries -----------------------------------------------------------------------------------
def test_queries_on_padded_rows() -> None:
    desc = BufferTensorDesc("float32", (2, 3), (5, 1), total_tensor_size_in_bytes=40)
    assert desc.dimension_count == 2 and desc.element_count == 6
    assert desc.minimum_implied_size_in_bytes == 32 and desc.total_tensor_size_in_bytes == 40
    assert desc.padding_bytes == 16 and not desc.is_packed and not desc.overlaps()
    assert desc.byte_strides == (20, 4)
    assert desc.layout() is None and desc.memory_order() is None
    assert [desc.offset_of((1, i)) for i in range(3)] == [5, 6, 7]


def test_packed_in_any_order() -> None:
    nhwc = BufferTensorDesc.packed("float16", (2, 3, 4, 5), layout="NHWC")
    assert nhwc.is_packed and nhwc.layout() == "NHWC" and nhwc.memory_order() == (0, 2, 3, 1)
    assert nhwc.padding_bytes == 0


def test_overlap_without_broadcast() -> None:
    desc = BufferTensorDesc("uint8", (3, 3), (1, 1))  # a sliding window: offsets 0..4
    assert desc.overlaps() and not desc.broadcast_axes
    assert desc.addressed_element_count == 5
    with pytest.raises(DescriptorError, match=r"\[1, 1\]") as info:
        desc.validate(is_output=True)
    assert info.value.rule == "output-overlap"


def test_broadcast_is_not_overlap_but_bad_output() -> None:
    desc = BufferTensorDesc("uint8", (2, 3), (0, 1))
    assert not desc.overlaps() and desc.broadcast_axes == (0,)
    desc.validate()  # fine as an input
    with pytest.raises(DescriptorError, match="output"):
        desc.validate(is_output=True)


def test_validate_operator_range() -> None:
    desc = BufferTensorDesc("float32", (3, 4))
    desc.validate(min_dimension_count=1, max_dimension_count=8)
    with pytest.raises(DescriptorError, match="2") as info:
        desc.validate(min_dimension_count=4, max_dimension_count=5)
    assert info.value.rule == "dimension-count" and info.value.value == 2


def test_validate_takes_numpy_bools_and_integers_and_the_full_range() -> None:
    desc = BufferTensorDesc("float32", (2, 3), (0, 1))
    desc.validate(is_output=np.bool_(False), min_dimension_count=np.int64(2), max_dimension_count=np.int32(2))
    with pytest.raises(DescriptorError) as info:
        desc.validate(is_output=np.bool_(True))
    assert info.value.rule == "output-overlap"
    BufferTensorDesc("uint8", (1,) * 8).validate(min_dimension_count=8, max_dimension_count=8)
    with pytest.raises(DescriptorError) as info:
        desc.validate(min_dimension_count=3, max_dimension_count=1)
    assert info.value.rule == "dimension-count" and info.value.value == (3, 1)


def test_offset_of_rejects_out_of_range() -> None:
    with pytest.raises(ShapeError, match=r"\[2, 0\]"):
        BufferTensorDesc("float32", (2, 3)).offset_of((2, 0))


@pytest.mark.parametrize(("index", "message"), [
    ((2, 0), "index [2, 0] is out of range at axis 0 of sizes [2, 3]; valid: 0..1 there"),
    ((0, -1), "index [0, -1] is out of range at axis 1 of sizes [2, 3]; valid: 0..2 there"),
    ((1,), "index [1] has 1 axis; valid: 2, for sizes [2, 3]"),
    ((0, 0, 0), "index [0, 0, 0] has 3 axes; valid: 2, for sizes [2, 3]"),
])
def test_offset_of_names_the_index_the_sizes_and_what_is_valid(index: tuple[int, ...], message: str) -> None:
    """offset_of refuses an index as every index method of the operators does (full_index)."""
    with pytest.raises(ShapeError) as raised:
        BufferTensorDesc("float32", (2, 3), strides=(1, 2)).offset_of(index)
    assert str(raised.value) == message


# ---- transformations -----------------------------------------------------------------------------
def test_coerce_rank_keeps_the_view() -> None:
    array = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    desc = BufferTensorDesc("int32", (2, 3, 4)).transpose((1, 2, 0))
    four = desc.coerce_rank(4)
    assert four.sizes == (1, 3, 4, 2) and four.strides[0] == 0
    assert np.array_equal(four.view(array.tobytes())[0], np.transpose(array, (1, 2, 0)))


def test_fold_only_collapsible_axes() -> None:
    desc = BufferTensorDesc("float32", (2, 3, 4), (0, 4, 1))  # broadcast over a packed 3x4
    folded = desc.coerce_rank(1, 2)
    assert folded.sizes == (2, 12) and folded.strides == (0, 1)
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert same_bits(folded.view(array.tobytes()), np.broadcast_to(array.reshape(1, 12), (2, 12)))
    with pytest.raises(DescriptorError, match="fold") as info:
        BufferTensorDesc("float32", (2, 3, 4)).transpose((0, 2, 1)).coerce_rank(1, 2)
    assert info.value.rule == "dimension-count"


@SETTINGS
@given(shape=shapes, target_rank=st.integers(1, 8))
def test_fold_packed_keeps_bytes(shape: tuple[int, ...], target_rank: int) -> None:
    array = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    desc = BufferTensorDesc("int32", shape)
    fold = target_rank < len(shape)
    coerced = desc.coerce_rank(1, target_rank) if fold else desc.coerce_rank(target_rank)
    assert coerced.dimension_count == target_rank
    assert np.array_equal(coerced.view(array.tobytes()).ravel(), array.ravel())
    assert coerced.total_tensor_size_in_bytes == desc.total_tensor_size_in_bytes


def test_as_uint32_view_rejects_other_types() -> None:
    with pytest.raises(DescriptorError, match="FLOAT32"):
        BufferTensorDesc("float32", (2,)).as_uint32_view()


def test_with_strides() -> None:
    desc = BufferTensorDesc("float32", (2, 3)).with_strides((5, 1))
    assert desc.strides == (5, 1) and desc.total_tensor_size_in_bytes == 32


# ---- construction and export ------------------------------------------------------------------
@pytest.mark.parametrize(
    "desc",
    [BufferTensorDesc("float32", (1, 1, 3, 5)),
     BufferTensorDesc("float16", (2, 3), (0, 1), guaranteed_base_offset_alignment=16),
     BufferTensorDesc("uint4", (9,)),
     BufferTensorDesc("int64", (2, 3), (5, 1), total_tensor_size_in_bytes=128,
                      flags=TensorFlags.OWNED_BY_DML)],
    ids=["packed", "broadcast-aligned", "uint4", "padded-owned"])
def test_dict_and_json_round_trip(desc: BufferTensorDesc) -> None:
    data = desc.to_dict()
    assert json.loads(json.dumps(data)) == data  # plain JSON
    assert BufferTensorDesc.from_dict(data) == desc
    assert BufferTensorDesc.from_json(desc.to_json()) == desc
    assert BufferTensorDesc.from_dict({**data, "data_type": int(desc.data_type)}) == desc


def test_to_cpp() -> None:
    text = BufferTensorDesc("float32", (1, 1, 3, 5), (15, 1, 5, 1)).to_cpp("input")
    assert "UINT inputSizes[4] = {1, 1, 3, 5};" in text
    assert "UINT inputStrides[4] = {15, 1, 5, 1};" in text
    assert "DML_TENSOR_DATA_TYPE_FLOAT32,  // DataType" in text
    assert "60,  // TotalTensorSizeInBytes" in text
    packed = BufferTensorDesc("float32", (3,)).to_cpp()
    assert "nullptr,  // Strides" in packed and "Strides[" not in packed


# the few DirectML.h declarations the initializer needs, to compile it without the Windows SDK
DIRECTML_STUB = """
#include <cstdint>
typedef unsigned int UINT;
typedef unsigned long long UINT64;
enum DML_TENSOR_DATA_TYPE { DML_TENSOR_DATA_TYPE_UNKNOWN, DML_TENSOR_DATA_TYPE_FLOAT32,
    DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_UINT32, DML_TENSOR_DATA_TYPE_UINT16,
    DML_TENSOR_DATA_TYPE_UINT8, DML_TENSOR_DATA_TYPE_INT32, DML_TENSOR_DATA_TYPE_INT16,
    DML_TENSOR_DATA_TYPE_INT8, DML_TENSOR_DATA_TYPE_FLOAT64, DML_TENSOR_DATA_TYPE_UINT64,
    DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_UINT4, DML_TENSOR_DATA_TYPE_INT4 };
enum DML_TENSOR_FLAGS { DML_TENSOR_FLAG_NONE = 0, DML_TENSOR_FLAG_OWNED_BY_DML = 1 };
enum DML_TENSOR_TYPE { DML_TENSOR_TYPE_INVALID, DML_TENSOR_TYPE_BUFFER };
struct DML_BUFFER_TENSOR_DESC { DML_TENSOR_DATA_TYPE DataType; DML_TENSOR_FLAGS Flags;
    UINT DimensionCount; const UINT* Sizes; const UINT* Strides; UINT64 TotalTensorSizeInBytes;
    UINT GuaranteedBaseOffsetAlignment; };
struct DML_TENSOR_DESC { DML_TENSOR_TYPE Type; const void* Desc; };
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_cpp_initializer_compiles_and_holds_the_values(tmp_path: Path) -> None:
    descs = {"a": BufferTensorDesc("float32", (4, 2, 3), (1, 12, 4), total_tensor_size_in_bytes=96),
             "b": BufferTensorDesc("int64", (5,), flags=TensorFlags.OWNED_BY_DML,
                                   guaranteed_base_offset_alignment=32)}
    body = "\n".join(d.to_cpp(name) for name, d in descs.items())
    checks = """
    #include <cstdio>
    int main() {
        printf("%d %u %u %u %u %llu %u\\n", a.DataType, a.DimensionCount, aSizes[0], aStrides[1],
               a.Strides == aStrides, a.TotalTensorSizeInBytes, a.GuaranteedBaseOffsetAlignment);
        printf("%d %d %u %d %llu %u\\n", b.DataType, b.Flags, bSizes[0], b.Strides == nullptr,
               b.TotalTensorSizeInBytes, b.GuaranteedBaseOffsetAlignment);
        return aTensor.Desc == &a ? 0 : 1;
    }
    """
    source = tmp_path / "desc.cpp"
    source.write_text(DIRECTML_STUB + body + checks)
    exe = tmp_path / "desc"
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-o", str(exe), str(source)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    assert out[0] == "1 3 4 12 1 96 0"  # FLOAT32 = 1
    assert out[1] == "11 1 5 1 40 32"  # INT64 = 11, OWNED_BY_DML = 1


def test_from_onnx_value_info_and_types() -> None:
    vi = helper.make_tensor_value_info("x", TensorProto.BOOL, [2, "N", 4])
    desc = BufferTensorDesc.from_onnx(vi, dims={"N": 3})
    assert desc.data_type is DataType.UINT8 and desc.sizes == (2, 3, 4) and desc.strides is None
    assert BufferTensorDesc.from_onnx(vi.type, dims={"N": 1}).sizes == (2, 1, 4)
    assert BufferTensorDesc.from_onnx(vi.type.tensor_type, dims={"N": 1}).sizes == (2, 1, 4)
    tensor = helper.make_tensor("t", TensorProto.DOUBLE, [3, 2], [0.0] * 6)
    assert BufferTensorDesc.from_onnx(tensor) == BufferTensorDesc("float64", (3, 2))
    scalar = helper.make_tensor("s", TensorProto.FLOAT, [], [1.0])
    assert BufferTensorDesc.from_onnx(scalar).sizes == (1,)
    with pytest.raises(ShapeError, match="'N'"):
        BufferTensorDesc.from_onnx(vi)
    seq = onnx.ValueInfoProto(name="s", type=helper.make_sequence_type_proto(vi.type))
    with pytest.raises(ShapeError, match="sequence_type"):
        BufferTensorDesc.from_onnx(seq)
    with pytest.raises(Exception, match="STRING"):
        BufferTensorDesc.from_onnx(helper.make_tensor_value_info("s", TensorProto.STRING, [2]))
    assert desc.data_type.to_onnx() == TensorProto.UINT8  # BOOL data is UINT8, never BOOL again


def test_from_numpy() -> None:
    a = np.zeros((2, 3, 4), np.float32)
    assert BufferTensorDesc.from_numpy(a) == BufferTensorDesc("float32", (2, 3, 4))
    t = np.transpose(a, (2, 0, 1))
    desc = BufferTensorDesc.from_numpy(t)
    assert desc.strides == (1, 12, 4)
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert np.array_equal(desc.view(base.tobytes()), np.transpose(base, (2, 0, 1)))


def test_from_numpy_refuses_big_endian_elements_whose_bytes_directml_would_misread() -> None:
    """1.0 as a big-endian float32 is bytes 3f 80 00 00; DirectML reads them little-endian as
    4.6e-41, so such an array's buffer is no FLOAT32 buffer of its values."""
    big = np.array([1.0, 2.0], dtype=">f4")
    assert big.tobytes()[:4] == bytes([0x3F, 0x80, 0, 0])
    with pytest.raises(DataTypeError, match=r"big-endian '>f4' elements.*valid: a little-endian array"):
        BufferTensorDesc.from_numpy(big)
    little = big.astype(big.dtype.newbyteorder("<"))
    assert BufferTensorDesc.from_numpy(little) == BufferTensorDesc("float32", (2,))
    assert BufferTensorDesc.from_numpy(np.array([1, 2], dtype=">u1")).data_type.name == "UINT8"  # one byte


def test_view_checks_buffer_size() -> None:
    with pytest.raises(DescriptorError, match="11"):
        BufferTensorDesc("float32", (3,)).view(bytes(11))


def test_view_reads_a_contiguous_array_of_any_dtype_as_its_bytes() -> None:
    values = np.array([1.5, -2.0, 3.25, 0.5], np.float32)
    as_words = values.view(np.uint32).reshape(2, 2)  # C-contiguous, another dtype and shape
    got = BufferTensorDesc("float32", (2, 2), (1, 2)).view(as_words)
    assert got.tolist() == [[1.5, 3.25], [-2.0, 0.5]]
    with pytest.raises(DescriptorError) as info:
        BufferTensorDesc("float32", (2,)).view(as_words[:, :1])  # every other word: no single run
    assert info.value.rule == "buffer"


# ---- canonical fields take a shorter validation path; it must agree with the full one --------
@SETTINGS
@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=8),
       data=st.data(), dtype=st.sampled_from(["uint8", "float16", "float32", "int64"]))
def test_canonical_and_numpy_fields_give_equal_descriptors(sizes: list[int], data: st.DataObject,
                                                           dtype: str) -> None:
    """Python-int tuples (the short path) and numpy integers (normalised by the full path) give
    the same descriptor, or the same error."""
    strides = data.draw(st.none() | st.lists(st.integers(0, 40), min_size=len(sizes), max_size=len(sizes)))
    extra = data.draw(st.sampled_from([None, 0, 3, 4, 64]))
    align = data.draw(st.sampled_from([0, 1, 3, 16]))
    flags = data.draw(st.sampled_from([0, 1]))

    def build(as_numpy: bool) -> BufferTensorDesc | str:
        wrap = np.int64 if as_numpy else int
        total = None
        if extra is not None:
            total = calc_min(dtype, sizes, strides) + extra
            total = wrap(total)
        try:
            return BufferTensorDesc(
                DataType.from_name(dtype), tuple(wrap(n) for n in sizes),
                None if strides is None else tuple(wrap(s) for s in strides), total,
                wrap(align), TensorFlags(flags) if not as_numpy else flags)
        except DescriptorError as e:
            return f"{e.rule}: {e}"

    fast, full = build(False), build(True)
    assert fast == full
    if isinstance(fast, BufferTensorDesc):
        assert type(fast.total_tensor_size_in_bytes) is int
        assert all(type(n) is int for n in fast.sizes)


def calc_min(dtype: str, sizes: list[int], strides: list[int] | None) -> int:
    """DMLCalcBufferTensorSize worked by hand: (last index + 1) elements, rounded up to 4 bytes."""
    item = np.dtype(dtype).itemsize
    if strides is None:
        span = int(np.prod(sizes))
    else:
        span = sum((n - 1) * s for n, s in zip(sizes, strides, strict=True)) + 1
    return -(-span * item // 4) * 4


@pytest.mark.parametrize(("kwargs", "rule"), [
    ({"sizes": (1, 2**32)}, "sizes-uint32"),
    ({"sizes": (2**16, 2**16)}, "element-count"),
    ({"sizes": (1, 2), "strides": (2**32, 1)}, "strides-uint32"),
    ({"sizes": (2, 2), "strides": (2**32 - 1, 1)}, "element-count"),
    ({"sizes": (2, 3), "total_tensor_size_in_bytes": 26}, "total-size-multiple-of-4"),
    ({"sizes": (2, 3), "total_tensor_size_in_bytes": 20}, "total-size"),
    ({"sizes": (2, 3), "guaranteed_base_offset_alignment": 2}, "alignment"),
    ({"sizes": (2, 3), "guaranteed_base_offset_alignment": 24}, "alignment"),
    ({"sizes": (2, 3), "flags": 2}, "flags"),
    ({"sizes": (1,) * 9}, "dimension-count"),
], ids=["size-over-uint32", "elements-over-limit", "stride-over-uint32", "span-over-limit",
        "total-not-multiple-of-4", "total-below-minimum", "alignment-below-element",
        "alignment-not-power-of-two", "flags-unknown", "nine-dimensions"])
def test_canonical_fields_are_still_validated(kwargs: dict, rule: str) -> None:
    """Python ints take the short path: each late rule still rejects them."""
    with pytest.raises(DescriptorError) as info:
        BufferTensorDesc(DataType.FLOAT32, **kwargs)
    assert info.value.rule == rule


def test_a_descriptor_built_again_is_validated_again_where_it_differs() -> None:
    # the same canonical fields twice: the second takes the first's validation
    a = BufferTensorDesc(DataType.FLOAT16, (3, 5), (1, 3))
    b = BufferTensorDesc(DataType.FLOAT16, (3, 5), (1, 3))
    assert a == b and b.total_tensor_size_in_bytes == 32  # 15 halves = 30 bytes, rounded up to 4
    # what is invalid stays invalid however often it is built
    for _ in range(2):
        with pytest.raises(DescriptorError, match="multiple of 4"):
            BufferTensorDesc(DataType.FLOAT16, (3, 5), (1, 3), total_tensor_size_in_bytes=34)
        with pytest.raises(DescriptorError, match="GuaranteedBaseOffsetAlignment"):
            BufferTensorDesc(DataType.FLOAT32, (3, 5), guaranteed_base_offset_alignment=2)
    # values equal to valid ones but of other types are checked and normalised, not taken as seen
    BufferTensorDesc(DataType.FLOAT32, (3, 5), guaranteed_base_offset_alignment=16)
    with pytest.raises(DescriptorError, match="GuaranteedBaseOffsetAlignment"):
        BufferTensorDesc(DataType.FLOAT32, (3, 5), guaranteed_base_offset_alignment=True)  # type: ignore[arg-type]
    c = BufferTensorDesc(DataType.FLOAT32, (np.int64(3), 5), total_tensor_size_in_bytes=np.int64(60))
    assert type(c.sizes[0]) is int and type(c.total_tensor_size_in_bytes) is int
    with pytest.raises(DescriptorError, match="not an integer"):
        BufferTensorDesc(DataType.FLOAT32, (3.0, 5))  # type: ignore[arg-type]  # equal to (3, 5), no integer
