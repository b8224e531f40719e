"""A stop (Ctrl-C, SIGTERM) that lands while a report's files are written together waits until
they agree: the summaries of every result, never the summaries of the run's start beside a
results.jsonl of every result; a new report's start, never an earlier run's finished meta.json
beside an emptied results.jsonl. A stop inside the atomic writes' machinery raises itself (not
a RuntimeError of a thread never started) and leaves no temporary file; a resume refuses a line
of another execution provider as it refuses one of another selection."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports import report as report_module
from ort_layouts.reports import writer as writer_module
from ort_layouts.reports.report import JSON_FILE, JUNIT_FILE, META_FILE, RESULTS_FILE, atomic_write_texts
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"
CASES = [Case("Transpose", "float32", (2, k), perm=(1, 0)) for k in (3, 4, 5)]


def _result(case: Case, provider: str = CPU) -> CaseResult:
    return CaseResult(case, Status.PASS, provider, element_count=2 * case.shape[1], seconds=0.01,
                      descriptors={"operator": "x"})


def _interrupting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, signum: int) -> list[int]:
    """``module.name`` that sends this process ``signum`` as it is first called, then does its work."""
    real, sent = getattr(module, name), []

    def call(*args: Any, **kwargs: Any) -> Any:
        if not sent:
            sent.append(signum)
            os.kill(os.getpid(), signum)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, call)
    return sent


@pytest.fixture
def sigterm_raises() -> Any:
    """SIGTERM raises as the command line's handler makes it (a KeyboardInterrupt), for the test."""
    class Terminated(KeyboardInterrupt):
        pass

    def raise_terminated(signum: int, frame: object) -> None:
        raise Terminated(signum)

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    yield Terminated
    signal.signal(signal.SIGTERM, previous)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_final_summaries_are_written_lets_them_finish(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sigterm_raises: Any, signum: int) -> None:
    w = ReportWriter(tmp_path, meta={"provider": CPU}, planned=[c.id for c in CASES])
    for case in CASES:
        w.add(_result(case))
    sent = _interrupting(monkeypatch, writer_module, "_write_files", signum)
    with pytest.raises(KeyboardInterrupt):
        w.write_summaries(finished=True)
    w.close()
    assert sent == [signum]
    summary = json.loads((tmp_path / JSON_FILE).read_text())
    assert [r["id"] for r in summary["results"]] == [c.id for c in CASES]
    assert summary["verdict"] == "pass"
    assert 'tests="3"' in (tmp_path / JUNIT_FILE).read_text()
    assert "finished" in json.loads((tmp_path / META_FILE).read_text())


def test_a_stop_as_a_new_report_starts_over_a_finished_one_leaves_the_new_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ReportWriter(tmp_path, meta={"provider": CPU, "command": "old"}, planned=[CASES[0].id]) as old:
        old.add(_result(CASES[0]))
    assert "finished" in json.loads((tmp_path / META_FILE).read_text())
    _interrupting(monkeypatch, Path, "unlink", signal.SIGINT)  # as the old summaries are removed
    with pytest.raises(KeyboardInterrupt):
        ReportWriter(tmp_path, meta={"provider": CPU, "command": "new"}, planned=[c.id for c in CASES],
                     force=True)
    meta = json.loads((tmp_path / META_FILE).read_text())
    assert meta["command"] == "new" and "finished" not in meta
    assert (tmp_path / RESULTS_FILE).read_bytes() == b""
    assert json.loads((tmp_path / JSON_FILE).read_text())["verdict"] == "incomplete"
    assert (tmp_path / JUNIT_FILE).is_file()


def test_a_stop_as_the_syncing_thread_starts_raises_itself_and_leaves_no_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It raised "RuntimeError: cannot join thread before it is started" (the thread was noted
    before it started, and joined as the write was undone)."""
    def interrupted_start(self: threading.Thread) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(report_module.threading.Thread, "start", interrupted_start)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_texts([(tmp_path / "a.json", "{}"), (tmp_path / "b.json", "{}")])
    assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_as_its_file_is_closed_leaves_no_temporary_file_and_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk fails the write and then the close's flush: the temporary file stayed."""
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd: int) -> None:
            self.file = real_fdopen(fd, "wb")

        def write(self, data: bytes) -> int:
            raise OSError(28, "No space left on device")

        def close(self) -> None:
            self.file.close()
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(report_module.os, "fdopen", lambda fd, mode: Full(fd))
    with pytest.raises(OSError) as info:
        atomic_write_texts([(tmp_path / "a.json", "{}")])
    assert list(tmp_path.iterdir()) == []
    # the error names the file it failed to write, where it named none
    assert str(info.value) == f"[Errno 28] No space left on device: '{tmp_path / 'a.json'}'"


def test_a_resume_refuses_a_line_of_another_execution_provider(tmp_path: Path) -> None:
    with ReportWriter(tmp_path, meta={"provider": CPU}, planned=[c.id for c in CASES]) as w:
        w.add(_result(CASES[0]))
    lines = (tmp_path / RESULTS_FILE).read_text().splitlines()
    other = json.loads(lines[0])
    other["case"]["shape"] = [2, 4]
    other["id"] = CASES[1].id
    other["provider"] = "DmlExecutionProvider"
    (tmp_path / RESULTS_FILE).write_text(lines[0] + "\n" + json.dumps(other) + "\n")
    with pytest.raises(ReportError) as info:
        ReportWriter(tmp_path, meta={"provider": CPU}, planned=[c.id for c in CASES], resume=True)
    assert str(info.value) == (
        f"cannot resume {tmp_path}: results.jsonl line 2 holds a result of {CASES[1].id!r} on "
        f"'DmlExecutionProvider', not this report's '{CPU}'; remove that line to resume, or run without "
        "--resume to start the report over")
