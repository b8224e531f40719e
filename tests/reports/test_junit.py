"""junit.xml as JUnit's schema and XML 1.0 take it: the testsuite's timestamp without a time
zone, and text XML cannot hold (lone surrogates, control characters) replaced, never a crash."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.junit import junit_timestamp, render_junit
from ort_layouts.reports.report import JUNIT_FILE, Report
from ort_layouts.reports.writer import write_report

# the pattern of ISO8601_DATETIME_PATTERN, the type of a testsuite's timestamp in JUnit's schema
# (junit.xsd of Ant and Jenkins): an xs:dateTime without fractions or a time zone
SCHEMA_TIMESTAMP = re.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")
CPU = "CPUExecutionProvider"


def _suite(report: Report) -> ET.Element:
    suite = ET.fromstring(render_junit(report).encode("utf-8")).find("testsuite")
    assert suite is not None
    return suite


@pytest.mark.parametrize("started, expected", [
    ("2026-11-23T18:40:00+00:00", "2026-11-23T18:40:00"),  # as meta.json holds a run's start
    ("2026-11-23T19:40:00+01:00", "2026-11-23T18:40:00"),
    ("2024-06-30T23:30:00-02:00", "2024-07-01T01:30:00"),  # the next day in UTC
    ("2024-02-29T12:00:00+05:30", "2024-02-29T06:30:00"),
    ("2024-01-01T00:00:00.987654Z", "2024-01-01T00:00:00"),  # to the second
    ("2024-01-01T05:06:07", "2024-01-01T05:06:07"),  # no offset: as it is
])
def test_the_timestamp_is_utc_without_an_offset(started: str, expected: str) -> None:
    assert junit_timestamp(started) == expected
    suite = _suite(Report({"started": started}, ()))
    assert suite.get("timestamp") == expected
    assert SCHEMA_TIMESTAMP.fullmatch(suite.get("timestamp", ""))


@pytest.mark.parametrize("started", [None, "", "yesterday", 1700000000, "0001-01-01T00:00:00+01:00"])
def test_a_start_that_is_no_time_gives_no_timestamp(started: object) -> None:
    meta = {} if started is None else {"started": started}
    assert junit_timestamp(started) == ""
    suite = _suite(Report(meta, ()))
    assert "timestamp" not in suite.attrib
    assert suite.get("hostname") == ""  # the attributes after it are still there


def test_the_written_file_has_the_timestamp_without_an_offset(tmp_path: Path) -> None:
    write_report(Report({"started": "2026-01-02T03:04:05+00:00"}, ()), tmp_path)
    text = (tmp_path / JUNIT_FILE).read_text(encoding="utf-8")
    assert ' timestamp="2026-01-02T03:04:05" ' in text
    assert "+00:00" not in text


def test_lone_surrogates_anywhere_are_replaced_and_the_file_is_utf_8(tmp_path: Path) -> None:
    """A lone surrogate (a name decoded with surrogateescape) in the provider, the host, a
    version's name and value, the command, a device, a node provider and a message: U+FFFD in
    the XML, which is UTF-8 and parses."""
    bad = "x\udcffy\ud800"
    meta = {"provider": "P" + bad, "device": "D" + bad, "command": "ort-layouts validate --model m" + bad,
            "started": "2026-01-02T03:04:05+00:00",
            "environment": {"hostname": "h" + bad, "versions": {"v" + bad: "1" + bad}}}
    results = (
        CaseResult(Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0)), Status.ERROR, CPU,
                   device="dev" + bad, node_provider="np" + bad, message="boom" + bad),
        CaseResult(Case("Transpose", DataType.FLOAT32, (3, 2), perm=(1, 0)), Status.PASS, CPU,
                   device="dev" + bad, node_provider="np" + bad, element_count=6, seconds=0.5),
        CaseResult(Case("Transpose", DataType.INT8, (3, 2), perm=(1, 0)), Status.MISMATCH, CPU,
                   element_count=6, mismatch_count=1, diagnosis="d" + bad, known_issue="k" + bad),
    )
    write_report(Report(meta, results), tmp_path)
    data = (tmp_path / JUNIT_FILE).read_bytes()
    text = data.decode("utf-8")  # strict: raises on what is not UTF-8
    root = ET.fromstring(data)
    good = "x\ufffdy\ufffd"
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("name") == "ort_layouts.P" + good
    assert suite.get("hostname") == "h" + good
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["device"] == "D" + good and props["command"] == "ort-layouts validate --model m" + good
    assert props["version.v" + good] == "1" + good
    error, passed, known = suite.findall("testcase")
    error_props = {p.get("name"): p.get("value") for p in error.findall("properties/property")}
    assert error_props["device"] == "dev" + good and error_props["node_provider"] == "np" + good
    assert error.find("error").get("message") == "error: boom" + good  # type: ignore[union-attr]
    passed_props = {p.get("name"): p.get("value") for p in passed.findall("properties/property")}
    assert passed_props["device"] == "dev" + good
    assert known.find("skipped").get("message").endswith("known issue: k" + good)  # type: ignore[union-attr]
    assert "x\ufffdy\ufffd" in text
