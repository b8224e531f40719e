"""validate --report DIR where DIR cannot hold a report: refused in one line that names the path
and what is wrong, exit status 2, no traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ort_layouts.frontends.cli import main

Cap = pytest.CaptureFixture[str]
SMALL = ["--provider", "cpu", "--ops", "Transpose", "--dtypes", "float32", "--ranks", "2",
         "--progress", "none"]
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")


@pytest.fixture
def no_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """The provider is neither resolved nor started: a refusal must come before."""
    import ort_layouts.engine.session as session

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the provider was looked at before the report directory was refused")

    monkeypatch.setattr(session, "resolve_validation_provider", started)
    monkeypatch.setattr(session, "check_provider_start", started)


def _one_error(capsys: Cap) -> str:
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@posix_only
@pytest.mark.parametrize("given", ["link", "link/sub"], ids=["the-link", "under-the-link"])
def test_a_report_directory_at_a_link_to_nothing_is_refused_before_any_work(
        given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_provider: None, capsys: Cap) -> None:
    """It was refused only once the provider had started, as a bare "File exists"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path / "missing")
    assert main(["validate", *SMALL, "--report", given]) == 2
    where = "is" if given == "link" else f"lies under {str(tmp_path / 'link')!r},"
    assert _one_error(capsys) == (
        f"ort-layouts: error: argument --report: {given!r} {where} a symbolic link to "
        f"{str(tmp_path / 'missing')!r}, which does not exist; valid: a directory (or a link to one), or a "
        "path where nothing is yet (the directory is made)")
    assert sorted(os.listdir(tmp_path)) == ["link"] and not (tmp_path / "missing").exists()


@posix_only
def test_a_shard_directory_at_a_link_to_nothing_is_refused_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_provider: None, capsys: Cap) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "shard-1-of-2").symlink_to("/nonexistent-ort-layouts-target")
    assert main(["validate", *SMALL, "--report", "r", "--shard", "1/2"]) == 2
    assert _one_error(capsys) == (
        "ort-layouts: error: argument --report: 'r/shard-1-of-2' is a symbolic link to "
        "'/nonexistent-ort-layouts-target', which does not exist; valid: a directory (or a link to one), "
        "or a path where nothing is yet (the directory is made)")


@posix_only
def test_a_report_directory_at_a_link_to_a_directory_is_written(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert main(["validate", *SMALL, "--report", "link"]) == 0
    assert (tmp_path / "real" / "report.json").is_file()


@posix_only
@pytest.mark.parametrize("argv", [["export", "--ops", "Transpose", "--out", "link"],
                                  ["merge", "--shards", "reports", "--out", "link"]], ids=["export", "merge"])
def test_other_output_directories_at_a_link_to_nothing_are_refused_too(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Cap) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    (tmp_path / "link").symlink_to("missing")
    assert main(argv) == 2
    assert _one_error(capsys) == (
        "ort-layouts: error: argument --out: 'link' is a symbolic link to 'missing', which does not exist; "
        "valid: a directory (or a link to one), or a path where nothing is yet (the directory is made)")
    assert sorted(os.listdir(tmp_path)) == ["link", "reports"]


@pytest.mark.parametrize("shard", [False, True], ids=["report", "shard"])
def test_a_report_directory_whose_lock_is_a_directory_is_refused_before_any_work(
        shard: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_provider: None, capsys: Cap) -> None:
    """It failed once the provider had started, with a bare "Is a directory"."""
    monkeypatch.chdir(tmp_path)
    directory = Path("r/shard-1-of-2" if shard else "r")
    (tmp_path / directory / ".lock").mkdir(parents=True)
    assert main(["validate", *SMALL, "--report", "r", *(["--shard", "1/2"] if shard else [])]) == 2
    assert _one_error(capsys) == (
        f"ort-layouts: error: argument --report: report directory {str(directory)!r}: its lock file "
        f"{str(directory / '.lock')!r} is a directory, not a regular file; move it away (the lock file is "
        "made again), or use another report directory")
    assert os.listdir(tmp_path / directory) == [".lock"]


@pytest.mark.parametrize("resume", [False, True], ids=["replace", "resume"])
def test_a_report_of_another_selection_is_refused_before_the_provider_starts(
        tmp_path: Path, capsys: Cap, monkeypatch: pytest.MonkeyPatch, resume: bool) -> None:
    """Comparing DIR's report with the run's selection needs no provider: on DirectML the canary
    took a second first, and a broken stack hid the refusal until the stack was fixed."""
    import ort_layouts.engine.session as session

    report = tmp_path / "r"
    assert main(["validate", *SMALL, "--report", str(report)]) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in report.iterdir() if p.is_file()}

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the provider was started before the report directory was refused")

    monkeypatch.setattr(session, "check_provider_start", started)
    other = [*SMALL[:SMALL.index("--ranks")], "--ranks", "1", "--progress", "none"]
    assert main(["validate", *other, "--report", str(report), *(["--resume"] if resume else [])]) == 2
    line = _one_error(capsys)
    said = "cannot resume" if resume else "holds a report of another selection"
    assert line.startswith("ort-layouts: error: ") and said in line, line
    assert "ranks [2] (this run: [1])" in line, line
    assert {p.name: p.read_bytes() for p in report.iterdir() if p.is_file()} == before
