"""The report writer as a context manager: a ``with`` block that ends writes the reports
``validate`` writes (finished summaries), one that raises the summaries of what arrived, and a
writer a session already finished and closed is not written again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports import writer as writer_module
from ort_layouts.reports.report import HTML_FILE, JSON_FILE, META_FILE, RESULTS_FILE, load_report
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"
META = {"provider": CPU, "command": "ort-layouts validate", "selection": {"provider": CPU}}


def _results() -> list[CaseResult]:
    return [CaseResult(Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed), Status.PASS, CPU,
                       element_count=6, seconds=0.5) for seed in range(3)]


def _summary(directory: Path) -> tuple[int, str, bool]:
    data = json.loads((directory / JSON_FILE).read_text(encoding="utf-8"))
    return len(data["results"]), data["verdict"], data["complete"]


def _count_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time a writer writes its summaries."""
    writes: list[int] = []
    real = writer_module._write_files

    def counted(*args: Any, **kwargs: Any) -> dict[str, Path]:
        writes.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(writer_module, "_write_files", counted)
    return writes


def test_a_block_that_ends_writes_the_finished_summaries(tmp_path: Path) -> None:
    results = _results()
    with ReportWriter(tmp_path, meta=META, planned=[r.case.id for r in reversed(results)],
                      interval_s=3600) as w:
        for r in results:
            w.add(r)
    assert _summary(tmp_path) == (3, "pass", True)
    assert "finished" in json.loads((tmp_path / META_FILE).read_text(encoding="utf-8"))
    assert 'class="verdict pass">PASS<' in (tmp_path / HTML_FILE).read_text(encoding="utf-8")
    # results.jsonl rewritten in planned order, as a finished run leaves it
    lines = (tmp_path / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["id"] for x in lines] == [r.case.id for r in reversed(results)]
    assert load_report(tmp_path).verdict() == "pass"


def test_a_block_that_raises_writes_the_summaries_of_what_arrived_unfinished(tmp_path: Path) -> None:
    results = _results()
    with pytest.raises(KeyboardInterrupt), ReportWriter(
            tmp_path, meta=META, planned=[r.case.id for r in results], interval_s=3600) as w:
        w.add(results[0])
        raise KeyboardInterrupt
    assert _summary(tmp_path) == (1, "incomplete", False)
    assert "finished" not in json.loads((tmp_path / META_FILE).read_text(encoding="utf-8"))
    assert "INCOMPLETE (1 of 3 cases run)" in (tmp_path / HTML_FILE).read_text(encoding="utf-8")
    # and the directory is let go: the run resumes
    with ReportWriter(tmp_path, meta=META, planned=[r.case.id for r in results], resume=True) as again:
        assert again.done_ids == {results[0].case.id}


def test_summaries_that_fail_while_the_block_raises_leave_its_exception(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = _results()

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    with (pytest.raises(RuntimeError, match="the run's own error") as raised,
          ReportWriter(tmp_path, meta=META, planned=[r.case.id for r in results]) as w):
        w.add(results[0])
        monkeypatch.setattr(writer_module, "_write_files", full)
        raise RuntimeError("the run's own error")
    assert any("could not be written" in note and "No space left" in note
               for note in getattr(raised.value, "__notes__", []))
    assert (tmp_path / RESULTS_FILE).read_text(encoding="utf-8").count("\n") == 1  # kept, and synced


def test_summaries_written_finished_are_not_written_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A block that finishes the run itself (as merge does), or a session that finishes and
    closes its writer, is not followed by a second write as the block ends."""
    results = _results()
    planned = [r.case.id for r in results]
    writes = _count_writes(monkeypatch)
    with ReportWriter(tmp_path / "a", meta=META, planned=planned) as w:
        for r in results:
            w.add(r)
        w.write_summaries(finished=True)
        assert len(writes) == 2  # as it started, and the finish
    assert len(writes) == 2
    writes.clear()
    with ReportWriter(tmp_path / "b", meta=META, planned=planned) as w:  # what ValidationSession does
        for r in results:
            w.add(r)
        w.write_summaries(finished=True)
        w.close()
    assert len(writes) == 2
    writes.clear()
    with ReportWriter(tmp_path / "c", meta=META, planned=planned) as w:  # a result after the finish
        for r in results:
            w.add(r)
        w.write_summaries(finished=True)
        w.add(results[0])
    assert len(writes) == 3


def test_a_session_in_a_block_writes_its_summaries_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine.session import ValidationSession
    from ort_layouts.engine.suite import standard_suite

    cases = standard_suite(ops=["Transpose"], dtypes=["int8"], ranks=[1])
    writes = _count_writes(monkeypatch)
    with ReportWriter(tmp_path, meta=META, planned=[c.id for c in cases]) as w:
        ValidationSession(cases, provider=CPU, writer=w, jobs=1).run()
    assert len(writes) == 2  # as it started, and the session's finish
    assert _summary(tmp_path) == (len(cases), "pass", True)
