"""merge --shards takes from each shard only results of the cases that shard planned, as a resume
of the shard does: a result of another shard's case (or of no shard's) is refused, naming the
shard, the line and the case, instead of replacing the owning shard's result; so is a result of
another execution provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ort_layouts import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.frontends.cli import main
from ort_layouts.operators.case import Case
from ort_layouts.reports.merge import merge_shards
from ort_layouts.reports.report import RESULTS_FILE

CPU = "CPUExecutionProvider"
Cap = pytest.CaptureFixture[str]

# five cases, all passing: shard 1/2 plans the 1st, 3rd and 5th, shard 2/2 the 2nd and 4th
CASES = [Case("Transpose", "float32", (2, 3), perm=(1, 0)),
         Case("Transpose", "float32", (2, 3, 4), perm=(1, 0, 2)),
         Case("Transpose", "float32", (2, 3, 4), perm=(2, 1, 0)),
         Case("Transpose", "float32", (4, 3), perm=(1, 0)),
         Case("Transpose", "float32", (5, 2), perm=(1, 0))]
RESULTS = [CaseResult(c, Status.PASS, CPU, element_count=n)
           for c, n in zip(CASES, (6, 24, 24, 12, 10), strict=True)]
IDS = [c.id for c in CASES]
INJECTED = {"status": "error", "message": "injected"}


def _write_shards(directory: Path) -> None:
    from ort_layouts.reports.writer import ReportWriter

    for k in (1, 2):
        meta: dict[str, Any] = {
            "provider": CPU, "command": f"ort-layouts validate --shard {k}/2",
            "environment": {"hostname": "h"},
            "selection": {"provider": CPU, "ops": ["Transpose"], "shard": f"{k}/2", "limit": 0}}
        with ReportWriter(directory / f"shard-{k}-of-2", meta=meta, planned=IDS[k - 1::2]) as w:
            for r in RESULTS[k - 1::2]:
                w.add(r)
            w.write_summaries(finished=True)


def _append_line(results_file: Path, line: dict[str, Any]) -> None:
    with open(results_file, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def _first_line(results_file: Path) -> dict[str, Any]:
    first: dict[str, Any] = json.loads(results_file.read_text(encoding="utf-8").splitlines()[0])
    return first


def test_the_shards_written_here_merge(tmp_path: Path) -> None:
    """Without a foreign line the five results merge, all passing."""
    _write_shards(tmp_path)
    report = merge_shards([tmp_path], tmp_path / "merged")
    assert [r.case.id for r in report.results] == IDS
    assert report.verdict() == "pass"


OTHER = Case("Transpose", "float16", (2, 3), perm=(1, 0))  # a case of another selection


@pytest.mark.parametrize(("shard", "line", "number", "case_id", "whose"), [
    # shard 1's first result, as an error, appended to shard 2 (two lines of its own, so line 3):
    # it used to replace shard 1's pass and count as shard 2's third result
    (2, INJECTED, 3, IDS[0], "a case of shard 1/2"),
    # a case of another selection in shard 1, after its three lines: line 4
    (1, {"case": OTHER.to_dict()}, 4, OTHER.id, "a case of no shard of this run"),
], ids=["another-shard", "no-shard"])
def test_a_result_of_a_case_the_shard_did_not_plan_is_refused(
        tmp_path: Path, shard: int, line: dict[str, Any], number: int, case_id: str, whose: str) -> None:
    _write_shards(tmp_path)
    target = tmp_path / f"shard-{shard}-of-2" / RESULTS_FILE
    _append_line(target, _first_line(tmp_path / "shard-1-of-2" / RESULTS_FILE) | line)
    with pytest.raises(ReportError) as info:
        merge_shards([tmp_path], tmp_path / "merged")
    assert str(info.value) == (
        f"shard {shard}/2 cannot be merged: {str(target)!r} line {number} holds case {case_id!r}, which is "
        f"not in this shard's selection ({whose}); remove that line, or run the shard again without --resume")
    assert not (tmp_path / "merged").exists()


def test_a_result_of_another_execution_provider_is_refused(tmp_path: Path) -> None:
    """Shard 2's own first case again, as a DirectML mismatch, after its two lines: line 3. It was
    merged into the CPU run's report, as a resume of the shard counted it before."""
    _write_shards(tmp_path)
    target = tmp_path / "shard-2-of-2" / RESULTS_FILE
    dml = {"provider": "DmlExecutionProvider", "status": "mismatch"}
    _append_line(target, _first_line(target) | dml)
    with pytest.raises(ReportError) as info:
        merge_shards([tmp_path], tmp_path / "merged")
    assert str(info.value) == (
        f"shard 2/2 cannot be merged: {str(target)!r} line 3 holds a result of {IDS[1]!r} on "
        f"'DmlExecutionProvider', not the shard's {CPU!r}; remove that line, or run the shard again without "
        "--resume")


def test_the_command_line_refuses_it_in_one_line_with_exit_status_2(tmp_path: Path, capsys: Cap) -> None:
    _write_shards(tmp_path)
    foreign = _first_line(tmp_path / "shard-1-of-2" / RESULTS_FILE) | INJECTED
    _append_line(tmp_path / "shard-2-of-2" / RESULTS_FILE, foreign)
    code = main(["merge", "--shards", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("ort-layouts: error: shard 2/2 cannot be merged: ")
    assert f"line 3 holds case {IDS[0]!r}" in err
    assert not (tmp_path / "shards.json").exists() and not (tmp_path / RESULTS_FILE).exists()
