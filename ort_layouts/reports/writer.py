"""Writing a report directory: results as they arrive, the summaries (JSON, JUnit XML, HTML)
rewritten atomically while the run goes and when it ends, and resuming a run that stopped.

See :mod:`ort_layouts.reports.report` for what the directory holds.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult
from ort_layouts.reports.html import render_report_html
from ort_layouts.reports.junit import render_junit
from ort_layouts.reports.report import (
    FSYNC_INTERVAL_S,
    HTML_FILE,
    JSON_FILE,
    JUNIT_FILE,
    META_FILE,
    RESULTS_FILE,
    Report,
    atomic_write_text,
    now_iso,
    ordered_results,
    read_json,
    read_results,
)

__all__ = ["ReportWriter", "write_report"]


def write_report(
    report: Report, directory: str | os.PathLike[str], *, strict: bool = False
) -> dict[str, Path]:
    """Write ``report.json``, ``junit.xml`` and ``report.html`` into ``directory``, atomically.

    Returns:
        The paths written, keyed "json", "junit", "html".
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / JSON_FILE, "junit": out / JUNIT_FILE, "html": out / HTML_FILE}
    atomic_write_text(paths["json"], json.dumps(report.to_dict(), indent=1) + "\n")
    atomic_write_text(paths["junit"], render_junit(report, strict=strict))
    atomic_write_text(paths["html"], render_report_html(report, strict=strict))
    return paths


# the keys of meta["selection"] that must match for a report to be resumed
_SELECTION_LABELS = {
    "provider": "provider", "device_id": "device id", "suite": "suite", "ops": "ops",
    "dtypes": "dtypes", "ranks": "ranks", "shard": "shard", "seed": "seed", "values": "values",
    "optimize": "optimize",
}


class ReportWriter:
    """Writes a report directory as results arrive; resumes one a run left unfinished.

    Args:
        directory: the report directory (created if missing).
        meta: ``environment``, ``provider``, ``command``... and ``selection``: the settings
            that decide which cases run and how (provider, ops, dtypes, ranks, shard, ...);
            a report is resumed only with an equal selection.
        planned: the ids of the cases this run will run, in order.
        resume: continue the report already in ``directory``; without it an existing report
            there is replaced.
        strict: unsupported cases count as failures in JUnit and HTML.
        interval_s: the summaries are rewritten at most this often while results arrive.

    Raises:
        ReportError: resuming a report made with another selection, or a damaged one.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        meta: Mapping[str, Any],
        planned: Sequence[str],
        resume: bool = False,
        strict: bool = False,
        interval_s: float = 30.0,
    ) -> None:
        self.directory = Path(directory)
        self.strict = strict
        self.interval_s = interval_s
        self._results: list[CaseResult] = []
        self._last_write = time.monotonic()
        self._last_fsync = time.monotonic()
        if self.directory.exists() and not self.directory.is_dir():
            raise ReportError(f"report directory {str(self.directory)!r} is a file")
        self.directory.mkdir(parents=True, exist_ok=True)
        meta_path = self.directory / META_FILE
        results_path = self.directory / RESULTS_FILE
        new_meta = dict(meta)
        new_meta["planned"] = list(planned)
        new_meta.setdefault("started", now_iso())
        self.resumed = False
        if resume and results_path.is_file():
            if not meta_path.is_file():
                raise ReportError(f"cannot resume {self.directory}: it has {RESULTS_FILE} but no {META_FILE}")
            old = read_json(meta_path)
            _check_same_selection(self.directory, old.get("selection", {}), new_meta.get("selection", {}))
            self._results = read_results(results_path, repair=True)
            new_meta["started"] = old.get("started", new_meta["started"])
            new_meta["resumed"] = [*old.get("resumed", []), now_iso()]
            self.resumed = True
        else:
            results_path.write_bytes(b"")
            for name in (JSON_FILE, JUNIT_FILE, HTML_FILE):
                (self.directory / name).unlink(missing_ok=True)
        self.meta = new_meta
        atomic_write_text(meta_path, json.dumps(self.meta, indent=1) + "\n")
        self._file = open(results_path, "ab")  # noqa: SIM115 - closed in close()

    @property
    def done_ids(self) -> frozenset[str]:
        """Ids of the cases that already have a result (from the resumed report or this run)."""
        return frozenset(r.case.id for r in self._results)

    @property
    def results(self) -> tuple[CaseResult, ...]:
        return tuple(self._results)

    def update_meta(self, **values: Any) -> None:
        """Change meta fields (e.g. the device once the first result names it)."""
        self.meta.update(values)
        atomic_write_text(self.directory / META_FILE, json.dumps(self.meta, indent=1) + "\n")

    def add(self, result: CaseResult) -> None:
        """Append one result to results.jsonl and flush it to the operating system at once (a
        crash of the process or a GPU reset loses nothing already run); fsync it to the disk at
        most every FSYNC_INTERVAL_S (an OS crash loses at most that much), and rewrite the
        summaries when ``interval_s`` has passed since the last time."""
        line = json.dumps(result.to_dict(), separators=(",", ":")) + "\n"
        self._file.write(line.encode("utf-8"))
        self._file.flush()
        if time.monotonic() - self._last_fsync >= FSYNC_INTERVAL_S:
            self._sync()
        self._results.append(result)
        if time.monotonic() - self._last_write >= self.interval_s:
            self.write_summaries()

    def report(self) -> Report:
        return Report(dict(self.meta), ordered_results(self._results, self.meta.get("planned")))

    def write_summaries(self, *, finished: bool = False) -> Report:
        """Rewrite report.json, junit.xml and report.html from what has arrived so far."""
        if finished:
            self.meta["finished"] = now_iso()
            atomic_write_text(self.directory / META_FILE, json.dumps(self.meta, indent=1) + "\n")
        report = self.report()
        write_report(report, self.directory, strict=self.strict)
        self._last_write = time.monotonic()
        return report

    def _sync(self) -> None:
        os.fsync(self._file.fileno())
        self._last_fsync = time.monotonic()

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            self._sync()
            self._file.close()

    def __enter__(self) -> ReportWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_same_selection(directory: Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    differences = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            label = _SELECTION_LABELS.get(key, key)
            differences.append(f"{label} {old.get(key)!r} (this run: {new.get(key)!r})")
    if differences:
        raise ReportError(
            f"cannot resume {directory}: it was made with " + ", ".join(differences)
            + "; run with the same selection, or drop --resume to start a new report")
