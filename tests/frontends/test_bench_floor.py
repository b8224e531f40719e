"""The floor section (the suite against ONNX Runtime alone on the same sessions) and the suite
section's batches: their figures on a tiny suite (no timing is asserted)."""

from __future__ import annotations

import io
import os
import re
import time
from typing import Any

import numpy as np
import pytest

from ort_layouts.engine.runner import batch_cases
from ort_layouts.engine.suite import standard_suite
from ort_layouts.frontends.bench import bench_floor, bench_suite, run_benchmarks


def test_floor_prints_the_three_rates_their_ratios_and_the_reports_share(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a run pinned to one CPU: its one worker process and this one may keep only that one busy
    cpus = min(os.cpu_count() or 1, 2)  # (this tiny suite gets one worker process)
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
        cpus = 1
    out = io.StringIO()
    figures = run_benchmarks(("floor",), suite_ranks=(1,), repeats=1, out=out)
    assert [f.name for f in figures] == [
        "bare ONNX Runtime, the same sessions (CPUExecutionProvider)",
        "run_cases: inputs, oracle, compare, results",
        "run_cases / bare",
        "validate with reports",
        "validate with reports / bare",
        "reports' share of the validation",
        "processor time: bare / validate with reports",
        "processor time of validate with reports, per case",
        f"processor time per case for 0.8x on {cpus} CPUs, at most",
    ]
    by_name = {f.name: f for f in figures}
    cpu = by_name["processor time: bare / validate with reports"]
    seconds = re.search(r"bare ([\d.]+) s, run_cases ([\d.]+) s, validate ([\d.]+) s", cpu.detail)
    assert seconds and float(seconds[1]) > 0 and float(seconds[3]) > 0
    bare_s, validate_s = float(seconds[1]), float(seconds[3])  # each rounded to 0.01 s
    low, high = (bare_s - 0.005) / (validate_s + 0.005), (bare_s + 0.005) / (validate_s - 0.005)
    assert low * 0.999 <= cpu.value <= high * 1.001
    for f in figures:
        assert f.section == "floor" and np.isfinite(f.value) and f.value >= 0 and f.line() in out.getvalue()
    bare = by_name["bare ONNX Runtime, the same sessions (CPUExecutionProvider)"]
    ratio = by_name["validate with reports / bare"]
    assert ratio.target == ">= 0.8x" and ratio.met is (ratio.value >= 0.8)
    assert abs(ratio.value - by_name["validate with reports"].value / bare.value) < 1e-9
    run = by_name["run_cases: inputs, oracle, compare, results"]
    assert abs(by_name["run_cases / bare"].value - run.value / bare.value) < 1e-9
    assert by_name["reports' share of the validation"].target == "<= 10%"
    # the bare loop ran the runner's own batches: as many sessions as it makes, with their sizes
    suite = standard_suite(ranks=[1])
    sizes = [len(b) for b in batch_cases(suite, provider="cpu")]
    match = re.search(r"(\d+) sessions of (\d+)-(\d+) nodes", bare.detail)
    assert match and (int(match[1]), int(match[2]), int(match[3])) == (len(sizes), min(sizes), max(sizes))
    assert bare.detail.startswith(f"{len(suite)} cases") and sum(sizes) <= len(suite)
    # each stage's share of the validation's processor time, per case: they and the rest add up to it
    per_case = by_name["processor time of validate with reports, per case"]
    stages = dict(re.findall(r"(descriptors|inputs|oracle|models|sessions|encoding|the rest) (-?[\d.]+)",
                             per_case.detail))
    assert list(stages) == ["descriptors", "inputs", "oracle", "models", "sessions", "encoding", "the rest"]
    assert all(float(stages[k]) > 0 for k in stages if k != "the rest")
    assert abs(sum(float(v) for v in stages.values()) - per_case.value) <= 0.05 * len(stages) + 1e-6
    # the sessions' share is the bare loop's processor time printed above (rounded to 0.01 s)
    assert abs(float(stages["sessions"]) - 1e6 * bare_s / len(suite)) <= 1e6 * 0.005 / len(suite) + 0.05
    validate_us = 1e6 * float(seconds[3]) / len(suite)  # from the seconds above, rounded to 0.01 s
    assert per_case.unit == "us" and abs(per_case.value - validate_us) <= 1e6 * 0.005 / len(suite) + 1e-6
    # the most a case may take for 0.8x: the bare time over 0.8, times the CPUs, over the cases
    budget = by_name[f"processor time per case for 0.8x on {cpus} CPUs, at most"]
    assert abs(budget.value - 1e6 / (0.8 * bare.value) * cpus) <= 1e-6 * budget.value


def test_each_stage_times_its_own_work_over_every_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """A processor clock that only the stages' functions move, by one second a call: each stage
    is charged with its own calls (one a case DirectML can express for the descriptors, one a
    case for the expected outputs, one a batch for the inputs and the models, one for all the
    results' text), the least of the repeats."""
    import ort_layouts.engine.graphs as graphs
    import ort_layouts.engine.inputs as inputs
    import ort_layouts.operators.expected as expected
    import ort_layouts.reports.writer as writer
    from ort_layouts.frontends import bench

    clock = [0.0]

    def ticking(real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            clock[0] += 1.0
            return real(*args, **kwargs)
        return call

    for module, name in ((expected, "dml_operator"), (expected, "expected_outputs"), (inputs, "make_inputs"),
                         (graphs, "build_model"), (writer, "ResultEncoder")):
        monkeypatch.setattr(module, name, ticking(getattr(module, name)))
    monkeypatch.setattr(bench.time, "process_time", lambda: clock[0])
    batches = batch_cases(standard_suite(ranks=[1]), provider="cpu")
    cases = [c for b in batches for c in b]
    expressible = sum(1 for c in cases if not _reason(c))  # dml_operator is asked of these
    seconds = bench._stage_seconds(batches, [], repeats=2)
    assert seconds == {"descriptors": expressible, "inputs": len(batches), "oracle": len(cases),
                       "models": len(batches), "encoding": 1.0}


def _reason(case: Any) -> str:
    from ort_layouts.operators.registry import operator_for_type

    return operator_for_type(case.op).inexpressible_reason(case)


def test_floor_on_an_unknown_provider_is_skipped_with_the_reason() -> None:
    out = io.StringIO()
    assert run_benchmarks(("floor",), provider="nosuch", out=out) == []
    assert "floor  skipped: execution provider 'nosuch' is unknown" in out.getvalue()


def test_the_suite_section_times_whole_batches_of_the_suite() -> None:
    figures = bench_suite(sample_size=20, repeats=1, ranks=[1])
    wall, batched, single, ratio = figures
    assert "sessions of" in wall.detail and "nodes (median" in wall.detail
    match = re.match(r"(\d+) cases, one batch in (\d+): (\d+) sessions", batched.detail)
    assert match and int(match[1]) >= 1
    batches = batch_cases(standard_suite(ranks=[1]), provider="cpu")
    picked = batches[:: int(match[2])]
    assert int(match[3]) <= len(picked)
    assert int(match[1]) == sum(len(b) for b in picked[: int(match[3])])  # whole batches only
    assert ratio.target == "" and abs(ratio.value - batched.value / single.value) < 1e-9


def test_bench_floor_takes_the_provider_and_batch_size() -> None:
    figures = bench_floor(provider="cpu", repeats=1, ranks=[0], batch_size=1)
    assert figures[0].name.endswith("(CPUExecutionProvider)") and "of one node" in figures[0].detail


def test_bench_floor_leaves_no_report_directory_behind(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Its validations write their reports to temporary directories, removed after the timings."""
    import tempfile

    made: list[str] = []
    real = tempfile.mkdtemp

    def recorded(*args: Any, **kwargs: Any) -> str:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(tempfile, "mkdtemp", recorded)
    bench_floor(provider="cpu", repeats=2, ranks=[0], batch_size=1, jobs=1)
    assert len([d for d in made if "ort_layouts_floor_" in d]) == 2  # one a validation
    assert list(tmp_path.glob("ort_layouts_floor_*")) == []


def _children_seconds() -> float:
    from ort_layouts.frontends.bench import _processor_seconds

    return _processor_seconds() - time.process_time()


def test_processor_time_counts_the_session_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine import parallel, runner
    from ort_layouts.engine.runner import run_cases
    from ort_layouts.engine.session_process import session_process

    monkeypatch.setattr(runner, "PROCESS_MIN_CASES", 1)
    monkeypatch.setattr(parallel, "worker_pids", lambda: [])  # the session process's seconds alone
    session_process().start()
    before = _children_seconds()
    run_cases(standard_suite(ranks=[1, 2], ops=["Transpose", "Pad"]), provider="cpu", jobs=1)
    assert _children_seconds() > before + 0.02  # the child's seconds for the run (0.1 s here), over a tick


def test_processor_time_counts_the_worker_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine import parallel
    from ort_layouts.engine import session_process as module
    from ort_layouts.engine.runner import run_cases

    parallel.start_workers(2)

    class NoChild:
        pid = None

    monkeypatch.setattr(module, "session_process", NoChild)  # the workers' seconds alone
    before = _children_seconds()
    run_cases(standard_suite(ranks=[1, 2], ops=["Transpose", "Pad"]), provider="cpu", jobs=2)
    assert len(parallel.worker_pids()) >= 2
    assert _children_seconds() > before + 0.02  # the workers' seconds for the run (0.4 s here), over the tick


def test_bench_floor_with_workers_times_one_process_beside_them() -> None:
    figures = bench_floor(provider="cpu", repeats=1, ranks=[0], jobs=2)
    by_name = {f.name: f for f in figures}
    assert by_name["run_cases: inputs, oracle, compare, results"].detail.endswith("; 2 worker processes")
    assert by_name["validate with reports"].detail.endswith("; 2 worker processes")
    one = by_name["validate with reports in one process (jobs 1) / bare"]
    seconds = re.fullmatch(r"([\d.]+) s", one.detail)
    bare = by_name["bare ONNX Runtime, the same sessions (CPUExecutionProvider)"]
    assert seconds and one.value > 0 and bare.value > 0
    n = int(re.match(r"(\d+) cases", bare.detail)[1])  # type: ignore[index]
    printed_s = float(seconds[1])  # rounded to 0.01 s: the ratio lies within what that rounding allows
    low = n / (printed_s + 0.005) / bare.value
    high = n / (printed_s - 0.005) / bare.value if printed_s > 0.005 else float("inf")
    assert low * 0.999 <= one.value <= high * 1.001


def test_the_command_line_s_jobs_reach_the_floor(capsys: pytest.CaptureFixture[str]) -> None:
    from ort_layouts.frontends.cli import main

    assert main(["bench", "--sections", "floor", "--suite-ranks", "0", "--repeats", "1", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "validate with reports in one process (jobs 1) / bare" in out
    assert out.count("; 2 worker processes") == 2  # run_cases and validate


class _SlowToFree:
    """A value whose freeing takes ``seconds`` (as a suite's results take 10-20 ms)."""

    def __init__(self, seconds: float, freed: list[float]) -> None:
        self.seconds, self.freed = seconds, freed

    def __del__(self) -> None:
        time.sleep(self.seconds)
        self.freed.append(time.perf_counter())


def test_a_timed_function_s_value_is_freed_outside_its_time() -> None:
    from ort_layouts.frontends.bench import _interleaved

    freed: list[float] = []
    made: list[int] = []

    def run() -> _SlowToFree:
        value = _SlowToFree(0.3, freed)
        made.append(id(value))
        return value

    def idle() -> None:
        return None

    last: list[Any] = []
    best = _interleaved([run, idle], 2, values=last)
    # a 0.3 s free inside a turn would make both turns of `run` take 0.3 s or more
    assert best[0] < 0.15, best
    assert best[1] < 0.15, best  # nor is it charged to the function that runs after
    assert id(last[0]) == made[-1] and last[1] is None
    assert len(freed) == 1  # the first turn's value, let go of before the second turn
    del last[:]
    assert len(freed) == 2
