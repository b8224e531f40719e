"""The known-issue table waives a mismatch only when the diagnosis proves its signature."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from ort_layouts import Case, CaseResult, DataType, Status, diagnose
from ort_layouts.engine import known_issues
from ort_layouts.engine.known_issues import KnownIssue, known_issue_for

PAD16 = Case("Pad", "float16", (4,), pads=(1, 1), mode="edge", values="special")


def _quieted(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """An input with signalling NaNs and the output a float round trip would give."""
    x = np.array([0x7C01, 0x3C00, 0xFC02, 0x7E05], dtype=np.uint16).view(np.float16)
    expected = np.pad(x.view(np.uint16), (1, 1), mode="edge")
    snan = ((expected & 0x7C00) == 0x7C00) & ((expected & 0x03FF) != 0) & ((expected & 0x0200) == 0)
    return x, np.where(snan, expected | 0x0200, expected).astype(np.uint16).view(np.float16)


def test_diagnosis_names_quieted_nans() -> None:
    x, actual = _quieted(PAD16)
    text = diagnose(PAD16, x, actual)
    assert text.startswith("output matches the input with signalling NaNs quieted"), text
    # edge-padded [7C01, 7C01, 3C00, FC02, 7E05, 7E05]: 7C01 twice and FC02 are signalling
    assert "(3 element(s) gained the quiet bit 0x200)" in text


def test_diagnosis_names_replaced_payloads() -> None:
    x = np.array([0x7C01, 0x3C00, 0x3C00, 0x3C00], dtype=np.uint16).view(np.float16)
    expected = np.pad(x.view(np.uint16), (1, 1), mode="edge")
    actual = np.where(expected == 0x7C01, 0x7E00, expected).astype(np.uint16).view(np.float16)
    assert diagnose(PAD16, x, actual).startswith("output matches the input with NaN payloads replaced")


def test_infinity_turned_nan_is_not_a_nan_rewrite() -> None:
    x = np.array([0x7C00, 0x3C00, 0x3C00, 0x3C00], dtype=np.uint16).view(np.float16)  # +inf
    expected = np.pad(x.view(np.uint16), (1, 1), mode="edge")
    actual = np.where(expected == 0x7C00, 0x7E00, expected).astype(np.uint16).view(np.float16)
    assert "NaN" not in diagnose(PAD16, x, actual)


def _result(provider: str, case: Case, diagnosis: str) -> CaseResult:
    return CaseResult(case, Status.MISMATCH, provider, mismatch_count=1, diagnosis=diagnosis)


@pytest.mark.parametrize(("provider", "case", "diagnosis", "known"), [
    ("CPUExecutionProvider", PAD16, "output matches the input with signalling NaNs quieted (1 ...)", True),
    ("CPUExecutionProvider", PAD16, "output matches start and end padding swapped", False),
    ("CPUExecutionProvider", PAD16, "", False),
    ("WebGpuExecutionProvider", PAD16, "output matches the input with signalling NaNs quieted (1)", False),
    ("CPUExecutionProvider", Case("Transpose", "float16", (2, 3), values="special"),
     "output matches the input with signalling NaNs quieted (1)", False),
    ("CPUExecutionProvider", Case("Pad", "float32", (4,), pads=(1, 1)),
     "output matches the input with signalling NaNs quieted (1)", False),
], ids=["signature", "other-diagnosis", "unexplained", "other-provider", "other-op", "other-dtype"])
def test_known_issue_needs_provider_op_type_and_signature(
        provider: str, case: Case, diagnosis: str, known: bool) -> None:
    result = _result(provider, case, diagnosis)
    assert bool(known_issue_for(result)) is known
    assert result.failed  # the field is set by the runner; a bare mismatch fails


def test_labelled_mismatch_does_not_fail() -> None:
    import dataclasses
    r = _result("CPUExecutionProvider", PAD16, "output matches the input with signalling NaNs quieted")
    labelled = dataclasses.replace(r, known_issue=known_issue_for(r))
    assert labelled.status is Status.MISMATCH and not labelled and not labelled.failed


QUIETED = "output matches the input with signalling NaNs quieted (1 element(s) gained the quiet bit 0x200)"
PAD_CONSTANT = "output matches the constant replaced by 0xffff"


@pytest.mark.parametrize(("provider", "case", "diagnosis", "ort_version", "known"), [
    # the DML EP's float16 Transpose was seen quieting signalling NaNs at rank 2 only
    ("DmlExecutionProvider", Case("Transpose", "float16", (2, 3), values="special"), QUIETED, "1.24.4", True),
    ("DmlExecutionProvider", Case("Transpose", "float16", (2, 3, 4, 5), values="special"), QUIETED, "1.24.4",
     False),
    # its float16 Pad-10 (the constant as an attribute) pads with 0xFFFF; from opset 11 it is right
    ("DmlExecutionProvider", Case("Pad", "float16", (4,), pads=(1, 1), pad_value_hex="003c", opset=10),
     PAD_CONSTANT, "1.24.4", True),
    ("DmlExecutionProvider", Case("Pad", "float16", (4,), pads=(1, 1), pad_value_hex="003c", opset=18),
     PAD_CONSTANT, "1.24.4", False),
    ("DmlExecutionProvider", Case("Pad", "float16", (4,), pads=(1, 1), pad_value_hex="003c"),
     PAD_CONSTANT, "1.24.4", False),  # the default opset is the newest
    # the CPU EP's DepthToSpace quieted them in ONNX Runtime 1.30; 1.32 keeps the bits
    ("CPUExecutionProvider", Case("DepthToSpace", "float16", (1, 4, 1, 1), blocksize=2, values="special"),
     QUIETED, "1.30.0", True),
    ("CPUExecutionProvider", Case("DepthToSpace", "float16", (1, 4, 1, 1), blocksize=2, values="special"),
     QUIETED, "1.32.0", False),
], ids=["dml-transpose-rank2", "dml-transpose-rank4", "dml-pad10", "dml-pad18", "dml-pad-default",
        "cpu-d2s-1.30", "cpu-d2s-1.32"])
def test_known_issue_waives_only_where_it_was_seen(
        provider: str, case: Case, diagnosis: str, ort_version: str, known: bool) -> None:
    result = _result(provider, case, diagnosis)
    assert bool(known_issue_for(result, ort_version)) is known


def test_the_onnx_runtime_version_is_this_process_s_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime

    result = _result("CPUExecutionProvider",
                     Case("SpaceToDepth", "float16", (1, 1, 2, 2), blocksize=2, values="special"), QUIETED)
    monkeypatch.setattr(onnxruntime, "__version__", "1.30.1")
    assert known_issue_for(result)
    monkeypatch.setattr(onnxruntime, "__version__", "1.32.0")
    assert not known_issue_for(result)


def test_runner_labels_by_the_runtime_that_ran_the_case(monkeypatch: pytest.MonkeyPatch) -> None:
    # an issue seen only with ONNX Runtime 0.1 labels a mismatch when the runtime that runs the
    # provider is 0.1.x (as DirectML through the worker runs its own onnxruntime), not otherwise
    from ort_layouts.engine import runner

    case = Case(op="Transpose", data_type=DataType.FLOAT32, shape=(2, 3), perm=(1, 0))
    issue = KnownIssue(provider="CPUExecutionProvider", op="Transpose", data_types=(DataType.FLOAT32,),
                       signatures=("",), reason="seen with 0.1", ort_versions=("0.1",))
    monkeypatch.setattr(known_issues, "KNOWN_ISSUES", (issue,))
    zeros = [np.zeros((3, 2), np.float32)]
    monkeypatch.setattr(runner._Run, "_rerun", lambda self, prep: lambda x: zeros)
    for version, labelled in ((ort.__version__, False), ("0.1.7", True)):
        monkeypatch.setattr(runner, "runtime_version", lambda provider, v=version: v)
        run = runner._new_run("cpu", 0, None, True, None)
        prep = runner._prepare(case, run.config.name, None)
        assert isinstance(prep, runner._Prepared)
        result = run._judge(prep, zeros, run.config.name, 0.0)
        assert result.status is Status.MISMATCH
        assert (result.known_issue == "seen with 0.1") is labelled
