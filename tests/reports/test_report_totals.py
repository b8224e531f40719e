"""One count of a report's cases run and not run, and one verdict, in every summary: report.json,
junit.xml, report.html and the text summary say the same numbers of a report that holds results
of cases it did not plan, results of one case twice, or planned cases without a result; the
fields report.json derives are never read back as meta; a run's encoders draw no more failing
cases' sections than the page draws, over all of a worker's units.

The expected numbers are worked out by hand from the results each test makes."""

from __future__ import annotations

import json
import math
import pickle
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports import report as report_module
from ort_layouts.reports.html import MAX_PICTURES
from ort_layouts.reports.report import (
    HTML_FILE,
    JSON_FILE,
    JUNIT_FILE,
    Coverage,
    Report,
    load_report,
    summary_line,
)
from ort_layouts.reports.writer import ReportWriter, ResultEncoder, write_report

CPU = "CPUExecutionProvider"
META: dict[str, Any] = {"provider": CPU, "device": "test cpu", "command": "ort-layouts validate",
                        "environment": {"hostname": "h", "os": "TestOS", "python": "3.11"},
                        "selection": {"provider": CPU}, "started": "2026-01-02T03:04:05+00:00"}


def _case(rows: int, cols: int = 2) -> Case:
    return Case("Transpose", "float32", (rows, cols), perm=(1, 0))


def _passed(case: Case) -> CaseResult:
    return CaseResult(case, Status.PASS, CPU, device="test cpu", element_count=case.shape[0] * case.shape[1])


def _error(case: Case, message: str = "device removed") -> CaseResult:
    return CaseResult(case, Status.ERROR, CPU, device="test cpu", message=message)


PLANNED = [_case(k) for k in range(1, 6)]  # five planned cases
UNPLANNED = [_case(k, 3) for k in range(1, 4)]  # three cases of another selection
PLANNED_IDS = [c.id for c in PLANNED]


def _files(directory: Path) -> tuple[dict[str, Any], ET.Element, str]:
    data = json.loads((directory / JSON_FILE).read_text(encoding="utf-8"))
    suite = ET.parse(directory / JUNIT_FILE).getroot().find("testsuite")
    assert suite is not None
    return data, suite, (directory / HTML_FILE).read_text(encoding="utf-8")


def _missing_message(suite: ET.Element) -> str | None:
    found = [t for t in suite.findall("testcase") if t.get("name") == "planned cases without a result"]
    if not found:
        return None
    (testcase,) = found
    failure = testcase.find("failure")
    assert failure is not None and failure.get("type") == "incomplete"
    return failure.get("message")


def _suite_counts(suite: ET.Element) -> tuple[int, ...]:
    return tuple(int(suite.get(name, "-1")) for name in ("tests", "failures", "errors", "skipped"))


def _written(directory: Path, arrived: list[CaseResult]) -> Report:
    """A run's report directory of ``arrived`` (the planned cases: PLANNED), finished. A writer
    takes only results of planned cases: those of UNPLANNED among them were planned when they
    arrived, and are no longer (the planned ids changed)."""
    unplanned = [cid for cid in dict.fromkeys(r.case.id for r in arrived) if cid not in PLANNED_IDS]
    with ReportWriter(directory, meta=META, planned=[*PLANNED_IDS, *unplanned],
                      interval_s=math.inf) as writer:
        for r in arrived:
            writer.add(r)
        writer.update_meta(planned=PLANNED_IDS)
        return writer.write_summaries(finished=True)


# ---- the count of cases run and not run ------------------------------------------------------

def test_a_report_with_unplanned_results_counts_only_planned_cases_as_run(tmp_path: Path) -> None:
    """Two of five planned cases ran, and three cases that were not planned: 2 of 5 run, 3 of 5
    without a result, everywhere (not "5 of 5 cases run", not "0 of 5 not run")."""
    arrived = [_passed(PLANNED[0]), *map(_passed, UNPLANNED), _passed(PLANNED[3])]
    report = _written(tmp_path, arrived)
    assert report.coverage() == Coverage(planned=5, run=2, unplanned=3)
    assert (report.planned_count, report.complete, report.verdict()) == (5, False, "incomplete")
    data, suite, page = _files(tmp_path)
    assert (data["planned_count"], data["complete"], data["verdict"], data["failures"]) == (5, False,
                                                                                          "incomplete", 0)
    assert data["summary"] == {"pass": 5, "mismatch": 0, "unsupported": 0, "error": 0}
    assert len(data["results"]) == 5
    # five testcases and the one that says three planned cases have no result
    assert _suite_counts(suite) == (6, 1, 0, 0)
    assert _missing_message(suite) == ("3 of 5 planned cases have no result: the run stopped, or is still "
                                       "running (resume it with validate --resume)")
    assert '<p class="verdict incomplete">INCOMPLETE (2 of 5 cases run)</p>' in page
    assert "<title>ort_layouts INCOMPLETE (2 of 5 cases run): CPUExecutionProvider test cpu</title>" in page
    assert summary_line(report) == ("5 cases on CPUExecutionProvider (test cpu): 5 passed, 0 mismatched, "
                                    "0 errors; 3 of 5 not run")
    again = load_report(tmp_path)  # meta.json and results.jsonl: the same count
    assert again.coverage() == Coverage(5, 2, 3) and summary_line(again) == summary_line(report)
    assert "finished" not in again.meta  # not every planned case ran


def test_a_report_with_missing_cases_says_how_many_everywhere(tmp_path: Path) -> None:
    """Two of five planned cases ran, one of them an error: FAIL, 2 of 5 run, 3 of 5 missing."""
    report = _written(tmp_path, [_error(PLANNED[4]), _passed(PLANNED[1])])
    assert report.coverage() == Coverage(planned=5, run=2, unplanned=0)
    assert (report.planned_count, report.complete, report.verdict()) == (5, False, "fail")
    data, suite, page = _files(tmp_path)
    assert (data["planned_count"], data["complete"], data["verdict"], data["failures"]) == (5, False,
                                                                                          "fail", 1)
    assert _suite_counts(suite) == (3, 1, 1, 0)  # the pass, the error, and the missing cases' failure
    assert _missing_message(suite) == ("3 of 5 planned cases have no result: the run stopped, or is still "
                                       "running (resume it with validate --resume)")
    assert '<p class="verdict fail">FAIL (incomplete: 2 of 5 cases run)</p>' in page
    assert summary_line(report) == ("2 cases on CPUExecutionProvider (test cpu): 1 passed, 0 mismatched, "
                                    "1 errors; 3 of 5 not run")


def test_results_of_one_case_twice_count_it_once(tmp_path: Path) -> None:
    """A report (made by hand) with two results of one planned case and one of another, of three
    planned: 2 of 3 run, 1 of 3 without a result."""
    meta = {**META, "planned": PLANNED_IDS[:3]}
    report = Report(meta, (_passed(PLANNED[0]), _passed(PLANNED[0]), _passed(PLANNED[2])))
    assert report.coverage() == Coverage(planned=3, run=2, unplanned=0)
    write_report(report, tmp_path)
    data, suite, page = _files(tmp_path)
    assert (data["planned_count"], data["complete"], data["verdict"]) == (3, False, "incomplete")
    assert _suite_counts(suite) == (4, 1, 0, 0)
    assert _missing_message(suite) == ("1 of 3 planned cases have no result: the run stopped, or is still "
                                       "running (resume it with validate --resume)")
    assert '<p class="verdict incomplete">INCOMPLETE (2 of 3 cases run)</p>' in page
    assert summary_line(report).endswith("3 passed, 0 mismatched, 0 errors; 1 of 3 not run")


def test_a_complete_report_with_unplanned_results_is_complete(tmp_path: Path) -> None:
    """Every planned case ran, and two that were not planned: complete, a pass, no missing
    cases' testcase."""
    report = _written(tmp_path, [*map(_passed, PLANNED), *map(_passed, UNPLANNED[:2])])
    assert report.coverage() == Coverage(planned=5, run=5, unplanned=2)
    assert (report.complete, report.verdict()) == (True, "pass")
    data, suite, page = _files(tmp_path)
    assert (data["planned_count"], data["complete"], data["verdict"]) == (5, True, "pass")
    assert _suite_counts(suite) == (7, 0, 0, 0) and _missing_message(suite) is None
    assert '<p class="verdict pass">PASS</p>' in page
    assert summary_line(report) == ("7 cases on CPUExecutionProvider (test cpu): 7 passed, 0 mismatched, "
                                    "0 errors")
    assert "finished" in load_report(tmp_path).meta


def test_a_report_json_counts_its_results_as_planned_up_to_its_planned_count() -> None:
    """report.json holds no planned ids, only their count."""
    results = (_passed(PLANNED[0]), _passed(PLANNED[1]))
    assert Report({"planned_count": 5}, results).coverage() == Coverage(5, 2, 0)
    assert Report({"planned_count": 1}, results).coverage() == Coverage(1, 1, 1)
    assert Report({}, results).coverage() == Coverage(2, 2, 0)


def test_a_report_json_with_unplanned_results_reads_back_as_incomplete(tmp_path: Path) -> None:
    """Two of five planned cases run, and three cases of another selection: report.json holds no
    planned ids, and counting its five results as planned ones made it read back complete
    (``merge`` of report.json files then showed the column complete)."""
    arrived = [_passed(PLANNED[0]), _error(PLANNED[1]), *map(_passed, UNPLANNED)]
    _written(tmp_path, arrived)
    data = json.loads((tmp_path / "report.json").read_text())
    assert (data["planned_count"], data["unplanned_count"], data["complete"]) == (5, 3, False)
    back = Report.from_dict(data)
    assert back.coverage() == Coverage(5, 2, 3)
    assert not back.complete and back.coverage().missing == 3
    assert back.verdict() == "fail"  # the error; without it:
    passed = Report.from_dict({**data, "results": [r for r in data["results"] if r["status"] == "pass"]})
    assert passed.coverage() == Coverage(5, 1, 3) and passed.verdict() == "incomplete"


# ---- one verdict ------------------------------------------------------------------------------

def _statuses(*kinds: str) -> tuple[CaseResult, ...]:
    """A result of each kind, each of its own planned case."""
    made = []
    for case, kind in zip(PLANNED[:len(kinds)], kinds, strict=True):
        if kind == "pass":
            made.append(_passed(case))
        elif kind == "error":
            made.append(_error(case))
        elif kind == "unsupported":
            made.append(CaseResult(case, Status.UNSUPPORTED, CPU, message="no kernel"))
        else:  # "mismatch", "known"
            made.append(CaseResult(case, Status.MISMATCH, CPU, element_count=6, mismatch_count=1,
                                   known_issue="a known deviation" if kind == "known" else ""))
    return tuple(made)


@pytest.mark.parametrize("kinds, planned, strict, verdict, junit", [
    # junit: (tests, failures, errors, skipped)
    (("pass", "pass"), 2, False, "pass", (2, 0, 0, 0)),
    (("pass", "unsupported", "known"), 3, False, "pass", (3, 0, 0, 2)),
    (("pass", "unsupported", "known"), 3, True, "fail", (3, 2, 0, 0)),
    (("pass", "mismatch", "known", "unsupported", "error"), 5, False, "fail", (5, 1, 1, 2)),
    (("pass", "mismatch", "known", "unsupported", "error"), 5, True, "fail", (5, 3, 1, 0)),
    (("pass", "known"), 4, False, "incomplete", (3, 1, 0, 1)),
    (("pass", "known"), 4, True, "fail", (3, 2, 0, 0)),
    (("error",), 5, False, "fail", (2, 1, 1, 0)),
])
def test_one_verdict_everywhere(tmp_path: Path, kinds: tuple[str, ...], planned: int, strict: bool,
                                verdict: str, junit: tuple[int, ...]) -> None:
    report = Report({**META, "planned": PLANNED_IDS[:planned], "strict": strict}, _statuses(*kinds))
    assert report.verdict() == verdict  # the meta's strict
    unsaid = Report({**META, "planned": PLANNED_IDS[:planned]}, report.results)  # strict: not in the meta
    assert unsaid.verdict(strict=strict) == verdict
    write_report(report, tmp_path)
    data, suite, page = _files(tmp_path)
    assert data["verdict"] == verdict and data["strict"] is strict
    assert _suite_counts(suite) == junit
    assert f'<p class="verdict {verdict}">{verdict.upper()}' in page


# ---- report.json's derived fields are not meta -------------------------------------------------

def test_report_json_reads_back_the_meta_it_was_written_with() -> None:
    report = Report({**META, "planned": PLANNED_IDS}, _statuses("pass", "error"))
    back = Report.from_dict(report.to_dict())
    # the planned ids are not written: their count is, and strict is the one counted with
    assert back.meta == {**META, "planned_count": 5, "unplanned_count": 0, "strict": False}
    assert back.to_dict() == report.to_dict()


def test_a_field_added_to_report_json_s_header_is_not_read_back_as_meta(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A new field of what the totals say (here "new_total") is left out of the meta read back,
    without being listed anywhere else."""
    real = report_module._totals_fields

    def with_a_new_field(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {**real(*args, **kwargs), "new_total": 7}

    monkeypatch.setattr(report_module, "_totals_fields", with_a_new_field)
    report = Report(META, _statuses("pass"))
    data = report.to_dict()
    assert data["new_total"] == 7
    back = Report.from_dict(data)
    assert "new_total" not in back.meta
    assert back.meta == {**META, "planned_count": 1, "unplanned_count": 0, "strict": False}


# ---- the sections a run's encoders draw --------------------------------------------------------

FAILING = MAX_PICTURES + 60


def _many_failing() -> list[CaseResult]:
    """FAILING errors and mismatches and some passes, each its own small case, shuffled."""
    made: list[CaseResult] = []
    for k in range(1, FAILING + 1):
        case = _case(k, 4)
        if k % 2:
            made.append(_error(case, f"boom {k}"))
        else:
            made.append(CaseResult(case, Status.MISMATCH, CPU, element_count=4 * k, mismatch_count=1,
                                   first_mismatch_index=(0, 1), diagnosis=f"diagnosis {k}"))
    made += [_passed(_case(k, 5)) for k in range(1, 41)]
    random.Random(3).shuffle(made)
    return made


def _units(results: list[CaseResult], size: int) -> list[list[CaseResult]]:
    return [results[start:start + size] for start in range(0, len(results), size)]


def test_the_copies_of_an_encoder_in_one_process_draw_as_many_sections_as_the_page_draws() -> None:
    """A worker loads the run's encoder again for each unit (as the runner sends it: pickled
    once): over all its units it draws the sections of the first MAX_PICTURES failing results
    it sees, not as many for each unit."""
    results = _many_failing()
    sent = pickle.dumps(ResultEncoder(False))
    drawn: list[str] = []
    for unit in _units(results, 16):
        encoder = pickle.loads(sent)
        drawn += [r.case.id for r, made in zip(unit, encoder(unit), strict=True) if made[4]]
    failing = [r.case.id for r in results if r.status is not Status.PASS]
    assert len(failing) == FAILING
    assert drawn == failing[:MAX_PICTURES]
    # the encoder where it was made is the one its copies load here: it has no section left
    original = ResultEncoder(False)
    copy = pickle.loads(pickle.dumps(original))
    assert copy is original
    assert sum(1 for made in copy(results) if made[4]) == MAX_PICTURES
    assert not any(made[4] for made in original(results))


@pytest.mark.parametrize("strict", [False, True])
def test_the_page_of_many_failing_cases_is_the_same_with_the_encoders_bound(tmp_path: Path,
                                                                             strict: bool) -> None:
    """A run's results in units, each unit encoded by the writer's encoder loaded again (the
    bound: MAX_PICTURES sections over all units), or by an encoder of its own (no bound over
    the units: every failing case drawn), or written at once: the same bytes in each file."""
    results = _many_failing()
    planned = [r.case.id for r in results[::-1]]  # report order is not arrival order
    drawn = {}
    for name in ("bound", "unbound"):
        meta = {**META, "finished": "2026-01-02T03:05:06+00:00"}  # the same in each directory
        with ReportWriter(tmp_path / name, meta=meta, planned=planned, strict=strict,
                          interval_s=math.inf) as writer:
            sent = pickle.dumps(writer.encode_results)
            sections = 0
            for unit in _units(results, 16):
                encoder = pickle.loads(sent) if name == "bound" else ResultEncoder(strict)
                made = encoder(unit)
                sections += sum(1 for m in made if m[4])
                writer.add_encoded_all(list(zip(unit, made, strict=True)))
            writer.write_summaries(finished=True)
        drawn[name] = sections
    assert drawn == {"bound": MAX_PICTURES, "unbound": FAILING}
    meta = json.loads((tmp_path / "bound" / "meta.json").read_text(encoding="utf-8"))
    by_id = {r.case.id: r for r in results}
    write_report(Report(meta, tuple(by_id[cid] for cid in planned)), tmp_path / "at-once", strict=strict)
    for name in (HTML_FILE, JUNIT_FILE, JSON_FILE):
        reference = (tmp_path / "at-once" / name).read_bytes()
        assert (tmp_path / "bound" / name).read_bytes() == reference, name
        assert (tmp_path / "unbound" / name).read_bytes() == reference, name
    page = (tmp_path / "bound" / HTML_FILE).read_text(encoding="utf-8")
    assert f"<h2>Failing cases ({FAILING})</h2>" in page
