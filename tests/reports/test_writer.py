"""The report writer: a new report in a directory leaves nothing of the report it replaces that
would describe it (shards.json of a merged report), a resumed one keeps it; names with lone
surrogates are written into every file, which stays UTF-8."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.merge import merge_shards
from ort_layouts.reports.report import (
    HTML_FILE,
    JSON_FILE,
    JUNIT_FILE,
    META_FILE,
    RESULTS_FILE,
    SHARDS_FILE,
    load_report,
)
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"


def _results() -> list[CaseResult]:
    return [CaseResult(Case("Transpose", "float32", (2, 3), perm=(1, 0)), Status.PASS, CPU, element_count=6),
            CaseResult(Case("Transpose", "float32", (3, 2), perm=(1, 0)), Status.PASS, CPU, element_count=6),
            CaseResult(Case("Expand", "float16", (3,), target_shape=(2, 3)), Status.ERROR, CPU,
                       message="boom")]


def _meta(shard: str = "", **more: Any) -> dict[str, Any]:
    command = "ort-layouts validate" + (f" --shard {shard}" if shard else "")
    return {"provider": CPU, "command": command, "environment": {"hostname": "h"},
            "selection": {"provider": CPU, "ops": [], "shard": shard}, **more}


def _write(directory: Path, meta: dict[str, Any], results: list[CaseResult], *, resume: bool = False,
           force: bool = False) -> None:
    with ReportWriter(directory, meta=meta, planned=[r.case.id for r in results], resume=resume,
                      force=force) as w:
        for r in results:
            if r.case.id not in w.done_ids:
                w.add(r)
        w.write_summaries(finished=True)


def _merged(directory: Path) -> list[CaseResult]:
    """A run's two shards in ``directory``, merged there; the results, in the run's order."""
    results = _results()
    for k in (1, 2):
        _write(directory / f"shard-{k}-of-2", _meta(f"{k}/2"), results[k - 1::2])
    merge_shards([directory], directory)
    assert (directory / SHARDS_FILE).is_file()
    return results


def test_a_new_report_over_a_merged_one_removes_its_shards_json(tmp_path: Path) -> None:
    results = _merged(tmp_path)
    _write(tmp_path, _meta(), results)  # the same selection, unsharded: replaces the merged report
    assert not (tmp_path / SHARDS_FILE).exists()
    for name in (META_FILE, RESULTS_FILE, JSON_FILE, JUNIT_FILE, HTML_FILE):
        assert (tmp_path / name).is_file(), name
    assert "resumed" not in json.loads((tmp_path / META_FILE).read_text())
    # the shards, reports of their own, stay: merging them again makes the listing again
    assert (tmp_path / "shard-1-of-2" / RESULTS_FILE).is_file()
    merge_shards([tmp_path], tmp_path)
    assert [s["shard"] for s in json.loads((tmp_path / SHARDS_FILE).read_text())["shards"]] == ["1/2", "2/2"]


def test_a_forced_report_of_another_selection_removes_the_shards_json(tmp_path: Path) -> None:
    results = _merged(tmp_path)
    _write(tmp_path, _meta(), results[:1], force=True)
    assert not (tmp_path / SHARDS_FILE).exists()
    assert [r.case.id for r in load_report(tmp_path).results] == [results[0].case.id]


def test_a_resumed_merged_report_keeps_its_shards_json(tmp_path: Path) -> None:
    results = _merged(tmp_path)
    listing = (tmp_path / SHARDS_FILE).read_text()
    _write(tmp_path, _meta(), results, resume=True)  # its results came from the shards it lists
    assert (tmp_path / SHARDS_FILE).read_text() == listing
    assert json.loads((tmp_path / META_FILE).read_text())["resumed"]


def test_names_with_lone_surrogates_are_written_into_every_file(tmp_path: Path) -> None:
    """A model path and command decoded with surrogateescape, a device name with a lone
    surrogate: every file is written, in UTF-8; results.jsonl and the JSON files escape them
    (``\\udcff``: JSON holds it, in ASCII, and reads it back); the XML and HTML hold U+FFFD."""
    bad = "m\udcff\ud800"
    meta = _meta(model="/models/" + bad + ".onnx", device="gpu " + bad)
    meta["command"] = "ort-layouts validate --model /models/" + bad + ".onnx"
    results = [CaseResult(r.case, r.status, CPU, device="gpu " + bad, node_provider=CPU + bad,
                          element_count=r.element_count, message=r.message and r.message + bad)
               for r in _results()]
    _write(tmp_path, meta, results)
    for name in (META_FILE, RESULTS_FILE, JSON_FILE, JUNIT_FILE, HTML_FILE):
        (tmp_path / name).read_bytes().decode("utf-8")  # strict: raises on what is not UTF-8
    for name in (JUNIT_FILE, HTML_FILE):
        assert "m\ufffd\ufffd" in (tmp_path / name).read_text(encoding="utf-8"), name
    for name in (META_FILE, RESULTS_FILE, JSON_FILE):
        assert "m\\udcff\\ud800" in (tmp_path / name).read_text(encoding="ascii"), name
    back = load_report(tmp_path)
    assert back.meta["model"] == "/models/" + bad + ".onnx"
    assert [r.device for r in back.results] == ["gpu " + bad] * 3
    assert back.results[2].message == "boom" + bad
    suite = ET.parse(tmp_path / JUNIT_FILE).getroot().find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["command"] == "ort-layouts validate --model /models/m\ufffd\ufffd.onnx"
    assert "gpu m\ufffd\ufffd" in (tmp_path / HTML_FILE).read_text(encoding="utf-8")
