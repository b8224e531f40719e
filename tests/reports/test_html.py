"""report.html and matrix.html hold what UTF-8 holds: a lone surrogate (a name decoded with
surrogateescape) reaching the page is replaced by U+FFFD, as an HTML parser decodes bytes that
are not UTF-8, and never stops the page being written; so is a control character, U+FFFE or
U+FFFF, as junit.xml replaces them."""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import all_cases_row_texts, escape, render_report_html
from ort_layouts.reports.merge import MATRIX_HTML, merge_reports, write_matrix
from ort_layouts.reports.report import HTML_FILE, Report
from ort_layouts.reports.writer import write_report

CPU = "CPUExecutionProvider"
BAD = "a\udcffb\ud800<c>"
GOOD = "a\ufffdb\ufffd&lt;c&gt;"  # as it is escaped in the page


class _Text(HTMLParser):
    """The page's text and attribute values, as a browser reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [v for _, v in attrs if v]

    def handle_data(self, data: str) -> None:
        self.found.append(data)


def _read(path: Path) -> tuple[str, list[str]]:
    text = path.read_bytes().decode("utf-8")  # strict: raises on what is not UTF-8
    parser = _Text()
    parser.feed(text)
    return text, parser.found


def _results() -> tuple[CaseResult, ...]:
    return (
        CaseResult(Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0)), Status.ERROR, CPU,
                   device="dev" + BAD, node_provider="np" + BAD, message="boom " + BAD),
        CaseResult(Case("Transpose", DataType.FLOAT32, (3, 2), perm=(1, 0)), Status.PASS, CPU,
                   device="dev" + BAD, node_provider="np" + BAD, element_count=6),
        CaseResult(Case("Pad", DataType.INT64, (3, 4), pads=(1, 2, 3, 4), mode="reflect"), Status.UNSUPPORTED,
                   CPU, message="no kernel " + BAD),
    )


def test_escape_replaces_lone_surrogates() -> None:
    assert escape("\ud800") == "\ufffd"
    assert escape("x\udcff\udfff") == "x\ufffd\ufffd"
    assert escape(BAD) == GOOD
    assert escape("\U0001f600 é") == "\U0001f600 é"  # a whole character outside the BMP stays
    for text in ("plain", "<&>\"'", "é→"):
        assert escape(text) == html.escape(text, quote=True)


def test_the_list_of_all_cases_replaces_a_lone_surrogate_in_a_node_provider() -> None:
    rows = all_cases_row_texts(_results())
    assert all("\ud800" not in row and "\udcff" not in row for row in rows)
    assert "<td>np" + GOOD + "</td>" in rows[0]


def test_a_page_of_names_with_lone_surrogates_is_written_in_utf_8(tmp_path: Path) -> None:
    meta = {"provider": CPU + BAD, "device": "dev" + BAD, "command": "ort-layouts validate --model m" + BAD,
            "model": "m" + BAD + ".onnx", "started": "2026-01-02T03:04:05+00:00",
            "environment": {"hostname": "h" + BAD, "versions": {"onnx" + BAD: "1" + BAD}},
            "stack": {"directml_version": "1.15" + BAD}}
    report = Report(meta, _results())
    page = render_report_html(report)
    assert "\ud800" not in page and "\udcff" not in page
    write_report(report, tmp_path)
    text, found = _read(tmp_path / HTML_FILE)
    read = "a\ufffdb\ufffd<c>"  # what a browser shows
    for expected in ("dev" + read, "ort-layouts validate --model m" + read, "h" + read, "onnx" + read,
                     "1" + read, "error: boom " + read, "np" + read, "no kernel " + read):
        assert any(expected in piece for piece in found), expected
    assert page == text


def test_a_matrix_of_reports_with_lone_surrogates_is_written_in_utf_8(tmp_path: Path) -> None:
    reports = [Report({"provider": CPU, "device": "dev" + BAD, "environment": {"hostname": "h"}}, _results()),
               Report({"provider": CPU, "device": "other"}, _results()[1:])]
    paths = write_matrix(merge_reports(reports), tmp_path, text=True)
    _, found = _read(tmp_path / MATRIX_HTML)
    assert any(f"{CPU} / dev" + "a\ufffdb\ufffd<c> / h" in piece for piece in found)
    assert "deva\ufffdb\ufffd<c>" in paths["text"].read_bytes().decode("utf-8")


CONTROLS = "a\x00b\x01c\x1bd\x0b\x0ce\ufffef\uffff"  # NUL, SOH, ESC, VT, FF, U+FFFE, U+FFFF
CONTROLS_READ = "a\ufffdb\ufffdc\ufffdd\ufffd\ufffde\ufffdf\ufffd"


def test_escape_replaces_what_xml_cannot_hold_as_junit_does() -> None:
    """report.html held the raw NUL, control characters and U+FFFE/U+FFFF of an ORT message, a
    device name or a command line, which junit.xml replaces by U+FFFD."""
    from ort_layouts.reports.junit import _clean

    assert escape(CONTROLS) == CONTROLS_READ == _clean(CONTROLS)
    assert escape("tab\tline\nreturn\r") == "tab\tline\nreturn\r"  # what XML holds stays


def test_a_page_of_control_characters_holds_none(tmp_path: Path) -> None:
    case = Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0))
    results = (CaseResult(case, Status.ERROR, CPU, device="dev" + CONTROLS, node_provider="np" + CONTROLS,
                          message="boom " + CONTROLS),)
    meta = {"provider": CPU, "device": "dev" + CONTROLS, "command": "ort-layouts validate " + CONTROLS,
            "environment": {"hostname": "h" + CONTROLS}}
    write_report(Report(meta, results), tmp_path)
    text, found = _read(tmp_path / HTML_FILE)
    assert not set(CONTROLS) - set("abcdef") & set(text)
    for expected in ("dev" + CONTROLS_READ, "ort-layouts validate " + CONTROLS_READ, "h" + CONTROLS_READ,
                     "error: boom " + CONTROLS_READ, "np" + CONTROLS_READ):
        assert any(expected in piece for piece in found), expected
