"""Writing a report directory: results as they arrive, the summaries (JSON, JUnit XML, HTML)
written when the run starts, rewritten atomically at most every ``interval_s`` while it goes
and when it ends, and resuming a run that stopped.

What the summaries hold of each result (its JUnit testcase, its row of the HTML list of all
cases, its count in the HTML matrix) is made a few dozen results at a time as they arrive,
while a run's workers are busy, and the results are kept in the report's order as they come:
writing the summaries, above all at the end of a run, then joins text and writes it.

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
import itertools
import json
import math
import numbers
import operator
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any, cast

import orjson

from ort_layouts._errors import ArgumentError, ReportError, a_type
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status, field_defaults
from ort_layouts.engine.session import selection_differences
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import (
    MAX_PICTURES,
    MatrixGroup,
    MatrixTally,
    all_cases_row_texts,
    failure_section_text,
    report_html_pieces,
)
from ort_layouts.reports.junit import junit_pieces, testcase_texts
from ort_layouts.reports.lock import DirectoryLock, made_directory
from ort_layouts.reports.report import (
    FSYNC_INTERVAL_S,
    HTML_FILE,
    JSON_FILE,
    JUNIT_FILE,
    META_FILE,
    RAN_ON_KEYS,
    REPLACE_WHILE_OPEN,
    REPORT_FILES,
    RESULTS_FILE,
    SHARDS_FILE,
    SUMMARY_FILES,
    Coverage,
    Report,
    Totals,
    atomic_write_text,
    atomic_write_texts,
    checked_bool,
    checked_meta,
    checked_strict,
    close_later,
    foreign_kind,
    foreign_result,
    is_failure,
    now_iso,
    planned_slots,
    read_json,
    read_meta,
    read_numbered_results,
    report_header,
    result_dict,
    signals_held,
)

__all__ = ["ResultEncoder", "ReportWriter", "cases_sha256", "result_json", "result_line", "write_report"]

# results whose testcases and rows a writer makes at a time, as they arrive
_MAKE_BATCH = 64


def write_report(
    report: Report, directory: str | os.PathLike[str], *, strict: bool | None = None
) -> dict[str, Path]:
    """Write ``report.json``, ``junit.xml`` and ``report.html`` into ``directory``, atomically.

    The directory is locked while they are written, with the
    :class:`~ort_layouts.reports.lock.DirectoryLock` a :class:`ReportWriter` holds for its life:
    a directory a run (or another write) is writing is refused, never written over.

    Args:
        strict: known issues and unsupported cases fail the run in all three; None: as the
            report's meta says (``strict``).

    Returns:
        The paths written, keyed "json", "junit", "html".

    Raises:
        ArgumentError: ``report`` is not a :class:`Report`, its meta holds a value JSON cannot
            hold (a numpy integer, a Path; the message names its place), ``strict`` is neither
            a bool nor None, or ``directory`` is no str or os.PathLike: nothing is written.
        ReportError: ``directory`` is empty (it would name the current directory), is a file,
            or is in use by another run (the message names its pid, host, command and start).
    """
    if not isinstance(report, Report):
        raise ArgumentError(f"report {report!r:.60} is {a_type(report)}, not a Report; valid: a Report "
                            "(e.g. load_report(path) or ReportWriter.report())")
    checked_strict(strict, none=True)
    found = _json_refusal(report.meta, [k for k in report.meta if k != "planned"], "report.meta")
    if found:  # (report.json holds no planned ids; a report made elsewhere renders whatever its fields)
        raise ArgumentError(found)
    out = _check_directory(directory)
    lines = [result_json(r) for r in report.results]
    with made_directory(out):  # a write that fails (a full disk) into a directory it made leaves none
        lock = DirectoryLock(out, command="write_report", started=now_iso())
        try:
            return _write_files(report, out, strict=strict, lines=lines)
        finally:
            lock.release()


# what a meta's fields may hold, as meta.json and report.json hold them and load_report reads them
_VALID_JSON = ("valid: a JSON value: a str, int, float, bool or None, or a list or dict of them (e.g. int(v) "
               "for a numpy integer, str(p) for a path)")
_VALID_META_TYPES = ("valid: as load_report reads a report's meta: 'environment', 'selection' and 'stack' "
                     "dicts, 'environment.versions' a dict, 'planned' and 'resumed' lists of str, "
                     "'strict' a bool (or these fields absent or None)")


def _check_meta(meta: Mapping[str, Any], keys: Iterable[str], *, source: str = "meta") -> None:
    """Refuse a meta that a report cannot be written of (before anything is written): a field
    of ``keys`` that JSON cannot hold (a numpy integer, a Path, a dict that holds itself),
    named by its place (``meta['selection']['device_id']``), or a field of another type than
    a report's reader takes (:func:`~ort_layouts.reports.report.checked_meta`: ``strict`` a
    bool...), which the report it wrote would be refused for as damaged.

    Raises:
        ArgumentError: naming the field, its value and what is valid.
    """
    checked_meta(meta, source, error=ArgumentError, damaged=_VALID_META_TYPES)
    found = _json_refusal(meta, keys, source)
    if found:
        raise ArgumentError(found)


def _json_refusal(meta: Mapping[str, Any], keys: Iterable[str], source: str) -> str | None:
    """Why the fields ``keys`` of ``meta`` cannot be written as JSON, naming the place of the
    first value that cannot be; None when they can."""
    keys = list(keys)
    try:
        json.dumps({key: meta[key] for key in keys})
        return None
    except (TypeError, ValueError):
        too_deep = False
    except RecursionError:
        too_deep = True
    for key in keys:
        found = _not_json_at(meta[key], f"{source}[{key!r}]", set(), too_deep)
        if found:
            return found
    return f"{source} cannot be written as JSON; {_VALID_JSON}"


def _not_json_at(value: object, place: str, inside: set[int], too_deep: bool) -> str | None:
    """Why ``value`` (at ``place``) cannot be written as JSON, naming the place of the first
    value that cannot be; None when it can, or where it is not found within 64 levels.
    ``inside``: the ids of the lists and dicts it is in (one that holds itself cannot be
    written); ``too_deep``: JSON's encoder gave up for the depth, so 64 levels are the place."""
    if value is None or isinstance(value, (str, int, float)):  # bool is an int; subclasses are written too
        return None
    if not isinstance(value, (dict, list, tuple)):
        return f"{place} {value!r:.60} is {a_type(value)}, which JSON cannot hold; {_VALID_JSON}"
    if id(value) in inside:
        return f"{place} holds itself (a circular reference), which JSON cannot hold; {_VALID_JSON}"
    if len(inside) >= 64:
        return f"{place} is nested too deeply to write as JSON; {_VALID_JSON}" if too_deep else None
    inside = {*inside, id(value)}
    if isinstance(value, dict):
        for key, item in value.items():
            if not (key is None or isinstance(key, (str, int, float))):
                return (f"{place} has the key {key!r:.60}, {a_type(key)}, which JSON cannot hold; valid: "
                        "str keys (or int, float, bool, None)")
            found = _not_json_at(item, f"{place}[{key!r}]", inside, too_deep)
            if found:
                return found
        return None
    for k, item in enumerate(value):
        found = _not_json_at(item, f"{place}[{k}]", inside, too_deep)
        if found:
            return found
    return None


def _check_directory(directory: object) -> Path:
    """``directory`` as a Path, refused before anything is written to it.

    Raises:
        ArgumentError: it is not a str or os.PathLike of a str.
        ReportError: it is empty (``Path("")`` is the current directory), or names a file.
    """
    text = os.fspath(directory) if isinstance(directory, (str, os.PathLike)) else None
    if not isinstance(text, str):
        raise ArgumentError(f"report directory {directory!r:.60} is {a_type(directory)}; valid: a str or "
                            "os.PathLike naming a directory, e.g. 'reports/r1'")
    if not text:
        raise ReportError("report directory '' is empty; valid: the path of a directory, e.g. 'reports/r1' "
                          "('.' for the current one)")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise ReportError(f"report directory {text!r} is a file; valid: a directory, or a path where none "
                          "is yet")
    return path


def _write_files(
    report: Report, directory: str | os.PathLike[str], *, strict: bool | None, lines: Sequence[str],
    also: Sequence[tuple[Path, str | Iterable[str]]] = (), testcases: Sequence[str] | None = None,
    rows: Sequence[str] | None = None, matrix: Callable[[], str] | None = None,
    coverage: Coverage | None = None, sections: Callable[[CaseResult], str | None] | None = None,
) -> dict[str, Path]:
    """:func:`write_report`, with the results' JSON (``lines``, one per result, as
    :func:`result_json` makes them) already made; ``also``: other
    files (path, text) to write first, with them; ``testcases`` and ``rows``: the results' JUnit
    testcases and their rows of the HTML list of all cases, already made
    (:func:`~ort_layouts.reports.junit.junit_pieces` and
    :func:`~ort_layouts.reports.html.report_html_pieces` say how), or None to make them here;
    ``matrix``: what makes the HTML matrix, or None to make it here; ``coverage``:
    :meth:`Report.coverage`, when the caller knows it; ``sections``: a failing result's drawn
    HTML section, when made before. The summaries are made as they are written (the first
    files are being written meanwhile), the report's totals once for all three."""
    if strict is None:
        strict = report.strict
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / JSON_FILE, "junit": out / JUNIT_FILE, "html": out / HTML_FILE}
    found: list[Totals] = []

    def known() -> Totals:
        if not found:
            found.append(Totals.of(report, coverage=coverage))
        return found[0]

    def json_pieces() -> Iterator[str]:
        yield from _report_json_pieces(report, lines, strict=strict, totals=known())

    def junit() -> Iterator[str]:
        yield from junit_pieces(report, strict=strict, testcases=testcases, totals=known())

    def html() -> Iterator[str]:
        made = None if matrix is None else matrix()
        yield from report_html_pieces(report, strict=strict, rows=rows, matrix=made, totals=known(),
                                      sections=sections)

    atomic_write_texts([*also, (paths["json"], json_pieces()), (paths["junit"], junit()),
                        (paths["html"], html())])
    return paths


# lines per piece of the summaries' text: some hundred kilobytes
_PIECE_LINES = 128


def _report_json_pieces(
    report: Report, lines: Sequence[str], *, strict: bool, totals: Totals
) -> Iterator[str]:
    """The text of ``report.json`` in pieces, one for each few hundred results:
    :meth:`Report.to_dict` as JSON, its fields one a line (indented by one space) and then its
    results, one a line, as ``lines`` holds them."""
    head = json.dumps(report_header(report, strict=strict, totals=totals), indent=1)  # "{\n ...\n}"
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


def _meta_text(meta: Mapping[str, Any], planned_json: str | None = None) -> str:
    """The text of ``meta.json``: ``json.dumps(meta, indent=1)`` and a newline, made with
    Python's C encoder for the planned case ids (thousands of them; ``indent`` takes the
    encoder written in Python); ``planned_json``: :func:`_planned_json` of them, made before."""
    planned = meta.get("planned")
    ids = planned_json if planned_json is not None else _planned_json(planned)
    if ids is None:
        return json.dumps(meta, indent=1) + "\n"
    marker = "\x00planned\x00"
    text = json.dumps({**meta, "planned": marker}, indent=1)
    encoded_marker = json.dumps(marker)
    if text.count(encoded_marker) != 1:
        return json.dumps(meta, indent=1) + "\n"
    return text.replace(encoded_marker, ids) + "\n"


def _planned_json(planned: object) -> str | None:
    """The planned case ids as ``json.dumps(meta, indent=1)`` writes them in meta.json; None
    where :func:`_meta_text` leaves them to ``json.dumps`` (not a list of str, or empty)."""
    if not (isinstance(planned, list) and planned and set(map(type, planned)) == {str}):
        return None
    return "[\n  " + ",\n  ".join(map(encode_basestring_ascii, planned)) + "\n ]"


def cases_sha256(case_ids: Sequence[str]) -> str:
    """The SHA-256 of a selection's case ids, in order (one per line), in hex."""
    ids = list(case_ids)
    text = "\n".join(ids) + "\n" if ids else ""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
# result_json's quick line: the fields it writes, and every other field, which must be at its
# default for it (derived from CaseResult, so that a new field is never left out of the line)
_QUICK_WRITTEN = ("case", "status", "provider", "device", "node_provider", "element_count", "descriptors",
                  "seconds")
_QUICK_AT_DEFAULT = tuple(n for n in _RESULT_NAMES if n not in _QUICK_WRITTEN)
_quick_values = operator.attrgetter(*_QUICK_AT_DEFAULT)
_QUICK_DEFAULTS = tuple(dict(zip(_RESULT_NAMES, _RESULT_DEFAULTS, strict=True))[n] for n in _QUICK_AT_DEFAULT)
if not set(_QUICK_WRITTEN) <= set(_RESULT_NAMES) or _REQUIRED in _QUICK_DEFAULTS:
    raise ImportError("result_json's quick line does not match CaseResult's fields")


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


_orjson_dumps = orjson.dumps


def _piece_json(data: dict[str, Any]) -> str:
    """The compact JSON of one of a quick line's dicts (the case's, the descriptors'), by orjson:
    several times faster than json. A number keeps its value, though a float may be written in
    another form (``1e-06`` as ``1e-6``): the descriptors the library makes hold none.

    Raises:
        TypeError: (orjson's JSONEncodeError is one) a value orjson does not hold: an int past
            64 bits, a lone surrogate, a set.
        ValueError: (UnicodeDecodeError) JSON that is not ASCII, which json would escape.
    The caller then writes the line the long way, as ``json.dumps`` does: a line stays ASCII.
    """
    return _orjson_dumps(data).decode("ascii")


def result_json(result: CaseResult, case_id: str | None = None) -> str:
    """A result as one line of ``results.jsonl`` holds it (without the newline): the JSON of
    :func:`~ort_layouts.reports.report.result_dict` (``CaseResult.to_dict(defaults=False)``:
    the fields equal to their defaults left out), compact.

    The same JSON as that dict gives, made without ``to_dict``'s copies of every field (its
    case's ``Case.to_dict`` copies each value through ``dataclasses.asdict``): the fields as
    they are, the data type and status by name, the case's ``id`` (``case_id`` when the caller
    has it). A pass's case and descriptors are encoded by orjson (:func:`_piece_json`).
    """
    r = result
    case = r.case
    if type(r) is not CaseResult or type(case) is not Case:
        return _ENCODER.encode(result_dict(r))
    if case_id is None:
        case_id = case.id
    try:
        if (_quick_values(r) == _QUICK_DEFAULTS and type(r.element_count) is int
                and r.element_count != 0 and type(r.seconds) is float
                and r.seconds != 0.0 and type(r.descriptors) is dict and r.descriptors
                and type(case_id) is str):
            # most results (a pass): their fields but the case, descriptors, seconds and id in one
            # piece of text for each status, provider, device and node provider
            head = _HEADS.get((r.status, r.provider, r.device, r.node_provider))
            if head is None:
                head = _head(r)
            if head:
                return "".join((
                    '{"case":', _piece_json(_case_dict(case)), head, str(r.element_count),
                    ',"descriptors":', _piece_json(r.descriptors), ',"seconds":', repr(r.seconds),
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


# (line, testcase, row, strict, failing case's section or ""): what ResultEncoder makes
Encoded = tuple[str, str, str, bool, str]


class ResultEncoder:
    """What a :class:`ReportWriter` makes of each result (:meth:`ReportWriter.add_encoded_all`),
    made where the result is: its line of ``results.jsonl`` (:func:`result_json`), its JUnit
    testcase and its row of the HTML list of all cases, the ``strict`` they were made for, and
    for a failing case its drawn section of the HTML page ("" for another). ``encoder(results)``
    makes it of each of several results at once (a worker's unit).

    Only the first ``MAX_PICTURES`` failing results an encoder sees get their section drawn
    (about a millisecond each): the page draws no more than that many, and draws any of them it
    was not given. Picklable, so that a run's worker processes make them beside the results (the
    runner's ``encode``, loaded again for each unit): the copies of an encoder loaded in one
    process are one encoder (the encoder itself, in the process that made it), which counts
    the sections it draws for all of them. A worker draws at most ``MAX_PICTURES`` sections
    over all its units, not that many for each unit, however many cases fail."""

    __slots__ = ("_sections_left", "_token", "strict")

    def __init__(self, strict: bool = False) -> None:
        """Raises: ArgumentError: ``strict`` is not a bool (named, with the valid values)."""
        checked_strict(strict)
        self.strict = strict
        self._sections_left = MAX_PICTURES
        self._token = ""  # the name its copies are loaded by (made when first pickled)

    def __reduce__(self) -> tuple[Callable[[bool, str], ResultEncoder], tuple[bool, str]]:
        if not self._token:
            self._token = secrets.token_hex(8)
            _keep_encoder(self._token, self)
        return _loaded_encoder, (self.strict, self._token)

    def __repr__(self) -> str:
        return f"ResultEncoder(strict={self.strict})"

    def __call__(self, results: Sequence[CaseResult]) -> list[Encoded]:
        """What this encoder makes of each result, in order."""
        strict = self.strict
        ids = [result.case.id for result in results]
        testcases = testcase_texts(results, strict=strict, ids=ids)
        rows = all_cases_row_texts(results, ids)
        made = []
        passed = Status.PASS
        for result, case_id, testcase, row in zip(results, ids, testcases, rows, strict=True):
            section = ""
            if self._sections_left > 0 and result.status is not passed and is_failure(result, strict=strict):
                self._sections_left -= 1
                section = failure_section_text(result)
            made.append((result_json(result, case_id), testcase, row, strict, section))
        return made


# the encoders of this process by the name their copies are loaded by (ResultEncoder's pickle):
# one for each run at a time in a worker; the oldest go past a few
_ENCODERS: dict[str, ResultEncoder] = {}
_ENCODERS_KEPT = 8


def _keep_encoder(token: str, encoder: ResultEncoder) -> None:
    while len(_ENCODERS) >= _ENCODERS_KEPT:
        del _ENCODERS[next(iter(_ENCODERS))]
    _ENCODERS[token] = encoder


def _loaded_encoder(strict: bool, token: str) -> ResultEncoder:
    """The encoder a pickled :class:`ResultEncoder` names in this process: the one loaded
    before (or the encoder itself, where it was made), else a new one, with its count."""
    encoder = _ENCODERS.get(token)
    if encoder is None or encoder.strict != strict:
        encoder = ResultEncoder(strict)
        encoder._token = token
        _keep_encoder(token, encoder)
    return encoder


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

    A run ends with ``write_summaries(finished=True)`` and :meth:`close`, as ``validate`` ends
    one; a ``with`` block does both as it ends (``with ReportWriter(...) as w: w.add(...)``
    leaves the reports ``validate`` leaves; a block that raises leaves the summaries of what
    arrived, unfinished). A closed writer writes nothing more: the directory may be another's.

    Args:
        directory: the report directory (created if missing).
        meta: ``environment``, ``provider``, ``command``... and ``selection``: the settings
            that decide which cases run and how (provider, ops, dtypes, ranks, shard, ...);
            the writer adds ``cases_sha256`` (of ``planned``). A report is resumed only with an
            equal selection.
        planned: the ids of the cases this run will run, in order.
        resume: continue the report already in ``directory``; without it a report already
            there is replaced, if it has the same selection (or with ``force``): its
            summaries go, and so does ``shards.json`` (a merged report's listing of its
            shards); the ``shard-K-of-N`` directories, reports of their own, stay.
        force: replace a report of another selection.
        strict: known issues and unsupported cases count as failures in report.json, JUnit
            and HTML (a bool).
        interval_s: the summaries are rewritten at most this often while results arrive, in
            seconds (0: after every result; ``float("inf")``: only when the run starts and ends).

    Raises:
        ArgumentError: the directory is no str or os.PathLike, ``meta`` (or its selection) is
            not a mapping, ``meta`` holds a value JSON cannot hold (a numpy integer, a Path; the
            message names its place) or a field of another type than a report's reader takes
            (``environment`` not a dict, ``strict`` not a bool...), ``planned`` is not a
            sequence of str (one str is refused), ``strict`` is not a bool, or ``interval_s``
            is not a number >= 0: refused before anything in the directory changes.
        ReportError: the directory is empty or a file, is in use by another run, holds a report of
            another selection (resuming, or without ``force``), or a damaged one; resuming, its
            results.jsonl holds a result of a case that is not planned.
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
        self.directory = _check_directory(directory)
        if not isinstance(meta, Mapping):
            raise ArgumentError(f"meta {meta!r:.60} is {a_type(meta)}, not a mapping; valid: a dict of the "
                                "run's fields, e.g. {'provider': 'CPUExecutionProvider', 'selection': {...}}")
        if not isinstance(meta.get("selection") or {}, Mapping):
            raise ArgumentError(f"meta's selection {meta['selection']!r:.60} is {a_type(meta['selection'])}, "
                                "not a mapping; valid: a dict of the selection's fields (or none)")
        if (isinstance(planned, (str, bytes)) or not isinstance(planned, Sequence)
                or not all(map(isinstance, planned, itertools.repeat(str)))):
            raise ArgumentError(f"planned {planned!r:.60} is not a sequence of case ids; valid: a list of "
                                "str, e.g. [case.id for case in cases]")
        if (not isinstance(interval_s, (int, float, numbers.Real)) or isinstance(interval_s, bool)
                or math.isnan(interval_s) or interval_s < 0):
            raise ArgumentError(f"interval_s {interval_s!r} is not a number of seconds >= 0; valid: e.g. "
                                "30.0 (0: after every result; inf: only when the run starts and ends)")
        checked_strict(strict)
        checked_bool(resume, "resume")
        checked_bool(force, "force")
        self.strict = strict
        self.interval_s = interval_s
        self._results: list[CaseResult] = []  # as they arrived
        self._ids: list[str] = []  # the case id of each result
        self._lines: list[str] = []  # the JSON of each result, as results.jsonl holds it
        # each result's JUnit testcase and HTML row when they came with it (add_encoded_all), else None
        self._pieces: list[tuple[str, str, bool] | None] = []
        # the drawn HTML section of the last failing result of a case id that came with one
        # (for MAX_PICTURES case ids at most)
        self._sections: dict[str, tuple[CaseResult, str]] = {}
        # The results before _made are in _order, the report's order, with what the summaries
        # hold of each, made a few dozen results at a time as they arrive (while a run's workers
        # are busy): writing the summaries then joins text.
        self._made = 0
        self._make_at_add = True  # False once making failed: the summaries make them, failing as before
        self._order = _Order(None, strict=strict)
        self._planned_for_json: object = None  # the planned ids (a copy) of _planned_json
        self._planned_json: str | None = None
        # the meta's planned ids (add refuses a result of another case)
        self._own_ids: frozenset[str] = frozenset()
        self._last_write = time.monotonic()
        self._last_fsync = time.monotonic()
        self._closed = False
        # the summaries are written finished, with every result and meta field there is
        self._finished_written = False
        # results.jsonl is appended to, synced, replaced and closed under this lock; a thread
        # of the writer's syncs an append that waits FSYNC_INTERVAL_S for a later one
        self._file_lock = threading.Condition(threading.Lock())
        self._unsynced = False  # results.jsonl holds an append not yet synced
        self._appended = 0  # bytes of the last append written (of one that failed partway: those written)
        self._syncer: threading.Thread | None = None
        self._sync_error: OSError | None = None  # what a sync of the syncing thread raised
        _check_report_files(self.directory)  # before any work
        new_meta = dict(meta)
        new_meta["selection"] = _planned_selection(meta.get("selection") or {}, planned)
        new_meta["planned"] = list(planned)
        new_meta.setdefault("started", now_iso())
        new_meta.setdefault("strict", strict)
        # meta.json can be written of it, and read back (the planned ids are checked above)
        _check_meta(new_meta, [key for key in new_meta if key != "planned"])
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = DirectoryLock(self.directory, command=str(new_meta.get("command", "")),
                                   started=str(new_meta["started"]))
        try:
            self._open(new_meta, resume=resume, force=force)
        except BaseException:
            file = getattr(self, "_file", None)
            if file is not None:
                file.close()
            self._lock.release()
            raise

    def _open(self, new_meta: dict[str, Any], *, resume: bool, force: bool) -> None:
        meta_path = self.directory / META_FILE
        results_path = self.directory / RESULTS_FILE
        self.resumed = False
        old = _refuse_existing(self.directory, new_meta["selection"], new_meta["planned"], resume=resume,
                               force=force)
        if old is not None:
            broken = _broken_stack(new_meta)
            if broken:
                raise ReportError(
                    f"cannot resume {self.directory}: this run's DirectML stack is broken ({broken}), so "
                    "whether it is the stack the report ran on cannot be told; the report is kept as it "
                    "is: fix the stack and resume again")
            elsewhere = _stack_differences(old, new_meta)
            if elsewhere:
                raise ReportError(
                    f"cannot resume {self.directory}: it ran on {elsewhere}; its results and this run's "
                    "would be mixed in one report: resume it where it ran, or give this run another "
                    "directory (without --resume this one's report is replaced)")
            numbered = read_numbered_results(results_path, repair=True)
            foreign = foreign_result(numbered, new_meta["planned"], new_meta.get("provider"))
            if foreign is not None:  # counted, it would mix another selection's or provider's result in
                number, result, kind = foreign
                held = (f"case {result.case.id!r}, which is not in this report's selection" if kind == "case"
                        else f"a result of {result.case.id!r} on {result.provider!r}, not this report's "
                             f"{new_meta['provider']!r}")
                raise ReportError(
                    f"cannot resume {self.directory}: {RESULTS_FILE} line {number} holds {held}; remove that "
                    "line to resume, or run without --resume to start the report over")
            self._results = [result for _, result in numbered]
            self._ids = [r.case.id for r in self._results]
            self._lines = [result_json(r, cid) for r, cid in zip(self._results, self._ids, strict=True)]
            self._pieces = [None] * len(self._results)
            new_meta["started"] = old.get("started", new_meta["started"])
            if isinstance(old.get("command"), str):  # the command that started it (a resume adds --resume)
                new_meta["command"] = old["command"]
            new_meta["resumed"] = [*(old.get("resumed") or ()), now_iso()]
            self.resumed = True
        self.meta = new_meta
        self._own_ids = frozenset(new_meta["planned"])
        meta_text = self._meta_json()  # made before anything in the directory changes
        # a stop (Ctrl-C, SIGTERM) waits until the directory holds this report's start: never an
        # earlier run's finished meta.json beside an emptied results.jsonl and no summaries
        with signals_held():
            if not self.resumed:
                results_path.write_bytes(b"")
                # the old report's summaries, and the listing of the shards it was merged from
                for name in (*SUMMARY_FILES, SHARDS_FILE):
                    (self.directory / name).unlink(missing_ok=True)
            # meta.json in place on its own, before the summaries: summaries that fail to be written
            # leave this run's meta beside the emptied results.jsonl, never the earlier run's
            atomic_write_text(meta_path, meta_text)
            self._file = open(results_path, "ab", buffering=0)  # noqa: SIM115 - closed in close()
            self._write_summaries(finished=False)

    @property
    def done_ids(self) -> frozenset[str]:
        """Ids of the cases that already have a result (from the resumed report or this run)."""
        return frozenset(self._ids)

    @property
    def results(self) -> tuple[CaseResult, ...]:
        return tuple(self._results)

    def update_meta(self, **values: Any) -> None:
        """Change meta fields (e.g. the device once the first result names it) and rewrite
        meta.json with them. A change of the planned ids leaves the results of cases no longer
        planned in the report as unplanned ones (:meth:`report`), as :meth:`add` then refuses
        a result of such a case.

        Raises:
            ArgumentError: a value JSON cannot hold (a numpy integer, a Path; the message names
                its place), or a field of another type than a report's reader takes
                (``planned`` not a list of str, ``selection`` not a dict, ``strict`` not a
                bool...): the meta and meta.json are left as they were.
            ReportError: the writer is closed (nothing is written).
        """
        if self._closed:
            self._refuse_closed()
        meta = {**self.meta, **values}
        _check_meta(meta, [key for key in values if key != "planned"])
        if "planned" in values and not isinstance(values["planned"], list):  # None too: a writer plans
            planned = values["planned"]
            raise ArgumentError(f"meta: 'planned' is {type(planned).__name__} {planned!r:.60}, not a JSON "
                                "array; valid: a list of str, the ids of the cases the run plans")
        if "planned" in values:  # the writer's own copy: a caller's list may change after
            meta["planned"] = values["planned"] = list(values["planned"])
        atomic_write_text(self.directory / META_FILE, self._meta_json(meta))
        self.meta.update(values)
        if "planned" in values:
            self._own_ids = frozenset(self.meta["planned"])
        self._finished_written = False

    def _refuse_closed(self) -> None:
        raise ReportError(f"ReportWriter for {self.directory} is closed: it writes nothing more (the "
                          "directory is let go, and another writer may hold it now); valid: a writer "
                          "not yet closed (ReportWriter(..., resume=True) continues its report)")

    def _own(self) -> tuple[frozenset[str], object]:
        """What a result must be of to be added: one of the meta's planned case ids, and of its
        provider where it names one."""
        return self._own_ids, self.meta.get("provider")

    @staticmethod
    def _check_own(result: CaseResult, case_id: str, own: tuple[frozenset[str], object],
                   pair: int | None = None) -> None:
        """Refuse a result of a case the report does not plan, or of another provider (``own``:
        :meth:`_own`'s): what the report's resume refuses to count
        (:func:`~ort_layouts.reports.report.foreign_kind`). ``pair``: the result's place in
        :meth:`add_encoded_all`'s pairs, which the message names."""
        ids, provider = own
        kind = foreign_kind(result, ids, provider)
        if not kind:
            return
        where = "" if pair is None else f"pairs[{pair}]: "
        if kind == "case":
            raise ArgumentError(
                f"{where}result of case {case_id!r} is not one of this report's {len(ids)} planned cases; "
                "valid: a result of a planned case (ReportWriter's planned): a report holds its own "
                "selection's results, as its resume counts no other")
        raise ArgumentError(
            f"{where}result of {case_id!r} on {result.provider!r} is not of this report's provider "
            f"{provider!r} (its meta's); valid: a result on {provider!r}: a report holds one provider's "
            "results, as its resume counts no other's")

    def add(self, result: CaseResult) -> None:
        """Append one result to results.jsonl and flush it to the operating system at once (a
        crash of the process or a GPU reset loses nothing already run); fsync it to the disk
        within FSYNC_INTERVAL_S, at most that often, even when no result follows (an OS crash
        loses at most that much: the writer's thread syncs an append that waits), and rewrite
        the summaries when ``interval_s`` has passed since the last time.

        A result must be of a planned case (the meta's ``planned``), and on the meta's
        ``provider`` where it names one: a resume of the report counts no other
        (:func:`~ort_layouts.reports.report.foreign_result`), so none is written.

        Raises:
            ArgumentError: ``result`` is not a CaseResult, or is of a case not planned or of
                another provider (nothing is written).
            ReportError: the writer is closed (nothing is written).
        """
        if self._closed:
            self._refuse_closed()
        if not isinstance(result, CaseResult):
            raise ArgumentError(f"result {result!r:.60} is {a_type(result)}, not a CaseResult; valid: a "
                                "CaseResult, as a run's on_result gets it")
        case_id = result.case.id
        self._check_own(result, case_id, self._own())
        self._added([result], [case_id], [result_json(result, case_id)], [None])

    @property
    def encode_results(self) -> ResultEncoder:
        """What makes, of several results at once, what :meth:`add_encoded_all` takes for each
        (picklable: a parallel run's workers make it beside the results)."""
        return ResultEncoder(self.strict)

    def add_encoded_all(self, pairs: Iterable[tuple[CaseResult, Encoded]]) -> None:
        """:meth:`add` of each result of the (result, encoded) pairs, in turn, with ``encoded``,
        what :attr:`encode_results` made of it (its line of results.jsonl, its JUnit testcase
        and HTML row, already made); the lines are written to results.jsonl at once (results
        that arrive together: a worker's unit). ``pairs`` is read once (a generator too), and
        every pair is checked before anything is written: each ``encoded`` must be of its own
        result, its line that result's (it ends with the result's case id, as
        :func:`result_json` writes it, or is that result's line), so that results.jsonl holds
        the results in the order the writer counts them.

        Raises:
            ArgumentError: ``pairs`` is not an iterable of (result, encoded) pairs, a result is
                not a CaseResult or is of a case not planned or of another provider (as
                :meth:`add`), an ``encoded`` is not what :attr:`encode_results` makes, or its
                line is not its result's (nothing is written).
            ReportError: the writer is closed (nothing is written).
        """
        if self._closed:
            self._refuse_closed()
        if type(pairs) is not list:  # read once: a generator's pairs are checked, then written
            if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
                raise ArgumentError(f"pairs {pairs!r:.60} is {a_type(pairs)}, not an iterable of (result, "
                                    "encoded) pairs; valid: e.g. "
                                    "list(zip(results, writer.encode_results(results)))")
            pairs = list(pairs)
        own = self._own()
        writer_strict = self.strict
        results: list[CaseResult] = []
        ids: list[str] = []
        lines: list[str] = []
        pieces: list[tuple[str, str, bool] | None] = []
        drawn: list[tuple[str, CaseResult, str]] = []
        for k, pair in enumerate(pairs):
            try:
                result, encoded = pair
            except (TypeError, ValueError):
                raise ArgumentError(f"pairs[{k}] {pair!r:.60} is not a (result, encoded) pair; valid: e.g. "
                                    "list(zip(results, writer.encode_results(results)))") from None
            if (type(encoded) is not tuple or len(encoded) != 5 or type(encoded[3]) is not bool
                    or type(encoded[0]) is not str or type(encoded[1]) is not str
                    or type(encoded[2]) is not str or type(encoded[4]) is not str):
                raise ArgumentError(f"pairs[{k}]: encoded {type(encoded).__name__} is not what "
                                    "encode_results makes: (line, testcase, row, strict, section)")
            if not isinstance(result, CaseResult):
                raise ArgumentError(f"pairs[{k}]: result {result!r:.60} is {a_type(result)}, not a "
                                    "CaseResult; valid: a CaseResult, with what encode_results made of it")
            case_id = result.case.id
            line = encoded[0]
            # result_json's line ends with the case id (its last field); one that does not, made
            # otherwise (a result of a class with a to_dict of its own), is made again to compare
            if (not line.endswith(f',"id":{encode_basestring_ascii(case_id)}}}')
                    and line != result_json(result, case_id)):
                raise ArgumentError(
                    f"pairs[{k}]: the encoded line ...{line[-60:]!r} is not the line of its result, of case "
                    f"{case_id!r}; valid: each result with what encode_results made of that result, e.g. "
                    "list(zip(results, writer.encode_results(results)))")
            self._check_own(result, case_id, own, k)
            results.append(result)
            ids.append(case_id)
            lines.append(line)
            pieces.append((encoded[1], encoded[2], encoded[3]))
            if encoded[4] and encoded[3] == writer_strict:
                drawn.append((case_id, result, encoded[4]))
        sections = self._sections
        for case_id, result, section in drawn:
            # kept for as many cases as the page draws at most (about 25 KB each); the page
            # draws any of its first MAX_PICTURES failing cases it was not given
            if case_id in sections or len(sections) < MAX_PICTURES:
                sections[case_id] = (result, section)
        self._added(results, ids, lines, pieces)

    def _added(self, results: list[CaseResult], ids: list[str], lines: list[str],
               pieces: list[tuple[str, str, bool] | None]) -> None:
        if not results:
            return
        self._finished_written = False
        data = ("\n".join(lines) + "\n").encode("utf-8")
        with self._file_lock:
            try:
                self._append(data)
            except BaseException:
                # a write that stopped partway (a full disk): the lines it wrote whole are in
                # results.jsonl, where a resume reads them, and so in the count of what is kept
                whole = data[:self._appended].count(b"\n")
                if whole:
                    self._record(results[:whole], ids[:whole], lines[:whole], pieces[:whole])
                raise
            # recorded with the lines they wrote, before a sync that may raise: what results.jsonl
            # holds, the summaries count
            self._record(results, ids, lines, pieces)
            if time.monotonic() - self._last_fsync >= FSYNC_INTERVAL_S:
                self._sync()
            elif not self._unsynced:  # synced by the syncing thread, unless a later append is
                self._unsynced = True
                self._sync_later()
        if self._make_at_add and len(self._results) - self._made >= _MAKE_BATCH:
            try:
                self._make(thorough=False)
            except Exception:  # the summaries make them, and fail on them as they did
                self._make_at_add = False
        if time.monotonic() - self._last_write >= self.interval_s:
            self.write_summaries()

    def _record(self, results: list[CaseResult], ids: list[str], lines: list[str],
                pieces: list[tuple[str, str, bool] | None]) -> None:
        self._results += results
        self._ids += ids
        self._lines += lines
        self._pieces += pieces

    def _append(self, data: bytes) -> None:
        """Write ``data`` to results.jsonl, unbuffered: it is with the operating system when
        this returns. ``_appended`` counts the bytes written so far (of a write that fails
        partway, those that made it)."""
        self._appended = 0
        written = self._appended = self._file.write(data)
        while written < len(data):  # a short write (a signal, a full disk): the rest, or the error
            more = self._file.write(data[written:])
            if not more:
                raise ReportError(f"{self.directory / RESULTS_FILE}: the operating system took no more "
                                  f"of a result's line ({written} of {len(data)} bytes written)")
            written += more
            self._appended = written

    def _make(self, *, thorough: bool = True) -> None:
        """Put the results not yet there in the report's order, with what the summaries hold of
        them (raising what the summaries raise on them, before anything changes). The order is
        made again, of all results, when the planned ids are not those it was made for (by
        identity, and unless ``thorough`` only so) or the writer's strict changed."""
        planned = self.meta.get("planned")
        if not self._order.made_for(planned, strict=self.strict, thorough=thorough):
            self._order = _Order(planned, strict=self.strict)
            self._made = 0
        start, end = self._made, len(self._results)
        if start < end:
            self._order.add(self._results[start:end], self._ids[start:end], self._lines[start:end],
                            self._pieces[start:end])
            self._made = end

    def report(self) -> Report:
        """The results so far as a :class:`Report`: the last result of each case, in planned
        order, unplanned ones after in the order they last arrived (what the summaries hold;
        :meth:`add` takes only planned cases' results, so those are of cases whose planned ids
        :meth:`update_meta` changed since).
        A result the summaries cannot hold raises here what :meth:`write_summaries` raises."""
        self._make()
        return Report(dict(self.meta), tuple(self._order.view()[0]))

    def _meta_json(self, meta: Mapping[str, Any] | None = None) -> str:
        """The text of meta.json of ``meta`` (None: the writer's), the planned ids' JSON made once."""
        if meta is None:
            meta = self.meta
        planned = meta.get("planned")
        if planned != self._planned_for_json:
            self._planned_for_json = list(planned) if isinstance(planned, list) else planned
            self._planned_json = _planned_json(planned)
        return _meta_text(meta, self._planned_json)

    def write_summaries(self, *, finished: bool = False) -> Report:
        """Rewrite report.json, junit.xml and report.html from what has arrived so far.

        With ``finished`` the meta gets its ``finished`` time (unless it has one; and only when
        every planned case has a result: a stopped run's report is not finished) and
        results.jsonl is rewritten, atomically, in planned order: one line per case.

        Ctrl-C, SIGTERM and SIGHUP are held while they are written (in the main thread;
        :func:`~ort_layouts.reports.report.signals_held`): one that comes then is acted on once
        the files agree.

        Raises:
            ReportError: the writer is closed (nothing is written: the directory may be another
                writer's now).
        """
        if self._closed:
            self._refuse_closed()
        with signals_held():
            return self._write_summaries(finished=finished)

    def _write_summaries(self, *, finished: bool) -> Report:
        self._make()
        order = self._order
        results, ids, lines, testcases, rows = order.view()
        first: list[tuple[Path, str | Iterable[str]]] = []  # written before the summaries, with them
        replaced = None  # results.jsonl as it was, open for appending
        # a new report's results.jsonl holds self._lines; in planned order, it is as it must be
        reorder = finished and (self.resumed or self._results != results)
        # the order counts the planned cases with a result as they arrive (Report.coverage's count)
        coverage = (order.coverage if isinstance(self.meta.get("planned"), list)
                    else Report(self.meta, tuple(results)).coverage())
        if finished:
            if coverage.complete:
                self.meta.setdefault("finished", now_iso())
            if reorder:
                first.append((self.directory / RESULTS_FILE, _lines_pieces(lines)))
                if not self._file.closed:
                    replaced = self._file
                    if not REPLACE_WHILE_OPEN:
                        with self._file_lock:
                            replaced.close()
            first.append((self.directory / META_FILE, self._meta_json()))
        report = Report(dict(self.meta), tuple(results))
        matrix = order.matrix if order.tally is not None else None
        try:
            _write_files(report, self.directory, strict=self.strict, lines=lines, also=first,
                         testcases=testcases, rows=rows, matrix=matrix, coverage=coverage,
                         sections=self._section)
            if reorder:  # only once the file holds them so: a failed finish leaves it for the next
                self._results, self._ids, self._lines = list(results), list(ids), list(lines)
                self._pieces = [None] * len(self._results)
                self._made = len(self._results)
        finally:
            if replaced is not None:  # the new results.jsonl (synced as it was written), to append to
                with self._file_lock:
                    self._file = open(self.directory / RESULTS_FILE, "ab", buffering=0)  # noqa: SIM115
                    self._last_fsync = time.monotonic()
                    self._unsynced = False
                close_later(replaced)  # the last of the old file: its blocks are freed meanwhile
        self._last_write = time.monotonic()
        self._finished_written = finished
        return report

    def _section(self, result: CaseResult) -> str | None:
        """The drawn HTML section that came with this very result (:meth:`add_encoded_all`)."""
        made = self._sections.get(result.case.id)
        return made[1] if made is not None and made[0] is result else None

    def _sync(self) -> None:
        """Sync results.jsonl to the disk (the caller holds ``_file_lock``); raises what the
        syncing thread's last sync raised, if it failed."""
        failed, self._sync_error = self._sync_error, None
        if failed is not None:
            raise failed
        self._fsync()

    def _fsync(self) -> None:
        """fsync results.jsonl and note it synced (the caller holds ``_file_lock``)."""
        os.fsync(self._file.fileno())
        self._last_fsync = time.monotonic()
        self._unsynced = False

    def _sync_later(self) -> None:
        """Have the syncing thread sync the append just made once FSYNC_INTERVAL_S has passed
        since the last sync (the caller holds ``_file_lock``): started at the first append that
        waits, woken at the next."""
        if self._syncer is None:
            self._syncer = threading.Thread(target=self._sync_waiting, name="ort_layouts_results_sync",
                                            daemon=True)
            self._syncer.start()
        else:
            self._file_lock.notify()

    def _sync_waiting(self) -> None:
        """The syncing thread: whenever an append waits, sync results.jsonl once FSYNC_INTERVAL_S
        has passed since the last sync, unless a later append synced it first; until the
        writer closes. So an append reaches the disk within that time even when no result
        follows it (a run that hangs on a GPU, or waits out a timeout)."""
        lock = self._file_lock
        with lock:
            while not self._closed:
                if not self._unsynced:
                    lock.wait()
                    continue
                left = self._last_fsync + FSYNC_INTERVAL_S - time.monotonic()
                if left > 0:
                    lock.wait(left)
                    continue
                if self._file.closed:  # being replaced: synced as written
                    self._unsynced = False
                    continue
                try:
                    self._fsync()
                except OSError as e:  # raised by the writer's next sync; the thread goes on
                    self._sync_error = e
                    self._unsynced = False

    def close(self) -> None:
        """Flush and sync results.jsonl and let the directory go; the summaries stay as last
        written (:meth:`write_summaries`; a ``with`` block writes them as it ends). Closing a
        closed writer does nothing; a closed writer writes nothing more (:meth:`add`,
        :meth:`add_encoded_all`, :meth:`write_summaries` and :meth:`update_meta` are refused),
        and still gives what it holds (:meth:`report`, :attr:`results`)."""
        if self._closed:
            return
        with self._file_lock:
            self._closed = True
            self._file_lock.notify()
        if self._syncer is not None:
            self._syncer.join()
        try:
            with self._file_lock:
                if not self._file.closed:
                    try:
                        self._file.flush()
                        self._sync()
                    finally:  # a sync that failed still lets the file go
                        self._file.close()
        finally:
            self._lock.release()

    def __enter__(self) -> ReportWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: object) -> None:
        """Write the summaries of what arrived and close: finished (``write_summaries(finished=True)``)
        when the block ends normally, unfinished when it raises. Nothing is written when they
        are written already (a finish with nothing added since) or the writer is closed (a
        :class:`~ort_layouts.engine.session.ValidationSession` finishes and closes it); a
        failure to write them while the block raises is noted on the block's exception, which
        goes on."""
        try:
            if not self._closed and not self._finished_written:
                if exc is None:
                    self.write_summaries(finished=True)
                else:
                    try:
                        self.write_summaries()
                    except Exception as e:
                        exc.add_note(f"the summaries of {self.directory} could not be written: "
                                     f"{type(e).__name__}: {e}")
        finally:
            self.close()


class _Order:
    """A report's results in its order as they arrive, out of order: the last result of each
    case id, in planned order, unplanned ones after in the order they last arrived
    (:func:`~ort_layouts.reports.report.ordered_positions`), each with its line of
    results.jsonl, its JUnit testcase, its row of the HTML list of all cases and its group of
    the HTML matrix (counted in ``tally``; None: the matrix is made of the report)."""

    def __init__(self, planned: Any, *, strict: bool) -> None:
        """``planned``: the meta's planned ids (None: none)."""
        # what the order is made for: the planned ids (the meta's object, and a copy) and strict
        self.planned_ref = planned
        self.planned = list(planned) if isinstance(planned, list) else planned
        self.strict = strict
        self.slots = planned_slots(planned)
        self.ids = list(self.slots)
        n = len(self.ids)
        # the planned ids' slots, None until a result arrives
        self.results: list[CaseResult | None] = [None] * n
        self.lines: list[str | None] = [None] * n
        self.testcases: list[str | None] = [None] * n
        self.rows: list[str | None] = [None] * n
        self.groups: list[MatrixGroup | None] = [None] * n
        self.filled = 0
        # the last result of each unplanned case id, in the order they last arrived
        self.extra: dict[str, tuple[CaseResult, str, str, str, MatrixGroup | None]] = {}
        self.tally: MatrixTally | None = MatrixTally()

    def made_for(self, planned: object, *, strict: bool, thorough: bool) -> bool:
        """Whether the order is made for these planned ids (the same object, and unless
        ``thorough`` only so: equal to what it was) and this ``strict``."""
        return (planned is self.planned_ref and strict == self.strict
                and not (thorough and planned != self.planned))

    @property
    def coverage(self) -> Coverage:
        """:meth:`Report.coverage` of the report of the results so far (of the planned ids the
        order is made for)."""
        return Coverage(len(self.ids), self.filled, len(self.extra))

    def add(self, results: Sequence[CaseResult], ids: Sequence[str], lines: Sequence[str],
            pieces: Sequence[tuple[str, str, bool] | None]) -> None:
        """Put results (their case ids and lines) in their places, each replacing an earlier one
        of its case id. What the summaries hold of them is made first, unless ``pieces`` has
        it (a testcase and a row made for this ``strict``): what raises there raises here,
        before anything changes."""
        if any(p is None or p[2] != self.strict for p in pieces):
            testcases = testcase_texts(results, strict=self.strict, ids=ids)
            rows = all_cases_row_texts(results, ids)
        else:
            testcases = [p[0] for p in pieces]  # type: ignore[index]
            rows = [p[1] for p in pieces]  # type: ignore[index]
        slots, tally = self.slots, self.tally
        slot_results, slot_lines, slot_testcases, slot_rows, slot_groups = (
            self.results, self.lines, self.testcases, self.rows, self.groups)
        for result, case_id, line, testcase, row in zip(results, ids, lines, testcases, rows, strict=True):
            slot = slots.get(case_id)
            if slot is None:
                old = self.extra.pop(case_id, None)
                previous, previous_group = (None, None) if old is None else (old[0], old[4])
            else:
                previous, previous_group = slot_results[slot], slot_groups[slot]
            group = None
            if tally is not None:
                try:
                    if previous is not None and previous_group is not None:  # counted no more
                        tally.remove(previous, previous_group)
                    group = tally.add(result)
                except Exception:  # the matrix is made of the report, as it was
                    tally = self.tally = None
            if slot is None:
                self.extra[case_id] = (result, line, testcase, row, group)
                continue
            if previous is None:
                self.filled += 1
            slot_results[slot] = result
            slot_lines[slot] = line
            slot_testcases[slot] = testcase
            slot_rows[slot] = row
            slot_groups[slot] = group

    def view(self) -> tuple[list[CaseResult], list[str], list[str], list[str], list[str]]:
        """The report's results, their case ids, lines, testcases and rows, in its order (the
        slots themselves when every planned id, and no other, has a result: not to be changed)."""
        if self.filled == len(self.ids) and not self.extra:
            return (cast(list[CaseResult], self.results), self.ids, cast(list[str], self.lines),
                    cast(list[str], self.testcases), cast(list[str], self.rows))
        present = list(map(operator.is_not, self.results, itertools.repeat(None)))
        results = cast(list[CaseResult], list(itertools.compress(self.results, present)))
        ids = list(itertools.compress(self.ids, present))
        lines = cast(list[str], list(itertools.compress(self.lines, present)))
        testcases = cast(list[str], list(itertools.compress(self.testcases, present)))
        rows = cast(list[str], list(itertools.compress(self.rows, present)))
        for case_id, (result, line, testcase, row, _) in self.extra.items():
            results.append(result)
            ids.append(case_id)
            lines.append(line)
            testcases.append(testcase)
            rows.append(row)
        return results, ids, lines, testcases, rows

    def matrix(self) -> str:
        """The HTML matrix of the report's results (with a tally)."""
        assert self.tally is not None
        groups = dict.fromkeys(self.groups)
        for _, _, _, _, group in self.extra.values():
            groups[group] = None
        groups.pop(None, None)
        extra_places = {case_id: len(self.ids) + k for k, case_id in enumerate(self.extra)}

        def place(case_id: str) -> int:
            slot = self.slots.get(case_id)
            return extra_places[case_id] if slot is None else slot

        return self.tally.text(cast(dict[MatrixGroup, None], groups), place, strict=self.strict)


def check_report_directory(directory: str | os.PathLike[str], *, selection: Mapping[str, Any],
                           planned: Sequence[str], resume: bool = False, force: bool = False) -> None:
    """Refuse, writing nothing, what a :class:`ReportWriter` of ``directory`` for a run of
    ``selection`` that plans ``planned`` (case ids) refuses as it opens it, for a run of
    several reports (``validate --dml-version A,B``) to refuse them all before the first one
    runs: the path is a file, a report file there is not a regular file, it holds a report of
    another selection (resuming, or without ``force``) or a damaged one. Whether a resumed
    report ran on the run's own stack, and the results it holds, are the writer's to check.

    Raises:
        ArgumentError: ``directory`` is no str or os.PathLike, ``resume`` or ``force`` no bool.
        ReportError: what the writer refuses, in its words.
    """
    path = _check_directory(directory)
    checked_bool(resume, "resume")  # in the writer's order: its arguments, then the files
    checked_bool(force, "force")
    _check_report_files(path)
    _refuse_existing(path, _planned_selection(selection, planned), list(planned), resume=resume, force=force)


def _planned_selection(selection: Mapping[str, Any], planned: Sequence[str]) -> dict[str, Any]:
    """A report's selection: the run's, with the SHA-256 of its planned case ids."""
    return {**dict(selection), "cases_sha256": cases_sha256(planned)}


def _refuse_existing(directory: Path, selection: Mapping[str, Any], planned: list[str], *, resume: bool,
                     force: bool) -> dict[str, Any] | None:
    """Refuse the report already in ``directory`` where a run of ``selection`` may not continue
    it (resuming) or replace it (without ``force``); the meta of the report a resume continues
    (it has results), None where none is continued."""
    if resume and (directory / RESULTS_FILE).is_file():
        return _resumed_meta(directory, selection, planned)
    if not force:
        _refuse_other_selection(directory, selection, planned)
    return None


def _check_report_files(directory: Path) -> None:
    """Refuse a report file in ``directory`` that is not a regular file (a directory)."""
    for name in REPORT_FILES:
        path = directory / name
        if path.exists() and not path.is_file():
            raise ReportError(
                f"report directory {str(directory)!r} holds {name}, which is not a regular file "
                f"(a directory?); the report writes {name} there: move it away, or use another directory")


def _resumed_meta(directory: Path, selection: Mapping[str, Any], planned: list[str]) -> dict[str, Any]:
    """The meta of the report in ``directory`` that a run of ``selection`` resumes (its
    results.jsonl is there), refused where it has none or is of another selection."""
    meta_path = directory / META_FILE
    if not meta_path.is_file():
        raise ReportError(f"cannot resume {directory}: it has {RESULTS_FILE} but no {META_FILE}")
    old = read_meta(meta_path)
    differences = _selection_differences(old.get("selection") or {}, selection, old.get("planned"), planned)
    if differences:
        raise ReportError(
            f"cannot resume {directory}: it was made with {differences}; run with the same "
            "selection, or drop --resume to start a new report")
    return old


def _refuse_other_selection(directory: Path, selection: Mapping[str, Any], planned: list[str]) -> None:
    """Refuse a report of another selection in ``directory``, which a new report would replace."""
    used = _used_selection(directory)
    if used is not None:
        differences = _selection_differences(used[0], selection, used[1], planned)
        if differences:
            raise ReportError(
                f"report directory {str(directory)!r} holds a report of another selection, "
                f"made with {differences}; use another directory, or --force to replace it "
                "(validate --resume continues a report of the same selection)")


def _used_selection(directory: Path) -> tuple[dict[str, Any], Any] | None:
    """The selection of the report already in ``directory`` and its planned case ids (as the
    file holds them: None where it names none); None when the directory holds no report.

    Raises:
        ReportError: the report's meta.json (or, without one, its report.json) is damaged or
            names no selection, or a results.jsonl with results has neither: whether the
            report is of this run's selection cannot be told.
    """
    how = "use another directory, or --force to replace the report"
    for name in (META_FILE, JSON_FILE):
        path = directory / name
        if path.is_file():
            try:
                data = read_json(path)
                selection = data.get("selection")
            except ReportError as e:
                raise ReportError(f"report directory {str(directory)!r} holds a damaged {name} ({e}), so "
                                  f"whether it is of this run's selection cannot be told; {how}") from e
            if selection is None:
                raise ReportError(f"report directory {str(directory)!r} holds a {name} that names no "
                                  "selection, so whether it is of this run's selection cannot be told; "
                                  f"{how}")
            if not isinstance(selection, Mapping):
                raise ReportError(f"report directory {str(directory)!r} holds a damaged {name}: its "
                                  f"'selection' is {json.dumps(selection)[:60]}, not an object, so whether "
                                  f"it is of this run's selection cannot be told; {how}")
            return dict(selection), data.get("planned")  # meta.json has them; report.json does not
    results = directory / RESULTS_FILE
    if results.is_file() and results.stat().st_size > 0:
        raise ReportError(f"report directory {str(directory)!r} holds {RESULTS_FILE} without {META_FILE}, so "
                          f"whether it is of this run's selection cannot be told; {how}")
    return None


def _broken_stack(meta: Mapping[str, Any]) -> str:
    """Why the DirectML stack a meta names could not be described (its ``stack`` holds only an
    ``error``: the worker hung, crashed or did not start), or ""."""
    stack = meta.get("stack")
    if isinstance(stack, Mapping) and set(stack) == {"error"}:
        return str(stack["error"])
    return ""


def _stack_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """What the report's meta (``old``) and a run's (``new``) name differently among the
    device, driver, DirectML stack and package versions, each field that differs as
    ``name 'old' → 'new'`` ("" when they agree); a field one of them does not name (a device
    found only from the first result, a stack that could not be described) is not compared.
    Where both name a DirectML stack, its fields are compared and not the device, which is made
    from them."""
    found = []
    described = all(isinstance(m.get("stack"), Mapping) and m["stack"] and not _broken_stack(m)
                    for m in (old, new))
    for key, label in RAN_ON_KEYS:
        a, b = old.get(key), new.get(key)
        if a in (None, "", {}) or b in (None, "", {}) or a == b or (key == "device" and described):
            continue
        if key == "stack":
            if described:
                found.append(f"another {label} ({_field_changes(a, b)})")
        else:
            found.append(f"{label} {_quoted(a)} → {_quoted(b)}")
    a, b = ((m.get("environment") or {}).get("versions") for m in (old, new))
    if a and b and a != b:
        found.append(f"other package versions ({_field_changes(a, b)})")
    return "; ".join(found)


def _field_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The fields of two dicts that differ, in order, as ``name 'old' → 'new'`` (None for a
    field one of them lacks)."""
    keys = [*old, *(k for k in new if k not in old)]
    return ", ".join(f"{k} {_quoted(old.get(k))} → {_quoted(new.get(k))}" for k in keys
                     if old.get(k) != new.get(k))


def _quoted(value: Any) -> str:
    """A value for a message: a str in quotes as it is (a Windows path keeps single backslashes),
    anything else as repr."""
    return f"'{value}'" if isinstance(value, str) else repr(value)


def _value_text(key: str, value: Any) -> str:
    if key in _HASH_KEYS and isinstance(value, str) and value:
        return value[:12]
    return repr(value)


def _selection_differences(old: Mapping[str, Any], new: Mapping[str, Any], old_planned: Any = None,
                           new_planned: Sequence[str] = ()) -> str:
    """The fields of two selections that differ (:func:`~ort_layouts.engine.session.selection_differences`:
    ops, data types, value kinds and ranks compared whatever their order), as one phrase (""
    when they are equal). ``cases_sha256`` alone differing, with the same planned case ids in
    another order, is no other selection: a report planned before the data types and value
    kinds were put in one order (its cases in the order they were asked)."""
    same_cases = (isinstance(old_planned, list) and len(old_planned) == len(new_planned)
                  and set(old_planned) == set(new_planned))
    differences = selection_differences(old, new, ignore={"cases_sha256"} if same_cases else frozenset())
    return ", ".join(f"{_SELECTION_LABELS.get(key, key)} {_value_text(key, a)} "
                     f"(this run: {_value_text(key, b)})" for key, a, b in differences)
