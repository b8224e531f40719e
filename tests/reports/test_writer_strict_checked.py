"""``strict`` is a bool (None where write_report and Report.to_dict take the meta's): a str "no"
was written into report.json, which load_report and merge_reports then refused as damaged, an
int 1 the same, and a numpy bool raised a bare TypeError from inside. Refused with an
ArgumentError naming the value and what is valid, before anything is written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import Report, load_report
from ort_layouts.reports.writer import ReportWriter, write_report

CPU = "CPUExecutionProvider"
CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
REPORT = Report({"provider": CPU, "planned": [CASE.id]},
                (CaseResult(CASE, Status.PASS, CPU, element_count=6, seconds=0.5),))

# (the value, how the message names it and its type)
BAD = [("no", "'no' is a str"), (1, "1 is an int"), (np.bool_(True), f"{np.bool_(True)!r} is a numpy.bool"),
       (0.0, "0.0 is a float")]
BAD_IDS = ["str", "int", "numpy-bool", "float"]


@pytest.mark.parametrize(("strict", "shown"), BAD, ids=BAD_IDS)
def test_a_writer_refuses_a_strict_that_is_no_bool_before_making_anything(
        tmp_path: Path, strict: Any, shown: str) -> None:
    with pytest.raises(ArgumentError) as info:
        ReportWriter(tmp_path / "r", meta={"provider": CPU}, planned=[CASE.id], strict=strict)
    assert str(info.value) == f"strict {shown}, not a bool; valid: True or False"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("strict", "shown"), [*BAD, (None, "")], ids=[*BAD_IDS, "none"])
def test_a_writer_refuses_a_strict_that_is_no_bool_over_a_finished_report(
        tmp_path: Path, strict: Any, shown: str) -> None:
    write_report(REPORT, tmp_path)
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    with pytest.raises(ArgumentError, match=r"^strict .*, not a bool; valid: True or False$"):
        ReportWriter(tmp_path, meta={"provider": CPU}, planned=[CASE.id], strict=strict)
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before


@pytest.mark.parametrize(("strict", "shown"), BAD, ids=BAD_IDS)
def test_write_report_refuses_a_strict_that_is_no_bool_or_none(
        tmp_path: Path, strict: Any, shown: str) -> None:
    with pytest.raises(ArgumentError) as info:
        write_report(REPORT, tmp_path / "r", strict=strict)
    assert str(info.value) == (f"strict {shown}, not a bool; valid: True or False, or None (as the report's "
                               "meta says)")
    assert not (tmp_path / "r").exists()
    with pytest.raises(ArgumentError, match=f"^strict {shown.split(' is ')[0]} is "):
        REPORT.to_dict(strict=strict)


@pytest.mark.parametrize("strict", [True, False, None])
def test_a_bool_or_none_is_written_and_read_back(tmp_path: Path, strict: bool | None) -> None:
    write_report(REPORT, tmp_path / "w", strict=strict)
    assert load_report(tmp_path / "w" / "report.json").strict is bool(strict)
    if strict is not None:
        with ReportWriter(tmp_path / "r", meta={"provider": CPU}, planned=[CASE.id], strict=strict) as w:
            w.add(REPORT.results[0])
        assert load_report(tmp_path / "r").strict is strict
        assert load_report(tmp_path / "r" / "report.json").strict is strict
