"""A model's node runs on DirectML at the model's opset: a Transpose of an opset-23 model
resolves to Transpose-23, which the DML EP (ONNX Runtime 1.24.4) registers no kernel for, so
it is unsupported there; the same node of an opset-13 model runs and passes. Built at the run's
own opset, both passed.

Skipped where the DirectML stack is not set up; ``ORT_LAYOUTS_REQUIRE_DML=1`` makes that a
failure."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts.engine.dml.stack import DmlStack
from ort_layouts.frontends.cli import main


@pytest.mark.parametrize(("opset", "status"), [(23, "unsupported"), (13, "pass")])
def test_a_model_s_node_runs_on_directml_at_the_model_s_opset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], dml_stack: DmlStack, opset: int,
        status: str) -> None:
    graph = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2, 3])])
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10), model)
    assert main(["validate", "--model", str(model), "--provider", "dml", "--progress", "none",
                 "--report", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    (line,) = (tmp_path / "r" / "results.jsonl").read_text().splitlines()
    result = json.loads(line)
    assert result["case"]["opset"] == opset and result["status"] == status, result
    if status == "unsupported":
        assert "assigned to the default CPU EP" in result["message"]
