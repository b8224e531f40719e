"""A report directory belongs to one run and one selection: the lock, the selection and model
hashes, the summaries from the start, results.jsonl in planned order, and --strict counted the
same in report.json, JUnit and HTML. Two processes into one directory; two shards in two
processes merged into the report of one unsharded run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts._errors import ReportError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.suite import standard_suite
from ort_layouts.frontends.cli import main
from ort_layouts.operators.case import Case
from ort_layouts.reports.html import render_report_html
from ort_layouts.reports.junit import render_junit
from ort_layouts.reports.lock import LOCK_FILE
from ort_layouts.reports.merge import merge_shards
from ort_layouts.reports.report import (
    HTML_FILE,
    JSON_FILE,
    JUNIT_FILE,
    META_FILE,
    RESULTS_FILE,
    Report,
    load_report,
)
from ort_layouts.reports.writer import ReportWriter, cases_sha256

Cap = pytest.CaptureFixture[str]
ROOT = Path(__file__).resolve().parents[2]
CPU = "CPUExecutionProvider"
SMALL = ["--provider", "cpu", "--ops", "Transpose,Expand", "--dtypes", "float32,int8", "--ranks", "1-3",
         "--progress", "none"]
# three ops, a float16 Pad with known issues on the CPU EP
WIDE = ["--provider", "cpu", "--ops", "Transpose,Expand,Pad", "--dtypes", "float32,float16,int8",
        "--ranks", "1-3", "--progress", "none"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["CI"] = "true"
    return env


def _cases() -> list[Case]:
    return [Case("Transpose", "float32", (2, 3), perm=(1, 0)),
            Case("Transpose", "float32", (2, 3, 4), perm=(1, 0, 2)),
            Case("Pad", "float16", (3, 4), pads=(1, 2, 2, 1)),
            Case("Pad", "int64", (3, 4), pads=(1, 2, 3, 4), mode="reflect"),
            Case("Expand", "float16", (3,), target_shape=(2, 3))]


def _results() -> list[CaseResult]:
    """A pass, an unexplained mismatch, a known-issue mismatch, an unsupported and an error."""
    c = _cases()
    return [
        CaseResult(c[0], Status.PASS, CPU, element_count=6),
        CaseResult(c[1], Status.MISMATCH, CPU, element_count=24, mismatch_count=16,
                   first_mismatch_index=(0, 1, 0),
                   diagnosis="output matches the input read packed (strides ignored)"),
        CaseResult(c[2], Status.MISMATCH, CPU, element_count=42, mismatch_count=2,
                   first_mismatch_index=(0, 0), known_issue="ORT CPU Pad quiets float16 signalling NaNs"),
        CaseResult(c[3], Status.UNSUPPORTED, CPU, message="no kernel"),
        CaseResult(c[4], Status.ERROR, CPU, message="device removed"),
    ]


def _meta(**selection: Any) -> dict[str, Any]:
    return {"provider": CPU, "command": "ort-layouts validate --test", "environment": {"hostname": "h"},
            "selection": {"provider": CPU, "ops": [], "shard": "", **selection}}


# ---- the lock ------------------------------------------------------------------------------------
def test_a_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    planned = [c.id for c in _cases()]
    with ReportWriter(tmp_path, meta=_meta(), planned=planned) as w:
        w.add(_results()[0])
        with pytest.raises(ReportError) as refused:
            ReportWriter(tmp_path, meta=_meta(), planned=planned)
        message = str(refused.value)
        assert "in use by another run" in message
        assert f"pid {os.getpid()}" in message and "ort-layouts validate --test" in message
        assert "started 20" in message  # the holder's start time, ISO 8601
        # the refused writer touched nothing
        lines = (tmp_path / RESULTS_FILE).read_text().splitlines()
        assert [json.loads(x)["case"]["perm"] for x in lines] == [[1, 0]]
    with ReportWriter(tmp_path, meta=_meta(), planned=planned, resume=True) as w2:  # released at close
        assert w2.resumed and w2.done_ids == {planned[0]}
    assert (tmp_path / LOCK_FILE).is_file()


HOLD_CHILD = """
import os, sys, time
import ort_layouts.engine.runner as runner
real = runner.run_cases
release = os.environ["ORT_LAYOUTS_TEST_RELEASE"]
def held(cases, **kwargs):
    callback = kwargs.pop("on_result")
    def on_result(result):
        callback(result)
        deadline = time.monotonic() + 120
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.02)
    return real(cases, on_result=on_result, **kwargs)
runner.run_cases = held
from ort_layouts.frontends.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_two_validations_into_one_directory_at_once(tmp_path: Path) -> None:
    """Both start at once; the one that takes the directory holds it (its runner waits after its
    first result until the test releases it); the other is refused with one line."""
    report = tmp_path / "report"
    release = tmp_path / "release"
    env = {**_env(), "ORT_LAYOUTS_TEST_RELEASE": str(release)}
    argv = [sys.executable, "-c", HOLD_CHILD, "validate", *SMALL, "--report", str(report)]
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    try:
        deadline = time.monotonic() + 120
        while all(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.02)
        refused = next(p for p in procs if p.poll() is not None)
        holder = next(p for p in procs if p is not refused)
        _, err = refused.communicate(timeout=30)
        assert refused.returncode == 2, err
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ort-layouts: error: "), err
        assert f"is in use by another run: pid {holder.pid} on host" in lines[0]
        assert "ort-layouts validate --provider cpu" in lines[0] and "Traceback" not in err
    finally:
        release.write_text("go")
        for p in procs:
            if p.poll() is None:
                p.wait(timeout=120)
    out, err = holder.communicate(timeout=30)
    assert holder.returncode == 0, out + err
    # the holder's report is complete and unmixed: each planned case once, in planned order
    meta = json.loads((report / META_FILE).read_text())
    lines = (report / RESULTS_FILE).read_text().splitlines()
    ids = [CaseResult.from_dict(json.loads(x)).case.id for x in lines]
    small = standard_suite(ops=["Transpose", "Expand"], dtypes=["float32", "int8"], ranks=[1, 2, 3])
    assert ids == meta["planned"] == [c.id for c in small] and len(set(ids)) == len(ids)
    data = json.loads((report / JSON_FILE).read_text())
    assert data["complete"] is True and [r["case"].get("perm") for r in data["results"]] == [
        CaseResult.from_dict(json.loads(x)).to_dict()["case"]["perm"]
        for x in (report / RESULTS_FILE).read_text().splitlines()]
    suite = ET.parse(report / JUNIT_FILE).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == str(len(small))


# ---- the selection: hashes, --resume, --force ------------------------------------------------
def test_meta_carries_the_cases_hash(tmp_path: Path) -> None:
    planned = [c.id for c in _cases()]
    with ReportWriter(tmp_path, meta=_meta(), planned=planned):
        pass
    meta = json.loads((tmp_path / META_FILE).read_text())
    import hashlib

    assert meta["selection"]["cases_sha256"] == hashlib.sha256(
        ("\n".join(planned) + "\n").encode()).hexdigest() == cases_sha256(planned)


def test_another_selection_into_a_used_directory_needs_force(tmp_path: Path) -> None:
    results = _results()
    planned = [r.case.id for r in results]
    with ReportWriter(tmp_path, meta=_meta(ops=["Transpose"]), planned=planned[:2]) as w:
        for r in results[:2]:
            w.add(r)
        w.write_summaries(finished=True)
    before = {name: (tmp_path / name).read_bytes() for name in (RESULTS_FILE, META_FILE, JSON_FILE)}
    with pytest.raises(ReportError, match=r"holds a report of another selection.*ops.*--force"):
        ReportWriter(tmp_path, meta=_meta(ops=["Pad"]), planned=planned[2:4])
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    # the same selection again replaces it (a rerun); another one with force
    with ReportWriter(tmp_path, meta=_meta(ops=["Transpose"]), planned=planned[:2]) as w:
        assert not w.done_ids
    with ReportWriter(tmp_path, meta=_meta(ops=["Pad"]), planned=planned[2:4], force=True) as w:
        assert json.loads((tmp_path / META_FILE).read_text())["selection"]["ops"] == ["Pad"]


def test_cli_refuses_another_selection_unless_forced(tmp_path: Path, capsys: Cap) -> None:
    report = tmp_path / "r"
    assert main(["validate", *SMALL, "--report", str(report)]) == 0
    capsys.readouterr()
    first = (report / RESULTS_FILE).read_bytes()
    other = [*SMALL[:-4], "--ranks", "2", "--progress", "none"]
    assert main(["validate", *other, "--report", str(report)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another selection" in err and "ranks" in err and "--force" in err
    assert (report / RESULTS_FILE).read_bytes() == first
    assert main(["validate", *other, "--report", str(report), "--force"]) == 0
    capsys.readouterr()
    assert json.loads((report / META_FILE).read_text())["selection"]["ranks"] == [2]


def test_ops_and_ranks_reordered_or_repeated_are_the_same_selection(tmp_path: Path, capsys: Cap) -> None:
    """--ops Expand,Transpose selects the cases of --ops Transpose,Expand (the same cases_sha256):
    a resume or a re-run of it was refused as another selection; a report written before the
    meta stored them in order resumes too. So do --dtypes and --values reordered or repeated."""
    report = tmp_path / "r"
    asked = ["--provider", "cpu", "--progress", "none", "--report", str(report)]
    first = ["--ops", "Transpose,Expand", "--ranks", "1-3", "--dtypes", "float32,int8",
             "--values", "random,iota"]
    assert main(["validate", *first, *asked]) == 0
    lines = (report / RESULTS_FILE).read_text().splitlines(keepends=True)
    (report / RESULTS_FILE).write_text("".join(lines[:3]))  # a run that stopped
    capsys.readouterr()
    again = ["--ops", "Expand,Transpose,expand", "--ranks", "3,1,2,1", "--dtypes", "int8,float32,int8",
             "--values", "iota,random"]
    assert main(["validate", *again, *asked, "--resume"]) == 0
    assert f"3 of {len(lines)} cases already run" in capsys.readouterr().err
    assert len((report / RESULTS_FILE).read_text().splitlines()) == len(lines)
    assert main(["validate", *again, *asked]) == 0  # a re-run replaces it
    capsys.readouterr()
    meta = json.loads((report / META_FILE).read_text())
    assert (meta["selection"]["ops"], meta["selection"]["ranks"]) == (["Transpose", "Expand"], [1, 2, 3])
    assert meta["selection"]["dtypes"] == ["float32", "int8"]
    assert meta["selection"]["values"] == ["random", "iota"]
    meta["selection"].update(ops=["Expand", "Transpose"], ranks=[3, 1, 2, 1])  # as the meta stored them
    (report / META_FILE).write_text(json.dumps(meta))
    (report / RESULTS_FILE).write_text("".join(lines[:3]))
    assert main(["validate", *first, *asked, "--resume"]) == 0
    assert "3 of" in capsys.readouterr().err


def _transpose_model(path: Path, *, doc: str) -> Path:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2, 4])
    graph = helper.make_graph([helper.make_node("Transpose", ["X"], ["Y"], perm=[1, 0, 2], name="t")],
                              "g", [x], [y], doc_string=doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9), str(path))
    return path


def test_resume_identifies_the_model_by_content(tmp_path: Path, capsys: Cap,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Two files named m.onnx in two directories, with the same Transpose (so the same cases) but
    other content: a resume with the other one is refused; the same file by another path is not."""
    monkeypatch.chdir(tmp_path)
    a = _transpose_model(tmp_path / "a" / "m.onnx", doc="model a")
    _transpose_model(tmp_path / "b" / "m.onnx", doc="model b")
    argv = ["validate", "--provider", "cpu", "--progress", "none", "--report", "r"]
    monkeypatch.chdir(tmp_path / "a")
    assert main([*argv[:-1], str(tmp_path / "r"), "--model", "m.onnx"]) == 0
    capsys.readouterr()
    meta = json.loads((tmp_path / "r" / META_FILE).read_text())
    import hashlib

    assert meta["selection"]["model_sha256"] == hashlib.sha256(a.read_bytes()).hexdigest()
    monkeypatch.chdir(tmp_path / "b")
    assert main([*argv[:-1], str(tmp_path / "r"), "--model", "m.onnx", "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot resume" in err and "model (by content" in err
    monkeypatch.chdir(tmp_path)
    assert main([*argv[:-1], str(tmp_path / "r"), "--model", "a/../a/m.onnx", "--resume"]) == 0
    assert "1 of 1 cases already run" in capsys.readouterr().err


# ---- what the directory holds while and after a run --------------------------------------------
def test_summaries_are_there_from_the_start(tmp_path: Path) -> None:
    planned = [c.id for c in _cases()]
    with ReportWriter(tmp_path, meta=_meta(), planned=planned, interval_s=3600):
        data = json.loads((tmp_path / JSON_FILE).read_text())
        assert data["results"] == [] and data["complete"] is False and data["planned_count"] == 5
        assert (tmp_path / JUNIT_FILE).is_file()
        assert "INCOMPLETE (0 of 5 cases run)" in (tmp_path / HTML_FILE).read_text()
        assert data["verdict"] == "incomplete"  # not "pass": no case has run yet
        suite = ET.parse(tmp_path / JUNIT_FILE).getroot().find("testsuite")
        assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("1", "1")
        (missing,) = suite.findall("testcase")
        assert missing.get("name") == "planned cases without a result"  # as README names it
        failure = missing.find("failure")
        assert failure is not None and failure.get("type") == "incomplete"
        assert failure.get("message", "").startswith("5 of 5 planned cases have no result")


def test_results_jsonl_is_in_planned_order_when_the_run_ends(tmp_path: Path) -> None:
    results = _results()
    planned = [r.case.id for r in results]
    with ReportWriter(tmp_path, meta=_meta(), planned=planned) as w:
        for r in reversed(results):  # arrival order: the last planned first
            w.add(r)
        arrived = [json.loads(x) for x in (tmp_path / RESULTS_FILE).read_text().splitlines()]
        assert [CaseResult.from_dict(x).case.id for x in arrived] == planned[::-1]
        w.write_summaries(finished=True)
        w.add(results[0])  # the writer still appends after the rewrite
        lines = (tmp_path / RESULTS_FILE).read_text().splitlines()
        assert [CaseResult.from_dict(json.loads(x)).case.id for x in lines] == [*planned, planned[0]]
    lines = (tmp_path / RESULTS_FILE).read_text().splitlines()  # the block's end finishes it again
    assert [CaseResult.from_dict(json.loads(x)).case.id for x in lines] == planned


# ---- --strict: one count of failures everywhere ----------------------------------------------
@pytest.mark.parametrize("strict, failing", [(False, 2), (True, 4)], ids=["default", "strict"])
def test_strict_counts_agree_in_json_junit_and_html(strict: bool, failing: int) -> None:
    """Five cases: a pass, an unexplained mismatch, a known issue, an unsupported, an error. By
    default the mismatch and the error fail (2); with --strict everything but the pass (4)."""
    report = Report({**_meta(), "strict": strict}, tuple(_results()))
    data = report.to_dict()
    assert data["strict"] is strict and data["failures"] == failing and data["verdict"] == "fail"
    suite = ET.fromstring(render_junit(report, strict=strict)).find("testsuite")
    assert suite is not None
    assert int(suite.get("failures", "0")) + int(suite.get("errors", "0")) == failing
    page = render_report_html(report, strict=strict)
    assert f"Failing cases ({failing})</h2>" in page
    section = page.split('<section id="failures">')[1].split('<section id="known">')[0]
    assert section.count('<section class="case') == failing
    ids = re.findall(r'id="(case-[^"]+)"', page)
    assert len(ids) == len(set(ids))  # each case anchored once


def test_strict_report_json_of_a_cli_run(tmp_path: Path, capsys: Cap) -> None:
    argv = ["validate", "--provider", "cpu", "--ops", "Pad", "--dtypes", "float16", "--values", "special",
            "--progress", "none", "--report", str(tmp_path), "--strict"]
    assert main(argv) == 1
    capsys.readouterr()
    data = json.loads((tmp_path / JSON_FILE).read_text())
    known = sum(1 for r in data["results"] if r.get("known_issue"))
    assert known > 0 and data["strict"] is True and data["failures"] >= known
    suite = ET.parse(tmp_path / JUNIT_FILE).getroot().find("testsuite")
    assert suite is not None
    assert int(suite.get("failures", "0")) + int(suite.get("errors", "0")) == data["failures"]
    assert f"Failing cases ({data['failures']})</h2>" in (tmp_path / HTML_FILE).read_text()


# ---- shards ------------------------------------------------------------------------------------
def _normalized_json(data: Any) -> Any:
    """Timings out: started, finished, resumed, seconds."""
    if isinstance(data, dict):
        return {k: _normalized_json(v) for k, v in data.items() if k not in ("started", "finished", "resumed",
                                                                               "seconds")}
    if isinstance(data, list):
        return [_normalized_json(v) for v in data]
    return data


def _normalized(name: str, text: str) -> str:
    if name.endswith(".jsonl"):
        return "\n".join(json.dumps(_normalized_json(json.loads(x))) for x in text.splitlines())
    if name.endswith(".json"):
        return json.dumps(_normalized_json(json.loads(text)))
    if name.endswith(".xml"):
        return re.sub(r' (time|timestamp)="[^"]*"', "", text)
    text = re.sub(r'<td class="seconds">[^<]*</td>', "", text)
    return re.sub(r"<tr><th>(started|finished|resumed)</th><td>[^<]*</td></tr>", "", text)


def test_two_shards_in_two_processes_merge_into_the_unsharded_report(
        tmp_path: Path, capsys: Cap, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "u").mkdir()
    (tmp_path / "s").mkdir()
    # the same command line in two directories, so the merged report names the same command
    shards = [subprocess.Popen([sys.executable, "-m", "ort_layouts", "validate", *WIDE, "--report", "out",
                                "--shard", f"{k}/2"], cwd=tmp_path / "s", env=_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in (1, 2)]
    monkeypatch.chdir(tmp_path / "u")
    assert main(["validate", *WIDE, "--report", "out"]) == 0
    capsys.readouterr()
    for p in shards:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, out + err
        assert "ort-layouts merge --shards out" in out
    s = tmp_path / "s" / "out"
    assert sorted(d.name for d in s.iterdir() if d.is_dir()) == ["shard-1-of-2", "shard-2-of-2"]
    assert not (s / RESULTS_FILE).exists()  # the shards never share a directory
    monkeypatch.chdir(tmp_path / "s")
    assert main(["merge", "--shards", "out"]) == 0
    out = capsys.readouterr().out
    u = tmp_path / "u" / "out"
    unsharded_count = len(json.loads((u / JSON_FILE).read_text())["results"])
    assert unsharded_count > 800 and out.startswith(f"{unsharded_count} cases on CPUExecutionProvider")
    for name in (RESULTS_FILE, JSON_FILE, META_FILE, JUNIT_FILE, HTML_FILE):
        unsharded = _normalized(name, (u / name).read_text())
        merged = _normalized(name, (s / name).read_text())
        assert merged == unsharded, name
    shards_file = json.loads((s / "shards.json").read_text())
    assert [x["shard"] for x in shards_file["shards"]] == ["1/2", "2/2"]
    assert sum(x["results"] for x in shards_file["shards"]) == unsharded_count


def _write_shard(directory: Path, k: int, n: int, planned: list[str], results: list[CaseResult],
                 limit: int = 0, **selection: Any) -> None:
    meta = {**_meta(limit=limit, **selection), "command": f"ort-layouts validate --shard {k}/{n}"}
    meta["selection"]["shard"] = f"{k}/{n}"
    with ReportWriter(directory / f"shard-{k}-of-{n}", meta=meta, planned=planned) as w:
        for r in results:
            w.add(r)
        w.write_summaries(finished=True)


def test_merge_shards_in_python(tmp_path: Path) -> None:
    results = _results()
    ids = [r.case.id for r in results]
    _write_shard(tmp_path, 1, 2, ids[0::2], results[0::2])
    _write_shard(tmp_path, 2, 2, ids[1::2], results[1::2])
    with pytest.raises(ReportError, match=r"holds shard reports .*ort-layouts merge --shards"):
        load_report(tmp_path)
    report = merge_shards([tmp_path], tmp_path / "merged")
    assert [r.case.id for r in report.results] == ids
    assert report.meta["command"] == "ort-layouts validate"
    assert report.meta["selection"]["shard"] == ""
    assert report.meta["selection"]["cases_sha256"] == cases_sha256(ids)
    lines = (tmp_path / "merged" / RESULTS_FILE).read_text().splitlines()
    assert [CaseResult.from_dict(json.loads(x)).case.id for x in lines] == ids


@pytest.mark.parametrize("layout, message", [
    ("missing", "shards 2/2 are missing"),
    ("twice", "given twice"),
    ("mixed", "split their runs differently"),
    ("selection",
     r"shard 2/2 was made with another selection than shard 1/2: ops \[\] \(shard 2: \['Pad'\]\)$"),
    ("limit", "--limit"),
    ("planned", "do not interleave"),
], ids=["missing", "twice", "mixed-n", "selection", "limit", "planned"])
def test_merge_shards_refuses(tmp_path: Path, layout: str, message: str) -> None:
    results = _results()
    ids = [r.case.id for r in results]
    sources: list[Path] = [tmp_path / "a"]
    _write_shard(tmp_path / "a", 1, 2, ids[0::2], results[0::2],
                 limit=3 if layout == "limit" else 0)
    if layout == "twice":
        _write_shard(tmp_path / "b", 1, 2, ids[0::2], results[0::2])
        sources.append(tmp_path / "b")
    elif layout == "mixed":
        _write_shard(tmp_path / "a", 2, 3, ids[1::3], results[1::3])
    elif layout == "selection":
        _write_shard(tmp_path / "a", 2, 2, ids[1::2], results[1::2], ops=["Pad"])
    elif layout == "limit":
        _write_shard(tmp_path / "a", 2, 2, ids[1::2], results[1::2], limit=3)
    elif layout == "planned":
        _write_shard(tmp_path / "a", 2, 2, ids[1:2], results[1:2])
    with pytest.raises(ReportError, match=message):
        merge_shards(sources, tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_shards_whose_ops_and_ranks_were_stored_in_other_orders_merge(tmp_path: Path) -> None:
    """Shards of reports written before a selection's ops and ranks were stored in order: the
    same selection asked in two orders merges, as a resume of it is taken."""
    results = _results()
    ids = [r.case.id for r in results]
    _write_shard(tmp_path, 1, 2, ids[0::2], results[0::2])
    _write_shard(tmp_path, 2, 2, ids[1::2], results[1::2])
    for k, (ops, ranks) in ((1, (["Transpose", "Pad"], [2, 1])), (2, (["Pad", "Transpose", "Pad"], [1, 2]))):
        meta_path = tmp_path / f"shard-{k}-of-2" / "meta.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        meta["selection"].update(ops=ops, ranks=ranks)  # as an older writer stored them, asked so
        meta_path.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    report = merge_shards([tmp_path], tmp_path / "merged")
    assert [r.case.id for r in report.results] == ids


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_a_refusal_waits_for_the_holder_to_say_who_it_is(tmp_path: Path) -> None:
    """The holder writes its record just after taking the lock: a run refused in between
    quotes the record once it is there, not an empty file."""
    import fcntl
    import threading

    from ort_layouts._errors import ReportError
    from ort_layouts.reports.lock import LOCK_FILE, DirectoryLock

    with open(tmp_path / LOCK_FILE, "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

        def say_who() -> None:
            held.write(b'{"pid": 4242, "host": "ci-7", "command": "ort-layouts validate", "started": ""}\n')
            held.flush()

        timer = threading.Timer(0.3, say_who)
        timer.start()
        with pytest.raises(ReportError, match="in use by another run: pid 4242 on host ci-7"):
            DirectoryLock(tmp_path)
        timer.join()


# ---- incomplete reports, resumes elsewhere, shards being written, damaged files -------------------
def test_an_incomplete_report_reads_back_incomplete_from_its_report_json(tmp_path: Path) -> None:
    planned = [c.id for c in _cases()]
    with ReportWriter(tmp_path, meta=_meta(), planned=planned) as w:
        w.add(_results()[0])
        w.write_summaries(finished=True)
    data = json.loads((tmp_path / JSON_FILE).read_text())
    assert (data["complete"], data["planned_count"], data["verdict"]) == (False, 5, "incomplete")
    assert "finished" not in json.loads((tmp_path / META_FILE).read_text())  # stopped, not finished
    for source in (tmp_path, tmp_path / JSON_FILE):
        report = load_report(source)
        assert (report.complete, report.planned_count) == (False, 5), source
    again = Report.from_dict(load_report(tmp_path / JSON_FILE).to_dict())
    assert (again.complete, again.planned_count) == (False, 5)


def test_a_directory_without_its_meta_json_takes_the_meta_of_its_report_json(tmp_path: Path) -> None:
    # a strict run stopped after two results, its meta.json lost: report.json says strict, the
    # provider and the planned cases; results.jsonl the results
    planned = [c.id for c in _cases()]
    with ReportWriter(tmp_path, meta={**_meta(), "device": "GPU A", "strict": True}, planned=planned,
                      strict=True) as w:
        w.add(_results()[0])
        w.add(_results()[2])
        w.write_summaries(finished=True)
    (tmp_path / META_FILE).unlink()
    report = load_report(tmp_path)
    assert (report.meta["provider"], report.meta["device"], report.strict) == (CPU, "GPU A", True)
    assert (report.complete, report.planned_count, len(report.results)) == (False, 5, 2)
    assert report.verdict(strict=report.strict) != "pass"


@pytest.mark.parametrize("key, old, new", [
    ("device", "GPU A", "GPU B"), ("driver", "31.0.1", "32.0.2"),
    ("stack", {"directml_version": "1.13.1"}, {"directml_version": "1.15.4"}),
    ("environment", {"versions": {"onnxruntime": "1.20.0"}}, {"versions": {"onnxruntime": "1.22.0"}}),
], ids=["device", "driver", "stack", "versions"])
def test_a_resume_on_another_device_driver_stack_or_versions_is_refused(tmp_path: Path, key: str, old: Any,
                                                                       new: Any) -> None:
    planned = [c.id for c in _cases()]
    with ReportWriter(tmp_path, meta={**_meta(), key: old}, planned=planned) as w:
        w.add(_results()[0])
    with pytest.raises(ReportError, match=r"cannot resume .*: it ran on .* → .*; its results and "
                                          r"this run's would be mixed"):
        ReportWriter(tmp_path, meta={**_meta(), key: new}, planned=planned, resume=True)
    ReportWriter(tmp_path, meta={**_meta(), key: old}, planned=planned, resume=True).close()  # the same


def test_merge_shards_refuses_other_directml_stacks_a_shard_being_written_and_its_own_directory(
        tmp_path: Path) -> None:
    results = _results()
    ids = [r.case.id for r in results]
    _write_shard(tmp_path, 1, 2, ids[0::2], results[0::2])
    _write_shard(tmp_path, 2, 2, ids[1::2], results[1::2])
    shard_meta = json.loads((tmp_path / "shard-2-of-2" / META_FILE).read_text())
    retry = ReportWriter(tmp_path / "shard-2-of-2", meta=shard_meta, planned=ids[1::2], resume=True)
    with retry, pytest.raises(ReportError, match=r"shard .*shard-2-of-2' cannot be merged yet: .*in use by "
                                                 r"another run"):
        merge_shards([tmp_path], tmp_path / "merged")
    with pytest.raises(ReportError, match="cannot go into a shard's own directory"):
        merge_shards([tmp_path / "shard-1-of-2", tmp_path / "shard-2-of-2"], tmp_path / "shard-1-of-2")
    meta_path = tmp_path / "shard-2-of-2" / META_FILE
    meta = json.loads(meta_path.read_text())
    meta["stack"] = {"directml_version": "1.12.0"}
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(ReportError, match="the shards ran with different stack"):
        merge_shards([tmp_path], tmp_path / "merged")


def test_a_merged_command_loses_an_abbreviated_shard_too(tmp_path: Path) -> None:
    from ort_layouts.reports.merge import _unsharded_command

    for shard in ("--sha 1/2", "--shard=1/2", "--shar 1/2", "--shard 1/2"):
        command = f"ort-layouts validate {shard} --report r"
        assert _unsharded_command(command) == "ort-layouts validate --report r", command


@pytest.mark.parametrize("name, text, fragment", [
    ("report.json", '{"schema": "ort_layouts.report/1", "results": [1]}',
     "a result is a JSON object, not int"),
    ("report.json", '{"schema": "ort_layouts.report/1", "results": {"a": 1}}',
     "'results' is a dict, not a list"),
    ("report.json", '{"schema": "ort_layouts.report/1", "results": [], "environment": "vm"}',
     "'environment' is str 'vm', not a JSON object"),
    ("results.jsonl", "1\n2\n", "line 1 cannot be read (a result is a JSON object, not int"),
    ("results.jsonl", "[" * 100_000 + "\n1\n", "line 1 cannot be read (maximum recursion depth exceeded"),
    ("report.json", "[" * 100_000, "report.json is not a report file: its JSON is nested too deeply"),
    ("report.json", '{"schema": "ort_layouts.report/2", "results": []}',
     "report.json has schema 'ort_layouts.report/2', which this version of ort_layouts does not read; "
     "valid: 'ort_layouts.report/1'"),
    ("matrix.json", '{"schema": "ort_layouts.matrix/1", "columns": []}', "matrix.json has schema "
     "'ort_layouts.matrix/1'"),
], ids=["result-int", "results-dict", "environment-str", "jsonl-int", "jsonl-deep", "json-deep",
        "other-schema", "matrix-schema"])
def test_damaged_report_files_are_one_line_errors(tmp_path: Path, name: str, text: str, fragment: str,
                                                  capsys: Cap) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(ReportError) as raised:
        load_report(tmp_path / name)
    assert fragment in str(raised.value)
    assert main(["merge", str(tmp_path / name)]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in err and out == ""
    assert [p.name for p in tmp_path.iterdir()] == [name]  # nothing written


def test_a_report_that_is_not_a_file_or_a_directory_is_named_so(capsys: Cap) -> None:
    """merge /dev/null said the report does not exist."""
    assert main(["merge", os.devnull]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [
        f"ort-layouts: error: report {os.devnull!r} is not a regular file or a directory; valid: a report "
        "directory, a report.json or a results.jsonl"]


def _two_shards_the_first_s_meta_changed(root: Path, change: Any) -> Path:
    """Shards 1/2 and 2/2 of :func:`_results` in ``root``, ``change`` applied to the first's meta
    (a dict); its meta.json's path."""
    results = _results()
    ids = [r.case.id for r in results]
    _write_shard(root, 1, 2, ids[0::2], results[0::2])
    _write_shard(root, 2, 2, ids[1::2], results[1::2])
    meta_path = root / "shard-1-of-2" / META_FILE
    meta = json.loads(meta_path.read_text())
    change(meta)
    meta_path.write_text(json.dumps(meta))
    return meta_path


@pytest.mark.parametrize("shard", ["1/0", "0/2", "3/2"])
def test_a_shard_that_no_run_makes_is_a_one_line_error_of_merge_shards(tmp_path: Path, shard: str,
                                                                       capsys: Cap) -> None:
    meta_path = _two_shards_the_first_s_meta_changed(
        tmp_path, lambda meta: meta["selection"].update(shard=shard))
    assert main(["merge", "--shards", str(tmp_path), "--out", str(tmp_path / "merged")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"ort-layouts: error: {str(meta_path)!r} names shard {shard!r}, which no run makes; "
                   "valid: K/N with 1 <= K <= N"]


@pytest.mark.parametrize(("key", "value"), [("environment", "vm"), ("selection", "x")])
def test_a_shard_whose_meta_is_damaged_is_a_one_line_error_of_merge_shards(
        tmp_path: Path, key: str, value: str, capsys: Cap) -> None:
    """Every meta.json read checks its fields' types: merge --shards raised AttributeError on a
    shard whose environment was a string, where load_report of the same shard said it is damaged."""
    _two_shards_the_first_s_meta_changed(tmp_path, lambda meta: meta.update({key: value}))
    assert main(["merge", "--shards", str(tmp_path), "--out", str(tmp_path / "merged")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{key!r} is str" in err[0] and "the file is damaged" in err[0]


def test_a_resume_of_a_meta_with_a_null_selection_is_a_report_error(tmp_path: Path) -> None:
    planned = [c.id for c in _cases()]
    with ReportWriter(tmp_path, meta=_meta(), planned=planned) as w:
        w.add(_results()[0])
    meta = json.loads((tmp_path / META_FILE).read_text())
    meta["selection"] = None
    (tmp_path / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(ReportError, match=r"cannot resume .*: it was made with .*provider None \(this run: "):
        ReportWriter(tmp_path, meta=_meta(), planned=planned, resume=True)


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    from ort_layouts.reports.report import read_results
    from ort_layouts.reports.writer import result_json

    results = _results()
    path = tmp_path / RESULTS_FILE
    path.write_text("\n".join(result_json(r) for r in results))  # no newline after the last
    assert [r.case.id for r in read_results(path)] == [r.case.id for r in results]
    assert [r.case.id for r in read_results(path, repair=True)] == [r.case.id for r in results]
    assert path.read_text().endswith("}\n")  # repaired: the next line starts on its own
    path.write_text("\n".join(result_json(r) for r in results)[:-5])  # a last line cut short
    assert len(read_results(path)) == len(results) - 1


@pytest.mark.parametrize(("path", "shown"), [(None, "None"), (3, "3")], ids=["none", "int"])
def test_load_report_refuses_a_path_that_is_no_path(path: object, shown: str) -> None:
    from ort_layouts import ReportError, load_report

    with pytest.raises(ReportError, match=rf"^path {shown} is .*, not a path; valid: a report directory"):
        load_report(path)  # type: ignore[arg-type]


def test_a_merge_into_a_report_of_another_selection_suggests_only_what_merge_takes(tmp_path: Path) -> None:
    """merge --shards into a directory holding another selection's report was told to use
    --resume, which merge does not take."""
    import argparse

    from ort_layouts.frontends.cli import build_parser

    meta = {"provider": "CPUExecutionProvider", "selection": {"ops": ["Pad"]}}
    with ReportWriter(tmp_path, meta=meta, planned=["a"]):
        pass
    other = {**meta, "selection": {"ops": ["Tile"]}}
    with pytest.raises(ReportError) as refused:
        ReportWriter(tmp_path, meta=other, planned=["b"])
    message = str(refused.value)
    assert "use another directory, or --force to replace it" in message
    merge_options = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
                         ).choices["merge"]._option_string_actions
    remedy = message.partition("; use another directory")[2].partition("(")[0]
    assert all(option in merge_options for option in re.findall(r"--[a-z-]+", remedy)), remedy
