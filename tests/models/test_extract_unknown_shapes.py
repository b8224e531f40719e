"""A layout node whose input shape ONNX's shape inference cannot compute because a node it has
no schema for (a com.microsoft operator of an ONNX Runtime-optimized model) made it: the flag
names that node and says how to give the shape; no "--dim" pin or "depends on data" is offered,
since neither is true. Given the shape (value_info), the node makes its case."""

from __future__ import annotations

import numpy as np
import onnx
from numpy.lib.stride_tricks import as_strided
from onnx import TensorProto, helper

from ort_layouts.models.extract import extract


def _model(nodes, x_shape, *, value_info=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              value_info=list(value_info))
    return helper.make_model(graph, ir_version=8, opset_imports=[
        helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)])


def _gelu(output="g", name=""):
    return helper.make_node("Gelu", ["x"], [output], domain="com.microsoft", name=name)


def _dynamic(op) -> str:
    (flag,) = [f for f in op.flags if f.startswith("dynamic")]
    return flag


def test_a_contrib_op_s_output_names_the_node_and_asks_for_its_shape() -> None:
    model = _model([_gelu(), helper.make_node("Transpose", ["g"], ["y"], perm=[1, 0])], [2, 3])
    (op,) = extract(model)
    assert op.input_shape is None and op.to_case() is None
    flag = _dynamic(op)
    assert "the shape of 'g' is unknown" in flag
    assert "node 'Gelu_0' (com.microsoft Gelu), which ONNX's shape inference has no schema for" in flag
    assert "value_info" in flag and "symbolic_shape_infer" in flag
    # the model's input is static, but no data decides the shape: neither old advice is given
    assert "--dim" not in flag and "depends on data" not in flag


def test_the_node_is_named_through_the_nodes_after_it_and_under_a_dim_param() -> None:
    nodes = [_gelu(name="fused_gelu"), helper.make_node("Relu", ["g"], ["r"]),
             helper.make_node("Transpose", ["r"], ["y"], perm=[1, 0])]
    for shape, dims in (([2, 3], None), (["N", 3], {"N": 4})):
        (op,) = extract(_model(nodes, shape), dims=dims)
        flag = _dynamic(op)
        assert "the shape of 'r' is unknown" in flag and "node 'fused_gelu' (com.microsoft Gelu)" in flag
        assert "--dim" not in flag


def test_a_subgraph_s_node_names_the_outer_node() -> None:
    branch = helper.make_graph([helper.make_node("Transpose", ["g"], ["t"], perm=[1, 0])], "then",
                               [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Relu", ["g"], ["e"])], "else",
                              [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    model = _model([_gelu(), helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=other)],
                   [2, 3])
    model.graph.input.append(cond)
    (op,) = extract(model)
    assert op.node_name.endswith("then_branch/Transpose_0")
    assert "node 'Gelu_0' (com.microsoft Gelu)" in _dynamic(op)


def test_a_shape_inference_cannot_compute_from_data_keeps_its_advice() -> None:
    """NonZero is an ONNX operator: its length depends on the data, and no node is blamed."""
    model = _model([helper.make_node("NonZero", ["x"], ["nz"]),
                    helper.make_node("Transpose", ["nz"], ["y"], perm=[1, 0])], [2, 6], opset=13)
    flag = _dynamic(extract(model)[0])
    assert "no schema" not in flag and "no --dim can pin it" in flag


def test_a_contrib_op_whose_shape_the_model_gives_makes_its_case() -> None:
    vi = helper.make_tensor_value_info("g", TensorProto.FLOAT, [2, 3])
    downstream = [helper.make_node("Transpose", ["g"], ["t"], perm=[1, 0]),
                  helper.make_node("NonZero", ["t"], ["nz"]),
                  helper.make_node("Transpose", ["nz"], ["y"], perm=[1, 0])]
    first, second = extract(_model([_gelu(), *downstream], [2, 3], value_info=[vi]))
    assert (first.input_shape, first.output_shape, first.flags) == ((2, 3), (3, 2), ())
    s = np.arange(6, dtype=np.float32)
    desc = first.descriptors["input"]
    read = as_strided(s, shape=desc.sizes, strides=[4 * st for st in desc.effective_strides])
    assert read.tobytes() == np.ascontiguousarray(s.reshape(2, 3).T).tobytes()
    # the NonZero after a known shape is data's doing, not the contrib op's
    assert "no schema" not in _dynamic(second)


def test_a_layout_node_s_computed_shape_reaches_the_layout_node_after_it() -> None:
    """A Reshape in an If branch whose target is the outer graph's constant: ONNX's shape
    inference gives its output rank only, the Reshape's description computes it, and the
    Transpose after it is described with it, as ONNX Runtime runs the model."""
    import onnxruntime as ort
    from onnx import numpy_helper

    then = helper.make_graph([helper.make_node("Reshape", ["x", "shp"], ["r"]),
                              helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Relu", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    model = _model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], [2, 3])
    model.graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    model.graph.initializer.append(numpy_helper.from_array(np.array([3, 2], dtype=np.int64), "shp"))
    inferred = onnx.shape_inference.infer_shapes(model)
    told = [v for v in inferred.graph.node[0].attribute[0].g.value_info if v.name == "r"]
    assert all(not d.HasField("dim_value") for v in told for d in v.type.tensor_type.shape.dim)
    reshape, transpose = extract(model)
    assert reshape.output_shape == (3, 2)
    assert (transpose.input_shape, transpose.output_shape, transpose.flags) == ((3, 2), (2, 3), ())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x, "c": np.array(True)})
    assert y.shape == transpose.output_shape
    desc = transpose.descriptors["input"]
    read = as_strided(x.ravel(), shape=desc.sizes, strides=[4 * st for st in desc.effective_strides])
    assert read.tobytes() == y.tobytes()
