"""JUnit XML for CI systems: one testcase per case, with the case's figures as properties.

The XML is written as text, as :mod:`xml.etree.ElementTree` writes such a tree after
``ET.indent`` (two spaces a level; ``<tag ... />`` for an element with neither text nor
children; attribute values and text escaped as it escapes them), at a fraction of the cost of
building the tree: a full suite's JUnit file has a testcase and some twenty properties for each
of its thousands of cases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.reports.report import Report, failure_text, result_figures

__all__ = ["render_junit"]

# characters XML 1.0 cannot hold, even escaped
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# what an attribute value cannot hold as it is: what XML escapes, and what it cannot hold
_SPECIAL = re.compile('[&<>"\r\n\t\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')
_INDENT = "  "


def _clean(text: object) -> str:
    return _INVALID_XML.sub("\ufffd", str(text))


def _attr(text: str) -> str:
    """An attribute value, escaped as ElementTree escapes one."""
    if _SPECIAL.search(text) is None:
        return text
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
        values = [_attr(_clean(v)) for v in values]
    key = (tuple(names_values), level)
    template = _TEMPLATES.get(key)
    if template is None:
        rows = ['<property name="' + _attr(n).replace("{", "{{").replace("}", "}}") + '" value="{}" />'
                for n in names_values]
        template = _TEMPLATES[key] = _parent("properties", "", rows, level)
    return template.format(*values)


# the properties elements of each list of property names, their values to fill in
_TEMPLATES: dict[tuple[tuple[str, ...], int], str] = {}


def _classname(result: CaseResult) -> str:
    return f"ort_layouts.{result.case.op}.{result.case.data_type.name.lower()}"


def _system_out(result: CaseResult, figures: Mapping[str, str]) -> str:
    lines = [f"{k}: {v}" for k, v in figures.items() if v != ""]
    if result.descriptors:
        lines.append("descriptors: " + json.dumps(result.descriptors, sort_keys=True))
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
    figures = result_figures(r)
    if r.status is Status.PASS:  # most cases: one format of the layout every pass shares
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
    children = []
    outcome = _outcome(r, strict=strict)
    if outcome is not None:
        children.append(outcome)
    children.append(_properties(figures, 3))
    if r.status is not Status.PASS:  # the figures of passing cases are in the properties
        children.append(_leaf("system-out", "", _clean(_system_out(r, figures))))
    attrs = _attrs((("classname", _classname(r)), ("name", figures["case_id"]), ("time", f"{r.seconds:.6f}")))
    return _parent("testcase", attrs, children, 2)


def _pass_template(names: tuple[str, ...]) -> str:
    """The testcase of a pass whose figures are ``names`` (the first its case id), as a format
    of its class name, time and figures, none of them holding a character XML escapes."""
    def field(text: str) -> str:
        return _attr(text).replace("{", "{{").replace("}", "}}")

    rows = [f'<property name="{field(n)}" value="{{{i + 2}}}" />' for i, n in enumerate(names)]
    attrs = f' classname="{{0}}" name="{{{names.index("case_id") + 2}}}" time="{{1}}"'
    return _parent("testcase", attrs, [_parent("properties", "", rows, 3)], 2)


# the testcase of a pass, for each list of figure names
_PASS_TEMPLATES: dict[tuple[str, ...], str] = {}


def render_junit(report: Report, *, strict: bool = False) -> str:
    """The report as JUnit XML (one testsuite; testcase classname ``ort_layouts.<op>.<dtype>``).

    Mismatches are ``<failure>``, errors ``<error>``, unsupported cases ``<skipped>`` (or a
    ``<failure type="unsupported">`` when ``strict``). Each testcase carries its figures as
    ``<properties>`` and in ``<system-out>``.
    """
    counts = report.counts()
    known = len(report.known_issues())
    unsupported_fail = strict and counts["unsupported"]
    suite_attrs = _attrs((
        ("name", f"ort_layouts.{report.meta.get('provider', 'unknown')}"),
        ("tests", str(len(report.results))),
        ("failures", str(counts["mismatch"] - (0 if strict else known)
                         + (counts["unsupported"] if unsupported_fail else 0))),
        ("errors", str(counts["error"])),
        ("skipped", str(0 if strict else counts["unsupported"] + known)),
        ("time", f"{sum(r.seconds for r in report.results):.3f}"),
        ("timestamp", str(report.meta.get("started", ""))),
        ("hostname", str(report.meta.get("environment", {}).get("hostname", ""))),
    ))
    env = report.meta.get("environment", {})
    suite_props = {
        "provider": report.meta.get("provider", ""),
        "device": report.meta.get("device", ""),
        "driver": report.meta.get("driver", ""),
        "command": report.meta.get("command", ""),
        "os": env.get("os", ""),
        "python": env.get("python", ""),
        **{f"version.{k}": v for k, v in env.get("versions", {}).items()},
        **{f"stack.{k}": v for k, v in (report.meta.get("stack") or {}).items()},
    }
    children = [_properties(suite_props, 2)]
    children.extend(_testcase(r, strict=strict) for r in report.results)
    suite = _parent("testsuite", suite_attrs, children, 1)
    return f'<?xml version="1.0" encoding="utf-8"?>\n{_parent("testsuites", "", [suite], 0)}\n'
