"""validate checks that the provider starts before it replaces (or resumes) the report in
--report DIR: a run that cannot start stops with one line saying why, and the report already
there is kept byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnxruntime
import pytest

from ort_layouts.frontends.cli import main

SMALL = ["--provider", "cpu", "--ops", "Transpose", "--dtypes", "float32", "--ranks", "1-2",
         "--progress", "none"]


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _broken_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """ONNX Runtime refuses every session, as an EP whose libraries fail to load does."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the EP's library failed to load")

    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)


def test_a_provider_that_cannot_create_a_session_keeps_the_old_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r"
    assert main(["validate", *SMALL, "--report", str(report)]) == 0
    before = _files(report)
    capsys.readouterr()
    _broken_sessions(monkeypatch)
    for resume in ([], ["--resume"]):
        assert main(["validate", *SMALL, "--report", str(report), *resume]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert "CPUExecutionProvider cannot start, so no case was run" in err
        assert "the EP's library failed to load" in err and "--resume" not in err
        assert _files(report) == before


def test_a_provider_that_cannot_start_writes_nothing_in_a_new_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _broken_sessions(monkeypatch)
    report = tmp_path / "new"
    assert main(["validate", *SMALL, "--report", str(report)]) == 2
    assert "cannot start, so no case was run" in capsys.readouterr().err
    assert not report.exists()


def test_an_unavailable_provider_keeps_the_old_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.engine.providers import list_providers

    missing = [p.short_name for p in list_providers()
               if not p.available and p.short_name in ("cuda", "webgpu")]
    if not missing:
        pytest.skip("CUDA and WebGPU are both available here")
    report = tmp_path / "r"
    assert main(["validate", *SMALL, "--report", str(report)]) == 0
    before = _files(report)
    capsys.readouterr()
    args = [a if a != "cpu" else missing[0] for a in SMALL]
    assert main(["validate", *args, "--report", str(report), "--force"]) == 2
    assert "is not available" in capsys.readouterr().err
    assert _files(report) == before
