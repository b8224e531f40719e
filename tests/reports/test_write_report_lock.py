"""write_report holds the directory it writes, with the lock a report writer holds for its life:
writing into a directory a live ReportWriter holds replaced the writer's summaries with its own.
Refused with a ReportError naming the holder; a writer is refused while write_report writes."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports import writer as writer_module
from ort_layouts.reports.lock import LOCK_FILE
from ort_layouts.reports.report import Report, load_report
from ort_layouts.reports.writer import ReportWriter, write_report

CPU = "CPUExecutionProvider"
CASES = [Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed) for seed in range(2)]
RESULTS = tuple(CaseResult(c, Status.PASS, CPU, element_count=6, seconds=0.5) for c in CASES)
META = {"provider": CPU, "command": "ort-layouts validate --ops Transpose",
        "started": "2026-01-02T03:04:05+00:00"}


def _files(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def test_write_report_into_a_directory_a_writer_holds_is_refused_naming_it(tmp_path: Path) -> None:
    other = Report({"provider": CPU, "planned": [CASES[1].id]}, RESULTS[1:])
    with ReportWriter(tmp_path, meta=META, planned=[CASES[0].id]) as w:
        w.add(RESULTS[0])
        w.write_summaries()
        before = _files(tmp_path)
        with pytest.raises(ReportError) as info:
            write_report(other, tmp_path)
        assert str(info.value) == (
            f"report directory {str(tmp_path)!r} is in use by another run: pid {os.getpid()} on host "
            f"{platform.node()}, started 2026-01-02T03:04:05+00:00: ort-layouts validate --ops Transpose; "
            "wait for it to end, or use another report directory")
        assert _files(tmp_path) == before  # the writer's summaries, as it wrote them
    assert [r.case.id for r in load_report(tmp_path / "report.json").results] == [CASES[0].id]
    # once the writer let it go, the directory is written, and let go again
    write_report(other, tmp_path)
    assert [r.case.id for r in load_report(tmp_path / "report.json").results] == [CASES[1].id]
    assert (tmp_path / LOCK_FILE).read_bytes() == b""  # no holder named
    with ReportWriter(tmp_path, meta=META, planned=[CASES[0].id], force=True):
        pass


def test_a_writer_is_refused_while_write_report_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused: list[str] = []
    real = writer_module._write_files

    def meanwhile(*args: Any, **kwargs: Any) -> dict[str, Path]:
        try:
            ReportWriter(tmp_path, meta=META, planned=[CASES[0].id], force=True)
        except ReportError as e:
            refused.append(str(e))
        return real(*args, **kwargs)

    monkeypatch.setattr(writer_module, "_write_files", meanwhile)
    write_report(Report({"provider": CPU}, RESULTS), tmp_path)
    assert len(refused) == 1
    assert refused[0].startswith(f"report directory {str(tmp_path)!r} is in use by another run: pid "
                                 f"{os.getpid()} on host {platform.node()}, started ")
    assert refused[0].endswith(": write_report; wait for it to end, or use another report directory")
    assert len(load_report(tmp_path / "report.json").results) == 2
