"""The summary line names where a run ran: on DirectML the stack (the device text) and the ONNX
Runtime whose DML EP ran it, from the report's meta; other providers by their device alone."""

from __future__ import annotations

from typing import Any

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import Report, summary_line

DML = "DmlExecutionProvider"
CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
DEVICE = "DirectML 1.15.4 via Wine/vkd3d 1.6 on Vulkan lavapipe (Mesa 25.0.7)"


def _line(provider: str, **meta: Any) -> str:
    result = CaseResult(CASE, Status.PASS, provider, element_count=6)
    report = Report({"provider": provider, **meta}, (result,))
    return summary_line(report)


def test_a_directml_run_through_the_worker_names_the_ort_of_its_dml_ep() -> None:
    line = _line(DML, device=DEVICE, stack={"directml_version": "1.15.4", "ort_version": "1.24.4"},
                 environment={"versions": {"onnxruntime": "1.32.0"}})
    assert line == (f"1 cases on {DML} ({DEVICE}; DML EP of ONNX Runtime 1.24.4): 1 passed, 0 mismatched, "
                    "0 errors")


def test_an_in_process_directml_run_names_the_installed_onnxruntime() -> None:
    line = _line(DML, device="AMD Radeon", environment={"versions": {"onnxruntime": "1.22.0"}})
    assert line.startswith(f"1 cases on {DML} (AMD Radeon; DML EP of ONNX Runtime 1.22.0): ")


def test_other_providers_keep_their_device_alone() -> None:
    line = _line("CPUExecutionProvider", device="AMD 1022:0000",
                 environment={"versions": {"onnxruntime": "1.32"}})
    assert line.startswith("1 cases on CPUExecutionProvider (AMD 1022:0000): ")
