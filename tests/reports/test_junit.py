"""junit.xml as XML 1.0 takes it: text XML cannot hold (lone surrogates, control characters)
replaced, never a crash."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import JUNIT_FILE, Report
from ort_layouts.reports.writer import write_report

CPU = "CPUExecutionProvider"


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
    assert "\ud800" not in text and "\udcff" not in text
