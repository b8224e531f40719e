"""A model's layout nodes make cases at the model's own opset: a run resolves each node to the
version the model does (the DML EP registers kernels for exact since-versions), and an export
writes that opset. A node whose case cannot be built there is flagged ``opset`` and makes none.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

import ort_layouts as ol
from ort_layouts.engine.result import Status
from ort_layouts.frontends.cli import main


def _model(path: Path, op: str, opset: int, *, attrs: dict[str, Any] | None = None,
           shape_input: list[int] | None = None) -> Path:
    inputs, inits = ["x"], []
    if shape_input is not None:
        inputs.append("s")
        inits.append(helper.make_tensor("s", TensorProto.INT64, [len(shape_input)], shape_input))
    graph = helper.make_graph([helper.make_node(op, inputs, ["y"], **(attrs or {}))], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8), path)
    return path


@pytest.mark.parametrize("opset", [7, 13, 17])
def test_a_node_s_case_is_built_at_the_model_s_opset(tmp_path: Path, opset: int) -> None:
    model = _model(tmp_path / "m.onnx", "Transpose", opset, attrs={"perm": [2, 0, 1]})
    (op,) = ol.extract(model)
    assert op.opset == opset and op.to_dict()["opset"] == opset
    (case,) = ol.model_cases(model)
    assert case.opset == opset and f"-op{opset}-" in case.id
    (result,) = ol.run_cases([case], provider="cpu")
    assert result.status is Status.PASS, result.message


def test_an_export_of_a_model_writes_its_opset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _model(tmp_path / "m.onnx", "Transpose", 13, attrs={"perm": [2, 0, 1]})
    assert main(["export", "--model", str(model), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    (written,) = (tmp_path / "out").glob("*/model.onnx")
    assert [(o.domain, o.version) for o in onnx.load(written).opset_import] == [("", 13)]


def test_a_node_onnx_does_not_define_at_the_model_s_opset_makes_no_case(tmp_path: Path) -> None:
    """Expand came in opset 8: ONNX Runtime refuses a model of opset 7 that holds one. Its case
    used to be built at the run's opset, and passed."""
    model = _model(tmp_path / "m.onnx", "Expand", 7, shape_input=[2, 3, 4])
    (op,) = ol.extract(model)
    assert any(f.startswith("opset: ONNX defines no Expand at opset 7") for f in op.flags), op.flags
    assert ol.model_cases(model) == []
    (coverage,) = ol.model_coverage(model, ops=["Expand"])
    assert coverage.without_case[0][1].startswith("opset: ONNX defines no Expand at opset 7")


def test_a_node_older_than_its_operator_s_cases_makes_no_case_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An opset below the operator's min_opset (the first its cases are built at) is flagged."""
    from ort_layouts.operators.transpose import Transpose

    monkeypatch.setattr(Transpose, "min_opset", 13)
    model = _model(tmp_path / "m.onnx", "Transpose", 7, attrs={"perm": [2, 0, 1]})
    (op,) = ol.extract(model)
    assert "opset: Transpose cases start at opset 13; the model's opset 7 makes no case" in op.flags[0]
    assert ol.model_cases(model) == []


@pytest.mark.parametrize(("op", "opset", "attrs", "shape_input"), [
    ("Unsqueeze", 10, {"axes": [-1]}, None),  # negative axes need opset 11
    ("Flatten", 10, {"axis": -1}, None),
    ("Pad", 18, {"mode": "wrap"}, [0, 1, 1, 0, 1, 1]),  # wrap needs opset 19
    ("Concat", 9, {"axis": -1}, None),  # a negative axis needs opset 11
    ("Split", 9, {"axis": -1}, None),
], ids=["unsqueeze-negative-axes", "flatten-negative-axis", "pad-wrap", "concat-negative-axis",
        "split-negative-axis"])
def test_a_node_whose_case_its_operator_refuses_at_the_model_s_opset_makes_none(
        tmp_path: Path, op: str, opset: int, attrs: dict[str, Any], shape_input: list[int] | None) -> None:
    """The operator's check_case refuses the case at the model's opset (not at the run's): the
    node makes no case, flagged ``opset`` with the operator's reason, which its coverage gives."""
    from ort_layouts.operators.registry import operator_for_type

    model = _model(tmp_path / "m.onnx", op, opset, attrs=attrs, shape_input=shape_input)
    (node,) = ol.extract(model)
    (flag,) = node.flags
    assert node.opset == opset
    assert flag.startswith(f"opset: the model's opset {opset} makes no case of the node: ")
    assert re.search(f"opset.*{opset}|{opset}.*opset", flag.split(": ", 2)[2]), flag
    assert node.to_case() is None and ol.model_cases(model) == []
    (coverage,) = ol.model_coverage(model, ops=[op])
    assert coverage.without_case == ((node.node_name, flag),)
    operator = operator_for_type(op)
    made = dict(values="random", seed=0, origin="model")
    assert operator.case_from_node(node.data_type, node.input_shape, dict(node.params), **made) is not None
    with pytest.raises(ol.ShapeError, match=f"opset.*{opset}|{opset}.*opset"):
        operator.case_from_node(node.data_type, node.input_shape, dict(node.params), **made, opset=opset)


def test_a_node_s_case_is_built_once(tmp_path: Path, cases_built: list[object]) -> None:
    """to_case builds the case at the model's opset directly (the operator's checks see it)."""
    model = _model(tmp_path / "m.onnx", "Transpose", 13, attrs={"perm": [2, 0, 1]})
    (node,) = ol.extract(model)
    assert [c.opset for c in cases_built] == [13]  # extract's check that the opset takes the case
    cases_built.clear()
    case = node.to_case()
    assert case is not None and case.opset == 13 and cases_built == [case]


def test_a_node_of_an_opset_after_the_newest_onnx_defines_makes_no_case_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """onnx made to define up to opset 17: a model of opset 18 was not flagged (onnx's schemas
    resolve any later opset to the newest), and its case was listed, to be refused later by
    build_model and the export."""
    model = _model(tmp_path / "m.onnx", "Transpose", 18, attrs={"perm": [2, 0, 1]})
    monkeypatch.setattr(onnx.defs, "onnx_opset_version", lambda: 17)
    (op,) = ol.extract(model)
    assert ("opset: the model's opset 18 is after opset 17, the newest the installed onnx defines: no case "
            "is built at it") in op.flags
    assert ol.model_cases(model) == []
