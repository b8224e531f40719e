"""A report writer checks the meta it is given, and each field update_meta changes, before
anything in the directory changes: a value JSON cannot hold (a numpy integer, a Path) raised a
TypeError from inside once the old report's results.jsonl was emptied and its summaries deleted
(its meta.json still marked finished), and a field of another type than the report's reader
takes (``planned`` a str) was written, and the report then refused by load_report as damaged.
Refused with an ArgumentError naming the field's place, its value and what is valid."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import META_FILE, RESULTS_FILE, load_report
from ort_layouts.reports.writer import ReportWriter, write_report

CPU = "CPUExecutionProvider"
META: dict[str, Any] = {"provider": CPU, "selection": {}}
CASES = [Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed) for seed in range(4)]
PLANNED = [c.id for c in CASES]
JSON_VALUE = ("valid: a JSON value: a str, int, float, bool or None, or a list or dict of them (e.g. int(v) "
              "for a numpy integer, str(p) for a path)")
READER_TYPES = ("valid: as load_report reads a report's meta: 'environment', 'selection' and 'stack' dicts, "
                "'environment.versions' a dict, 'planned' and 'resumed' lists of str, 'strict' a bool (or "
                "these fields absent or None)")


def _result(case: Case) -> CaseResult:
    return CaseResult(case, Status.PASS, CPU, element_count=6, seconds=0.25)


def _finished(directory: Path) -> dict[str, bytes]:
    """A finished report of the four cases in ``directory``; its files' bytes."""
    with ReportWriter(directory, meta=META, planned=PLANNED) as w:
        for case in CASES:
            w.add(_result(case))
    return _files(directory)


def _files(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


SELF: dict[str, Any] = {}
SELF["again"] = SELF

# (a meta field, its value, the message): hand-written from the value's type and place
BAD_META = [
    ("device_id", np.int64(0), f"meta['device_id'] {np.int64(0)!r} is an int64, which JSON cannot hold; "
                               f"{JSON_VALUE}"),
    ("model", Path("m.onnx"), f"meta['model'] {Path('m.onnx')!r} is a {type(Path()).__name__}, which JSON "
                              f"cannot hold; {JSON_VALUE}"),
    ("stack", {"devices": [{"id": np.int32(3)}]},
     f"meta['stack']['devices'][0]['id'] {np.int32(3)!r} is an int32, which JSON cannot hold; {JSON_VALUE}"),
    ("stack", {(1, 2): "a"}, "meta['stack'] has the key (1, 2), a tuple, which JSON cannot hold; valid: str "
                             "keys (or int, float, bool, None)"),
    ("stack", SELF, f"meta['stack']['again'] holds itself (a circular reference), which JSON cannot hold; "
                    f"{JSON_VALUE}"),
    ("environment", "vm", f"meta: 'environment' is str 'vm', not a JSON object; {READER_TYPES}"),
    ("resumed", [1], f"meta: 'resumed' holds int 1, not only strings; {READER_TYPES}"),
    ("strict", "yes", f"meta: 'strict' is str 'yes', not a JSON boolean; {READER_TYPES}"),
]
BAD_IDS = ["numpy-int", "path", "nested-numpy", "tuple-key", "circular", "environment-str", "resumed-int",
           "strict-str"]


@pytest.mark.parametrize(("key", "value", "message"), BAD_META, ids=BAD_IDS)
def test_a_meta_that_cannot_be_written_leaves_a_finished_report_as_it_was(
        tmp_path: Path, key: str, value: Any, message: str) -> None:
    before = _finished(tmp_path)
    with pytest.raises(ArgumentError) as info:
        ReportWriter(tmp_path, meta={**META, key: value}, planned=PLANNED)
    assert str(info.value) == message
    assert _files(tmp_path) == before  # results.jsonl not emptied, the summaries not deleted
    assert [r.case.id for r in load_report(tmp_path).results] == PLANNED
    with ReportWriter(tmp_path, meta=META, planned=PLANNED, resume=True) as w:  # the directory is free
        assert w.done_ids == set(PLANNED)


@pytest.mark.parametrize(("key", "value", "message"), BAD_META[:2], ids=BAD_IDS[:2])
def test_a_meta_that_cannot_be_written_makes_no_directory(
        tmp_path: Path, key: str, value: Any, message: str) -> None:
    with pytest.raises(ArgumentError, match="which JSON cannot hold"):
        ReportWriter(tmp_path / "new", meta={**META, key: value}, planned=PLANNED)
    assert not (tmp_path / "new").exists()  # no .lock, no empty results.jsonl


def test_a_value_json_holds_as_it_is_is_written(tmp_path: Path) -> None:
    """A numpy float is a float, and a tuple a list, to JSON: written, and read back as such."""
    with ReportWriter(tmp_path, meta={**META, "ratio": np.float64(0.5), "dims": (1, 2)}, planned=PLANNED):
        pass
    meta = json.loads((tmp_path / META_FILE).read_text(encoding="utf-8"))
    assert (meta["ratio"], meta["dims"]) == (0.5, [1, 2])


@pytest.mark.parametrize(("values", "message"), [
    ({"device_id": np.int64(0)}, BAD_META[0][2]),
    ({"device": "gpu", "model": Path("m.onnx")}, BAD_META[1][2]),
    ({"selection": {"ops": ("Transpose", Path("m.onnx"))}},
     f"meta['selection']['ops'][1] {Path('m.onnx')!r} is a {type(Path()).__name__}, which JSON cannot hold; "
     f"{JSON_VALUE}"),
    ({"planned": "x"}, f"meta: 'planned' is str 'x', not a JSON array; {READER_TYPES}"),
    ({"planned": [PLANNED[0], 7]}, f"meta: 'planned' holds int 7, not only strings; {READER_TYPES}"),
    ({"planned": None}, "meta: 'planned' is NoneType None, not a JSON array; valid: a list of str, the ids "
                        "of the cases the run plans"),
    ({"selection": []}, f"meta: 'selection' is list [], not a JSON object; {READER_TYPES}"),
    ({"strict": 1}, f"meta: 'strict' is int 1, not a JSON boolean; {READER_TYPES}"),
], ids=["numpy-int", "path-beside-a-good-field", "nested-path", "planned-str", "planned-int", "planned-none",
        "selection-list", "strict-int"])
def test_update_meta_refuses_a_value_and_leaves_the_meta_as_it_was(
        tmp_path: Path, values: dict[str, Any], message: str) -> None:
    with ReportWriter(tmp_path, meta=META, planned=PLANNED) as w:
        w.add(_result(CASES[0]))
        meta, written = dict(w.meta), (tmp_path / META_FILE).read_bytes()
        with pytest.raises(ArgumentError) as info:
            w.update_meta(**values)
        assert str(info.value) == message
        assert w.meta == meta and "device" not in w.meta
        assert (tmp_path / META_FILE).read_bytes() == written
        for case in CASES[1:]:
            w.add(_result(case))
        w.update_meta(device="cpu")  # a good one still goes
        w.write_summaries()  # and the summaries are still written
    report = load_report(tmp_path)  # finished by the block, readable
    assert (report.meta["device"], [r.case.id for r in report.results]) == ("cpu", PLANNED)
    assert "finished" in report.meta


def test_write_report_refuses_a_meta_json_cannot_hold_before_making_the_directory(tmp_path: Path) -> None:
    from ort_layouts.reports.report import Report

    report = Report({**META, "device_id": np.int64(0)}, (_result(CASES[0]),))
    with pytest.raises(ArgumentError) as info:
        write_report(report, tmp_path / "out")
    assert str(info.value) == (f"report.meta['device_id'] {np.int64(0)!r} is an int64, which JSON cannot "
                               f"hold; {JSON_VALUE}")
    assert not (tmp_path / "out").exists()


def test_results_jsonl_is_not_touched_by_a_refused_meta(tmp_path: Path) -> None:
    """The report's results.jsonl keeps its bytes, lines and all (it was emptied before)."""
    _finished(tmp_path)
    lines = (tmp_path / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == PLANNED
    with pytest.raises(ArgumentError):
        ReportWriter(tmp_path, meta={**META, "device_id": np.int64(0)}, planned=PLANNED)
    assert (tmp_path / RESULTS_FILE).read_text(encoding="utf-8").splitlines() == lines


def test_a_meta_nested_deeper_than_json_writes_is_refused_naming_where(tmp_path: Path) -> None:
    """json.dumps raises RecursionError on it; the refusal names the place, 64 levels down,
    where the search for it stops, and nothing is made."""
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ArgumentError) as info:
        ReportWriter(tmp_path / "new", meta={**META, "stack": {"a": deep}}, planned=PLANNED)
    place = "meta['stack']['a']" + "[0]" * 63
    assert str(info.value) == f"{place} is nested too deeply to write as JSON; {JSON_VALUE}"
    assert not (tmp_path / "new").exists()


def test_a_value_json_cannot_hold_70_levels_down_is_not_called_nested_too_deeply(tmp_path: Path) -> None:
    """json.dumps writes 70 levels; the numpy integer there is what it refuses. The search stops
    at 64 levels and the refusal says the meta cannot be written as JSON; it said the place was
    nested too deeply."""
    deep: list[Any] = [np.int64(1)]
    for _ in range(70):
        deep = [deep]
    with pytest.raises(ArgumentError) as info:
        ReportWriter(tmp_path / "new", meta={**META, "stack": {"a": deep}}, planned=PLANNED)
    assert str(info.value) == f"meta cannot be written as JSON; {JSON_VALUE}"
    assert not (tmp_path / "new").exists()
