"""A new run in a report directory whose report cannot tell its selection (a damaged meta.json or
report.json, results.jsonl alone) is refused with what is damaged and how to go on, not as a
report of another selection whose every field is None; --force replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import JSON_FILE, META_FILE, RESULTS_FILE
from ort_layouts.reports.writer import ReportWriter

PROVIDER = "CPUExecutionProvider"
META = {"provider": PROVIDER, "selection": {"provider": PROVIDER, "ops": ["Transpose"]}}
CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
HOW = ("so whether it is of this run's selection cannot be told; use another directory, or --force to "
       "replace the report")


def _report(directory: Path) -> None:
    with ReportWriter(directory, meta=META, planned=[CASE.id]) as w:
        w.add(CaseResult(CASE, Status.PASS, PROVIDER, element_count=6, seconds=0.01))


@pytest.mark.parametrize(("damage", "message"), [
    ({META_FILE: "{"}, "holds a damaged meta.json ({d}/meta.json is not valid JSON: Expecting property name "
                       "enclosed in double quotes: line 1 column 2 (char 1)), " + HOW),
    ({META_FILE: '{"selection": null}'},
     "holds a meta.json that names no selection, so whether it is of this run's selection cannot be "
     "told; use another directory, or --force to replace the report"),
    ({META_FILE: '{"selection": [1]}'},
     "holds a damaged meta.json: its 'selection' is [1], not an object, " + HOW),
    ({META_FILE: None, JSON_FILE: "[]"}, "holds a damaged report.json ({d}/report.json does not hold a JSON "
                                         "object), " + HOW),
    ({META_FILE: None, JSON_FILE: None}, "holds results.jsonl without meta.json, " + HOW),
], ids=["meta-not-json", "meta-null-selection", "meta-list-selection", "report-json-not-object",
        "results-alone"])
def test_a_report_that_cannot_tell_its_selection_is_refused_unless_forced(
        tmp_path: Path, damage: dict[str, str | None], message: str) -> None:
    _report(tmp_path)
    for name, text in damage.items():
        if text is None:
            (tmp_path / name).unlink()
        else:
            (tmp_path / name).write_text(text)
    kept = (tmp_path / RESULTS_FILE).read_bytes()
    with pytest.raises(ReportError) as info:
        ReportWriter(tmp_path, meta=META, planned=[CASE.id])
    assert str(info.value) == f"report directory {str(tmp_path)!r} " + message.format(d=tmp_path)
    assert (tmp_path / RESULTS_FILE).read_bytes() == kept  # nothing replaced
    with ReportWriter(tmp_path, meta=META, planned=[CASE.id], force=True) as w:
        assert not w.done_ids
    assert (tmp_path / RESULTS_FILE).read_bytes() == b""
