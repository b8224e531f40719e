"""Reports: results.jsonl as results arrive, report.json / junit.xml / report.html, resume, merge."""

from __future__ import annotations

import html.parser
import itertools
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import render_report_html
from ort_layouts.reports.junit import render_junit
from ort_layouts.reports.merge import merge_reports, write_matrix
from ort_layouts.reports.report import (
    HTML_FILE,
    JSON_FILE,
    JUNIT_FILE,
    META_FILE,
    RESULTS_FILE,
    Report,
    load_report,
    read_results,
)
from ort_layouts.reports.writer import ReportWriter, write_report

PROVIDER = "CPUExecutionProvider"


def _input_desc(shape: tuple[int, ...], perm: tuple[int, ...]) -> dict:
    # packed row-major strides of `shape`, permuted: the Transpose input as the DML EP reads it
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return {"data_type": "FLOAT32", "sizes": [shape[a] for a in perm], "strides": [strides[a] for a in perm],
            "total_tensor_size_in_bytes": 4 * int(__import__("math").prod(shape)),
            "guaranteed_base_offset_alignment": 0, "flags": 0}


def make_results() -> list[CaseResult]:
    """Four cases: a pass, a mismatch with its figures, an unsupported and an error."""
    t_pass = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    t_bad = Case("Transpose", "float32", (2, 3, 4), perm=(1, 0, 2))
    p_uns = Case("Pad", "int64", (3, 4), pads=(1, 2, 3, 4), mode="reflect")
    e_err = Case("Expand", "float16", (3,), target_shape=(2, 3))
    return [
        CaseResult(t_pass, Status.PASS, PROVIDER, device="test cpu", node_provider=PROVIDER, element_count=6,
                   descriptors={"input": _input_desc((2, 3), (1, 0))}, seconds=0.01),
        CaseResult(t_bad, Status.MISMATCH, PROVIDER, device="test cpu", node_provider=PROVIDER,
                   element_count=24, mismatch_count=16, first_mismatch_index=(0, 1, 0),
                   input_offset_in_elements=4,
                   output_offset_in_elements=4, expected_hex="0000803f", actual_hex="00000040",
                   diagnosis="output matches the input read packed (strides ignored)",
                   descriptors={"input": _input_desc((2, 3, 4), (1, 0, 2))}, seconds=0.02),
        CaseResult(p_uns, Status.UNSUPPORTED, PROVIDER, device="test cpu",
                   message="no kernel for Pad(int64) with reflect"),
        CaseResult(e_err, Status.ERROR, PROVIDER, device="test cpu", message="session.run failed: boom <&>"),
    ]


META = {"provider": PROVIDER, "device": "test cpu", "command": "ort-layouts validate",
        "environment": {"hostname": "h", "os": "TestOS", "python": "3.11", "versions": {"onnx": "1"}},
        "selection": {"provider": PROVIDER, "ops": ["Transpose"], "shard": ""}}


def test_report_json_round_trip(tmp_path: Path) -> None:
    results = make_results()
    report = Report(META, tuple(results))
    paths = write_report(report, tmp_path)
    assert set(paths) == {"json", "junit", "html"}
    loaded = load_report(tmp_path / JSON_FILE)
    assert [r.to_dict() for r in loaded.results] == [r.to_dict() for r in results]
    assert loaded.meta["provider"] == PROVIDER
    data = json.loads((tmp_path / JSON_FILE).read_text())
    assert data["summary"] == {"pass": 1, "mismatch": 1, "unsupported": 1, "error": 1}
    assert data["results"][1]["first_mismatch_index"] == [0, 1, 0]
    assert data["results"][1]["id"] == "Transpose-float32-2x3x4-perm1.0.2-random-s0"
    assert not list(tmp_path.glob(".*.tmp")), "temporary files left behind"


def test_counts_and_failures() -> None:
    report = Report(META, tuple(make_results()))
    assert report.counts() == {"pass": 1, "mismatch": 1, "unsupported": 1, "error": 1}
    assert [r.status for r in report.failures()] == [Status.MISMATCH, Status.ERROR]
    strict = [Status.MISMATCH, Status.UNSUPPORTED, Status.ERROR]
    assert [r.status for r in report.failures(strict=True)] == strict


def test_writer_appends_each_result_and_reads_back(tmp_path: Path) -> None:
    results = make_results()
    planned = [r.case.id for r in results]
    with ReportWriter(tmp_path, meta=META, planned=planned, interval_s=3600) as w:
        for i, r in enumerate(results):
            w.add(r)
            # the line is on disk as soon as add() returns
            lines = (tmp_path / RESULTS_FILE).read_text().splitlines()
            assert len(lines) == i + 1
            assert json.loads(lines[-1])["id"] == r.case.id
        report = w.write_summaries(finished=True)
    assert report.complete
    for name in (JSON_FILE, JUNIT_FILE, HTML_FILE, META_FILE):
        assert (tmp_path / name).is_file()
    assert [r.to_dict() for r in load_report(tmp_path).results] == [r.to_dict() for r in results]


def test_results_are_ordered_by_plan_not_arrival(tmp_path: Path) -> None:
    results = make_results()
    planned = [r.case.id for r in results]
    with ReportWriter(tmp_path, meta=META, planned=planned) as w:
        for r in reversed(results):
            w.add(r)
    assert [r.case.id for r in load_report(tmp_path).results] == planned


def test_truncated_last_line_is_ignored_and_repaired(tmp_path: Path) -> None:
    results = make_results()
    path = tmp_path / RESULTS_FILE
    good = "".join(json.dumps(r.to_dict()) + "\n" for r in results[:2])
    path.write_text(good + json.dumps(results[2].to_dict())[:40])
    assert [r.case.id for r in read_results(path)] == [r.case.id for r in results[:2]]
    read_results(path, repair=True)
    assert path.read_text() == good


def test_corrupt_line_before_the_last_raises(tmp_path: Path) -> None:
    results = make_results()
    path = tmp_path / RESULTS_FILE
    first, second = (json.dumps(r.to_dict()) for r in results[:2])
    path.write_text(first + "\n{not json\n" + second + "\n")
    with pytest.raises(ReportError, match="line 2"):
        read_results(path)


def test_resume_keeps_results_and_continues(tmp_path: Path) -> None:
    results = make_results()
    planned = [r.case.id for r in results]
    with ReportWriter(tmp_path, meta=META, planned=planned) as w:
        w.add(results[0])
        w.add(results[1])
    with open(tmp_path / RESULTS_FILE, "a") as f:  # a crash while writing the third line
        f.write('{"case": {"op": "Pa')
    with ReportWriter(tmp_path, meta=META, planned=planned, resume=True) as w:
        assert w.resumed
        assert w.done_ids == {planned[0], planned[1]}
        w.add(results[2])
        w.add(results[3])
        report = w.write_summaries(finished=True)
    assert [r.case.id for r in report.results] == planned
    assert [r.case.id for r in read_results(tmp_path / RESULTS_FILE)] == planned
    assert report.meta.get("resumed")


def test_a_resumed_report_keeps_the_command_that_started_it(tmp_path: Path) -> None:
    results = make_results()
    planned = [r.case.id for r in results]
    with ReportWriter(tmp_path, meta=META, planned=planned) as w:
        w.add(results[0])
    resuming = {**META, "command": "ort-layouts validate --resume"}
    with ReportWriter(tmp_path, meta=resuming, planned=planned, resume=True) as w:
        for result in results[1:]:
            w.add(result)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["command"] == "ort-layouts validate" and len(meta["resumed"]) == 1
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert junit.find(".//property[@name='command']").get("value") == "ort-layouts validate"  # type: ignore[union-attr]


@pytest.mark.parametrize("key, value", [("provider", "DmlExecutionProvider"), ("ops", ["Pad"]),
                                        ("shard", "2/4")], ids=["provider", "ops", "shard"])
def test_resume_refuses_another_selection(tmp_path: Path, key: str, value: object) -> None:
    results = make_results()
    with ReportWriter(tmp_path, meta=META, planned=[results[0].case.id]) as w:
        w.add(results[0])
    other = {**META, "selection": {**META["selection"], key: value}}
    with pytest.raises(ReportError, match=f"cannot resume .*{key}"):
        ReportWriter(tmp_path, meta=other, planned=[results[0].case.id], resume=True)
    # the report is untouched
    assert len(read_results(tmp_path / RESULTS_FILE)) == 1


def test_new_report_replaces_an_old_one(tmp_path: Path) -> None:
    results = make_results()
    with ReportWriter(tmp_path, meta=META, planned=[r.case.id for r in results]) as w:
        for r in results:
            w.add(r)
        w.write_summaries()
    # another selection (other planned cases) replaces it only when forced
    with ReportWriter(tmp_path, meta=META, planned=[results[0].case.id], force=True) as w:
        assert not w.done_ids
        assert json.loads((tmp_path / JSON_FILE).read_text())["results"] == []


def test_load_report_errors(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="does not exist"):
        load_report(tmp_path / "missing")
    with pytest.raises(ReportError, match="holds no report"):
        load_report(tmp_path)
    (tmp_path / "x.json").write_text("[1, 2]")
    with pytest.raises(ReportError):
        load_report(tmp_path / "x.json")
    (tmp_path / "y.json").write_text("{")
    with pytest.raises(ReportError, match="not valid JSON"):
        load_report(tmp_path / "y.json")


@pytest.mark.parametrize("name", [JSON_FILE, META_FILE])
def test_a_report_file_that_is_not_utf_8_is_a_report_error_naming_it(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(b'{"results": [], "device": "\xff"}')
    if name == META_FILE:  # a directory is read from its meta.json when it has results.jsonl
        (tmp_path / RESULTS_FILE).write_bytes(b"")
    with pytest.raises(ReportError, match=rf"{re.escape(str(tmp_path / name))} is not UTF-8 \(invalid start "
                                          r"byte at byte 27\); the file is damaged"):
        load_report(tmp_path)


def test_atomic_writes_put_u_fffd_for_a_lone_surrogate(tmp_path: Path) -> None:
    from ort_layouts.reports.report import atomic_write_text, atomic_write_texts

    atomic_write_text(tmp_path / "a.txt", "m\udcff.onnx \ud800!")
    assert (tmp_path / "a.txt").read_bytes() == b"m\xef\xbf\xbd.onnx \xef\xbf\xbd!"  # U+FFFD in UTF-8
    atomic_write_texts([(tmp_path / "b.txt", iter(["ok ", "\udfff", " é"]))])
    assert (tmp_path / "b.txt").read_bytes() == b"ok \xef\xbf\xbd \xc3\xa9"


# ---- JUnit ------------------------------------------------------------------------------------
def _junit(strict: bool = False) -> ET.Element:
    return ET.fromstring(render_junit(Report(META, tuple(make_results())), strict=strict))


def test_junit_one_testcase_per_case_with_figures() -> None:
    root = _junit()
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == \
        ("4", "1", "1", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [r.case.id for r in make_results()]
    assert cases[1].get("classname") == "ort_layouts.Transpose.float32"
    failure = cases[1].find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert "16 of 24" in message and "[0, 1, 0]" in message
    assert "expected bytes 0000803f, got 00000040" in message
    assert "strides ignored" in message
    props = {p.get("name"): p.get("value") for p in cases[1].iter("property")}
    assert props["mismatch_count"] == "16"
    assert props["first_mismatch_index"] == "0,1,0"
    assert props["input_offset_in_elements"] == "4" and props["output_offset_in_elements"] == "4"
    assert props["expected_hex"] == "0000803f" and props["actual_hex"] == "00000040"
    assert "strides ignored" in props["diagnosis"]
    out = cases[1].findtext("system-out") or ""
    assert "mismatch_count: 16" in out and '"strides": [4, 12, 1]' in out
    assert cases[2].find("skipped") is not None
    error = cases[3].find("error")
    assert error is not None and "boom <&>" in (error.text or "")
    assert cases[0].find("failure") is None and cases[0].find("skipped") is None


def test_junit_strict_makes_unsupported_a_failure() -> None:
    suite = _junit(strict=True).find("testsuite")
    assert suite is not None
    assert (suite.get("failures"), suite.get("skipped")) == ("2", "0")
    case = suite.findall("testcase")[2]
    assert case.find("failure") is not None and case.find("failure").get("type") == "unsupported"


# ---- HTML -------------------------------------------------------------------------------------
class _Collect(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def test_html_is_self_contained_and_shows_matrix_and_failures() -> None:
    page = render_report_html(Report(META, tuple(make_results())))
    parser = _Collect()
    parser.feed(page)
    for tag, attrs in parser.tags:
        for attr in ("src", "href"):
            value = attrs.get(attr, "") or ""
            assert not value or value.startswith("#") or value.startswith("data:"), (tag, attrs)
        assert tag != "link" and tag != "script"
    ids = {attrs.get("id") for _, attrs in parser.tags}
    assert {"summary", "matrix", "failures"} <= ids
    assert "case-Transpose-float32-2x3x4-perm1.0.2-random-s0" in ids
    cells = [a for t, a in parser.tags if t == "td" and "cell" in (a.get("class") or "")]
    by_key = {(a["data-op"], a["data-dtype"], a["data-rank"]): a["class"] for a in cells}
    assert by_key[("Transpose", "float32", "2")] == "cell pass"
    assert by_key[("Transpose", "float32", "3")] == "cell fail"
    assert by_key[("Pad", "int64", "2")] == "cell unsupported"
    assert by_key[("Expand", "float16", "1")] == "cell fail"
    assert "output matches the input read packed (strides ignored)" in page
    assert "boom &lt;&amp;&gt;" in page
    assert "FAIL" in page


def test_html_all_pass_verdict() -> None:
    page = render_report_html(Report(META, (make_results()[0],)))
    assert 'class="verdict pass"' in page and "None." in page


# ---- merge ------------------------------------------------------------------------------------
def _write(tmp_path: Path, name: str, results: list[CaseResult], device: str) -> Path:
    d = tmp_path / name
    write_report(Report({**META, "device": device}, tuple(results)), d)
    return d


def test_merge_two_reports(tmp_path: Path) -> None:
    a_results = make_results()
    b_results = [CaseResult(r.case, Status.PASS, PROVIDER, device="gpu b") for r in a_results[:3]]
    a = _write(tmp_path, "a", a_results, "gpu a")
    b = _write(tmp_path, "b", b_results, "gpu b")
    matrix = merge_reports([a, b / JSON_FILE])
    assert [c.device for c in matrix.columns] == ["gpu a", "gpu b"]
    assert [c.id for c in matrix.cases] == [r.case.id for r in a_results]
    # the mismatch and the unsupported case differ; the error case was not run by b
    assert set(matrix.differing()) == {a_results[1].case.id, a_results[2].case.id}
    last = matrix.results[a_results[3].case.id]
    assert last[0] is not None and last[0].status is Status.ERROR and last[1] is None
    table = matrix.text_table()
    assert "[1] CPUExecutionProvider / gpu a" in table
    rows = {tuple(line.split()[:3]): line.split()[3:] for line in table.splitlines()[2:6]}
    assert rows[("Transpose", "float32", "3")] == ["0/1", "1F", "1/1"]
    assert rows[("Pad", "int64", "2")] == ["0/1", "1U", "1/1"]
    assert rows[("Expand", "float16", "1")] == ["0/1", "1F", "-"]
    paths = write_matrix(matrix, tmp_path / "m")
    data = json.loads(paths["json"].read_text())
    assert len(data["columns"]) == 2 and len(data["cases"]) == 4
    assert data["cases"][1]["results"][0]["status"] == "mismatch"
    assert data["cases"][1]["results"][1] == {"status": "pass"}
    assert "<table" in paths["html"].read_text()


def test_merge_needs_reports() -> None:
    with pytest.raises(ReportError, match="nothing to merge"):
        merge_reports([])


# ---- known issues -----------------------------------------------------------------------------
def _with_known_issue() -> list[CaseResult]:
    import dataclasses

    results = make_results()
    known = dataclasses.replace(
        results[1], case=Case("Pad", "float16", (2, 3), pads=(1, 1, 1, 1)),
        known_issue="float16 goes through float32")
    return [results[0], known]


def test_known_issue_is_not_a_failure_unless_strict() -> None:
    from ort_layouts.reports.report import summary_line

    report = Report(META, tuple(_with_known_issue()))
    assert report.failures() == ()
    assert len(report.failures(strict=True)) == 1
    assert len(report.known_issues()) == 1
    assert "1 mismatched (1 explained by known issues)" in summary_line(report)
    assert "failing: --strict" in summary_line(report, strict=True)


def test_known_issue_in_junit_and_html() -> None:
    report = Report(META, tuple(_with_known_issue()))
    suite = ET.fromstring(render_junit(report)).find("testsuite")
    assert suite is not None and (suite.get("failures"), suite.get("skipped")) == ("0", "1")
    skipped = suite.findall("testcase")[1].find("skipped")
    assert skipped is not None and skipped.get("type") == "known-issue"
    assert "float16 goes through float32" in skipped.get("message", "")
    strict_suite = ET.fromstring(render_junit(report, strict=True)).find("testsuite")
    assert strict_suite is not None and strict_suite.get("failures") == "1"
    page = render_report_html(report)
    assert 'class="cell known"' in page and 'class="verdict pass"' in page
    assert 'id="known"' in page and "float16 goes through float32" in page
    assert 'class="verdict fail"' in render_report_html(report, strict=True)


def test_summaries_are_rewritten_while_results_arrive(tmp_path: Path) -> None:
    results = make_results()
    with ReportWriter(tmp_path, meta=META, planned=[r.case.id for r in results], interval_s=0) as w:
        w.add(results[0])
        first = json.loads((tmp_path / JSON_FILE).read_text())
        assert len(first["results"]) == 1 and first["complete"] is False
        w.add(results[1])
        assert len(json.loads((tmp_path / JSON_FILE).read_text())["results"]) == 2
        assert "Transpose-float32-2x3x4-perm1.0.2-random-s0" in (tmp_path / HTML_FILE).read_text()


def test_each_result_is_flushed_at_once_and_fsynced_at_a_bounded_rate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line reaches the operating system as add() returns; the disk sync runs once per
    FSYNC_INTERVAL_S while results stream in (a fake clock: 10 ms a result), and once more when
    the writer closes."""
    from ort_layouts.reports import writer as _report

    now = [1000.0]
    synced: list[float] = []
    monkeypatch.setattr(_report.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(_report.os, "fsync", lambda fd: synced.append(now[0]))
    results = make_results() * 50
    planned = [r.case.id for r in results]
    w = ReportWriter(tmp_path, meta=META, planned=planned, interval_s=3600)
    try:
        synced.clear()  # the meta and the first summaries, written atomically as the run starts
        for i, r in enumerate(results):
            now[0] += 0.01
            w.add(r)
            with open(tmp_path / RESULTS_FILE, "rb") as f:  # another reader sees it at once
                assert f.read().count(b"\n") == i + 1
        during = list(synced)
    finally:
        w.close()  # results.jsonl alone (a with block would write the summaries too)
    # 200 results over 2 s of fake time: a sync each time 0.2 s has passed since the last one
    assert _report.FSYNC_INTERVAL_S == 0.2
    assert 9 <= len(during) <= 10
    assert all(b - a >= 0.2 - 1e-9 for a, b in itertools.pairwise(during))
    assert len(synced) == len(during) + 1  # closing syncs what is left


def test_a_matrix_cell_links_to_its_first_failure() -> None:
    from ort_layouts.reports.html import case_anchor, render_report_html
    from ort_layouts.reports.report import Report

    def result(perm: tuple[int, int], status: Status, known: str = "") -> CaseResult:
        return CaseResult(Case("Transpose", "float32", (2, 3), perm=perm), status, "CPUExecutionProvider",
                          known_issue=known, message="x")

    known = result((0, 1), Status.MISMATCH, known="a known deviation")
    error = result((1, 0), Status.ERROR)
    page = render_report_html(Report({"provider": "CPUExecutionProvider"}, (known, error)))
    cell = re.search(r'<td class="cell [^"]*" data-op="Transpose".*?</td>', page)
    assert cell is not None and f'href="#{case_anchor(error.case.id)}"' in cell.group(0)
    # with no failure the cell links to its (known) mismatch
    page = render_report_html(Report({"provider": "CPUExecutionProvider"}, (known,)))
    cell = re.search(r'<td class="cell [^"]*" data-op="Transpose".*?</td>', page)
    assert cell is not None and f'href="#{case_anchor(known.case.id)}"' in cell.group(0)


def test_the_page_draws_the_first_100_failing_cases_and_lists_the_rest() -> None:
    """README: "A report draws the layouts of the first 100 failing cases; the rest are listed"."""
    from ort_layouts.operators.expected import dml_operator

    results = []
    for seed in range(101):
        case = Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed)
        results.append(CaseResult(case, Status.MISMATCH, "CPUExecutionProvider", element_count=6,
                                  mismatch_count=1, first_mismatch_index=(0, 0),
                                  descriptors=dml_operator(case).to_dict()))
    page = render_report_html(Report({"planned": [r.case.id for r in results]}, tuple(results)))
    sections = page.split('<section class="case mismatch"')[1:]
    assert len(sections) == 101  # every failing case has its section
    drawn = [s for s in sections if "<figure" in s.split("</section>")[0]]
    assert len(drawn) == 100
    assert "<figure" not in sections[100].split("</section>")[0]  # the 101st: listed, not drawn
    assert results[100].case.id in sections[100]
