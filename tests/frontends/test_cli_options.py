"""validate's options read as the README says: --values in any letter case, as --ops and
--dtypes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ort_layouts.frontends.cli import main

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
