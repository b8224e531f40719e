"""Every DirectML operator desc refuses what is no operator: a from_dict of anything but its own
dict, a constructor or from_onnx given something that is no descriptor, list or shape. Each
raises the library's typed error (never a bare KeyError, TypeError or AttributeError) and the
message names the bad value and what is valid."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from ort_layouts import (
    BufferTensorDesc,
    DataTypeError,
    DepthToSpaceOp,
    DescriptorError,
    IdentityOp,
    JoinOp,
    OrtLayoutsError,
    PaddingOp,
    ShapeError,
    Slice1Op,
    SpaceToDepthOp,
    SplitOp,
    TileOp,
)

F32_2x3 = BufferTensorDesc("float32", (2, 3))

# one valid dict of each operator, written out by hand from the DirectML desc's fields
GOOD: dict[str, tuple[type[Any], dict[str, Any]]] = {
    "identity": (IdentityOp, {"operator": "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
                              "input": {"data_type": "FLOAT32", "sizes": [2, 3]},
                              "output": {"data_type": "FLOAT32", "sizes": [2, 3]}}),
    "padding": (PaddingOp, {"operator": "DML_OPERATOR_PADDING1",
                            "input": {"data_type": "FLOAT32", "sizes": [2, 3]},
                            "output": {"data_type": "FLOAT32", "sizes": [4, 5]},
                            "start_padding": [1, 1], "end_padding": [1, 1], "mode": "CONSTANT",
                            "padding_value_hex": "0000803f"}),
    "slice": (Slice1Op, {"operator": "DML_OPERATOR_SLICE1",
                         "input": {"data_type": "FLOAT32", "sizes": [2, 3]},
                         "output": {"data_type": "FLOAT32", "sizes": [2, 2]}, "dimension_count": 2,
                         "input_window_offsets": [0, 1], "input_window_sizes": [2, 2],
                         "input_window_strides": [1, 1]}),
    "tile": (TileOp, {"operator": "DML_OPERATOR_TILE",
                      "input": {"data_type": "FLOAT32", "sizes": [2, 3]},
                      "output": {"data_type": "FLOAT32", "sizes": [4, 3]}, "repeats_count": 2,
                      "repeats": [2, 1]}),
    "depth-to-space": (DepthToSpaceOp, {"operator": "DML_OPERATOR_DEPTH_TO_SPACE1",
                                        "input": {"data_type": "FLOAT32", "sizes": [1, 4, 1, 1]},
                                        "output": {"data_type": "FLOAT32", "sizes": [1, 1, 2, 2]},
                                        "block_size": 2, "order": "DEPTH_COLUMN_ROW"}),
    "space-to-depth": (SpaceToDepthOp, {"operator": "DML_OPERATOR_SPACE_TO_DEPTH",
                                        "input": {"data_type": "FLOAT32", "sizes": [1, 1, 2, 2]},
                                        "output": {"data_type": "FLOAT32", "sizes": [1, 4, 1, 1]},
                                        "block_size": 2}),
    "join": (JoinOp, {"operator": "DML_OPERATOR_JOIN", "InputCount": 2,
                      "InputTensors": [{"data_type": "FLOAT32", "sizes": [2, 3]},
                                       {"data_type": "FLOAT32", "sizes": [2, 1]}],
                      "OutputTensor": {"data_type": "FLOAT32", "sizes": [2, 4]}, "Axis": 1,
                      "onnx_inputs": [0, 1]}),
    "split": (SplitOp, {"operator": "DML_OPERATOR_SPLIT", "OutputCount": 2,
                        "InputTensor": {"data_type": "FLOAT32", "sizes": [2, 4]},
                        "OutputTensors": [{"data_type": "FLOAT32", "sizes": [2, 3]},
                                          {"data_type": "FLOAT32", "sizes": [2, 1]}], "Axis": 1}),
}
# what is no dict of an operator, nor a field of one
JUNK: list[Any] = [None, 5, "x", [], 1.5, True, b"ab", object()]
JUNK_IDS = ["None", "int", "str", "list", "float", "bool", "bytes", "object"]
TENSOR_KEYS = ("input", "output", "InputTensor", "OutputTensor")


def _raises_typed(make: Callable[[], Any], *needles: str) -> OrtLayoutsError:
    with pytest.raises(OrtLayoutsError) as info:
        make()
    assert isinstance(info.value, ValueError)
    for needle in needles:
        assert needle in str(info.value), str(info.value)
    return info.value


@pytest.mark.parametrize("name", list(GOOD))
def test_the_dicts_are_the_operators_own(name: str) -> None:
    cls, data = GOOD[name]
    op = cls.from_dict(data)
    assert set(op.to_dict()) == set(data)
    assert cls.from_dict(op.to_dict()) == op


@pytest.mark.parametrize("junk", JUNK, ids=JUNK_IDS)
@pytest.mark.parametrize("name", list(GOOD))
def test_from_dict_of_no_dict(name: str, junk: Any) -> None:
    cls, data = GOOD[name]
    error = _raises_typed(lambda: cls.from_dict(junk), f"a {data['operator']} dict is needed")
    assert isinstance(error, DescriptorError) and error.rule == "dict-keys"


@pytest.mark.parametrize("name", list(GOOD))
def test_from_dict_names_each_missing_field(name: str) -> None:
    cls, data = GOOD[name]
    required = []
    for key in data:
        if key == "operator":
            continue
        rest = {k: v for k, v in data.items() if k != key}
        try:
            cls.from_dict(rest)  # an optional field (a count, the constant, onnx_inputs)
        except OrtLayoutsError as e:
            assert isinstance(e, DescriptorError), repr(e)
            assert f"lacks [{key!r}]" in str(e) and "valid keys" in str(e), str(e)
            required.append(key)
    assert {"input", "InputTensor", "InputTensors"} & set(required)


@pytest.mark.parametrize("name", list(GOOD))
def test_from_dict_refuses_an_unknown_key(name: str) -> None:
    cls, data = GOOD[name]
    _raises_typed(lambda: cls.from_dict({**data, "start_paddings": [1, 1]}),
                  "unknown keys ['start_paddings']", "valid keys")


@pytest.mark.parametrize("name", list(GOOD))
def test_from_dict_refuses_another_operator(name: str) -> None:
    cls, data = GOOD[name]
    error = _raises_typed(lambda: cls.from_dict({**data, "operator": "DML_OPERATOR_GEMM"}),
                          "'DML_OPERATOR_GEMM'", data["operator"])
    assert isinstance(error, DescriptorError) and error.rule == "operator"


@pytest.mark.parametrize("junk", JUNK, ids=JUNK_IDS)
@pytest.mark.parametrize("name", list(GOOD))
def test_from_dict_refuses_a_field_of_the_wrong_type(name: str, junk: Any) -> None:
    cls, data = GOOD[name]
    for key in data:
        if key == "operator" or (key == "onnx_inputs" and junk is None):  # None: no onnx_inputs
            continue
        needle = "" if junk == [] else f"{junk!r}"[:7]  # [] of tensors: the count then differs
        _raises_typed(partial(cls.from_dict, {**data, key: junk}), needle)


@pytest.mark.parametrize("junk", [None, "x", [], 1.5, b"ab", object()],
                         ids=["None", "str", "list", "float", "bytes", "object"])  # 5 is UINT8's value
@pytest.mark.parametrize("name", list(GOOD))
def test_from_dict_refuses_a_bad_field_inside_a_descriptor(name: str, junk: Any) -> None:
    cls, data = GOOD[name]
    for key in TENSOR_KEYS:
        if key in data:
            for field in ("data_type", "sizes"):
                error = _raises_typed(partial(cls.from_dict, {**data, key: {**data[key], field: junk}}),
                                      f"{data['operator']} {key}: ")
                assert isinstance(error, (DescriptorError, DataTypeError))
    for key in ("InputTensors", "OutputTensors"):
        if key in data:
            _raises_typed(partial(cls.from_dict, {**data, key: [junk, *data[key][1:]]}),
                          f"{data['operator']} {key}[0]: ")


def test_from_dict_messages_name_the_field_and_the_choices() -> None:
    _, pad = GOOD["padding"]
    _raises_typed(lambda: PaddingOp.from_dict({**pad, "mode": "mirror"}),
                  "mode 'mirror' is no PaddingMode name; valid: ['CONSTANT', 'EDGE', 'REFLECTION', "
                  "'SYMMETRIC', 'WRAP']")
    _raises_typed(lambda: PaddingOp.from_dict({**pad, "padding_value_hex": "zz"}),
                  "padding_value_hex 'zz' is no hexadecimal bytes")
    _raises_typed(lambda: PaddingOp.from_dict({**pad, "start_padding": 1}),
                  "start_padding 1 is not a sequence of integers")
    _, d2s = GOOD["depth-to-space"]
    _raises_typed(lambda: DepthToSpaceOp.from_dict({**d2s, "order": 1}),
                  "order 1 is no DepthSpaceOrder name; valid: ['DEPTH_COLUMN_ROW', 'COLUMN_ROW_DEPTH']")
    _, join = GOOD["join"]
    _raises_typed(lambda: JoinOp.from_dict({**join, "Axis": "1"}), "Axis '1' is a str; valid: an integer")
    _raises_typed(lambda: JoinOp.from_dict({**join, "InputCount": 3}), "InputCount 3 differs from the 2")
    _, tile = GOOD["tile"]
    _raises_typed(lambda: TileOp.from_dict({**tile, "repeats_count": 3}), "repeats_count 3 differs")
    _, sl = GOOD["slice"]
    _raises_typed(lambda: Slice1Op.from_dict({**sl, "dimension_count": 4}), "dimension_count 4 differs")


# ---- constructors and from_onnx -------------------------------------------------------------
def _ops() -> dict[str, Any]:
    return {name: cls.from_dict(data) for name, (cls, data) in GOOD.items()}


@pytest.mark.parametrize("junk", [*JUNK, {}], ids=[*JUNK_IDS, "dict"])
@pytest.mark.parametrize("name", list(GOOD))
def test_constructor_refuses_what_is_no_descriptor(name: str, junk: Any) -> None:
    op = _ops()[name]
    for field in ("input", "output"):
        if hasattr(op, field) and field in {f.name for f in dataclasses.fields(op)}:
            error = _raises_typed(partial(dataclasses.replace, op, **{field: junk}),
                                  f"{type(op).__name__} {field} ", "valid: a BufferTensorDesc")
            assert isinstance(error, DescriptorError) and error.rule == "tensor"
    for field in ("inputs", "outputs"):
        if field in {f.name for f in dataclasses.fields(op)}:
            if junk != []:  # no tensor at all: JOIN / SPLIT need one
                _raises_typed(partial(dataclasses.replace, op, **{field: junk}),
                              f"{type(op).__name__} {field}")
            _raises_typed(partial(dataclasses.replace, op, **{field: (junk,)}),
                          f"{type(op).__name__} {field}[0] ", "valid: a BufferTensorDesc")


@pytest.mark.parametrize("junk", ["1", None, 1.5, [1]], ids=["str", "None", "float", "list"])
def test_join_and_split_axis_must_be_an_integer(junk: Any) -> None:
    ops = _ops()
    for name in ("join", "split"):
        _raises_typed(partial(dataclasses.replace, ops[name], axis=junk), "axis", "valid: an integer")


def test_padding_value_bytes_must_be_bytes() -> None:
    _raises_typed(lambda: dataclasses.replace(_ops()["padding"], padding_value_bytes="0000803f"),
                  "padding_value_bytes '0000803f' is a str; valid: bytes")


@pytest.mark.parametrize("junk", [None, "x", 1.5, True, b"ab", object()],
                         ids=["None", "str", "float", "bool", "bytes", "object"])
def test_from_onnx_refuses_what_is_no_descriptor_or_shape(junk: Any) -> None:
    _raises_typed(lambda: PaddingOp.from_onnx(junk, [1, 1]), "Pad input", "valid: a BufferTensorDesc")
    _raises_typed(lambda: Slice1Op.from_onnx(junk, [0], [1]), "Slice input", "valid: a BufferTensorDesc")
    for make in (lambda: DepthToSpaceOp.from_onnx("float32", junk, 2),
                 lambda: SpaceToDepthOp.from_onnx("float32", junk, 2),
                 lambda: DepthToSpaceOp.from_onnx("float32", [junk] * 4, 2),
                 lambda: JoinOp.from_onnx("float32", junk, 0),
                 lambda: JoinOp.from_onnx("float32", [junk], 0),
                 lambda: JoinOp.from_onnx("float32", [(2, 3)], 0, min_dimension_count=junk),
                 lambda: SplitOp.from_onnx("float32", junk, [2, 2], 0),
                 lambda: SplitOp.from_onnx("float32", (4, 3), junk, 0),
                 lambda: SplitOp.from_onnx("float32", (4, 3), [2, 2], 0, min_dimension_count=junk)):
        error = _raises_typed(make, "valid: ")
        assert isinstance(error, ShapeError)


def test_from_onnx_shape_messages() -> None:
    _raises_typed(lambda: DepthToSpaceOp.from_onnx("float32", (1, 8, "2", 2), 2),
                  "DepthToSpace input shape (1, 8, '2', 2) holds '2', which is not an integer")
    _raises_typed(lambda: SplitOp.from_onnx("float32", (4, 3), None, 0),
                  "Split parts None is not a sequence of integers")
    _raises_typed(lambda: JoinOp.from_onnx("float32", [(2, 3)], 0, min_dimension_count=9),
                  "min_dimension_count 9 is not valid; valid: an integer 1..8")
    _raises_typed(lambda: JoinOp.from_onnx("float32", None, 0),
                  "Concat input shapes None is a NoneType; valid: a list of shapes")
    assert JoinOp.from_onnx("float32", [(2, 3)], 0, min_dimension_count=2).output.sizes == (2, 3)


def test_identity_dict_notes_are_read_back() -> None:
    from ort_layouts.operators.identity import identity_dict

    data = identity_dict(F32_2x3, F32_2x3, kernel="DmlOperatorCopy", alias=True, note="aliases its input")
    assert IdentityOp.from_dict(data) == IdentityOp(F32_2x3, F32_2x3)
    _raises_typed(lambda: identity_dict(F32_2x3, F32_2x3, remark="x"),
                  "identity notes ['remark'] are not known; valid: ['kernel', 'alias', 'note']")
