"""merge says how many cases each report has and how many they share, and claims no agreement
on the cases it did not compare: reports of two disjoint selections compare nothing, where the
matrix said "0 of N cases differ"."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.frontends.cli import main
from ort_layouts.operators.case import Case
from ort_layouts.reports.merge import MATRIX_JSON, merge_reports
from ort_layouts.reports.report import RESULTS_FILE, Report

Cap = pytest.CaptureFixture[str]
CPU = "CPUExecutionProvider"


def _validate(directory: Path, ops: str) -> int:
    """A small run on the CPU EP into ``directory``; the number of its results."""
    argv = ["validate", "--provider", "cpu", "--ops", ops, "--dtypes", "float32,int8", "--ranks", "1-2",
            "--progress", "none", "--report", str(directory)]
    assert main(argv) == 0
    return len((directory / RESULTS_FILE).read_text().splitlines())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int]]:
    root = tmp_path_factory.mktemp("runs")
    return {ops: (root / ops, _validate(root / ops, ops)) for ops in ("Transpose", "Tile", "Transpose,Tile")}


def test_reports_of_disjoint_selections_compare_nothing(runs: dict[str, tuple[Path, int]], tmp_path: Path,
                                                        capsys: Cap,
                                                        matrix_page: Callable[[Path], Any]) -> None:
    (transpose, n_transpose), (tile, n_tile) = runs["Transpose"], runs["Tile"]
    assert n_transpose and n_tile
    capsys.readouterr()
    assert main(["merge", str(transpose), str(tile), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    total = n_transpose + n_tile
    said = [f"cases: [1] {n_transpose}, [2] {n_tile}; {total} in all, 0 in every report",
            f"no case was run by two reports or more: nothing is compared ({total} cases run by one report "
            "only)"]
    assert out.splitlines()[-2:] == said
    assert " differ" not in out
    data = json.loads((tmp_path / MATRIX_JSON).read_text())
    assert data["overlap"] == {"per_column": [n_transpose, n_tile], "cases": total, "in_every": 0,
                               "compared": 0, "differing": 0, "not_compared": total}
    assert matrix_page(tmp_path).overlap == said


def test_reports_that_share_some_cases_say_how_many_were_compared(runs: dict[str, tuple[Path, int]],
                                                                   capsys: Cap) -> None:
    (both, n_both), (transpose, n_transpose) = runs["Transpose,Tile"], runs["Transpose"]
    capsys.readouterr()
    assert main(["merge", str(both), str(transpose)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == [
        f"cases: [1] {n_both}, [2] {n_transpose}; {n_both} in all, {n_transpose} in every report",
        f"0 of {n_transpose} cases run by two reports or more differ between them; {n_both - n_transpose} "
        "cases run by one report only are not compared"]


T = [Case("Transpose", dtype, (2, 3), perm=(1, 0))
     for dtype in (DataType.FLOAT32, DataType.INT8, DataType.INT32, DataType.UINT8)]


def _report(*results: tuple[int, Status]) -> Report:
    return Report({"provider": CPU}, tuple(CaseResult(T[k], status, CPU) for k, status in results))


def test_three_reports_compare_each_case_between_those_that_ran_it() -> None:
    """Case 0 in the first report only, case 1 in two (their statuses differ), case 2 in all three
    (alike), case 3 in the last only: cases 1 and 2 are compared, one of them differs."""
    ok, error = Status.PASS, Status.ERROR
    matrix = merge_reports([_report((0, ok), (1, ok), (2, ok)), _report((1, error), (2, ok)),
                            _report((2, ok), (3, ok))])
    overlap = matrix.overlap()
    assert (overlap.per_column, overlap.cases, overlap.in_every, overlap.compared, overlap.differing,
            overlap.not_compared) == ((3, 2, 2), 4, 1, 2, 1, 2)
    assert matrix.text_table().splitlines()[-3:-1] == [
        "cases: [1] 3, [2] 2, [3] 2; 4 in all, 1 in every report",
        "1 of 2 cases run by two reports or more differ between them; 2 cases run by one report only are "
        "not compared"]


@pytest.mark.parametrize("reports, said", [
    ([[(0, Status.PASS)]], ["cases: [1] 1", "one report: no case is compared"]),
    ([[], []], ["cases: [1] 0, [2] 0; 0 in all, 0 in every report",
                "no report holds a case: nothing is compared"]),
    ([[(0, Status.PASS)], [(0, Status.ERROR), (1, Status.PASS)]],
     ["cases: [1] 1, [2] 2; 2 in all, 1 in every report",
      "1 of 1 case run by two reports or more differs between them; 1 case run by one report only is not "
      "compared"]),
], ids=["one-report", "empty-reports", "one-compared"])
def test_the_overlap_lines(reports: list[list[tuple[int, Status]]], said: list[str]) -> None:
    matrix = merge_reports([_report(*r) for r in reports])
    assert matrix.overlap().lines() == said
    assert f"\n{said[0]}\n{said[1]}\n" in matrix.text_table()
