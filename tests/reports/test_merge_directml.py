"""merge over DirectML releases: columns named by the release a report loaded, and the bisect
summary (the first release where a case's status changed, with the diagnosis there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.merge import merge_reports, write_matrix
from ort_layouts.reports.report import Report

DML = "DmlExecutionProvider"
T = Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0))
P = Case("Pad", DataType.FLOAT16, (2, 3), pads=(1, 1, 1, 1), mode="wrap")
E = Case("Expand", DataType.INT32, (3,), target_shape=(2, 3))


def _meta(version: str) -> dict[str, Any]:
    return {"provider": DML, "device": "lavapipe", "command": "ort-layouts validate",
            "environment": {"hostname": "h"}, "selection": {"provider": DML, "shard": ""},
            "stack": {"directml_version": version, "ort_version": "1.24.4"}}


def _ok(case: Case) -> CaseResult:
    return CaseResult(case, Status.PASS, DML, device="lavapipe", node_provider=DML)


def _error(case: Case, text: str) -> CaseResult:
    return CaseResult(case, Status.ERROR, DML, device="lavapipe", message=text)


def _report(version: str, *results: CaseResult) -> Report:
    return Report(_meta(version), tuple(results))


def test_columns_name_the_directml_release() -> None:
    matrix = merge_reports([_report("1.9.1", _ok(T)), _report("1.15.4", _ok(T))])
    assert [c.directml_version for c in matrix.columns] == ["1.9.1", "1.15.4"]
    assert [c.label.split(" / ")[0] for c in matrix.columns] == ["DirectML 1.9.1", "DirectML 1.15.4"]
    assert "[1] DirectML 1.9.1 / DmlExecutionProvider / lavapipe / h" in matrix.text_table()


def test_bisect_finds_the_first_release_that_changed_in_version_order() -> None:
    # given out of order: 1.12.0 before 1.10.1 before 1.9.1; Pad wrap fails on 1.9.1 only,
    # Expand breaks from 1.12.0 on; Transpose never changes
    reports = [
        _report("1.12.0", _ok(T), _ok(P), _error(E, "run failed: zeros")),
        _report("1.10.1", _ok(T), _ok(P), _ok(E)),
        _report("1.9.1", _ok(T), _error(P, "run failed: 80070057 Invalid parameter"), _ok(E)),
    ]
    matrix = merge_reports(reports)
    changes = {c.case_id: c for c in matrix.bisect()}
    assert set(changes) == {P.id, E.id}
    pad = changes[P.id]
    assert (pad.before_version, pad.before_status) == ("1.9.1", "ERROR")
    assert (pad.version, pad.status) == ("1.10.1", "ok")
    assert pad.diagnosis == "" and "80070057 Invalid parameter" in pad.before_diagnosis
    assert str(pad).endswith("ok from 1.10.1 (was: error: run failed: 80070057 Invalid parameter)")
    exp = changes[E.id]
    assert (exp.before_version, exp.before_status) == ("1.10.1", "ok")
    assert (exp.version, exp.status) == ("1.12.0", "ERROR")
    assert "zeros" in exp.diagnosis
    assert str(exp).startswith(f"{E.id}: ok on DirectML 1.10.1, ERROR from 1.12.0")
    text = matrix.text_table()
    assert "bisect over DirectML releases: 2 changes" in text


def test_bisect_says_no_difference_found(tmp_path: Path) -> None:
    matrix = merge_reports([_report("1.9.1", _ok(T), _ok(P)), _report("1.15.4", _ok(T), _ok(P))])
    assert matrix.bisect() == ()
    assert "bisect over DirectML releases: 0 changes (no difference found)" in matrix.text_table()
    paths = write_matrix(matrix, tmp_path / "m")
    assert json.loads(paths["json"].read_text())["bisect"] == []
    assert "no difference found" in paths["html"].read_text()


def test_reports_without_a_directml_release_keep_their_labels() -> None:
    meta: dict[str, Any] = {"provider": "CPUExecutionProvider", "device": "cpu a",
                            "environment": {"hostname": "h"}}
    matrix = merge_reports([Report(meta, (_ok(T),)), Report(dict(meta, device="cpu b"), (_ok(T),))])
    assert [c.label for c in matrix.columns] == ["CPUExecutionProvider / cpu a / h",
                                                 "CPUExecutionProvider / cpu b / h"]
    assert matrix.bisect() == ()
    assert "bisect" not in matrix.text_table()


def test_bisect_groups_one_line_per_op_and_change(tmp_path: Path) -> None:
    # two wrap Pads and an Expand fail on 1.9.1 and pass from 1.10.1; a Transpose breaks on 1.12.0;
    # a reflect Pad that fails on 1.9.1 alone is a group of its own
    p3 = Case("Pad", DataType.UINT8, (4,), pads=(1, 2), mode="reflect")
    p2 = Case("Pad", DataType.UINT8, (4,), pads=(1, 2), mode="wrap")
    reports = [
        _report("1.9.1", _ok(T), _error(P, "run failed: 80070057 a"), _error(p2, "run failed: 80070057 b"),
                _error(E, "run failed: zeros"), _error(p3, "the worker died")),
        _report("1.10.1", _ok(T), _ok(P), _ok(p2), _ok(E), _ok(p3)),
        _report("1.12.0", _error(T, "run failed: T"), _ok(P), _ok(p2), _ok(E), _ok(p3)),
    ]
    matrix = merge_reports(reports)
    groups = matrix.bisect_groups()
    assert [(g.op, g.mode, g.before_version, g.before_status, g.version, g.status, g.case_ids, g.dtypes)
            for g in groups] == [
        ("Transpose", "", "1.10.1", "ok", "1.12.0", "ERROR", (T.id,), ("float32",)),
        ("Pad", "wrap", "1.9.1", "ERROR", "1.10.1", "ok", (P.id, p2.id), ("float16", "uint8")),
        ("Expand", "", "1.9.1", "ERROR", "1.10.1", "ok", (E.id,), ("int32",)),
        ("Pad", "reflect", "1.9.1", "ERROR", "1.10.1", "ok", (p3.id,), ("uint8",)),
    ]
    assert str(groups[1]) == (f"Pad mode wrap (2 cases; float16, uint8): ERROR on DirectML 1.9.1, ok from "
                              f"1.10.1; e.g. {P.id} (was: error: run failed: 80070057 a)")
    assert str(groups[0]).endswith(f"e.g. {T.id}: error: run failed: T")
    lines = matrix.bisect_lines(cases=1)
    assert lines[0] == "bisect over DirectML releases: 5 changes across 1.9.1, 1.10.1, 1.12.0"
    assert lines[1:5] == [f"  {g}" for g in groups]
    assert lines[5].startswith(f"  {T.id}: ok on DirectML 1.10.1, ERROR from 1.12.0")
    assert lines[6] == "  ... and 4 more (see matrix.json)"
    paths = write_matrix(matrix, tmp_path / "m", text=True)
    assert paths["text"].read_text() == matrix.text_table()
    assert [g["case_ids"] for g in json.loads(paths["json"].read_text())["bisect_groups"]] == \
        [[T.id], [P.id, p2.id], [E.id], [p3.id]]
    assert "<h3>By op</h3>" in paths["html"].read_text()


def test_bisect_lines_need_two_releases() -> None:
    assert merge_reports([_report("1.9.1", _ok(T))]).bisect_lines() == []
    one_change = merge_reports([_report("1.9.1", _error(T, "x")), _report("1.15.4", _ok(T))])
    assert one_change.bisect_lines(cases=0) == [
        "bisect over DirectML releases: 1 change across 1.9.1, 1.15.4",
        f"  Transpose (1 case; float32): ERROR on DirectML 1.9.1, ok from 1.15.4; e.g. {T.id} "
        "(was: error: x)"]


def test_a_long_diagnosis_keeps_its_end() -> None:
    # ONNX Runtime's message names the failing call last: the middle is cut, never the end
    text = "run failed: " + "x" * 600 + " 80070057 Invalid parameter."
    matrix = merge_reports([_report("1.9.1", _error(T, text)), _report("1.15.4", _ok(T))])
    (group,) = matrix.bisect_groups()
    line = str(group)
    assert line.endswith("x 80070057 Invalid parameter.)") and " ... " in line
    assert len(line) < len(text)


def test_the_matrix_keeps_each_release_s_recovered_descriptor() -> None:
    recovered = {"kind": "read", "operator": "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
                 "applied": {"sizes": [3, 2], "strides_in_elements": [3, 1], "offset_in_elements": 0},
                 "expected": {"sizes": [3, 2], "strides_in_elements": [1, 3], "offset_in_elements": 0},
                 "names": ["the input read packed"], "text": "recovered: ..."}
    wrong = CaseResult(T, Status.MISMATCH, DML, device="lavapipe", node_provider=DML, mismatch_count=4,
                       recovered=recovered)
    matrix = merge_reports([_report("1.9.1", wrong), _report("1.15.4", _ok(T))])
    (row,) = [c for c in matrix.to_dict()["cases"] if c["id"] == T.id]
    old, new = row["results"]
    assert old["recovered"] == recovered
    assert "recovered" not in new


def _on(version: str, device: str, *results: CaseResult) -> Report:
    return Report({**_meta(version), "device": device}, tuple(results))


def test_bisect_never_compares_one_device_with_another() -> None:
    # GPU A passes the Pad on both releases, GPU B fails it on both: no release changed anything
    # (the first column of 1.13.1 is GPU A's and the first of 1.15.4 GPU B's)
    fail = _error(P, "run failed: zeros")
    matrix = merge_reports([_on("1.13.1", "GPU A", _ok(P)), _on("1.13.1", "GPU B", fail),
                            _on("1.15.4", "GPU B", fail), _on("1.15.4", "GPU A", _ok(P))])
    assert matrix.bisect() == ()
    assert "bisect over DirectML releases: 0 changes (no difference found)" in matrix.text_table()


def test_bisect_never_compares_one_machine_with_another() -> None:
    # the same device name on two machines: host a passes on both releases, host b fails on both
    def on(version: str, host: str, result: CaseResult) -> Report:
        meta = _meta(version)
        return Report({**meta, "environment": {"hostname": host}}, (result,))

    fail = _error(P, "run failed: zeros")
    matrix = merge_reports([on("1.13.1", "a", _ok(P)), on("1.13.1", "b", fail),
                            on("1.15.4", "b", fail), on("1.15.4", "a", _ok(P))])
    assert matrix.bisect() == ()
    assert len(matrix.release_lines()) == 2


def test_bisect_names_the_line_of_each_change_where_several_ran_the_releases() -> None:
    # GPU B breaks the Pad from 1.15.4; GPU A does not change
    matrix = merge_reports([_on("1.13.1", "GPU A", _ok(P)), _on("1.13.1", "GPU B", _ok(P)),
                            _on("1.15.4", "GPU B", _error(P, "run failed: zeros")),
                            _on("1.15.4", "GPU A", _ok(P))])
    (change,) = matrix.bisect()
    assert (change.before_version, change.version, change.status) == ("1.13.1", "1.15.4", "ERROR")
    assert change.line == f"GPU B on h ({DML})"
    assert str(change).startswith(f"{P.id}: ok on DirectML 1.13.1, ERROR from 1.15.4 on GPU B on h ({DML}): ")
    (group,) = matrix.bisect_groups()
    assert group.line == change.line and f"from 1.15.4 on GPU B on h ({DML}); e.g." in str(group)


def test_one_release_on_several_devices_has_no_bisect(tmp_path: Path) -> None:
    # the devices differ, but no line ran two releases: nothing to bisect, and no "no difference found"
    matrix = merge_reports([_on("1.15.4", "GPU A", _ok(P)),
                            _on("1.15.4", "GPU B", _error(P, "run failed: z"))])
    assert matrix.release_lines() == {}
    assert "bisect" not in matrix.text_table()
    paths = write_matrix(matrix, tmp_path / "m")
    assert 'id="bisect"' not in paths["html"].read_text()


def _worker(version: str, adapter: str, *results: CaseResult) -> Report:
    """A worker run's report: its device names the release, its stack the adapter."""
    meta = _meta(version)
    meta["device"] = f"DirectML {version} via Wine/vkd3d 1.6 on Vulkan {adapter}"
    meta["stack"] = {**meta["stack"], "adapter_name": adapter, "directml_path": f"C:\\dml\\{version}"}
    return Report(meta, tuple(results))


def test_a_worker_run_s_releases_compare_along_its_adapter_though_its_device_names_the_release() -> None:
    fail = _error(P, "run failed: zeros")
    matrix = merge_reports([_worker("1.13.1", "llvmpipe", _ok(P)), _worker("1.13.1", "gpu", _ok(P)),
                            _worker("1.15.4", "gpu", fail), _worker("1.15.4", "llvmpipe", _ok(P))])
    assert sorted(matrix.release_lines()) == [f"gpu on h ({DML})", f"llvmpipe on h ({DML})"]
    (change,) = matrix.bisect()
    assert (change.line, change.before_version, change.version) == (f"gpu on h ({DML})", "1.13.1", "1.15.4")
