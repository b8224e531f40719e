"""A closed report writer writes nothing more: its directory is let go, and another writer may
hold it. Writing its summaries or meta overwrote the new writer's meta.json and summaries, and
add raised a bare ``ValueError: I/O operation on closed file``; each is refused with a
ReportError naming the directory. What it holds it still gives; closing it again does nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import load_report
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"
META = {"provider": CPU, "selection": {}}
CASES = [Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed) for seed in range(4)]
PLANNED = [c.id for c in CASES]


def _result(case: Case) -> CaseResult:
    return CaseResult(case, Status.PASS, CPU, element_count=6, seconds=0.25)


def _files(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def test_a_closed_writer_writes_nothing_over_the_next_writer_s_report(tmp_path: Path) -> None:
    first = ReportWriter(tmp_path, meta=META, planned=PLANNED)
    first.add(_result(CASES[0]))
    first.close()
    second = ReportWriter(tmp_path, meta=META, planned=PLANNED, resume=True)
    try:
        second.add(_result(CASES[1]))
        second.write_summaries()
        before = _files(tmp_path)
        message = (f"ReportWriter for {tmp_path} is closed: it writes nothing more (the directory is let go, "
                   "and another writer may hold it now); valid: a writer not yet closed "
                   "(ReportWriter(..., resume=True) continues its report)")
        for write in (lambda: first.write_summaries(finished=True), lambda: first.write_summaries(),
                      lambda: first.update_meta(device="elsewhere"), lambda: first.add(_result(CASES[2])),
                      lambda: first.add_encoded_all([(_result(CASES[3]),
                                                      second.encode_results([_result(CASES[3])])[0])])):
            with pytest.raises(ReportError) as info:
                write()
            assert str(info.value) == message
        assert _files(tmp_path) == before  # second's meta.json, results.jsonl and summaries
        assert "device" not in first.meta
        # what the closed writer holds it still gives
        assert [r.case.id for r in first.results] == PLANNED[:1]
        assert [r.case.id for r in first.report().results] == PLANNED[:1]
        first.close()  # again: nothing
        for case in CASES[2:]:
            second.add(_result(case))
        second.write_summaries(finished=True)
    finally:
        second.close()
    report = load_report(tmp_path)
    assert [r.case.id for r in report.results] == PLANNED and "finished" in report.meta


def test_a_with_block_of_a_writer_closed_inside_it_ends_quietly(tmp_path: Path) -> None:
    """As documented: a block whose writer was closed (a session finished it) writes nothing
    as it ends, and raises nothing."""
    with ReportWriter(tmp_path, meta=META, planned=PLANNED) as w:
        for case in CASES:
            w.add(_result(case))
        w.write_summaries(finished=True)
        w.close()
        before = _files(tmp_path)
    assert _files(tmp_path) == before
    with pytest.raises(ReportError, match="is closed"):
        w.add(_result(CASES[0]))
