"""check_report_directory refuses, without writing anything, exactly what a ReportWriter of the
same directory refuses as it opens it (its message too), so that a run of several reports
refuses them all before the first one runs: another selection's report (resumed or replaced
without force, with or without results), one resumed without its meta.json, a file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ort_layouts import ReportError
from ort_layouts.reports.writer import ReportWriter, check_report_directory

META = {"provider": "CPUExecutionProvider", "selection": {"ops": ["Pad"]}}
PLANNED = ["Pad-a", "Pad-b"]


def _other_selection(d: Path) -> None:
    with ReportWriter(d, meta={**META, "selection": {"ops": ["Transpose"]}}, planned=["T-a"]):
        pass


def _other_selection_without_results(d: Path) -> None:
    _other_selection(d)
    (d / "results.jsonl").unlink()


def _results_without_meta(d: Path) -> None:
    _other_selection(d)
    (d / "meta.json").unlink()


def _same_selection(d: Path) -> None:
    with ReportWriter(d, meta=META, planned=PLANNED):
        pass


def _a_file(d: Path) -> None:
    d.write_text("")


@pytest.mark.parametrize("make", [_other_selection, _other_selection_without_results, _results_without_meta,
                                  _same_selection, _a_file])
@pytest.mark.parametrize(("resume", "force"), [(False, False), (True, False), (False, True)])
def test_the_check_refuses_what_the_writer_refuses(tmp_path: Path, make: Callable[[Path], None],
                                                   resume: bool, force: bool) -> None:
    d = tmp_path / "r"
    make(d)
    before = sorted(p.name for p in d.iterdir()) if d.is_dir() else None
    try:
        check_report_directory(d, selection=META["selection"], planned=PLANNED, resume=resume, force=force)
        checked = ""
    except ReportError as e:
        checked = str(e)
    assert (sorted(p.name for p in d.iterdir()) if d.is_dir() else None) == before  # nothing written
    try:
        ReportWriter(d, meta=META, planned=PLANNED, resume=resume, force=force).close()
        opened = ""
    except ReportError as e:
        opened = str(e)
    assert checked == opened
