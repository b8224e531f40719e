"""The HTML report shows what the recovery found for known issues too, not only for failures."""

from __future__ import annotations

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import render_report_html
from ort_layouts.reports.report import Report


def test_a_known_issue_shows_its_recovery() -> None:
    case = Case("Pad", "float16", (3, 4), pads=(1, 2, 2, 1), mode="constant", pad_value_hex="00c2", opset=10)
    side = {"start_padding": [0, 0, 1, 2], "end_padding": [0, 0, 2, 1], "mode": "CONSTANT"}
    recovered = {"kind": "padding", "operator": "DML_OPERATOR_PADDING1",
                 "applied": {**side, "constant_hex": "ffff"}, "expected": {**side, "constant_hex": "00c2"},
                 "names": ["constant 0xffff instead of 0xc200"], "text": "recovered: ..."}
    result = CaseResult(case, Status.MISMATCH, "DmlExecutionProvider", known_issue="the Pad-10 constant",
                        diagnosis="output matches the constant replaced by 0xffff", recovered=recovered)
    page = render_report_html(Report({"provider": "DmlExecutionProvider"}, (result,)))
    known = page[page.index('<section id="known">'):page.index('<section id="unsupported">')]
    assert '<div class="recovered">' in known
    assert '<td class="differs">ffff</td>' in known and "<td>00c2</td>" in known
    assert "constant 0xffff instead of 0xc200" in known
