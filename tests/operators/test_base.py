"""What every operator module shares: 4-bit cases are descriptors and reference values, and no
DirectML data-movement operator takes them (DirectML's feature level history: UINT4 and INT4
came with feature level 6_3 for QUANTIZE and DEQUANTIZE alone)."""

from __future__ import annotations

import numpy as np
import pytest

from ort_layouts._errors import NotExpressibleError
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator, expected_output, expected_outputs
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.reference.buffers import pack, unpack
from ort_layouts.reference.execute import execute_all, output_descs

FIELDS = [
    ("Transpose", (2, 3), {"perm": (1, 0)}),
    ("Expand", (2, 1), {"target_shape": (2, 3)}),
    ("Pad", (2, 3), {"pads": (1, 0, 0, 2), "pad_value_hex": "0e"}),
    ("Slice", (2, 5), {"starts": (1,), "ends": (4,), "axes": (1,)}),
    ("Concat", (2, 3), {"axis": 1, "parts": (1, 2)}),
    ("Split", (2, 3), {"axis": 1, "parts": (2, 1)}),
    ("Tile", (2, 3), {"repeats": (2, 1)}),
    ("DepthToSpace", (1, 4, 1, 2), {"blocksize": 2}),
    ("Reshape", (2, 3), {"target_shape": (3, 2)}),
]
IDS = [f[0] for f in FIELDS]


def _values(dtype: DataType, shape: tuple[int, ...]) -> np.ndarray:
    """Every nibble value the type holds, as unpack gives them: INT4 -8..7 in int8, UINT4 0..15
    in uint8."""
    low = -8 if dtype is DataType.INT4 else 0
    flat = low + np.arange(int(np.prod(shape))) % 16
    return flat.astype(np.int8 if dtype is DataType.INT4 else np.uint8).reshape(shape)


@pytest.mark.parametrize("dtype", [DataType.INT4, DataType.UINT4], ids=["int4", "uint4"])
@pytest.mark.parametrize(("op", "shape", "fields"), FIELDS, ids=IDS)
def test_no_data_movement_operator_takes_4_bit_data(dtype: DataType, op: str, shape: tuple[int, ...],
                                                   fields: dict[str, object]) -> None:
    case = Case(op, dtype, shape, **fields)  # type: ignore[arg-type]
    reason = operator_for_type(op).inexpressible_reason(case)
    assert reason == (f"DirectML takes {dtype.name} tensors only in DML_OPERATOR_QUANTIZE and "
                      f"DML_OPERATOR_DEQUANTIZE (feature level 6_3), in no data-movement operator: the DML "
                      f"EP cannot run this {op}")
    whole_bytes = Case(op, "int8", shape, **fields)  # type: ignore[arg-type]
    assert operator_for_type(op).inexpressible_reason(whole_bytes) == ""


@pytest.mark.parametrize("dtype", [DataType.INT4, DataType.UINT4], ids=["int4", "uint4"])
@pytest.mark.parametrize(("op", "shape", "fields"), [f for f in FIELDS if f[0] != "Slice"],
                         ids=[i for i in IDS if i != "Slice"])
def test_the_numpy_reading_of_4_bit_data_is_what_its_descriptors_move(
        dtype: DataType, op: str, shape: tuple[int, ...], fields: dict[str, object]) -> None:
    """Two ways that share nothing: numpy on unpacked values, and the executor moving the packed
    nibbles through the 4-bit descriptors of the operator the DML EP would build."""
    case = Case(op, dtype, shape, **fields)  # type: ignore[arg-type]
    x = _values(dtype, shape)
    operator = operator_for_type(op)
    want = expected_outputs(case, x)
    dml = dml_operator(case)
    feeds = operator.dml_inputs(case, operator.input_feeds(case, x))
    raws = execute_all(dml, [pack(BufferTensorDesc(dtype, f.shape or (1,)), f) for f in feeds])  # packed
    got = [unpack(d, raw).reshape(w.shape) for d, raw, w in zip(output_descs(dml), raws, want, strict=True)]
    assert all(g.dtype == w.dtype and np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def test_a_4_bit_slice_has_no_slice1() -> None:
    """Slice builds no operator for a case DirectML cannot express; numpy slices it."""
    case = Case("Slice", "uint4", (2, 5), starts=(1,), ends=(4,), axes=(1,))
    with pytest.raises(NotExpressibleError, match="DirectML takes UINT4 tensors only in DML_OPERATOR_QUANT"):
        dml_operator(case)
    assert expected_output(case, _values(DataType.UINT4, (2, 5))).tolist() == [[1, 2, 3], [6, 7, 8]]


def test_a_4_bit_transpose_and_pad_worked_by_hand() -> None:
    x = np.array([[-8, -1, 0], [1, 6, 7]], np.int8)
    case = Case("Transpose", "int4", (2, 3), perm=(1, 0))
    assert expected_output(case, x).tolist() == [[-8, 1], [-1, 6], [0, 7]]
    case = Case("Pad", "int4", (2, 3), pads=(0, 1, 0, 0), pad_value_hex="0e")  # 0xE: -2 in 4 bits
    assert expected_output(case, x).tolist() == [[-2, -8, -1, 0], [-2, 1, 6, 7]]
    case = Case("Pad", "uint4", (2, 3), pads=(0, 1, 0, 0), pad_value_hex="0e")
    assert expected_output(case, x.astype(np.uint8) & 15).tolist() == [[14, 8, 15, 0], [14, 1, 6, 7]]
