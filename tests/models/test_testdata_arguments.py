"""export_test_dir's, write_test_dir's and read_test_dir's arguments: each is checked before
anything is written, and a bad one is refused with a typed error naming it and what is valid."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from ort_layouts import ArgumentError, DataType, ModelError
from ort_layouts.models import testdata
from ort_layouts.models.testdata import export_test_dir
from ort_layouts.operators.case import Case

TRANSPOSE = Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0))
PAD = Case("Pad", DataType.FLOAT32, (3, 4), pads=(1, 2, 2, 3))  # its pads are an initializer

# what the installed onnx defines: ai.onnx opsets from 1, IR versions up to onnx.IR_VERSION
NEWEST_OPSET = onnx.defs.onnx_opset_version()
NEWEST_IR = onnx.IR_VERSION


def _nothing_written(root: Path) -> None:
    assert list(root.iterdir()) == []


# ---- opset ----------------------------------------------------------------------------------
@pytest.mark.parametrize("opset", [0, -1, NEWEST_OPSET + 1, 1000])
def test_an_opset_onnx_does_not_define_is_refused(tmp_path: Path, opset: int) -> None:
    """opset 1000 was written into the models, which ONNX Runtime then refused to load."""
    with pytest.raises(ArgumentError, match=rf"^opset {opset} is not an opset ONNX defines; "
                                            rf"valid: 1\.\.{NEWEST_OPSET} "):
        export_test_dir([TRANSPOSE], tmp_path / "out", opset=opset)
    _nothing_written(tmp_path)


@pytest.mark.parametrize(("argument", "value", "valid"), [
    *[("opset", value, rf"an opset 1\.\.{NEWEST_OPSET}, or None") for value in (True, "19", 19.0, [19])],
    *[("ir_version", value, rf"4\.\.{NEWEST_IR} ") for value in (True, "9", 9.0)],
])
def test_an_opset_or_ir_version_that_is_no_integer_is_refused(tmp_path: Path, argument: str, value: object,
                                                              valid: str) -> None:
    with pytest.raises(ArgumentError, match=rf"^{argument} {re.escape(repr(value))} is an? \w+, not an "
                                            rf"integer; valid: {valid}"):
        export_test_dir([PAD], tmp_path / "out", **{argument: value})  # type: ignore[arg-type]
    _nothing_written(tmp_path)


def test_the_newest_opset_onnx_defines_and_a_numpy_integer_are_taken(tmp_path: Path) -> None:
    for name, opset in (("newest", NEWEST_OPSET), ("numpy", np.int64(13))):
        (directory,) = export_test_dir([TRANSPOSE], tmp_path / name, opset=opset)  # type: ignore[arg-type]
        model = onnx.load(str(directory / "model.onnx"))
        assert [(o.domain, o.version) for o in model.opset_import] == [("", int(opset))]
        onnx.checker.check_model(model)


def test_a_case_at_an_opset_its_operator_lacks_is_refused_before_any_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pad came with opset 2: at opset 1 the Transpose case before it was made, and its model
    built, before the Pad case was refused."""
    made: list[Case] = []
    real = testdata.make_input
    monkeypatch.setattr(testdata, "make_input", lambda case: made.append(case) or real(case))
    refused = (rf"^case {re.escape(PAD.id)}: opset 1 \(the export's\) is before opset 2, the first Pad cases "
               rf"are built at; valid: 2\.\.{NEWEST_OPSET}$")
    with pytest.raises(ModelError, match=refused):
        export_test_dir([TRANSPOSE, PAD], tmp_path / "out", opset=1)
    assert made == []
    _nothing_written(tmp_path)


def test_a_case_whose_feature_the_export_s_opset_lacks_is_refused_before_any_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrap Pad of no opset of its own, exported at 13 (wrap came with Pad-19): the Transpose
    case before it was made, and only build_model refused the Pad."""
    made: list[Case] = []
    real = testdata.make_input
    monkeypatch.setattr(testdata, "make_input", lambda case: made.append(case) or real(case))
    wrap = Case("Pad", DataType.FLOAT32, (2, 3), pads=(1, 1, 1, 1), mode="wrap")
    with pytest.raises(ModelError, match=rf"^case {re.escape(wrap.id)}: Pad mode 'wrap' came with opset 19, "
                                         r"and the opset is 13"):
        export_test_dir([TRANSPOSE, wrap], tmp_path / "out", opset=13)
    assert made == []
    _nothing_written(tmp_path)


def test_a_case_asking_for_an_opset_onnx_does_not_define_is_refused(tmp_path: Path) -> None:
    case = Case("Transpose", DataType.FLOAT32, (2, 3), opset=NEWEST_OPSET + 1)
    with pytest.raises(ModelError, match=rf"^case {re.escape(case.id)}: opset {NEWEST_OPSET + 1} \(its own\) "
                                         rf"is after opset {NEWEST_OPSET}, the newest the installed onnx "
                                         rf"defines; valid: 1\.\.{NEWEST_OPSET}$"):
        export_test_dir([TRANSPOSE, case], tmp_path / "out")
    _nothing_written(tmp_path)


# ---- ir_version -----------------------------------------------------------------------------
def test_ir_version_none_is_the_documented_default_the_ir_version_of_opset_19(tmp_path: Path) -> None:
    """ir_version=None wrote the installed ONNX Runtime's newest IR version (14 with onnx 1.23),
    which older runtimes refuse, where the docstring says the default is 9: the IR version ONNX
    released opset 19 with (onnx.helper's version table), as when it is left out."""
    opset_19 = helper.find_min_ir_version_for([helper.make_opsetid("", 19)])
    assert opset_19 == 9
    for name, kwargs in (("none", {"ir_version": None}), ("left_out", {})):
        (directory,) = export_test_dir([PAD], tmp_path / name, **kwargs)  # type: ignore[arg-type]
        model = onnx.load(str(directory / "model.onnx"))
        assert (model.opset_import[0].version, model.ir_version) == (19, opset_19)


@pytest.mark.parametrize("ir_version", [-1, 0, 3, NEWEST_IR + 1])
def test_an_ir_version_the_models_cannot_have_is_refused(tmp_path: Path, ir_version: int) -> None:
    """IR -1 was written, which onnx.checker refuses."""
    with pytest.raises(ArgumentError, match=rf"^ir_version {ir_version} is not an IR version these models "
                                            rf"can have; valid: 4\.\.{NEWEST_IR} "):
        export_test_dir([PAD], tmp_path / "out", ir_version=ir_version)
    _nothing_written(tmp_path)


def test_the_ir_versions_taken_are_those_onnx_checker_accepts(tmp_path: Path) -> None:
    """The range's ends, checked against onnx.checker itself: from IR 4 on an initializer (Pad's
    pads) need not be a graph input; at IR 3 it must, and at NEWEST_IR + 1 the checker refuses
    the model as newer than itself."""
    for ir_version in (4, NEWEST_IR):
        (directory,) = export_test_dir([PAD], tmp_path / str(ir_version), ir_version=ir_version)
        model = onnx.load(str(directory / "model.onnx"))
        assert model.ir_version == ir_version
        assert {t.name for t in model.graph.initializer} - {i.name for i in model.graph.input}
        onnx.checker.check_model(model, full_check=True)
    for ir_version, refusal in ((3, "in initializer but not in graph input"), (NEWEST_IR + 1, "is higher")):
        model.ir_version = ir_version
        with pytest.raises(onnx.checker.ValidationError, match=refusal):
            onnx.checker.check_model(model)



# ---- out_dir and cases_or_model -----------------------------------------------------------
def test_an_empty_out_dir_is_refused_as_report_writer_refuses_it(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """out_dir '' was taken for the current directory, where ReportWriter refuses ''; '.' names it."""
    from ort_layouts import ReportError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReportError, match=r"^out_dir '' is an empty path; valid: the path of a directory.*"
                                          r"\('\.' for the current directory\)$"):
        export_test_dir([TRANSPOSE], "")
    _nothing_written(tmp_path)
    (directory,) = export_test_dir([TRANSPOSE], ".")
    assert directory.parent.resolve() == tmp_path.resolve() and (tmp_path / "cases.json").is_file()


@pytest.mark.parametrize("out_dir", [None, 3, b"out"])
def test_an_out_dir_that_is_no_path_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               out_dir: object) -> None:
    """out_dir None raised a bare TypeError from Path()."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ArgumentError, match=rf"^out_dir {re.escape(repr(out_dir))} is an? \w+, not a path; "
                                            r"valid: the path of a directory"):
        export_test_dir([TRANSPOSE], out_dir)  # type: ignore[arg-type]
    _nothing_written(tmp_path)


@pytest.mark.parametrize("given", [None, 3, b"cases"])
def test_cases_or_model_that_is_none_of_them_is_refused(tmp_path: Path, given: object) -> None:
    """cases_or_model None raised a bare TypeError from list()."""
    with pytest.raises(ArgumentError, match=rf"^cases_or_model {re.escape(repr(given))} is an? \w+; valid: a "
                                            r"Case, an iterable of Cases \(e\.g\. standard_suite\(\)\), or a "
                                            r"model: the path of an \.onnx file"):
        export_test_dir(given, tmp_path / "out")  # type: ignore[arg-type]
    _nothing_written(tmp_path)


def test_an_item_of_cases_or_model_that_is_no_case_is_named(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match=r"^cases_or_model\[1\] 'Pad' is a str, not a Case; valid: "):
        export_test_dir([TRANSPOSE, "Pad"], tmp_path / "out")  # type: ignore[list-item]
    _nothing_written(tmp_path)
    (directory,) = export_test_dir(iter([TRANSPOSE]), tmp_path / "out")  # any iterable of Cases
    assert directory.parent == tmp_path / "out"


# ---- flags -------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["no", None, 0, [], "False"])
def test_replace_that_is_no_bool_is_refused_and_the_export_kept(tmp_path: Path, value: object) -> None:
    """replace='no' replaced an earlier export: it was taken by its truth."""
    out = tmp_path / "out"
    (first,) = export_test_dir([TRANSPOSE], out)
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(ArgumentError, match=rf"^replace {re.escape(repr(value))} is an? \w+; "
                                            r"valid: True or False$"):
        export_test_dir([PAD], out, replace=value)  # type: ignore[arg-type]
    assert sorted(p.name for p in out.iterdir()) == before == sorted([first.name, "cases.json"])


@pytest.mark.parametrize("value", ["no", None, 1, [0]])
def test_batched_that_is_no_bool_is_refused(tmp_path: Path, value: object) -> None:
    """batched='no' made a batched export."""
    with pytest.raises(ArgumentError, match=rf"^batched {re.escape(repr(value))} is an? \w+; "
                                            r"valid: True or False$"):
        export_test_dir([TRANSPOSE, PAD], tmp_path / "out", batched=value)  # type: ignore[arg-type]
    _nothing_written(tmp_path)


def test_numpy_bools_are_flags(tmp_path: Path) -> None:
    (directory,) = export_test_dir([TRANSPOSE, PAD], tmp_path / "out", batched=np.bool_(True))
    assert directory.name == "batched"
    (directory,) = export_test_dir([PAD], tmp_path / "out", replace=np.bool_(True))
    assert directory.name == testdata.sanitize(PAD.id)
