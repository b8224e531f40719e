"""Report files that are valid JSON but damaged (a field of another kind) are one-line errors
where they are read; the summaries render the odd values a report made elsewhere may hold
(a null environment or stack, a recovery's names that are no list) instead of failing."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.frontends.cli import main
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import render_report_html
from ort_layouts.reports.junit import render_junit
from ort_layouts.reports.report import HTML_FILE, JUNIT_FILE, META_FILE, RESULTS_FILE, Report, load_report
from ort_layouts.reports.writer import ReportWriter, write_report

Cap = pytest.CaptureFixture[str]
CPU = "CPUExecutionProvider"
SMALL = ["validate", "--provider", "cpu", "--ops", "Transpose", "--dtypes", "float32", "--ranks", "2",
         "--progress", "none"]


def _results() -> list[CaseResult]:
    return [CaseResult(Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed), Status.PASS, CPU,
                       element_count=6, seconds=0.25, descriptors={"operator": "x"}) for seed in range(3)]


def _written(directory: Path) -> Path:
    results = _results()
    with ReportWriter(directory, meta={"provider": CPU}, planned=[r.case.id for r in results]) as w:
        for r in results:
            w.add(r)
    return directory


def _damage_line(path: Path, number: int, **fields: Any) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    data = json.loads(lines[number - 1])
    data.update(fields)
    lines[number - 1] = json.dumps(data)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(("fields", "named"), [
    ({"recovered": ["x"]}, "recovered is list ['x'], not a JSON object"),
    ({"status": "mismatch", "mismatch_count": 1, "descriptors": "x"},
     "descriptors is str 'x', not a JSON object"),
    ({"seconds": "x"}, "seconds is str 'x', not a finite number"),
    ({"seconds": float("nan")}, "seconds is float nan, not a finite number"),  # written NaN
    ({"seconds": float("inf")}, "seconds is float inf, not a finite number"),  # written Infinity
], ids=["recovered-list", "descriptors-str", "seconds-str", "seconds-nan", "seconds-infinity"])
def test_a_line_with_a_field_of_another_kind_is_a_damaged_line(
        tmp_path: Path, fields: dict[str, Any], named: str) -> None:
    from ort_layouts.reports.report import read_results

    path = _written(tmp_path) / RESULTS_FILE
    _damage_line(path, 2, **fields)
    with pytest.raises(ReportError, match=r"line 2 cannot be read \(.*\); the file is damaged") as raised:
        read_results(path)
    assert named in str(raised.value)


def test_validate_resume_of_a_damaged_line_is_one_line_exit_2(tmp_path: Path, capsys: Cap) -> None:
    """It was an AttributeError's traceback (exit 1) or a format error's message."""
    report = tmp_path / "r"
    assert main([*SMALL, "--report", str(report)]) == 0
    _damage_line(report / RESULTS_FILE, 3, recovered=["x"])
    capsys.readouterr()
    assert main([*SMALL, "--report", str(report), "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 3 cannot be read (recovered is list" in err[0] and "damaged" in err[0]


@pytest.mark.parametrize(("key", "value", "named"), [
    ("resumed", [1], "'resumed' holds int 1, not only strings"),
    ("planned", ["a", None], "'planned' holds NoneType None, not only strings"),
], ids=["resumed-int", "planned-null"])
def test_a_meta_list_of_other_than_strings_is_damaged(
        tmp_path: Path, key: str, value: Any, named: str) -> None:
    directory = _written(tmp_path)
    meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    meta[key] = value
    (directory / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ReportError, match="the file is damaged") as raised:
        load_report(directory)
    assert named in str(raised.value)


@pytest.mark.parametrize("strict", ["no", 0, [True]])
def test_a_meta_strict_that_is_no_boolean_is_damaged_not_read_as_true(tmp_path: Path, strict: Any) -> None:
    """A "no" was read as strict (bool("no")), beside a writer that refuses to write one."""
    directory = _written(tmp_path)
    meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    meta["strict"] = strict
    (directory / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    (directory / "report.json").unlink()  # the meta is read from meta.json alone
    with pytest.raises(ReportError, match=r"'strict' is .*, not a JSON boolean; the file is damaged"):
        load_report(directory)


def test_a_meta_with_null_resumed_resumes(tmp_path: Path) -> None:
    directory = _written(tmp_path)
    meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    meta["resumed"] = None
    (directory / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    results = _results()
    with ReportWriter(directory, meta={"provider": CPU}, planned=[r.case.id for r in results], resume=True):
        pass
    assert len(json.loads((directory / META_FILE).read_text(encoding="utf-8"))["resumed"]) == 1


ODD_METAS = [
    {"environment": None, "stack": None, "selection": None, "resumed": None},
    {"environment": {"versions": None, "hostname": None}, "stack": {"a": [1]}, "resumed": [1, "t"],
     "started": [2026], "provider": 5, "command": None},
    {"environment": "vm", "stack": [1], "resumed": "yesterday", "selection": {"s": [1, {"a": None}]}},
]


@pytest.mark.parametrize("meta", ODD_METAS, ids=["nulls", "odd-values", "other-kinds"])
def test_the_summaries_render_a_report_of_odd_meta_values(tmp_path: Path, meta: dict[str, Any]) -> None:
    """write_report of a report made elsewhere: a null environment raised AttributeError in
    JUnit, a resumed time that is no string TypeError in HTML."""
    report = Report(meta, tuple(_results()))
    paths = write_report(report, tmp_path)
    ET.parse(paths["junit"])
    page = (tmp_path / HTML_FILE).read_text(encoding="utf-8")
    assert 'class="verdict pass">PASS<' in page
    if meta.get("resumed") == [1, "t"]:
        assert "<th>resumed</th><td>1, t</td>" in page
    assert (tmp_path / JUNIT_FILE).read_text(encoding="utf-8") == render_junit(report)
    assert page == render_report_html(report)


@pytest.mark.parametrize("names", [5, "ab", None, {"a": 1}], ids=["int", "str", "null", "object"])
def test_a_recovery_whose_names_are_no_list_renders(names: Any) -> None:
    failing = CaseResult(Case("Transpose", "float32", (2, 3), perm=(1, 0)), Status.MISMATCH, CPU,
                         element_count=6, mismatch_count=1, first_mismatch_index=(0, 1),
                         recovered={"kind": "read", "names": names, "applied": 3, "expected": [1]})
    report = Report({}, (failing,))
    page = render_report_html(report)
    assert "What the hardware applied: read" in page and "The difference:" not in page
    suite = ET.fromstring(render_junit(report)).find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["recovered_names"] == ""
