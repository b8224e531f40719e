"""The program's standard output and error when nobody reads them: a pipe whose reader quit
(``| head``), a descriptor closed when the program started. The run goes on to its report and
its exit status; nothing is printed where it does not belong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ort_layouts.reports.report import JSON_FILE

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors")

ROOT = Path(__file__).resolve().parents[2]
# 61 cases, all passing on the CPU EP
SMALL = ["validate", "--provider", "cpu", "--ops", "Transpose", "--ranks", "2", "--progress", "lines"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _summary(report: Path) -> dict[str, int]:
    data = json.loads((report / JSON_FILE).read_text())
    return {"planned": len(data["results"]), **data["summary"]}


def test_a_run_whose_readers_quit_goes_on_to_its_report_and_its_exit_status(tmp_path: Path) -> None:
    """Both pipes' readers gone before the first line: the run stopped at its first write and
    exited 1 with nothing said, its report incomplete."""
    report = tmp_path / "r"
    read_out, write_out = os.pipe()
    read_err, write_err = os.pipe()
    os.close(read_out)
    os.close(read_err)
    try:
        done = subprocess.run([sys.executable, "-m", "ort_layouts", *SMALL, "--report", str(report)],
                              env=_env(), stdout=write_out, stderr=write_err, timeout=120, check=False)
    finally:
        os.close(write_out)
        os.close(write_err)
    assert done.returncode == 0
    assert _summary(report) == {"planned": 61, "pass": 61, "mismatch": 0, "unsupported": 0, "error": 0}


@pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
def test_a_descriptor_closed_at_the_start_drops_its_lines(tmp_path: Path, closed: int) -> None:
    """A closed standard output ended the run with a traceback (Python's stream is None); a
    closed standard error sent the progress lines to standard output."""
    report = tmp_path / "r"
    done = subprocess.run([sys.executable, "-m", "ort_layouts", *SMALL, "--report", str(report)],
                          env=_env(), stdout=subprocess.PIPE if closed == 2 else None,
                          stderr=subprocess.PIPE if closed == 1 else None, timeout=120, check=False,
                          preexec_fn=lambda: os.close(closed))
    assert done.returncode == 0
    assert _summary(report)["pass"] == 61
    if closed == 1:
        lines = done.stderr.decode().splitlines()  # the progress lines alone: no traceback
        assert lines and all(line.startswith("[") for line in lines)
        assert "61/61 (100%) pass 61" in lines[-1]
    else:  # standard output holds the summary's lines only: no progress line
        lines = done.stdout.decode().splitlines()
        assert lines[0].startswith("61 cases on CPUExecutionProvider") and lines[1].startswith("reports: ")
        assert len(lines) == 2
