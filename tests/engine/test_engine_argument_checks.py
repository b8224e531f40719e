"""The engine's entry points beside run_cases refuse what run_cases refuses, up front, with
typed errors that name the value: a model argument that is no model (an empty path selected
the whole suite), cases that are one Case, None items, or a generator (build_model used it up
and built an empty model), an opset that is no integer."""

from __future__ import annotations

from typing import Any

import pytest

from ort_layouts import ArgumentError, Case, DataType, ModelError
from ort_layouts.engine.graphs import build_model
from ort_layouts.engine.selection import select_cases
from ort_layouts.engine.session import ValidationSession
from ort_layouts.models.extract import model_cases

CASES = [Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0)),
         Case("Transpose", DataType.INT8, (4,), perm=(0,))]


@pytest.mark.parametrize(("model", "message"), [
    ("", r"model '' is an empty path; valid: the path of an .onnx file"),
    (0, r"model 0 is an int, not a path; valid: the path of an .onnx file")])
def test_a_model_that_is_no_model_is_refused_not_read_as_the_suite(model: Any, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        select_cases(model=model, model_cases=model_cases)
    with pytest.raises(ModelError, match="needs model_cases"):
        select_cases(model="", model_cases=None)


def test_build_model_reads_a_generator_once_and_builds_every_case() -> None:
    model = build_model(c for c in CASES)  # type: ignore[arg-type]
    assert [n.op_type for n in model.graph.node] == ["Transpose", "Transpose"]
    assert [n.name for n in model.graph.node] == [n.name for n in build_model(CASES).graph.node]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: build_model([None]), r"cases\[0\] None is a NoneType, not a Case"),  # type: ignore[list-item]
    (lambda: build_model(CASES[0]), r"cases is one Case, Transpose-float32-2x3-perm1.0"),  # type: ignore[arg-type]
    (lambda: build_model(CASES, opset="13"), r"opset '13' \(a str\) is no integer >= 1"),  # type: ignore[arg-type]
    (lambda: build_model(CASES, ir_version=0), r"ir_version 0 \(an int\) is no integer >= 1"),
    (lambda: ValidationSession([None], provider="cpu"),  # type: ignore[list-item]
     r"cases\[0\] None is a NoneType, not a Case"),
    (lambda: ValidationSession(CASES[0], provider="cpu"), r"cases is one Case"),  # type: ignore[arg-type]
])
def test_bad_cases_and_opsets_are_argument_errors(call: Any, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        call()
