"""validate's options read as the README says: --values in any letter case, as --ops and
--dtypes; --progress auto draws a bar on a terminal unless CI is set to a true-ish value
(CI=false, CI=0 and an empty CI are not CI)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ort_layouts.frontends.cli import Progress, in_ci, main

Cap = pytest.CaptureFixture[str]
SMALL = ["validate", "--provider", "cpu", "--ops", "transpose", "--dtypes", "FLOAT32", "--ranks", "2",
         "--progress", "none", "--jobs", "1"]


def test_values_in_any_case_select_the_same_cases(tmp_path: Path, capsys: Cap) -> None:
    """``--values Random`` was refused where ``--ops transpose`` and ``--dtypes FLOAT32`` were taken;
    in any case it is the same selection (its report resumes)."""
    assert main([*SMALL, "--values", "special,iota", "--report", str(tmp_path / "r")]) == 0
    lower = capsys.readouterr().out.splitlines()[0]
    assert main([*SMALL, "--values", "Iota,SPECIAL", "--report", str(tmp_path / "r"), "--resume"]) == 0
    err = capsys.readouterr().err
    count = int(lower.split()[0])
    assert f"resuming {tmp_path / 'r'}: {count} of {count} cases already run" in err, err
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["selection"]["values"] == ["special", "iota"]


def test_an_unknown_kind_is_one_line_with_the_valid_ones(capsys: Cap) -> None:
    assert main([*SMALL, "--values", "Random,Randm"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("ort-layouts: error: argument --values: unknown kind 'Randm'; valid: "
                                 "['random', 'special', 'iota']\n")


NOT_CI = ["false", "False", "FALSE", "0", "", " ", "no", "No", "off", " false "]
CI = ["true", "True", "1", "yes", "on", "github-actions"]


@pytest.mark.parametrize("value", [*NOT_CI, None], ids=[*(repr(v) for v in NOT_CI), "unset"])
def test_ci_false_zero_or_empty_is_not_ci_a_terminal_gets_the_bar(
        value: str | None, monkeypatch: pytest.MonkeyPatch, terminal: Callable[[], io.StringIO]) -> None:
    """CI=false (or 0, or empty) switched the progress to lines, as if in CI."""
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert not in_ci()
    assert Progress(3, stream=terminal()).mode == "bar"


@pytest.mark.parametrize("value", CI)
def test_a_true_ish_ci_gets_lines_on_a_terminal_too(value: str, monkeypatch: pytest.MonkeyPatch,
                                                    terminal: Callable[[], io.StringIO]) -> None:
    monkeypatch.setenv("CI", value)
    assert in_ci()
    assert Progress(3, stream=terminal()).mode == "lines"
    assert Progress(3, stream=terminal(), mode="bar").mode == "bar"  # asked for: as asked


def test_in_ci_reads_the_environment_given() -> None:
    assert in_ci({"CI": "true"}) and not in_ci({"CI": "false"}) and not in_ci({})
