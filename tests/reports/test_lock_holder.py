"""A refused run names the process that holds the report directory now: a merge as the merge
(not the unsharded run its report names), never a holder that has let the lock go or died."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from ort_layouts._errors import ArgumentError, ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.frontends.cli import main
from ort_layouts.operators.case import Case
from ort_layouts.reports import merge
from ort_layouts.reports.lock import LOCK_FILE, DirectoryLock
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
MERGING = b'{"pid": 4242, "host": "ci-7", "command": "ort-layouts merge --shards r"}\n'


def _shards(directory: Path) -> list[str]:
    cases = [Case("Transpose", "float32", (2, 3), perm=(1, 0)),
             Case("Transpose", "float32", (3, 2), perm=(1, 0))]
    ids = [c.id for c in cases]
    for k in (1, 2):
        meta = {"provider": CPU, "command": f"ort-layouts validate --shard {k}/2 --report {directory}",
                "environment": {"hostname": "h"},
                "selection": {"provider": CPU, "ops": [], "shard": f"{k}/2"}}
        with ReportWriter(directory / f"shard-{k}-of-2", meta=meta, planned=ids[k - 1::2]) as w:
            w.add(CaseResult(cases[k - 1], Status.PASS, CPU, element_count=6))
            w.write_summaries(finished=True)
    return ids


def _refusal(directory: Path) -> str:
    with pytest.raises(ReportError) as refused:
        DirectoryLock(directory, command="ort-layouts validate --competing")
    return str(refused.value)


def _refusals_during_merge(monkeypatch: pytest.MonkeyPatch, shards: Path, out: Path) -> dict[str, str]:
    """What a run refused while the merge holds a shard (as it reads it) and ``out`` (as it
    writes the merged report) is told: the lock is per open file, so this process is refused too."""
    seen: dict[str, str] = {}
    read = merge.read_numbered_results

    def reading(path: Path) -> Any:
        seen.setdefault("shard", _refusal(Path(path).parent))
        return read(path)

    class Writer(ReportWriter):
        def add(self, result: CaseResult) -> None:
            seen.setdefault("out", _refusal(out))
            super().add(result)

    monkeypatch.setattr(merge, "read_numbered_results", reading)
    monkeypatch.setattr(merge, "ReportWriter", Writer)
    return seen


def test_a_merge_holds_its_directories_as_the_merge_not_as_the_run_it_merges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _shards(tmp_path)
    seen = _refusals_during_merge(monkeypatch, tmp_path, tmp_path / "merged")
    report = merge.merge_shards([tmp_path], tmp_path / "merged")
    assert report.meta["command"] == f"ort-layouts validate --report {tmp_path}"  # the report's: the run's
    for where in ("shard", "out"):
        assert "in use by another run: pid " in seen[where], seen
        shards = f"{tmp_path / 'shard-1-of-2'} {tmp_path / 'shard-2-of-2'}"
        assert f": ort-layouts merge --shards {shards} --out {tmp_path / 'merged'};" in seen[where], seen
        assert "validate" not in seen[where], seen
    seen.clear()
    merge.merge_shards([tmp_path], tmp_path / "merged", force=True, command="my-merge --of shards")
    assert ": my-merge --of shards;" in seen["shard"] and ": my-merge --of shards;" in seen["out"], seen


def test_merge_shards_in_the_cli_holds_its_directories_as_its_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _shards(tmp_path)
    seen = _refusals_during_merge(monkeypatch, tmp_path, tmp_path)
    assert main(["merge", "--shards", str(tmp_path)]) == 0, capsys.readouterr().err
    for where in ("shard", "out"):
        assert f": ort-layouts merge --shards {tmp_path}; wait for it" in seen[where], seen


def test_holding_as_names_its_command_and_start_only_within_its_block(tmp_path: Path) -> None:
    from ort_layouts.reports.lock import holding_as

    with holding_as("ort-layouts merge --shards r", "2030-01-01T00:00:00+00:00"):
        lock = DirectoryLock(tmp_path, command="ort-layouts validate --report r", started="2020")
    with lock:
        message = _refusal(tmp_path)
        assert "started 2030-01-01T00:00:00+00:00: ort-layouts merge --shards r;" in message, message
    with DirectoryLock(tmp_path, command="ort-layouts validate --report r", started="2020"):
        assert "started 2020: ort-layouts validate --report r;" in _refusal(tmp_path)
    with (pytest.raises(ArgumentError, match=r"command None is a NoneType, not a str; valid: e\.g\. 'ort-"),
          holding_as(None)):  # type: ignore[arg-type]
        pass
    with pytest.raises(ArgumentError, match="command 3 is an int, not a str; valid: the merge's command"):
        merge.merge_shards([tmp_path], tmp_path / "m", command=3)  # type: ignore[arg-type]



def test_holding_as_names_only_the_locks_of_its_own_thread(tmp_path: Path) -> None:
    """A lock another thread takes while a holding_as block is open names its own command."""
    from ort_layouts.reports.lock import holding_as

    taken: list[DirectoryLock] = []
    elsewhere = threading.Thread(target=lambda: taken.append(
        DirectoryLock(tmp_path, command="ort-layouts validate --report r", started="2020")))
    with holding_as("ort-layouts merge --shards r", "2030-01-01T00:00:00+00:00"):
        elsewhere.start()
        elsewhere.join()
    with taken[0]:
        assert "started 2020: ort-layouts validate --report r;" in _refusal(tmp_path)

def _raw_holder(path: Path) -> Any:
    """The lock file opened and locked as a run takes it, before it has written its record."""
    import fcntl

    f = open(path, "a+b")  # noqa: SIM115 - closed by the test
    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    return f


def _refusal_before_the_holder_writes(directory: Path, left: bytes = b"") -> str:
    """A run refused while a new holder of ``directory`` holds its lock file, which holds
    ``left``, and writes MERGING into it 0.3 s later."""
    with _raw_holder(directory / LOCK_FILE) as held:
        held.write(left)
        held.flush()

        def say() -> None:
            held.seek(0)
            held.truncate()
            held.write(MERGING)
            held.flush()

        timer = threading.Timer(0.3, say)
        timer.start()
        message = _refusal(directory)
        timer.join()
    return message


@posix_only
def test_a_refusal_never_quotes_the_holder_that_let_the_lock_go(tmp_path: Path) -> None:
    """The last holder (this process, alive) let the directory go; a new one took it and has not
    written its record yet: the refused run waits for that record, not quoting the last one."""
    DirectoryLock(tmp_path, command="ort-layouts validate --earlier").release()
    assert (tmp_path / LOCK_FILE).read_bytes() == b""  # emptied as it was let go
    message = _refusal_before_the_holder_writes(tmp_path)
    assert "pid 4242 on host ci-7: ort-layouts merge --shards r;" in message, message


@posix_only
def test_a_refusal_never_quotes_a_holder_of_this_host_that_has_ended(tmp_path: Path) -> None:
    """A holder killed before it emptied the file left its record; the new holder has not
    written its own yet: the refused run waits for it."""
    import json
    import platform

    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    record = {"pid": ended.pid, "host": platform.node(), "command": "ort-layouts killed"}
    message = _refusal_before_the_holder_writes(tmp_path, json.dumps(record).encode() + b"\n")
    assert "pid 4242 on host ci-7: ort-layouts merge --shards r;" in message, message


@posix_only
def test_a_lock_let_go_while_the_refused_run_waits_for_its_record_is_taken(tmp_path: Path) -> None:
    import fcntl

    held = _raw_holder(tmp_path / LOCK_FILE)

    def let_go() -> None:
        fcntl.flock(held.fileno(), fcntl.LOCK_UN)
        held.close()

    timer = threading.Timer(0.3, let_go)
    timer.start()
    with DirectoryLock(tmp_path, command="ort-layouts validate --next") as lock:
        timer.join()
        assert lock.held and lock.holder()["command"] == "ort-layouts validate --next"
