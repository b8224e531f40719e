"""export --model M --seed S writes the cases validate --model M --seed S runs: the model's
cases with the seed's input data (model_cases(M, seed=S))."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ort_layouts.frontends.cli import main
from ort_layouts.models.extract import model_cases

MODEL = Path(__file__).resolve().parents[1] / "data" / "transformer_block.onnx"
DIM = ["--dim", "batch=2"]


def _exported_ids(out: Path) -> list[str]:
    listed = json.loads((out / "cases.json").read_text(encoding="utf-8"))
    return sorted(case["id"] for entry in listed for case in entry["cases"])


def test_export_of_a_model_takes_the_seed_validate_takes(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    expected = sorted(c.id for c in model_cases(MODEL, dims={"batch": 2}, seed=7))
    assert expected and all(cid.endswith("-s7") for cid in expected)
    assert main(["export", "--out", str(tmp_path / "e7"), "--model", str(MODEL), *DIM, "--seed", "7"]) == 0, \
        capsys.readouterr().err
    assert _exported_ids(tmp_path / "e7") == expected
    assert main(["validate", "--provider", "cpu", "--model", str(MODEL), *DIM, "--seed", "7", "--progress",
                 "none", "--report", str(tmp_path / "v7")]) == 0, capsys.readouterr().err
    planned = json.loads((tmp_path / "v7" / "meta.json").read_text(encoding="utf-8"))["planned"]
    assert sorted(planned) == expected
    assert main(["export", "--out", str(tmp_path / "e0"), "--model", str(MODEL), *DIM]) == 0
    assert _exported_ids(tmp_path / "e0") == sorted(c.id for c in model_cases(MODEL, dims={"batch": 2}))
    assert _exported_ids(tmp_path / "e0") != expected
