"""JUnit XML for CI systems: one testcase per case, with the case's figures as properties (a
passing case's without those that are empty, such as its first mismatch and diagnosis).

The XML is written as text, as :mod:`xml.etree.ElementTree` writes such a tree after
``ET.indent`` (two spaces a level; ``<tag ... />`` for an element with neither text nor
children; attribute values and text escaped as it escapes them, and what XML 1.0 cannot hold,
such as control characters and lone surrogates, replaced by U+FFFD), at a fraction of the cost of
building the tree: a full suite's JUnit file has a testcase and ten to twenty properties for each
of its thousands of cases.
"""

from __future__ import annotations

import datetime
import json
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.reports.report import (
    NOT_XML,
    Coverage,
    Report,
    Totals,
    checked_strict,
    failure_text,
    meta_object,
    replace_not_xml,
    result_figures,
)

__all__ = ["junit_pieces", "junit_timestamp", "render_junit", "testcase_texts"]

# what an attribute value cannot hold as it is: what XML escapes, and what it cannot hold
_SPECIAL = re.compile(f'[&<>"\r\n\t{NOT_XML}]')
_INDENT = "  "
_SECONDS_OF = operator.attrgetter("seconds")
_CASE_ID_OF = operator.attrgetter("case.id")
_SORTED_JSON = json.JSONEncoder(sort_keys=True)  # json.dumps(..., sort_keys=True), made once


def _clean(text: object) -> str:
    return replace_not_xml(str(text))


def _attr(text: str) -> str:
    """An attribute value, escaped as ElementTree escapes one, what XML cannot hold (a lone
    surrogate, a control character) replaced by U+FFFD."""
    if _SPECIAL.search(text) is None:
        return text
    text = replace_not_xml(text)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#09;"))


def _text(text: str) -> str:
    """Element text, escaped as ElementTree escapes it."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attrs(pairs: Iterable[tuple[str, str]]) -> str:
    return "".join(f' {name}="{_attr(value)}"' for name, value in pairs)


def _leaf(tag: str, attrs: str, text: str | None = None) -> str:
    """An element without children."""
    return f"<{tag}{attrs}>{_text(text)}</{tag}>" if text else f"<{tag}{attrs} />"


def _parent(tag: str, attrs: str, children: Sequence[str], level: int) -> str:
    """An element at ``level`` with ``children`` (already written), indented as ``ET.indent`` does."""
    if not children:
        return f"<{tag}{attrs} />"
    inner = "\n" + _INDENT * (level + 1)
    return f"<{tag}{attrs}>{inner}{inner.join(children)}\n{_INDENT * level}</{tag}>"


def _properties(names_values: Mapping[str, str], level: int) -> str:
    """A ``<properties>`` element at ``level`` of one ``<property name value>`` for each item;
    the values are cleaned of what XML cannot hold."""
    if not names_values:
        return "<properties />"
    values = list(names_values.values())
    try:
        plain = _SPECIAL.search("".join(values)) is None
    except TypeError:  # a value that is not a string
        plain = False
    if not plain:
        values = [_attr(str(v)) for v in values]
    key = (tuple(names_values), level)
    template = _TEMPLATES.get(key)
    if template is None:
        rows = [f'<property name="{_field(_attr(n))}" value="{{}}" />' for n in names_values]
        template = _TEMPLATES[key] = _parent("properties", "", rows, level)
    return template.format(*values)


# the properties elements of each list of property names, their values to fill in
_TEMPLATES: dict[tuple[tuple[str, ...], int], str] = {}


def _classname(result: CaseResult) -> str:
    return f"ort_layouts.{result.case.op}.{result.case.data_type.name.lower()}"


def _system_out(result: CaseResult, figures: Mapping[str, str]) -> str:
    lines = [f"{k}: {v}" for k, v in figures.items() if v != ""]
    if result.descriptors:
        lines.append("descriptors: " + _SORTED_JSON.encode(result.descriptors))
    return "\n".join(lines) + "\n"


def _outcome(result: CaseResult, *, strict: bool) -> str | None:
    """The element that says how a case went wrong (None for a pass)."""
    r = result
    if r.status is Status.PASS:
        return None
    text = _clean(failure_text(r))
    if r.status is Status.MISMATCH and r.known_issue and not strict:
        return _leaf("skipped", _attrs((("message", text), ("type", "known-issue"))))
    if r.status is Status.MISMATCH:
        return _leaf("failure", _attrs((("message", text), ("type", "mismatch"))), text)
    if r.status is Status.ERROR:
        return _leaf("error", _attrs((("message", text), ("type", "error"))), _clean(r.message or text))
    if r.status is Status.UNSUPPORTED:
        if strict:
            return _leaf("failure", _attrs((("message", text), ("type", "unsupported"))), text)
        return _leaf("skipped", _attrs((("message", text),)))
    return None


def _testcase(result: CaseResult, *, strict: bool) -> str:
    r = result
    if r.status is Status.PASS:
        # a pass: the figures that are empty are left out (a pass has no mismatch to describe)
        figures = {k: v for k, v in result_figures(r).items() if v != "" or k == "case_id"}
        values = [_classname(r), f"{r.seconds:.6f}", *figures.values()]
        try:
            plain = _SPECIAL.search("".join(values)) is None
        except TypeError:  # a value that is not a string
            plain = False
        if plain:
            names = tuple(figures)
            template = _PASS_TEMPLATES.get(names)
            if template is None:
                template = _PASS_TEMPLATES[names] = _pass_template(names)
            return template.format(*values)
    else:
        figures = result_figures(r)
    children = []
    outcome = _outcome(r, strict=strict)
    if outcome is not None:
        children.append(outcome)
    children.append(_properties(figures, 3))
    if r.status is not Status.PASS:  # the figures of passing cases are in the properties
        children.append(_leaf("system-out", "", _clean(_system_out(r, figures))))
    attrs = _attrs((("classname", _classname(r)), ("name", figures["case_id"]), ("time", f"{r.seconds:.6f}")))
    return _parent("testcase", attrs, children, 2)


def _field(text: str) -> str:
    """Text as a format string holds it literally."""
    return text.replace("{", "{{").replace("}", "}}")


def _pass_template(names: tuple[str, ...]) -> str:
    """The testcase of a pass whose figures are ``names`` (the first its case id), as a format
    of its class name, time and figures, none of them holding a character XML escapes."""
    rows = [f'<property name="{_field(_attr(n))}" value="{{{i + 2}}}" />' for i, n in enumerate(names)]
    attrs = f' classname="{{0}}" name="{{{names.index("case_id") + 2}}}" time="{{1}}"'
    return _parent("testcase", attrs, [_parent("properties", "", rows, 3)], 2)


# the testcase of a pass, for each list of figure names
_PASS_TEMPLATES: dict[tuple[str, ...], str] = {}

# the figures of a pass (result_figures) whose template _clean_pass makes; with other figures
# (another version of result_figures, a recovery) a pass takes _testcase's general way
_CLEAN_NAMES = ("case_id", "status", "op", "data_type", "shape", "provider", "device", "node_provider",
                "element_count", "mismatch_count", "first_mismatch_index", "input_offset_in_elements",
                "output_offset_in_elements", "expected_hex", "actual_hex", "diagnosis", "known_issue",
                "message")
# what each testcase fills in: the case id {0}, time {1}, shape {2}, element and mismatch counts {3} {4}
_CLEAN_SLOTS = {"case_id": "{0}", "shape": "{2}", "element_count": "{3}", "mismatch_count": "{4}"}
_SLOT = re.compile(r"\{(\d)\}")
# the clean pass's template of each (op, data type, provider, device, node provider, rank > 0):
# the text between the case id, time, case id, shape, element count and mismatch count; () where
# one of them holds a character XML escapes
_CLEAN_TEMPLATES: dict[tuple[object, ...], tuple[str, ...]] = {}


def _clean_pass(result: CaseResult, plain_id: bool) -> str | None:
    """The testcase of a pass that has no figure of a mismatch, no message and no recovery (as
    most cases of a run), filled into a template made once for its op, data type, provider,
    device and node provider: what :func:`_testcase` writes for it. None for another pass, or
    one whose text XML would escape (``plain_id``: its case id has been seen to escape
    nothing)."""
    r = result
    case = r.case
    if (r.first_mismatch_index is not None or r.input_offset_in_elements is not None
            or r.output_offset_in_elements is not None or r.expected_hex != "" or r.actual_hex != ""
            or r.diagnosis != "" or r.known_issue != "" or r.message != "" or r.recovered
            or type(r.element_count) is not int or type(r.mismatch_count) is not int):
        return None
    shape = case.shape
    key = (case.op, case.data_type, r.provider, r.device, r.node_provider, len(shape) > 0)
    t = _CLEAN_TEMPLATES.get(key)
    if t is None:
        t = _CLEAN_TEMPLATES[key] = _clean_template(r)
    case_id = case.id
    if not t or not (plain_id or _SPECIAL.search(case_id) is None):
        return None
    shape_text = _SHAPE_TEXTS.get(shape)
    if shape_text is None:
        if len(_SHAPE_TEXTS) >= _SHAPE_TEXTS_KEPT:
            _SHAPE_TEXTS.clear()
        shape_text = _SHAPE_TEXTS[shape] = "x".join(map(str, shape))
    return (f"{t[0]}{case_id}{t[1]}{r.seconds:.6f}{t[2]}{case_id}{t[3]}{shape_text}{t[4]}{r.element_count}"
            f"{t[5]}{r.mismatch_count}{t[6]}")


# the text of each shape seen ("2x3x4"), a few thousand at most
_SHAPE_TEXTS: dict[tuple[int, ...], str] = {}
_SHAPE_TEXTS_KEPT = 4096


def _clean_template(result: CaseResult) -> tuple[str, ...]:
    """:func:`_clean_pass`'s template for the results like ``result``; () where there is none."""
    figures = result_figures(result)
    classname = _classname(result)
    if tuple(figures) != _CLEAN_NAMES or _SPECIAL.search(classname) is not None:
        return ()
    rows: list[str] = []
    for name, value in figures.items():
        if name in _CLEAN_SLOTS:
            if value == "" and name == "shape":
                text = "{2}"  # nothing: a scalar's pass has no shape row; its shape text is ""
                rows[-1] += text
                continue
            text = _CLEAN_SLOTS[name]
        elif value == "":
            continue
        elif not isinstance(value, str) or _SPECIAL.search(value) is not None:
            return ()
        else:
            text = value
        rows.append(f'<property name="{name}" value="{text}" />')
    attrs = f' classname="{classname}" name="{{0}}" time="{{1}}"'
    parts = _SLOT.split(_parent("testcase", attrs, [_parent("properties", "", rows, 3)], 2))
    if parts[1::2] != ["0", "1", "0", "2", "3", "4"]:  # a figure that holds a slot ("{0}") too
        return ()
    return tuple(parts[0::2])


def testcase_texts(
    results: Sequence[CaseResult], *, strict: bool = False, ids: Sequence[str] | None = None
) -> list[str]:
    """The ``<testcase>`` element of each result, as :func:`junit_pieces` writes it (indented
    for its place in the file); ``ids``: their case ids, when the caller has them.

    Raises:
        ArgumentError: ``strict`` is not a bool (:func:`~ort_layouts.reports.report.checked_strict`).
    """
    checked_strict(strict)
    plain_ids = _plain("".join(map(_CASE_ID_OF, results) if ids is None else ids))
    passed = Status.PASS
    texts = []
    for r in results:
        text = _clean_pass(r, plain_ids) if r.status is passed else None
        texts.append(_testcase(r, strict=strict) if text is None else text)
    return texts


def _plain(text: str) -> bool:
    """Whether ``text`` holds nothing XML escapes in an attribute value or cannot hold
    (``_SPECIAL``): for ASCII text, the bytes below 0x20 and ``&<>"``, found by the bytes'
    translation (several times faster than the pattern)."""
    if not text.isascii():
        return _SPECIAL.search(text) is None
    data = text.encode("ascii")
    return len(data.translate(None, _ASCII_SPECIAL)) == len(data)


_ASCII_SPECIAL = bytes(range(0x20)) + b'&<>"'  # what _SPECIAL matches of ASCII


def render_junit(report: Report, *, strict: bool = False) -> str:
    """The report as JUnit XML (one testsuite; testcase classname ``ort_layouts.<op>.<dtype>``).

    Mismatches are ``<failure>``, errors ``<error>``, unsupported cases ``<skipped>`` (or a
    ``<failure type="unsupported">`` when ``strict``). Each testcase carries its figures as
    ``<properties>`` (a pass: those that are not empty) and, unless it passed, in
    ``<system-out>``. The testsuite's ``timestamp`` is the run's start in UTC without an offset,
    as JUnit's schema has it (:func:`junit_timestamp`).

    Raises:
        ArgumentError: ``strict`` is not a bool (:func:`~ort_layouts.reports.report.checked_strict`).
    """
    return "".join(junit_pieces(report, strict=strict))


# testcases per piece of junit_pieces: some hundred kilobytes
_PIECE_CASES = 128


def junit_pieces(
    report: Report, *, strict: bool = False, testcases: Sequence[str] | None = None,
    totals: Totals | None = None,
) -> Iterator[str]:
    """:func:`render_junit`'s text in pieces, one for each few hundred testcases.

    Args:
        testcases: the testcase of each of the report's results (:func:`testcase_texts`, with
            the same ``strict``), made before (a run makes them as its results arrive); None:
            made here.
        totals: the report's totals, found before; None: found here.

    Raises:
        ArgumentError: ``strict`` is not a bool (:func:`~ort_layouts.reports.report.checked_strict`),
            when called, before any piece is made.
    """
    checked_strict(strict)
    return _junit_pieces(report, strict, testcases, totals)


def _junit_pieces(report: Report, strict: bool, testcases: Sequence[str] | None,
                  totals: Totals | None) -> Iterator[str]:
    """:func:`junit_pieces` once its arguments are checked."""
    if totals is None:
        totals = Totals.of(report)
    counts = totals.counts
    failing = totals.failures(strict=strict)  # an <error> each, or a <failure>
    missing = _missing_text(totals.coverage)  # one failing testcase says so
    timestamp = junit_timestamp(report.meta.get("started"))
    env = meta_object(report.meta, "environment")  # a report made elsewhere may hold anything there
    suite_attrs = _attrs((
        ("name", f"ort_layouts.{report.meta.get('provider', 'unknown')}"),
        ("tests", str(len(report.results) + bool(missing))),
        ("failures", str(len(failing) - counts["error"] + bool(missing))),
        ("errors", str(counts["error"])),
        ("skipped", str(len(totals.not_passed) - len(failing))),  # the others that did not pass
        ("time", f"{sum(map(_SECONDS_OF, report.results)):.3f}"),
        *((("timestamp", timestamp),) if timestamp else ()),
        ("hostname", str(env.get("hostname", ""))),
    ))
    suite_props = {
        "provider": report.meta.get("provider", ""),
        "device": report.meta.get("device", ""),
        "driver": report.meta.get("driver", ""),
        "command": report.meta.get("command", ""),
        "os": env.get("os", ""),
        "python": env.get("python", ""),
        **{f"version.{k}": v for k, v in meta_object(env, "versions").items()},
        **{f"stack.{k}": v for k, v in meta_object(report.meta, "stack").items()},
    }
    # as _parent("testsuites", "", [_parent("testsuite", suite_attrs, [properties, *testcases], 1)], 0)
    inner = "\n" + _INDENT * 2
    yield (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n{_INDENT}<testsuite{suite_attrs}>'
           f"{inner}{_properties(suite_props, 2)}")
    results = report.results
    for start in range(0, len(results), _PIECE_CASES):
        some = (testcase_texts(results[start:start + _PIECE_CASES], strict=strict) if testcases is None
                else testcases[start:start + _PIECE_CASES])
        yield inner + inner.join(some)
    if missing:
        yield (f'{inner}<testcase classname="ort_layouts" name="planned cases without a result" time="0">'
               f'{inner}{_INDENT}{_leaf("failure", _attrs((("message", missing), ("type", "incomplete"))))}'
               f"{inner}</testcase>")
    yield f"\n{_INDENT}</testsuite>\n</testsuites>\n"


def junit_timestamp(started: object) -> str:
    """A run's start (``meta["started"]``, ISO 8601 with its offset: ``now_iso``) as JUnit's
    schema (Ant's and Jenkins' ``junit.xsd``) has a testsuite's ``timestamp``: an
    ``xs:dateTime`` of the pattern ``[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}``,
    without a time zone: the time in UTC, to the second ("2026-11-23T18:40:00" of
    "2026-11-23T19:40:00+01:00"; a time without an offset as it is). "" for what is not an
    ISO 8601 time (the testsuite then has no timestamp)."""
    if not isinstance(started, str):
        return ""
    try:
        time = datetime.datetime.fromisoformat(started)
        if time.tzinfo is not None:
            time = time.astimezone(datetime.UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):  # not a time, or UTC's is out of datetime's years
        return ""
    return time.replace(microsecond=0).isoformat()


def _missing_text(coverage: Coverage) -> str:
    """Why an incomplete report's run is not a pass: how many planned cases have no result ("" for
    a complete report)."""
    if coverage.complete:
        return ""
    return (f"{coverage.missing} of {coverage.planned} planned cases have no result: the run stopped, "
            "or is still running (resume it with validate --resume)")
