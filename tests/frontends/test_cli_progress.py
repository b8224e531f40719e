"""validate's progress prints each failing case as a line of its own, as the run counts failures:
with --strict the known issues and the unsupported cases too (they printed no line)."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import pytest

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.frontends.cli import Progress, main
from ort_layouts.operators.case import Case

Cap = pytest.CaptureFixture[str]
CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
CPU = "CPUExecutionProvider"


def _results() -> list[CaseResult]:
    return [CaseResult(CASE, Status.PASS, CPU, element_count=6),
            CaseResult(CASE, Status.UNSUPPORTED, CPU, message="no kernel"),
            CaseResult(CASE, Status.MISMATCH, CPU, element_count=6, mismatch_count=1, known_issue="known"),
            CaseResult(CASE, Status.ERROR, CPU, message="boom")]


@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
def test_a_line_for_each_failing_case_as_the_run_counts_them(strict: bool) -> None:
    stream = io.StringIO()
    progress = Progress(4, mode="lines", stream=stream, strict=strict)
    for result in _results():
        progress.update(result)
    own = [line.split(" ", 1)[0] for line in stream.getvalue().splitlines() if not line.startswith("[")]
    assert own == (["UNSUPPORTED", "MISMATCH", "ERROR"] if strict else ["ERROR"])


def test_validate_strict_prints_a_line_for_an_unsupported_case(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: Cap) -> None:
    import ort_layouts.engine.runner as runner

    real = runner.run_cases

    def one_unsupported(cases: Any, **kwargs: Any) -> Any:
        callback = kwargs.pop("on_result")
        seen = [0]

        def on_result(result: CaseResult) -> None:
            seen[0] += 1
            callback(dataclasses.replace(result, status=Status.UNSUPPORTED, message="no kernel")
                     if seen[0] == 2 else result)

        return real(cases, on_result=on_result, **kwargs)

    monkeypatch.setattr(runner, "run_cases", one_unsupported)
    argv = ["validate", "--provider", "cpu", "--ops", "Transpose", "--dtypes", "int8", "--ranks", "1-2",
            "--progress", "lines", "--jobs", "1"]
    assert main(argv) == 0
    assert "UNSUPPORTED " not in capsys.readouterr().err
    assert main([*argv, "--strict"]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("UNSUPPORTED ")]
    assert len(lines) == 1 and lines[0].endswith(": unsupported: no kernel")
