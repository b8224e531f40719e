"""Merge reports (one per GPU, driver or machine) into one compatibility matrix."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import case_anchor, escape, page
from ort_layouts.reports.report import (
    Report,
    atomic_write_text,
    failure_text,
    is_failure,
    load_report,
    now_iso,
)

__all__ = ["MATRIX_HTML", "MATRIX_JSON", "Column", "Matrix", "merge_reports", "write_matrix"]

MATRIX_JSON = "matrix.json"
MATRIX_HTML = "matrix.html"
_SHORT = {Status.PASS: "ok", Status.MISMATCH: "MISMATCH", Status.ERROR: "ERROR", Status.UNSUPPORTED: "unsup"}


@dataclasses.dataclass(frozen=True, slots=True)
class Column:
    """One merged report: a provider on a device (and driver) on a machine."""

    label: str
    source: str
    provider: str
    device: str
    driver: str
    hostname: str
    complete: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Matrix:
    """Case x report statuses.

    Attributes:
        columns: one per merged report, in the order given.
        cases: every case any report ran, in first-seen order.
        results: ``results[case_id][column_index]``: the result, or None where not run.
    """

    columns: tuple[Column, ...]
    cases: tuple[Case, ...]
    results: Mapping[str, tuple[CaseResult | None, ...]]

    def differing(self) -> tuple[str, ...]:
        """Ids of the cases whose status differs between the reports that ran them."""
        out = []
        for case in self.cases:
            statuses = {r.status for r in self.results[case.id] if r is not None}
            if len(statuses) > 1:
                out.append(case.id)
        return tuple(out)

    def groups(self) -> dict[tuple[str, str, int], list[Case]]:
        """Cases by (op, data type, rank): ops and data types in first-seen order, ranks rising."""
        groups: dict[tuple[str, str, int], list[Case]] = {}
        for c in self.cases:
            groups.setdefault((c.op, c.data_type.name.lower(), c.rank), []).append(c)
        ops = {op: i for i, op in enumerate(dict.fromkeys(k[0] for k in groups))}
        dtypes = {dt: i for i, dt in enumerate(dict.fromkeys(k[1] for k in groups))}
        return dict(sorted(groups.items(), key=lambda kv: (ops[kv[0][0]], dtypes[kv[0][1]], kv[0][2])))

    def group_cell(self, cases: Sequence[Case], column: int) -> dict[str, int]:
        counts = {s.value: 0 for s in Status} | {"not run": 0, "failed": 0, "known": 0}
        for c in cases:
            r = self.results[c.id][column]
            counts["not run" if r is None else r.status.value] += 1
            if r is not None and is_failure(r):
                counts["failed"] += 1
            elif r is not None and r.status is Status.MISMATCH:
                counts["known"] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "ort_layouts.matrix/1",
            "created": now_iso(),
            "columns": [dataclasses.asdict(c) for c in self.columns],
            "cases": [
                {"id": c.id, "case": c.to_dict(),
                 "results": [None if r is None else _cell(r) for r in self.results[c.id]]}
                for c in self.cases],
            "differing": list(self.differing()),
        }

    def text_table(self) -> str:
        """A text table: one row per op / data type / rank, one column per report; a cell is
        ``passed/cases`` followed by the number of failures (F), unsupported (U), not run (-)."""
        header = ["op", "dtype", "rank", *[f"[{i + 1}]" for i in range(len(self.columns))]]
        rows = [header]
        for (op, dt, rank), cases in self.groups().items():
            row = [op, dt, str(rank)]
            for i in range(len(self.columns)):
                n = self.group_cell(cases, i)
                ran = len(cases) - n["not run"]
                cell = f"{n['pass']}/{ran}" if ran else "-"
                bad = n["failed"]
                cell += f" {bad}F" if bad else ""
                cell += f" {n['known']}K" if n["known"] else ""
                cell += f" {n['unsupported']}U" if n["unsupported"] else ""
                cell += f" {n['not run']}-" if ran and n["not run"] else ""
                row.append(cell)
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines.append("")
        lines += [f"[{i + 1}] {c.label}" + ("" if c.complete else " (incomplete)")
                  for i, c in enumerate(self.columns)]
        lines.append("cells: passed/run, F = errors and unexplained mismatches, K = known issues, "
                     "U = unsupported, - = not run")
        differing = self.differing()
        lines.append(f"{len(differing)} of {len(self.cases)} cases differ between reports")
        lines += [f"  {cid}: " + ", ".join(
            f"[{i + 1}] {'-' if r is None else _SHORT[r.status]}" for i, r in enumerate(self.results[cid]))
            for cid in differing[:20]]
        if len(differing) > 20:
            lines.append(f"  ... and {len(differing) - 20} more (see {MATRIX_JSON})")
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        cols = "".join(f"<th>[{i + 1}]</th>" for i in range(len(self.columns)))
        legend = "".join(f"<li>[{i + 1}] {escape(c.label)} <small>({escape(c.source)})</small>"
                         + ("" if c.complete else " <b>incomplete</b>") + "</li>"
                         for i, c in enumerate(self.columns))
        body = ["<h1>ort_layouts compatibility matrix</h1>", f'<ol class="columns">{legend}</ol>',
                '<section id="matrix"><h2>op &times; data type &times; rank</h2>'
                f'<table class="matrix"><tr><th>op</th><th>data type</th><th>rank</th>{cols}</tr>']
        for (op, dt, rank), cases in self.groups().items():
            cells = []
            for i in range(len(self.columns)):
                n = self.group_cell(cases, i)
                ran = len(cases) - n["not run"]
                cls = ("none" if not ran else "fail" if n["failed"] else "known" if n["known"] else
                       "pass" if n["pass"] == ran else "unsupported" if not n["pass"] else "partial")
                title = ", ".join(f"{v} {k}" for k, v in n.items() if v and k != "failed")
                cells.append(f'<td class="cell {cls}" title="{escape(title)}">'
                             f"{n['pass']}/{ran}</td>" if ran else '<td class="cell none">&mdash;</td>')
            body.append(f"<tr><td>{escape(op)}</td><td>{escape(dt)}</td><td>{rank}</td>{''.join(cells)}</tr>")
        body.append("</table></section>")
        differing = self.differing()
        body.append(f'<section id="differing"><h2>Cases that differ ({len(differing)})</h2>')
        if differing:
            body.append(f'<table><tr><th>case</th>{cols}</tr>')
            for cid in differing:
                cells = []
                for r in self.results[cid]:
                    if r is None:
                        cells.append('<td class="none">not run</td>')
                    else:
                        cells.append(f'<td class="{r.status.value}" title="{escape(failure_text(r))}">'
                                     f"{escape(r.status.value)}</td>")
                body.append(f'<tr id="{escape(case_anchor(cid))}"><td><code>{escape(cid)}</code></td>'
                            f'{"".join(cells)}</tr>')
            body.append("</table>")
        body.append("</section>")
        return page("ort_layouts compatibility matrix", "\n".join(body))


def _cell(r: CaseResult) -> dict[str, Any]:
    d: dict[str, Any] = {"status": r.status.value}
    for key in ("node_provider", "mismatch_count", "first_mismatch_index", "diagnosis", "known_issue",
                "message"):
        value = getattr(r, key)
        if value not in (None, "", 0):
            d[key] = list(value) if isinstance(value, tuple) else value
    return d


def _label(report: Report) -> tuple[str, str, str, str]:
    meta = report.meta
    provider = str(meta.get("provider", "") or "?")
    device = str(meta.get("device", "") or next((r.device for r in report.results if r.device), ""))
    driver = str(meta.get("driver", "") or "")
    host = str((meta.get("environment") or {}).get("hostname", "") or "")
    return provider, device, driver, host


def merge_reports(sources: Sequence[str | os.PathLike[str] | Report]) -> Matrix:
    """Merge report directories, report.json files or Report objects into a Matrix.

    Raises:
        ReportError: no sources, or one that cannot be read.
    """
    if not sources:
        raise ReportError("nothing to merge: give at least one report directory or JSON file")
    reports: list[tuple[str, Report]] = []
    for src in sources:
        if isinstance(src, Report):
            reports.append(("<report>", src))
        else:
            reports.append((str(src), load_report(src)))
    columns: list[Column] = []
    seen: dict[str, int] = {}
    for source, rep in reports:
        provider, device, driver, host = _label(rep)
        label = " / ".join(v for v in (provider, device, driver, host) if v)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label += f" #{seen[label]}"
        columns.append(Column(label, source, provider, device, driver, host, rep.complete))
    cases: dict[str, Case] = {}
    table: dict[str, list[CaseResult | None]] = {}
    for i, (_, rep) in enumerate(reports):
        for r in rep.results:
            cases.setdefault(r.case.id, r.case)
            table.setdefault(r.case.id, [None] * len(reports))[i] = r
    return Matrix(tuple(columns), tuple(cases.values()), {k: tuple(v) for k, v in table.items()})


def write_matrix(matrix: Matrix, directory: str | os.PathLike[str]) -> dict[str, Path]:
    """Write matrix.json and matrix.html into ``directory`` (created if missing), atomically."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ReportError(f"output directory {str(out)!r} is a file")
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / MATRIX_JSON, "html": out / MATRIX_HTML}
    atomic_write_text(paths["json"], json.dumps(matrix.to_dict(), indent=1) + "\n")
    atomic_write_text(paths["html"], matrix.to_html())
    return paths
