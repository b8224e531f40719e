"""Writing a report directory: results as they arrive, the summaries (JSON, JUnit XML, HTML)
written when the run starts, rewritten atomically at most every ``interval_s`` while it goes
and when it ends, and resuming a run that stopped.

A report directory belongs to one run at a time (:class:`~ort_layouts.reports.lock.DirectoryLock`)
and to one selection: the meta's ``selection`` carries ``cases_sha256``, the SHA-256 of the
planned case ids, which name every case's content (its seed is derived from it). A run resumes
a report only with an equal selection, and replaces one of another selection only when forced.
When a run ends, ``results.jsonl`` is rewritten in planned order, so a finished report reads
the same however its cases were batched, split over shards or resumed.

See :mod:`ort_layouts.reports.report` for what the directory holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import operator
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from ort_layouts._errors import ReportError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status, field_defaults
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import report_html_pieces
from ort_layouts.reports.junit import junit_pieces
from ort_layouts.reports.lock import DirectoryLock
from ort_layouts.reports.report import (
    FSYNC_INTERVAL_S,
    HTML_FILE,
    JSON_FILE,
    JUNIT_FILE,
    META_FILE,
    RESULTS_FILE,
    Report,
    atomic_write_text,
    atomic_write_texts,
    now_iso,
    ordered_positions,
    read_json,
    read_results,
    report_header,
    result_dict,
)

__all__ = ["ReportWriter", "cases_sha256", "result_json", "result_line", "write_report"]


def write_report(
    report: Report, directory: str | os.PathLike[str], *, strict: bool | None = None
) -> dict[str, Path]:
    """Write ``report.json``, ``junit.xml`` and ``report.html`` into ``directory``, atomically.

    Args:
        strict: known issues and unsupported cases fail the run in all three; None: as the
            report's meta says (``strict``).

    Returns:
        The paths written, keyed "json", "junit", "html".
    """
    return _write_files(report, directory, strict=strict, lines=None)


def _write_files(
    report: Report, directory: str | os.PathLike[str], *, strict: bool | None, lines: Sequence[str] | None,
    also: Sequence[tuple[Path, str]] = (),
) -> dict[str, Path]:
    """:func:`write_report`, with the results' JSON (``lines``, one per result, as
    :func:`result_json` makes them) already made, or None to make them here; ``also``: other
    files (path, text) to write with them."""
    if strict is None:
        strict = bool(report.meta.get("strict", False))
    if lines is None:
        lines = [result_json(r) for r in report.results]
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / JSON_FILE, "junit": out / JUNIT_FILE, "html": out / HTML_FILE}
    atomic_write_texts([*also, (paths["json"], _report_json_pieces(report, lines, strict=strict)),
                        (paths["junit"], junit_pieces(report, strict=strict)),
                        (paths["html"], report_html_pieces(report, strict=strict))])
    return paths


# lines per piece of the summaries' text: some hundred kilobytes
_PIECE_LINES = 128


def _report_json(report: Report, lines: Sequence[str], *, strict: bool) -> str:
    """The text of ``report.json``: :meth:`Report.to_dict` as JSON, its fields one a line
    (indented by one space) and then its results, one a line, as ``lines`` holds them."""
    return "".join(_report_json_pieces(report, lines, strict=strict))


def _report_json_pieces(report: Report, lines: Sequence[str], *, strict: bool) -> Iterator[str]:
    """:func:`_report_json`'s text in pieces, one for each few hundred results."""
    head = json.dumps(report_header(report, strict=strict), indent=1)  # "{\n ...\n}"
    if not lines:
        yield head[:-2] + ',\n "results": []\n}\n'
        return
    yield head[:-2] + ',\n "results": [\n  '
    separator = ",\n  "
    for start in range(0, len(lines), _PIECE_LINES):
        yield (separator if start else "") + separator.join(lines[start:start + _PIECE_LINES])
    yield "\n ]\n}\n"


def _lines_pieces(lines: Sequence[str]) -> Iterator[str]:
    """The text of a ``results.jsonl`` of ``lines``, in pieces."""
    for start in range(0, len(lines), _PIECE_LINES):
        yield "\n".join(lines[start:start + _PIECE_LINES]) + "\n"


def _meta_text(meta: Mapping[str, Any]) -> str:
    """The text of ``meta.json``: ``json.dumps(meta, indent=1)`` and a newline, made with
    Python's C encoder for the planned case ids (thousands of them; ``indent`` takes the
    encoder written in Python)."""
    planned = meta.get("planned")
    if not (isinstance(planned, list) and planned and all(type(cid) is str for cid in planned)):
        return json.dumps(meta, indent=1) + "\n"
    marker = "\x00planned\x00"
    text = json.dumps({**meta, "planned": marker}, indent=1)
    encoded_marker = json.dumps(marker)
    if text.count(encoded_marker) != 1:
        return json.dumps(meta, indent=1) + "\n"
    ids = "[\n  " + ",\n  ".join(map(encode_basestring_ascii, planned)) + "\n ]"
    return text.replace(encoded_marker, ids) + "\n"


def cases_sha256(case_ids: Sequence[str]) -> str:
    """The SHA-256 of a selection's case ids, in order (one per line), in hex."""
    return hashlib.sha256("".join(f"{cid}\n" for cid in case_ids).encode("utf-8")).hexdigest()


def _not_json(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json.dumps(..., separators=(",", ":")) without making an encoder for each result
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_C_ENCODE = None if c_make_encoder is None else c_make_encoder(
    None, _not_json, encode_basestring_ascii, None, ":", ",", False, False, True)
_DATA_TYPE_NAMES = {t: t.name for t in DataType}
_STATUS_VALUES = {s: s.value for s in Status}


_REQUIRED = object()  # the "default" of a field that has none: no value equals it


def _fields_and_defaults(cls: type) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """A dataclass's field names and the default of each (``_REQUIRED`` for none)."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    defaults = field_defaults(cls)
    return names, tuple(defaults.get(name, _REQUIRED) for name in names)


_CASE_NAMES, _CASE_DEFAULTS = _fields_and_defaults(Case)
_RESULT_NAMES, _RESULT_DEFAULTS = _fields_and_defaults(CaseResult)
_case_values = operator.attrgetter(*_CASE_NAMES)
_result_values = operator.attrgetter(*_RESULT_NAMES)


def _case_dict(case: Case) -> dict[str, Any]:
    """``Case.to_dict`` without the fields equal to their defaults (tuples as they are: JSON
    writes them as lists)."""
    values = _case_values(case)
    d = {name: value for name, value, default in zip(_CASE_NAMES, values, _CASE_DEFAULTS, strict=True)
         if value != default}
    d["data_type"] = _DATA_TYPE_NAMES[case.data_type]
    return d


def _result_dict(r: CaseResult, case_id: str) -> dict[str, Any]:
    """``CaseResult.to_dict(defaults=False)``, made without its copies of every field."""
    values = _result_values(r)
    d = {name: value for name, value, default in zip(_RESULT_NAMES, values, _RESULT_DEFAULTS, strict=True)
         if value != default}
    d["case"] = _case_dict(r.case)
    d["status"] = _STATUS_VALUES[r.status]
    d["id"] = case_id
    return d


def _compact_json(data: dict[str, Any]) -> str:
    if _C_ENCODE is None:
        return _ENCODER.encode(data)
    return "".join(_C_ENCODE(data, 0))


def result_json(result: CaseResult, case_id: str | None = None) -> str:
    """A result as one line of ``results.jsonl`` holds it (without the newline): the JSON of
    :func:`~ort_layouts.reports.report.result_dict` (``CaseResult.to_dict(defaults=False)``:
    the fields equal to their defaults left out), compact.

    The same JSON as that dict gives, made without ``to_dict``'s copies of every field (its
    case's ``Case.to_dict`` copies each value through ``dataclasses.asdict``): the fields as
    they are, the data type and status by name, the case's ``id`` (``case_id`` when the caller
    has it).
    """
    r = result
    case = r.case
    if type(r) is not CaseResult or type(case) is not Case:
        return _ENCODER.encode(result_dict(r))
    if case_id is None:
        case_id = case.id
    try:
        if (_C_ENCODE is not None and r.mismatch_count == 0 and r.first_mismatch_index is None
                and r.input_offset_in_elements is None and r.output_offset_in_elements is None
                and r.expected_hex == "" and r.actual_hex == "" and r.diagnosis == "" and r.known_issue == ""
                and r.recovered == {} and r.message == "" and type(r.element_count) is int
                and r.element_count != 0 and type(r.seconds) is float and r.seconds - r.seconds == 0.0
                and r.seconds != 0.0 and type(r.descriptors) is dict and r.descriptors
                and type(case_id) is str):
            # most results (a pass): their fields but the case, descriptors, seconds and id in one
            # piece of text for each status, provider, device and node provider
            head = _HEADS.get((r.status, r.provider, r.device, r.node_provider))
            if head is None:
                head = _head(r)
            if head:
                return "".join((
                    '{"case":', "".join(_C_ENCODE(_case_dict(case), 0)), head, str(r.element_count),
                    ',"descriptors":', "".join(_C_ENCODE(r.descriptors, 0)), ',"seconds":', repr(r.seconds),
                    ',"id":', encode_basestring_ascii(case_id), "}"))
        return _compact_json(_result_dict(r, case_id))
    except (TypeError, ValueError, RecursionError):  # JSON does not hold a value as it is: to_dict's way
        return _ENCODER.encode(result_dict(r))


# the JSON of "status" ... "node_provider" of each (status, provider, device, node provider) of
# a pass, up to its element count; "" for one that is not a str
_HEADS: dict[tuple[Any, ...], str] = {}


def _head(r: CaseResult) -> str:
    values = (r.status, r.provider, r.device, r.node_provider)
    if not all(isinstance(v, str) for v in values):
        return ""
    d = {"status": _STATUS_VALUES[r.status], "provider": r.provider}
    if r.device != "":
        d["device"] = r.device
    if r.node_provider != "":
        d["node_provider"] = r.node_provider
    head = _HEADS[values] = "," + _compact_json(d)[1:-1] + ',"element_count":'
    return head


def result_line(result: CaseResult) -> bytes:
    """One line of ``results.jsonl``."""
    return (result_json(result) + "\n").encode("utf-8")


# the keys of meta["selection"] that must match for a report to be resumed, as messages name them
_SELECTION_LABELS = {
    "provider": "provider", "device_id": "device id", "suite": "suite", "ops": "ops",
    "dtypes": "dtypes", "ranks": "ranks", "shard": "shard", "seed": "seed", "values": "values",
    "optimize": "optimize", "model_sha256": "model (by content, sha256)", "cases_sha256": "cases (sha256)",
}
_HASH_KEYS = ("model_sha256", "cases_sha256")


class ReportWriter:
    """Writes a report directory as results arrive; resumes one a run left unfinished.

    The directory is locked for the writer's life (until :meth:`close`): another writer of the
    same directory, in this process or another, is refused with the holder's pid, host,
    command and start time.

    Args:
        directory: the report directory (created if missing).
        meta: ``environment``, ``provider``, ``command``... and ``selection``: the settings
            that decide which cases run and how (provider, ops, dtypes, ranks, shard, ...);
            the writer adds ``cases_sha256`` (of ``planned``). A report is resumed only with an
            equal selection.
        planned: the ids of the cases this run will run, in order.
        resume: continue the report already in ``directory``; without it a report already
            there is replaced, if it has the same selection (or with ``force``).
        force: replace a report of another selection.
        strict: known issues and unsupported cases count as failures in report.json, JUnit
            and HTML.
        interval_s: the summaries are rewritten at most this often while results arrive.

    Raises:
        ReportError: the directory is a file, is in use by another run, holds a report of
            another selection (resuming, or without ``force``), or a damaged one.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        meta: Mapping[str, Any],
        planned: Sequence[str],
        resume: bool = False,
        force: bool = False,
        strict: bool = False,
        interval_s: float = 30.0,
    ) -> None:
        self.directory = Path(directory)
        self.strict = strict
        self.interval_s = interval_s
        self._results: list[CaseResult] = []
        self._ids: list[str] = []  # the case id of each result
        self._lines: list[str] = []  # the JSON of each result, as results.jsonl holds it
        self._last_write = time.monotonic()
        self._last_fsync = time.monotonic()
        if self.directory.exists() and not self.directory.is_dir():
            raise ReportError(f"report directory {str(self.directory)!r} is a file")
        new_meta = dict(meta)
        new_meta["selection"] = {**dict(meta.get("selection") or {}), "cases_sha256": cases_sha256(planned)}
        new_meta["planned"] = list(planned)
        new_meta.setdefault("started", now_iso())
        new_meta.setdefault("strict", strict)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = DirectoryLock(self.directory, command=str(new_meta.get("command", "")),
                                   started=str(new_meta["started"]))
        try:
            self._open(new_meta, resume=resume, force=force)
        except BaseException:
            self._lock.release()
            raise

    def _open(self, new_meta: dict[str, Any], *, resume: bool, force: bool) -> None:
        meta_path = self.directory / META_FILE
        results_path = self.directory / RESULTS_FILE
        self.resumed = False
        if resume and results_path.is_file():
            if not meta_path.is_file():
                raise ReportError(f"cannot resume {self.directory}: it has {RESULTS_FILE} but no {META_FILE}")
            old = read_json(meta_path)
            differences = _selection_differences(old.get("selection", {}), new_meta["selection"])
            if differences:
                raise ReportError(
                    f"cannot resume {self.directory}: it was made with {differences}; run with the same "
                    "selection, or drop --resume to start a new report")
            self._results = read_results(results_path, repair=True)
            self._ids = [r.case.id for r in self._results]
            self._lines = [result_json(r, cid) for r, cid in zip(self._results, self._ids, strict=True)]
            new_meta["started"] = old.get("started", new_meta["started"])
            new_meta["resumed"] = [*old.get("resumed", []), now_iso()]
            self.resumed = True
        else:
            old_selection = _used_selection(self.directory)
            if old_selection is not None and not force:
                differences = _selection_differences(old_selection, new_meta["selection"])
                if differences:
                    raise ReportError(
                        f"report directory {str(self.directory)!r} holds a report of another selection, "
                        f"made with {differences}; use another directory, --resume with the same selection, "
                        "or --force to replace it")
            results_path.write_bytes(b"")
            for name in (JSON_FILE, JUNIT_FILE, HTML_FILE):
                (self.directory / name).unlink(missing_ok=True)
        self.meta = new_meta
        atomic_write_text(meta_path, _meta_text(self.meta))
        self._file = open(results_path, "ab", buffering=0)  # noqa: SIM115 - closed in close()
        self.write_summaries()

    @property
    def done_ids(self) -> frozenset[str]:
        """Ids of the cases that already have a result (from the resumed report or this run)."""
        return frozenset(self._ids)

    @property
    def results(self) -> tuple[CaseResult, ...]:
        return tuple(self._results)

    def update_meta(self, **values: Any) -> None:
        """Change meta fields (e.g. the device once the first result names it)."""
        self.meta.update(values)
        atomic_write_text(self.directory / META_FILE, _meta_text(self.meta))

    def add(self, result: CaseResult) -> None:
        """Append one result to results.jsonl and flush it to the operating system at once (a
        crash of the process or a GPU reset loses nothing already run); fsync it to the disk at
        most every FSYNC_INTERVAL_S (an OS crash loses at most that much), and rewrite the
        summaries when ``interval_s`` has passed since the last time."""
        case_id = result.case.id
        line = result_json(result, case_id)
        self._append((line + "\n").encode("utf-8"))
        self._results.append(result)
        self._ids.append(case_id)
        self._lines.append(line)
        now = time.monotonic()
        if now - self._last_fsync >= FSYNC_INTERVAL_S:
            self._sync()
        if now - self._last_write >= self.interval_s:
            self.write_summaries()

    def _append(self, data: bytes) -> None:
        """Write ``data`` to results.jsonl, unbuffered: it is with the operating system when
        this returns."""
        written = self._file.write(data)
        while written < len(data):  # a short write (a signal, a full disk): the rest, or the error
            more = self._file.write(data[written:])
            if not more:
                raise ReportError(f"{self.directory / RESULTS_FILE}: the operating system took no more "
                                  f"of a result's line ({written} of {len(data)} bytes written)")
            written += more

    def report(self) -> Report:
        return Report(dict(self.meta), tuple(self._results[i] for i in self._ordered()))

    def _ordered(self) -> list[int]:
        """Where the report's results are in ``_results``: one per case, in planned order."""
        return ordered_positions(self._ids, self.meta.get("planned"))

    def write_summaries(self, *, finished: bool = False) -> Report:
        """Rewrite report.json, junit.xml and report.html from what has arrived so far.

        With ``finished`` the meta gets its ``finished`` time (unless it has one) and
        results.jsonl is rewritten, atomically, in planned order: one line per case.
        """
        positions = self._ordered()
        meta: list[tuple[Path, str]] = []
        if finished:
            self.meta.setdefault("finished", now_iso())
            meta.append((self.directory / META_FILE, _meta_text(self.meta)))  # written with the summaries
            # a new report's results.jsonl holds self._lines; in planned order, it is as it must be
            if self.resumed or positions != list(range(len(self._results))):
                self._rewrite_results(positions)
                positions = list(range(len(self._results)))
        report = Report(dict(self.meta), tuple(self._results[i] for i in positions))
        lines = [self._lines[i] for i in positions]
        _write_files(report, self.directory, strict=self.strict, lines=lines, also=meta)
        self._last_write = time.monotonic()
        return report

    def _rewrite_results(self, positions: Sequence[int]) -> None:
        """Keep only the results at ``positions``, in that order, in results.jsonl too."""
        self._results = [self._results[i] for i in positions]
        self._ids = [self._ids[i] for i in positions]
        self._lines = [self._lines[i] for i in positions]
        path = self.directory / RESULTS_FILE
        reopen = not self._file.closed
        if reopen:
            self._file.flush()
            self._file.close()
        atomic_write_text(path, _lines_pieces(self._lines))
        if reopen:
            self._file = open(path, "ab", buffering=0)  # noqa: SIM115 - closed in close()
            self._last_fsync = time.monotonic()

    def _sync(self) -> None:
        os.fsync(self._file.fileno())
        self._last_fsync = time.monotonic()

    def close(self) -> None:
        """Flush and sync results.jsonl and let the directory go."""
        try:
            if not self._file.closed:
                self._file.flush()
                self._sync()
                self._file.close()
        finally:
            self._lock.release()

    def __enter__(self) -> ReportWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _used_selection(directory: Path) -> dict[str, Any] | None:
    """The selection of the report already in ``directory`` ({} for a report that names none);
    None when the directory holds no report."""
    for name in (META_FILE, JSON_FILE):
        path = directory / name
        if path.is_file():
            try:
                selection = read_json(path).get("selection")
            except ReportError:
                return {}
            return dict(selection) if isinstance(selection, Mapping) else {}
    results = directory / RESULTS_FILE
    if results.is_file() and results.stat().st_size > 0:
        return {}
    return None


def _value_text(key: str, value: Any) -> str:
    if key in _HASH_KEYS and isinstance(value, str) and value:
        return value[:12]
    return repr(value)


def _selection_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The keys of two selections that differ, as one phrase ("" when they are equal)."""
    differences = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            label = _SELECTION_LABELS.get(key, key)
            differences.append(f"{label} {_value_text(key, old.get(key))} "
                               f"(this run: {_value_text(key, new.get(key))})")
    return ", ".join(differences)
