"""A report directory whose lock file is not a regular file (a directory, a FIFO) is refused with
one ReportError that names the lock file, what it is and what to do; it was a bare OSError
("Is a directory")."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.reports.lock import LOCK_FILE, DirectoryLock, check_lock_file
from ort_layouts.reports.writer import ReportWriter


def _directory_refusal(directory: Path, what: str = "report directory") -> str:
    return (f"{what} {str(directory)!r}: its lock file {str(directory / '.lock')!r} is a directory, not a "
            f"regular file; move it away (the lock file is made again), or use another {what}")


@pytest.mark.parametrize("what", ["report directory", "export directory"])
def test_a_lock_file_that_is_a_directory_is_refused_naming_it(tmp_path: Path, what: str) -> None:
    (tmp_path / ".lock").mkdir()
    with pytest.raises(ReportError) as refused:
        DirectoryLock(tmp_path, command="ort-layouts validate", what=what)
    assert str(refused.value) == _directory_refusal(tmp_path, what)
    with pytest.raises(ReportError) as checked:
        check_lock_file(tmp_path, what=what)
    assert str(checked.value) == str(refused.value)
    assert (tmp_path / ".lock").is_dir() and os.listdir(tmp_path / ".lock") == []


def test_a_report_writer_on_such_a_directory_is_refused_the_same_way(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILE).mkdir()
    meta = {"provider": "CPUExecutionProvider", "command": "ort-layouts validate",
            "selection": {"provider": "CPUExecutionProvider"}}
    with pytest.raises(ReportError) as refused:
        ReportWriter(tmp_path, meta=meta, planned=[])
    assert str(refused.value) == _directory_refusal(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs: POSIX")
def test_a_lock_file_that_is_a_fifo_is_refused_without_opening_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / LOCK_FILE)
    with pytest.raises(ReportError) as refused:
        DirectoryLock(tmp_path)
    assert str(refused.value) == (
        f"report directory {str(tmp_path)!r}: its lock file {str(tmp_path / LOCK_FILE)!r} is a special file "
        "(a FIFO, a socket or a device), not a regular file; move it away (the lock file is made again), or "
        "use another report directory")


def test_a_missing_or_regular_lock_file_is_taken(tmp_path: Path) -> None:
    check_lock_file(tmp_path)  # none there yet
    with DirectoryLock(tmp_path) as lock:
        assert lock.held and (tmp_path / LOCK_FILE).is_file()
        check_lock_file(tmp_path)
    with DirectoryLock(tmp_path) as again:  # the file left behind
        assert again.held


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
def test_a_lock_file_that_links_to_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / LOCK_FILE).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ReportError, match="is a directory, not a regular file"):
        DirectoryLock(tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="a directory's open: IsADirectoryError on POSIX")
def test_a_lock_file_made_a_directory_after_the_check_is_refused_by_its_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock file's open refuses it too: one made a directory between the check and the open."""
    from ort_layouts.reports import lock as lock_module

    def made_since(directory: Path, *, what: str) -> None:
        (Path(directory) / LOCK_FILE).mkdir()

    monkeypatch.setattr(lock_module, "check_lock_file", made_since)
    with pytest.raises(ReportError) as refused:
        DirectoryLock(tmp_path)
    assert str(refused.value) == _directory_refusal(tmp_path)


def _open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a link to /dev/null; /proc/self/fd")
def test_a_lock_file_made_a_device_after_the_check_is_refused_once_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the open gives is checked as well: a lock file made a link to a device (/dev/null)
    between the check and the open is closed and refused."""
    from ort_layouts.reports import lock as lock_module

    monkeypatch.setattr(lock_module, "check_lock_file", lambda directory, *, what: (
        Path(directory) / LOCK_FILE).symlink_to(os.devnull))
    before = _open_descriptors()
    with pytest.raises(ReportError, match=r"is a special file \(a FIFO, a socket or a device\), not a "):
        DirectoryLock(tmp_path)
    assert _open_descriptors() <= before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs; /proc/self/fd")
def test_a_lock_file_made_a_fifo_after_the_check_is_refused_without_waiting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO made as the lock file between the check and the open is opened without waiting for
    a writer, then closed and refused; it was a bare "File or stream is not seekable"."""
    from ort_layouts.reports import lock as lock_module

    monkeypatch.setattr(lock_module, "check_lock_file",
                        lambda directory, *, what: os.mkfifo(Path(directory) / LOCK_FILE))
    before = _open_descriptors()
    with pytest.raises(ReportError) as refused:
        DirectoryLock(tmp_path, what="export directory")
    assert str(refused.value) == (
        f"export directory {str(tmp_path)!r}: its lock file {str(tmp_path / LOCK_FILE)!r} is a special file "
        "(a FIFO, a socket or a device), not a regular file; move it away (the lock file is made again), or "
        "use another export directory")
    assert _open_descriptors() <= before
