"""DML_TENSOR_DATA_TYPE and its conversions to numpy, ONNX and names."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ort_layouts._errors import DataTypeError, DescriptorError

__all__ = ["DataType", "TensorFlags"]


class _IntegerEnumType(enum.EnumType):
    """The type of an enum of DirectML values that takes integers alone for one (a Python or
    numpy int): a bool or a float equal to a value would look it up (``DataType(True)`` and
    ``DataType(1.0)`` would be FLOAT32)."""

    def __call__(cls, value: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            return cls._missing_(value)  # type: ignore[attr-defined]  # each such enum raises there
        return super().__call__(value, *args, **kwargs)


class TensorFlags(enum.IntFlag, metaclass=_IntegerEnumType):
    """DML_TENSOR_FLAGS."""

    NONE = 0
    OWNED_BY_DML = 1

    @classmethod
    def _missing_(cls, value: object) -> TensorFlags:
        raise DescriptorError("flags", value, f"flags {value!r} is not a DML_TENSOR_FLAGS value; "
                              "valid: 0 (NONE), 1 (OWNED_BY_DML)")


# bit width of each DirectML data type
_BITWIDTH: dict[int, int] = {
    1: 32, 2: 16, 3: 32, 4: 16, 5: 8, 6: 32, 7: 16, 8: 8, 9: 64, 10: 64, 11: 64, 12: 4, 13: 4,
}

_NUMPY: dict[int, str] = {
    1: "float32", 2: "float16", 3: "uint32", 4: "uint16", 5: "uint8", 6: "int32", 7: "int16",
    8: "int8", 9: "float64", 10: "uint64", 11: "int64",
}
_NUMPY_DTYPES: dict[int, np.dtype[Any]] = {value: np.dtype(name) for value, name in _NUMPY.items()}
_FROM_NUMPY_DTYPES: dict[np.dtype[Any], int] = {dt: value for value, dt in _NUMPY_DTYPES.items()}

# ONNX's TensorProto.DataType codes (onnx.proto; fixed by the ONNX standard), so this module
# needs no onnx import
ONNX_ELEMENT_TYPE_NAMES: dict[int, str] = {
    0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64",
    8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64", 14: "COMPLEX64",
    15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2",
    20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1", 24: "FLOAT8E8M0", 25: "UINT2",
    26: "INT2", 27: "FLOAT6E2M3", 28: "FLOAT6E3M2",
}
_ONNX_BOOL = 9

# ONNX TensorProto element type -> DML data type, as the DML EP maps them (BOOL is stored as UINT8).
_FROM_ONNX: dict[int, int] = {
    1: 1, 10: 2, 12: 3, 4: 4, 2: 5, 6: 6, 5: 7, 3: 8, 11: 9, 13: 10, 7: 11, _ONNX_BOOL: 5, 21: 12, 22: 13,
}
_TO_ONNX: dict[int, int] = {dml: onnx_t for onnx_t, dml in _FROM_ONNX.items() if onnx_t != _ONNX_BOOL}

# extra spellings accepted by DataType.from_name, beyond the member names in any case
_ALIASES: dict[str, str] = {
    "float": "FLOAT32", "half": "FLOAT16", "double": "FLOAT64", "bool": "UINT8",
    "f32": "FLOAT32", "f16": "FLOAT16", "f64": "FLOAT64", "u8": "UINT8", "i8": "INT8",
    "u16": "UINT16", "i16": "INT16", "u32": "UINT32", "i32": "INT32", "u64": "UINT64",
    "i64": "INT64",
}


class DataType(enum.IntEnum, metaclass=_IntegerEnumType):
    """DML_TENSOR_DATA_TYPE, with DirectML's numeric values.

    >>> DataType.FLOAT16.bitwidth, DataType.from_name("float16") is DataType.FLOAT16
    (16, True)
    """

    UNKNOWN = 0
    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11
    UINT4 = 12
    INT4 = 13

    @classmethod
    def _missing_(cls, value: object) -> DataType:
        raise DataTypeError(
            f"{value!r} is not a DML_TENSOR_DATA_TYPE value; valid: "
            f"{ {t.name: t.value for t in cls} }")

    @property
    def bitwidth(self) -> int:
        """Bits per element (4 for UINT4/INT4)."""
        try:
            return _BITWIDTH[self]  # an IntEnum member hashes as its value
        except KeyError:
            raise DataTypeError(f"data type {self.name} has no element size") from None

    @property
    def dml_name(self) -> str:
        """The C++ enumerator, e.g. ``DML_TENSOR_DATA_TYPE_FLOAT32``."""
        return f"DML_TENSOR_DATA_TYPE_{self.name}"

    @property
    def is_float(self) -> bool:
        """FLOAT16, FLOAT32 or FLOAT64."""
        return self in (DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64)

    @property
    def is_64bit_integer(self) -> bool:
        """INT64 or UINT64 (the types the DML EP may emulate with 32-bit views)."""
        return self in (DataType.INT64, DataType.UINT64)

    @classmethod
    def known(cls) -> tuple[DataType, ...]:
        """Every data type except UNKNOWN."""
        return tuple(t for t in cls if t is not cls.UNKNOWN)

    # ---- numpy ---------------------------------------------------------------------------
    def to_numpy(self) -> np.dtype[Any]:
        """The numpy dtype of one element. UINT4/INT4 have none and raise DataTypeError."""
        try:
            return _NUMPY_DTYPES[self]
        except KeyError:
            why = (" (numpy has no 4-bit integers: pack and unpack hold UINT4 values as uint8, INT4 as "
                   "int8)" if self in (DataType.UINT4, DataType.INT4) else "")
            raise DataTypeError(
                f"data type {self.name} has no numpy dtype{why}; numpy-backed types: "
                f"{[DataType(v).name for v in _NUMPY]}") from None

    @classmethod
    def from_numpy(cls, dtype: Any) -> DataType:
        """The DataType of a numpy dtype (``np.bool_`` maps to UINT8 as in the DML EP).

        >>> DataType.from_numpy(np.float16), DataType.from_numpy(np.bool_)
        (<DataType.FLOAT16: 2>, <DataType.UINT8: 5>)
        """
        if dtype is None:  # np.dtype(None) would silently mean float64
            raise DataTypeError("data type None is not a numpy dtype; give e.g. np.float32 or 'float32'")
        try:
            dt = np.dtype(dtype)
        except (TypeError, ValueError) as e:
            raise DataTypeError(f"{dtype!r} is not a numpy dtype") from e
        if dt == np.bool_:
            return cls.UINT8
        dt = dt.newbyteorder("=") if dt.byteorder not in "=|" else dt
        known = _FROM_NUMPY_DTYPES.get(dt)
        if known is not None:
            return cls(known)
        for value, name in _NUMPY.items():
            if np.dtype(name) == dt:
                return cls(value)
        raise DataTypeError(
            f"numpy dtype {dt.name!r} has no DirectML data type; valid: "
            f"{sorted(_NUMPY.values())} and bool")

    # ---- ONNX ----------------------------------------------------------------------------
    @classmethod
    def from_onnx(cls, elem_type: int) -> DataType:
        """The DataType for an ONNX ``TensorProto`` element type, as the DML EP maps it.

        >>> DataType.from_onnx(9), DataType.from_onnx(11)  # TensorProto.BOOL, TensorProto.DOUBLE
        (<DataType.UINT8: 5>, <DataType.FLOAT64: 9>)
        """
        if isinstance(elem_type, bool) or not isinstance(elem_type, (int, np.integer)):
            raise DataTypeError(f"ONNX element type {elem_type!r} is not an integer TensorProto code")
        try:
            return cls(_FROM_ONNX[int(elem_type)])
        except KeyError:
            onnx_name = ONNX_ELEMENT_TYPE_NAMES.get(int(elem_type), str(elem_type))
            valid = sorted(ONNX_ELEMENT_TYPE_NAMES[t] for t in _FROM_ONNX)
            raise DataTypeError(
                f"ONNX element type {onnx_name} ({int(elem_type)}) has no DirectML data type; "
                f"valid: {valid}") from None

    def to_onnx(self) -> int:
        """The ONNX ``TensorProto`` element type (UINT8 for UINT8, never BOOL)."""
        try:
            return _TO_ONNX[self.value]
        except KeyError:
            raise DataTypeError(f"data type {self.name} has no ONNX element type") from None

    # ---- names ---------------------------------------------------------------------------
    @classmethod
    def from_name(cls, name: str) -> DataType:
        """Parse ``"float16"``, ``"FLOAT16"``, ``"DML_TENSOR_DATA_TYPE_FLOAT16"``, ``"half"``..."""
        if not isinstance(name, str):
            raise DataTypeError(f"data type name must be a string, got {name!r}")
        key = name.strip()
        if key.upper().startswith("DML_TENSOR_DATA_TYPE_"):
            key = key[len("DML_TENSOR_DATA_TYPE_"):]
        key = _ALIASES.get(key.lower(), key).upper()
        if key in cls.__members__ and key != "UNKNOWN":
            return cls[key]
        valid = [t.name.lower() for t in cls.known()]
        raise DataTypeError(f"unknown data type {name!r} (no DirectML equivalent); valid: {valid}")

    @classmethod
    def coerce(cls, value: DataType | str | np.dtype[Any] | type) -> DataType:
        """Accept a DataType, a name, or a numpy dtype (not a bare int: DML and ONNX codes differ)."""
        if isinstance(value, DataType):
            if value is DataType.UNKNOWN:
                raise DataTypeError("data type UNKNOWN cannot describe a tensor")
            return value
        if isinstance(value, str):
            return cls.from_name(value)
        if isinstance(value, bool) or value is None:
            raise DataTypeError(f"data type {value!r} is not a data type; valid: "
                                f"{[t.name.lower() for t in cls.known()]}")
        if isinstance(value, (int, np.integer)):
            raise DataTypeError(
                f"data type {value!r} is a bare integer; use DataType({value}) for a DirectML "
                f"code or DataType.from_onnx({value}) for an ONNX one")
        return cls.from_numpy(value)
