"""An initializer that is also a graph input (IR version >= 4) is only a default, which a caller
may override at run time: extract describes a node from that default and flags the parameter
"overridable-input"; the node still makes its case (from the default), and validate --model and
export --model both say so.

What the default gives is asked of ONNX's reference evaluator; that a caller may feed another
value, of ONNX Runtime itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ort_layouts.frontends.cli import main
from ort_layouts.models.extract import coverage_of, extract, format_coverage, model_cases

ort.set_default_logger_severity(4)

X = np.arange(12, dtype=np.float32).reshape(2, 6)


def _reshape_model(*, listed: bool = True, ir_version: int = 8) -> onnx.ModelProto:
    """y = Reshape(x [2, 6], s), the shape 's' an initializer [3, 4], listed as a graph input
    too with ``listed``."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])]
    if listed:
        inputs.append(helper.make_tensor_value_info("s", TensorProto.INT64, [2]))
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([3, 4], np.int64), "s")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=ir_version)


def _flags(op: Any, tag: str = "overridable-input:") -> list[str]:
    return [f for f in op.flags if f.startswith(tag)]


def test_onnx_runtime_takes_the_default_or_the_value_fed() -> None:
    """The premise: the default runs when nothing is fed, and a value fed replaces it."""
    data = _reshape_model().SerializeToString()
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    assert session.run(None, {"x": X})[0].shape == (3, 4)
    assert session.run(None, {"x": X, "s": np.array([4, 3], np.int64)})[0].shape == (4, 3)


def test_a_parameter_from_an_overridable_initializer_is_flagged_and_described_with_its_default() -> None:
    model = _reshape_model()
    (op,) = extract(model)
    expected = ReferenceEvaluator(model).run(None, {"x": X})[0]
    assert op.output_shape == expected.shape == (3, 4)
    assert op.params["target_shape"] == (3, 4)
    (flag,) = _flags(op)
    assert "shape input 's'" in flag and "[3, 4]" in flag and "default" in flag
    case = op.to_case()
    assert case is not None and case.target_shape == (3, 4)


@pytest.mark.parametrize("listed, ir_version", [(False, 8), (True, 3)], ids=["not-an-input", "ir3"])
def test_a_constant_initializer_is_not_flagged(listed: bool, ir_version: int) -> None:
    """An initializer that is no graph input, or one of a model of IR version 3 (where every
    initializer is listed as an input and stays a constant)."""
    (op,) = extract(_reshape_model(listed=listed, ir_version=ir_version))
    assert not _flags(op) and op.to_case() is not None


def test_a_pad_value_from_an_overridable_initializer_is_flagged() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    v = helper.make_tensor_value_info("v", TensorProto.FLOAT, [])
    graph = helper.make_graph([helper.make_node("Pad", ["x", "p", "v"], ["y"])], "g", [x, v],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "p"),
                               numpy_helper.from_array(np.array(2.5, np.float32), "v")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    (op,) = extract(model)
    (flag,) = _flags(op)
    assert "constant_value input 'v'" in flag and "[2.5]" in flag
    case = op.to_case()
    assert case is not None and case.pad_value_hex == np.float32(2.5).astype("<f4").tobytes().hex()


def test_a_subgraph_sees_the_outer_overridable_initializer() -> None:
    """An If branch reads the outer 's'; the other branch has an 's' of its own, a constant."""
    then_g = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
                               [numpy_helper.from_array(np.array([4, 3], np.int64), "s")])
    outer = _reshape_model()
    outer.graph.ClearField("node")
    outer.graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    outer.graph.node.append(helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                                             else_branch=else_g))
    ops = {op.node_name: op for op in extract(outer)}
    assert _flags(ops["if/then_branch/Reshape_0"]) and not _flags(ops["if/else_branch/Reshape_0"])


def test_coverage_says_which_cases_come_from_a_default() -> None:
    layout = extract(_reshape_model())
    (coverage,) = coverage_of(layout)
    assert (coverage.with_case, coverage.without_case) == (1, ())
    assert [node for node, _ in coverage.from_defaults] == ["r"]
    lines = format_coverage([coverage])
    assert any(line.startswith("  r (Reshape) makes its case from a default: overridable-input:")
               for line in lines)
    assert len(model_cases(_reshape_model())) == 1


def test_validate_and_export_make_the_case_and_say_it_comes_from_a_default(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(_reshape_model(), path)
    assert main(["validate", "--model", str(path), "--provider", "cpu", "--progress", "none"]) == 0
    validated = capsys.readouterr()
    assert "1 passed" in validated.out
    assert "r (Reshape) makes its case from a default: overridable-input: shape input 's'" in validated.err
    out = tmp_path / "exported"
    assert main(["export", "--model", str(path), "--out", str(out)]) == 0
    exported = capsys.readouterr()
    assert "wrote 1 test directories" in exported.out
    assert "r (Reshape) makes its case from a default: overridable-input: shape input 's'" in exported.err
