"""merge and load_report refuse a report.json that is no ort_layouts report: one of another tool
(no ``schema``), of another schema, without ``results``, or with a field of another type than
the one ort_layouts writes. Each is one line naming the file and what is valid, never a column
of "-" merged beside the real reports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ort_layouts._errors import ReportError
from ort_layouts.frontends.cli import main
from ort_layouts.reports.merge import merge_reports
from ort_layouts.reports.report import JSON_FILE, Report, load_report

Cap = pytest.CaptureFixture[str]
SCHEMA = "ort_layouts.report/1"
VALID = (f"valid: a report.json that ort-layouts validate wrote (schema {SCHEMA!r}), a report directory "
         "or a results.jsonl")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of a small run on the CPU EP."""
    directory = tmp_path_factory.mktemp("real") / "r"
    argv = ["validate", "--provider", "cpu", "--ops", "Transpose", "--dtypes", "float32", "--ranks", "1-2",
            "--progress", "none", "--report", str(directory)]
    assert main(argv) == 0
    return directory


FOREIGN = [
    ('{"foo": 1, "results": []}', "is not an ort_layouts report: it has no 'schema' field; " + VALID),
    ('{"schema": "other.tool/3", "results": []}',
     "has schema 'other.tool/3', which this version of ort_layouts does not read; "
     "valid: 'ort_layouts.report/1'"),
    ('{"schema": null, "results": []}',
     "has schema None, which this version of ort_layouts does not read; valid: 'ort_layouts.report/1'"),
    (f'{{"schema": "{SCHEMA}", "provider": "CPUExecutionProvider"}}',
     "is not an ort_layouts report: it has no 'results'; " + VALID),
    (f'{{"schema": "{SCHEMA}", "results": [], "complete": "yes"}}',
     ": 'complete' is str 'yes', not a JSON boolean; the file is damaged, or not an ort_layouts report"),
    (f'{{"schema": "{SCHEMA}", "results": [], "planned_count": true}}',
     ": 'planned_count' is bool True, not a JSON integer; the file is damaged, or not an ort_layouts report"),
    (f'{{"schema": "{SCHEMA}", "results": [], "summary": [1, 2]}}',
     ": 'summary' is list [1, 2], not a JSON object; the file is damaged, or not an ort_layouts report"),
    (f'{{"schema": "{SCHEMA}", "results": [], "strict": 1}}',
     ": 'strict' is int 1, not a JSON boolean; the file is damaged, or not an ort_layouts report"),
]
IDS = ["no-schema", "other-schema", "null-schema", "no-results", "complete-str", "planned-count-bool",
       "summary-list", "strict-int"]


@pytest.mark.parametrize("text, says", FOREIGN, ids=IDS)
def test_load_report_refuses_a_report_json_of_another_kind(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "other" / JSON_FILE
    path.parent.mkdir()
    path.write_text(text)
    for source in (path, path.parent):  # the file, or the directory holding it
        with pytest.raises(ReportError) as raised:
            load_report(source)
        assert str(raised.value) == f"{path}{'' if says.startswith(':') else ' '}{says}"
    with pytest.raises(ReportError) as raised:
        Report.from_dict(json.loads(text))
    assert str(raised.value).startswith("<dict>")


@pytest.mark.parametrize("text, says", FOREIGN, ids=IDS)
def test_merge_refuses_it_beside_a_real_report(real: Path, tmp_path: Path, text: str, says: str,
                                               capsys: Cap) -> None:
    path = tmp_path / "other" / JSON_FILE
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(ReportError, match="^" + re.escape(str(path))):
        merge_reports([real, path.parent])
    capsys.readouterr()
    assert main(["merge", str(real), str(path.parent), "--out", str(tmp_path / "m")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.splitlines() == [f"ort-layouts: error: {path}{'' if says.startswith(':') else ' '}{says}"]
    assert not (tmp_path / "m").exists()


def test_a_minimal_report_json_of_this_schema_still_merges(real: Path, tmp_path: Path) -> None:
    """The schema and the results are what a report.json needs: the totals, which ort_layouts
    writes after the meta, may be left out (their figures come from the results)."""
    data = json.loads((real / JSON_FILE).read_text())
    path = tmp_path / JSON_FILE
    path.write_text(json.dumps({"schema": SCHEMA, "provider": data["provider"], "results": data["results"]}))
    matrix = merge_reports([real, path])
    assert matrix.differing() == ()
    assert all(None not in row for row in matrix.results.values())
