"""The JUnit and HTML renderers refuse a ``strict`` that is no bool (None too): render_junit,
junit_pieces, testcase_texts, render_report_html, report_html_pieces and MatrixTally.text took
a str "no" or an int 1 as true (a <failure> and a failing verdict for an unsupported case), a
str "" as false, without a word. An ArgumentError names the value and what is valid, before
any work (the pieces: when called, not when their first piece is asked for)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports import html, junit
from ort_layouts.reports.report import Report, Totals

CPU = "CPUExecutionProvider"
CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
# unsupported: a failure only with strict, so a truthy non-bool would change the verdict
REPORT = Report({"provider": CPU, "planned": [CASE.id]},
                (CaseResult(CASE, Status.UNSUPPORTED, CPU, element_count=6),))

# (the value, how the message names it and its type)
BAD = [("no", "'no' is a str"), ("", "'' is a str"), (1, "1 is an int"),
       (np.bool_(True), f"{np.bool_(True)!r} is a numpy.bool"), (None, "None is a NoneType")]


def _tally() -> tuple[html.MatrixTally, list[Any]]:
    tally = html.MatrixTally()
    return tally, [tally.add(r) for r in REPORT.results]


def _matrix(strict: Any) -> str:
    tally, groups = _tally()  # counting the results makes no cell
    return tally.text(groups, str, strict=strict)


# each renderer, called with a strict (testcase_texts through its module: pytest would collect it)
RENDERERS: dict[str, Callable[[Any], object]] = {
    "render_junit": lambda strict: junit.render_junit(REPORT, strict=strict),
    "junit_pieces": lambda strict: junit.junit_pieces(REPORT, strict=strict),  # not iterated
    "testcase_texts": lambda strict: junit.testcase_texts(REPORT.results, strict=strict),
    "render_report_html": lambda strict: html.render_report_html(REPORT, strict=strict),
    "report_html_pieces": lambda strict: html.report_html_pieces(REPORT, strict=strict),  # not iterated
    "MatrixTally.text": _matrix,
}


@pytest.mark.parametrize("name", RENDERERS)
@pytest.mark.parametrize(("strict", "shown"), BAD, ids=["str", "empty-str", "int", "numpy-bool", "none"])
def test_a_renderer_refuses_a_strict_that_is_no_bool_before_any_work(
        name: str, strict: Any, shown: str, monkeypatch: pytest.MonkeyPatch) -> None:
    render = RENDERERS[name]

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("work was done before strict was checked")

    for module, attribute in ((Totals, "of"), (junit, "_testcase"), (junit, "_clean_pass"), (html, "_cell")):
        monkeypatch.setattr(module, attribute, no_work)
    with pytest.raises(ArgumentError) as info:
        render(strict)
    assert str(info.value) == f"strict {shown}, not a bool; valid: True or False"


def test_junit_with_a_bool_decides_as_before() -> None:
    """An unsupported case is a failure only with strict: in its testcase and the suite's counts."""
    strict, lax = junit.render_junit(REPORT, strict=True), junit.render_junit(REPORT, strict=False)
    assert 'failures="1"' in strict and '<failure message="unsupported' in strict and "<skipped" not in strict
    assert 'failures="0"' in lax and 'skipped="1"' in lax and "<skipped" in lax and "<failure" not in lax
    assert "".join(junit.junit_pieces(REPORT, strict=True)) == strict and junit.render_junit(REPORT) == lax
    assert junit.testcase_texts(REPORT.results, strict=True)[0] in strict
    assert junit.testcase_texts(REPORT.results)[0] in lax


def test_the_page_with_a_bool_decides_as_before() -> None:
    """An unsupported case fails only a strict run: in the verdict and the matrix's colours."""
    strict, lax = html.render_report_html(REPORT, strict=True), html.render_report_html(REPORT, strict=False)
    assert 'class="verdict fail"' in strict and "fail this run (--strict)." in strict
    assert 'class="verdict pass"' in lax and "do not fail this run." in lax
    assert "".join(html.report_html_pieces(REPORT, strict=True)) == strict
    assert html.render_report_html(REPORT) == lax
    tally, groups = _tally()
    matrices = tally.text(groups, str, strict=True), tally.text(groups, str)
    assert matrices[0] in strict and matrices[1] in lax and matrices[0] != matrices[1]


@pytest.mark.parametrize("strict", ["no", 1, None])
def test_a_result_encoder_refuses_a_strict_that_is_no_bool(strict: object) -> None:
    from ort_layouts.reports.writer import ResultEncoder

    message = rf"strict {re.escape(repr(strict))} is .*, not a bool; valid: True or False$"
    with pytest.raises(ArgumentError, match=message):
        ResultEncoder(strict)  # type: ignore[arg-type]
