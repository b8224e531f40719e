"""A resume refused because the run is elsewhere: the message names each field that differs, as
``name 'old' → 'new'``, and nothing that agrees; a DirectML stack that could not be described
(its worker hung) is named as broken, not as another stack, and the report is kept as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.writer import ReportWriter

DML = "DmlExecutionProvider"
STACK = {
    "directml_version": "1.15.4", "ort_version": "1.24.4", "d3d12": "vkd3d 1.6",
    "wine_version": "wine-8.0", "vulkan_driver": "lavapipe (Mesa 25.0.7)",
    "adapter_name": "llvmpipe (LLVM 15.0.6, 256 bits)", "shader_model": "5.1",
    "directml_path": "Z:\\dml\\bin\\DirectML.dll", "directml_file_version": "1.15.4+241025",
}
OLDER = {**STACK, "directml_version": "1.13.1", "directml_path": "Z:\\dml\\1.13.1\\DirectML.dll",
         "directml_file_version": "1.13.1+240111"}
HUNG = {"error": "DmlWorkerTimeoutError: the DirectML worker did not answer in time"}


def _cases() -> list[Case]:
    return [Case("Transpose", "float32", (2, 3), perm=(1, 0)),
            Case("Transpose", "float32", (3, 2), perm=(1, 0))]


def _meta(stack: dict[str, Any], device: str) -> dict[str, Any]:
    return {"provider": DML, "device": device, "stack": stack, "command": "ort-layouts validate",
            "environment": {"versions": {"onnxruntime": "1.32.0", "numpy": "2.4.6"}},
            "selection": {"provider": DML, "ops": ["Transpose"]}}


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _partial(directory: Path) -> dict[str, bytes]:
    """A report with one result of two, on STACK; its files' bytes."""
    cases = _cases()
    with ReportWriter(directory, meta=_meta(STACK, "DirectML 1.15.4 via Wine"),
                      planned=[c.id for c in cases]) as w:
        w.add(CaseResult(cases[0], Status.PASS, DML, element_count=6))
    return _files(directory)


def _refused_resume(directory: Path, meta: dict[str, Any]) -> str:
    """The message of a resume of ``directory``'s report with ``meta``, which is refused."""
    with pytest.raises(ReportError) as refused:
        ReportWriter(directory, meta=meta, planned=[c.id for c in _cases()], resume=True)
    return str(refused.value)


def test_a_resume_on_another_stack_names_only_the_fields_that_differ(tmp_path: Path) -> None:
    before = _partial(tmp_path)
    message = _refused_resume(tmp_path, _meta(OLDER, "DirectML 1.13.1 via Wine"))
    assert "directml_version '1.15.4' → '1.13.1'" in message
    assert "directml_path 'Z:\\dml\\bin\\DirectML.dll' → 'Z:\\dml\\1.13.1\\DirectML.dll'" in message
    assert "directml_file_version '1.15.4+241025' → '1.13.1+240111'" in message
    for same in ("ort_version", "adapter_name", "vkd3d", "llvmpipe", "shader_model", "wine"):
        assert same not in message, same
    assert "via Wine" not in message  # the device is made from the stack's fields, named above
    assert "its results and this run's would be mixed" in message and len(message) < 600
    assert _files(tmp_path) == before


def test_other_package_versions_are_named_field_by_field(tmp_path: Path) -> None:
    _partial(tmp_path)
    meta = _meta(STACK, "DirectML 1.15.4 via Wine")
    meta["environment"] = {"versions": {"onnxruntime": "1.33.0", "numpy": "2.4.6"}}
    message = _refused_resume(tmp_path, meta)
    assert "onnxruntime '1.32.0' → '1.33.0'" in message and "numpy" not in message


def test_a_resume_on_a_hung_stack_names_it_broken_and_keeps_the_report(tmp_path: Path) -> None:
    before = _partial(tmp_path)
    message = _refused_resume(tmp_path, _meta(HUNG, "DirectML 1.15.4 via Wine"))
    assert "DirectML stack is broken" in message and "did not answer in time" in message
    assert "drop --resume" not in message and "without --resume" not in message
    assert "this run: {" not in message and "1.15.4" not in message
    assert _files(tmp_path) == before
