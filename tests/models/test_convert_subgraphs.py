"""convert_layout() around subgraphs that make a value named like a converted output, and
check_conversion() on outputs that are no numeric tensor: strings, sequences, optionals, maps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from ort_layouts import ModelError
from ort_layouts.frontends.cli import main
from ort_layouts.models.convert import check_conversion, convert_layout

SHAPE = [1, 2, 3, 4]


def _run_cpu(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> list[object]:
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    return list(ort.InferenceSession(source, providers=["CPUExecutionProvider"]).run(None, feeds))


def _nhwc(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           initializers: list[onnx.TensorProto] | None = None, opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers or [])
    imports = [helper.make_opsetid("", opset), helper.make_opsetid("ai.onnx.ml", 3)]
    return helper.make_model(graph, opset_imports=imports, ir_version=8)


def _float(name: str, shape: list[int] | None = SHAPE) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# ---- a subgraph that makes a value named like the converted output ---------------------------
def _branch_model() -> onnx.ModelProto:
    """y = If(c): then Neg(x) -> y, else Abs(x) -> y; each branch makes a value y of its own and
    returns it, the If's output being y too; x comes from the outer scope."""
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "then", [], [_float("y")])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], "else", [], [_float("y")])
    model = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                   [_float("x"), helper.make_tensor_value_info("c", TensorProto.BOOL, [])], [_float("y")])
    onnx.checker.check_model(model, full_check=True)  # a branch may make the name of the If's output
    return model


def _loop_model(where: str) -> onnx.ModelProto:
    """y = Loop(2 times, x): the body doubles its loop-carried value v, into y = 4 x.

    - ``"body"``: the body's Add makes a value y of its own, the body output named like the
      Loop's output.
    - ``"branch"``: the body's If (on its condition, always true) returns its then branch's own
      y = Add(v, v); the body's output is the If's, t.
    """
    carried = [helper.make_tensor_value_info("i", TensorProto.INT64, []),
               helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), _float("v")]
    if where == "body":
        body_nodes = [helper.make_node("Add", ["v", "v"], ["y"])]
        out = "y"
    else:
        then_g = helper.make_graph([helper.make_node("Add", ["v", "v"], ["y"])], "then", [], [_float("y")])
        else_g = helper.make_graph([helper.make_node("Neg", ["v"], ["e"])], "else", [], [_float("e")])
        body_nodes = [helper.make_node("If", ["c_in"], ["t"], then_branch=then_g, else_branch=else_g)]
        out = "t"
    c_out = helper.make_tensor_value_info("c_out", TensorProto.BOOL, [])
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]), *body_nodes], "body",
                             carried, [c_out, _float(out)])
    model = _model([helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)], [_float("x")], [_float("y")],
                   [numpy_helper.from_array(np.array(2, np.int64), "n")])
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("names", [None, ["y"]])
def test_a_branch_that_makes_the_converted_output_keeps_its_own_value(names: list[str] | None) -> None:
    model = _branch_model()
    converted = convert_layout(model, to="NHWC", names=names)
    onnx.checker.check_model(converted, full_check=True)
    for attribute in converted.graph.node[-2].attribute:  # the If, before the output's Transpose
        assert [n.output[0] for n in attribute.g.node] == [o.name for o in attribute.g.output] == ["y"]
    x = np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32)
    x_in = _nhwc(x) if names is None else x
    for cond, expected in ((True, -x), (False, np.abs(x))):
        (y,) = _run_cpu(converted, {"x": x_in, "c": np.array(cond)})  # ONNX Runtime loads it
        assert isinstance(y, np.ndarray) and y.tobytes() == _nhwc(expected).tobytes()
    assert check_conversion(model, converted)


@pytest.mark.parametrize("where", ["body", "branch"])
def test_a_loop_body_that_makes_the_converted_output_keeps_its_own_value(where: str) -> None:
    model = _loop_model(where)
    converted = convert_layout(model, to="NHWC")
    onnx.checker.check_model(converted, full_check=True)
    x = np.random.default_rng(6).standard_normal(SHAPE).astype(np.float32)
    (y,) = _run_cpu(converted, {"x": _nhwc(x)})
    assert isinstance(y, np.ndarray) and y.tobytes() == _nhwc(x * 4).tobytes()
    assert check_conversion(model, converted)


def test_command_line_converts_a_branch_model_that_onnx_runtime_loads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(_branch_model(), src)
    assert main(["convert", str(src), str(out), "--name", "y"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}")
    x = np.arange(24, dtype=np.float32).reshape(SHAPE) - 12
    (y,) = _run_cpu(out, {"x": x, "c": np.array(True)})
    assert isinstance(y, np.ndarray) and y.tobytes() == _nhwc(-x).tobytes()


# ---- outputs that are no numeric tensor ------------------------------------------------------
STRING_SHAPE = [1, 3, 4, 5]


def _string_model(constant: np.ndarray) -> onnx.ModelProto:
    """s = Cast(constant, to=STRING), u = Cast(x, to=STRING), y = Relu(x); x float [1, 3, 4, 5]."""
    nodes = [helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(constant, "k")),
             helper.make_node("Cast", ["k"], ["s"], to=TensorProto.STRING),
             helper.make_node("Cast", ["x"], ["u"], to=TensorProto.STRING),
             helper.make_node("Relu", ["x"], ["y"])]
    strings = [helper.make_tensor_value_info(n, TensorProto.STRING, STRING_SHAPE) for n in ("s", "u")]
    return _model(nodes, [_float("x", STRING_SHAPE)], [*strings, _float("y", STRING_SHAPE)])


def _constant() -> np.ndarray:
    return np.arange(60, dtype=np.float32).reshape(STRING_SHAPE) / 8


@pytest.mark.parametrize("names", [None, ["x", "y"]])
def test_check_compares_string_outputs_element_by_element(names: list[str] | None) -> None:
    model = _string_model(_constant())
    converted = convert_layout(model, names=names)
    result = check_conversion(model, converted)
    assert result.passed
    s, u, y = result.outputs
    s_shape = [1, 4, 5, 3] if names is None else STRING_SHAPE
    assert (s.name, s.dtype, list(s.shape)) == ("s", "string", s_shape)
    assert (s.element_count, s.mismatch_count) == (60, 0)
    assert (u.dtype, y.dtype, list(y.shape)) == ("string", "float32", [1, 4, 5, 3])
    # ONNX Runtime's strings of the converted model: the constant's, transposed where converted
    x = np.zeros(STRING_SHAPE, np.float32)
    got = _run_cpu(converted, {"x": _nhwc(x)})[0]
    (want,) = _run_cpu(_model([helper.make_node("Cast", ["k"], ["s"], to=TensorProto.STRING)],
                              [_float("k", STRING_SHAPE)],
                              [helper.make_tensor_value_info("s", TensorProto.STRING, STRING_SHAPE)]),
                       {"k": _constant()})
    assert isinstance(got, np.ndarray) and isinstance(want, np.ndarray)
    assert got.tolist() == (_nhwc(want) if names is None else want).tolist()


def test_check_finds_the_string_that_differs() -> None:
    changed = _constant()
    changed[0, 1, 2, 3] = -1
    result = check_conversion(_string_model(_constant()), _string_model(changed))
    assert not result.passed
    s = result.outputs[0]
    assert (s.name, s.element_count, s.mismatch_count, s.first_mismatch_index) == ("s", 60, 1, (0, 1, 2, 3))
    assert all(result.outputs[1:])
    assert "s string [1, 3, 4, 5]: 1 of 60 elements differ, first at [0, 1, 2, 3]" in result.summary()


def test_command_line_check_with_a_string_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(_string_model(_constant()), src)
    assert main(["convert", str(src), str(out), "--check", "--name", "x", "--name", "y"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"wrote {out}: NHWC at ['x', 'y']", "s string [1, 3, 4, 5]: identical",
                     "u string [1, 3, 4, 5]: identical", "y float32 [1, 4, 5, 3]: identical",
                     "conversion check: passed (bit-identical)"]
    assert out.is_file()


def _sequence_model(items: list[np.ndarray]) -> onnx.ModelProto:
    """q = SequenceConstruct(x, the constants ``items``), y = Relu(x); x float [1, 2, 3, 4]."""
    names = [f"k{i}" for i in range(len(items))]
    nodes = [helper.make_node("Constant", [], [n], value=numpy_helper.from_array(a, n))
             for n, a in zip(names, items, strict=True)]
    nodes += [helper.make_node("SequenceConstruct", ["x", *names], ["q"]),
              helper.make_node("Relu", ["x"], ["y"])]
    q = helper.make_tensor_sequence_value_info("q", TensorProto.FLOAT, None)
    return _model(nodes, [_float("x")], [q, _float("y")])


def _item() -> np.ndarray:
    return np.arange(24, dtype=np.float32).reshape(SHAPE)


def test_check_compares_sequence_outputs_item_by_item() -> None:
    model = _sequence_model([_item()])
    converted = convert_layout(model)
    result = check_conversion(model, converted)
    assert result.passed
    q = result.outputs[0]
    assert (q.name, q.dtype, q.shape) == ("q", "sequence<float32>", (2,))
    assert (q.element_count, q.mismatch_count) == (48, 0)
    x = np.random.default_rng(2).standard_normal(SHAPE).astype(np.float32)
    seq, _ = _run_cpu(converted, {"x": _nhwc(x)})  # the sequence holds the graph's own NCHW x
    assert isinstance(seq, list) and [a.tobytes() for a in seq] == [x.tobytes(), _item().tobytes()]


def test_check_finds_the_sequence_item_that_differs() -> None:
    changed = _item()
    changed[0, 1, 0, 2] = np.float32(np.nan)
    result = check_conversion(_sequence_model([_item()]), _sequence_model([changed]))
    q = result.outputs[0]
    assert not result.passed and (q.mismatch_count, q.first_mismatch_index) == (1, (1, 0, 1, 0, 2))
    shorter = check_conversion(_sequence_model([_item()]), _sequence_model([]))
    q = shorter.outputs[0]
    assert not shorter.passed and q.shape == (1,) and q.message == "expected a sequence of 2 tensors, got 1"
    assert shorter.outputs[1]


def test_command_line_check_with_a_sequence_output(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(_sequence_model([_item()]), src)
    assert main(["convert", str(src), str(out), "--check"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "q sequence<float32> [2]: identical", "y float32 [1, 3, 4, 2]: identical",
        "conversion check: passed (bit-identical)"]


def test_check_takes_an_optional_output_without_a_value() -> None:
    tensor = helper.make_tensor_type_proto(TensorProto.FLOAT, SHAPE)
    nodes = [helper.make_node("Optional", [], ["o"], type=tensor), helper.make_node("Relu", ["x"], ["y"])]
    o = helper.make_value_info("o", helper.make_optional_type_proto(tensor))
    model = _model(nodes, [_float("x")], [o, _float("y")], opset=18)
    assert _run_cpu(model, {"x": _item()})[0] is None  # ONNX Runtime gives None for it
    result = check_conversion(model, convert_layout(model))
    assert result.passed and result.outputs[0].element_count == 0


def test_a_map_output_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """z = ZipMap(Flatten(x)), a sequence of maps, which the check does not compare."""
    nodes = [helper.make_node("Flatten", ["x"], ["f"], axis=3),
             helper.make_node("ZipMap", ["f"], ["z"], domain="ai.onnx.ml", classlabels_int64s=[1, 2, 3, 4]),
             helper.make_node("Relu", ["x"], ["y"])]
    z = helper.make_value_info("z", helper.make_sequence_type_proto(helper.make_map_type_proto(
        TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, None))))
    model = _model(nodes, [_float("x")], [z, _float("y")])
    (zipped, _) = _run_cpu(model, {"x": _item()})
    assert isinstance(zipped, list) and isinstance(zipped[0], dict)  # ONNX Runtime gives dicts
    with pytest.raises(ModelError, match=r"output 'z': item 0 of the sequence is a map \(a dict\), which the "
                                         r"check cannot compare; valid: tensors"):
        check_conversion(model, convert_layout(model))
    src, out = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(model, src)
    assert main(["convert", str(src), str(out), "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "output 'z'" in err[0] and not out.exists()
