"""Merge reports: one per GPU, driver or machine into one compatibility matrix
(:func:`merge_reports`), or the N shards of one run into the one report the run would have
made unsharded (:func:`merge_shards`).

A shard ``--shard K/N`` of a run takes the cases K, K + N, K + 2N... of its selection and
writes its report into ``shard-K-of-N/`` under the run's report directory. The shards of one
run have equal selections but for the shard, the same provider, device, driver and package
versions, and no ``--limit`` (it applies to each shard, so no single run has their union).
:func:`merge_shards` checks all of that, takes the planned cases back into the selection's
order (shard K's i-th case is the run's case ``i * N + K - 1``) and writes one report: its
``results.jsonl``, ``report.json``, ``junit.xml`` and ``report.html`` are those of the
unsharded run but for timings, its ``meta.json`` names the command of that run (the shards'
command without ``--shard``), and ``shards.json`` lists where each shard ran.

Reports of DirectML runs through the worker carry the DirectML release that was loaded
(``meta["stack"]["directml_version"]``, read by the worker from the loaded ``DirectML.dll``); a
column's label names it, so reports of one suite under several releases merge into a release
matrix, and :meth:`Matrix.bisect` says, for each case whose status differs, the first release
where it changed and the diagnosis there (:meth:`Matrix.bisect_groups`: the same, one line per op
and change). ``validate --provider dml --dml-version V1,V2,... --report DIR`` writes each
release's report into ``DIR/dml-<V>/`` and this matrix into ``DIR`` (:func:`write_matrix` with
``matrix.txt``).

Each column records the versions that made its report (:class:`Column`: the ONNX Runtime that ran
it, ort_layouts, a worker run's DirectML stack); columns of one provider, device and machine are
labelled by the versions that tell them apart.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ort_layouts._errors import ArgumentError, ReportError, a_type, path_argument
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.session import selection_differences
from ort_layouts.engine.suite import list_argument
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import case_anchor, escape, page
from ort_layouts.reports.lock import DirectoryLock, holding_as, made_directory
from ort_layouts.reports.report import (
    META_FILE,
    RAN_ON_KEYS,
    RESULTS_FILE,
    SHARDS_FILE,
    Report,
    atomic_write_text,
    atomic_write_texts,
    checked_bool,
    failure_text,
    foreign_result,
    is_failure,
    load_report,
    meta_object,
    now_iso,
    ran_onnxruntime,
    read_meta,
    read_numbered_results,
    signals_held,
)
from ort_layouts.reports.writer import ReportWriter

__all__ = [
    "MATRIX_HTML",
    "MATRIX_JSON",
    "MATRIX_TEXT",
    "SHARDS_FILE",
    "Change",
    "ChangeGroup",
    "Column",
    "Matrix",
    "Overlap",
    "find_shards",
    "merge_reports",
    "merge_shards",
    "shard_directory",
    "write_matrix",
]

_SHARD_DIR = re.compile(r"shard-(\d+)-of-(\d+)")

MATRIX_JSON = "matrix.json"
MATRIX_HTML = "matrix.html"
MATRIX_TEXT = "matrix.txt"
_UNSUPPORTED_OK = "unsupported, not failed"  # group_cell: unsupported cases that are no failures
_SHORT = {Status.PASS: "ok", Status.MISMATCH: "MISMATCH", Status.ERROR: "ERROR", Status.UNSUPPORTED: "unsup"}


@dataclasses.dataclass(frozen=True, slots=True)
class Column:
    """One merged report: a provider on a device (and driver) on a machine, with the versions
    that ran it.

    ``strict``: the report's run had ``--strict`` (its meta's ``strict``): its known issues and
    unsupported cases are failures in its cells, as in its own summaries.

    ``onnxruntime``: the ONNX Runtime that ran the cases: for a DirectML run through the worker
    the worker's (``meta["stack"]["ort_version"]``), else the one the run imported (the meta's
    ``environment.versions``); ``ort_layouts``: the package's version there; ``versions``: every
    package version the meta records; ``stack``: the DirectML stack a worker run ran on
    (``meta["stack"]``: DirectML, vkd3d, Wine, the Vulkan driver, the adapter), {} for another
    run. "" or {} where the report does not record them.
    """

    label: str
    source: str
    provider: str
    device: str
    driver: str
    hostname: str
    complete: bool
    directml_version: str = ""
    strict: bool = False
    onnxruntime: str = ""
    ort_layouts: str = ""
    versions: Mapping[str, str] = dataclasses.field(default_factory=dict, hash=False)
    stack: Mapping[str, Any] = dataclasses.field(default_factory=dict, hash=False)

    def version_parts(self) -> list[tuple[str, str]]:
        """The versions that ran the column, as (name, version) in the order the legend and a
        label name them ("" where unknown): ONNX Runtime, ort_layouts, then the DirectML stack's
        D3D12, Wine and Vulkan driver, for a column with a stack."""
        parts = [("onnxruntime", self.onnxruntime), ("ort_layouts", self.ort_layouts)]
        if self.stack:
            parts += [(name, str(self.stack.get(key, "") or "")) for key, name in _STACK_PARTS]
        return parts

    def versions_text(self) -> str:
        """The versions that ran the column, in words: ``onnxruntime 1.32.0, ort_layouts 0.1.0``;
        for a DirectML run through the worker its stack too; "versions not recorded" where the
        report holds none."""
        known = ", ".join(f"{name} {v}" for name, v in self.version_parts()[:2] if v)
        if self.stack:
            directml = f"DirectML {self.directml_version}" if self.directml_version else ""
            named = [f"{name} {v}" for name, v in self.version_parts()[2:] if v]
            stack = ", ".join([directml, *named] if directml else named)
            error = str(self.stack.get("error", "") or "")
            stack = stack or (f"unknown ({error})" if error else "not recorded")
            known += ("; " if known else "") + f"DirectML stack: {stack}"
        return known or "versions not recorded"


# the DirectML stack's fields (meta["stack"]) that tell two stacks of one DirectML release apart,
# with their names in a label and a legend
_STACK_PARTS = (("d3d12", "D3D12"), ("wine_version", "Wine"), ("vulkan_driver", "Vulkan"))


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"\d+", version))


@dataclasses.dataclass(frozen=True, slots=True)
class Change:
    """Where a case's status changed along the DirectML releases (:meth:`Matrix.bisect`).

    Attributes:
        case_id: the case.
        before_version, before_status: the last release before the change and its status there.
        version, status: the first release with the new status.
        diagnosis: what that release's result says (its failure text, or "" when it passed).
        before_diagnosis: what the release before said (its failure text, or "" when it passed).
        line: the provider, device and machine whose releases changed ("" where the merged
            releases ran on one only; :meth:`Matrix.bisect`).
    """

    case_id: str
    before_version: str
    before_status: str
    version: str
    status: str
    diagnosis: str
    before_diagnosis: str = ""
    line: str = ""

    def __str__(self) -> str:
        why = f": {self.diagnosis}" if self.diagnosis else ""
        was = f" (was: {_shorten(self.before_diagnosis, 200)})" if self.before_diagnosis and not why else ""
        return (f"{self.case_id}: {self.before_status} on DirectML {self.before_version}, "
                f"{self.status} from {self.version}{_on_line(self.line)}{why}{was}")


def _line_of(column: Column) -> tuple[tuple[Any, ...], str]:
    """What a column's DirectML release is compared along (:meth:`Matrix.release_lines`): its
    provider, device (the release's number taken out of it: a worker run's device names it),
    driver, machine and DirectML stack but the release's own fields (``directml_*``); and its
    name."""
    c = column
    device = c.device.replace(c.directml_version, "")  # (a column with no release: replace("", "") keeps it)
    stack = tuple(sorted((k, str(v)) for k, v in c.stack.items() if not k.startswith("directml_")))
    name = str(c.stack.get("adapter_name") or "") or c.device or "?"  # (a worker's device names its release)
    return ((c.provider, device, c.driver, c.hostname, stack),
            " on ".join(p for p in (name, c.driver, c.hostname) if p) + f" ({c.provider})")


def _on_line(line: str) -> str:
    """" on LINE" for a change of one of several lines of releases (:attr:`Change.line`)."""
    return f" on {line}" if line else ""


def _cases(n: int) -> str:
    """``n`` cases, in words: "1 case", "3 cases"."""
    return f"{n} case{'' if n == 1 else 's'}"


@dataclasses.dataclass(frozen=True, slots=True)
class ChangeGroup:
    """The changes of :meth:`Matrix.bisect` that one op (in one mode, for the ops that have
    modes: Pad, DepthToSpace) made alike: the same statuses on the same two neighbouring releases
    (:meth:`Matrix.bisect_groups`).

    Attributes:
        op: the op of every case.
        mode: their mode ("" for an op without one, or the op's default).
        before_version, before_status, version, status: as in :class:`Change`.
        case_ids: the cases, in the matrix's order.
        dtypes: their data types, in first-seen order.
        diagnosis, before_diagnosis: the first case's (:class:`Change`).
        line: as in :class:`Change`.
    """

    op: str
    mode: str
    before_version: str
    before_status: str
    version: str
    status: str
    case_ids: tuple[str, ...]
    dtypes: tuple[str, ...]
    diagnosis: str
    before_diagnosis: str
    line: str = ""

    def __str__(self) -> str:
        why = (f": {_shorten(self.diagnosis)}" if self.diagnosis
               else f" (was: {_shorten(self.before_diagnosis)})" if self.before_diagnosis else "")
        mode = f" mode {self.mode}" if self.mode else ""
        return (f"{self.op}{mode} ({_cases(len(self.case_ids))}; {', '.join(self.dtypes)}): "
                f"{self.before_status} on DirectML {self.before_version}, {self.status} from {self.version}"
                f"{_on_line(self.line)}; e.g. {self.case_ids[0]}{why}")


def _shorten(text: str, limit: int = 300) -> str:
    """``text`` cut in the middle to at most about ``limit`` characters: ONNX Runtime's messages
    name the failing call at their end (``... 80070057 Invalid parameter``)."""
    if len(text) <= limit:
        return text
    tail = limit * 2 // 3
    return f"{text[:limit - tail - 5]} ... {text[-tail:]}"


@dataclasses.dataclass(frozen=True, slots=True)
class Overlap:
    """Which cases the merged reports share (:meth:`Matrix.overlap`): a case's statuses are
    compared between the reports that ran it, so only the cases of two reports or more are
    compared; the others are no agreement.

    Attributes:
        per_column: the cases each report ran, in column order.
        cases: the cases any report ran.
        in_every: the cases every report ran.
        compared: the cases two reports or more ran (all of them with one report: none).
        differing: the compared cases whose status differs (:meth:`Matrix.differing`).
    """

    per_column: tuple[int, ...]
    cases: int
    in_every: int
    compared: int
    differing: int

    @property
    def not_compared(self) -> int:
        """The cases of one report only."""
        return self.cases - self.compared

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "per_column": list(self.per_column),
                "not_compared": self.not_compared}

    def lines(self) -> list[str]:
        """Two lines: how many cases each report has and how many all share; how many of those
        that two reports or more ran differ, and how many were not compared."""
        columns = ", ".join(f"[{i + 1}] {n}" for i, n in enumerate(self.per_column))
        if len(self.per_column) < 2:
            return [f"cases: {columns}", "one report: no case is compared"]
        head = f"cases: {columns}; {self.cases} in all, {self.in_every} in every report"
        if not self.cases:
            return [head, "no report holds a case: nothing is compared"]
        if not self.compared:
            return [head, f"no case was run by two reports or more: nothing is compared "
                          f"({_cases(self.cases)} run by one report only)"]
        verb = "differs" if self.compared == 1 else "differ"
        line = f"{self.differing} of {_cases(self.compared)} run by two reports or more {verb} between them"
        if self.not_compared:
            line += (f"; {_cases(self.not_compared)} run by one report only "
                     f"{'is' if self.not_compared == 1 else 'are'} not compared")
        return [head, line]


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

    def overlap(self) -> Overlap:
        """How many cases each report ran, all share, and were compared (:class:`Overlap`)."""
        n = len(self.columns)
        per_column = [0] * n
        in_every = compared = 0
        for case in self.cases:
            ran = 0
            for i, r in enumerate(self.results[case.id]):
                if r is not None:
                    per_column[i] += 1
                    ran += 1
            in_every += ran == n
            compared += ran >= 2
        return Overlap(tuple(per_column), len(self.cases), in_every, compared, len(self.differing()))

    def groups(self) -> dict[tuple[str, str, int], list[Case]]:
        """Cases by (op, data type, rank): ops and data types in first-seen order, ranks rising."""
        groups: dict[tuple[str, str, int], list[Case]] = {}
        for c in self.cases:
            groups.setdefault((c.op, c.data_type.name.lower(), c.rank), []).append(c)
        ops = {op: i for i, op in enumerate(dict.fromkeys(k[0] for k in groups))}
        dtypes = {dt: i for i, dt in enumerate(dict.fromkeys(k[1] for k in groups))}
        return dict(sorted(groups.items(), key=lambda kv: (ops[kv[0][0]], dtypes[kv[0][1]], kv[0][2])))

    def group_cell(self, cases: Sequence[Case], column: int) -> dict[str, int]:
        """How the ``cases`` went in a column: their count per status, "not run", "failed" (the
        failures, as the column's report counts them: with its ``--strict`` also its known
        issues and unsupported cases), "known" (the known issues that are not failures) and
        "unsupported, not failed" (those that are not failures, the cell's U)."""
        strict = self.columns[column].strict
        counts = {s.value: 0 for s in Status} | {"not run": 0, "failed": 0, "known": 0, _UNSUPPORTED_OK: 0}
        for c in cases:
            r = self.results[c.id][column]
            counts["not run" if r is None else r.status.value] += 1
            if r is not None and is_failure(r, strict=strict):
                counts["failed"] += 1
            elif r is not None and r.status is Status.MISMATCH:
                counts["known"] += 1
            elif r is not None and r.status is Status.UNSUPPORTED:
                counts[_UNSUPPORTED_OK] += 1
        return counts

    def release_lines(self) -> dict[str, dict[str, int]]:
        """The DirectML releases of each line of columns that ran them: one provider on one
        device (and driver) on one machine, the only columns whose releases compare (a worker
        run's device is its stack but the DirectML release: its adapter, D3D12, Wine and Vulkan
        driver). By line (its device and machine, "" where one line holds all the releases
        merged), each release the line ran to its first column; lines of fewer than two
        releases are left out."""
        lines: dict[tuple[Any, ...], dict[str, int]] = {}
        names: dict[tuple[Any, ...], str] = {}
        for i, c in enumerate(self.columns):
            if c.directml_version:
                key, name = _line_of(c)
                lines.setdefault(key, {}).setdefault(c.directml_version, i)
                names.setdefault(key, name)
        kept = {key: order for key, order in lines.items() if len(order) > 1}
        if len(kept) == 1:
            return {"": next(iter(kept.values()))}
        out: dict[str, dict[str, int]] = {}
        for key, order in kept.items():
            name = names[key]
            out[name if name not in out else f"{name} #{len(out) + 1}"] = order
        return out

    def bisect(self) -> tuple[Change, ...]:
        """For each case whose status changes along the DirectML releases one line of columns
        ran (:meth:`release_lines`: one provider, device and machine; oldest release first; a
        release run twice there counts once, first column wins), each change: the first
        release with the new status and its diagnosis. Columns of other devices or machines are
        never compared: a difference between devices is no change between releases."""
        out: list[Change] = []
        for line, order in self.release_lines().items():
            releases = sorted(order, key=_version_key)
            for case in self.cases:
                row = self.results[case.id]
                seen = [(v, row[order[v]]) for v in releases if row[order[v]] is not None]
                for (v0, r0), (v1, r1) in itertools.pairwise(seen):
                    assert r0 is not None and r1 is not None
                    if r0.status is not r1.status:
                        diagnosis = "" if r1.status is Status.PASS else " ".join(failure_text(r1).split())
                        before = "" if r0.status is Status.PASS else " ".join(failure_text(r0).split())
                        out.append(Change(case.id, v0, _SHORT[r0.status], v1, _SHORT[r1.status], diagnosis,
                                          before, line))
        return tuple(out)

    def bisect_groups(self, changes: Sequence[Change] | None = None) -> tuple[ChangeGroup, ...]:
        """:meth:`bisect`'s changes (``changes``, where the caller has them already) grouped by
        op and mode and by the change (the two releases and the two statuses), in the order of
        their first case."""
        cases = {c.id: c for c in self.cases}
        groups: dict[tuple[str, str, str, str, str, str, str], list[Change]] = {}
        for change in self.bisect() if changes is None else changes:
            case = cases[change.case_id]
            key = (case.op, case.mode, change.before_version, change.before_status, change.version,
                   change.status, change.line)
            groups.setdefault(key, []).append(change)
        return tuple(
            ChangeGroup(op, mode, v0, s0, v1, s1, tuple(c.case_id for c in changes),
                        tuple(dict.fromkeys(cases[c.case_id].data_type.name.lower() for c in changes)),
                        changes[0].diagnosis, changes[0].before_diagnosis, line)
            for (op, mode, v0, s0, v1, s1, line), changes in groups.items())

    def bisect_lines(self, *, cases: int = 50) -> list[str]:
        """The bisect summary as text: a head line, one line per :class:`ChangeGroup`, then up to
        ``cases`` changes one by one ("no difference found" when nothing changed); [] unless
        two DirectML releases or more ran on one line of columns (:meth:`release_lines`)."""
        ran = self.release_lines()
        if not ran:
            return []
        changes = self.bisect()
        releases = sorted({v for order in ran.values() for v in order}, key=_version_key)
        lines = [f"bisect over DirectML releases: {len(changes)} change{'' if len(changes) == 1 else 's'}"
                 + ("" if changes else " (no difference found)") + f" across {', '.join(releases)}"]
        lines += [f"  {g}" for g in self.bisect_groups(changes)]
        if cases:
            lines += [f"  {c}" for c in changes[:cases]]
            if len(changes) > cases:
                lines.append(f"  ... and {len(changes) - cases} more (see {MATRIX_JSON})")
        return lines

    def to_dict(self) -> dict[str, Any]:
        changes = self.bisect()
        return {
            "schema": "ort_layouts.matrix/1",
            "created": now_iso(),
            "columns": [dataclasses.asdict(c) for c in self.columns],
            "cases": [
                {"id": c.id, "case": c.to_dict(),
                 "results": [None if r is None else _cell(r) for r in self.results[c.id]]}
                for c in self.cases],
            "overlap": self.overlap().to_dict(),
            "differing": list(self.differing()),
            "bisect": [dataclasses.asdict(c) for c in changes],
            "bisect_groups": [dataclasses.asdict(g) for g in self.bisect_groups(changes)],
        }

    def text_table(self) -> str:
        """A text table: one row per op / data type / rank, one column per report; a cell is
        ``passed/cases`` followed by the number of failures (F), known issues (K), unsupported
        (U) and not run (-); in the column of a ``--strict`` report the known issues and the
        unsupported cases are among the failures, as in its own summaries."""
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
                cell += f" {n[_UNSUPPORTED_OK]}U" if n[_UNSUPPORTED_OK] else ""
                cell += f" {n['not run']}-" if ran and n["not run"] else ""
                row.append(cell)
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines.append("")
        for i, c in enumerate(self.columns):
            lines.append(f"[{i + 1}] {c.label}" + (" (strict)" if c.strict else "")
                         + ("" if c.complete else " (incomplete)"))
            lines.append(f"    {c.versions_text()}")
        strict = (" (and in a strict report's column its known issues and unsupported cases)"
                  if any(c.strict for c in self.columns) else "")
        lines.append(f"cells: passed/run, F = errors and unexplained mismatches{strict}, K = known issues, "
                     "U = unsupported, - = not run")
        differing = self.differing()
        lines += self.overlap().lines()
        lines += [f"  {cid}: " + ", ".join(
            f"[{i + 1}] {'-' if r is None else _SHORT[r.status]}" for i, r in enumerate(self.results[cid]))
            for cid in differing[:20]]
        if len(differing) > 20:
            lines.append(f"  ... and {len(differing) - 20} more (see {MATRIX_JSON})")
        lines += self.bisect_lines()
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        cols = "".join(f'<th title="{escape(c.label)}: {escape(c.versions_text())}">[{i + 1}]</th>'
                       for i, c in enumerate(self.columns))
        legend = "".join(f"<li>[{i + 1}] {escape(c.label)} <small>({escape(c.source)})</small>"
                         + (" <b>strict</b>" if c.strict else "")
                         + ("" if c.complete else " <b>incomplete</b>")
                         + f'<br><span class="versions">{escape(c.versions_text())}</span></li>'
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
                title = ", ".join(f"{v} {k}" for k, v in n.items()
                                  if v and k not in ("failed", _UNSUPPORTED_OK))
                cells.append(f'<td class="cell {cls}" title="{escape(title)}">'
                             f"{n['pass']}/{ran}</td>" if ran else '<td class="cell none">&mdash;</td>')
            body.append(f"<tr><td>{escape(op)}</td><td>{escape(dt)}</td><td>{rank}</td>{''.join(cells)}</tr>")
        body.append("</table></section>")
        differing = self.differing()
        body.append(f'<section id="differing"><h2>Cases that differ ({len(differing)})</h2>')
        body.append('<p class="overlap">' + "<br>".join(map(escape, self.overlap().lines())) + "</p>")
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
        if self.release_lines():
            changes = self.bisect()
            body.append(f'<section id="bisect"><h2>Changes between DirectML releases ({len(changes)})</h2>')
            groups = self.bisect_groups(changes)
            if groups:
                body.append("<h3>By op</h3><ul>" + "".join(f"<li>{escape(str(g))}</li>" for g in groups)
                            + "</ul><h3>By case</h3>")
            body.append("<ul>" + "".join(f"<li>{escape(str(c))}</li>" for c in changes) + "</ul>"
                        if changes else "<p>no difference found</p>")
            body.append("</section>")
        return page("ort_layouts compatibility matrix", "\n".join(body))


def _cell(r: CaseResult) -> dict[str, Any]:
    d: dict[str, Any] = {"status": r.status.value}
    for key in ("node_provider", "mismatch_count", "first_mismatch_index", "diagnosis", "known_issue",
                "message", "recovered"):
        value = getattr(r, key)
        if value not in (None, "", 0, {}):
            d[key] = list(value) if isinstance(value, tuple) else value
    return d


def _directml_version(report: Report) -> str:
    """The DirectML release a worker run loaded (``meta["stack"]["directml_version"]``)."""
    return str(meta_object(report.meta, "stack").get("directml_version", "") or "")


def _label(report: Report) -> tuple[str, str, str, str]:
    meta = report.meta
    provider = str(meta.get("provider", "") or "?")
    device = str(meta.get("device", "") or next((r.device for r in report.results if r.device), ""))
    driver = str(meta.get("driver", "") or "")
    host = str(meta_object(meta, "environment").get("hostname", "") or "")
    return provider, device, driver, host


def _distinct_labels(columns: Sequence[Column]) -> list[Column]:
    """``columns``, where several share a label, each of them labelled with the versions that
    tell them apart (``... / vm / onnxruntime 1.31.0``); those the versions do not tell apart
    numbered after the first (``#2``)."""
    same: dict[str, list[int]] = {}
    for i, c in enumerate(columns):
        same.setdefault(c.label, []).append(i)
    labels = [c.label for c in columns]
    for members in same.values():
        if len(members) < 2:
            continue
        parts = [columns[i].version_parts() for i in members]
        names = list(dict.fromkeys(name for p in parts for name, _ in p))
        values = [dict(p) for p in parts]
        differ = [n for n in names if len({v.get(n, "") for v in values}) > 1]
        for i, v in zip(members, values, strict=True):
            labels[i] = " / ".join([labels[i], *(f"{n} {v.get(n) or '?'}" for n in differ)])
    seen: dict[str, int] = {}
    out = []
    for c, label in zip(columns, labels, strict=True):
        seen[label] = seen.get(label, 0) + 1
        out.append(dataclasses.replace(c, label=label if seen[label] == 1 else f"{label} #{seen[label]}"))
    return out


def merge_reports(sources: Sequence[str | os.PathLike[str] | Report]) -> Matrix:
    """Merge report directories, report.json files or Report objects into a Matrix.

    Raises:
        ReportError: no sources; ``sources`` given as one str (a list of one is
            ``[source]``) or no iterable, or holding an item that is no path or Report (None);
            a source that cannot be read.
    """
    listed = list_argument(sources, "sources", "report directories", ReportError, example="['report']",
                           of_str=True)
    if not listed:
        raise ReportError("nothing to merge: give at least one report directory or JSON file")
    for k, src in enumerate(listed):
        if not isinstance(src, Report):
            path_argument(src, f"sources[{k}]", "a report directory or report.json file (a str or "
                          "os.PathLike), or a Report", ReportError)
    reports: list[tuple[str, Report]] = []
    for src in listed:
        if isinstance(src, Report):
            reports.append(("<report>", src))
        else:
            reports.append((str(src), load_report(src)))
    columns: list[Column] = []
    for source, rep in reports:
        provider, device, driver, host = _label(rep)
        directml = _directml_version(rep)
        label = " / ".join(v for v in (f"DirectML {directml}" if directml else "", provider, device,
                                        driver, host) if v)
        stack = dict(meta_object(rep.meta, "stack"))
        versions = {str(k): str(v) for k, v in meta_object(meta_object(rep.meta, "environment"),
                                                            "versions").items()}
        columns.append(Column(label, source, provider, device, driver, host, rep.complete, directml,
                              rep.strict, ran_onnxruntime(rep.meta), versions.get("ort_layouts", ""),
                              versions, stack))
    columns = _distinct_labels(columns)
    cases: dict[str, Case] = {}
    table: dict[str, list[CaseResult | None]] = {}
    for i, (_, rep) in enumerate(reports):
        for r in rep.results:
            cases.setdefault(r.case.id, r.case)
            table.setdefault(r.case.id, [None] * len(reports))[i] = r
    return Matrix(tuple(columns), tuple(cases.values()), {k: tuple(v) for k, v in table.items()})


def write_matrix(matrix: Matrix, directory: str | os.PathLike[str], *, text: bool = False) -> dict[str, Path]:
    """Write matrix.json and matrix.html (and, with ``text``, matrix.txt: :meth:`Matrix.text_table`)
    into ``directory`` (created if missing), atomically and together: each is made before any
    replaces the one there (and before the directory is made), so an interrupted or failed write
    leaves the earlier ones whole.

    Raises:
        ArgumentError: ``matrix`` is not a :class:`Matrix`, or ``text`` not a bool: nothing is made.
        ReportError: ``directory`` is no path (None), empty, or a file.
    """
    if not isinstance(matrix, Matrix):
        raise ArgumentError(f"matrix {matrix!r:.60} is {a_type(matrix)}, not a Matrix; valid: a Matrix, e.g. "
                            "merge_reports(['report-a', 'report-b'])")
    checked_bool(text, "text", true="matrix.txt too")
    out = path_argument(directory, "directory", "the directory to write into (a str or os.PathLike)",
                        ReportError)
    if out.exists() and not out.is_dir():
        raise ReportError(f"output directory {str(out)!r} is a file")
    paths = {"json": out / MATRIX_JSON, "html": out / MATRIX_HTML}
    files: list[tuple[str | os.PathLike[str], str]] = [
        (paths["json"], json.dumps(matrix.to_dict(), indent=1) + "\n"), (paths["html"], matrix.to_html())]
    if text:
        paths["text"] = out / MATRIX_TEXT
        files.append((paths["text"], matrix.text_table()))
    with made_directory(out):  # a write that fails (a full disk) into a directory it made leaves none
        atomic_write_texts(files)
    return paths


# ---- shards ----------------------------------------------------------------------------------
def shard_directory(report_dir: str | os.PathLike[str], shard: tuple[int, int]) -> Path:
    """Where shard K of N of a run whose report directory is ``report_dir`` writes its report:
    ``report_dir/shard-K-of-N``."""
    return Path(report_dir) / f"shard-{shard[0]}-of-{shard[1]}"


def find_shards(sources: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The shard report directories that ``sources`` name: each source is a shard's report
    directory, or a run's report directory holding ``shard-K-of-N/`` directories (all of them
    are taken).

    Raises:
        ReportError: ``sources`` given as one str (a list of one is ``[source]``) or no
            iterable, or holding an item that is no path (None); a source that does not exist,
            or one that is neither.
    """
    listed = list_argument(sources, "sources", "shard report directories", ReportError,
                           example="['report']", of_str=True) or []
    valid = "a shard's report directory, or the run's report directory holding them (a str or os.PathLike)"
    paths = [path_argument(src, f"sources[{k}]", valid, ReportError) for k, src in enumerate(listed)]
    found: list[Path] = []
    for p in paths:
        if not p.is_dir():
            raise ReportError(f"shard report {str(p)!r} is not a directory" if p.exists()
                              else f"shard report {str(p)!r} does not exist")
        if (p / META_FILE).is_file() and (read_meta(p / META_FILE).get("selection") or {}).get("shard"):
            found.append(p)
            continue
        inner = sorted((d for d in p.iterdir() if d.is_dir() and _SHARD_DIR.fullmatch(d.name)),
                       key=lambda d: tuple(int(v) for v in _SHARD_DIR.fullmatch(d.name).groups()))  # type: ignore[union-attr]
        if not inner:
            raise ReportError(f"{str(p)!r} is not a shard's report directory and holds no shard-K-of-N "
                              "directories (made by validate --shard K/N --report DIR)")
        found.extend(inner)
    return found


@dataclasses.dataclass(frozen=True, slots=True)
class _Shard:
    directory: Path
    index: int
    count: int
    meta: dict[str, Any]
    results: list[CaseResult]
    lines: list[int]  # the results.jsonl line of each result, for a message that names it


def _read_shard(directory: Path) -> _Shard:
    """A shard's report, read while no run writes it (its lock taken for the read).

    Raises:
        ReportError: not a shard's report directory, a damaged one, or one a run still writes (a
            retry of that shard, say); the message names it.
    """
    meta_path, results_path = directory / META_FILE, directory / RESULTS_FILE
    if not meta_path.is_file() or not results_path.is_file():
        raise ReportError(f"{str(directory)!r} is not a report directory: it needs {META_FILE} and "
                          f"{RESULTS_FILE}")
    try:
        lock = DirectoryLock(directory, command="ort-layouts merge --shards")
    except ReportError as e:
        raise ReportError(f"shard {str(directory)!r} cannot be merged yet: {e}") from None
    except OSError:  # a shard this user cannot write (copied read-only): no run writes it either
        lock = None
    try:
        meta = read_meta(meta_path)
        numbered = read_numbered_results(results_path)
    finally:
        if lock is not None:
            lock.release()
    shard = str((meta.get("selection") or {}).get("shard") or "")
    match = re.fullmatch(r"(\d+)/(\d+)", shard)
    if match is None:
        raise ReportError(f"{str(directory)!r} is not a shard's report (its selection has no shard K/N)")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= k <= n:
        raise ReportError(f"{str(meta_path)!r} names shard {shard!r}, which no run makes; valid: K/N "
                          "with 1 <= K <= N")
    planned = meta.get("planned")
    if not isinstance(planned, list):
        raise ReportError(f"{str(directory / META_FILE)!r} lists no planned cases")
    return _Shard(directory, k, n, meta, [r for _, r in numbered],
                  [number for number, _ in numbered])


def _check_own_cases(shards: Sequence[_Shard]) -> None:
    """Each shard's results are of the cases it planned, on the run's provider: the rule a
    resume of the shard applies (:func:`~ort_layouts.reports.report.foreign_result`). A result
    of another shard's case would replace that shard's own result in the merged report, and one
    of no shard's case, or of another provider, would mix another run's result in.

    Raises:
        ReportError: the first result a shard cannot count, naming the shard, its results.jsonl
            line, the case and the shard that planned it (if one did), or the provider.
    """
    owner = {cid: s for s in shards for cid in s.meta["planned"]}
    for s in shards:
        numbered = zip(s.lines, s.results, strict=True)
        foreign = foreign_result(numbered, s.meta["planned"], s.meta.get("provider"))
        if foreign is None:
            continue
        number, result, kind = foreign
        cid = result.case.id
        if kind == "case":
            other = owner.get(cid)
            whose = (f"a case of shard {other.index}/{other.count}" if other is not None
                     else "a case of no shard of this run")
            held = f"case {cid!r}, which is not in this shard's selection ({whose})"
        else:
            held = f"a result of {cid!r} on {result.provider!r}, not the shard's {s.meta['provider']!r}"
        raise ReportError(
            f"shard {s.index}/{s.count} cannot be merged: {str(s.directory / RESULTS_FILE)!r} line "
            f"{number} holds {held}; remove that line, or run the shard again without --resume")


_MUST_AGREE = ("provider", "device_id", *(key for key, _ in RAN_ON_KEYS), "strict")


# a shard's own fields of its selection, which differ between the shards of one run
_SHARD_FIELDS = frozenset({"shard", "cases_sha256"})


def _merged_meta(shards: Sequence[_Shard]) -> dict[str, Any]:
    """The meta of the unsharded run: the shards' (they agree), the shard taken out."""
    first = shards[0].meta
    for key in _MUST_AGREE:
        # a shard that planned no case ran none, so it never learnt the device a first result
        # names where the provider lists none (the meta's device stays "")
        values = {json.dumps(s.meta.get(key), sort_keys=True) for s in shards
                  if not (key == "device" and not s.meta["planned"] and not s.meta.get(key))}
        if len(values) > 1:
            raise ReportError(f"the shards ran with different {key}: "
                              + ", ".join(f"shard {s.index}/{s.count} {s.meta.get(key)!r}" for s in shards))
    selection = first.get("selection") or {}
    for s in shards[1:]:
        differences = selection_differences(selection, s.meta.get("selection") or {}, ignore=_SHARD_FIELDS)
        if differences:
            raise ReportError(
                f"shard {s.index}/{s.count} was made with another selection than shard "
                f"{shards[0].index}/{shards[0].count}: "
                + ", ".join(f"{k} {a!r} (shard {s.index}: {b!r})" for k, a, b in differences))
    if selection.get("limit"):
        raise ReportError(f"the shards were made with --limit {selection['limit']}, which applies to each "
                          "shard: no single run holds their cases, so they cannot be merged into one report")
    environment = dict(first.get("environment") or {})
    for s in shards[1:]:
        env = s.meta.get("environment") or {}
        if env.get("versions") != environment.get("versions"):
            raise ReportError(f"the shards ran with different package versions: shard {shards[0].index} "
                              f"{environment.get('versions')}, shard {s.index} {env.get('versions')}")
    for key in environment:
        if key == "versions":
            continue
        seen = list(dict.fromkeys(str((s.meta.get("environment") or {}).get(key, "")) for s in shards))
        if len(seen) > 1:
            environment[key] = ", ".join(seen)
    meta = {k: v for k, v in first.items() if k not in ("planned", "started", "finished", "resumed")}
    meta["environment"] = environment
    meta["selection"] = {k: "" if k == "shard" else v for k, v in selection.items() if k != "cases_sha256"}
    meta["command"] = _unsharded_command(str(first.get("command", "")))
    return meta


def _merged_times(shards: Sequence[_Shard]) -> dict[str, Any]:
    """started (the first shard's start), resumed (every shard's), finished (the last shard's
    end, when every shard finished)."""
    times: dict[str, Any] = {}
    starts = [str(s.meta["started"]) for s in shards if s.meta.get("started")]
    ends = [str(s.meta["finished"]) for s in shards if s.meta.get("finished")]
    resumed = sorted(str(t) for s in shards for t in s.meta.get("resumed", []) or [])
    if starts:
        times["started"] = min(starts)
    if resumed:
        times["resumed"] = resumed
    if ends and len(ends) == len(shards):
        times["finished"] = max(ends)
    return times


def _unsharded_command(command: str) -> str:
    """A shard's command without its ``--shard K/N``: the command of the unsharded run."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        name = w.partition("=")[0]
        if len(name) >= 4 and "--shard".startswith(name):  # --shard, or argparse's abbreviations of it
            skip = "=" not in w
            continue
        out.append(w)
    return shlex.join(out)


def merge_shards(
    sources: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    force: bool = False,
    command: str | None = None,
) -> Report:
    """Merge the N shard reports of one run into the one report of the unsharded run, written
    into ``out`` (a report directory, locked while it is written, like a run's).

    Args:
        sources: shard report directories, or a run's report directory holding them
            (:func:`find_shards`).
        out: the merged report's directory; it may be the one holding the shards.
        force: replace a report of another selection already in ``out``.
        command: the merge's command line, which the locks it holds on ``out`` and on each
            shard while it reads it name to a run they refuse (the CLI's own; None: the
            ``ort-layouts merge --shards ... --out ...`` of these arguments). The merged
            report's meta names the unsharded run's command, not this.

    Returns:
        The merged report.

    Raises:
        ReportError: a shard missing or given twice, shards of different runs (selection,
            provider, device, driver, strictness or package versions), shards made with
            ``--limit``, planned case lists that do not interleave into one selection, a result
            of a case its shard did not plan (another shard's, or none's), or an
            ``out`` in use or holding a report of another selection; ``sources`` given as one
            str or no iterable (:func:`find_shards`), an ``out`` that is no path (None).
        ArgumentError: ``command`` is neither None nor a str, or ``force`` not a bool: nothing
            is read or written.
    """
    if command is not None and not isinstance(command, str):
        raise ArgumentError(f"command {command!r:.60} is {a_type(command)}, not a str; valid: the merge's "
                            "command line, e.g. 'ort-layouts merge --shards reports', or None")
    checked_bool(force, "force")
    path_argument(out, "out", "the merged report's directory (a str or os.PathLike)", ReportError)
    directories = find_shards(sources)
    if command is None:
        command = shlex.join(["ort-layouts", "merge", "--shards", *(str(d) for d in directories),
                              "--out", os.fspath(out)])
    with holding_as(command, now_iso()):
        return _merge_shards(directories, out, force=force)


def _merge_shards(directories: Sequence[Path], out: str | os.PathLike[str], *, force: bool) -> Report:
    if not directories:
        raise ReportError("nothing to merge: give the shard report directories, or the directory "
                          "holding them")
    if any(Path(out).resolve() == Path(d).resolve() for d in directories):
        raise ReportError(f"the merged report cannot go into a shard's own directory {str(out)!r}; valid: "
                          "the directory that holds the shards, or another (--out)")
    shards = [_read_shard(d) for d in directories]
    counts = sorted({s.count for s in shards})
    if len(counts) > 1:
        raise ReportError("the shards split their runs differently: "
                          + ", ".join(f"{s.index}/{s.count} ({s.directory})" for s in shards))
    n = counts[0]
    by_index: dict[int, _Shard] = {}
    for s in shards:
        if s.index in by_index:
            raise ReportError(f"shard {s.index}/{n} is given twice: {str(by_index[s.index].directory)!r} and "
                              f"{str(s.directory)!r}")
        by_index[s.index] = s
    missing = [k for k in range(1, n + 1) if k not in by_index]
    if missing:
        raise ReportError(f"shards {', '.join(f'{k}/{n}' for k in missing)} are missing; have "
                          f"{', '.join(f'{k}/{n}' for k in sorted(by_index))}")
    ordered = [by_index[k] for k in range(1, n + 1)]
    meta = _merged_meta(ordered)
    planned_lists: list[list[str]] = [list(s.meta["planned"]) for s in ordered]
    total = sum(len(p) for p in planned_lists)
    expected_lengths = [len(range(k, total, n)) for k in range(n)]
    if [len(p) for p in planned_lists] != expected_lengths:
        raise ReportError(f"the shards' planned cases ({[len(p) for p in planned_lists]}) do not "
                          f"interleave into one selection of {total} cases ({expected_lengths} expected)")
    planned = [planned_lists[i % n][i // n] for i in range(total)]
    if len(set(planned)) != len(planned):
        raise ReportError("the shards plan some cases twice; they are not shards of one selection")
    _check_own_cases(ordered)
    results = {r.case.id: r for s in ordered for r in s.results}
    strict = bool(meta.get("strict", False))
    writer = ReportWriter(out, meta=meta, planned=planned, force=force, strict=strict,
                          interval_s=float("inf"))
    listing = [{"shard": f"{s.index}/{s.count}", "directory": str(s.directory.resolve()),
                "command": s.meta.get("command", ""),
                "hostname": (s.meta.get("environment") or {}).get("hostname", ""),
                "started": s.meta.get("started", ""), "finished": s.meta.get("finished", ""),
                "planned": len(s.meta["planned"]), "results": len(s.results)} for s in ordered]
    finished = False
    try:
        writer.meta.update(_merged_times(ordered))  # in the order a run's meta has them
        for cid in planned:
            if cid in results:
                writer.add(results[cid])
        with signals_held():  # a stop waits for both: never a finished report without its shards.json
            report = writer.write_summaries(finished=True)
            finished = True
            atomic_write_text(Path(out) / SHARDS_FILE, json.dumps({"shards": listing}, indent=1) + "\n")
    except BaseException as e:
        if not finished:  # stopped halfway: the summaries of what it holds, unfinished (incomplete)
            try:
                writer.write_summaries()
            except Exception as failed:
                e.add_note(f"the summaries of {out} could not be written: {type(failed).__name__}: {failed}")
        raise
    finally:
        writer.close()
    return report
