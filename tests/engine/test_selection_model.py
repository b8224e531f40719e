"""A model's selection: select_cases reads the model (through ``model_cases``) once, whatever
the value kinds asked, and keeps each kind's cases in turn, the kinds in VALUE_KINDS' order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_layouts.engine.selection import select_cases
from ort_layouts.models.extract import model_cases
from ort_layouts.operators.case import Case


def _model(path: Path) -> Path:
    """y = Pad(Transpose(x)): two cases a kind."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], name="to_nhwc", perm=[0, 2, 3, 1]),
             helper.make_node("Pad", ["t", "pads"], ["y"], name="pad")]
    graph = helper.make_graph(
        nodes, "kinds", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 7, 3])],
        [numpy_helper.from_array(np.array([0, 0, 1, 0, 0, 0, 1, 0], np.int64), "pads")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return path


OPS = ("Transpose", "Pad")


def test_the_model_is_read_once_for_every_value_kind(tmp_path: Path) -> None:
    model = _model(tmp_path / "m.onnx")
    calls: list[Sequence[str]] = []

    def counting(model: str | Path, *, dims: Mapping[str, int] | None = None,
                 values: Sequence[str] = ("random",), seed: int = 0) -> list[Case]:
        calls.append(values)
        return model_cases(model, dims=dims, values=values, seed=seed)

    cases = select_cases(model=model, values=["special", "random", "iota"], seed=3, model_cases=counting)
    kinds = ("random", "special", "iota")  # VALUE_KINDS' order, whatever the order asked
    assert calls == [kinds]
    assert [(c.values, c.op, c.seed) for c in cases] == [(k, op, 3) for k in kinds for op in OPS]
    assert cases == [c for k in kinds for c in model_cases(model, values=k, seed=3)]


def test_the_order_and_repeats_of_the_value_kinds_make_no_other_cases(tmp_path: Path) -> None:
    model = _model(tmp_path / "m.onnx")
    asked = select_cases(model=model, values=["iota", "random", "random"], model_cases=model_cases)
    assert [(c.values, c.op) for c in asked] == [("random", "Transpose"), ("random", "Pad"),
                                                 ("iota", "Transpose"), ("iota", "Pad")]
    assert asked == select_cases(model=model, values=["random", "iota"], model_cases=model_cases)


def test_without_values_a_model_makes_its_random_cases(tmp_path: Path) -> None:
    model = _model(tmp_path / "m.onnx")
    assert [c.values for c in select_cases(model=model, model_cases=model_cases, ops=["Pad"])] == ["random"]
