"""A tensor written twice (two nodes, or a node and a graph input) makes no valid ONNX graph:
ONNX Runtime refuses such a model ("Duplicate definition of name"), and so does extract, where
it read the second writer as another layout node."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from ort_layouts import ModelError, extract


def _model(nodes: list[onnx.NodeProto], initializers: list[onnx.TensorProto] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("nodes", "named"), [
    ([helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0], name="a"),
      helper.make_node("Identity", ["x"], ["t"], name="b"), helper.make_node("Identity", ["t"], ["y"])],
     "tensor 't' is written by node a and by node b"),
    ([helper.make_node("Transpose", ["x"], ["x"], perm=[1, 0], name="a"),
      helper.make_node("Identity", ["x"], ["y"])],
     "tensor 'x' is written by a graph input and by node a"),
], ids=["two-nodes", "a-node-and-an-input"])
def test_a_tensor_written_twice_is_refused_as_onnx_runtime_refuses_it(
        nodes: list[onnx.NodeProto], named: str) -> None:
    model = _model(nodes)
    with pytest.raises(Exception, match="Duplicate definition of name"):
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(ModelError, match=named):
        extract(model)


def test_an_input_with_an_initializer_of_its_name_is_one_tensor() -> None:
    """An initializer may give a graph input its default: that is no second writer."""
    pads = helper.make_tensor("p", TensorProto.INT64, [4], [1, 0, 0, 0])
    model = _model([helper.make_node("Pad", ["x", "p"], ["y"])], [pads])
    model.graph.input.append(helper.make_tensor_value_info("p", TensorProto.INT64, [4]))
    (pad,) = extract(model)
    assert pad.output_shape == (3, 3)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert session.run(None, {"x": np.zeros((2, 3), np.float32)})[0].shape == (3, 3)
