"""A report planned before the data types and value kinds were put in one order holds its cases in
the order they were asked (another cases_sha256 for the same cases): resuming it, or running the
same selection into its directory again, is the same selection; other cases are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.writer import ReportWriter

PROVIDER = "CPUExecutionProvider"
INT8 = Case("Transpose", "int8", (2, 3), perm=(1, 0))
FLOAT32 = Case("Transpose", "float32", (2, 3), perm=(1, 0))
FLOAT16 = Case("Transpose", "float16", (2, 3), perm=(1, 0))


def _meta(dtypes: list[str]) -> dict[str, object]:
    return {"provider": PROVIDER, "selection": {"provider": PROVIDER, "ops": ["Transpose"], "dtypes": dtypes}}


def _older_report(directory: Path) -> None:
    """As a run with --dtypes int8,float32 planned it: int8's cases first; one result written."""
    with ReportWriter(directory, meta=_meta(["int8", "float32"]), planned=[INT8.id, FLOAT32.id]) as w:
        w.add(CaseResult(INT8, Status.PASS, PROVIDER, element_count=6, seconds=0.01))


def test_resuming_it_in_the_one_order_keeps_its_results(tmp_path: Path) -> None:
    _older_report(tmp_path)
    with ReportWriter(tmp_path, meta=_meta(["float32", "int8"]), planned=[FLOAT32.id, INT8.id],
                      resume=True) as w:
        assert w.resumed and w.done_ids == {INT8.id}
        w.add(CaseResult(FLOAT32, Status.PASS, PROVIDER, element_count=6, seconds=0.01))
        assert [r.case.id for r in w.results] == [INT8.id, FLOAT32.id]


def test_running_it_again_into_its_directory_replaces_it(tmp_path: Path) -> None:
    _older_report(tmp_path)
    with ReportWriter(tmp_path, meta=_meta(["float32", "int8"]), planned=[FLOAT32.id, INT8.id]) as w:
        assert not w.resumed and w.done_ids == frozenset()


def test_other_cases_are_another_selection(tmp_path: Path) -> None:
    _older_report(tmp_path)
    with pytest.raises(ReportError, match=r"cannot resume .*: it was made with cases \(sha256\) "):
        ReportWriter(tmp_path, meta=_meta(["float32", "int8"]), planned=[FLOAT32.id, FLOAT16.id], resume=True)


RANDOM = FLOAT32
IOTA = Case("Transpose", "float32", (2, 3), perm=(1, 0), values="iota")
SPECIAL = Case("Transpose", "float32", (2, 3), perm=(1, 0), values="special")


def _values_meta(values: list[str]) -> dict[str, object]:
    return {"provider": PROVIDER,
            "selection": {"provider": PROVIDER, "ops": ["Transpose"], "dtypes": ["float32"],
                          "values": values}}


def _older_values_report(directory: Path) -> None:
    """As a run with --values iota,random planned it: iota's cases first; one result written."""
    with ReportWriter(directory, meta=_values_meta(["iota", "random"]), planned=[IOTA.id, RANDOM.id]) as w:
        w.add(CaseResult(IOTA, Status.PASS, PROVIDER, element_count=6, seconds=0.01))


def test_values_in_another_order_resume_it_keeping_its_results(tmp_path: Path) -> None:
    _older_values_report(tmp_path)
    with ReportWriter(tmp_path, meta=_values_meta(["random", "iota"]), planned=[RANDOM.id, IOTA.id],
                      resume=True) as w:
        assert w.resumed and w.done_ids == {IOTA.id}
        w.add(CaseResult(RANDOM, Status.PASS, PROVIDER, element_count=6, seconds=0.01))
        assert [r.case.id for r in w.results] == [IOTA.id, RANDOM.id]


def test_other_value_kinds_are_another_selection(tmp_path: Path) -> None:
    _older_values_report(tmp_path)
    with pytest.raises(ReportError, match=r"cannot resume .*: it was made with cases \(sha256\) \w+ "
                       r"\(this run: \w+\), values \['random', 'iota'\] "
                       r"\(this run: \['random', 'special'\]\); "):
        ReportWriter(tmp_path, meta=_values_meta(["random", "special"]), planned=[RANDOM.id, SPECIAL.id],
                     resume=True)
