"""results.jsonl reaches the disk within FSYNC_INTERVAL_S of each append even when no result
follows it (a run that hangs on a GPU, or waits out a long timeout): the writer's syncing thread
syncs an append that waits, and stops when the writer closes. A fake clock: nothing here waits
on real time but for the syncing thread to act once the clock has moved."""

from __future__ import annotations

import os
import threading
import types
from pathlib import Path

import pytest

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports import writer as writer_module
from ort_layouts.reports.report import FSYNC_INTERVAL_S, RESULTS_FILE
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"


def _result(seed: int) -> CaseResult:
    return CaseResult(Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed), Status.PASS, CPU,
                      element_count=6, seconds=0.1, descriptors={"operator": "x"})


class _Disk:
    """A fake clock for the writer and a record of its syncs of results.jsonl."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, results: Path) -> None:
        self.now = 1000.0
        self.results = results
        self.synced: list[tuple[float, int]] = []  # (time, the file's size then)
        self.event = threading.Event()  # set at each sync
        monkeypatch.setattr(writer_module, "time", types.SimpleNamespace(monotonic=lambda: self.now))
        real = os.fsync

        def fsync(fd: int) -> None:
            real(fd)
            if os.path.samestat(os.fstat(fd), os.stat(results)):
                self.synced.append((self.now, os.fstat(fd).st_size))
                self.event.set()

        monkeypatch.setattr(writer_module.os, "fsync", fsync)

    def wait_for_syncs(self, count: int) -> None:
        """Wait (30 s at most) until results.jsonl has been synced ``count`` times."""
        for _ in range(600):
            if len(self.synced) >= count:
                return
            self.event.wait(0.05)
            self.event.clear()
        raise AssertionError(f"results.jsonl was synced {len(self.synced)} times, not {count}")


def test_an_append_no_result_follows_is_synced_within_the_interval(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = _Disk(monkeypatch, tmp_path / RESULTS_FILE)
    results = [_result(seed) for seed in range(3)]
    w = ReportWriter(tmp_path, meta={"provider": CPU}, planned=[r.case.id for r in results], interval_s=3600)
    try:
        disk.now += FSYNC_INTERVAL_S  # due: the first append syncs itself
        w.add(results[0])
        assert len(disk.synced) == 1
        disk.now += FSYNC_INTERVAL_S / 4
        w.add(results[1])  # not due: left to the syncing thread
        assert len(disk.synced) == 1
        disk.now += FSYNC_INTERVAL_S  # the next case hangs: no result comes
        disk.wait_for_syncs(2)
        size = (tmp_path / RESULTS_FILE).stat().st_size
        assert disk.synced[1] == (disk.now, size)  # both lines on the disk
        # a later append, not due, is synced again, and only once the interval has passed
        w.add(results[2])
        assert len(disk.synced) == 2
        disk.now += FSYNC_INTERVAL_S
        disk.wait_for_syncs(3)
        assert disk.synced[2][1] == (tmp_path / RESULTS_FILE).stat().st_size
    finally:
        w.close()
    syncer = w._syncer
    assert syncer is not None and not syncer.is_alive()  # stopped at close
    assert len(disk.synced) == 4  # and closing synced once more


def test_a_sync_that_fails_in_the_syncing_thread_is_raised_by_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = _Disk(monkeypatch, tmp_path / RESULTS_FILE)
    results = [_result(seed) for seed in range(2)]
    failing = threading.Event()

    def fsync(fd: int) -> None:
        if threading.current_thread().name == "ort_layouts_results_sync":
            failing.set()
            raise OSError(5, "Input/output error")

    w = ReportWriter(tmp_path, meta={"provider": CPU}, planned=[r.case.id for r in results], interval_s=3600)
    try:
        monkeypatch.setattr(writer_module.os, "fsync", fsync)
        w.add(results[0])  # not due: the syncing thread's, which fails
        disk.now += FSYNC_INTERVAL_S
        assert failing.wait(30)
        with pytest.raises(OSError, match="Input/output error"):
            w.add(results[1])  # due: raises what the thread's sync raised
        assert len(w.results) == 2  # its line was written: the summaries count it
    finally:
        w.close()
    assert (tmp_path / RESULTS_FILE).read_text().count("\n") == 2  # both lines are with the OS


def test_a_close_whose_sync_fails_still_lets_the_file_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _result(0)
    w = ReportWriter(tmp_path, meta={"provider": CPU}, planned=[result.case.id], interval_s=3600)
    w.add(result)

    def fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(writer_module.os, "fsync", fsync)
    with pytest.raises(OSError, match="Input/output error"):
        w.close()
    assert w._file.closed


def test_the_syncing_thread_goes_on_after_a_sync_that_failed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = _Disk(monkeypatch, tmp_path / RESULTS_FILE)
    recording = writer_module.os.fsync
    results = [_result(seed) for seed in range(4)]
    failed = threading.Event()

    def fsync(fd: int) -> None:
        if threading.current_thread().name == "ort_layouts_results_sync" and not failed.is_set():
            failed.set()
            raise OSError(5, "Input/output error")
        recording(fd)

    w = ReportWriter(tmp_path, meta={"provider": CPU}, planned=[r.case.id for r in results], interval_s=3600)
    try:
        monkeypatch.setattr(writer_module.os, "fsync", fsync)
        w.add(results[0])  # not due: the syncing thread's, which fails once
        disk.now += FSYNC_INTERVAL_S
        assert failed.wait(30)
        with pytest.raises(OSError, match="Input/output error"):
            w.add(results[1])
        w.add(results[2])  # due: synced by the writer
        synced = len(disk.synced)
        disk.now += FSYNC_INTERVAL_S / 4
        w.add(results[3])  # not due: the syncing thread's again
        disk.now += FSYNC_INTERVAL_S
        disk.wait_for_syncs(synced + 1)
        assert disk.synced[-1][1] == (tmp_path / RESULTS_FILE).stat().st_size
    finally:
        w.close()
