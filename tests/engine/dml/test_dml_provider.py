"""``--provider dml`` through the worker: the engine's runner, reports and isolation on the real
DirectML stack (skipped where it is not set up; ``ORT_LAYOUTS_REQUIRE_DML=1`` makes that a
failure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ort_layouts import Case, Status, run_cases, standard_suite
from ort_layouts.engine.dml.stack import DmlStack
from ort_layouts.engine.providers import DML, resolve_provider
from ort_layouts.operators.expected import expected_output
from ort_layouts.operators.values import make_input

pytestmark = pytest.mark.usefixtures("dml_stack")  # skipped where the stack is not set up


def test_dml_resolves_to_the_worker() -> None:
    assert resolve_provider("dml") == DML


def test_suite_cases_run_on_directml_bit_for_bit() -> None:
    """Every op, three types, ranks 1-4: each case ran on DirectML and equals the reference
    executor's output (re-checked here against numpy for the Transposes)."""
    cases = standard_suite(ops=["Transpose", "Expand", "Pad"], dtypes=["float32", "int64", "uint8"],
                           ranks=[1, 2, 4])[::7]
    results = run_cases(cases, provider="dml")
    statuses = {r.status for r in results}
    assert Status.PASS in statuses and Status.ERROR not in statuses
    # the one mismatch allowed: a Pad that crops at the start, which the DML EP runs wrongly
    assert all(r.known_issue and r.case.op == "Pad" and min(r.case.pads or ()) < 0
               for r in results if r.status is Status.MISMATCH)
    assert all(r.node_provider == DML for r in results if r.status is Status.PASS)
    for c in cases:
        if c.op == "Transpose":
            x = make_input(c)
            assert expected_output(c, x).tobytes() == np.ascontiguousarray(np.transpose(x, c.perm)).tobytes()


def test_a_node_directml_cannot_take_is_unsupported_never_run_on_the_cpu() -> None:
    """A Pad-10 that crops (negative pads) has no DirectML operator, and the DML EP does not
    take it: the case is unsupported on DML, with the reason, while the rest of its batch still
    runs on DirectML."""
    crop = Case("Pad", "float32", (3, 4), pads=(-1, 0, 0, 0), opset=10)
    fine = Case("Transpose", "float32", (3, 4), perm=(1, 0), opset=10)
    bad, good = run_cases([crop, fine], provider="dml")
    assert bad.status is Status.UNSUPPORTED and "does not take this Pad before opset 11" in bad.message
    assert good.status is Status.PASS and good.node_provider == DML


def test_a_pad_that_crops_runs_on_the_dml_ep_from_opset_11_and_is_checked_against_onnx() -> None:
    """From opset 11 the DML EP runs a Pad that crops (its pads wrapped to uint32). Cropping at
    the end comes out as ONNX says; cropping at the start gives the constant (edge: the last
    row) where ONNX keeps rows 1-2, which the diagnosis names and a known issue explains."""
    end_crop = Case("Pad", "float32", (3, 4), pads=(0, 0, 0, -2))
    start_crop = Case("Pad", "float32", (3, 4), pads=(-1, 0, 0, 0), opset=13)
    edge = Case("Pad", "int16", (3, 4), pads=(-1, 0, 0, 0), mode="edge")
    right, wrong, wrong_edge = run_cases([end_crop, start_crop, edge], provider="dml")
    assert right.status is Status.PASS and right.node_provider == DML
    for result in (wrong, wrong_edge):
        assert result.status is Status.MISMATCH and result.node_provider == DML
        assert result.diagnosis.startswith("output matches the negative start padding taken as "
                                           "unsigned (StartPadding [0, 0, 4294967295, 0])")
        assert "PaddingHelper" in result.known_issue
    x = make_input(start_crop)
    # ONNX drops row 0 (the first element kept is [1, 0]); the DML EP wrote the constant 0
    assert (wrong.expected_hex, wrong.actual_hex) == (x[1, :1].tobytes().hex(), "00000000")


def test_the_canary_stops_a_run_on_a_stack_that_returns_zeros(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mesa 22's lavapipe under vkd3d 1.6: Run returns OK and every output is zeros. The canary
    stops the run before any case, with one line naming the cause."""
    from ort_layouts import ProviderError
    from ort_layouts.engine.providers import close_dml_worker

    icd = DmlStack.default().home / "mesa22" / "lvp_icd.json"
    if not icd.is_file():
        pytest.skip("the Mesa 22 lavapipe is not set up (ort-layouts setup dml --mesa 22)")
    close_dml_worker()
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", str(icd))
    try:
        with pytest.raises(ProviderError, match="every output is zeros"):
            run_cases(standard_suite(ops=["Transpose"], ranks=[2], dtypes=["float32"]), provider="dml")
    finally:
        close_dml_worker()


def test_the_stack_is_named_field_by_field_in_meta_html_and_junit(tmp_path: Path) -> None:
    """meta.json, the HTML and JUnit carry the stack the run ran on; the DirectML version is the
    one in the loaded DLL's version resource, read here from the file itself."""
    import json
    import xml.etree.ElementTree as ET

    from ort_layouts.engine.dml.stack import directml_file_version
    from ort_layouts.frontends.cli import main

    report = tmp_path / "r"
    assert main(["validate", "--provider", "dml", "--ops", "Slice", "--dtypes", "float32", "--ranks", "2",
                 "--limit", "3", "--progress", "none", "--report", str(report)]) == 0
    stack = json.loads((report / "meta.json").read_text())["stack"]
    on_disk = directml_file_version(DmlStack.default().directml_dll)
    assert stack["directml_file_version"] == on_disk and stack["directml_version"] == on_disk.split("+")[0]
    assert stack["d3d12"].startswith("vkd3d") and stack["adapter_name"] and stack["shader_model"]
    props = {p.get("name"): p.get("value") for p in ET.parse(report / "junit.xml").iter("property")}
    assert props["stack.directml_version"] == stack["directml_version"]
    assert props["stack.vulkan_driver"] == stack["vulkan_driver"]
    html = (report / "report.html").read_text()
    assert f"DirectML stack: adapter_name</th><td>{stack['adapter_name']}" in html


def test_a_split_with_an_empty_part_leaves_every_output_unwritten_on_directml() -> None:
    """The DML EP creates no operator for a node with an empty tensor and dispatches nothing
    (``DmlOperator::SetDmlOperatorDesc``, ``ExecuteOperator``): a Split of [6,4] into parts
    (2, 0, 4) returns its two non-empty outputs unwritten instead of numpy's split. A DML EP
    defect seen on DirectML itself; the standard suite leaves such Splits out."""
    case = Case("Split", "float32", (6, 4), parts=(2, 0, 4), seed=2)
    x = make_input(case)
    first, _, last = np.split(x, [2, 2], axis=0)
    assert first.any() and last.any()  # what ONNX (numpy) says: real data
    (r,) = run_cases([case], provider="dml")
    assert r.status is Status.MISMATCH and r.node_provider == DML
    # both non-empty outputs hold whatever the allocation held, not one element of numpy's
    assert r.message.startswith("output 0 of 3 [2, 4] (outputs [0, 2] differ): 8 of 8 elements differ")
