"""Self-contained HTML pages (no external assets, no script) for a report and a merged matrix."""

from __future__ import annotations

import collections
import html
import json
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.result import CaseResult, Status, operator_dict
from ort_layouts.operators.identity import IDENTITY
from ort_layouts.operators.padding import PADDING1
from ort_layouts.reports.report import (
    NOT_XML,
    Report,
    Totals,
    checked_strict,
    failure_text,
    is_failure,
    meta_object,
    not_passed,
    recovered_names,
    replace_not_xml,
    result_figures,
    results_by_group,
)

__all__ = ["MatrixTally", "all_cases_row_texts", "picture", "render_report_html", "report_html_pieces"]

MAX_PICTURES = 100  # failing cases drawn in full; the rest are listed

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;max-width:80em;
 color:#1b1b1b;padding:0 1em;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #bbb;padding:.2em .5em;text-align:left;
 vertical-align:top}th{background:#f2f2f2}
.verdict{font-size:1.3em;font-weight:bold;padding:.3em .6em;display:inline-block;border-radius:.3em}
.verdict.pass{background:#c8e6c9}.verdict.fail{background:#ffcdd2}.verdict.incomplete{background:#ffe0b2}
td.cell{text-align:center;min-width:4.5em}td.cell a{color:inherit}
.pass{background:#c8e6c9}.fail,.mismatch{background:#ffcdd2}.error{background:#ffab91}
.unsupported{background:#e0e0e0}.known{background:#ffe0b2}.partial{background:#e6f2c2}.none{background:#fff;color:#999}
.legend span{padding:.1em .5em;margin-right:.5em;border:1px solid #bbb}
section.case{border:1px solid #bbb;border-left:.4em solid #c62828;padding:.2em 1em 1em;margin:1em 0}
section.case{background:#fff}section.case.error{border-left-color:#e65100}section.case.unsupported{border-left-color:#757575}
.recovered td.differs{background:#ffebee;font-weight:bold}
.side-by-side{display:flex;gap:1.5em;flex-wrap:wrap;align-items:flex-start}
.diagnosis{font-weight:bold;background:#fff8e1;padding:.3em .5em;border:1px solid #ffe082}
code,pre{font-family:ui-monospace,Consolas,monospace;font-size:.9em}pre{background:#f7f7f7;padding:.5em;
 overflow-x:auto}.picture svg{max-width:100%;height:auto}dl.figures{display:grid;grid-template-columns:
 max-content auto;gap:.1em 1em}dl.figures dt{font-weight:bold}dl.figures dd{margin:0;font-family:monospace}
"""


_HTML_SPECIAL_CHARS = "&<>\"'"  # what html.escape(text, quote=True) replaces
_HTML_SPECIAL = re.compile(f"[{_HTML_SPECIAL_CHARS}{NOT_XML}]")  # what escape changes
_STATUS_OF = operator.attrgetter("status")
_CASE_ID_OF = operator.attrgetter("case.id")
_STATUS_VALUES = tuple((s, s.value) for s in Status)


def escape(value: object) -> str:
    """``html.escape(str(value), quote=True)``, each character XML cannot hold replaced by
    U+FFFD as junit.xml replaces it (:data:`~ort_layouts.reports.report.NOT_XML`: a NUL or
    another control character of an ONNX Runtime message, a device name or a command line,
    U+FFFE, U+FFFF, and a lone surrogate, which UTF-8 cannot hold)."""
    text = str(value)
    if _HTML_SPECIAL.search(text) is None:
        return text
    return html.escape(replace_not_xml(text), quote=True)


def page(title: str, body: str) -> str:
    """A complete HTML document with the shared style sheet inline."""
    return _page_head(title) + body + _PAGE_TAIL


def _page_head(title: str) -> str:
    """:func:`page` up to its body."""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n")


_PAGE_TAIL = "\n</body>\n</html>\n"


def case_anchor(case_id: str) -> str:
    return "case-" + case_id


def _input_descriptor(result: CaseResult) -> dict[str, Any] | None:
    d = result.descriptors or {}
    operator = d.get("operator")
    for candidate in (d.get("input"), d.get("InputTensor"),
                      operator.get("input") if isinstance(operator, Mapping) else None):
        if isinstance(candidate, Mapping) and "sizes" in candidate:
            return dict(candidate)
    return None


_CAPTIONS = {IDENTITY: "the input, as the EP reads it", PADDING1: "the operator's input and output"}


def picture(result: CaseResult) -> str:
    """The layout picture of a case: the DirectML operator its descriptors name (the
    ``"operator"`` field: PADDING1, SLICE1, JOIN, ...) drawn by the renderer, or, for an
    operator the renderer does not draw, its input descriptor; inline SVG when the renderer
    draws it, else preformatted text; "" when the result carries nothing to draw."""
    from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
    from ort_layouts.reports.render import DRAWN_OPERATORS, Drawable, operator_from_dict

    data = operator_dict(result.descriptors)
    name = str(data.get("operator")) if data is not None else ""
    item: Drawable
    try:
        if data is not None and name in DRAWN_OPERATORS:
            item = operator_from_dict(data)
            caption = _CAPTIONS.get(name, f"{name}: each input and each output")
        else:
            found = _input_descriptor(result)
            if found is None:
                return ""
            item = BufferTensorDesc.from_dict(found)
            caption = "the input, as the EP reads it"
    except Exception as e:  # a report from elsewhere may hold anything: never fail the page
        return f"<p>(the descriptors cannot be drawn: {escape(e)})</p>"
    try:
        from ort_layouts.reports.render import render_svg

        svg = str(render_svg(item))
        if svg.lstrip().startswith("<?xml"):
            svg = svg.split("?>", 1)[1]
        return f'<figure class="picture">{svg}<figcaption>{escape(caption)}</figcaption></figure>'
    except Exception:
        pass
    try:
        from ort_layouts.reports.render import render_text

        text = str(render_text(item))
    except Exception as e:
        text = f"(no picture: {e})"
    return (f'<figure class="picture"><pre>{escape(text)}</pre>'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def _operator_fields(descriptors: Mapping[str, Any]) -> str:
    """A table of the operator's name and its fields other than tensors (window offsets,
    repeats, block size, axis, ...), whatever the operator."""
    data = operator_dict(descriptors)
    if data is None:
        return ""
    rows = [(k, v) for k, v in data.items()
            if not (isinstance(v, Mapping) or (isinstance(v, list) and v and isinstance(v[0], Mapping)))]
    return ('<table class="operator">' + "".join(
        f"<tr><th>{escape(k)}</th><td><code>{escape(v)}</code></td></tr>" for k, v in rows) + "</table>")


def _descriptor_table(descriptors: Mapping[str, Any]) -> str:
    rows = []
    for role, d in _flatten_descriptors(descriptors):
        rows.append(
            f"<tr><th>{escape(role)}</th><td>{escape(d.get('data_type', ''))}</td>"
            f"<td>{escape(d.get('sizes'))}</td>"
            f"<td>{escape(d.get('strides') if d.get('strides') is not None else 'packed')}</td>"
            f"<td>{escape(d.get('total_tensor_size_in_bytes', ''))}</td></tr>")
    if not rows:
        return ""
    return ("<table class=\"descriptors\"><tr><th>tensor</th><th>data type</th><th>sizes</th>"
            "<th>strides (elements)</th><th>total bytes</th></tr>" + "".join(rows) + "</table>")


def _flatten_descriptors(
    descriptors: Mapping[str, Any], prefix: str = ""
) -> list[tuple[str, Mapping[str, Any]]]:
    found: list[tuple[str, Mapping[str, Any]]] = []
    for key, value in descriptors.items():
        if isinstance(value, Mapping):
            if "sizes" in value and "data_type" in value:
                found.append((prefix + str(key), value))
            else:
                found.extend(_flatten_descriptors(value, prefix + str(key) + "."))
        elif isinstance(value, list):  # JOIN's InputTensors, SPLIT's OutputTensors
            found.extend(_flatten_descriptors({f"{key}[{i}]": v for i, v in enumerate(value)}, prefix))
    return found


def _case_table(headers: Sequence[str], results: Sequence[CaseResult],
                cells: Callable[[CaseResult], Sequence[str]],
                detail: Callable[[CaseResult], str] | None = None, *, anchor: bool = True) -> str:
    """A table of cases, each row anchored by its case id (unless ``anchor`` is off: the case
    is anchored elsewhere on the page): the id (and ``detail`` under it), then ``cells``."""
    head = "".join(f"<th>{escape(h)}</th>" for h in ("case", *headers))
    rows = []
    for r in results:
        first = f"<code>{escape(r.case.id)}</code>" + (f"<br>{escape(detail(r))}" if detail else "")
        rest = "".join(f"<td>{escape(c)}</td>" for c in cells(r))
        row_id = f' id="{escape(case_anchor(r.case.id))}"' if anchor else ""
        rows.append(f"<tr{row_id}><td>{first}</td>{rest}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _case_section(result: CaseResult, *, draw: bool) -> str:
    r = result
    figures = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>"
                      for k, v in result_figures(r).items() if v != "")
    parts = [
        f'<section class="case {r.status.value}" id="{escape(case_anchor(r.case.id))}">',
        f"<h3><code>{escape(r.case.id)}</code> "
        f"<span class=\"{r.status.value}\">{escape(r.status.value)}</span></h3>",
        f'<p class="what">{escape(failure_text(r))}</p>',
    ]
    if r.diagnosis:
        parts.append(f'<p class="diagnosis">Diagnosis: {escape(r.diagnosis)}</p>')
    if r.recovered:
        parts.append(recovered_section(r, draw=draw))
    parts.append(_operator_fields(r.descriptors))
    parts.append(_descriptor_table(r.descriptors))
    if draw:
        parts.append(picture(r))
    parts.append(f'<details><summary>figures and descriptors</summary><dl class="figures">{figures}</dl>'
                 f"<pre>{escape(json.dumps(r.descriptors, indent=1, sort_keys=True))}</pre>"
                 f"<pre>{escape(json.dumps(r.case.to_dict(), sort_keys=True))}</pre></details>")
    parts.append("</section>")
    return "\n".join(parts)


def failure_section_text(result: CaseResult) -> str:
    """A failing case's section of the page, drawn (as :func:`report_html_pieces` writes it for
    one of the first ``MAX_PICTURES`` failing cases)."""
    return _case_section(result, draw=True)


def _side_picture(result: CaseResult, side: Mapping[str, Any], caption: str) -> str:
    """One side of a recovery drawn: its DirectML operator (``operator_dict``) when it has one,
    else, for a strided read, the input descriptor with those sizes and strides."""
    from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
    from ort_layouts.reports.render import Drawable, operator_from_dict, render_svg

    item: Drawable
    try:
        if isinstance(side.get("operator_dict"), Mapping):
            item = operator_from_dict(side["operator_dict"])
        elif "strides_in_elements" in side and "sizes" in side:
            item = BufferTensorDesc(result.case.data_type, tuple(side["sizes"]),
                                    tuple(side["strides_in_elements"]))
            offset = side.get("offset_in_elements") or 0
            caption += f" (from element {offset})" if offset else ""
        else:
            return ""
        svg = str(render_svg(item))
    except Exception as e:  # a layout that cannot be drawn (negative strides, too large, ...)
        return f"<figure><p>({escape(caption)}: not drawn: {escape(e)})</p></figure>"
    if svg.lstrip().startswith("<?xml"):
        svg = svg.split("?>", 1)[1]
    return f'<figure class="picture">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def recovered_section(result: CaseResult, *, draw: bool = True) -> str:
    """What the recovery inferred the hardware applied (``CaseResult.recovered``) next to what
    was expected: a table of the DirectML fields, the names of the difference, and, when
    ``draw``, the two layouts side by side. "" when nothing was recovered."""
    rec = result.recovered
    if not rec:
        return ""
    applied, expected = (side if isinstance(side := rec.get(name), Mapping) else {}
                         for name in ("applied", "expected"))
    keys = [k for k in dict.fromkeys([*expected, *applied]) if k != "operator_dict"]
    differs = ' class="differs"'
    rows = "".join(
        f"<tr><th>{escape(k)}</th><td>{escape(expected.get(k, ''))}</td>"
        f"<td{differs if expected.get(k) != applied.get(k) else ''}>"
        f"{escape(applied.get(k, ''))}</td></tr>" for k in keys)
    names = recovered_names(rec)
    parts = [f'<div class="recovered"><h4>What the hardware applied: {escape(rec.get("kind", ""))} '
             f"({escape(rec.get('operator', ''))})</h4>",
             f"<table><tr><th></th><th>expected</th><th>applied</th></tr>{rows}</table>"]
    if names:
        parts.append(f"<p>The difference: {escape(names)}</p>")
    if draw:
        pictures = [_side_picture(result, expected, "expected"), _side_picture(result, applied, "applied")]
        if any(pictures):
            parts.append(f'<div class="side-by-side">{"".join(pictures)}</div>')
    parts.append("</div>")
    return "".join(parts)


# a matrix cell: its colour class, its results per status (every status, in order), its number
# of results and the case id its label links to (None: no link)
_Cell = tuple[str, dict[str, int], int, str | None]
_NO_COUNTS = dict.fromkeys((value for _, value in _STATUS_VALUES), 0)


def _matrix(report: Report, *, strict: bool = False) -> str:
    cells: dict[tuple[str, str, int], _Cell] = {}
    for key, rs in results_by_group(report.results).items():
        others = not_passed(rs)
        cells[key] = _cell(others, len(rs) - len(others), strict=strict)
    return _matrix_text(cells)


def _cell(others: Sequence[CaseResult], passed: int, *, strict: bool) -> _Cell:
    """The matrix cell of a group of ``passed`` passes and ``others``, its results that did not
    pass, in the report's order: its colour class ("pass": all pass; "fail": any failure, an
    error or a mismatch no known issue explains, or with ``strict`` any case that is not a
    pass; "known": known issues; "partial": passes and unsupported cases; "unsupported": no
    pass), its results per status (every status, in order), its number of results and the case
    its label links to: its first failure, else its first mismatch, else None."""
    size = passed + len(others)
    if not others:  # most groups: all passed
        return "pass", {**_NO_COUNTS, Status.PASS.value: size}, size, None
    found = collections.Counter(map(_STATUS_OF, others))
    counts = {value: passed if s is Status.PASS else found[s] for s, value in _STATUS_VALUES}
    bad = next((r for r in others if is_failure(r, strict=strict)), None)
    cls = "fail"
    if bad is None:
        bad = next((r for r in others if r.status is Status.MISMATCH), None)
        cls = "known" if bad is not None else "partial" if passed else "unsupported"
    return cls, counts, size, None if bad is None else bad.case.id


_LEGEND = ('<p class="legend"><span class="pass">all pass</span><span class="fail">mismatch or error</span>'
           '<span class="known">known issue</span>'
           '<span class="partial">pass and unsupported</span><span class="unsupported">unsupported</span>'
           "cells: passed / cases</p>")


def _matrix_text(cells: Mapping[tuple[str, str, int], _Cell]) -> str:
    """The matrix of the cells of each (op, data type name, rank): a table for each op, a row
    for each data type, in the order the groups were first seen, a column for each rank."""
    by_op: dict[str, dict[tuple[str, int], _Cell]] = {}
    for (op, dt, rank), item in cells.items():
        found = by_op.get(op)
        if found is None:
            found = by_op[op] = {}
        found[dt, rank] = item
    out = [_LEGEND]
    passed = Status.PASS.value
    for op, found in by_op.items():
        op_text = escape(op)
        dtypes = list(dict.fromkeys(dt for dt, _ in found))
        ranks = sorted({rank for _, rank in found})
        out.append(f'<h3>{op_text}</h3>\n<table class="matrix" data-op="{op_text}">'
                   "<tr><th>data type \\ rank</th>" + "".join(f"<th>{rank}</th>" for rank in ranks) + "</tr>")
        for dt in dtypes:
            dt_text = escape(dt)
            row = []
            for rank in ranks:
                cell = found.get((dt, rank))
                if cell is None:
                    row.append('<td class="cell none">&mdash;</td>')
                    continue
                cls, counts, size, bad_id = cell
                breakdown = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
                label = f"{counts[passed]}/{size}"
                if bad_id is not None:
                    label = f'<a href="#{escape(case_anchor(bad_id))}">{label}</a>'
                row.append(f'<td class="cell {cls}" data-op="{op_text}" data-dtype="{dt_text}" '
                           f'data-rank="{rank}" title="{escape(breakdown)}">{label}</td>')
            out.append(f"<tr><th>{dt_text}</th>{''.join(row)}</tr>")
        out.append("</table>")
    return "\n".join(out)


class MatrixGroup:
    """The results of one (op, data type, rank) that a :class:`MatrixTally` counts: how many
    passed, and those that did not pass by case id."""

    __slots__ = ("key", "others", "passed")

    def __init__(self, key: tuple[str, str, int]) -> None:
        self.key = key  # (op, data type name, rank), as results_by_group names its groups
        self.passed = 0
        self.others: dict[str, CaseResult] = {}


class MatrixTally:
    """The matrix kept as results arrive (a report's results as a run writes them, one case
    at a time, out of order): how many results each (op, data type, rank) has, how many passed,
    and those few that did not pass. :meth:`text` makes the matrix :func:`render_report_html`
    makes of the same results, without a step for each result."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, DataType, int], MatrixGroup] = {}

    def add(self, result: CaseResult) -> MatrixGroup:
        """Count ``result``; returns its group (for :meth:`remove` and :meth:`text`)."""
        case = result.case
        key = (case.op, case.data_type, len(case.shape))
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = MatrixGroup((case.op, case.data_type.name.lower(), key[2]))
        if result.status is Status.PASS:
            group.passed += 1
        else:
            group.others[case.id] = result
        return group

    @staticmethod
    def remove(result: CaseResult, group: MatrixGroup) -> None:
        """Count ``result`` (added into ``group``) no more: a later result of its case replaces it."""
        if result.status is Status.PASS:
            group.passed -= 1
        else:
            group.others.pop(result.case.id, None)

    @staticmethod
    def text(groups: Iterable[MatrixGroup], place: Callable[[str], Any], *, strict: bool = False) -> str:
        """The matrix of the results counted, as :func:`_matrix` makes it of them in a report's
        order: ``groups`` the groups in the order of their first results in the report,
        ``place`` the key of a case id that sorts the cases that did not pass in that order.

        Raises:
            ArgumentError: ``strict`` is not a bool (:func:`~ort_layouts.reports.report.checked_strict`).
        """
        checked_strict(strict)
        cells: dict[tuple[str, str, int], _Cell] = {}
        for group in groups:  # one a key: a DataType's name is its own
            others = sorted(group.others.values(), key=lambda r: place(r.case.id))
            cells[group.key] = _cell(others, group.passed, strict=strict)
        return _matrix_text(cells)


def _environment_rows(meta: Mapping[str, Any]) -> str:
    """The page's table of where and how the run ran: each meta field that says something (a
    report made elsewhere may hold any JSON there: a text field is shown as it is, an object
    field (environment, stack, versions) of another kind is left out)."""
    env = meta_object(meta, "environment")
    rows: list[tuple[str, Any]] = [
        ("provider", meta.get("provider", "")), ("device", meta.get("device", "")),
        ("driver", meta.get("driver", "")), ("host", env.get("hostname", "")),
        ("machine", env.get("machine", "")), ("OS", env.get("os", "")), ("Python", env.get("python", "")),
    ]
    rows += [(k, v) for k, v in meta_object(env, "versions").items()]
    rows += [(f"DirectML stack: {k}", v) for k, v in meta_object(meta, "stack").items()]
    resumed = meta.get("resumed") or ""
    rows += [("command", meta.get("command", "")), ("started", meta.get("started", "")),
             ("finished", meta.get("finished", "")),
             ("resumed", ", ".join(map(str, resumed)) if isinstance(resumed, list) else resumed),
             ("selection", json.dumps(meta.get("selection", {}), sort_keys=True))]
    return "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>"
                   for k, v in rows if v not in ("", None))


# rows per piece of the page's list of all cases
_PIECE_ROWS = 512


_STATUS_CELLS = {s: f'<td class="{s.value}">{escape(s.value)}</td>' for s in Status}


def all_cases_row_texts(results: Sequence[CaseResult], ids: Sequence[str] | None = None) -> list[str]:
    """The row of each result in the page's list of all cases (its id, status, node provider
    and seconds); ``ids``: their case ids, when the caller has them."""
    if ids is None:
        ids = list(map(_CASE_ID_OF, results))
    if _HTML_SPECIAL.search("".join(ids)) is not None:  # rarely: these ids are escaped
        ids = [escape(case_id) for case_id in ids]
    providers = _PROVIDER_TEXTS
    cells = _STATUS_CELLS
    rows = []
    for r, case_id in zip(results, ids, strict=True):
        provider = providers.get(r.node_provider)
        if provider is None:
            if len(providers) >= 64:
                providers.clear()
            provider = providers[r.node_provider] = escape(r.node_provider)
        rows.append(f'<tr><td><code>{case_id}</code></td>{cells[r.status]}<td>{provider}</td>'
                    f'<td class="seconds">{r.seconds:.4f}</td></tr>')
    return rows


# the escaped text of each node provider seen
_PROVIDER_TEXTS: dict[str, str] = {}


def render_report_html(report: Report, *, strict: bool = False) -> str:
    """One self-contained page: a summary, the op x data type x rank matrix, and each failing
    case with its descriptors, layout picture and diagnosis.

    With ``strict`` the known issues and the unsupported cases are failing cases here as in
    JUnit and report.json: in the verdict, the matrix colours and the failing cases' list.

    Raises:
        ArgumentError: ``strict`` is not a bool (:func:`~ort_layouts.reports.report.checked_strict`).
    """
    return "".join(report_html_pieces(report, strict=strict))


def report_html_pieces(
    report: Report, *, strict: bool = False, rows: Sequence[str] | None = None, matrix: str | None = None,
    totals: Totals | None = None, sections: Callable[[CaseResult], str | None] | None = None,
) -> Iterator[str]:
    """:func:`render_report_html`'s page in pieces (the list of all cases a few hundred rows
    a piece).

    Args:
        rows: each result's row of the list of all cases (:func:`all_cases_row_texts`), made
            before (a run makes them as its results arrive); None: made here.
        matrix: the matrix (:meth:`MatrixTally.text`), made before; None: made here.
        totals: the report's totals, found before; None: found here.
        sections: a failing result's drawn section (:func:`failure_section_text`), when it
            was made before (None: made here).

    Raises:
        ArgumentError: ``strict`` is not a bool (:func:`~ort_layouts.reports.report.checked_strict`),
            when called, before any piece is made.
    """
    checked_strict(strict)
    return _report_html_pieces(report, strict, rows, matrix, totals, sections)


def _report_html_pieces(
    report: Report, strict: bool, rows: Sequence[str] | None, matrix: str | None, totals: Totals | None,
    sections: Callable[[CaseResult], str | None] | None,
) -> Iterator[str]:
    """:func:`report_html_pieces` once its arguments are checked."""
    if totals is None:
        totals = Totals.of(report)
    counts = totals.counts
    failures = totals.failures(strict=strict)
    known = totals.known_issues()
    unsupported = [r for r in totals.not_passed if r.status is Status.UNSUPPORTED]
    verdict_class = totals.verdict(strict=strict)
    verdict = verdict_class.upper()
    coverage = totals.coverage
    if not coverage.complete:
        run = f"{coverage.run} of {coverage.planned} cases run"
        verdict += f" (incomplete: {run})" if failures else f" ({run})"
    count_cells = "".join(f'<td class="{s}">{counts[s]}</td>' for s in counts)
    body = [
        "<h1>ort_layouts validation report</h1>",
        '<section id="summary"><h2>Summary</h2>',
        f'<p class="verdict {verdict_class}">{escape(verdict)}</p>',
        "<table class=\"counts\"><tr>" + "".join(f"<th>{s}</th>" for s in counts) + "<th>total</th></tr>"
        f"<tr>{count_cells}<td>{len(report.results)}</td></tr></table>",
        "<p>Unsupported cases (the provider could not build or place the node) and mismatches that a "
        "known provider deviation explains "
        + ("fail this run (--strict)." if strict else "do not fail this run.") + "</p>",
        f'<table class="environment">{_environment_rows(report.meta)}</table></section>',
        f'<section id="matrix"><h2>Matrix: op &times; data type &times; rank</h2>'
        f"{_matrix(report, strict=strict) if matrix is None else matrix}</section>",
        f'<section id="failures"><h2>Failing cases ({len(failures)})</h2>',
    ]
    if strict and failures:
        body.append("<p>With --strict the known issues and the unsupported cases are among them.</p>")
    if not failures:
        body.append("<p>None.</p>")
    for i, r in enumerate(failures):
        made = sections(r) if sections is not None and i < MAX_PICTURES else None
        body.append(_case_section(r, draw=i < MAX_PICTURES) if made is None else made)
    body.append("</section>")
    body.append(f'<section id="known"><h2>Known issues ({len(known)})</h2>')
    if known:
        body.append(_case_table(("diagnosis", "known issue"), known, lambda r: (r.diagnosis, r.known_issue),
                                detail=failure_text, anchor=not strict))
        for i, r in enumerate([k for k in known if k.recovered]):  # what each known deviation applied
            section = recovered_section(r, draw=i < MAX_PICTURES)
            body.append(f"<h3><code>{escape(r.case.id)}</code></h3>{section}")
    body.append("</section>")
    body.append(f'<section id="unsupported"><h2>Unsupported cases ({len(unsupported)})</h2>')
    if unsupported:
        body.append(_case_table(("reason",), unsupported, lambda r: (r.message,), anchor=not strict))
    body.append("</section>")
    body.append(f'<section id="all"><h2>All cases</h2><details><summary>{len(report.results)} cases</summary>'
                "<table><tr><th>case</th><th>status</th><th>node provider</th><th>seconds</th></tr>")
    where = f"{report.meta.get('provider', '')} {report.meta.get('device', '')}".strip()
    title = f"ort_layouts {verdict}: {where}"
    yield _page_head(title) + "\n".join(body)
    results = report.results
    for start in range(0, len(results), _PIECE_ROWS):
        yield "".join(all_cases_row_texts(results[start:start + _PIECE_ROWS]) if rows is None
                      else rows[start:start + _PIECE_ROWS])
    yield "</table></details></section>" + _PAGE_TAIL
