"""report.json's ``schema`` is the format's version, which its reader goes by: a meta field of
that name was written over it, and the report.json was then refused by load_report ("has schema
'mine/2', which this version of ort_layouts does not read"). The report's own is written; the
meta's stays in meta.json."""

from __future__ import annotations

import json
from pathlib import Path

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import SCHEMA, Report, load_report
from ort_layouts.reports.writer import ReportWriter, write_report

CPU = "CPUExecutionProvider"
CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
RESULT = CaseResult(CASE, Status.PASS, CPU, element_count=6)
META = {"provider": CPU, "schema": "mine/2", "planned": [CASE.id]}


def test_to_dict_writes_its_own_schema_over_a_meta_schema() -> None:
    data = Report(META, (RESULT,)).to_dict()
    assert data["schema"] == "ort_layouts.report/1" == SCHEMA
    assert list(data).count("schema") == 1 and next(iter(data)) == "schema"


def test_a_report_json_of_a_meta_with_a_schema_reads_back(tmp_path: Path) -> None:
    write_report(Report(META, (RESULT,)), tmp_path / "w")
    text = (tmp_path / "w" / "report.json").read_text(encoding="utf-8")
    assert json.loads(text)["schema"] == "ort_layouts.report/1"
    back = load_report(tmp_path / "w" / "report.json")
    assert back.results == (RESULT,) and back.meta["provider"] == CPU
    assert "schema" not in back.meta


def test_a_writer_given_a_meta_schema_keeps_it_in_meta_json_only(tmp_path: Path) -> None:
    with ReportWriter(tmp_path / "r", meta={"provider": CPU, "schema": "mine/2"}, planned=[CASE.id]) as w:
        w.add(RESULT)
    assert json.loads((tmp_path / "r" / "meta.json").read_text(encoding="utf-8"))["schema"] == "mine/2"
    assert json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))["schema"] == SCHEMA
    assert load_report(tmp_path / "r").meta["schema"] == "mine/2"  # meta.json and results.jsonl
    assert load_report(tmp_path / "r" / "report.json").results == (RESULT,)
