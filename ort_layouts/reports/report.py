"""Validation reports: the model (:class:`Report`), reading a report directory back, and the
figures and lines every rendering shares. :mod:`~ort_layouts.reports.writer` writes them.

A report directory holds:

``meta.json``
    where and how the run was made (machine, OS, versions, provider, device, command, the
    case selection and the planned case ids), written atomically when the run starts (a
    resumed run adds its time to ``resumed``), again when a field changes (the device the
    first result names: ``ReportWriter.update_meta``), and when the run ends (its
    ``finished`` time, once every planned case has a result).
``results.jsonl``
    one JSON line per case result (:func:`result_dict`: :meth:`CaseResult.to_dict` without the
    fields equal to their defaults, of the result and of its case; a field left out reads back
    as its default), appended and flushed as each result arrives, so a crash of the process or
    a GPU reset loses nothing already run; fsynced within ``FSYNC_INTERVAL_S`` seconds of each
    append, even when no result follows it (a run that hangs), at most that often, and at the
    end.
``report.json``, ``junit.xml``, ``report.html``
    the summaries, written atomically (temporary file, then ``os.replace``) when the run
    starts, at most every 30 s while it goes, and when it ends; ``results.jsonl`` is the record
    they are made from (:func:`load_report` reads it, never the summaries, when it is there).
    ``report.json`` holds :meth:`Report.to_dict`: its fields one a line, then its results one a
    line, each as ``results.jsonl`` holds it.
``.lock``
    the lock a run holds on the directory while it writes (see :mod:`ort_layouts.reports.lock`).
``shards.json``
    of a report merged from shards (:func:`ort_layouts.reports.merge.merge_shards`): where and
    when each shard ran. A run that starts a new report in the directory removes it with the
    summaries (the report is no longer the merged one); a resumed one keeps it.

A finished run rewrites ``results.jsonl`` in planned order. A sharded run (``--shard K/N``)
writes the same files into ``shard-K-of-N/`` under its report directory;
:func:`ort_layouts.reports.merge.merge_shards` makes the one report of all shards.

:func:`load_report` reads a directory or a ``report.json`` back into a :class:`Report`.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime
import itertools
import json
import operator
import os
import re
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from ort_layouts._errors import ArgumentError, OrtLayoutsError, ReportError, a_type, path_argument
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.providers import DML
from ort_layouts.engine.result import CaseResult, Status

__all__ = [
    "HTML_FILE",
    "JSON_FILE",
    "JUNIT_FILE",
    "META_FILE",
    "REPORT_FILES",
    "RESULTS_FILE",
    "SHARDS_FILE",
    "SUMMARY_FILES",
    "Coverage",
    "Report",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_write_texts",
    "foreign_kind",
    "foreign_result",
    "load_report",
]

SCHEMA = "ort_layouts.report/1"
META_FILE = "meta.json"
RESULTS_FILE = "results.jsonl"
JSON_FILE = "report.json"
JUNIT_FILE = "junit.xml"
HTML_FILE = "report.html"
SHARDS_FILE = "shards.json"  # of a report merged from shards: where each shard ran
SUMMARY_FILES = (JSON_FILE, JUNIT_FILE, HTML_FILE)  # what the writer makes of the results
REPORT_FILES = (RESULTS_FILE, META_FILE, *SUMMARY_FILES)  # every file a run's report holds
FSYNC_INTERVAL_S = 0.2  # results.jsonl reaches the disk this long after an append at most

_STATUS_OF = operator.attrgetter("status")
_CASE_ID_OF = operator.attrgetter("case.id")

_UMASK = os.umask(0o022)
os.umask(_UMASK)

def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()


def atomic_write_text(path: str | os.PathLike[str], text: str | Iterable[str]) -> None:
    """Write ``text`` (UTF-8; a lone surrogate, which UTF-8 cannot hold, as U+FFFD), or the
    pieces of text one after another, to ``path`` through a temporary file and ``os.replace``:
    readers see the old file or the new one, never half of one.

    A report's summaries are written as pieces (a few hundred results' text each): joining
    megabytes into one string, or encoding one, costs a copy into memory the process has not
    touched yet, which costs more than the copy itself.
    """
    atomic_write_texts([(path, text)])


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """:func:`atomic_write_text` of bytes, written as they are: the file at ``path`` is replaced,
    never written into (another link to it keeps its bytes)."""
    atomic_write_texts([(path, data)])


def atomic_write_texts(files: Sequence[tuple[str | os.PathLike[str], str | bytes | Iterable[str]]]) -> None:
    """:func:`atomic_write_text` for several files: each is written to its temporary file, then
    each is synced and put in place, in order.

    The disk starts writing each file as soon as it is written, and another thread syncs it
    (Python's lock is free while the disk works), while this one makes and writes the next.
    """
    written: list[tuple[Path, str, BinaryIO]] = []
    syncer = _Syncer()
    target: Path | None = None  # the file being written, which an error of its writing names
    try:
        for path, text in files:
            target = Path(path)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            out = os.fdopen(fd, "wb")
            written.append((target, tmp, out))
            os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600 files; give what open() would
            if isinstance(text, bytes):
                out.write(text)
            else:
                for piece in (text,) if isinstance(text, str) else text:
                    out.write(_utf8(piece))
            out.flush()
            if _START_WRITEBACK is not None:  # Linux: the dirty pages go to the disk now, not when synced
                _START_WRITEBACK(fd, 0, 0, _DONTNEED)
            syncer.sync(fd)
        syncer.finish()
        for _, _, synced in written:
            synced.close()
        held: list[int] = []  # the files replaced: their blocks are freed when closed, not when replaced
        try:
            for target, tmp, _ in written:
                old = _hold(target)
                if old is not None:
                    held.append(old)
                os.replace(tmp, target)
        finally:
            close_later(*held)
    except BaseException as e:
        syncer.finish(raising=False)
        for _, left, unfinished in written:
            try:
                unfinished.close()  # flushing may fail as the write did (a full disk)
            except OSError:
                pass
            finally:
                Path(left).unlink(missing_ok=True)
        if isinstance(e, OSError) and e.filename is None and e.errno is not None and target is not None:
            # a write or sync names no file ("[Errno 28] No space left on device"): name the one written
            raise OSError(e.errno, e.strerror, str(target)) from e
        raise


# the signals that stop a run (Ctrl-C, a CI job cancelled, a terminal hung up): held while a
# report's files are written together, so that they stay consistent with each other
_HELD_SIGNALS = tuple(sig for sig in (getattr(signal, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP"))
                      if sig is not None)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold :data:`_HELD_SIGNALS` for the block, then act on the first that came as its handler
    would have (Ctrl-C's KeyboardInterrupt raised after the block, not inside it). Only in the
    main thread, where Python runs signal handlers; elsewhere, and for a signal that is ignored
    or whose handler is not Python's, nothing changes.

    A report's summaries and meta are written inside it: a Ctrl-C (or a second one) that lands
    while they are written lets them finish, where it left the summaries of the run's start
    beside a results.jsonl of every result."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def hold(signum: int, frame: object) -> None:
        came.append(signum)

    previous: dict[int, Any] = {}
    try:
        for sig in _HELD_SIGNALS:
            handler = signal.getsignal(sig)
            if handler is None or handler is signal.SIG_IGN:
                continue
            previous[sig] = signal.signal(sig, hold)
    except (ValueError, OSError):  # signals cannot be set here (another interpreter)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        previous = {}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if came:
            _act_on(came[0], previous[came[0]])


def _act_on(signum: int, handler: Any) -> None:
    """Do what ``handler`` (a signal's handler before it was held) does with ``signum``."""
    if handler is signal.SIG_DFL:  # the default action (e.g. SIGTERM ends the process): sent again
        os.kill(os.getpid(), signum)
    elif callable(handler):
        handler(signum, None)


#: the range of lone surrogates (a name decoded with surrogateescape, say), for a regex class:
#: UTF-8 cannot hold them, so every report file has U+FFFD in their place
LONE_SURROGATES = "\ud800-\udfff"
_SURROGATE = re.compile(f"[{LONE_SURROGATES}]")


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD, as a reader decodes bytes that are not UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


#: what XML 1.0 cannot hold, even escaped, for a regex class: the C0 controls but the tab, line
#: feed and carriage return (NUL, ESC... of an ONNX Runtime message, a device name, a command
#: line), lone surrogates, U+FFFE and U+FFFF. junit.xml and report.html hold U+FFFD in their place
NOT_XML = f"\x00-\x08\x0b\x0c\x0e-\x1f{LONE_SURROGATES}\ufffe\uffff"
_NOT_XML_CHARACTER = re.compile(f"[{NOT_XML}]")


def replace_not_xml(text: str) -> str:
    """``text`` with each character of :data:`NOT_XML` as U+FFFD."""
    return _NOT_XML_CHARACTER.sub("\ufffd", text)


def _utf8(text: str) -> bytes:
    """``text`` in UTF-8, each lone surrogate as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return replace_lone_surrogates(text).encode("utf-8")


class _Syncer:
    """Syncs files to the disk (``os.fsync``), each in a thread of its own, all at once: a
    journaling file system commits syncs that wait together in one go (four small files'
    fsyncs, one after another, took about 15 ms on an ext4 disk, together about 1 to 4 ms)."""

    def __init__(self) -> None:
        self._failed: dict[int, BaseException] = {}  # by the file's place in the order given
        self._threads: list[threading.Thread] = []

    def sync(self, fd: int) -> None:
        thread = threading.Thread(target=self._run, args=(fd, len(self._threads)),
                                  name="ort_layouts_report_sync", daemon=True)
        thread.start()
        self._threads.append(thread)  # only once started: finish joins it (an interrupt may come between)

    def _run(self, fd: int, place: int) -> None:
        try:
            os.fsync(fd)
        except BaseException as e:
            self._failed[place] = e

    def finish(self, *, raising: bool = True) -> None:
        """Wait until each file given is synced; raises what syncing raised (the first file's
        error, in the order given, where several failed)."""
        threads, self._threads = self._threads, []
        for thread in threads:
            thread.join()
        if self._failed and raising:
            raise self._failed[min(self._failed)]


def _hold(path: Path) -> int | None:
    """A descriptor of the regular file at ``path`` (None: there is none, or a file open cannot
    be replaced here)."""
    if not REPLACE_WHILE_OPEN:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


# a file open in this process can be replaced (POSIX); not on Windows
REPLACE_WHILE_OPEN = os.name == "posix"


def close_later(*files: BinaryIO | int) -> None:
    """Close files (or file descriptors) in a thread of its own: closing the last reference to a
    replaced file frees its blocks on the disk (milliseconds for megabytes), which nothing needs
    to wait for."""
    if files:
        threading.Thread(target=_close_all, args=files, name="ort_layouts_close", daemon=True).start()


def _close_all(*files: BinaryIO | int) -> None:
    for file in files:
        with contextlib.suppress(OSError):
            if isinstance(file, int):
                os.close(file)
            else:
                file.close()


# posix_fadvise(POSIX_FADV_DONTNEED) starts writing a file's dirty pages back at once on Linux
_START_WRITEBACK = getattr(os, "posix_fadvise", None) if sys.platform.startswith("linux") else None
_DONTNEED = getattr(os, "POSIX_FADV_DONTNEED", 4)


@dataclasses.dataclass(frozen=True, slots=True)
class Report:
    """A validation report: where and how it ran (``meta``) and the results, in planned order.

    Attributes:
        meta: JSON-ready dict with ``environment``, ``provider``, ``device``, ``command``,
            ``selection``, ``started``, ``finished``, ``planned`` (case ids) and more.
        results: one result per case id.
    """

    meta: Mapping[str, Any]
    results: tuple[CaseResult, ...]

    def counts(self) -> dict[str, int]:
        """Results per status, every status present (``{"pass": 10, "mismatch": 0, ...}``)."""
        found = collections.Counter(map(_STATUS_OF, self.results))
        return {s.value: found[s] for s in Status}

    @property
    def planned_count(self) -> int:
        """The planned cases: :meth:`coverage`'s ``planned``."""
        return self.coverage().planned

    @property
    def complete(self) -> bool:
        """Whether every planned case has a result: :meth:`coverage`'s ``complete``."""
        return self.coverage().complete

    @property
    def strict(self) -> bool:
        """Whether the run counted known issues and unsupported cases as failures (the meta's
        ``strict``; False where it has none): what the summaries count by default."""
        return bool(self.meta.get("strict", False))

    def coverage(self) -> Coverage:
        """Which planned cases have a result (:class:`Coverage`).

        The planned cases are the distinct planned ids; a report.json, which holds no planned
        ids, records their count (``planned_count``) and how many of its case ids were not
        planned (``unplanned_count``; without it, its results count as planned ones up to
        ``planned_count``, the rest as unplanned). A report with neither: each distinct case
        id of its results is a planned case."""
        ids = set(map(_CASE_ID_OF, self.results))
        planned = self.meta.get("planned")
        if isinstance(planned, list):
            planned_ids = set(planned)
            run = len(planned_ids & ids)
            return Coverage(len(planned_ids), run, len(ids) - run)
        recorded = self.meta.get("planned_count")
        count = recorded if type(recorded) is int and recorded >= 0 else len(ids)
        unplanned = self.meta.get("unplanned_count")
        if type(unplanned) is not int or not 0 <= unplanned <= len(ids):
            unplanned = max(0, len(ids) - count)
        run = min(count, len(ids) - unplanned)
        return Coverage(count, run, len(ids) - run)

    def verdict(self, *, strict: bool | None = None) -> str:
        """:meth:`Totals.verdict` of the report (``strict``: None: :attr:`strict`).

        Raises:
            ArgumentError: ``strict`` is neither a bool nor None (:func:`checked_strict`)."""
        checked_strict(strict, none=True)
        return Totals.of(self).verdict(strict=self.strict if strict is None else strict)

    def failures(self, *, strict: bool = False) -> tuple[CaseResult, ...]:
        """Errors and the mismatches no known issue explains; with ``strict`` also the known
        issues and the unsupported cases.

        Raises:
            ArgumentError: ``strict`` is not a bool (:func:`checked_strict`)."""
        checked_strict(strict)
        return tuple(r for r in not_passed(self.results) if is_failure(r, strict=strict))

    def known_issues(self) -> tuple[CaseResult, ...]:
        """Mismatches that a known execution-provider deviation explains."""
        return tuple(r for r in not_passed(self.results) if r.status is Status.MISMATCH and r.known_issue)

    def to_dict(self, *, strict: bool | None = None) -> dict[str, Any]:
        """The report as JSON-ready data: the meta (but the planned ids), ``planned_count``,
        ``unplanned_count`` (case ids of results that were not planned), ``complete``,
        ``summary`` (results per status), ``strict``, ``failures`` (the number of failing
        cases, as JUnit and HTML count them), ``verdict`` ("fail" when a case failed, else
        "incomplete" when a planned case has no result, else "pass") and ``results`` (each as
        :func:`result_dict` gives it, as ``report.json`` holds it).

        Args:
            strict: known issues and unsupported cases count as failures; None: as the meta's
                ``strict`` says.

        Raises:
            ArgumentError: ``strict`` is neither a bool nor None (a report.json reader takes a
                JSON boolean only).
        """
        return {**report_header(self, strict=strict), "results": [result_dict(r) for r in self.results]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<dict>") -> Report:
        """The report that :meth:`to_dict` gave ``data`` for (a ``report.json``'s content).

        Raises:
            ReportError: ``data`` is no ort_layouts report: not a mapping, without a ``schema``
                or of another one, without ``results``, or with a field of another type than
                the one :meth:`to_dict` writes; the message names ``source``.
        """
        meta = _report_meta(data, source)
        try:
            results = tuple(CaseResult.from_dict(r) for r in data["results"])
        except (KeyError, TypeError, ValueError) as e:
            missing = _missing_field(e)
            why = f"lacks the field {missing!r}" if missing else f"cannot be read: {e}"
            raise ReportError(f"{source} holds a result that {why}") from e
        return cls(meta, results)


def _report_meta(data: object, source: str) -> dict[str, Any]:
    """The meta of a ``report.json``'s content (:meth:`Report.from_dict`), its results not read.

    Raises:
        ReportError: as :meth:`Report.from_dict` says, for all but its results.
    """
    if not isinstance(data, Mapping):
        raise ReportError(f"{source} is not an ort_layouts report: it is {a_type(data)}, not a JSON "
                          f"object; {_VALID_REPORT_JSON}")
    if "schema" not in data:
        raise ReportError(f"{source} is not an ort_layouts report: it has no 'schema' field; "
                          f"{_VALID_REPORT_JSON}")
    if data["schema"] != SCHEMA:
        raise ReportError(f"{source} has schema {data['schema']!r:.60}, which this version of "
                          f"ort_layouts does not read; valid: {SCHEMA!r}")
    if "results" not in data:
        raise ReportError(f"{source} is not an ort_layouts report: it has no 'results'; "
                          f"{_VALID_REPORT_JSON}")
    if not isinstance(data["results"], list):
        raise ReportError(f"{source}: 'results' is a {type(data['results']).__name__}, not a list")
    for key, kind in _HEADER_TYPES.items():
        _checked_field(data, key, kind, source, "the file is damaged, or not an ort_layouts report")
    derived = _derived_keys()
    # the planned and unplanned counts stay where the planned ids are not there (report.json
    # leaves them out)
    with_ids = isinstance(data.get("planned"), list)
    meta = {k: v for k, v in data.items()
            if k not in derived and not (with_ids and k in _HEADER_COUNT_KEYS)}
    return checked_meta(meta, source)


def _missing_field(error: Exception) -> str | None:
    """The field a result's JSON lacks, when reading it raised ``error`` for that (a KeyError,
    whose text is the bare key); None for another error."""
    if isinstance(error, KeyError) and error.args and isinstance(error.args[0], str):
        return error.args[0]
    return None


def result_dict(result: CaseResult) -> dict[str, Any]:
    """A result as ``results.jsonl`` and ``report.json`` hold it: ``CaseResult.to_dict`` without
    the fields equal to their defaults (``to_dict(defaults=False)``); a result of a class with
    a ``to_dict`` of its own, as that gives it. :meth:`CaseResult.from_dict` reads it back."""
    if type(result).to_dict is CaseResult.to_dict:
        return result.to_dict(defaults=False)
    return result.to_dict()


@dataclasses.dataclass(frozen=True, slots=True)
class Coverage:
    """Which of a report's planned cases have a result (:meth:`Report.coverage`): the one count
    of the cases run and not run that every summary shows (report.json, JUnit, HTML, the text
    summary), and that decides whether the report is complete.

    Attributes:
        planned: the planned cases (distinct case ids).
        run: the planned cases that have a result.
        unplanned: the case ids of results that were not planned (a report merged, or its
            planned ids changed; never counted as planned cases run).
    """

    planned: int
    run: int
    unplanned: int

    @property
    def missing(self) -> int:
        """The planned cases without a result."""
        return self.planned - self.run

    @property
    def complete(self) -> bool:
        """Whether every planned case has a result."""
        return self.run >= self.planned


@dataclasses.dataclass(frozen=True, slots=True)
class Totals:
    """What a report's summaries (report.json, JUnit, HTML) say of its results as a whole,
    found once for all three.

    Attributes:
        counts: :meth:`Report.counts`.
        not_passed: the results that did not pass, in the report's order.
        coverage: :meth:`Report.coverage`.
    """

    counts: dict[str, int]
    not_passed: tuple[CaseResult, ...]
    coverage: Coverage

    @classmethod
    def of(cls, report: Report, *, coverage: Coverage | None = None) -> Totals:
        """The report's totals (``coverage``: :meth:`Report.coverage`, when the caller knows
        it; None: found here)."""
        return cls(report.counts(), tuple(not_passed(report.results)),
                   report.coverage() if coverage is None else coverage)

    @property
    def complete(self) -> bool:
        """:attr:`Report.complete`."""
        return self.coverage.complete

    def failures(self, *, strict: bool = False) -> tuple[CaseResult, ...]:
        """:meth:`Report.failures`."""
        return tuple(r for r in self.not_passed if is_failure(r, strict=strict))

    def known_issues(self) -> tuple[CaseResult, ...]:
        """:meth:`Report.known_issues`."""
        return tuple(r for r in self.not_passed if r.status is Status.MISMATCH and r.known_issue)

    def verdict(self, *, strict: bool = False) -> str:
        """The report's verdict, as every summary and the exit status give it: "fail" when a
        case failed (:meth:`failures`), else "incomplete" when a planned case has no result,
        else "pass"."""
        if any(is_failure(r, strict=strict) for r in self.not_passed):
            return "fail"
        return "pass" if self.coverage.complete else "incomplete"


def report_header(
    report: Report, *, strict: bool | None = None, totals: Totals | None = None
) -> dict[str, Any]:
    """:meth:`Report.to_dict` but its ``results``: every field before them, in order
    (``totals``: the report's, found before; None: found here). Its own ``schema`` (the
    format's version, which :meth:`Report.from_dict` reads by) is written in place of a meta
    field of that name: a meta's ``schema`` stays in meta.json only.

    Raises:
        ArgumentError: ``strict`` is neither a bool nor None (:func:`checked_strict`)."""
    if strict is None:
        strict = report.strict
    checked_strict(strict)
    if totals is None:
        totals = Totals.of(report)
    meta = {k: v for k, v in report.meta.items() if k not in ("schema", "planned", *_HEADER_COUNT_KEYS)}
    return {"schema": SCHEMA, **meta, **_totals_fields(totals, strict=strict)}


def checked_strict(strict: object, *, none: bool = False) -> None:
    """Refuse a ``strict`` that is not a bool (None too, where ``none``): a report's summaries
    write it as a JSON boolean, which its readers require (a str "no", an int 1 or a numpy
    bool would be written as they are, or not at all).

    Raises:
        ArgumentError: naming the value and what is valid.
    """
    checked_bool(strict, "strict", none="as the report's meta says" if none else "")


def checked_bool(value: object, name: str, *, none: str = "", true: str = "") -> None:
    """Refuse a flag ``name`` that is not a bool (None too, unless ``none`` says what None
    means; ``true``: what True means, said with it): a str "no" is true, and must not replace a
    report, say.

    Raises:
        ArgumentError: naming the value and what is valid.
    """
    if type(value) is not bool and not (none and value is None):
        kind = type(value)
        what = a_type(value) if kind.__module__ == "builtins" else f"a {kind.__module__}.{kind.__qualname__}"
        valid = f"True{f' ({true})' if true else ''} or False" + (f", or None ({none})" if none else "")
        raise ArgumentError(f"{name} {value!r:.60} is {what}, not a bool; valid: {valid}")


def _totals_fields(totals: Totals, *, strict: bool) -> dict[str, Any]:
    """The fields :func:`report_header` writes after the meta: what the results say."""
    return {
        "planned_count": totals.coverage.planned,
        "unplanned_count": totals.coverage.unplanned,
        "complete": totals.complete,
        "summary": totals.counts,
        "strict": strict,
        "failures": len(totals.failures(strict=strict)),
        "verdict": totals.verdict(strict=strict),
    }


# the fields of report_header that stand for the planned ids report.json leaves out: read back
# as meta where those ids are not there (Report.coverage counts with them)
_HEADER_COUNT_KEYS = ("planned_count", "unplanned_count")
# the fields of report_header that it writes over the meta's own: the strict the summaries
# count with (the run's, unless told otherwise) and, with no planned ids, the counts above
_HEADER_META_KEYS = frozenset({"strict", *_HEADER_COUNT_KEYS})


def _derived_keys() -> frozenset[str]:
    """The fields :func:`report_header` writes that are not of the meta (``schema``, the
    totals) and ``results``: :meth:`Report.from_dict` leaves them out of the meta it reads.
    Found from what the header writes, so that a field it gets is never read back as meta."""
    written = report_header(Report({}, ()), strict=False)
    return frozenset(written).union(["results"]) - _HEADER_META_KEYS


# meta fields readers look into, and the JSON type each must have where present: an object, or
# an array of strings (case ids, times)
_META_TYPES: dict[str, type] = {
    "environment": dict, "selection": dict, "stack": dict, "planned": list, "resumed": list, "strict": bool,
}


# the fields report.json's header writes after the meta (report_header), and their types: a
# report.json holding one of another type is no report of this package's
_HEADER_TYPES: dict[str, type] = {
    "planned_count": int, "unplanned_count": int, "complete": bool, "summary": dict, "strict": bool,
    "failures": int, "verdict": str,
}
_JSON_NAMES = {str: "string", int: "integer", bool: "boolean", dict: "object", list: "array"}
_VALID_REPORT_JSON = (f"valid: a {JSON_FILE} that ort-layouts validate wrote (schema {SCHEMA!r}), a report "
                      f"directory or a {RESULTS_FILE}")


_MetaT = TypeVar("_MetaT", bound=Mapping[str, Any])


def _checked_field(fields: Mapping[str, Any], key: str, kind: type, source: str, damaged: str, *,
                   error: type[OrtLayoutsError] = ReportError) -> Any:
    """``fields[key]`` (None where absent), refused (``error``) where it is neither null nor a
    ``kind`` (a bool is no integer here, as JSON tells them apart); ``damaged`` ends the message."""
    value = fields.get(key)
    if value is not None and (not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool)):
        raise error(f"{source}: {key!r} is {type(value).__name__} {value!r:.60}, not a JSON "
                    f"{_JSON_NAMES[kind]}; {damaged}")
    return value


def checked_meta(meta: _MetaT, source: str, *, error: type[OrtLayoutsError] = ReportError,
                 damaged: str = "the file is damaged") -> _MetaT:
    """``meta`` (of a meta.json or report.json), its fields of the types readers take them as.
    A writer checks a meta it is given with it (``error``: what it raises; ``damaged``: how its
    message ends, saying what is valid), so that it never writes one that is read back as damaged.

    Raises:
        ReportError: (``error``) a field of another type, or an array field holding other than
            strings (the file is damaged, or not this package's).
    """
    for key, kind in _META_TYPES.items():
        value = _checked_field(meta, key, kind, source, damaged, error=error)
        if isinstance(value, list):  # of strings
            for item in value:
                if not isinstance(item, str):
                    raise error(f"{source}: {key!r} holds {type(item).__name__} {item!r:.60}, "
                                f"not only strings; {damaged}")
    versions = (meta.get("environment") or {}).get("versions")
    if versions is not None and not isinstance(versions, dict):
        raise error(f"{source}: 'environment.versions' is {type(versions).__name__}, not a JSON "
                    f"object; {damaged}")
    return meta


def meta_object(meta: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A meta field that holds a JSON object (``environment``, ``stack``, ``selection``), as a
    mapping: {} where the field is absent, null or of another type (a report made elsewhere:
    the summaries render it all the same)."""
    value = meta.get(key)
    return value if isinstance(value, Mapping) else {}


def not_passed(results: Sequence[CaseResult]) -> list[CaseResult]:
    """The results that did not pass, in order (a run's few: found without a step of Python
    for each result)."""
    return list(itertools.compress(results, map(Status.PASS.__ne__, map(_STATUS_OF, results))))


def is_failure(result: CaseResult, *, strict: bool = False) -> bool:
    """Whether a result fails a run: an error or an unexplained mismatch; with ``strict`` also
    a known-issue mismatch or an unsupported case."""
    if strict:
        return result.status is not Status.PASS
    return result.status is Status.ERROR or (result.status is Status.MISMATCH and not result.known_issue)


def ordered_results(results: Iterable[CaseResult], planned: Sequence[str] | None) -> tuple[CaseResult, ...]:
    """One result per case id (the last one wins), in planned order, unplanned ones after."""
    results = list(results)
    return tuple(results[i] for i in ordered_positions([r.case.id for r in results], planned))


def ordered_positions(ids: Sequence[str], planned: Sequence[str] | None) -> list[int]:
    """The positions in ``ids`` (the case ids of results, in arrival order) of the results
    :func:`ordered_results` keeps, in its order: the last result of each case id, in planned
    order, unplanned ones after in the order they last arrived."""
    last = {cid: i for i, cid in enumerate(ids)}  # the last result of each id
    slots = planned_slots(planned)
    positions = [last[cid] for cid in slots if cid in last]
    positions.extend(sorted(i for cid, i in last.items() if cid not in slots))
    return positions


def planned_slots(planned: Iterable[str] | None) -> dict[str, int]:
    """Each planned case id's place among a report's planned results, in that order: an id
    planned twice takes its last place."""
    planned = list(planned or ())
    place = dict(zip(planned, range(len(planned)), strict=True))
    if len(place) == len(planned):  # each id planned once
        return place
    return {cid: k for k, cid in enumerate(sorted(place, key=place.__getitem__))}


def read_results(path: str | os.PathLike[str], *, repair: bool = False) -> list[CaseResult]:
    """The results of a ``results.jsonl``.

    A last line cut short (a crash while writing it) is ignored, and with ``repair`` cut off
    the file so later appends start on a clean line (a whole last line without its newline is
    kept, and given one); a bad line before the last raises ReportError.
    """
    return [result for _, result in read_numbered_results(path, repair=repair)]


def foreign_result(numbered: Iterable[tuple[int, CaseResult]], planned: Iterable[str],
                   provider: object) -> tuple[int, CaseResult, str] | None:
    """The first numbered result (from :func:`read_numbered_results`) that a report of the
    ``planned`` case ids on ``provider`` cannot count, with why: ``"case"``, a case it did not plan
    (it would mix another selection's case in, or replace another shard's result), or
    ``"provider"``, a result of another execution provider (``provider`` a non-empty str; the
    device is not compared: a meta names it as the run describes it, a result as the provider
    does). None when every one counts."""
    own = planned if isinstance(planned, (set, frozenset)) else set(planned)
    for number, result in numbered:
        kind = foreign_kind(result, own, provider)
        if kind:
            return number, result, kind
    return None


def foreign_kind(result: CaseResult, planned: Container[str], provider: object) -> str:
    """Why a report of the ``planned`` case ids on ``provider`` cannot count ``result``:
    ``"case"``, ``"provider"`` (as :func:`foreign_result` says), or "" when it counts."""
    if result.case.id not in planned:
        return "case"
    if isinstance(provider, str) and provider and result.provider != provider:
        return "provider"
    return ""


def read_numbered_results(
    path: str | os.PathLike[str], *, repair: bool = False
) -> list[tuple[int, CaseResult]]:
    """:func:`read_results`, each result with the number of its line (from 1; blank lines
    count), for a message that names the line."""
    p = Path(path)
    data = p.read_bytes()
    results: list[tuple[int, CaseResult]] = []
    good_end = 0
    position = 0
    number = 0
    unended = False  # the last line is whole but has no newline (written by other means)
    while position < len(data):
        number += 1
        newline = data.find(b"\n", position)
        last = newline == -1
        end = len(data) if last else newline
        raw = data[position:end]
        if raw.strip():
            try:
                parsed = json.loads(raw)
            except (ValueError, RecursionError) as e:  # RecursionError: nested too deep
                if not last and data[newline + 1:].strip():
                    raise ReportError(f"{p}: line {number} cannot be read ({e}); the file is damaged") from e
                break  # the last line, cut short (a crash while it was written)
            try:  # a whole JSON line, last or not, is a result or an error
                results.append((number, CaseResult.from_dict(parsed)))
            except (ValueError, KeyError, TypeError, RecursionError, OrtLayoutsError) as e:
                missing = _missing_field(e)
                why = f"lacks the field {missing!r}" if missing else f"cannot be read ({e})"
                raise ReportError(f"{p}: line {number} {why}; the file is damaged") from e
        position = good_end = end + (0 if last else 1)
        unended = last and bool(raw.strip())
    if repair and (good_end < len(data) or unended):
        with open(p, "r+b") as f:
            f.truncate(good_end)
            if unended:  # later appends start on a line of their own
                f.seek(good_end)
                f.write(b"\n")
    return results


_VALID_REPORTS = f"valid: a report directory, a {JSON_FILE} or a {RESULTS_FILE}"
_JSON_STARTS = b'{["-0123456789tfn'  # the bytes a JSON value begins with


def load_report(path: str | os.PathLike[str]) -> Report:
    """A report from a report directory, a ``report.json`` or a ``results.jsonl``.

    A directory is read from ``meta.json`` and ``results.jsonl`` when it has them (they are
    never staler than ``report.json``), else from its ``report.json``: a directory of
    ``results.jsonl`` and ``report.json`` without ``meta.json`` takes its meta from
    ``report.json`` and its results from ``results.jsonl``.

    Raises:
        ReportError: ``path`` is no str or os.PathLike (None, an int), or holds no report.
    """
    p = path_argument(path, "path", "a report directory, report.json or results.jsonl (a str or os.PathLike)",
                      ReportError)
    if p.is_dir():
        results_path = p / RESULTS_FILE
        if results_path.is_file():
            meta: Mapping[str, Any] = {}
            if (p / META_FILE).is_file():
                meta = read_meta(p / META_FILE)
            elif (p / JSON_FILE).is_file():  # its run, provider, strict and versions: report.json's
                meta = _report_meta(read_json(p / JSON_FILE), str(p / JSON_FILE))
            return Report(meta, ordered_results(read_results(results_path), meta.get("planned")))
        if (p / JSON_FILE).is_file():
            return Report.from_dict(read_json(p / JSON_FILE), source=str(p / JSON_FILE))
        if any(d.is_dir() and d.name.startswith("shard-") for d in p.iterdir()):
            raise ReportError(f"{p} holds shard reports (shard-K-of-N) and no report of its own; make it "
                              f"with: ort-layouts merge --shards {p}")
        raise ReportError(f"{p} holds no report: neither {RESULTS_FILE} nor {JSON_FILE}")
    if p.is_file():
        _check_report_text(p)
        if p.suffix == ".jsonl":
            meta_path = p.with_name(META_FILE)
            meta = read_meta(meta_path) if meta_path.is_file() else {}
            return Report(meta, ordered_results(read_results(p), meta.get("planned")))
        return Report.from_dict(read_json(p), source=str(p))
    if p.exists():  # a device, a FIFO, a socket
        raise ReportError(f"report {str(p)!r} is not a regular file or a directory; {_VALID_REPORTS}")
    raise ReportError(f"report {str(p)!r} does not exist")


def _check_report_text(path: Path) -> None:
    """Refuse a file given as a report whose first byte (after blanks) opens no JSON value, as
    a ``report.json`` and each line of a ``results.jsonl`` do: another kind of file (an .onnx
    model, a picture), not a damaged report. An empty file, or one of blanks, is left to the
    reader."""
    with path.open("rb") as f:
        head = f.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()  # a BOM: the reader says so
    if head and head[0] not in _JSON_STARTS:
        raise ReportError(f"{str(path)!r} is not a report (it is not JSON); {_VALID_REPORTS}")


#: the meta keys that name where a run ran, with their words in messages: a report is resumed,
#: and shards are merged, only where they agree (with the package versions)
RAN_ON_KEYS: tuple[tuple[str, str], ...] = (
    ("device", "device"), ("driver", "driver"), ("stack", "DirectML stack"))


def read_meta(path: Path) -> dict[str, Any]:
    """A report directory's meta.json, its fields of the types readers take them as.

    Raises:
        ReportError: the file is not UTF-8, not a JSON object, or a field is of another type.
    """
    return checked_meta(read_json(path), str(path))


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object of a report file.

    Raises:
        ReportError: the file is not UTF-8, not JSON, or not a JSON object (it is damaged).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise ReportError(f"{path} is not UTF-8 ({e.reason} at byte {e.start}); the file is damaged") from e
    except json.JSONDecodeError as e:
        raise ReportError(f"{path} is not valid JSON: {e}") from e
    except RecursionError as e:  # arrays or objects nested deeper than the decoder goes
        raise ReportError(f"{path} is not a report file: its JSON is nested too deeply to read ({e}); "
                          "the file is damaged") from e
    if not isinstance(data, dict):
        raise ReportError(f"{path} does not hold a JSON object")
    return data


def summary_line(report: Report, *, strict: bool = False, seconds: float | None = None) -> str:
    """One line: how many cases ran where, and how many passed, failed, were unsupported.

    Where names the provider and its device; on DirectML, the device (the stack: DirectML, its
    Direct3D 12 and Vulkan driver) and the ONNX Runtime whose DML EP ran it. The per-case lines
    of a run (its progress, its failures) name only the case: the run's summary line names the
    stack once for all of them.

    Raises:
        ArgumentError: ``strict`` is not a bool (:func:`checked_strict`)."""
    checked_strict(strict)
    counts = report.counts()
    device = str(report.meta.get("device") or "")
    ep = _dml_ep_text(report.meta)
    if ep and "ONNX Runtime" not in device:
        device = f"{device}; {ep}" if device else ep
    where = str(report.meta.get("provider", "?")) + (f" ({device})" if device else "")
    known = len(report.known_issues())
    mismatched = f"{counts['mismatch']} mismatched"
    if known:
        mismatched += f" ({known} explained by known issues" + (", failing: --strict)" if strict else ")")
    parts = [f"{counts['pass']} passed", mismatched, f"{counts['error']} errors"]
    unsupported = counts["unsupported"]
    if unsupported:
        parts.append(f"{unsupported} unsupported" + (" (failing: --strict)" if strict else " (not failures)"))
    text = f"{len(report.results)} cases on {where}: " + ", ".join(parts)
    coverage = report.coverage()
    if not coverage.complete:
        text += f"; {coverage.missing} of {coverage.planned} not run"
    if seconds is not None:
        text += f" in {seconds:.1f} s"
    return text


def _dml_ep_text(meta: Mapping[str, Any]) -> str:
    """The ONNX Runtime whose DML EP a DirectML run ran on ("DML EP of ONNX Runtime 1.24.4"): the
    worker stack's ``ort_version``, else (the DML EP in this process) the installed onnxruntime;
    "" for another provider, or where the meta names neither."""
    if meta.get("provider") != DML:
        return ""
    version = ran_onnxruntime(meta)
    return f"DML EP of ONNX Runtime {version}" if version else ""


def ran_onnxruntime(meta: Mapping[str, Any]) -> str:
    """The ONNX Runtime that ran a report's cases: a worker run's (its stack's ``ort_version``),
    else the one the run imported (``environment.versions``); "" where the meta names neither."""
    version = (meta_object(meta, "stack").get("ort_version")
               or meta_object(meta_object(meta, "environment"), "versions").get("onnxruntime"))
    return str(version) if version else ""


def results_by_group(results: Iterable[CaseResult]) -> dict[tuple[str, str, int], list[CaseResult]]:
    """Results grouped by (op, data type name, rank), in first-seen order."""
    by_type: dict[tuple[str, DataType, int], list[CaseResult]] = {}
    for r in results:
        case = r.case
        key = (case.op, case.data_type, len(case.shape))
        try:
            by_type[key].append(r)
        except KeyError:
            by_type[key] = [r]
    groups: dict[tuple[str, str, int], list[CaseResult]] = {}
    for (op, data_type, rank), found in by_type.items():
        groups.setdefault((op, data_type.name.lower(), rank), []).extend(found)
    return groups


def failure_text(result: CaseResult) -> str:
    """One line that says what went wrong in a case, with its first mismatch and diagnosis."""
    if result.status is Status.PASS:
        return "passed"
    if result.status is not Status.MISMATCH:
        return f"{result.status.value}: {result.message or 'no message'}"
    text = f"{result.mismatch_count} of {result.element_count} elements differ"
    if result.first_mismatch_index is not None:
        text += f"; first at index {list(result.first_mismatch_index)}"
        offsets = []
        if result.input_offset_in_elements is not None:
            offsets.append(f"input offset {result.input_offset_in_elements} elements")
        if result.output_offset_in_elements is not None:
            offsets.append(f"output offset {result.output_offset_in_elements} elements")
        if offsets:
            text += " (" + ", ".join(offsets) + ")"
    if result.expected_hex or result.actual_hex:
        expected, actual = result.expected_hex or "?", result.actual_hex or "?"
        text += f": expected bytes {expected}, got {actual} (little-endian)"
    if result.diagnosis:
        text += f"; diagnosis: {result.diagnosis}"
    if result.known_issue:
        text += f"; known issue: {result.known_issue}"
    if result.message and result.first_mismatch_index is None:
        text += f" ({result.message})"
    return text


def _text(value: int | None) -> str:
    return "" if value is None else str(value)


def result_figures(result: CaseResult) -> dict[str, str]:
    """A case's figures as strings, for JUnit properties and pytest's user_properties."""
    r = result
    figures = {
        "case_id": r.case.id,
        "status": r.status.value,
        "op": r.case.op,
        "data_type": r.case.data_type.name.lower(),
        "shape": "x".join(map(str, r.case.shape)),
        "provider": r.provider,
        "device": r.device,
        "node_provider": r.node_provider,
        "element_count": str(r.element_count),
        "mismatch_count": str(r.mismatch_count),
        "first_mismatch_index": "" if r.first_mismatch_index is None else
        ",".join(map(str, r.first_mismatch_index)),
        "input_offset_in_elements": _text(r.input_offset_in_elements),
        "output_offset_in_elements": _text(r.output_offset_in_elements),
        "expected_hex": r.expected_hex,
        "actual_hex": r.actual_hex,
        "diagnosis": r.diagnosis,
        "known_issue": r.known_issue,
        "message": r.message,
    }
    if r.recovered:  # what the hardware applied, next to what was expected, in DirectML terms
        rec = r.recovered

        def side(name: str) -> str:
            values = rec.get(name)
            if not isinstance(values, Mapping):
                return ""
            return json.dumps({k: v for k, v in values.items() if k != "operator_dict"}, sort_keys=True)

        figures["recovered_kind"] = str(rec.get("kind", ""))
        figures["recovered_operator"] = str(rec.get("operator", ""))
        figures["recovered_applied"] = side("applied")
        figures["recovered_expected"] = side("expected")
        figures["recovered_names"] = recovered_names(rec)
    return figures


def recovered_names(recovered: Mapping[str, Any]) -> str:
    """The names of what a recovery found different (its ``names``), one phrase: "" where it
    names none (or holds something else there: a report made elsewhere)."""
    names = recovered.get("names")
    if not isinstance(names, list | tuple):
        return ""
    return "; ".join(map(str, names))
