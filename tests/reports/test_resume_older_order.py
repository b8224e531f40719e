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


RANDOM = FLOAT32
IOTA = Case("Transpose", "float32", (2, 3), perm=(1, 0), values="iota")
SPECIAL = Case("Transpose", "float32", (2, 3), perm=(1, 0), values="special")
# (field, the older report's order and cases, the same names in the one order):
# as a run with --dtypes int8,float32 (or --values iota,random) planned it, its first cases first
KINDS: dict[str, tuple[str, list[str], list[Case], list[str]]] = {
    "dtypes": ("dtypes", ["int8", "float32"], [INT8, FLOAT32], ["float32", "int8"]),
    "values": ("values", ["iota", "random"], [IOTA, RANDOM], ["random", "iota"]),
}


def _meta(field: str, names: list[str]) -> dict[str, object]:
    selection = {"provider": PROVIDER, "ops": ["Transpose"], "dtypes": ["float32"], field: names}
    return {"provider": PROVIDER, "selection": selection}


def _older_report(directory: Path, kind: str) -> tuple[Case, Case]:
    """The older report, with its first case's result written; its two cases, first first."""
    field, names, (first, second), _ = KINDS[kind]
    with ReportWriter(directory, meta=_meta(field, names), planned=[first.id, second.id]) as w:
        w.add(CaseResult(first, Status.PASS, PROVIDER, element_count=6, seconds=0.01))
    return first, second


@pytest.mark.parametrize("kind", KINDS)
def test_resuming_it_in_the_one_order_keeps_its_results(tmp_path: Path, kind: str) -> None:
    first, second = _older_report(tmp_path, kind)
    field, _, _, ordered = KINDS[kind]
    with ReportWriter(tmp_path, meta=_meta(field, ordered), planned=[second.id, first.id], resume=True) as w:
        assert w.resumed and w.done_ids == {first.id}
        w.add(CaseResult(second, Status.PASS, PROVIDER, element_count=6, seconds=0.01))
        assert [r.case.id for r in w.results] == [first.id, second.id]


def test_running_it_again_into_its_directory_replaces_it(tmp_path: Path) -> None:
    first, second = _older_report(tmp_path, "dtypes")
    ordered = _meta("dtypes", ["float32", "int8"])
    with ReportWriter(tmp_path, meta=ordered, planned=[second.id, first.id]) as w:
        assert not w.resumed and w.done_ids == frozenset()


def test_other_cases_are_another_selection(tmp_path: Path) -> None:
    _older_report(tmp_path, "dtypes")
    with pytest.raises(ReportError, match=r"cannot resume .*: it was made with cases \(sha256\) "):
        ReportWriter(tmp_path, meta=_meta("dtypes", ["float32", "int8"]), planned=[FLOAT32.id, FLOAT16.id],
                     resume=True)


def test_other_value_kinds_are_another_selection(tmp_path: Path) -> None:
    _older_report(tmp_path, "values")
    with pytest.raises(ReportError, match=r"cannot resume .*: it was made with cases \(sha256\) \w+ "
                       r"\(this run: \w+\), values \['random', 'iota'\] "
                       r"\(this run: \['random', 'special'\]\); "):
        ReportWriter(tmp_path, meta=_meta("values", ["random", "special"]), planned=[RANDOM.id, SPECIAL.id],
                     resume=True)
