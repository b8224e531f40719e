"""Each column of a merged matrix records the versions that made it (ONNX Runtime, ort_layouts,
the DirectML stack of a worker run) in matrix.json, matrix.html and the text legend, and
reports that differ only by a version are labelled by it, where they were "vm" and "vm #2"."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnxruntime
import pytest

import ort_layouts
from ort_layouts.frontends.cli import main
from ort_layouts.reports.merge import MATRIX_JSON, merge_reports
from ort_layouts.reports.report import JSON_FILE, META_FILE, Report

Cap = pytest.CaptureFixture[str]
ORT, OURS = onnxruntime.__version__, ort_layouts.__version__
OLDER = "1.19.2"  # no ONNX Runtime this package installs: written into a copy's meta by hand


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small run on the CPU EP, and a copy of it whose meta says ONNX Runtime OLDER ran it."""
    root = tmp_path_factory.mktemp("runs")
    argv = ["validate", "--provider", "cpu", "--ops", "Transpose", "--dtypes", "float32", "--ranks", "1-2",
            "--progress", "none", "--report", str(root / "new")]
    assert main(argv) == 0
    shutil.copytree(root / "new", root / "old")
    meta = json.loads((root / "old" / META_FILE).read_text())
    assert meta["environment"]["versions"]["onnxruntime"] == ORT
    meta["environment"]["versions"]["onnxruntime"] = OLDER
    (root / "old" / META_FILE).write_text(json.dumps(meta))
    return root / "old", root / "new"


def test_reports_of_two_onnxruntime_versions_are_told_apart(two_runs: tuple[Path, Path], tmp_path: Path,
                                                            capsys: Cap,
                                                            matrix_page: Callable[[Path], Any]) -> None:
    old, new = two_runs
    capsys.readouterr()
    assert main(["merge", str(old), str(new), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("[1] "))
    legend = lines[first:first + 4]
    base = legend[0].removeprefix("[1] ").removesuffix(f" / onnxruntime {OLDER}")
    assert base.startswith("CPUExecutionProvider /") and base != legend[0].removeprefix("[1] ")
    assert legend == [f"[1] {base} / onnxruntime {OLDER}", f"    onnxruntime {OLDER}, ort_layouts {OURS}",
                      f"[2] {base} / onnxruntime {ORT}", f"    onnxruntime {ORT}, ort_layouts {OURS}"]
    assert "#2" not in out
    columns = json.loads((tmp_path / MATRIX_JSON).read_text())["columns"]
    found = [(c["onnxruntime"], c["ort_layouts"], c["versions"]["onnxruntime"], c["stack"]) for c in columns]
    assert found == [(OLDER, OURS, OLDER, {}), (ORT, OURS, ORT, {})]
    assert [c["label"] for c in columns] == [f"{base} / onnxruntime {OLDER}", f"{base} / onnxruntime {ORT}"]
    page = matrix_page(tmp_path)
    versions = [f"onnxruntime {OLDER}, ort_layouts {OURS}", f"onnxruntime {ORT}, ort_layouts {OURS}"]
    assert page.titles[:2] == [f"{c['label']}: {v}" for c, v in zip(columns, versions, strict=True)]
    assert [item.endswith(v) for item, v in zip(page.legend, versions, strict=True)] == [True, True]


def test_the_same_versions_keep_a_number(two_runs: tuple[Path, Path]) -> None:
    _, new = two_runs
    matrix = merge_reports([new, new])
    assert matrix.columns[1].label == matrix.columns[0].label + " #2"
    assert "onnxruntime" not in matrix.columns[0].label


def _dml(wine: str, *, ort: str = "1.24.4") -> dict[str, Any]:
    """A DirectML worker run's report.json, by hand: its host imported ONNX Runtime 1.32.0, the
    worker ran ``ort``."""
    return {"schema": "ort_layouts.report/1", "provider": "DmlExecutionProvider", "device": "lavapipe",
            "environment": {"hostname": "h", "versions": {"onnxruntime": "1.32.0", "ort_layouts": "0.1.0"}},
            "stack": {"directml_version": "1.15.4", "ort_version": ort, "d3d12": "vkd3d 1.6",
                      "wine_version": wine, "vulkan_driver": "lavapipe (Mesa 25.0.7)",
                      "directml_file_version": "1.15.4+241025"},
            "results": []}


def test_directml_columns_name_their_stack(tmp_path: Path) -> None:
    sources = []
    made = (("a", _dml("wine-8.0")), ("b", _dml("wine-9.0")), ("c", _dml("wine-9.0", ort="1.23.0")))
    for name, data in made:
        (tmp_path / name).mkdir()
        (tmp_path / name / JSON_FILE).write_text(json.dumps(data))
        sources.append(tmp_path / name)
    matrix = merge_reports(sources)
    base = "DirectML 1.15.4 / DmlExecutionProvider / lavapipe / h"
    assert [c.label for c in matrix.columns] == [
        f"{base} / onnxruntime 1.24.4 / Wine wine-8.0", f"{base} / onnxruntime 1.24.4 / Wine wine-9.0",
        f"{base} / onnxruntime 1.23.0 / Wine wine-9.0"]
    assert matrix.columns[0].versions_text() == (
        "onnxruntime 1.24.4, ort_layouts 0.1.0; DirectML stack: DirectML 1.15.4, D3D12 vkd3d 1.6, "
        "Wine wine-8.0, Vulkan lavapipe (Mesa 25.0.7)")
    table = matrix.text_table()
    assert "\n    onnxruntime 1.23.0, ort_layouts 0.1.0; DirectML stack: DirectML 1.15.4, D3D12 " in table
    column = matrix.to_dict()["columns"][2]
    assert (column["onnxruntime"], column["versions"]["onnxruntime"]) == ("1.23.0", "1.32.0")
    assert column["stack"] == _dml("wine-9.0", ort="1.23.0")["stack"]


def test_a_report_that_records_no_versions_says_so() -> None:
    data = {"schema": "ort_layouts.report/1", "provider": "CPUExecutionProvider", "results": []}
    matrix = merge_reports([Report.from_dict(data), Report.from_dict(data)])
    assert [c.label for c in matrix.columns] == ["CPUExecutionProvider", "CPUExecutionProvider #2"]
    assert "[1] CPUExecutionProvider\n    versions not recorded\n" in matrix.text_table()
    assert [(c.onnxruntime, c.ort_layouts, dict(c.versions)) for c in matrix.columns] == [("", "", {})] * 2
