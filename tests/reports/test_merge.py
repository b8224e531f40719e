"""The matrix of several reports judges each report as its run did (--strict or not), and is
written as a whole or not at all."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.merge import (
    MATRIX_HTML,
    MATRIX_JSON,
    MATRIX_TEXT,
    Matrix,
    merge_reports,
    write_matrix,
)
from ort_layouts.reports.report import Report
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"


def _results() -> tuple[CaseResult, ...]:
    """One group (Pad, float16, rank 2): a pass, a known issue and an unsupported case."""
    return (
        CaseResult(Case("Pad", "float16", (3, 4), pads=(1, 2, 2, 1)), Status.PASS, CPU, element_count=42),
        CaseResult(Case("Pad", "float16", (3, 4), pads=(0, 1, 1, 0)), Status.MISMATCH, CPU, element_count=20,
                   mismatch_count=2, known_issue="ORT CPU Pad quiets float16 signalling NaNs"),
        CaseResult(Case("Pad", "float16", (3, 4), pads=(1, 1, 1, 1), mode="reflect"), Status.UNSUPPORTED, CPU,
                   message="no kernel"),
    )


def _report(strict: bool | None, device: str) -> Report:
    meta: dict[str, object] = {"provider": CPU, "device": device}
    if strict is not None:
        meta["strict"] = strict
    return Report(meta, _results())


def test_each_column_is_judged_as_its_report_s_run(tmp_path: Path,
                                                   matrix_page: Callable[[Path], Any]) -> None:
    """The same results in a report of a --strict run and one without: in the first the known
    issue and the unsupported case are failures (F), as that report's own summaries count them;
    in the second a known issue (K) and an unsupported case (U)."""
    reports = [_report(True, "strict gpu"), _report(False, "plain gpu"), _report(None, "old gpu")]
    matrix = merge_reports(reports)
    assert [c.strict for c in matrix.columns] == [True, False, False]
    table = matrix.text_table()
    row = next(line for line in table.splitlines() if line.startswith("Pad"))
    assert row.split() == ["Pad", "float16", "2", "1/3", "2F", "1/3", "1K", "1U", "1/3", "1K", "1U"]
    assert "[1] CPUExecutionProvider / strict gpu (strict)\n" in table
    assert "[2] CPUExecutionProvider / plain gpu\n" in table
    assert "F = errors and unexplained mismatches (and in a strict report's column its known issues and " \
           "unsupported cases)" in table
    write_matrix(matrix, tmp_path)
    cells = matrix_page(tmp_path)
    assert cells.cells == ["cell fail", "cell known", "cell known"]
    assert "strict" in cells.legend[0] and "strict" not in cells.legend[1]
    columns = json.loads((tmp_path / MATRIX_JSON).read_text())["columns"]
    assert [c["strict"] for c in columns] == [True, False, False]


def test_group_cell_counts_what_each_column_s_cell_shows() -> None:
    """F, K and U as group_cell counts them: a strict column's known issue and unsupported case
    are failures only; the cells' titles keep every status."""
    matrix = merge_reports([_report(True, "strict gpu"), _report(False, "plain gpu")])
    keys = ("pass", "unsupported", "failed", "known", "unsupported, not failed")
    assert [tuple(matrix.group_cell(list(matrix.cases), i)[k] for k in keys) for i in (0, 1)] == [
        (1, 1, 2, 0, 0), (1, 1, 0, 1, 1)]
    assert re.findall(r'class="cell [a-z]+" title="([^"]*)"', matrix.to_html()) == [
        "1 pass, 1 mismatch, 1 unsupported", "1 pass, 1 mismatch, 1 unsupported, 1 known"]


def test_a_strict_column_is_the_report_written_by_a_strict_writer(tmp_path: Path) -> None:
    """A report directory of a --strict run (its meta.json says so) makes a strict column."""
    results = _results()
    with ReportWriter(tmp_path / "r", meta={"provider": CPU}, planned=[r.case.id for r in results],
                      strict=True) as w:
        for r in results:
            w.add(r)
        w.write_summaries(finished=True)
    summary = json.loads((tmp_path / "r" / "report.json").read_text())
    assert (summary["strict"], summary["failures"]) == (True, 2)
    matrix = merge_reports([tmp_path / "r"])
    assert matrix.columns[0].strict
    assert matrix.group_cell(list(matrix.cases), 0)["failed"] == summary["failures"]
    plain = merge_reports([Report({"provider": CPU}, results)])
    assert plain.group_cell(list(plain.cases), 0)["failed"] == 0


def test_a_matrix_that_fails_to_be_made_replaces_no_file(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_matrix(merge_reports([_report(False, "a")]), tmp_path, text=True)
    before = {name: (tmp_path / name).read_bytes() for name in (MATRIX_JSON, MATRIX_HTML, MATRIX_TEXT)}

    def broken(self: Matrix) -> str:
        raise RuntimeError("the page cannot be made")

    monkeypatch.setattr(Matrix, "to_html", broken)
    with pytest.raises(RuntimeError, match="the page cannot be made"):
        write_matrix(merge_reports([_report(False, "b"), _report(True, "c")]), tmp_path, text=True)
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    assert not [p.name for p in tmp_path.iterdir() if re.fullmatch(r"\..*\.tmp", p.name)]


def test_a_report_whose_environment_or_stack_is_no_object_merges() -> None:
    """A report made elsewhere (a Report in memory, not read from disk) whose environment and
    stack are of another kind: merged with no host and no DirectML release, as report.html and
    junit.xml render it."""
    report = Report({"provider": "CPUExecutionProvider", "environment": "vm", "stack": ["1.15.4"]}, ())
    matrix = merge_reports([report])
    assert [(c.directml_version, c.hostname) for c in matrix.columns] == [("", "")]
