"""DataType: DirectML values, bit widths, numpy / ONNX / name conversions."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ort_layouts import DataType, DataTypeError, DescriptorError, TensorFlags

NUMPY_TYPES = [
    (DataType.FLOAT32, np.float32), (DataType.FLOAT16, np.float16), (DataType.UINT32, np.uint32),
    (DataType.UINT16, np.uint16), (DataType.UINT8, np.uint8), (DataType.INT32, np.int32),
    (DataType.INT16, np.int16), (DataType.INT8, np.int8), (DataType.FLOAT64, np.float64),
    (DataType.UINT64, np.uint64), (DataType.INT64, np.int64),
]


@pytest.mark.parametrize(("dtype", "np_type"), NUMPY_TYPES, ids=[t.name for t, _ in NUMPY_TYPES])
def test_numpy_round_trip(dtype: DataType, np_type: type) -> None:
    assert dtype.to_numpy() == np.dtype(np_type)
    assert DataType.from_numpy(np_type) is dtype
    assert dtype.bitwidth == 8 * np.dtype(np_type).itemsize


@pytest.mark.parametrize("dtype", [DataType.UINT4, DataType.INT4], ids=["UINT4", "INT4"])
def test_four_bit_types(dtype: DataType) -> None:
    assert dtype.bitwidth == 4
    with pytest.raises(DataTypeError, match=dtype.name) as raised:
        dtype.to_numpy()
    assert "numpy has no 4-bit integers: pack and unpack hold UINT4 values as uint8, INT4 as int8" \
        in str(raised.value)
    with pytest.raises(DataTypeError) as raised:
        DataType.UNKNOWN.to_numpy()
    assert "4-bit" not in str(raised.value)


def test_bool_is_uint8() -> None:
    assert DataType.from_numpy(np.bool_) is DataType.UINT8
    assert DataType.from_onnx(TensorProto.BOOL) is DataType.UINT8
    assert DataType.from_name("bool") is DataType.UINT8
    assert DataType.UINT8.to_onnx() == TensorProto.UINT8  # never back to BOOL


@pytest.mark.parametrize("dtype", DataType.known(), ids=lambda t: t.name)
def test_onnx_round_trip(dtype: DataType) -> None:
    onnx_type = dtype.to_onnx()
    assert DataType.from_onnx(onnx_type) is dtype
    # the ONNX name agrees with numpy's, where both exist
    if dtype.bitwidth >= 8:
        assert helper.tensor_dtype_to_np_dtype(onnx_type) == dtype.to_numpy()


@pytest.mark.parametrize(
    "onnx_type",
    [TensorProto.STRING, TensorProto.COMPLEX64, TensorProto.COMPLEX128, TensorProto.BFLOAT16,
     TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2, TensorProto.UNDEFINED],
    ids=["STRING", "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E5M2", "UNDEFINED"])
def test_onnx_types_without_dml_equivalent(onnx_type: int) -> None:
    with pytest.raises(DataTypeError, match=TensorProto.DataType.Name(onnx_type)):
        DataType.from_onnx(onnx_type)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("float16", DataType.FLOAT16), ("FLOAT16", DataType.FLOAT16), ("half", DataType.FLOAT16),
     ("DML_TENSOR_DATA_TYPE_FLOAT16", DataType.FLOAT16), ("float", DataType.FLOAT32),
     ("double", DataType.FLOAT64), (" int64 ", DataType.INT64), ("uint4", DataType.UINT4),
     ("i8", DataType.INT8)],
    ids=lambda v: v if isinstance(v, str) else v.name)
def test_from_name(name: str, expected: DataType) -> None:
    assert DataType.from_name(name) is expected


def test_names() -> None:
    assert DataType.FLOAT32.dml_name == "DML_TENSOR_DATA_TYPE_FLOAT32"
    assert DataType.INT64.is_64bit_integer and not DataType.INT32.is_64bit_integer
    assert DataType.FLOAT16.is_float and not DataType.UINT8.is_float
    assert DataType.UNKNOWN not in DataType.known() and len(DataType.known()) == 13


def test_coerce() -> None:
    assert DataType.coerce("float32") is DataType.FLOAT32
    assert DataType.coerce(np.dtype("int16")) is DataType.INT16
    assert DataType.coerce(DataType.UINT4) is DataType.UINT4
    with pytest.raises(DataTypeError, match="bare integer"):
        DataType.coerce(1)
    with pytest.raises(DataTypeError, match="UNKNOWN"):
        DataType.coerce(DataType.UNKNOWN)


def test_unknown_has_no_bitwidth() -> None:
    with pytest.raises(DataTypeError, match="UNKNOWN"):
        _ = DataType.UNKNOWN.bitwidth


@pytest.mark.parametrize("value", [True, False, None, 99, -1, "FLOAT32", 1.0])
def test_a_value_that_is_no_data_type_is_refused_naming_the_valid_ones(value: object) -> None:
    """DML_TENSOR_DATA_TYPE has the values DirectML's header gives (FLOAT32 = 1 ... INT4 = 13);
    True and 1.0 equal 1 in Python, but are no data type (they looked FLOAT32 up)."""
    with pytest.raises(DataTypeError, match=rf"^{value!r} is not a DML_TENSOR_DATA_TYPE value; "
                                            r"valid: .*'FLOAT32': 1"):
        DataType(value)  # type: ignore[arg-type]
    assert (DataType(1), DataType(np.int32(13))) == (DataType.FLOAT32, DataType.INT4)


@pytest.mark.parametrize("value", [True, False, None, 2, 3, -1, "NONE", 1.0])
def test_a_value_that_is_no_tensor_flags_is_refused_naming_the_valid_ones(value: object) -> None:
    """DML_TENSOR_FLAGS has DML_TENSOR_FLAG_NONE = 0 and DML_TENSOR_FLAG_OWNED_BY_DML = 1 alone."""
    with pytest.raises(DescriptorError, match=rf"^flags {value!r} is not a DML_TENSOR_FLAGS value; "
                                              r"valid: 0 \(NONE\), 1 \(OWNED_BY_DML\)$") as raised:
        TensorFlags(value)  # type: ignore[arg-type]
    assert raised.value.rule == "flags"
    assert (TensorFlags(0), TensorFlags(np.uint8(1))) == (TensorFlags.NONE, TensorFlags.OWNED_BY_DML)
    assert TensorFlags.NONE | TensorFlags.OWNED_BY_DML is TensorFlags.OWNED_BY_DML
