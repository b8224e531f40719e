"""A shard whose share of a non-empty selection is empty (a fixed CI matrix of N shards over a
selection of fewer than N cases) writes its empty, passing report and exits 0, so that
merge --shards finds every shard; a selection that is empty as a whole still has nothing to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.frontends.cli import EXIT_NOTHING, main
from ort_layouts.operators.case import Case
from ort_layouts.reports.merge import merge_shards
from ort_layouts.reports.report import JSON_FILE, META_FILE, RESULTS_FILE, load_report
from ort_layouts.reports.writer import ReportWriter

Cap = pytest.CaptureFixture[str]
# Transpose in float32 at rank 1 (transpose.py's suite_cases and edge_specs): perm (0,) and the
# default perm of the suite shape (5,), perm (0,) of the extra shapes (1,) and (17,), and the
# empty tensor (0,) with the default perm: 5 cases, so shards 6/7 and 7/7 hold none
FIVE = ["validate", "--provider", "cpu", "--progress", "none", "--ops", "Transpose", "--ranks", "1",
        "--dtypes", "float32"]
COUNT = 5
N = 7


def run(argv: list[str], capsys: Cap) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _line(k: int, report: Path | None) -> str:
    written = "" if report is None else (
        f"; its report, empty: {report / f'shard-{k}-of-{N}'} (once every shard has run: "
        f"ort-layouts merge --shards {report})")
    return f"shard {k}/{N} holds no cases: the selection's 5 cases go to shards 1 to 5 of {N}{written}\n"


def test_every_shard_of_a_matrix_wider_than_the_selection_merges(tmp_path: Path, capsys: Cap) -> None:
    report = tmp_path / "r"
    for k in range(1, N + 1):
        code, out, err = run([*FIVE, "--shard", f"{k}/{N}", "--report", str(report)], capsys)
        assert code == 0, err
        if k > COUNT:
            assert (out, err) == (_line(k, report), "")
            shard = report / f"shard-{k}-of-{N}"
            meta = json.loads((shard / META_FILE).read_text(encoding="utf-8"))
            assert meta["planned"] == [] and meta["selection"]["shard"] == f"{k}/{N}" and meta["finished"]
            assert (shard / RESULTS_FILE).read_bytes() == b""
            summary = json.loads((shard / JSON_FILE).read_text(encoding="utf-8"))
            assert summary["results"] == [] and summary["verdict"] == "pass"
    code, out, err = run(["merge", "--shards", str(report)], capsys)
    assert code == 0, err
    assert out.startswith(f"{COUNT} cases on CPUExecutionProvider")
    assert run([*FIVE, "--report", str(tmp_path / "whole")], capsys)[0] == 0
    merged = [r.case.id for r in load_report(report).results]
    assert merged == [r.case.id for r in load_report(tmp_path / "whole").results]
    assert len(merged) == COUNT
    listing = json.loads((report / "shards.json").read_text(encoding="utf-8"))["shards"]
    assert [(s["shard"], s["planned"], s["results"]) for s in listing] == [
        (f"{k}/{N}", 1 if k <= COUNT else 0, 1 if k <= COUNT else 0) for k in range(1, N + 1)]


def test_an_empty_shard_resumes_runs_again_and_is_strict_alike(tmp_path: Path, capsys: Cap) -> None:
    report = tmp_path / "r"
    argv = [*FIVE, "--shard", f"{N}/{N}", "--report", str(report)]
    assert run(argv, capsys)[:2] == (0, _line(N, report))
    assert run([*argv, "--resume"], capsys)[:2] == (0, _line(N, report))
    assert run(argv, capsys)[:2] == (0, _line(N, report))  # the same selection: replaced unforced
    code, out, err = run([*argv, "--strict", "--force"], capsys)
    assert (code, out, err) == (0, _line(N, report), "")


def test_an_empty_shard_without_a_report_writes_nothing(tmp_path: Path, capsys: Cap,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run([*FIVE, "--shard", f"6/{N}"], capsys) == (0, _line(6, None), "")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("shard", [[], ["--shard", "2/3"]], ids=["unsharded", "sharded"])
def test_an_empty_selection_still_has_nothing_to_do(tmp_path: Path, capsys: Cap, shard: list[str]) -> None:
    """Special values are made for ranks 2 to 4 only: at rank 1 the selection holds none."""
    code, out, err = run([*FIVE, "--values", "special", *shard, "--report", str(tmp_path / "r")], capsys)
    assert code == EXIT_NOTHING
    assert out == "" and err.startswith("ort-layouts: nothing to validate: the selection holds no cases")
    assert not (tmp_path / "r").exists()


def test_merge_takes_an_empty_shard_that_never_learnt_its_device(tmp_path: Path) -> None:
    """A provider that lists no device: the runs learn it from their first result, which a shard
    without cases never has; its meta's device stays empty where the other shard's names one."""
    case = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    result = CaseResult(case, Status.PASS, "XProvider", element_count=6, device="GPU 7")
    for k, device, results in ((1, "GPU 7", [result]), (2, "", [])):
        meta: dict[str, Any] = {
            "provider": "XProvider", "device": device, "command": f"ort-layouts validate --shard {k}/2",
            "selection": {"provider": "XProvider", "ops": ["Transpose"], "shard": f"{k}/2", "limit": 0}}
        with ReportWriter(tmp_path / f"shard-{k}-of-2", meta=meta, planned=[r.case.id for r in results]) as w:
            for r in results:
                w.add(r)
            w.write_summaries(finished=True)
    merged = merge_shards([tmp_path], tmp_path / "merged")
    assert [r.case.id for r in merged.results] == [case.id]
    assert merged.meta["device"] == "GPU 7"


def test_a_shard_run_with_a_limit_names_no_merge_that_would_refuse_it(tmp_path: Path, capsys: Cap) -> None:
    """The hint after a shard's run named ``merge --shards DIR``, which refuses shards run with
    --limit (each shard's own limit: no run has their union)."""
    report = tmp_path / "r"
    for k in (1, 2):
        code, out, _ = run([*FIVE, "--report", str(report), "--shard", f"{k}/2", "--limit", "1"], capsys)
        assert code == 0
        assert out.splitlines()[-1] == (f"shard {k}/2; shards run with --limit are not merged into one "
                                        "report: run them without --limit to merge")
    code, _, err = run(["merge", "--shards", str(report)], capsys)
    assert code == 2 and "--limit" in err  # as the hint says
    code, out, _ = run([*FIVE, "--report", str(report), "--shard", "7/7", "--limit", "1"], capsys)
    assert code == 0 and out.endswith("(shards run with --limit are not merged into one report: run them "
                                      "without --limit to merge)\n")
