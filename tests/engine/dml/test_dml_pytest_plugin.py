"""The pytest plugin on the real DirectML stack through the worker: a broken stack stops the
session with validate's line, a failure names the stack (skipped where it is not set up)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ort_layouts.engine.dml.stack import DmlStack

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[3]
# the entry point loads the plugin where the package is installed; else load it by name
INSTALLED = any(ep.value == "_ort_layouts_pytestplugin"
                for ep in importlib.metadata.entry_points(group="pytest11"))
PLUGIN = [] if INSTALLED else ["-p", "_ort_layouts_pytestplugin"]
# where the stack is set up (pytester's runs have a HOME of their own)
DML_HOME = DmlStack.default().home
DML_TILE = ["--ort-provider=dml", "--ort-ops=Tile", "--ort-ranks=1", "--ort-dtypes=float32"]


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch, dml_stack: DmlStack) -> None:
    monkeypatch.setenv("ORT_LAYOUTS_DML_HOME", str(DML_HOME))
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_a_broken_directml_stack_is_one_usage_error_with_validates_line(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mesa 22's lavapipe under vkd3d 1.6 returns zeros: the session stops with the line that
    ``validate`` stops with, before any item."""
    icd = DML_HOME / "mesa22" / "lvp_icd.json"
    if not icd.is_file():
        pytest.skip("the Mesa 22 lavapipe is not set up (ort-layouts setup dml --mesa 22)")
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", str(icd))
    validate = subprocess.run([sys.executable, "-m", "ort_layouts", "validate", "--provider", "dml", "--ops",
                               "Tile", "--ranks", "1", "--dtypes", "float32"],
                              capture_output=True, text=True, cwd=pytester.path, timeout=300)
    assert validate.returncode == 2
    line = validate.stderr.strip().splitlines()[-1]
    assert line.startswith("ort-layouts: error: the DirectML stack is broken, so no case was run: every "
                           "output is zeros")
    result = pytester.runpytest_subprocess(*PLUGIN, *DML_TILE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: ort_layouts: " + line.removeprefix("ort-layouts: error: ") in result.stderr.lines
    assert "no tests ran" in result.stdout.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


MISMATCH_CONFTEST = '''
import dataclasses
import ort_layouts.engine.runner as runner
from ort_layouts.engine.result import Status

real = runner.run_cases

def first_mismatches(cases, **kwargs):
    return [dataclasses.replace(r, status=Status.MISMATCH, mismatch_count=1) if i == 0 else r
            for i, r in enumerate(real(cases, **kwargs))]

runner.run_cases = first_mismatches
'''


def test_a_directml_failure_names_the_stack(pytester: pytest.Pytester) -> None:
    """On the DirectML worker a failing item's device names the stack, and its ``stack``
    property holds it field by field."""
    pytester.makeconftest(MISMATCH_CONFTEST)
    result = pytester.runpytest_subprocess(*PLUGIN, *DML_TILE, "--ort-values=iota", "--junitxml=out.xml")
    result.assert_outcomes(failed=1)
    failed = [c for c in ET.parse(pytester.path / "out.xml").getroot().iter("testcase")
              if c.find("failure") is not None]
    props = {p.get("name"): p.get("value") for p in failed[0].iter("property")}
    stack = json.loads(props["stack"] or "")
    assert stack["directml_version"] and stack["directml_version"] in (props["device"] or "")
    assert props["dml_operator"] == "DML_OPERATOR_TILE"
    at = result.outlines.index(f"{props['case_id']}: 1 of 1 elements differ")
    assert result.outlines[at + 1:at + 5] == [
        f"  provider: DmlExecutionProvider on {props['device']}",
        "  DML_OPERATOR_TILE repeats_count 1, repeats [1]",
        "    input: FLOAT32 sizes [1] strides packed, 4 bytes",
        "    output: FLOAT32 sizes [1] strides packed, 4 bytes"]
