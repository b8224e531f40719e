"""A resumed report counts only the results of its own selection: a results.jsonl line of a case
that is not planned (appended by hand, or from another report) refuses the resume, naming the
line and the case, and leaves the report as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import RESULTS_FILE, read_results
from ort_layouts.reports.writer import ReportWriter

PROVIDER = "CPUExecutionProvider"
META = {"provider": PROVIDER, "selection": {"provider": PROVIDER, "ops": ["Transpose"]}}


def _result(case: Case) -> CaseResult:
    return CaseResult(case, Status.PASS, PROVIDER, element_count=6, seconds=0.01)


PLANNED = [Case("Transpose", "float32", (2, 3), perm=(1, 0)),
           Case("Transpose", "float32", (3, 2), perm=(1, 0))]
STRANGER = Case("Pad", "int8", (3, 4), pads=(1, 0, 0, 0))  # of no planned id


def test_a_line_of_a_case_not_planned_refuses_the_resume(tmp_path: Path) -> None:
    planned = [c.id for c in PLANNED]
    with ReportWriter(tmp_path, meta=META, planned=planned) as w:
        w.add(_result(PLANNED[0]))
        w.write_summaries()
    path = tmp_path / RESULTS_FILE
    with open(path, "a") as f:  # a blank line (line 2) and another selection's result (line 3)
        f.write("\n" + json.dumps(_result(STRANGER).to_dict()) + "\n")
    before = path.read_bytes()
    with pytest.raises(ReportError) as info:
        ReportWriter(tmp_path, meta=META, planned=planned, resume=True)
    assert str(info.value) == (
        f"cannot resume {tmp_path}: results.jsonl line 3 holds case {STRANGER.id!r}, which is not in this "
        "report's selection; remove that line to resume, or run without --resume to start the report over")
    assert path.read_bytes() == before  # nothing dropped
    # the directory is free again: with the line removed, the resume counts the planned result only
    path.write_text(json.dumps(_result(PLANNED[0]).to_dict()) + "\n")
    with ReportWriter(tmp_path, meta=META, planned=planned, resume=True) as w:
        assert w.done_ids == {planned[0]}
        w.add(_result(PLANNED[1]))
        report = w.write_summaries(finished=True)
    assert [r.case.id for r in report.results] == planned
    assert [r.case.id for r in read_results(path)] == planned
