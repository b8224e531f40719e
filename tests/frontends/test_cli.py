"""The ort-layouts command line: bad command lines, describe against the seeds' worked examples,
validate's exit status and reports, resume after kill -9, merge."""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from ort_layouts.frontends.cli import main
from ort_layouts.reports.report import JSON_FILE, RESULTS_FILE, load_report

Cap = pytest.CaptureFixture[str]
ROOT = Path(__file__).resolve().parents[2]
# a small selection the CPU EP runs in well under a second
SMALL = ["--provider", "cpu", "--ops", "Transpose,Expand", "--dtypes", "float32,int8", "--ranks", "1-3"]


def _engine_available() -> bool:
    try:
        for name in ("engine.providers", "engine.runner", "engine.suite"):
            importlib.import_module(f"ort_layouts.{name}")
    except ImportError:
        return False
    return True


needs_engine = pytest.mark.skipif(not _engine_available(), reason="the validation engine is not installed")


def run(argv: list[str], capsys: Cap) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["CI"] = "true"
    return env


# ---- bad command lines: one line on stderr, exit status 2 ----------------------------------------
BAD = {
    "no-command": ([], "a command is required"),
    "unknown-command": (["frobnicate"], "invalid choice"),
    "providers-unknown-flag": (["providers", "--bogus"], "unrecognized arguments"),
    "describe-no-shape": (["describe"], "--shape"),
    "describe-bad-shape": (["describe", "--shape", "1,a"], "'1,a'"),
    "describe-zero-size": (["describe", "--shape", "0,3"], "0"),
    "describe-bad-dtype": (["describe", "--shape", "2,3", "--dtype", "complex64"], "complex64"),
    "describe-layout-rank": (["describe", "--shape", "2,3", "--layout", "NHWC"], "NHWC"),
    "describe-bad-layout": (["describe", "--shape", "2,3", "--layout", "XYZ"], "XYZ"),
    "describe-bad-perm": (["describe", "--shape", "2,3", "--transpose", "0,0"], "perm [0, 0]"),
    "describe-bad-broadcast": (["describe", "--shape", "2,3", "--broadcast-to", "4,3,2"], "broadcast"),
    "describe-pad-count": (["describe", "--shape", "3,4", "--pad", "1,2,3"], "pads [1, 2, 3]"),
    "describe-negative-pad": (["describe", "--shape", "3,4", "--pad", "-1,0,0,0"], "pads [-1, 0, 0, 0]"),
    "describe-mode-without-pad": (["describe", "--shape", "3,4", "--mode", "reflect"], "--pad"),
    "describe-bad-mode": (["describe", "--shape", "3,4", "--pad", "1,1,1,1", "--mode", "mirror"], "mirror"),
    "describe-two-transforms": (["describe", "--shape", "3,4", "--transpose", "1,0", "--pad", "1,1,1,1"],
                                "not allowed with"),
    "describe-two-outputs": (["describe", "--shape", "3,4", "--json", "--cpp"], "not allowed with"),
    "validate-shard-zero": (["validate", "--shard", "0/4"], "0/4"),
    "validate-shard-over": (["validate", "--shard", "5/4"], "5/4"),
    "validate-shard-text": (["validate", "--shard", "a/b"], "a/b"),
    "validate-shard-no-slash": (["validate", "--shard", "3"], "'3'"),
    "validate-bad-dtype": (["validate", "--dtypes", "float32,floaty"], "floaty"),
    "validate-bad-op": (["validate", "--ops", "Conv"], "Conv"),
    "validate-rank-nine-alone": (["validate", "--ranks", "9"], "ranks"),
    "validate-rank-nine": (["validate", "--ranks", "1,9"], "9"),
    "validate-rank-text": (["validate", "--ranks", "x"], "'x'"),
    "validate-device-negative": (["validate", "--device-id", "-1"], "-1"),
    "validate-batch-zero": (["validate", "--batch-size", "0"], "'0'"),
    "validate-bad-values": (["validate", "--values", "zeros"], "zeros"),
    "validate-bad-provider-option": (["validate", "--provider-option", "novalue"], "KEY=VALUE"),
    "validate-resume-no-report": (["validate", "--resume"], "--report"),
    "merge-nothing": (["merge"], "REPORT"),
    "merge-missing": (["merge", "/nonexistent/report"], "does not exist"),
    "merge-strict": (["merge", "--strict", "/nonexistent/report"], "merge takes no --strict: each report is "
                     "judged by its own run's --strict (validate --strict)"),
    "merge-shards-strict": (["merge", "--shards", "--strict", "/nonexistent/report"],
                            "merge takes no --strict"),
}


@pytest.mark.parametrize("argv, fragment", list(BAD.values()), ids=list(BAD))
def test_bad_command_line_one_line_exit_2(argv: list[str], fragment: str,
                                          capsys: Cap) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ort-layouts: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in err


@needs_engine
@pytest.mark.parametrize("name", ["dml", "DmlExecutionProvider", "nonsense"])
def test_unavailable_provider_one_line_exit_2(name: str, capsys: Cap) -> None:
    import onnxruntime

    if name.lower().startswith("dml") and "DmlExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("DirectML is available here")
    code, _, err = run(["validate", "--provider", name, "--ops", "Transpose", "--ranks", "2"], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ort-layouts: error: ")
    assert ("DmlExecutionProvider" if name.lower().startswith("dml") else name) in lines[0]
    assert "not available" in lines[0] or "unknown" in lines[0]
    assert "CPUExecutionProvider" in lines[0]  # the providers that are available are listed


def test_report_path_is_a_file(tmp_path: Path, capsys: Cap) -> None:
    if not _engine_available():
        pytest.skip("the validation engine is not installed")
    f = tmp_path / "file"
    f.write_text("x")
    code, _, err = run(["validate", *SMALL, "--report", str(f)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "is a file" in err


def test_bad_command_line_in_a_real_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "ort_layouts", "validate", "--shard", "9/2"],
                          capture_output=True, text=True, env=_env(), timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "ort-layouts: error: argument --shard: shard '9/2' needs 1 <= K <= N (e.g. 1/4) "
        "(see ort-layouts validate --help)"]


@pytest.mark.parametrize("releases", [["1.9.1", "1.15.4"], ["1.9.1,1.15.4"], ["1.9.1, 1.15.4", "1.9.1"]],
                         ids=["spaces", "commas", "both-and-a-repeat"])
def test_setup_takes_the_releases_spaced_or_comma_separated(monkeypatch: pytest.MonkeyPatch, capsys: Cap,
                                                            releases: list[str]) -> None:
    import ort_layouts.engine.dml.install as install

    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(install, "setup_dml", lambda **options: asked.append(options["directml_versions"]))
    code, _, err = run(["setup", "dml", "--no-apt", "--no-check", "--dml-version", *releases], capsys)
    assert (code, err) == (0, "")
    assert [list(versions) for versions in asked] == [["1.9.1", "1.15.4"]]


def test_help_and_version(capsys: Cap) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    for name in ("providers", "describe", "validate", "merge", "bench"):
        assert name in out
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.startswith("ort-layouts ")


def test_keyboard_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: Cap) -> None:
    import ort_layouts.frontends.cli as cli

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run_providers", interrupted)
    monkeypatch.setattr(cli, "COMMANDS", [cli.Command("providers", "", cli._add_providers, interrupted)])
    code, _, err = run(["providers"], capsys)
    assert code == 130
    assert err.strip() == "ort-layouts: interrupted"


# ---- describe: the seeds' worked examples --------------------------------------------------------
def describe_json(argv: list[str], capsys: Cap) -> dict:
    code, out, err = run(["describe", *argv, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_describe_nhwc_seed_example(capsys: Cap) -> None:
    # seed 000: height 3, width 5, packed NHWC: sizes {1,1,3,5}, strides {15,1,5,1}
    d = describe_json(["--dtype", "float32", "--shape", "1,1,3,5", "--layout", "NHWC"], capsys)
    assert d["descriptor"]["sizes"] == [1, 1, 3, 5]
    assert d["descriptor"]["strides"] == [15, 1, 5, 1]
    assert d["descriptor"]["total_tensor_size_in_bytes"] == 15 * 4
    assert d["descriptor"]["data_type"] == "FLOAT32"


def test_describe_nchw_seed_example(capsys: Cap) -> None:
    # seed 000: packed NCHW (explicit strides) {15,15,5,1}
    d = describe_json(["--shape", "1,1,3,5", "--layout", "NCHW"], capsys)
    assert d["descriptor"]["strides"] in ([15, 15, 5, 1], None)
    assert d["descriptor"]["total_tensor_size_in_bytes"] == 60


def test_describe_padded_row_pitch_seed_example(capsys: Cap) -> None:
    # seed 000: A B C x x D E F x x: height stride 5 instead of 3; DMLCalcBufferTensorSize:
    # ((2-1)*5 + (3-1)*1 + 1) elements = 8 -> 8 bytes as uint8 (already a multiple of 4)
    d = describe_json(["--dtype", "uint8", "--shape", "2,3", "--strides", "5,1"], capsys)
    assert d["descriptor"]["strides"] == [5, 1]
    assert d["descriptor"]["total_tensor_size_in_bytes"] == 8
    d = describe_json(["--dtype", "float16", "--shape", "2,3", "--strides", "5,1"], capsys)
    assert d["descriptor"]["total_tensor_size_in_bytes"] == 16  # 8 elements * 2 bytes


def test_describe_broadcast_seed_example(capsys: Cap) -> None:
    # seed 000 "A B C / A B C": logically 2x3 from 3 elements, height stride 0; in the 4
    # dimensions the DML EP gives an Expand (DmlOperator::Initialize's leading 1s, stride 0)
    d = describe_json(["--shape", "3", "--broadcast-to", "2,3"], capsys)
    assert d["operation"] == "broadcast"
    assert d["descriptor"]["sizes"] == [1, 1, 2, 3]
    assert d["descriptor"]["strides"] == [0, 0, 0, 1]
    assert d["descriptor"]["total_tensor_size_in_bytes"] == 12
    assert d["output"]["sizes"] == [1, 1, 2, 3] and d["output"]["total_tensor_size_in_bytes"] == 24
    # nothing broadcast: no strides, as the EP's TensorDesc gives none where the sizes are equal
    d = describe_json(["--shape", "3,4", "--broadcast-to", "3,4"], capsys)
    assert d["descriptor"]["sizes"] == [1, 1, 3, 4] and d["descriptor"]["strides"] is None
    # another layout is padded the same way: NHWC [1,2,2,1] broadcast over C
    d = describe_json(["--shape", "1,1,2,2", "--layout", "NHWC", "--broadcast-to", "1,3,2,2"], capsys)
    assert d["descriptor"]["sizes"] == [1, 3, 2, 2] and d["descriptor"]["strides"] == [0, 0, 2, 1]
    d = describe_json(["--shape", "2,2", "--strides", "1,2", "--broadcast-to", "3,2,2"], capsys)
    assert d["descriptor"]["sizes"] == [1, 3, 2, 2] and d["descriptor"]["strides"] == [0, 0, 1, 2]


def test_describe_transpose(capsys: Cap) -> None:
    # float32 [2,3,4] perm [2,0,1]: packed strides [12,4,1] permuted -> sizes [4,2,3] strides [1,12,4]
    d = describe_json(["--shape", "2,3,4", "--transpose", "2,0,1"], capsys)
    assert d["source"]["sizes"] == [2, 3, 4]
    assert d["descriptor"]["sizes"] == [4, 2, 3]
    assert d["descriptor"]["strides"] == [1, 12, 4]
    assert d["descriptor"]["total_tensor_size_in_bytes"] == 96
    assert d["output"]["sizes"] == [4, 2, 3]
    assert d["output"]["strides"] in (None, [6, 3, 1])
    assert d["output"]["total_tensor_size_in_bytes"] == 96


def test_describe_pad(capsys: Cap) -> None:
    # ONNX [3,4] pads [1,2,3,4] -> 4D input [1,1,3,4], start [0,0,1,2], end [0,0,3,4], output [1,1,7,10]
    d = describe_json(["--shape", "3,4", "--pad", "1,2,3,4", "--mode", "reflect"], capsys)
    assert d["descriptor"]["sizes"] == [1, 1, 3, 4]
    assert d["operator"]["start_padding"] == [0, 0, 1, 2]
    assert d["operator"]["end_padding"] == [0, 0, 3, 4]
    assert d["operator"]["mode"] == "REFLECTION"
    assert d["output"]["sizes"] == [1, 1, 7, 10]
    assert d["output"]["total_tensor_size_in_bytes"] == 7 * 10 * 4


def test_describe_text_names_sizes_and_strides(capsys: Cap) -> None:
    code, out, err = run(["describe", "--shape", "1,1,3,5", "--layout", "NHWC"], capsys)
    assert code == 0, err
    flat = out.replace(" ", "")
    assert "15,1,5,1" in flat
    assert "60" in out


def test_describe_cpp(capsys: Cap) -> None:
    code, out, _ = run(["describe", "--shape", "1,1,3,5", "--layout", "NHWC", "--cpp"], capsys)
    assert code == 0
    assert "UINT tensorDescSizes[4] = {1, 1, 3, 5};" in out
    assert "UINT tensorDescStrides[4] = {15, 1, 5, 1};" in out
    assert "DML_TENSOR_DATA_TYPE_FLOAT32" in out
    assert re.search(r"\b60,", out)  # TotalTensorSizeInBytes: 15 elements * 4 bytes


def test_describe_svg(tmp_path: Path, capsys: Cap) -> None:
    pytest.importorskip("ort_layouts.reports.render")
    target = tmp_path / "nhwc.svg"
    code, _, err = run(["describe", "--shape", "1,1,3,5", "--layout", "NHWC", "--svg", str(target)], capsys)
    assert code == 0, err
    root = ET.fromstring(target.read_text())
    assert root.tag.endswith("svg")


def test_describe_max_elements_default_is_the_one_its_help_and_the_library_give(capsys: Cap) -> None:
    import inspect

    from ort_layouts.reports.render import render_svg, render_text

    code, out, _ = run(["describe", "--help"], capsys)
    assert code == 0
    (shown,) = re.findall(r"up to N elements \(default (\d+)", " ".join(out.split()))
    limit = int(shown)
    defaults = {inspect.signature(f).parameters["max_elements"].default for f in (render_text, render_svg)}
    assert defaults == {limit}
    code, out, _ = run(["describe", "--shape", f"1,{limit}"], capsys)  # exactly the limit: drawn
    assert code == 0 and "no picture" not in out and "Logical view:" in out
    code, out, _ = run(["describe", "--shape", f"1,{limit + 1}"], capsys)  # one more: figures only
    assert code == 0 and f"has {limit + 1} elements, more than max_elements={limit}" in out
    assert "on this command line: --max-elements N" in out
    # past the most a picture draws: no --max-elements to suggest (one past it is refused)
    code, out, _ = run(["describe", "--shape", "300,300", "--max-elements", "65536"], capsys)
    assert code == 0
    assert "more than a picture draws (MAX_DRAWN_ELEMENTS, 65536); draw a smaller descriptor)" in out
    assert "--max-elements N" not in out and "pass a larger" not in out


# ---- providers -----------------------------------------------------------------------------------
@needs_engine
@pytest.mark.skipif(sys.platform == "win32", reason="DirectML through the worker is for Linux")
def test_providers_lists_every_provider_and_says_why_validate_will_not_pick_one(
        capsys: Cap, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", str(tmp_path / "absent_icd.json"))
    code, out, _ = run(["providers"], capsys)
    assert code == 2 and "CPUExecutionProvider" in out
    assert out.splitlines()[-1].startswith("validate refuses to pick a provider: the DirectML stack chosen")
    code, out, _ = run(["providers", "--json"], capsys)
    data = json.loads(out)
    assert code == 2 and data["default"] is None and "absent_icd.json" in data["error"]
    assert not any(p["default"] for p in data["providers"])


def test_providers_json_and_text(capsys: Cap) -> None:
    code, out, _ = run(["providers", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    names = [p["name"] for p in data["providers"]]
    assert "CPUExecutionProvider" in names
    assert data["default"] in names
    assert [p["name"] for p in data["providers"] if p["default"]] == [data["default"]]
    cpu = next(p for p in data["providers"] if p["name"] == "CPUExecutionProvider")
    assert cpu["available"] is True
    code, out, _ = run(["providers"], capsys)
    assert code == 0 and "CPUExecutionProvider" in out and data["default"] in out.splitlines()[-1]


# ---- validate ------------------------------------------------------------------------------------
def _statuses(report_dir: Path) -> list[tuple[str, str, int]]:
    return [(r.case.id, r.status.value, r.mismatch_count) for r in load_report(report_dir).results]


@needs_engine
def test_validate_cpu_passes_and_writes_three_reports(tmp_path: Path, capsys: Cap) -> None:
    code, out, err = run(["validate", *SMALL, "--report", str(tmp_path)], capsys)
    assert code == 0, out + err
    data = json.loads((tmp_path / JSON_FILE).read_text())
    assert data["provider"] == "CPUExecutionProvider"
    assert data["complete"] is True and data["summary"]["mismatch"] == 0
    assert {"environment", "command", "started", "finished", "selection"} <= set(data)
    assert data["environment"]["versions"]["onnx"]
    assert len(data["results"]) == data["planned_count"] > 0
    assert all(r["case"]["op"] in ("Transpose", "Expand") for r in data["results"])
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("tests", "0")) == len(data["results"])
    assert "<table" in (tmp_path / "report.html").read_text()
    assert "passed" in out and "0 mismatched" in out


@needs_engine
def test_validate_takes_a_device_id_and_optimize_into_the_selection(tmp_path: Path, capsys: Cap) -> None:
    """What the command line passes (an int device id, a bool --optimize) is valid, and the
    report's selection records it."""
    report = tmp_path / "report"
    argv = ["validate", "--provider", "cpu", "--device-id", "0", "--optimize", "--ops", "Transpose",
            "--dtypes", "float32", "--ranks", "2", "--limit", "1", "--progress", "none",
            "--report", str(report)]
    assert main(argv) == 0
    capsys.readouterr()
    assert (report / RESULTS_FILE).is_file()
    selection = json.loads((report / "meta.json").read_text())["selection"]
    assert selection["optimize"] is True
    assert selection["device_id"] == 0 and type(selection["device_id"]) is int


@needs_engine
def test_validate_exit_1_on_mismatch_and_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: Cap) -> None:
    import dataclasses

    import ort_layouts.engine.runner as runner
    from ort_layouts.engine.result import Status

    real = runner._Run.emit_all
    seen: list[object] = []

    def broken(self, items, encoded=None):  # type: ignore[no-untyped-def]
        if not seen:  # the first result becomes an error, encoded where the runner hands it on
            key, result = items[0]
            items = [(key, dataclasses.replace(result, status=Status.ERROR, message="device removed")),
                     *items[1:]]
        seen.extend(items)
        real(self, items, encoded)

    monkeypatch.setattr(runner._Run, "emit_all", broken)
    code, out, err = run(["validate", *SMALL, "--report", str(tmp_path)], capsys)
    assert code == 1
    assert "1 errors" in out
    assert "ERROR" in err and "device removed" in err


@needs_engine
def test_validate_unsupported_fails_only_with_strict(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: Cap) -> None:
    import dataclasses

    import ort_layouts.engine.runner as runner
    from ort_layouts.engine.result import Status

    real = runner.run_cases

    def one_unsupported(cases, **kwargs):  # type: ignore[no-untyped-def]
        callback = kwargs.pop("on_result")
        state = {"n": 0}

        def on_result(result):  # type: ignore[no-untyped-def]
            state["n"] += 1
            if state["n"] == 2:
                result = dataclasses.replace(result, status=Status.UNSUPPORTED, message="no kernel")
            callback(result)

        return real(cases, on_result=on_result, **kwargs)

    monkeypatch.setattr(runner, "run_cases", one_unsupported)
    code, out, _ = run(["validate", *SMALL], capsys)
    assert code == 0 and "1 unsupported (not failures)" in out
    code, out, _ = run(["validate", *SMALL, "--strict"], capsys)
    assert code == 1 and "1 unsupported (failing: --strict)" in out


@needs_engine
def test_known_issues_fail_only_with_strict(capsys: Cap) -> None:
    # ONNX Runtime's CPU Pad quiets float16 signalling NaNs: a known issue, proven by the diagnosis
    argv = ["validate", "--provider", "cpu", "--ops", "Pad", "--dtypes", "float16", "--values", "special"]
    code, out, err = run(argv, capsys)
    assert "explained by known issues" in out, out + err
    assert code == 0
    code, out, _ = run([*argv, "--strict"], capsys)
    assert code == 1 and "failing: --strict" in out


@needs_engine
def test_validate_shards_partition_the_suite(capsys: Cap, tmp_path: Path) -> None:
    ids: list[list[str]] = []
    for k in (1, 2, 3):
        report = str(tmp_path / str(k))
        code, _, err = run(["validate", *SMALL, "--shard", f"{k}/3", "--report", report], capsys)
        assert code == 0, err
        # a shard's report goes to DIR/shard-K-of-N
        ids.append([r.case.id for r in load_report(tmp_path / str(k) / f"shard-{k}-of-3").results])
    code, _, _ = run(["validate", *SMALL, "--report", str(tmp_path / "all")], capsys)
    every = [r.case.id for r in load_report(tmp_path / "all").results]
    assert sorted(ids[0] + ids[1] + ids[2]) == sorted(every)
    assert not set(ids[0]) & set(ids[1]) and not set(ids[1]) & set(ids[2])


@needs_engine
def test_shards_of_a_model_with_other_pinned_dims_are_not_merged(tmp_path: Path, capsys: Cap) -> None:
    """The pins make the cases (batch 1 and 2 plan other shapes): two shards made with other
    pins are no one run's, and were merged into a report whose planned cases mixed them."""
    model = str(ROOT / "tests" / "data" / "transformer_block.onnx")
    base = ["validate", "--provider", "cpu", "--progress", "none", "--model", model,
            "--report", str(tmp_path)]
    assert run([*base, "--dim", "batch=1", "--shard", "1/2"], capsys)[0] == 0
    assert run([*base, "--dim", "batch=2", "--shard", "2/2"], capsys)[0] == 0
    meta = json.loads((tmp_path / "shard-1-of-2" / "meta.json").read_text())
    assert meta["selection"]["dims"] == {"batch": 1}
    code, _, err = run(["merge", "--shards", str(tmp_path)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "dims {'batch': 1} (shard 2: {'batch': 2})" in err
    assert run([*base, "--dim", "batch=2", "--shard", "1/2", "--force"], capsys)[0] == 0
    assert run(["merge", "--shards", str(tmp_path)], capsys)[0] == 0  # one run's shards: merged
    suite = json.loads((tmp_path / "meta.json").read_text())["selection"]
    assert suite["dims"] == {"batch": 2}


@needs_engine
def test_validate_resume_refuses_another_selection(tmp_path: Path, capsys: Cap) -> None:
    assert run(["validate", *SMALL, "--report", str(tmp_path)], capsys)[0] == 0
    other = [*SMALL[:-2], "--ranks", "2"]
    code, _, err = run(["validate", *other, "--report", str(tmp_path), "--resume"], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "cannot resume" in err and "ranks" in err


SLOW_CHILD = """
import sys, time
import ort_layouts.engine.runner as runner
real = runner.run_cases
def slow(cases, **kwargs):
    callback = kwargs.pop("on_result")
    def on_result(result):
        callback(result)
        time.sleep(0.05)
    return real(cases, on_result=on_result, **kwargs)
runner.run_cases = slow
from ort_layouts.frontends.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _signalled_halfway(report: Path, signum: int) -> tuple[subprocess.Popen[bytes], bytes]:
    """A slowed validation into ``report``, sent ``signum`` once 4 results are written; the
    child, finished, and its standard error."""
    child = subprocess.Popen([sys.executable, "-c", SLOW_CHILD, "validate", *SMALL, "--batch-size", "4",
                              "--progress", "none", "--report", str(report)], env=_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = report / RESULTS_FILE
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if results.is_file() and results.read_bytes().count(b"\n") >= 4:
                break
            time.sleep(0.01)
    finally:
        child.send_signal(signum)
        _, err = child.communicate(timeout=60)
    return child, err


@needs_engine
@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="POSIX signals")
def test_sigterm_stops_a_run_as_ctrl_c_does_and_resume_completes_it(tmp_path: Path, capsys: Cap) -> None:
    """A CI job cancelled sends SIGTERM: the run stops as on Ctrl-C (results kept, the directory
    unlocked, the children stopped), says so in one line and exits 143 (128 + SIGTERM)."""
    report = tmp_path / "r"
    child, err = _signalled_halfway(report, signal.SIGTERM)
    assert child.returncode == 128 + signal.SIGTERM, err
    line = err.decode().strip().splitlines()[-1]
    assert re.fullmatch(rf"ort-layouts: terminated \(SIGTERM\); \d+ results kept in {re.escape(str(report))} "
                        r"\(--resume continues\)", line), line
    code, out, err_text = run(["validate", *SMALL, "--report", str(report), "--resume"], capsys)
    assert code == 0, out + err_text  # not locked by the terminated run
    assert json.loads((report / JSON_FILE).read_text())["complete"] is True


@needs_engine
def test_kill_9_then_resume_gives_the_uninterrupted_report(tmp_path: Path,
                                                           capsys: Cap) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert run(["validate", *SMALL, "--report", str(whole)], capsys)[0] == 0
    expected = _statuses(whole)
    assert len(expected) >= 8

    child, _ = _signalled_halfway(killed, signal.SIGKILL)
    assert child.returncode == -signal.SIGKILL
    results = killed / RESULTS_FILE
    written = results.read_bytes().count(b"\n")
    assert 4 <= written < len(expected), "the child was not killed halfway"
    with open(results, "ab") as f:  # as if the kill had cut a line in half
        f.write(b'{"case": {"op": "Transp')

    code, out, err = run(["validate", *SMALL, "--report", str(killed), "--resume"], capsys)
    assert code == 0, out + err
    assert f"{written} of {len(expected)} cases already run" in err
    assert _statuses(killed) == expected
    resumed = json.loads((killed / JSON_FILE).read_text())
    assert resumed["complete"] is True and resumed["resumed"]


# ---- merge ---------------------------------------------------------------------------------------
@needs_engine
def test_merge_command(tmp_path: Path, capsys: Cap) -> None:
    assert run(["validate", *SMALL, "--report", str(tmp_path / "a")], capsys)[0] == 0
    assert run(["validate", *SMALL, "--shard", "1/2", "--report", str(tmp_path / "b")], capsys)[0] == 0
    code, out, err = run(["merge", str(tmp_path / "a"), str(tmp_path / "b" / "shard-1-of-2" / JSON_FILE),
                          "--out", str(tmp_path / "m")], capsys)
    assert code == 0, err
    assert "[1] CPUExecutionProvider" in out and "[2] CPUExecutionProvider" in out
    assert "Transpose" in out and "Expand" in out
    assert "0 of" in out  # no case differs: b ran a subset with the same results
    matrix = json.loads((tmp_path / "m" / "matrix.json").read_text())
    total = len(load_report(tmp_path / "a").results)
    assert len(matrix["cases"]) == total
    half = sum(1 for c in matrix["cases"] if c["results"][1] is not None)
    assert half == len(load_report(tmp_path / "b" / "shard-1-of-2").results) < total
    assert (tmp_path / "m" / "matrix.html").is_file()


@pytest.mark.parametrize("name", ["good.onnx", "results.jsonl"])
def test_merge_of_an_onnx_model_says_it_is_not_a_report(name: str, tmp_path: Path, capsys: Cap) -> None:
    """An .onnx model given to merge (under any name) said it was not UTF-8 and damaged."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.array([0.5, -1.25, 3e9, 7], np.float32), "w")
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "add",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [weights])
    model = tmp_path / name
    onnx.save(helper.make_model(graph), model)
    with pytest.raises(UnicodeDecodeError):
        model.read_text(encoding="utf-8")
    code, out, err = run(["merge", str(model)], capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"ort-layouts: error: {str(model)!r} is not a report (it is not JSON); valid: a report directory, "
        "a report.json or a results.jsonl"]


@needs_engine
def test_an_unsharded_run_over_merged_shards_leaves_no_shards_json(tmp_path: Path, capsys: Cap) -> None:
    report = str(tmp_path / "r")
    for k in (1, 2):
        argv = ["validate", *SMALL, "--progress", "none", "--shard", f"{k}/2", "--report", report]
        assert run(argv, capsys)[0] == 0
    assert run(["merge", "--shards", report], capsys)[0] == 0
    assert (tmp_path / "r" / "shards.json").is_file()
    code, out, _ = run(["validate", *SMALL, "--progress", "none", "--report", report], capsys)
    assert code == 0 and "reports: " in out
    assert not (tmp_path / "r" / "shards.json").exists()  # the report is this run's, not the shards'
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [
        ".lock", "junit.xml", "meta.json", "report.html", "report.json", "results.jsonl", "shard-1-of-2",
        "shard-2-of-2"]
    assert "--shard" not in json.loads((tmp_path / "r" / "meta.json").read_text())["command"]


@needs_engine
def test_a_report_directory_that_is_not_utf_8_is_printed_escaped_under_a_strict_utf_8_stdout(
        tmp_path: Path) -> None:
    """With a strict UTF-8 standard output (PYTHONIOENCODING=utf-8, as under an en_US.UTF-8
    locale), the last line that names the reports must not turn a finished run into an error."""
    report = os.fsdecode(os.fsencode(str(tmp_path)) + b"/r-\xff")
    proc = subprocess.run([sys.executable, "-m", "ort_layouts", "validate", *SMALL, "--progress", "none",
                           "--report", os.fsencode(report)],
                          capture_output=True, env={**_env(), "PYTHONIOENCODING": "utf-8"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert b"reports: " + os.fsencode(str(tmp_path)) + b"/r-\\udcff/report.html" in proc.stdout


def test_a_lone_surrogate_in_a_label_is_printed_escaped_under_a_surrogateescape_stdout(
        tmp_path: Path) -> None:
    """Under the C or C.UTF-8 locale Python's standard output writes surrogateescape's bytes and
    fails on a lone surrogate that is not one (a device named ``\\ud800`` in a report's meta):
    merge prints it escaped and writes its matrix."""
    from ort_layouts.engine.result import CaseResult, Status
    from ort_layouts.operators.case import Case
    from ort_layouts.reports.writer import ReportWriter

    case = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    report = os.fsdecode(os.fsencode(str(tmp_path)) + b"/r-\xff")
    try:
        with ReportWriter(report, meta={"provider": "CPUExecutionProvider", "device": "GPU \ud800",
                                        "selection": {}}, planned=[case.id]) as w:
            w.add(CaseResult(case, Status.PASS, "CPUExecutionProvider", device="GPU \ud800"))
    except (OSError, UnicodeError):
        pytest.skip("this file system takes only UTF-8 names")
    proc = subprocess.run([sys.executable, "-m", "ort_layouts", "merge", os.fsencode(report), "--out",
                           str(tmp_path / "m")], capture_output=True, timeout=120,
                          env={**_env(), "PYTHONIOENCODING": "utf-8:surrogateescape"})
    assert proc.returncode == 0, proc.stderr
    assert b"GPU \\ud800" in proc.stdout
    assert (tmp_path / "m" / "matrix.json").is_file()


def test_a_surrogateescape_stdout_keeps_a_file_name_s_bytes_and_escapes_a_lone_surrogate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.frontends.cli import _printable_streams

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape")
    monkeypatch.setattr(sys, "stdout", stream)
    _printable_streams()
    stream.write(os.fsdecode(b"r-\xff") + " GPU \ud800 \udcff\ud801x\n")
    stream.flush()
    assert raw.getvalue() == b"r-\xff GPU \\ud800 \\udcff\\ud801x\n"


@needs_engine
def test_a_model_whose_path_is_not_utf_8_is_validated_into_utf_8_reports(tmp_path: Path) -> None:
    """A file name that is not UTF-8 reaches Python as lone surrogates (surrogateescape): the
    reports name it, in UTF-8, instead of failing to be written. (In a process of its own: its
    stderr writes them as Python's does, escaped.)"""
    name = os.fsdecode(b"model-\xff.onnx")
    try:
        model = tmp_path / name
        model.write_bytes((ROOT / "tests" / "data" / "transformer_block.onnx").read_bytes())
    except (OSError, UnicodeError):
        pytest.skip("this file system takes only UTF-8 names")
    proc = subprocess.run([sys.executable, "-m", "ort_layouts", "validate", "--provider", "cpu", "--model",
                           os.fsencode(model), "--report", str(tmp_path / "r"), "--progress", "none"],
                          capture_output=True, env=_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    for file in ("meta.json", "results.jsonl", "report.json", "junit.xml", "report.html"):
        (tmp_path / "r" / file).read_bytes().decode("utf-8")  # strict: raises on what is not UTF-8
    suite = ET.parse(tmp_path / "r" / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    command = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}["command"]
    assert "model-\ufffd.onnx" in command
    assert json.loads((tmp_path / "r" / "meta.json").read_text())["model"]["path"] == str(model)


# ---- progress and interruption -------------------------------------------------------------------
def _result(status: str) -> object:
    from ort_layouts.engine.result import CaseResult, Status
    from ort_layouts.operators.case import Case

    case = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    message = "boom" if status == "error" else ""
    return CaseResult(case, Status(status), "CPUExecutionProvider", message=message)


@pytest.mark.parametrize("ci, mode", [("", "bar"), ("true", "lines")], ids=["terminal", "ci"])
def test_progress_bar_on_a_terminal_lines_in_ci(monkeypatch: pytest.MonkeyPatch, ci: str, mode: str,
                                                terminal: Callable[[], io.StringIO]) -> None:
    from ort_layouts.frontends.cli import Progress

    monkeypatch.setenv("CI", ci) if ci else monkeypatch.delenv("CI", raising=False)
    stream = terminal()
    progress = Progress(3, stream=stream)
    assert progress.mode == mode
    for status in ("pass", "error", "pass"):
        progress.update(_result(status))
    progress.close()
    text = stream.getvalue()
    assert "ERROR Transpose-float32-2x3-perm1.0-random-s0: error: boom" in text
    assert "3/3 (100%)" in text
    assert ("\r[" in text) == (mode == "bar")


def test_progress_lines_when_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.frontends.cli import Progress

    monkeypatch.delenv("CI", raising=False)
    stream = io.StringIO()
    progress = Progress(20, stream=stream)
    assert progress.mode == "lines"
    for _ in range(20):
        progress.update(_result("pass"))
    lines = stream.getvalue().splitlines()
    assert 10 <= len(lines) <= 12 and lines[-1].endswith("20/20 (100%) pass 20")


@needs_engine
def test_interrupt_keeps_the_results_and_exits_130(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: Cap) -> None:
    import ort_layouts.engine.runner as runner

    real = runner.run_cases

    def interrupted(cases, **kwargs):  # type: ignore[no-untyped-def]
        callback = kwargs.pop("on_result")
        state = {"n": 0}

        def on_result(result):  # type: ignore[no-untyped-def]
            callback(result)
            state["n"] += 1
            if state["n"] == 3:
                raise KeyboardInterrupt

        return real(cases, on_result=on_result, **kwargs)

    monkeypatch.setattr(runner, "run_cases", interrupted)
    code, _, err = run(["validate", *SMALL, "--report", str(tmp_path)], capsys)
    assert code == 130
    data = json.loads((tmp_path / JSON_FILE).read_text())
    kept = len(data["results"])
    # every result written before the interrupt is kept (a batch's results are written together,
    # before on_result sees them), and the run stopped there
    assert 3 <= kept < data["planned_count"]
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == kept
    assert f"interrupted; {kept} results kept" in err and "Traceback" not in err
    assert err.count("interrupted") == 1  # one line says it, with what was kept
    assert data["complete"] is False


@needs_engine
def test_validate_jobs_spreads_the_run_and_gives_the_same_report(tmp_path: Path, capsys: Cap,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import ort_layouts.engine.runner as runner

    one, spread = tmp_path / "one", tmp_path / "spread"
    assert run(["validate", *SMALL, "--jobs", "1", "--report", str(one)], capsys)[0] == 0
    spread_over: list[int] = []
    real = runner._run_parallel

    def recorded(*args: object) -> None:
        spread_over.append(args[3])  # type: ignore[arg-type]  # (run, cases, inputs, jobs, batch size)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "_run_parallel", recorded)
    code, out, err = run(["validate", *SMALL, "--jobs", "2", "--report", str(spread)], capsys)
    assert code == 0, out + err
    assert spread_over == [2]
    assert _statuses(spread) == _statuses(one)


def test_validate_help_names_when_and_how_many_workers_a_run_takes(capsys: Cap) -> None:
    from ort_layouts.engine.parallel import MAX_JOBS
    from ort_layouts.engine.runner import PROCESS_MIN_CASES

    code, out, _ = run(["validate", "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0
    assert (f"for {PROCESS_MIN_CASES:,} cases or more, one a usable processor up to {MAX_JOBS}; "
            "else 1") in text


def test_validate_refuses_jobs_on_directml_before_any_work(tmp_path: Path, capsys: Cap,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import ort_layouts.engine.session as session
    from ort_layouts.engine.providers import DML

    monkeypatch.setattr(session, "resolve_validation_provider", lambda name: DML)
    code, out, err = run(["validate", "--provider", "dml", "--jobs", "2", "--report", str(tmp_path / "r")],
                         capsys)
    assert code == 2 and out == ""
    assert err.strip() == ("ort-layouts: error: argument --jobs: jobs 2 is not valid on "
                           "DmlExecutionProvider, which one process drives; valid: 1")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("name", ["report.json", "results.jsonl", "junit.xml"])
@pytest.mark.parametrize("resume", [False, True])
def test_a_report_file_that_is_a_directory_is_refused_before_any_case(
        tmp_path: Path, capsys: Cap, name: str, resume: bool) -> None:
    """A report directory holding a directory where the report writes one of its files: one
    line naming it, before any case runs; the directory is left as it was."""
    if not _engine_available():
        pytest.skip("the validation engine is not installed")
    report = tmp_path / "r"
    (report / name).mkdir(parents=True)
    before = sorted(p.relative_to(report) for p in report.rglob("*"))
    resuming = ["--resume"] if resume else []
    code, out, err = run(["validate", *SMALL, "--report", str(report), *resuming], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert name in err and "not a regular file" in err
    assert sorted(p.relative_to(report) for p in report.rglob("*")) == before


def test_a_disk_that_fills_as_the_report_is_written_says_what_results_jsonl_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A full disk as the summaries were written was one bare line; it now says the results kept
    and that --resume continues, as a stop does."""
    import errno

    from ort_layouts.reports import writer as writer_module

    real = writer_module.ReportWriter.write_summaries

    def full(self: writer_module.ReportWriter, *, finished: bool = False) -> object:
        if finished:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.directory / "report.json"))
        return real(self, finished=finished)

    monkeypatch.setattr(writer_module.ReportWriter, "write_summaries", full)
    report = tmp_path / "r"
    code = main(["validate", "--provider", "cpu", "--ops", "Transpose", "--ranks", "2", "--progress", "none",
                 "--report", str(report)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"ort-layouts: error: No space left on device: {str(report / 'report.json')!r}; "
                   f"61 results kept in {report / 'results.jsonl'} (--resume continues, and writes the "
                   "summaries)\n")
    assert len((report / "results.jsonl").read_text().splitlines()) == 61
