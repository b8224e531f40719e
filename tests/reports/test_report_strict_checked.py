"""Report.verdict, Report.failures and summary_line refuse a ``strict`` that is no bool (None
too, but for verdict, which takes None as the meta's): a str "yes" or an int 1 was taken as
true, a str "" as false, without a word. An ArgumentError names the value and what is valid."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import Report, summary_line

CPU = "CPUExecutionProvider"
CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
# unsupported: a failure only with strict, so a truthy non-bool would change the verdict
REPORT = Report({"provider": CPU, "planned": [CASE.id]},
                (CaseResult(CASE, Status.UNSUPPORTED, CPU, element_count=6),))

# (the value, how the message names it and its type)
BAD = [("yes", "'yes' is a str"), ("", "'' is a str"), (1, "1 is an int"),
       (np.bool_(True), f"{np.bool_(True)!r} is a numpy.bool")]
BAD_IDS = ["str", "empty-str", "int", "numpy-bool"]


@pytest.mark.parametrize(("strict", "shown"), BAD, ids=BAD_IDS)
def test_verdict_refuses_a_strict_that_is_no_bool_or_none(strict: Any, shown: str) -> None:
    with pytest.raises(ArgumentError) as info:
        REPORT.verdict(strict=strict)
    assert str(info.value) == (f"strict {shown}, not a bool; valid: True or False, or None (as the report's "
                               "meta says)")


@pytest.mark.parametrize(("strict", "shown"), [*BAD, (None, "None is a NoneType")], ids=[*BAD_IDS, "none"])
def test_summary_line_and_failures_refuse_a_strict_that_is_no_bool(strict: Any, shown: str) -> None:
    for call in (lambda: summary_line(REPORT, strict=strict), lambda: REPORT.failures(strict=strict)):
        with pytest.raises(ArgumentError) as info:
            call()
        assert str(info.value) == f"strict {shown}, not a bool; valid: True or False"


def test_a_bool_or_none_still_decides_as_before() -> None:
    """An unsupported case fails only a strict run; None takes the meta's (none: not strict)."""
    assert [REPORT.verdict(strict=s) for s in (True, False, None)] == ["fail", "pass", "pass"]
    assert len(REPORT.failures(strict=True)) == 1 and REPORT.failures(strict=False) == ()
    assert "1 unsupported (failing: --strict)" in summary_line(REPORT, strict=True)
    assert "1 unsupported (not failures)" in summary_line(REPORT, strict=False)
