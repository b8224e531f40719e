"""extract's reading of a Pad's pads and constant_value inputs that ONNX Runtime fails or refuses
(a crop past a dimension, a constant of several values or of another type), and of a 4-bit
constant: flagged, with no case, where ONNX Runtime itself fails; described where it runs."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_layouts import extract, model_cases
from ort_layouts.operators.expected import expected_outputs


def _pad_model(pads: list[int], constant: np.ndarray | onnx.TensorProto | None = None,
               elem: int = TensorProto.INT32, opset: int = 13) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.array(pads, np.int64), "p")]
    inputs = ["x", "p"]
    if constant is not None:
        tensor = (constant if isinstance(constant, onnx.TensorProto)
                  else numpy_helper.from_array(constant, "v"))
        tensor.name = "v"
        inits.append(tensor)
        inputs.append("v")
    node = helper.make_node("Pad", inputs, ["y"], mode="constant")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, (3, 4))],
                              [helper.make_tensor_value_info("y", elem, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _ort_run(model: onnx.ModelProto) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": np.arange(12, dtype=np.int32).reshape(3, 4)})
    return np.asarray(y)


def test_pads_that_crop_an_axis_past_its_size_are_a_shape_flag_with_no_output_shape_nor_case() -> None:
    model = _pad_model([-1, 2, 3, -7])  # axis 1: 4 + 2 - 7 = -1
    with pytest.raises(Exception, match="Size"):  # ONNX Runtime fails the node
        _ort_run(model)
    (op,) = extract(model)
    assert op.output_shape is None  # ONNX's inference said (5, -1)
    assert any(f.startswith("shape: Pad pads [-1, 2, 3, -7] crop axis 1 of the input [3, 4] past its size")
               for f in op.flags), op.flags
    assert model_cases(model) == []


def test_a_node_after_a_crop_past_a_dimension_reads_that_dimension_as_unknown() -> None:
    """ONNX's inference gives the crop's output a size of -1, which the next node read as its
    input shape ((5, -1), described with a -1 stride) where only the crop itself dropped it."""
    model = _pad_model([-1, 2, 3, -7])
    graph = model.graph
    graph.node[0].output[0] = "cropped"
    graph.node.append(helper.make_node("Transpose", ["cropped"], ["y"], perm=[1, 0]))
    pad, transpose = extract(model)
    assert pad.output_shape is None
    assert transpose.input_shape is None and transpose.output_shape is None
    assert not any("-1" in flag for flag in transpose.flags), transpose.flags  # no size of -1 described
    assert model_cases(model) == []


@pytest.mark.parametrize("constant", [np.array([], np.int32), np.array([5, 9], np.int32)],
                         ids=["empty", "two-values"])
def test_a_constant_value_of_other_than_one_value_is_flagged_and_makes_no_case(constant: np.ndarray) -> None:
    model = _pad_model([1, 0, 0, 1], constant)
    with pytest.raises(Exception, match="size 1"):  # pad.cc: "Value tensor should be a 1D tensor of size 1"
        _ort_run(model)
    (op,) = extract(model)
    assert any(f.startswith(f"input: Pad input 2 (constant_value) 'v' holds {constant.size} values")
               for f in op.flags), op.flags
    assert model_cases(model) == []


def test_a_constant_value_of_another_type_than_the_data_is_flagged_and_makes_no_case() -> None:
    model = _pad_model([1, 0, 0, 1], np.array(2.5, np.float32))
    with pytest.raises(Exception, match="T"):  # ONNX Runtime refuses the model: T bound to two types
        _ort_run(model)
    (op,) = extract(model)
    said = "input: Pad input 2 (constant_value) 'v' is float32 and input 0 (data) 'x' is int32"
    assert any(f.startswith(said) for f in op.flags), op.flags
    assert model_cases(model) == []  # it was a case padding with 2


@pytest.mark.parametrize("constant", [np.array(5, np.int32), np.array([5], np.int32)], ids=["scalar", "1-d"])
def test_a_constant_value_of_one_value_makes_a_case_that_pads_as_onnx_runtime_does(
        constant: np.ndarray) -> None:
    model = _pad_model([1, 0, 0, 1], constant)
    (op,) = extract(model)
    assert not any(f.startswith(("input:", "shape:")) for f in op.flags), op.flags
    (case,) = model_cases(model)
    assert case.pad_value_hex == "05000000"
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    (expected,) = expected_outputs(case, x)
    assert np.asarray(expected).tobytes() == _ort_run(model).tobytes()


@pytest.mark.parametrize("elem, value, nibble", [
    (TensorProto.INT4, -3, "0d"), (TensorProto.UINT4, 13, "0d"), (TensorProto.INT4, 7, "07"),
], ids=["int4", "uint4", "int4-7"])
def test_a_4_bit_constant_value_is_read_as_its_nibble(elem: int, value: int, nibble: str) -> None:
    """extract raised DataTypeError ("INT4 has no numpy dtype") for the whole model."""
    model = _pad_model([1, 0, 0, 1], helper.make_tensor("v", elem, [], [value]), elem=elem, opset=21)
    (op,) = extract(model)
    assert op.params["value_hex"] == nibble
    assert not any(f.startswith("shape:") for f in op.flags), op.flags  # PaddingOp took the value too
    assert op.output_shape == (4, 5)
    (case,) = model_cases(model)
    assert case.pad_value_hex == nibble
