"""ReportWriter's and write_report's arguments are checked before anything is written: a typed
error naming the value and what is valid, never a TypeError or AttributeError from inside, nor a
report written into the current directory for an empty path."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ort_layouts._errors import ArgumentError, ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import JSON_FILE, RESULTS_FILE, Report, read_results
from ort_layouts.reports.writer import ReportWriter, write_report

PROVIDER = "CPUExecutionProvider"
CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _writer(directory: Any = "d", **options: Any) -> Callable[[], object]:
    arguments: dict[str, Any] = {"meta": {}, "planned": [], **options}
    return lambda: ReportWriter(directory, **arguments)


@pytest.mark.parametrize(("make", "error", "message"), [
    (_writer(directory=""), ReportError,
     "report directory '' is empty; valid: the path of a directory, e.g. 'reports/r1' ('.' for the current "
     "one)"),
    (_writer(directory=5), ArgumentError,
     "report directory 5 is an int; valid: a str or os.PathLike naming a directory, e.g. 'reports/r1'"),
    (_writer(meta=None), ArgumentError,
     "meta None is a NoneType, not a mapping; valid: a dict of the run's fields"),
    (_writer(meta={"selection": "x"}), ArgumentError, "meta's selection 'x' is a str, not a mapping"),
    (_writer(planned="abc"), ArgumentError,
     "planned 'abc' is not a sequence of case ids; valid: a list of str"),
    (_writer(planned=[1, 2]), ArgumentError, "planned [1, 2] is not a sequence of case ids"),
    (_writer(interval_s=-1), ArgumentError, "interval_s -1 is not a number of seconds >= 0; valid: e.g. "),
    (_writer(interval_s=float("nan")), ArgumentError, "interval_s nan is not a number of seconds >= 0"),
    (_writer(interval_s="30"), ArgumentError, "interval_s '30' is not a number of seconds >= 0"),
    (_writer(interval_s=True), ArgumentError, "interval_s True is not a number of seconds >= 0"),
    (_writer(directory="afile"), ReportError, "report directory 'afile' is a file; valid: a directory"),
    (_writer(force="no"), ArgumentError, "force 'no' is a str, not a bool; valid: True or False"),
    (_writer(resume=1), ArgumentError, "resume 1 is an int, not a bool; valid: True or False"),
    (lambda: write_report(Report({}, ()), ""), ReportError, "report directory '' is empty"),
    (lambda: write_report(Report({}, ()), "afile"), ReportError,
     "report directory 'afile' is a file; valid: a directory"),
    (lambda: write_report(None, "d"), ArgumentError,  # type: ignore[arg-type]
     "report None is a NoneType, not a Report; valid: a Report"),
    (lambda: write_report("r1", "d"), ArgumentError, "report 'r1' is a str, not a Report"),  # type: ignore[arg-type]
], ids=["writer-empty-dir", "writer-int-dir", "meta-none", "selection-str", "planned-str", "planned-ints",
        "interval-negative", "interval-nan", "interval-str", "interval-bool", "writer-file", "force-str",
        "resume-int",
        "write-empty-dir", "write-file", "report-none", "report-str"])
def test_bad_arguments_are_refused_before_anything_is_written(
        cwd: Path, make: Callable[[], object], error: type[Exception], message: str) -> None:
    (cwd / "afile").write_text("x")
    with pytest.raises(error) as info:
        make()
    assert str(info.value).startswith(message)
    assert sorted(os.listdir(cwd)) == ["afile"]  # nothing written, here or in "d"
    assert (cwd / "afile").read_text() == "x"


def test_add_refuses_what_is_not_a_result(tmp_path: Path) -> None:
    with ReportWriter(tmp_path, meta={}, planned=[CASE.id]) as w:
        with pytest.raises(ArgumentError, match=r"^result 'x' is a str, not a CaseResult; valid: a "):
            w.add("x")  # type: ignore[arg-type]
        w.add(CaseResult(CASE, Status.PASS, PROVIDER, element_count=6, seconds=0.01))
    assert [r.case.id for r in read_results(tmp_path / RESULTS_FILE)] == [CASE.id]


@pytest.mark.parametrize("interval_s", [0, 0.5, float("inf")], ids=["every-result", "half-second", "never"])
def test_an_interval_of_zero_or_more_is_taken(tmp_path: Path, interval_s: float) -> None:
    # 0: the summaries after every result; inf: merge_shards writes them only as it starts and ends
    with ReportWriter(tmp_path, meta={}, planned=[], interval_s=interval_s) as w:
        assert w.interval_s == interval_s


@pytest.mark.parametrize(("interval_s", "rewritten"), [(0, True), (float("inf"), False)],
                         ids=["every-result", "never"])
def test_the_interval_decides_whether_a_result_rewrites_the_summaries(tmp_path: Path, interval_s: float,
                                                                       rewritten: bool) -> None:
    with ReportWriter(tmp_path, meta={}, planned=[CASE.id], interval_s=interval_s) as w:
        before = (tmp_path / JSON_FILE).read_text()
        assert json.loads(before)["results"] == []
        w.add(CaseResult(CASE, Status.PASS, PROVIDER, element_count=6, seconds=0.01))
        after = (tmp_path / JSON_FILE).read_text()
        if rewritten:
            assert [(r["id"], r["status"]) for r in json.loads(after)["results"]] == [(CASE.id, "pass")]
        else:
            assert after == before
