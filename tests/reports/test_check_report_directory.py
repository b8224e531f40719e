"""check_report_directory refuses, without writing anything, exactly what a ReportWriter of the
same directory refuses as it opens it (its message too), so that a run of several reports
refuses them all before the first one runs: another selection's report (resumed or replaced
without force, with or without results), one resumed without its meta.json, a file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ort_layouts import ArgumentError, ReportError
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
    # a file is refused always; another selection's report, unless replaced with force
    assert bool(checked) == (make is _a_file or (make is not _same_selection and not force))


def test_a_flag_that_is_no_bool_is_refused_before_the_files_are_looked_at(tmp_path: Path) -> None:
    """The writer checks its arguments before the directory's files; the check took a results.jsonl
    that is a directory first (a ReportError, where the writer raised an ArgumentError)."""
    d = tmp_path / "r"
    (d / "results.jsonl").mkdir(parents=True)
    for flags in ({"force": "no"}, {"resume": 1}):
        with pytest.raises(ArgumentError, match=f"{next(iter(flags))} "):
            check_report_directory(d, selection=META["selection"], planned=PLANNED, **flags)  # type: ignore[arg-type]
        with pytest.raises(ArgumentError, match=f"{next(iter(flags))} "):
            ReportWriter(d, meta=META, planned=PLANNED, **flags)  # type: ignore[arg-type]
