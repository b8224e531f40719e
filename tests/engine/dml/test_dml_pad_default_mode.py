"""A Pad node without a ``mode`` attribute pads with the constant on DirectML, as ONNX defines.

``DmlOperatorPadding.cpp`` reads a missing mode as reflect
(``GetOptionalAttribute<std::string>(AttrName::Mode, AttrValue::Reflect)``), but ONNX Runtime
fills in each attribute a node leaves out with its schema's default when it resolves the graph
(``VerifyNodeAndOpMatch`` in ``onnxruntime/core/graph/graph.cc``), so the kernel is given
"constant". The cases the library builds always write the mode; a model's node need not, and
this runs such nodes, bare, on the real DirectML stack. Expected outputs are numpy's
``np.pad`` (mode "constant"), compared byte for byte.

Skipped where the DirectML stack is not set up; ``ORT_LAYOUTS_REQUIRE_DML=1`` makes that a
failure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts.engine.dml.stack import DmlStack
from ort_layouts.engine.providers import DML, ProviderConfig, make_session
from ort_layouts.frontends.cli import main

_PADS = [0, 2, 1, 1]  # [x0_begin, x1_begin, x0_end, x1_end]


def _pad_without_mode(opset: int) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 6])
    if opset < 11:
        node = helper.make_node("Pad", ["x"], ["y"], pads=_PADS)
        initializers = []
    else:
        node = helper.make_node("Pad", ["x", "pads"], ["y"])
        initializers = [helper.make_tensor("pads", TensorProto.INT64, [4], _PADS)]
    graph = helper.make_graph([node], "g", [x], [y], initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    assert not any(a.name == "mode" for a in model.graph.node[0].attribute)
    return model


@pytest.mark.parametrize("opset", [10, 11, 18])
def test_a_pad_without_mode_pads_the_constant_on_directml(dml_stack: DmlStack, opset: int) -> None:
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    expected = np.pad(x, [(0, 1), (2, 1)], mode="constant")  # zeros: no constant given
    reflected = np.pad(x, [(0, 1), (2, 1)], mode="reflect")  # what a reflect default would give
    assert expected.tobytes() != reflected.tobytes()
    session = make_session(_pad_without_mode(opset), ProviderConfig(DML))
    try:
        (actual,) = session.run(None, {"x": x})
    finally:
        if hasattr(session, "release"):
            session.release()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert actual.tobytes() == expected.tobytes(), actual


def test_a_model_s_pad_without_mode_is_validated_as_a_constant_pad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], dml_stack: DmlStack) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(_pad_without_mode(13), model)
    assert main(["validate", "--model", str(model), "--provider", "dml", "--progress", "none",
                 "--report", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    (line,) = (tmp_path / "r" / "results.jsonl").read_text().splitlines()
    result = json.loads(line)
    assert result["status"] == "pass", result
    assert result["case"].get("mode", "constant") == "constant"
    assert result["descriptors"]["mode"] == "CONSTANT", result["descriptors"]
