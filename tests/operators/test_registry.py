"""The registry's one check of an op name: every caller that takes an op type refuses an unknown
one with the same message, naming the value and the op types there are."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts._errors import ModelError, ShapeError
from ort_layouts.operators.registry import check_op_type, operator_for_type

# the op types of ARCHITECTURE.md's operator modules, in the order of the standard suite
EVERY_OP = ["Transpose", "Expand", "Pad", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
            "DepthToSpace", "SpaceToDepth", "Slice", "Tile", "Concat", "Split"]
NOT_LAYOUT = f"op 'Conv' is not a layout op here; valid: {EVERY_OP}"
NO_CASES = f"op 'Conv' is not a layout op that makes cases here; valid: {EVERY_OP}"


@pytest.mark.parametrize(("name", "options", "expected"), [
    ("Transpose", {}, "Transpose"),
    ("SpaceToDepth", {"cases": True}, "SpaceToDepth"),
    ("transpose", {"any_case": True}, "Transpose"),
    ("DEPTHTOSPACE", {"any_case": True, "cases": True}, "DepthToSpace"),
], ids=["exact", "cases", "any-case", "any-case-cases"])
def test_a_known_name_is_spelt_as_the_registry_spells_it(name: str, options: dict[str, bool],
                                                       expected: str) -> None:
    assert check_op_type(name, **options) == expected


@pytest.mark.parametrize(("name", "shown"), [("transpose", "'transpose'"), ("Conv", "'Conv'"), (3, "3"),
                                             (None, "None"), (["Pad"], "['Pad']")],
                         ids=["other-case", "unknown", "int", "none", "list"])
def test_another_name_is_refused_naming_it_and_the_valid_ones(name: object, shown: str) -> None:
    with pytest.raises(ShapeError) as raised:
        check_op_type(name)
    assert str(raised.value) == f"op {shown} is not a layout op here; valid: {EVERY_OP}"


def _model(path: Path) -> Path:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2])
    graph = helper.make_graph([helper.make_node("Transpose", ["X"], ["Y"], perm=[1, 0])], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    return path


def test_every_caller_refuses_an_unknown_op_with_the_one_message(tmp_path: Path) -> None:
    from ort_layouts.engine.selection import resolve_ops
    from ort_layouts.engine.suite import standard_suite
    from ort_layouts.models.extract import extract
    from ort_layouts.operators.case import Case

    with pytest.raises(ShapeError) as raised:
        operator_for_type("Conv")
    assert str(raised.value) == NOT_LAYOUT
    with pytest.raises(ModelError) as model_error:
        extract(_model(tmp_path / "t.onnx"), ops=["Transpose", "Conv"])
    assert str(model_error.value) == NOT_LAYOUT
    for refuse in (lambda: Case("Conv", "float32", (2, 3)), lambda: resolve_ops(["pad", "Conv"]),
                   lambda: standard_suite(ops=["Pad", "Conv"])):
        with pytest.raises(ShapeError) as raised:
            refuse()
        assert str(raised.value) == NO_CASES


@pytest.mark.parametrize(("argv", "line"), [
    (["describe", "--shape", "2,3", "--op", "Conv"], f"argument --op: {NO_CASES}"),
    (["extract", "MODEL", "--ops", "transpose,Conv"], f"argument --ops: {NOT_LAYOUT}"),
], ids=["describe-op", "extract-ops"])
def test_the_command_line_refuses_an_unknown_op_with_the_one_message(
        argv: list[str], line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main

    argv = [str(_model(tmp_path / "t.onnx")) if a == "MODEL" else a for a in argv]
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ort-layouts: error: {line}"), lines
