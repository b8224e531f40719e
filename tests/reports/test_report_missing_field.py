"""A damaged result that lacks a field is named by that field, in results.jsonl and report.json
alike, where the message gave a KeyError's bare text ("line 3 cannot be read ('data_type')") or,
for a field with no default but the status and case, the constructor's ("missing 1 required
positional argument"). A field of the case is named as ``case.<field>``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import Report, load_report, read_results

PROVIDER = "CPUExecutionProvider"
CASES = [Case("Transpose", "float32", (2, k), perm=(1, 0)) for k in (3, 4, 5, 6)]


def _lines() -> list[dict]:
    return [CaseResult(c, Status.PASS, PROVIDER, element_count=2 * c.shape[1], seconds=0.01).to_dict()
            for c in CASES]


@pytest.mark.parametrize(("drop", "field"), [
    (lambda d: d["case"].pop("data_type"), "case.data_type"),
    (lambda d: d["case"].pop("op"), "case.op"),
    (lambda d: d["case"].pop("shape"), "case.shape"),
    (lambda d: d.pop("status"), "status"),
    (lambda d: d.pop("provider"), "provider"),
    (lambda d: d.pop("case"), "case"),
], ids=["case-data-type", "case-op", "case-shape", "status", "provider", "case"])
def test_a_line_that_lacks_a_field_names_it(
        tmp_path: Path, drop: Callable[[dict], object], field: str) -> None:
    lines = _lines()
    drop(lines[2])
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    with pytest.raises(ReportError) as info:
        read_results(path)
    assert str(info.value) == f"{path}: line 3 lacks the field {field!r}; the file is damaged"


def test_a_report_json_result_that_lacks_a_field_names_it(tmp_path: Path) -> None:
    lines = _lines()
    del lines[1]["case"]["data_type"]
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"schema": "ort_layouts.report/1", "provider": PROVIDER, "results": lines}))
    with pytest.raises(ReportError) as info:
        load_report(path)
    assert str(info.value) == f"{path} holds a result that lacks the field 'case.data_type'"
    with pytest.raises(ReportError, match=r"^<dict> holds a result that lacks the field 'case.data_type'$"):
        Report.from_dict({"schema": "ort_layouts.report/1", "results": lines})


def test_a_whole_last_line_that_is_no_result_is_named_not_dropped(tmp_path: Path) -> None:
    """Only a last line that is not whole JSON is taken for one cut short by a crash; a whole
    one that holds no result (here a Transpose whose perm does not fit its shape, which Case
    refuses) is named, where it was dropped without a word."""
    lines = _lines()
    lines[3]["case"]["perm"] = [0, 0]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    with pytest.raises(ReportError, match=r": line 4 cannot be read \(.*perm.*\); the file is damaged$"):
        read_results(path)
    cut = "".join(json.dumps(d) + "\n" for d in _lines())
    path.write_text(cut[:-20])  # the last line cut short: ignored, as before
    assert [r.case for r in read_results(path)] == CASES[:3]
