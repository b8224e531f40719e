"""A catalogue of bad inputs: each raises its typed error, and the message names the bad value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from ort_layouts import (
    BufferTensorDesc,
    DataType,
    DataTypeError,
    DescriptorError,
    LayoutError,
    NotExpressibleError,
    OrtLayoutsError,
    PaddingMode,
    PaddingOp,
    ShapeError,
    calc_buffer_tensor_size,
    calculate_strides,
)

F32_3x4 = BufferTensorDesc("float32", (3, 4))

CATALOGUE: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # sizes
    ("zero-size", lambda: BufferTensorDesc("float32", (2, 0, 3)), DescriptorError, "[2, 0, 3] has 0"),
    ("negative-size", lambda: BufferTensorDesc("float32", (2, -3)), DescriptorError, "-3"),
    ("empty-sizes", lambda: BufferTensorDesc("float32", ()), DescriptorError, "empty"),
    ("rank-9", lambda: BufferTensorDesc("float32", (1,) * 9), DescriptorError, "DimensionCount 9"),
    ("float-size", lambda: BufferTensorDesc("float32", (2, 2.5)), DescriptorError, "2.5"),
    ("bool-size", lambda: BufferTensorDesc("float32", (2, True)), DescriptorError, "True"),
    ("string-sizes", lambda: BufferTensorDesc("float32", "23"), DescriptorError, "'23'"),
    ("size-over-uint32", lambda: BufferTensorDesc("uint8", (2**32,), (0,)), DescriptorError, "4294967296"),
    ("too-many-elements", lambda: BufferTensorDesc("uint8", (65536, 65536)), DescriptorError, "4294967296"),
    ("span-over-limit", lambda: BufferTensorDesc("uint8", (2, 2), (2**32 - 1, 1)), DescriptorError,
     "4294967297"),
    # strides
    ("negative-stride", lambda: BufferTensorDesc("float32", (2, 3), (3, -1)), DescriptorError, "-1"),
    ("strides-length", lambda: BufferTensorDesc("float32", (2, 3), (3, 1, 1)), DescriptorError, "[3, 1, 1]"),
    ("float-stride", lambda: BufferTensorDesc("float32", (2, 3), (3.0, 1)), DescriptorError, "3.0"),
    ("stride-over-uint32", lambda: BufferTensorDesc("uint8", (1, 2), (2**32, 1)), DescriptorError,
     "4294967296"),
    # total size, alignment, flags
    ("total-too-small", lambda: BufferTensorDesc("float32", (2, 3), total_tensor_size_in_bytes=20),
     DescriptorError, "20"),
    ("total-not-multiple-of-4", lambda: BufferTensorDesc("float32", (2, 3), total_tensor_size_in_bytes=26),
     DescriptorError, "26"),
    ("total-not-integer", lambda: BufferTensorDesc("float32", (2,), total_tensor_size_in_bytes=8.0),
     DescriptorError, "8.0"),
    ("total-over-limit", lambda: BufferTensorDesc("uint8", (4,), total_tensor_size_in_bytes=2**33),
     DescriptorError, str(2**33)),
    ("alignment-not-power-of-two",
     lambda: BufferTensorDesc("float32", (4,), guaranteed_base_offset_alignment=12),
     DescriptorError, "12"),
    ("alignment-below-element-size",
     lambda: BufferTensorDesc("float64", (4,), guaranteed_base_offset_alignment=4),
     DescriptorError, "Alignment 4 "),
    ("alignment-negative", lambda: BufferTensorDesc("float32", (4,), guaranteed_base_offset_alignment=-16),
     DescriptorError, "-16"),
    ("alignment-over-uint", lambda: BufferTensorDesc("float32", (4,), guaranteed_base_offset_alignment=2**40),
     DescriptorError, f"{2**40} must be 0 or a power of two"),
    ("bad-flags", lambda: BufferTensorDesc("float32", (4,), flags=2), DescriptorError, "flags 2 "),
    ("output-overlap", lambda: BufferTensorDesc("float32", (2, 3), (0, 1)).validate(is_output=True),
     DescriptorError, "[0, 1]"),
    ("operator-rank-range", lambda: F32_3x4.validate(min_dimension_count=4),
     DescriptorError, "DimensionCount 2 "),
    # data types
    ("unknown-dtype-name", lambda: BufferTensorDesc("float128", (2,)), DataTypeError, "float128"),
    ("bfloat16-name", lambda: DataType.from_name("bfloat16"), DataTypeError, "bfloat16"),
    ("dtype-unknown-member", lambda: BufferTensorDesc(DataType.UNKNOWN, (2,)), DataTypeError, "UNKNOWN"),
    ("dtype-bare-int", lambda: BufferTensorDesc(1, (2,)), DataTypeError, "data type 1 "),
    ("dtype-none", lambda: calc_buffer_tensor_size(None, (2,)), DataTypeError, "None"),
    ("dml-value-99", lambda: DataType(99), DataTypeError, "99 is not"),
    ("onnx-string", lambda: DataType.from_onnx(TensorProto.STRING), DataTypeError, "STRING"),
    ("onnx-complex64", lambda: DataType.from_onnx(TensorProto.COMPLEX64), DataTypeError, "COMPLEX64"),
    ("onnx-float8", lambda: DataType.from_onnx(TensorProto.FLOAT8E4M3FN), DataTypeError, "FLOAT8E4M3FN"),
    ("numpy-complex", lambda: DataType.from_numpy(np.complex64), DataTypeError, "complex64"),
    ("uint4-to-numpy", lambda: BufferTensorDesc("uint4", (4,)).view(bytes(4)), DataTypeError, "UINT4"),
    # layouts
    ("layout-unknown-letters", lambda: calculate_strides("NCHQ", (1, 2, 3, 4)), LayoutError, "NCHQ"),
    ("layout-wrong-rank", lambda: calculate_strides("NCHW", (2, 3)), LayoutError, "NCHW"),
    ("layout-repeated-letter", lambda: BufferTensorDesc.packed("float32", (1, 2, 3, 4), layout="NHHW"),
     LayoutError, "NHHW"),
    ("layout-not-a-permutation", lambda: calculate_strides((0, 2, 2), (1, 2, 3)), LayoutError, "[0, 2, 2]"),
    ("broadcast-flags-length", lambda: calculate_strides("NCHW", (1, 2, 3, 4), [True]), ShapeError, "[True]"),
    ("broadcast-flags-string", lambda: calculate_strides("NCHW", (1, 2, 3, 4), "TFTF"), ShapeError,  # type: ignore[arg-type]
     "broadcast flags 'TFTF' are not a sequence of bools; valid: one True or False per size"),
    ("broadcast-flags-int", lambda: calculate_strides("NCHW", (1, 2, 3, 4), 3), ShapeError,  # type: ignore[arg-type]
     "broadcast flags 3 are not a sequence of bools"),
    ("broadcast-flags-set", lambda: calculate_strides("NCHW", (1, 2, 3, 4), {0, 1}), ShapeError,  # type: ignore[arg-type]
     "broadcast flags {0, 1} are not"),
    ("broadcast-flag-two", lambda: calculate_strides("NCHW", (1, 2, 3, 4), [2, 0, 0, 0]), ShapeError,
     "hold 2, which is not a bool; valid: one True or False per size"),
    ("broadcast-flag-text", lambda: calculate_strides("NCHW", (1, 2, 3, 4), ["False", "", "", ""]),  # type: ignore[list-item]
     ShapeError, "hold 'False', which is not a bool"),
    ("layout-set", lambda: calculate_strides({0, 1}, (2, 3)), LayoutError, "layout {0, 1} is neither"),  # type: ignore[arg-type]
    ("layout-sizes-set", lambda: calculate_strides("HW", {2, 3}), ShapeError,  # type: ignore[arg-type]
     "sizes {2, 3} is not a sequence of integers"),
    # transpose
    ("perm-not-permutation", lambda: F32_3x4.transpose((0, 0)), ShapeError, "[0, 0]"),
    ("perm-wrong-length", lambda: F32_3x4.transpose((0, 1, 2)), ShapeError, "[0, 1, 2]"),
    ("perm-negative", lambda: F32_3x4.transpose((-1, 0)), ShapeError, "[-1, 0]"),
    ("perm-float", lambda: F32_3x4.transpose((1.0, 0)), ShapeError, "1.0"),
    # broadcast
    ("broadcast-incompatible", lambda: F32_3x4.broadcast_to((3, 5)), ShapeError, "[3, 5]"),
    ("broadcast-to-zero", lambda: BufferTensorDesc("float32", (1, 4)).broadcast_to((0, 4)),
     ShapeError, "[0, 4]"),
    ("broadcast-negative", lambda: F32_3x4.broadcast_to((-1, 4)), ShapeError, "-1"),
    ("broadcast-float", lambda: F32_3x4.broadcast_to((3, 4.0)), ShapeError, "4.0"),
    # queries
    ("offset-out-of-range", lambda: F32_3x4.offset_of((3, 0)), ShapeError, "[3, 0]"),
    ("offset-wrong-rank", lambda: F32_3x4.offset_of((1,)), ShapeError, "[1]"),
    ("coerce-range", lambda: F32_3x4.coerce_rank(9), DescriptorError, "minimum 9"),
    ("uint32-view-of-float", lambda: F32_3x4.as_uint32_view(), DescriptorError, "FLOAT32"),
    ("buffer-too-small", lambda: F32_3x4.view(bytes(47)), DescriptorError, "47"),
    ("from-dict-unknown-key",
     lambda: BufferTensorDesc.from_dict({"data_type": "FLOAT32", "sizes": [2], "size": 1}),
     DescriptorError, "size"),
    ("cpp-name", lambda: F32_3x4.to_cpp("my desc"), DescriptorError, "my desc"),
    # the descriptor of something else: a list, a dict or JSON text that is no descriptor
    ("from-numpy-list", lambda: BufferTensorDesc.from_numpy([1, 2]), DescriptorError,  # type: ignore[arg-type]
     "from_numpy needs a numpy array (its dtype, shape and strides), got list [1, 2]"),
    ("from-numpy-none", lambda: BufferTensorDesc.from_numpy(None), DescriptorError,  # type: ignore[arg-type]
     "got NoneType None"),
    ("from-dict-not-a-dict", lambda: BufferTensorDesc.from_dict([1]), DescriptorError, "got [1]"),  # type: ignore[arg-type]
    ("from-dict-no-sizes", lambda: BufferTensorDesc.from_dict({"data_type": "FLOAT32"}), DescriptorError,
     "needs data_type and sizes; got keys ['data_type']"),
    ("from-dict-keys-of-two-types",
     lambda: BufferTensorDesc.from_dict({"data_type": "FLOAT32", "sizes": [2], 3: 1, "x": 2}),
     DescriptorError, "unknown descriptor keys [3, 'x']"),
    ("from-dict-sizes-int", lambda: BufferTensorDesc.from_dict({"data_type": "FLOAT32", "sizes": 3}),
     DescriptorError, "sizes 3 is not a sequence of integers"),
    ("from-dict-strides-int",
     lambda: BufferTensorDesc.from_dict({"data_type": "FLOAT32", "sizes": [2, 3], "strides": 5}),
     DescriptorError, "strides 5 is not a sequence of integers"),
    ("from-dict-sizes-set", lambda: BufferTensorDesc.from_dict({"data_type": "FLOAT32", "sizes": {3, 2}}),
     DescriptorError, "sizes {2, 3} is not a sequence of integers"),
    ("from-dict-sizes-dict", lambda: BufferTensorDesc.from_dict({"data_type": "FLOAT32", "sizes": {3: 1}}),
     DescriptorError, "sizes {3: 1} is not a sequence of integers"),
    ("from-dict-dtype-bool", lambda: BufferTensorDesc.from_dict({"data_type": True, "sizes": [2]}),
     DataTypeError, "data_type True is neither a data type name nor a DML_TENSOR_DATA_TYPE value; valid: "),
    ("from-dict-dtype-float", lambda: BufferTensorDesc.from_dict({"data_type": 1.0, "sizes": [2]}),
     DataTypeError, "data_type 1.0 is neither"),
    ("from-dict-flags-name",
     lambda: BufferTensorDesc.from_dict({"data_type": "FLOAT32", "sizes": [2], "flags": "NONE"}),
     DescriptorError, "flags 'NONE' is not a DML_TENSOR_FLAGS value; valid: "),
    ("from-json-not-json", lambda: BufferTensorDesc.from_json("[1"), DescriptorError,
     "descriptor JSON '[1' does not parse"),
    ("from-json-not-text", lambda: BufferTensorDesc.from_json(5), DescriptorError,  # type: ignore[arg-type]
     "descriptor JSON text is needed, got int 5"),
    ("sizes-set", lambda: BufferTensorDesc("float32", {2, 3}), DescriptorError,  # type: ignore[arg-type]
     "sizes {2, 3} is not a sequence of integers"),
    ("packed-sizes-none", lambda: BufferTensorDesc.packed("float32", None), DescriptorError,  # type: ignore[arg-type]
     "sizes None is not a sequence of integers; valid: a list, tuple or array of integers"),
    ("packed-sizes-int", lambda: BufferTensorDesc.packed("float32", 5), DescriptorError,  # type: ignore[arg-type]
     "sizes 5 is not a sequence of integers"),
    ("with-strides-int", lambda: F32_3x4.with_strides(5), DescriptorError,  # type: ignore[arg-type]
     "strides 5 is not a sequence of integers"),
    ("coerce-rank-none", lambda: F32_3x4.coerce_rank(None), DescriptorError,  # type: ignore[arg-type]
     "minimum None, maximum 8 is not valid; need integers 1 <= minimum <= maximum <= 8"),
    ("validate-min-text", lambda: F32_3x4.validate(min_dimension_count="4"), DescriptorError,  # type: ignore[arg-type]
     "min_dimension_count '4' is a str; valid: an integer 1..8"),
    ("view-of-none", lambda: F32_3x4.view(None), DescriptorError,  # type: ignore[arg-type]
     "buffer None is a NoneType; valid: a numpy array, bytes, bytearray or memoryview"),
    ("view-of-strided-array", lambda: F32_3x4.view(np.zeros((12, 2), np.float32)[:, 0]), DescriptorError,
     "buffer array of dtype float32 and shape [12] is not C-contiguous (strides (8,)); valid: a C-contig"),
    ("view-of-object-array", lambda: F32_3x4.view(np.array([None] * 48)), DescriptorError,
     "buffer array of dtype object and shape [48] holds Python objects; valid: "),
    ("validate-is-output-text", lambda: F32_3x4.validate(is_output="no"), DescriptorError,  # type: ignore[arg-type]
     "is_output 'no' is a str; valid: True or False"),
    ("validate-is-output-array", lambda: F32_3x4.validate(is_output=np.ones(2, bool)), DescriptorError,  # type: ignore[arg-type]
     "is_output array([ True,  True]) is an ndarray; valid: True or False"),
    ("validate-min-zero", lambda: F32_3x4.validate(min_dimension_count=0), DescriptorError,
     "min_dimension_count 0, max_dimension_count 8 is not valid; valid: integers 1 <= min_dimension_count <= "
     "max_dimension_count <= 8"),
    ("validate-max-nine", lambda: F32_3x4.validate(max_dimension_count=9), DescriptorError,
     "min_dimension_count 1, max_dimension_count 9 is not valid"),
    ("validate-min-over-max", lambda: F32_3x4.validate(min_dimension_count=5, max_dimension_count=2),
     DescriptorError, "min_dimension_count 5, max_dimension_count 2 is not valid"),
    ("cpp-keyword", lambda: F32_3x4.to_cpp("class"), DescriptorError,
     "'class' is a C++ keyword, which cannot name a variable; valid: any other identifier, e.g. 'classDesc'"),
    ("from-json-nested-deeply", lambda: BufferTensorDesc.from_json("[" * 100_000), DescriptorError,
     "does not parse: nested too deeply"),
    ("from-onnx-dims-int", lambda: BufferTensorDesc.from_onnx(
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]), dims=5),  # type: ignore[arg-type]
     ShapeError, "dims 5 is an int; valid: a dict of dimension names to integers"),
    ("from-onnx-dims-text", lambda: BufferTensorDesc.from_onnx(
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]), dims={"N": "2"}),  # type: ignore[dict-item]
     ShapeError, "dims {'N': '2'} is a dict; valid: a dict of dimension names to integers"),
    # pad
    ("pads-length", lambda: PaddingOp.from_onnx(F32_3x4, [1, 2, 3]), ShapeError, "[1, 2, 3]"),
    ("pad-axis-out-of-range", lambda: PaddingOp.from_onnx(F32_3x4, [1, 1], axes=[2]), ShapeError, "axis 2 "),
    ("pad-axes-repeat", lambda: PaddingOp.from_onnx(F32_3x4, [1, 1, 1, 1], axes=[0, -2]),
     ShapeError, "[0, -2]"),
    ("pad-mode", lambda: PaddingOp.from_onnx(F32_3x4, [1, 1, 1, 1], mode="mirror"), ShapeError, "mirror"),
    ("pad-mode-value", lambda: PaddingMode(7), ShapeError, "7 is not"),
    ("pad-float-pads", lambda: PaddingOp.from_onnx(F32_3x4, [1, 1.5, 1, 1]), ShapeError, "1.5"),
    ("pad-negative", lambda: PaddingOp.from_onnx(F32_3x4, [0, 0, -1, 0]),
     NotExpressibleError, "end of axis 0 is -1"),
    ("pad-value-out-of-range", lambda: PaddingOp.from_onnx(BufferTensorDesc("int8", (2,)), [1, 1], value=200),
     ShapeError, "200"),
]


def test_catalogue_is_large_and_ids_unique() -> None:
    assert len(CATALOGUE) >= 30
    assert len({c[0] for c in CATALOGUE}) == len(CATALOGUE)


@pytest.mark.parametrize(("make", "error", "needle"), [c[1:] for c in CATALOGUE],
                         ids=[c[0] for c in CATALOGUE])
def test_bad_input(make: Callable[[], Any], error: type[Exception], needle: str) -> None:
    with pytest.raises(error) as info:
        make()
    assert isinstance(info.value, OrtLayoutsError) and isinstance(info.value, ValueError)
    assert needle in str(info.value), str(info.value)


@pytest.mark.parametrize(
    ("make", "rule"),
    [(lambda: BufferTensorDesc("float32", (1,) * 9), "dimension-count"),
     (lambda: BufferTensorDesc("float32", (2, 0)), "size-positive"),
     (lambda: BufferTensorDesc("float32", (2,), total_tensor_size_in_bytes=4), "total-size"),
     (lambda: BufferTensorDesc("float32", (2,), total_tensor_size_in_bytes=10), "total-size-multiple-of-4"),
     (lambda: BufferTensorDesc("float32", (2,), guaranteed_base_offset_alignment=3), "alignment"),
     (lambda: BufferTensorDesc("uint8", (65536, 65536)), "element-count"),
     (lambda: BufferTensorDesc("float32", (2, 3), (1, 1)).validate(is_output=True), "output-overlap")],
    ids=["dimension-count", "size-positive", "total-size", "multiple-of-4", "alignment",
         "element-count", "output-overlap"])
def test_descriptor_errors_name_the_rule(make: Callable[[], Any], rule: str) -> None:
    with pytest.raises(DescriptorError) as info:
        make()
    assert info.value.rule == rule
    assert str(info.value.value).strip("[]()").split(",")[0] in str(info.value)
