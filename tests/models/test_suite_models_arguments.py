"""write_suite_models checks its opset and IR version as export_test_dir does, with the same
messages, and each case's opset against its operator's, before anything is written: opset 99
and IR 2 were written into models ONNX Runtime cannot load, a str "19" raised a bare TypeError,
and a Pad case at opset 1 left the directory made."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import onnx
import pytest

from ort_layouts import ArgumentError, DataType, ModelError
from ort_layouts.models.testdata import export_test_dir, write_suite_models
from ort_layouts.operators.case import Case

TRANSPOSE = Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0))
PAD = Case("Pad", DataType.FLOAT32, (3, 4), pads=(1, 2, 2, 3))
NEWEST_OPSET = onnx.defs.onnx_opset_version()
NEWEST_IR = onnx.IR_VERSION

BAD = [({"opset": 0}, rf"^opset 0 is not an opset ONNX defines; valid: 1\.\.{NEWEST_OPSET} "),
       ({"opset": NEWEST_OPSET + 1}, rf"^opset {NEWEST_OPSET + 1} is not an opset ONNX defines; "),
       ({"opset": "19"}, r"^opset '19' is a str, not an integer; valid: an opset 1\.\."),
       ({"opset": True}, r"^opset True is a bool, not an integer; "),
       ({"ir_version": 3}, rf"^ir_version 3 is not an IR version these models can have; "
                           rf"valid: 4\.\.{NEWEST_IR} "),
       ({"ir_version": NEWEST_IR + 1}, rf"^ir_version {NEWEST_IR + 1} is not an IR version these models "),
       ({"ir_version": 9.0}, r"^ir_version 9\.0 is a float, not an integer; valid: 4\.\.")]


@pytest.mark.parametrize(("given", "message"), BAD, ids=[repr(given) for given, _ in BAD])
def test_an_opset_or_ir_version_export_refuses_is_refused_alike_before_anything_is_written(
        tmp_path: Path, given: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError, match=message) as suite:
        write_suite_models(tmp_path / "suite", [TRANSPOSE], **given)
    with pytest.raises(ArgumentError) as export:
        export_test_dir([TRANSPOSE], tmp_path / "export", **given)
    assert str(suite.value) == str(export.value)
    assert list(tmp_path.iterdir()) == []


def test_a_case_at_an_opset_its_operator_lacks_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """Pad came with opset 2."""
    refused = (rf"^case {re.escape(PAD.id)}: opset 1 \(the export's\) is before opset 2, the first Pad cases "
               rf"are built at; valid: 2\.\.{NEWEST_OPSET}$")
    with pytest.raises(ModelError, match=refused):
        write_suite_models(tmp_path / "suite", [TRANSPOSE, PAD], opset=1)
    assert list(tmp_path.iterdir()) == []


def test_the_opset_and_ir_version_given_are_written(tmp_path: Path) -> None:
    manifest = write_suite_models(tmp_path / "suite", [TRANSPOSE], opset=13, ir_version=8)
    assert manifest == {"transpose_float32.onnx": [TRANSPOSE.id]}
    model = onnx.load(str(tmp_path / "suite" / "transpose_float32.onnx"))
    assert ([(o.domain, o.version) for o in model.opset_import], model.ir_version) == ([("", 13)], 8)
    document = json.loads((tmp_path / "suite" / "MANIFEST.json").read_text())
    assert (document["opset"], document["ir_version"]) == (13, 8)


def test_cases_given_as_an_iterator_are_all_written(tmp_path: Path) -> None:
    """The opset check read an iterator to its end before the cases were grouped: an empty
    manifest, and no model, came back."""
    manifest = write_suite_models(tmp_path / "suite", iter([TRANSPOSE, PAD]))
    assert manifest == {"pad_float32.onnx": [PAD.id], "transpose_float32.onnx": [TRANSPOSE.id]}
    assert sorted(p.name for p in (tmp_path / "suite").iterdir()) == [
        "MANIFEST.json", "pad_float32.onnx", "transpose_float32.onnx"]


def test_none_is_the_opset_and_ir_version_export_takes_for_none(tmp_path: Path) -> None:
    (directory,) = export_test_dir([TRANSPOSE], tmp_path / "export")
    exported = onnx.load(str(directory / "model.onnx"))
    write_suite_models(tmp_path / "suite", [TRANSPOSE], opset=None, ir_version=None)
    model = onnx.load(str(tmp_path / "suite" / "transpose_float32.onnx"))
    assert (list(model.opset_import), model.ir_version) == (list(exported.opset_import), exported.ir_version)
    document = json.loads((tmp_path / "suite" / "MANIFEST.json").read_text())
    assert (document["opset"], document["ir_version"]) == (exported.opset_import[0].version,
                                                           exported.ir_version)


@pytest.mark.parametrize("item", ["Transpose-float32-2x3-perm1.0-random-s0", None, {"op": "Transpose"}])
def test_an_item_that_is_no_case_is_refused_naming_it_before_anything_is_written(
        tmp_path: Path, item: object) -> None:
    with pytest.raises(ArgumentError, match=r"^cases\[1\] .*Case"):
        write_suite_models(tmp_path / "suite", [TRANSPOSE, item])  # type: ignore[list-item]
    assert not (tmp_path / "suite").exists()
