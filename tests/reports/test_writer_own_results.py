"""A report writer takes only the results its report's resume counts: of a planned case, and on
the meta's provider where it names one. add took a result of a case not planned, or of another
provider, and the report finished with verdict pass; a resume of it was then refused ("results.jsonl
line 3 holds case ..., which is not in this report's selection"). Refused at add, and at
add_encoded_all, with an ArgumentError naming the case, before anything is written."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ort_layouts._errors import ArgumentError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import RESULTS_FILE, load_report
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"
META = {"provider": CPU, "selection": {"provider": CPU}}
CASES = [Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed) for seed in range(3)]
PLANNED = [c.id for c in CASES[:2]]
STRANGER = CASES[2]  # of no planned id


def _result(case: Case, provider: str = CPU) -> CaseResult:
    return CaseResult(case, Status.PASS, provider, element_count=6, seconds=0.25)


NOT_PLANNED = (f"result of case {STRANGER.id!r} is not one of this report's 2 planned cases; valid: a "
               "result of a planned case (ReportWriter's planned): a report holds its own selection's "
               "results, as its resume counts no other")
OTHER_PROVIDER = (f"result of {PLANNED[0]!r} on 'DmlExecutionProvider' is not of this report's provider "
                  f"{CPU!r} (its meta's); valid: a result on {CPU!r}: a report holds one provider's "
                  "results, as its resume counts no other's")


@pytest.mark.parametrize(("result", "message"), [
    (_result(STRANGER), NOT_PLANNED), (_result(CASES[0], "DmlExecutionProvider"), OTHER_PROVIDER),
], ids=["case-not-planned", "other-provider"])
def test_a_result_the_report_s_resume_refuses_is_not_added(
        tmp_path: Path, result: CaseResult, message: str) -> None:
    with ReportWriter(tmp_path, meta=META, planned=PLANNED) as w:
        w.add(_result(CASES[1]))
        written = (tmp_path / RESULTS_FILE).read_bytes()
        with pytest.raises(ArgumentError) as info:
            w.add(result)
        assert str(info.value) == message
        with pytest.raises(ArgumentError) as info:
            w.add_encoded_all([(_result(CASES[0]), w.encode_results([_result(CASES[0])])[0]),
                               (result, w.encode_results([result])[0])])
        assert str(info.value) == f"pairs[1]: {message}"
        assert (tmp_path / RESULTS_FILE).read_bytes() == written and len(w.results) == 1
        w.add(_result(CASES[0]))
    # the report finished as it is: the resume counts every result it holds
    assert load_report(tmp_path).verdict() == "pass"
    with ReportWriter(tmp_path, meta=META, planned=PLANNED, resume=True) as w:
        assert w.done_ids == set(PLANNED)


def test_a_meta_that_names_no_provider_takes_any_provider_s_results(tmp_path: Path) -> None:
    """As a resume of it counts them (its meta names no provider to compare with)."""
    results = [_result(CASES[0], "DmlExecutionProvider"), _result(CASES[1])]
    with ReportWriter(tmp_path, meta={"selection": {}}, planned=PLANNED) as w:
        for r in results:
            w.add(r)
    with ReportWriter(tmp_path, meta={"selection": {}}, planned=PLANNED, resume=True) as w:
        assert w.results == tuple(results)


def test_a_case_planned_no_more_is_refused_and_its_result_kept_as_unplanned(tmp_path: Path) -> None:
    """update_meta changed the planned ids: results that came before stay (unplanned, after the
    planned ones); a new result of a case no longer planned is refused."""
    first = _result(CASES[0])
    with ReportWriter(tmp_path, meta=META, planned=[c.id for c in CASES]) as w:
        w.add(first)
        w.add(_result(STRANGER))
        w.update_meta(planned=PLANNED)
        with pytest.raises(ArgumentError, match=f"^result of case {STRANGER.id!r} is not one of this "
                                                "report's 2 planned cases"):
            w.add(dataclasses.replace(_result(STRANGER), seconds=1.0))
        w.add(_result(CASES[1]))
        report = w.report()
    assert [r.case.id for r in report.results] == [*PLANNED, STRANGER.id]
    assert report.coverage().unplanned == 1 and report.results[2].seconds == 0.25


def test_planned_ids_given_to_update_meta_are_the_writer_s_own_copy(tmp_path: Path) -> None:
    """A caller's list that changes after update_meta changes neither what add takes nor what the
    report plans: the writer had kept the list itself, and its cache of the ids had not seen the
    change, so a result of the id appended was refused while the report counted 3 planned cases."""
    ids = list(PLANNED)
    with ReportWriter(tmp_path, meta=META, planned=[]) as w:
        w.update_meta(planned=ids)
        ids.append(STRANGER.id)
        w.add(_result(CASES[0]))
        with pytest.raises(ArgumentError) as info:
            w.add(_result(STRANGER))
        assert str(info.value) == NOT_PLANNED
        assert w.meta["planned"] == PLANNED and w.report().meta["planned"] == PLANNED
