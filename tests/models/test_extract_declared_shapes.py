"""Shapes a model declares for tensors inside its graph (``value_info``) are hints: a stale one
gives way to inference, as in ONNX Runtime, which infers and runs the model with the inferred
shape; one that inference alone cannot give (after a node it has no schema for) is kept."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from ort_layouts import extract


def _model(declared: list[int], *, custom: bool = False) -> onnx.ModelProto:
    """x [2, 3] -> Transpose perm [1, 0] (or, with ``custom``, an op of an unknown domain) -> t,
    declared ``declared`` -> Pad pads [1, 0, 0, 0] -> y."""
    first = (helper.make_node("Scramble", ["x"], ["t"], domain="custom.layout") if custom
             else helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]))
    graph = helper.make_graph(
        [first, helper.make_node("Pad", ["t", "p"], ["y"], mode="constant")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("p", TensorProto.INT64, [4], [1, 0, 0, 0])],
        value_info=[helper.make_tensor_value_info("t", TensorProto.FLOAT, declared)])
    imports = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("custom.layout", 1)] if custom else [])
    return helper.make_model(graph, opset_imports=imports)


def test_a_stale_declared_shape_gives_way_to_inference() -> None:
    """t is really [3, 2] (declared [6, 1]): the Pad reads [3, 2] and makes [4, 2], the shape
    ONNX Runtime's run gives."""
    model = _model([6, 1])
    transpose, pad = extract(model)
    assert (transpose.output_shape, pad.input_shape, pad.output_shape) == ((3, 2), (3, 2), (4, 2))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert session.run(None, {"x": np.zeros((2, 3), np.float32)})[0].shape == (4, 2)


def test_a_declared_shape_that_inference_cannot_give_is_kept() -> None:
    """After an op of an unknown domain inference knows nothing of t: its declared [6, 1] is what
    the Pad reads."""
    (pad,) = extract(_model([6, 1], custom=True))
    assert (pad.input_shape, pad.output_shape) == ((6, 1), (7, 1))
