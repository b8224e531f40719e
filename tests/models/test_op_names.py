"""A model's extraction and coverage refuse an unknown op type with the registry's one message,
naming the value and the op types there are, before any work (the suite, the selection and a
case: tests/operators/test_registry.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import pytest

from ort_layouts._errors import ShapeError
from ort_layouts.engine.graphs import build_model
from ort_layouts.models.extract import coverage_of, extract, layout_nodes_in_functions, model_coverage
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import check_op_type


def _registry_refusal(name: str) -> str:
    """The registry's one message for an unknown op (tests/operators/test_registry.py pins it)."""
    with pytest.raises(ShapeError) as raised:
        check_op_type(name)
    return str(raised.value)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "t.onnx"
    onnx.save(build_model([Case("Transpose", "float32", (2, 3), perm=(1, 0))], opset=18), str(path))
    return path


@pytest.mark.parametrize("call", [
    lambda m: extract(m, ops=["Transpose", "Conv"]),
    lambda m: model_coverage(m, ops=["Transpose", "Conv"]),
    lambda m: coverage_of([], ops=["Transpose", "Conv"]),
    lambda m: layout_nodes_in_functions(m, ops=["Conv"]),
], ids=["extract", "model_coverage", "coverage_of", "layout_nodes_in_functions"])
def test_a_model_s_ops_refuse_an_unknown_op(call: Callable[[Path], Any], model: Path) -> None:
    with pytest.raises(ShapeError) as raised:
        call(model)
    assert str(raised.value) == _registry_refusal("Conv")


@pytest.mark.parametrize("call", [
    lambda m: extract(m, ops=["transpose"]),
    lambda m: model_coverage(m, ops=["transpose"]),
], ids=["extract", "model_coverage"])
def test_a_model_s_ops_refuse_another_spelling_instead_of_finding_nothing(
        call: Callable[[Path], Any], model: Path) -> None:
    with pytest.raises(ShapeError, match=r"^op 'transpose' is not a layout op here; valid: \['Transpose'"):
        call(model)


def test_a_model_s_ops_as_one_str_are_refused_not_read_letter_by_letter(model: Path) -> None:
    with pytest.raises(ShapeError, match=r"^ops 'Transpose' is one str, not a list of op names"):
        extract(model, ops="Transpose")  # type: ignore[arg-type]


def test_known_ops_still_read_the_model(model: Path) -> None:
    assert [op.op_type for op in extract(model, ops=("Transpose",))] == ["Transpose"]
    (coverage,) = model_coverage(model, ops=["Transpose", "Pad"])
    assert (coverage.op_type, coverage.nodes, coverage.with_case) == ("Transpose", 1, 1)
