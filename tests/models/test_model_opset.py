"""A model's layout nodes make cases at the model's own opset: a run resolves each node to the
version the model does (the DML EP registers kernels for exact since-versions), and an export
writes that opset. A node whose case cannot be built there is flagged ``opset`` and makes none.
"""

from __future__ import annotations

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
