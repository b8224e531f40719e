"""The reports as the writer makes them hold what they held when each was made the plain way:
each results.jsonl line the JSON of ``CaseResult.to_dict`` without the fields equal to their
dataclass defaults, report.json ``Report.to_dict``, junit.xml what ElementTree writes for the
tree the JUnit format describes (a pass without its empty properties), and the HTML's list of
all cases. The references here are the plain ways, written out in this file: json.dumps of
``to_dict`` less its defaults (read from ``dataclasses.fields``), an ElementTree tree
serialized after ``ET.indent``, ``html.escape``, and ordering by sort."""

from __future__ import annotations

import dataclasses
import html
import json
import math
import os
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.suite import standard_suite
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import all_cases_row_texts, escape, render_report_html
from ort_layouts.reports.junit import render_junit
from ort_layouts.reports.report import (
    JSON_FILE,
    JUNIT_FILE,
    RESULTS_FILE,
    Report,
    failure_text,
    load_report,
    ordered_positions,
    ordered_results,
    result_figures,
)
from ort_layouts.reports.writer import ReportWriter, result_json, result_line, write_report

ROOT = Path(__file__).resolve().parents[2]
CPU = "CPUExecutionProvider"
# text an XML, HTML or JSON writer must escape, or cannot hold, or a format string would read
AWKWARD = 'a<b>&"c"\'d\'\n\r\tе→{0}{}{{%s\\ \x01\x1f\ufffe end'


# ---- the references: the plain ways -------------------------------------------------------

def _without_defaults(data: dict[str, Any], cls: type) -> dict[str, Any]:
    """``data`` (a dataclass's ``to_dict``) without the fields whose value equals the field's
    default."""
    defaults = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            defaults[f.name] = f.default_factory()
    return {k: v for k, v in data.items()
            if k not in defaults or (v is not None if defaults[k] is None else v != defaults[k])}


def _plain_dict(result: CaseResult) -> dict[str, Any]:
    d = _without_defaults(result.to_dict(), CaseResult)
    d["case"] = _without_defaults(d["case"], Case)
    return d


def _plain_line(result: CaseResult) -> str:
    return json.dumps(_plain_dict(result), separators=(",", ":"))


_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: object) -> str:
    return str(_INVALID_XML.sub("\ufffd", str(text)))


def _reference_junit(report: Report, *, strict: bool = False) -> str:
    """The JUnit XML as an ElementTree tree, indented and serialized by ElementTree."""
    counts = report.counts()
    known = len(report.known_issues())
    unsupported_fail = strict and counts["unsupported"]
    suites = ET.Element("testsuites")
    suite_attrs = {
        "name": f"ort_layouts.{report.meta.get('provider', 'unknown')}",
        "tests": str(len(report.results)),
        "failures": str(counts["mismatch"] - (0 if strict else known)
                        + (counts["unsupported"] if unsupported_fail else 0)),
        "errors": str(counts["error"]),
        "skipped": str(0 if strict else counts["unsupported"] + known),
        "time": f"{sum(r.seconds for r in report.results):.3f}",
    }
    started = report.meta.get("started")
    if started is not None:  # the samples' starts are UTC: JUnit's schema has them without "+00:00"
        assert isinstance(started, str) and started.endswith("+00:00"), started
        suite_attrs["timestamp"] = started.removesuffix("+00:00")
    suite_attrs["hostname"] = str(report.meta.get("environment", {}).get("hostname", ""))
    suite = ET.SubElement(suites, "testsuite", suite_attrs)
    props = ET.SubElement(suite, "properties")
    env = report.meta.get("environment", {})
    suite_props = {
        "provider": report.meta.get("provider", ""), "device": report.meta.get("device", ""),
        "driver": report.meta.get("driver", ""), "command": report.meta.get("command", ""),
        "os": env.get("os", ""), "python": env.get("python", ""),
        **{f"version.{k}": v for k, v in env.get("versions", {}).items()},
        **{f"stack.{k}": v for k, v in (report.meta.get("stack") or {}).items()},
    }
    for name, value in suite_props.items():
        ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
    for r in report.results:
        case = ET.SubElement(suite, "testcase", {
            "classname": f"ort_layouts.{r.case.op}.{r.case.data_type.name.lower()}", "name": r.case.id,
            "time": f"{r.seconds:.6f}"})
        text = _clean(failure_text(r))
        if r.status is Status.MISMATCH and r.known_issue and not strict:
            ET.SubElement(case, "skipped", {"message": text, "type": "known-issue"})
        elif r.status is Status.MISMATCH:
            ET.SubElement(case, "failure", {"message": text, "type": "mismatch"}).text = text
        elif r.status is Status.ERROR:
            ET.SubElement(case, "error", {"message": text, "type": "error"}).text = _clean(r.message or text)
        elif r.status is Status.UNSUPPORTED:
            if strict:
                ET.SubElement(case, "failure", {"message": text, "type": "unsupported"}).text = text
            else:
                ET.SubElement(case, "skipped", {"message": text})
        case_props = ET.SubElement(case, "properties")
        figures = result_figures(r)
        for name, value in figures.items():
            if r.status is Status.PASS and value == "" and name != "case_id":  # a pass: not its empty ones
                continue
            ET.SubElement(case_props, "property", {"name": name, "value": _clean(value)})
        if r.status is not Status.PASS:
            lines = [f"{k}: {v}" for k, v in figures.items() if v != ""]
            if r.descriptors:
                lines.append("descriptors: " + json.dumps(r.descriptors, sort_keys=True))
            ET.SubElement(case, "system-out").text = _clean("\n".join(lines) + "\n")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _reference_order(results: Sequence[CaseResult], planned: Sequence[str] | None) -> list[CaseResult]:
    """One result per id (the last), sorted by planned position (an id planned twice: its last),
    unplanned ones after all planned, by last arrival."""
    by_id: dict[str, CaseResult] = {}
    for r in results:
        by_id.pop(r.case.id, None)
        by_id[r.case.id] = r
    order = {cid: i for i, cid in enumerate(planned or ())}
    arrival = {cid: i for i, cid in enumerate(by_id)}
    unplanned = len(planned or ())
    return sorted(by_id.values(), key=lambda r: (order.get(r.case.id, unplanned), arrival[r.case.id]))


def _trees_equal(a: ET.Element, b: ET.Element) -> bool:
    return (a.tag == b.tag and a.attrib == b.attrib and (a.text or "") == (b.text or "")
            and (a.tail or "") == (b.tail or "") and len(a) == len(b)
            and all(_trees_equal(x, y) for x, y in zip(a, b, strict=True)))


# ---- the sample ---------------------------------------------------------------------------

def _sample() -> list[CaseResult]:
    """Every status and every way a case can go wrong, text XML and HTML must escape or cannot
    hold, figures that are None and set, a recovery, nested descriptors."""
    t = Case("Transpose", DataType.FLOAT32, (2, 3, 4), perm=(1, 0, 2))
    desc = {"operator": "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
            "input": {"data_type": "FLOAT32", "sizes": [3, 2, 4], "strides": [4, 12, 1],
                      "total_tensor_size_in_bytes": 96, "guaranteed_base_offset_alignment": 0, "flags": 0},
            "output": {"data_type": "FLOAT32", "sizes": [3, 2, 4], "strides": None,
                       "total_tensor_size_in_bytes": 96, "guaranteed_base_offset_alignment": 0, "flags": 0},
            "note": AWKWARD, "ratio": 0.1, "list": [[1, 2], {"é": True}]}
    return [
        CaseResult(Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0)), Status.PASS, CPU, device="cpu",
                   node_provider=CPU, element_count=6, descriptors=desc, seconds=0.0123456789),
        CaseResult(t, Status.MISMATCH, CPU, device=AWKWARD, node_provider=CPU, element_count=24,
                   mismatch_count=16, first_mismatch_index=(0, 1, 0), input_offset_in_elements=4,
                   output_offset_in_elements=12, expected_hex="0000803f", actual_hex="00000040",
                   diagnosis="strides ignored " + AWKWARD, descriptors=desc, seconds=1e-7,
                   recovered={"kind": "strided read", "operator": "IDENTITY", "names": ["strides"],
                              "applied": {"sizes": [3, 2, 4], "strides_in_elements": [8, 4, 1]},
                              "expected": {"sizes": [3, 2, 4], "strides_in_elements": [4, 12, 1]}}),
        CaseResult(Case("Pad", DataType.FLOAT16, (3, 4), pads=(1, 0, 0, 2), mode="reflect"), Status.MISMATCH,
                   CPU, element_count=30, mismatch_count=2, first_mismatch_index=(1, 1), diagnosis="d",
                   known_issue="a known deviation " + AWKWARD, seconds=2.5),
        CaseResult(Case("Pad", DataType.INT64, (3, 4), pads=(1, 2, 3, 4), mode="reflect"), Status.UNSUPPORTED,
                   CPU, message="no kernel " + AWKWARD),
        CaseResult(Case("Expand", DataType.FLOAT16, (3,), target_shape=(2, 3)), Status.ERROR, CPU,
                   message="session.run failed: boom <&>", seconds=12345.678),
        CaseResult(Case("Expand", DataType.INT8, (1,), target_shape=(4,)), Status.ERROR, CPU),  # no message
        CaseResult(Case("Transpose", DataType.UINT8, (2, 2), perm=(1, 0),
                        origin="model:/m {1}/\"x\".onnx#n<&>é"),
                   Status.PASS, AWKWARD, device="d&d", node_provider='"quoted"', element_count=4),
    ]


META: dict[str, Any] = {
    "provider": CPU, "device": "test <cpu> & \"co\"", "driver": 7,
    "command": "ort-layouts validate " + AWKWARD,
    "environment": {"hostname": "h&h", "os": "TestOS", "python": "3.11", "versions": {"onnx": "1", "n": 2}},
    "stack": {"directml": "1.15.4", "odd": AWKWARD}, "started": "2024-01-01T00:00:00+00:00",
    "selection": {"provider": CPU, "ops": [], "shard": ""},
}


# ---- results.jsonl lines --------------------------------------------------------------------

def test_each_line_is_the_json_of_to_dict() -> None:
    for r in _sample():
        assert result_json(r) == _plain_line(r)
        assert result_line(r) == (_plain_line(r) + "\n").encode("utf-8")
        assert CaseResult.from_dict(json.loads(result_json(r))) == r


def test_each_line_of_every_standard_suite_case_is_the_json_of_to_dict() -> None:
    statuses = list(Status)
    for i, case in enumerate(standard_suite()):
        r = CaseResult(case, statuses[i % len(statuses)], CPU, device="cpu" if i % 5 else "",
                       node_provider=CPU if i % 7 else "", element_count=i, seconds=i / 7,
                       first_mismatch_index=(i, 0) if i % 3 else None,
                       descriptors={"operator": "DML_OPERATOR_X", "n": i, "s": None} if i % 2 else {})
        line = result_json(r, case.id)
        assert line == _plain_line(r), case.id
        assert CaseResult.from_dict(json.loads(line)) == r


@pytest.mark.parametrize("origin, descriptors", [
    ("", {"operator": "DML_OPERATOR_ELEMENT_WISE_IDENTITY", "sizes": [2, 3], "strides": None}),
    ("model:/m/é→.onnx#n\x01", {"operator": "X"}),  # escaped as json.dumps escapes it: the line stays ASCII
    ("", {"operator": "X", "note": "ü\ud800"}),  # a lone surrogate, which orjson refuses
    ("", {"operator": "X", "offset": 2**64 + 1}),  # an int past 64 bits, which orjson refuses
    ("", {"operator": "X", "nested": {"a": [1, {"b": None}], "t": (1, 2)}, "flag": True}),
])
def test_a_passing_line_is_the_json_of_to_dict_whatever_its_values(
        origin: str, descriptors: dict[str, Any]) -> None:
    case = Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0), origin=origin)
    r = CaseResult(case, Status.PASS, CPU, device="d", node_provider=CPU, element_count=6,
                   descriptors=descriptors, seconds=0.125)
    line = result_json(r, case.id)
    assert line == _plain_line(r)
    assert line.isascii()
    assert json.loads(line)["descriptors"] == json.loads(json.dumps(descriptors))


def test_a_line_leaves_out_exactly_the_fields_equal_to_their_defaults() -> None:
    case = Case("Pad", DataType.FLOAT16, (3, 4), pads=(1, 0, 0, 2), mode="reflect")
    full = CaseResult(case, Status.MISMATCH, CPU, device="d", node_provider=CPU, element_count=30,
                      mismatch_count=2, first_mismatch_index=(0, 0), input_offset_in_elements=0,
                      output_offset_in_elements=0, expected_hex="00", actual_hex="01", diagnosis="x",
                      known_issue="k", recovered={"kind": "k"}, message="m", descriptors={"a": 1},
                      seconds=0.5)
    data = json.loads(result_json(full))
    assert set(data) == {"case", "id", *(f.name for f in dataclasses.fields(CaseResult))}
    assert data["case"] == {"op": "Pad", "data_type": "FLOAT16", "shape": [3, 4], "pads": [1, 0, 0, 2],
                            "mode": "reflect"}
    bare = CaseResult(Case("Transpose", DataType.INT8, (2,), perm=(0,), seed=0), Status.PASS, CPU)
    assert json.loads(result_json(bare)) == {
        "case": {"op": "Transpose", "data_type": "INT8", "shape": [2], "perm": [0]},
        "status": "pass", "provider": CPU, "id": bare.case.id}
    for r in (full, bare):
        assert CaseResult.from_dict(json.loads(result_json(r))) == r
        assert CaseResult.from_dict(r.to_dict()) == r == CaseResult.from_dict(r.to_dict(defaults=False))


def test_a_value_json_cannot_hold_fails_as_to_dict_does() -> None:
    r = CaseResult(Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0)), Status.PASS, CPU,
                   descriptors={"sizes": {2, 3}})
    with pytest.raises(TypeError, match="set"):
        json.dumps(r.to_dict())
    with pytest.raises(TypeError, match="set"):
        result_json(r)


class _MyResult(CaseResult):
    def to_dict(self, *, defaults: bool = True) -> dict[str, Any]:
        return {**CaseResult.to_dict(self, defaults=defaults), "extra": 1}


def test_a_result_of_another_class_is_written_by_its_to_dict() -> None:
    r = _MyResult(Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0)), Status.PASS, CPU)
    assert json.loads(result_json(r))["extra"] == 1
    assert result_json(r) == json.dumps(r.to_dict(), separators=(",", ":"))


# ---- junit.xml -------------------------------------------------------------------------------

@pytest.mark.parametrize("strict", [False, True])
def test_junit_is_what_elementtree_writes(strict: bool) -> None:
    report = Report(META, tuple(_sample()))
    made, reference = render_junit(report, strict=strict), _reference_junit(report, strict=strict)
    assert _trees_equal(ET.fromstring(made.encode("utf-8")), ET.fromstring(reference.encode("utf-8")))
    assert made == reference


def test_junit_of_no_results_and_of_a_bare_meta() -> None:
    for report in (Report(META, ()), Report({}, ()), Report({}, tuple(_sample()[:1]))):
        assert render_junit(report) == _reference_junit(report)


def test_junit_of_a_standard_suite_sample_is_what_elementtree_writes() -> None:
    statuses = list(Status)
    results = tuple(CaseResult(c, statuses[i % 5 % 4], CPU, device="cpu", node_provider=CPU,
                               element_count=i, mismatch_count=i % 2, known_issue="k" if i % 10 == 1 else "",
                               message="m" if i % 4 == 2 else "", seconds=i / 1000)
                    for i, c in enumerate(standard_suite()[::9]))
    report = Report(META, results)
    assert render_junit(report) == _reference_junit(report)
    assert render_junit(report, strict=True) == _reference_junit(report, strict=True)


def test_junit_of_passes_whose_figures_hold_braces_is_what_elementtree_writes() -> None:
    """Braces are nothing XML escapes: passes whose provider, device or node provider hold
    them, alone or as a format's fields, scalars among them, are written as any other."""
    names = ["dev{0}", "{1}", "p}{3}", "{", "}", "{{2}}", "x{4}y{0}"]
    cases = [Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0)),
             Case("Transpose", DataType.INT8, (), perm=()),
             Case("Expand", DataType.UINT8, (3,), target_shape=(2, 3))]
    results = tuple(CaseResult(case, Status.PASS, CPU if i % 2 else name, device=name,
                               node_provider=names[(i + 1) % len(names)], element_count=6, seconds=i / 8)
                    for i, name in enumerate(names) for case in cases)
    report = Report(META, results)
    made = render_junit(report)
    assert made == _reference_junit(report)
    assert 'value="dev{0}" />' in made and 'value="x{4}y{0}" />' in made


# ---- report.html -----------------------------------------------------------------------------

def test_html_escape_is_html_escape() -> None:
    """Of the text XML can hold; what it cannot hold is U+FFFD, as in junit.xml."""
    from ort_layouts.reports.report import replace_not_xml

    for text in (AWKWARD, "", "plain-id-s0", "'", '"', "&amp;", 3, None, 0.5):
        assert escape(text) == html.escape(replace_not_xml(str(text)), quote=True)
    assert escape(AWKWARD) != html.escape(AWKWARD, quote=True)


def test_the_list_of_all_cases_holds_each_case_as_before() -> None:
    results = _sample()
    reference = "".join(f'<tr><td><code>{html.escape(r.case.id)}</code></td><td class="{r.status.value}">'
                        f"{html.escape(r.status.value)}</td><td>{html.escape(r.node_provider)}</td>"
                        f'<td class="seconds">{r.seconds:.4f}</td></tr>' for r in results)
    assert "".join(all_cases_row_texts(results)) == reference
    page = render_report_html(Report(META, tuple(results)))
    assert reference in page


# ---- ordering --------------------------------------------------------------------------------

def test_ordered_positions_keep_the_last_result_of_each_case_in_planned_order() -> None:
    rng = random.Random(11)
    cases = [Case("Transpose", DataType.FLOAT32, (2, k + 1), perm=(1, 0)) for k in range(12)]
    for trial in range(300):
        arrived = [CaseResult(rng.choice(cases), rng.choice(list(Status)), CPU, seconds=n)
                   for n in range(rng.randrange(0, 30))]
        ids = [c.id for c in cases]
        chosen = rng.sample(ids, rng.randrange(0, len(ids) + 1))
        if trial % 5 == 0:  # an id planned twice
            chosen = [*chosen, *chosen[:2]]
        planned = None if trial % 7 == 0 else chosen
        expected = _reference_order(arrived, planned)
        got = ordered_results(arrived, planned)
        assert [(r.case.id, r.seconds) for r in got] == [(r.case.id, r.seconds) for r in expected]
        positions = ordered_positions([r.case.id for r in arrived], planned)
        assert [arrived[i] for i in positions] == list(got)


# ---- a report directory ----------------------------------------------------------------------

# a run's meta with no provider: one of the sample's results is of an awkward provider, which a
# writer of a report on the meta's provider refuses (as that report's resume would)
RUN_META = {k: v for k, v in META.items() if k not in ("started", "provider")}


def _check_directory(directory: Path, meta: dict[str, Any], planned: list[str],
                     arrived: Sequence[CaseResult], strict: bool) -> None:
    expected = _reference_order(arrived, planned)
    lines = (directory / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    assert lines == [_plain_line(r) for r in expected]
    data = json.loads((directory / JSON_FILE).read_text(encoding="utf-8"))
    written_meta = load_report(directory).meta
    assert written_meta["planned"] == planned
    assert {k: v for k, v in meta.items() if k != "selection"}.items() <= written_meta.items()
    assert data == json.loads(json.dumps(Report(written_meta, tuple(expected)).to_dict(strict=strict)))
    assert data["results"] == [_plain_dict(r) for r in expected]
    assert [CaseResult.from_dict(x) for x in data["results"]] == list(expected)
    junit = (directory / JUNIT_FILE).read_bytes().decode("utf-8")  # "\r" in text stays
    assert junit == _reference_junit(Report(written_meta, tuple(expected)), strict=strict)


@pytest.mark.parametrize(("strict", "shuffle"), [(False, False), (False, True), (True, True)])
def test_a_run_writes_each_result_at_once_and_the_plain_reports_at_the_end(
        tmp_path: Path, strict: bool, shuffle: bool) -> None:
    results = _sample()
    planned = [r.case.id for r in results]
    arrived = list(results)
    if shuffle:  # batches finish out of order; a case run twice keeps its last result
        random.Random(3).shuffle(arrived)
        arrived.insert(0, CaseResult(arrived[3].case, Status.ERROR, CPU, message="first try"))
    meta = RUN_META
    writer = ReportWriter(tmp_path, meta=meta, planned=planned, strict=strict, interval_s=math.inf)
    try:
        for n, r in enumerate(arrived, 1):
            writer.add(r)
            on_disk = (tmp_path / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
            assert on_disk == [_plain_line(x) for x in arrived[:n]]  # nothing known is missing on disk
        writer.write_summaries(finished=True)
    finally:
        writer.close()
    _check_directory(tmp_path, meta, planned, arrived, strict)


def test_a_resumed_run_writes_the_plain_reports(tmp_path: Path) -> None:
    results = _sample()
    planned = [r.case.id for r in results]
    meta = RUN_META
    first = ReportWriter(tmp_path, meta=meta, planned=planned, interval_s=math.inf)
    for r in results[:3]:
        first.add(r)
    first.close()  # the run stops before it ends
    with (tmp_path / RESULTS_FILE).open("ab") as f:
        f.write(b'{"cut sho')  # and the last line was cut short
    second = ReportWriter(tmp_path, meta=meta, planned=planned, resume=True, interval_s=math.inf)
    try:
        assert second.done_ids == {r.case.id for r in results[:3]}
        for r in reversed(results[3:]):
            second.add(r)
        second.write_summaries(finished=True)
    finally:
        second.close()
    _check_directory(tmp_path, meta, planned, results, False)


@pytest.fixture(scope="module")
def suite_results() -> list[CaseResult]:
    """The standard suite's results on the CPU EP, as a run gives them."""
    from ort_layouts.engine.runner import run_cases

    return list(run_cases(standard_suite(), provider="cpu"))


def test_the_whole_suite_s_reports_are_what_the_plain_ways_make_and_read_back(
        tmp_path: Path, suite_results: list[CaseResult]) -> None:
    results = suite_results
    assert {r.status for r in results} >= {Status.PASS, Status.UNSUPPORTED}
    planned = [r.case.id for r in results]
    meta = {k: v for k, v in META.items() if k != "started"}
    with ReportWriter(tmp_path, meta=meta, planned=planned, interval_s=math.inf) as writer:
        for r in results:
            writer.add(r)
        writer.write_summaries(finished=True)
    lines = (tmp_path / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    assert lines == [_plain_line(r) for r in results]
    # each line reads back to the result it was made of, as a line of the full to_dict does
    assert [CaseResult.from_dict(json.loads(x)) for x in lines] == results
    assert [CaseResult.from_dict(json.loads(json.dumps(r.to_dict()))) for r in results] == results
    loaded = load_report(tmp_path)
    assert loaded.results == tuple(results) and loaded.meta["planned"] == planned
    data = json.loads((tmp_path / JSON_FILE).read_text(encoding="utf-8"))
    assert data["results"] == [_plain_dict(r) for r in results]
    assert load_report(tmp_path / JSON_FILE).results == tuple(results)
    assert data["summary"] == {s.value: sum(r.status is s for r in results) for s in Status}
    # junit.xml: the tree ElementTree writes (a pass without its empty properties)
    junit = (tmp_path / JUNIT_FILE).read_bytes()
    reference = _reference_junit(Report(loaded.meta, tuple(results)))
    assert _trees_equal(ET.fromstring(junit), ET.fromstring(reference.encode("utf-8")))
    assert junit.decode("utf-8") == reference
    # what the omission leaves out: only empty properties, only of passes
    for case in ET.fromstring(junit).iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if props["status"] == "pass":
            assert "" not in props.values() and {"case_id", "element_count", "mismatch_count"} <= set(props)
        else:
            assert len(props) >= 18
    page = (tmp_path / "report.html").read_bytes().decode("utf-8")  # "\r" in text stays
    assert page == render_report_html(Report(loaded.meta, tuple(results)))
    rows = "".join(f'<tr><td><code>{html.escape(r.case.id)}</code></td><td class="{r.status.value}">'
                   f"{html.escape(r.status.value)}</td><td>{html.escape(r.node_provider)}</td>"
                   f'<td class="seconds">{r.seconds:.4f}</td></tr>' for r in results)
    assert rows in page


def test_meta_json_is_json_dumps_with_indent_one() -> None:
    from ort_layouts.reports.writer import _meta_text

    metas: list[dict[str, Any]] = [
        {}, {"planned": []}, {"planned": ["a", "b"]}, {**META, "planned": ["x<é>\"\n", "y"]},
        {"a": {"planned": 1}, "planned": ["\x00planned\x00", "z"], "z": [1, {"b": None}]},
        {"planned": ["a", 3]}, {"planned": "not a list"}]
    for meta in metas:
        assert _meta_text(meta) == json.dumps(meta, indent=1) + "\n"


def test_files_written_together_replace_all_or_none(tmp_path: Path) -> None:
    from ort_layouts.reports.report import atomic_write_texts

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    atomic_write_texts([(a, "one é\n"), (b, iter(["pieces ", "of ", "text"]))])
    assert a.read_text(encoding="utf-8") == "one é\n" and b.read_text() == "pieces of text"

    def failing() -> Any:
        yield "half"
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        atomic_write_texts([(a, "new"), (b, failing())])
    assert a.read_text(encoding="utf-8") == "one é\n" and b.read_text() == "pieces of text"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]  # no temporary file left


def test_files_whose_sync_fails_replace_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.reports import report as report_module

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    report_module.atomic_write_texts([(a, "one"), (b, "two")])
    synced: list[int] = []

    def fsync(fd: int) -> None:  # the disk fails the second file
        synced.append(fd)
        if len(synced) == 2:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr("os.fsync", fsync)  # report.py syncs through os.fsync
    with pytest.raises(OSError, match="Input/output error"):
        report_module.atomic_write_texts([(a, "new one"), (b, "new two")])
    assert len(synced) == 2
    assert a.read_text() == "one" and b.read_text() == "two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]  # no temporary file left


def test_files_are_synced_all_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # each file's fsync waits until the other two have begun: one after another, they never would
    import threading

    barrier = threading.Barrier(3, timeout=10)
    real = os.fsync

    def fsync(fd: int) -> None:
        barrier.wait()
        real(fd)

    from ort_layouts.reports import report as report_module

    monkeypatch.setattr("os.fsync", fsync)
    files = [(tmp_path / f"{name}.txt", name) for name in ("a", "b", "c")]
    report_module.atomic_write_texts(files)
    assert [path.read_text() for path, _ in files] == ["a", "b", "c"]
    assert not barrier.broken


def test_of_several_failed_syncs_the_first_file_s_error_is_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    names: dict[int, str] = {}
    second_failed = threading.Event()

    def fsync(fd: int) -> None:  # every file fails, the second first
        name = names[fd]
        if name == "a":
            second_failed.wait(10)
        else:
            second_failed.set()
        raise OSError(5, f"Input/output error on {name}")

    real_fdopen = os.fdopen

    def fdopen(fd: int, mode: str) -> Any:
        names[fd] = "ab"[len(names)]
        return real_fdopen(fd, mode)

    from ort_layouts.reports import report as report_module

    monkeypatch.setattr("os.fsync", fsync)
    monkeypatch.setattr(report_module.os, "fdopen", fdopen)
    with pytest.raises(OSError, match="Input/output error on a"):
        report_module.atomic_write_texts([(tmp_path / "a.txt", "one"), (tmp_path / "b.txt", "two")])
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_write_report_writes_the_plain_report_json(tmp_path: Path) -> None:
    report = Report(META, tuple(_sample()))
    for strict in (None, False, True):
        write_report(report, tmp_path, strict=strict)
        text = (tmp_path / JSON_FILE).read_text(encoding="utf-8")
        assert json.loads(text) == json.loads(json.dumps(report.to_dict(strict=strict)))
        assert load_report(tmp_path / JSON_FILE).results == report.results
    write_report(Report(META, ()), tmp_path)
    assert json.loads((tmp_path / JSON_FILE).read_text())["results"] == []


# ---- the cost figures ------------------------------------------------------------------------

def test_report_cost_prints_its_figures(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "report_cost.py"), "--rounds", "1", "--",
                          "--provider", "cpu", "--ops", "Transpose", "--ranks", "2", "--limit", "30"],
                         capture_output=True, text=True, env=env, timeout=600, check=True).stdout
    assert "validate --provider cpu --ops Transpose --ranks 2 --limit 30: 1 rounds" in out
    assert "median report writer:" in out
    files = out.strip().splitlines()[-1]
    for name in ("junit.xml", "meta.json", "report.html", "report.json", "results.jsonl"):
        assert name in files


@pytest.mark.parametrize("strict", [False, True])
def test_each_matrix_cell_is_coloured_by_what_its_group_holds(strict: bool) -> None:
    """A cell's class: "pass" all pass; "fail" an error (or, with --strict, anything that is not
    a pass); "known" a mismatch a known issue explains; "partial" passes and unsupported cases;
    "unsupported" none passed."""
    cpu = "CPUExecutionProvider"

    def result(shape: tuple[int, ...], status: Status, seed: int, **kw: Any) -> CaseResult:
        case = Case("Transpose", "float32", shape, seed=seed)
        return CaseResult(case, status, cpu, "d", **kw)

    groups = {  # rank: the group's results
        1: [result((2,), Status.PASS, 1), result((3,), Status.PASS, 2)],
        2: [result((2, 3), Status.PASS, 1), result((3, 2), Status.ERROR, 2, message="boom")],
        3: [result((2, 3, 4), Status.PASS, 1),
            result((4, 3, 2), Status.MISMATCH, 2, known_issue="a known deviation")],
        4: [result((1, 2, 3, 4), Status.PASS, 1), result((4, 3, 2, 1), Status.UNSUPPORTED, 2, message="no")],
        5: [result((1, 1, 2, 3, 4), Status.UNSUPPORTED, 1, message="no")],
    }
    page = render_report_html(Report({"provider": cpu}, tuple(r for rs in groups.values() for r in rs)),
                              strict=strict)
    cell = r'<td class="cell (\w+)" data-op="Transpose" data-dtype="float32" data-rank="(\d)"'
    classes = {int(rank): cls for cls, rank in re.findall(cell, page)}
    expected = {1: "pass", 2: "fail", 3: "known", 4: "partial", 5: "unsupported"}
    if strict:
        expected.update({3: "fail", 4: "fail", 5: "fail"})
    assert classes == expected
