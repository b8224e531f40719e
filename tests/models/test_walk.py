"""The walk over subgraphs that every model reader goes through: an If inside a Loop's body is
found by each of them (extract, the external parameters it reads, the layout nodes of
model-local functions, convert's renaming and its list of external data files)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from numpy.lib.stride_tricks import as_strided
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import set_external_data

from ort_layouts.models.convert import convert_layout, external_data_files
from ort_layouts.models.extract import extract, layout_nodes_in_functions
from ort_layouts.models.walk import walk

X_SHAPE = (1, 2, 3, 4)


def _vi(name: str, elem: int, shape: tuple[int, ...] | list[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _ints(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _loop(shape_then: onnx.TensorProto) -> onnx.NodeProto:
    """Loop 'repeat' (trip count 'n', condition 'go'), whose body holds If 'choose' on the body's
    condition: then Reshape(x, shape_then) ('flat_then'), else Reshape(Transpose(x)) ('perm_else',
    'flat_else'); 'x' is the outer graph's, two levels up. Its scan output Z is [n, 24]."""
    then_g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape_then"], ["r_then"], name="flat_then")],
        "then", [], [_vi("r_then", TensorProto.FLOAT, [24])], [shape_then])
    else_g = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], name="perm_else", perm=[0, 2, 3, 1]),
         helper.make_node("Reshape", ["t", "shape_else"], ["r_else"], name="flat_else")],
        "else", [], [_vi("r_else", TensorProto.FLOAT, [24])], [_ints("shape_else", [24])])
    body = helper.make_graph(
        [helper.make_node("And", ["c_in", "c_in"], ["c_out"], name="keep"),
         helper.make_node("If", ["c_in"], ["y"], name="choose", then_branch=then_g, else_branch=else_g)],
        "body", [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, [])],
        [_vi("c_out", TensorProto.BOOL, []), _vi("y", TensorProto.FLOAT, [24])])
    return helper.make_node("Loop", ["n", "go"], ["Z"], name="repeat", body=body)


# make_node stores attributes by name: If's else_branch comes before its then_branch
NESTED = ["repeat/body/choose/else_branch/perm_else", "repeat/body/choose/else_branch/flat_else",
          "repeat/body/choose/then_branch/flat_then"]


def _nested_model(folder: Path, *, external: bool = True) -> Path:
    """Z = Loop(once: If(true: Reshape(x, [24]))); with ``external`` the then branch's shape [24]
    is stored in shape.bin beside the model (which ONNX Runtime cannot run: its shape inference
    of a subgraph does not read external data)."""
    shape_then = _ints("shape_then", [24])
    if external:
        (folder / "shape.bin").write_bytes(shape_then.raw_data)
        set_external_data(shape_then, "shape.bin", offset=0, length=len(shape_then.raw_data))
        shape_then.ClearField("raw_data")
    graph = helper.make_graph([_loop(shape_then)], "nested", [_vi("x", TensorProto.FLOAT, X_SHAPE)],
                              [_vi("Z", TensorProto.FLOAT, [1, 24])],
                              [numpy_helper.from_array(np.array(1, np.int64), "n"),
                               numpy_helper.from_array(np.array(True), "go")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = folder / "nested.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    (z,) = session.run(None, {"x": x})
    return np.asarray(z)


def test_walk_order_is_graph_order_with_each_subgraph_after_its_node(tmp_path: Path) -> None:
    model = onnx.load(_nested_model(tmp_path), load_external_data=False)
    steps = [(s.path, s.node.name if s.node is not None else None, s.outer) for s in walk(model.graph)]
    body, then, other = "repeat/body/", "repeat/body/choose/then_branch/", "repeat/body/choose/else_branch/"
    assert steps == [("", None, None), ("", "repeat", None),
                     (body, None, ""), (body, "keep", ""), (body, "choose", ""),
                     (other, None, body), (other, "perm_else", body), (other, "flat_else", body),
                     (then, None, body), (then, "flat_then", body)]


def test_extract_finds_the_if_inside_the_loop_and_reads_its_external_shape(tmp_path: Path) -> None:
    path = _nested_model(tmp_path)
    ops = extract(path)
    assert [op.node_name for op in ops] == NESTED
    perm_else, flat_else, flat_then = ops
    # the then branch's shape, [24], was read from shape.bin: found through two levels of subgraphs
    assert (flat_then.input_shape, flat_then.output_shape, flat_then.flags) == (X_SHAPE, (24,), ())
    assert flat_else.output_shape == (24,) and flat_else.flags == ()
    assert (perm_else.input_shape, perm_else.output_shape) == (X_SHAPE, (1, 3, 4, 2))
    iota = np.arange(24, dtype=np.float32)  # the outer x, seen two levels down: numpy's transpose of it
    desc = perm_else.descriptors["input"]
    read = as_strided(iota, shape=desc.sizes, strides=[s * 4 for s in desc.effective_strides])
    assert np.array_equal(read, iota.reshape(X_SHAPE).transpose(0, 2, 3, 1))
    # a ModelProto has no folder to read shape.bin from: the nested shape stays unread, and says so
    _, _, flat_then = extract(onnx.load(path, load_external_data=False))
    assert any("stored as external data in 'shape.bin', not loaded" in f for f in flat_then.flags)


def test_function_layout_nodes_inside_an_if_inside_a_loop_are_counted() -> None:
    nodes = [helper.make_node("Constant", [], ["n"], value=numpy_helper.from_array(np.array(1, np.int64))),
             helper.make_node("Constant", [], ["go"], value=numpy_helper.from_array(np.array(True))),
             _loop(_ints("shape_then", [24]))]
    repeat = helper.make_function("local", "Repeat", ["x"], ["Z"], nodes, [helper.make_opsetid("", 17)])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["w"])], "f",
                              [_vi("x", TensorProto.FLOAT, X_SHAPE)], [_vi("w", TensorProto.FLOAT, X_SHAPE)])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    model = helper.make_model(graph, opset_imports=opsets, functions=[repeat], ir_version=10)
    assert layout_nodes_in_functions(model) == 3  # flat_then, perm_else, flat_else
    assert layout_nodes_in_functions(model, ops=["Transpose"]) == 1


def test_external_data_files_lists_a_tensor_of_an_if_inside_a_loop(tmp_path: Path) -> None:
    model = onnx.load(_nested_model(tmp_path), load_external_data=False)
    assert external_data_files(model) == ["shape.bin"]


def test_convert_renames_the_input_inside_an_if_inside_a_loop(tmp_path: Path) -> None:
    path = _nested_model(tmp_path, external=False)
    x = np.random.default_rng(0).standard_normal(X_SHAPE).astype(np.float32)
    expected = x.reshape(1, 24)  # the then branch: x as it is laid out, flattened
    assert _run(path, x).tobytes() == expected.tobytes()
    converted = convert_layout(path)  # x becomes NHWC at the boundary, transposed back for the graph
    inner = [s.node for s in walk(converted.graph) if s.path and s.node is not None]
    assert [(n.name, n.input[0]) for n in inner if n.op_type in ("Transpose", "Reshape")] == [
        ("perm_else", "x__nchw"), ("flat_else", "t"), ("flat_then", "x__nchw")]
    out = tmp_path / "nhwc.onnx"
    out.write_bytes(converted.SerializeToString())
    z = _run(out, np.ascontiguousarray(x.transpose(0, 2, 3, 1)))
    assert z.dtype == np.float32 and z.tobytes() == expected.tobytes()
