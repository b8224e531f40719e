"""case_opsets: the one range of opsets a case of an op is built at, from its operator's first
(min_opset) to the newest the installed onnx defines, which every check of a case's opset takes:
build_model took an opset above the newest (a model ONNX Runtime then refused to load), where an
export refused it."""

from __future__ import annotations

import re
from pathlib import Path

import onnx
import pytest

from ort_layouts._errors import ModelError, ShapeError
from ort_layouts.engine.graphs import build_model
from ort_layouts.models.testdata import export_test_dir
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import case_opsets, opset_refusal
from ort_layouts.operators.transpose import Transpose

NEWEST = onnx.defs.onnx_opset_version()
TRANSPOSE = Case("Transpose", "float32", (2, 3), perm=(1, 0))


@pytest.mark.parametrize(("op", "first"), [
    ("Transpose", 1), ("Pad", 2), ("Concat", 4), ("Tile", 6), ("Expand", 8), ("Split", 2),
])
def test_the_range_runs_from_the_operators_first_opset_to_the_newest_onnx_defines(op: str,
                                                                                   first: int) -> None:
    """Expand came with opset 8, Tile took its repeats as an input from 6, Concat's axis became
    required at 4, and Pad's and Split's cases are built from their version 2."""
    assert case_opsets(op) == range(first, NEWEST + 1)


def test_an_unknown_op_is_refused() -> None:
    with pytest.raises(ShapeError, match=r"^op 'Conv' is not a layout op here; valid: \["):
        case_opsets("Conv")


def test_the_refusal_names_the_opset_whose_it_is_and_the_valid_ones() -> None:
    """One text for build_model's and the export's refusals; "" for an opset in the range."""
    assert opset_refusal("Expand", 8) == "" and opset_refusal("Expand", NEWEST) == ""
    assert opset_refusal("Expand", 7) == (
        f"opset 7 is before opset 8, the first Expand cases are built at; valid: 8..{NEWEST}")
    assert opset_refusal("Tile", NEWEST + 1, "the export's") == (
        f"opset {NEWEST + 1} (the export's) is after opset {NEWEST}, the newest the installed onnx defines; "
        f"valid: 6..{NEWEST}")
    with pytest.raises(ShapeError, match=r"^op 'Conv' is not a layout op here"):
        opset_refusal("Conv", 13)


def test_build_model_refuses_an_opset_above_the_newest_onnx_defines() -> None:
    refused = (rf"^case {re.escape(TRANSPOSE.id)}: opset {NEWEST + 1} is after opset {NEWEST}, the newest "
               rf"the installed onnx defines; valid: 1\.\.{NEWEST}$")
    with pytest.raises(ModelError, match=refused):
        build_model([TRANSPOSE], opset=NEWEST + 1)
    model = build_model([TRANSPOSE], opset=NEWEST)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", NEWEST)]


def test_every_check_takes_the_one_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Transpose's cases made to start at 13, and onnx made to define up to 17: a Case, a model
    and an export give the same range, 13..17."""
    monkeypatch.setattr(Transpose, "min_opset", 13)
    monkeypatch.setattr(onnx.defs, "onnx_opset_version", lambda: 17)
    assert case_opsets("Transpose") == range(13, 18)
    with pytest.raises(ShapeError, match=r"Transpose cases start at opset 13 .*valid: opset >= 13"):
        Case("Transpose", "float32", (2, 3), perm=(1, 0), opset=12)
    for opset, why in ((12, "before opset 13, the first Transpose cases are built at"),
                       (18, "after opset 17, the newest the installed onnx defines")):
        with pytest.raises(ModelError, match=rf": opset {opset} is {why}; valid: 13\.\.17$"):
            build_model([TRANSPOSE], opset=opset)
    asking = Case("Transpose", "float32", (2, 3), perm=(1, 0), opset=18)  # a later one is taken here
    with pytest.raises(ModelError, match=r"opset 18 \(its own\) is after opset 17, the newest the installed "
                                         r"onnx defines; valid: 13\.\.17$"):
        export_test_dir([asking], tmp_path / "out", opset=13)
    assert list(tmp_path.iterdir()) == []
