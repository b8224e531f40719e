"""validate on a DirectML stack that cannot run (a worker that does not answer within
ORT_LAYOUTS_DML_TIMEOUT_S, Mesa 22's lavapipe that returns zeros) stops before it touches
the report in --report DIR: the report a good run left there stays byte for byte, a resume is
refused as a broken stack (not as another one), and a new directory gets nothing. A resume under
another DirectML release names only the stack fields that differ. The summary line names the
ONNX Runtime whose DML EP ran the cases (1.24.4's, the onnxruntime-directml wheel the worker's
DLLs come from).

Skipped where the DirectML stack is not set up; ``ORT_LAYOUTS_REQUIRE_DML=1`` makes that a
failure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ort_layouts.engine.dml.stack import DmlStack, available_directml_versions
from ort_layouts.engine.providers import close_dml_worker
from ort_layouts.frontends.cli import main

SELECTION = ["--provider", "dml", "--ops", "Tile", "--dtypes", "float32", "--ranks", "1",
             "--progress", "none"]
BROKEN = "the DirectML stack is broken, so no case was run"


@pytest.fixture(autouse=True)
def _stack(dml_stack: DmlStack) -> Iterator[None]:
    close_dml_worker()  # each test's worker reads its own environment
    yield None
    close_dml_worker()


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _good_report(directory: Path, capsys: pytest.CaptureFixture[str], *, keep: int | None = None) -> None:
    """A good run's report in ``directory``; with ``keep``, cut to its first ``keep`` results."""
    assert main(["validate", *SELECTION, "--report", str(directory)]) == 0
    capsys.readouterr()
    if keep is not None:
        results = directory / "results.jsonl"
        results.write_text("".join(results.read_text().splitlines(keepends=True)[:keep]))


def _hang(monkeypatch: pytest.MonkeyPatch) -> None:
    close_dml_worker()
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", "0.000001")  # no answer comes that soon


def test_a_hung_stack_keeps_the_report_a_good_run_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r"
    _good_report(report, capsys)
    before = _files(report)
    assert json.loads(before["report.json"])["verdict"] == "pass"
    _hang(monkeypatch)
    assert main(["validate", *SELECTION, "--report", str(report)]) == 2
    err = capsys.readouterr().err
    assert BROKEN in err and err.count("\n") == 1 and "Traceback" not in err
    assert _files(report) == before


def test_a_stack_that_returns_zeros_keeps_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    icd = DmlStack.default().home / "mesa22" / "lvp_icd.json"
    if not icd.is_file():
        pytest.skip("the Mesa 22 lavapipe is not set up (ort-layouts setup dml --mesa 22)")
    report = tmp_path / "r"
    _good_report(report, capsys)
    before = _files(report)
    close_dml_worker()
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", str(icd))
    assert main(["validate", *SELECTION, "--report", str(report)]) == 2
    err = capsys.readouterr().err
    assert BROKEN in err and "every output is zeros" in err
    assert _files(report) == before


def test_a_hung_stack_writes_nothing_in_a_new_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _hang(monkeypatch)
    report = tmp_path / "new"
    assert main(["validate", *SELECTION, "--report", str(report)]) == 2
    err = capsys.readouterr().err
    assert BROKEN in err and "--resume" not in err
    assert not report.exists()


def test_a_resume_on_a_hung_stack_is_refused_as_broken_and_keeps_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r"
    _good_report(report, capsys, keep=3)
    before = _files(report)
    _hang(monkeypatch)
    assert main(["validate", *SELECTION, "--report", str(report), "--resume"]) == 2
    err = capsys.readouterr().err
    assert BROKEN in err and "did not answer in time" in err
    assert "this run: {" not in err and "drop --resume" not in err and "without --resume" not in err
    assert _files(report) == before


def test_a_resume_under_another_release_names_the_fields_that_differ(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r"
    _good_report(report, capsys, keep=3)
    ran = json.loads((report / "meta.json").read_text())["stack"]
    other = [v for v in available_directml_versions() if v != ran["directml_version"]]
    if not other:
        pytest.skip(f"no DirectML release but {ran['directml_version']} is set up (ort-layouts setup dml "
                    "--dml-version 1.13.1)")
    before = _files(report)
    assert main(["validate", *SELECTION, "--report", str(report), "--resume", "--dml-version", other[0]]) == 2
    err = capsys.readouterr().err.strip()
    assert f"directml_version '{ran['directml_version']}' → '{other[0]}'" in err
    for same in ("ort_version", "adapter_name", "vulkan_driver", "wine_version", "shader_model"):
        assert same not in err, same
    assert err.count("\n") == 0 and len(err) < 700
    assert _files(report) == before


def test_the_summary_names_the_ort_of_the_dml_ep(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", *SELECTION]) == 0
    out = capsys.readouterr().out
    assert "cases on DmlExecutionProvider (DirectML " in out and "; DML EP of ONNX Runtime 1.24.4): " in out
