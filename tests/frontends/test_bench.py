"""The benchmark runs and prints its figures (tiny sizes; no timing is asserted), and the gpu
section's device code path works on the CPU EP's device."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ProviderError
from ort_layouts.engine.graphs import build_model
from ort_layouts.engine.providers import CPU, ProviderConfig, default_provider, make_session
from ort_layouts.frontends.bench import (
    Figure,
    bench_gpu,
    device_allocator,
    device_copy,
    device_loop,
    main,
    oracle_workloads,
    run_benchmarks,
)
from ort_layouts.operators.case import Case
from ort_layouts.reference.compare import comparison_kernel

TINY = {"suite_ranks": (1,), "suite_sample": 10, "oracle_bytes": 1 << 20, "gpu_bytes": 1 << 18,
        "gpu_iterations": 2, "memory_bytes": 1 << 20, "repeats": 1}


def test_every_section_prints_a_header_and_its_figures() -> None:
    out = io.StringIO()
    figures = run_benchmarks(("suite", "oracle", "gpu", "memory"), allow_cpu_gpu_section=True, out=out,
                             **TINY)
    text = out.getvalue()
    assert text.startswith("# ort_layouts bench ") and "cpus=" in text
    by_section = {s: [f for f in figures if f.section == s] for s in ("suite", "oracle", "gpu", "memory")}
    kernel = comparison_kernel()
    oracle_figures = 12 if kernel == "numpy" else 15  # with a C kernel, numpy's comparison beside it
    assert [len(v) for v in by_section.values()] == [4, oracle_figures, 12, 8]
    for f in figures:
        assert f.line() in text
        assert np.isfinite(f.value)
    targets = {f.name: f for f in figures if f.target}
    assert {f.target for f in targets.values()} == {"< 10 s, >= 5000 cases", ">= 0.5x", "<= 5%", "<= 1.1x"}
    # a rank-1 suite has far fewer than 5000 cases: its wall-time target cannot be met
    assert targets["standard suite wall time, build + run + compare"].met is False
    for f in by_section["gpu"]:
        if "on CPUExecutionProvider" in f.name:
            assert "output checked bit for bit: equal" in f.detail
        if "device-to-device copy" in f.name:
            assert "copy equal" in f.detail
    for f in by_section["oracle"]:
        if f.unit == "GB/s":
            assert f.value > 0 and "1 MiB output" in f.detail
        if "verify (oracle + compare, fused)" in f.name:
            assert f.detail.endswith(f"; comparison: {kernel}")
    numpy_lines = [f for f in by_section["oracle"] if "verify with numpy's comparison" in f.name]
    assert len(numpy_lines) == (0 if kernel == "numpy" else 3) and all(f.value > 0 for f in numpy_lines)


def test_the_diagnosis_section_diagnoses_every_tenth_case_with_a_flipped_bit() -> None:
    from ort_layouts.engine.suite import standard_suite
    from ort_layouts.operators.registry import operator_for_type

    out = io.StringIO()
    figures = run_benchmarks(("diagnosis",), out=out, **TINY)
    every, worst = figures
    sample = standard_suite(ranks=[1])[::10]
    # every case but those whose first output is empty (nothing to flip)
    flipped = [c for c in sample if 0 not in operator_for_type(c.op).output_shapes(c)[0]]
    assert every.section == worst.section == "diagnosis" and every.unit == worst.unit == "ms"
    assert every.detail.startswith(f"{len(flipped)} cases, every 10th of the suite, one bit flipped, "
                                   "no re-runs")
    named = int(every.detail.rsplit("; ", 1)[1].removesuffix(" named"))
    assert 0 < named <= len(flipped)  # not every flipped bit matches an alternative
    assert every.value > 0 and worst.value > 0 and worst.name.startswith("... the costliest: ")
    assert every.line() in out.getvalue() and worst.line() in out.getvalue()


def test_the_costliest_diagnosis_is_of_a_group_of_five_cases_or_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """Of rank 1, every tenth case holds 3 Transposes and 8 Expands: the Transposes cost most a
    case, but too few of them to count; the Expands are named."""
    import time as time_module

    from ort_layouts.engine import diagnose
    from ort_layouts.engine.diagnose import Diagnosis

    def explain(case: Case, *args: Any, **kwargs: Any) -> Diagnosis:
        time_module.sleep({"Transpose": 0.02, "Expand": 0.01}.get(case.op, 0.0))
        return Diagnosis("")

    monkeypatch.setattr(diagnose, "explain", explain)
    every, worst = run_benchmarks(("diagnosis",), out=io.StringIO(), **TINY)
    assert worst.name == "... the costliest: Expand of rank 1" and worst.detail == "8 cases"
    assert worst.value >= 10 and every.detail.endswith("; 0 named")


def test_figure_line_states_target_and_verdict() -> None:
    met = Figure("oracle", "x / memory copy", 0.75, "x", ">= 0.5x", True)
    missed = Figure("suite", "ratio", 3.0, "x", ">= 25x", False, "200 cases")
    plain = Figure("gpu", "rate", 12.5, "GB/s")
    assert met.line().endswith("0.750 x  target >= 0.5x  [met]")
    assert missed.line().endswith("3.000 x  target >= 25x  [MISSED]  (200 cases)")
    assert plain.line().endswith("12.500 GB/s")


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="a process's CPUs: Linux")
def test_the_header_names_the_cpus_a_pinned_run_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run pinned to 2 of a machine's CPUs (taskset) says so: the machine's count alone hid it."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    out = io.StringIO()
    assert run_benchmarks((), out=out) == []
    assert f"cpus={os.cpu_count()} (2 usable)  python " in out.getvalue()


def test_main_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bench.json"
    assert main(["--sections", "oracle", "--oracle-mb", "0.5", "--repeats", "1", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert {"date", "platform", "cpu", "cpu_count", "usable_cpus", "onnxruntime"} <= set(data["machine"])
    names = [f["name"] for f in data["figures"]]
    assert len(names) == (12 if comparison_kernel() == "numpy" else 15)
    assert all(f["section"] == "oracle" for f in data["figures"])
    assert "transpose NCHW->NHWC: verify / memory copy" in names
    assert "verify / memory copy" in capsys.readouterr().out


def test_bad_section_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        main(["--sections", "oracle,bogus"])
    with pytest.raises(ValueError, match="valid: "):
        run_benchmarks(("bogus",), out=io.StringIO())


def test_the_dml_section_is_a_default_one_skipped_where_directml_is_not_set_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine import providers
    from ort_layouts.frontends.bench import DEFAULT_SECTIONS

    assert "dml" in DEFAULT_SECTIONS and "diagnosis" in DEFAULT_SECTIONS
    monkeypatch.setattr(providers, "dml_through_worker", lambda: False)
    out = io.StringIO()
    assert run_benchmarks(("dml",), out=out) == []
    assert ("dml    skipped: DirectML through the worker is not set up here (ort-layouts setup dml)"
            in out.getvalue())


def test_gpu_section_without_a_gpu_is_skipped_with_the_reason() -> None:
    if default_provider() != CPU:
        pytest.skip("a GPU EP is present")
    with pytest.raises(ProviderError, match="needs a GPU execution provider"):
        bench_gpu(provider="auto", size_in_bytes=1 << 16, iterations=1)
    out = io.StringIO()
    assert run_benchmarks(("gpu",), out=out) == []
    assert "gpu    skipped: the gpu section needs a GPU execution provider" in out.getvalue()


def test_workloads_have_the_asked_size_and_shapes() -> None:
    names = []
    for name, case, x in oracle_workloads(4 << 20):
        names.append(name)
        assert x.dtype == np.float32 and x.shape == case.shape
    assert names == ["transpose NCHW->NHWC", "broadcast over C", "pad reflect H, W by 1"]
    _, transpose, _ = oracle_workloads(4 << 20)[0]
    assert transpose.shape == (1, 64, 128, 128)  # 64 * 128 * 128 * 4 bytes = 4 MiB


def test_the_oracle_section_runs_every_workload_at_the_smallest_size() -> None:
    """--oracle-mb 0.001 passed the argument check and then skipped the section: the reflect
    pad's input had sides of 0. The smallest tensor is [1, 64, 4, 4] (its pad's input 2 x 2)."""
    _, transpose, _ = oracle_workloads(1000)[0]
    assert transpose.shape == (1, 64, 4, 4)
    out = io.StringIO()
    figures = run_benchmarks(("oracle",), oracle_bytes=1000, repeats=1, out=out)
    assert "skipped" not in out.getvalue(), out.getvalue()
    assert {f.name.split(":")[0] for f in figures} == {"transpose NCHW->NHWC", "broadcast over C",
                                                       "pad reflect H, W by 1"}


def test_device_tensors_copy_and_bound_runs_on_the_cpu_device() -> None:
    allocate, how = device_allocator(CPU)
    assert how
    src = allocate((2, 3), np.float32)
    bits = np.array([[0x7FC00001, 0x80000000, 1], [2, 0xFFA00000, 3]], dtype=np.uint32)
    src.update_inplace(bits.view(np.float32))
    dst = allocate((2, 3), np.float32)
    assert device_copy(src, dst)
    assert np.array_equal(dst.numpy().view(np.uint32), bits)

    case = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    session = make_session(build_model([case]), ProviderConfig(CPU))
    y = allocate((3, 2), np.float32)
    binding = session.io_binding()
    binding.bind_ortvalue_input("x0", src)
    binding.bind_ortvalue_output("y0", y)
    times = device_loop(session, binding, 3)
    assert len(times) == 3 and all(t > 0 for t in times)
    assert np.array_equal(y.numpy().view(np.uint32), bits.T)


def test_unknown_provider_has_no_allocator() -> None:
    with pytest.raises(ProviderError, match="cannot allocate device tensors"):
        device_allocator("NoSuchExecutionProvider")



def test_memory_measure_reports_the_workers_peaks(monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine import runner
    from ort_layouts.engine.parallel import usable_cores, worker_pids
    from ort_layouts.frontends.bench_memory import measure

    monkeypatch.setattr(runner, "PROCESS_MIN_CASES", 1)
    from ort_layouts.engine.suite import standard_suite

    runner.run_cases(standard_suite()[:3], provider="cpu", jobs=3)  # the pool holds 3 from before
    d = measure("cpu", "suite", 0, "1")
    assert d["passed"] > 0 and d["cases"] > d["passed"] // 2
    if usable_cores() < 2 or not Path("/proc/self/status").exists():
        assert d["worker_peak_kib"] == []
        return
    assert len(d["worker_peak_kib"]) == min(usable_cores(), runner.MAX_JOBS)
    for pid, peak in zip(worker_pids()[:len(d["worker_peak_kib"])], d["worker_peak_kib"], strict=True):
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        assert peak >= rss > 10 * 1024  # a Python with numpy and ONNX Runtime: more than 10 MiB


def test_a_process_whose_peak_cannot_be_read_has_none_never_this_process_s() -> None:
    import subprocess
    import sys

    from ort_layouts.frontends.bench_memory import peak_kib, process_peak_kib

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert process_peak_kib(gone.pid) is None  # reaped: no /proc entry
    assert peak_kib() > 10 * 1024
    if Path(f"/proc/{os.getpid()}/status").exists():
        assert process_peak_kib(os.getpid()) == peak_kib()


def test_the_memory_section_sums_the_workers_peaks(monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.frontends import bench

    def child(provider: str, kind: str, size: int, ranks: Any) -> dict[str, Any]:
        return {"base_kib": 100 * 1024, "peak_kib": 120 * 1024, "reset": True, "input_bytes": 1 << 20,
                "output_bytes": 1 << 20, "cases": 3, "passed": 3,
                "worker_peak_kib": [1024, 2048] if kind == "suite" else []}

    monkeypatch.setattr(bench, "_memory_child", child)
    figures = {f.name: f for f in bench.bench_memory()}
    workers = figures["standard suite: the worker processes' peak RSS, together"]
    assert workers.value == 3.0 and workers.unit == "MiB"
    assert workers.detail == "2 workers, 1 - 2 MiB each, imports included"
    assert not any("one large transpose: the worker" in name for name in figures)


def test_the_diagnosis_section_of_no_case_with_an_output_has_no_figure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A selection whose cases have no output element to flip (all empty) gives no figure, not a
    division by zero."""
    from ort_layouts.engine import suite
    from ort_layouts.frontends.bench import bench_diagnosis

    empty = [c for c in suite.standard_suite(ranks=[1, 2]) if 0 in c.shape]
    assert empty
    monkeypatch.setattr(suite, "standard_suite", lambda ranks=None: empty)
    assert bench_diagnosis(step=1) == []


def test_a_large_case_that_did_not_pass_misses_the_memory_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """A case refused for memory holds nothing: its growth is near 0, which is no figure of the
    engine's memory, and the target is missed, not met."""
    from ort_layouts.frontends import bench

    def child(provider: str, kind: str, size: int, ranks: Any) -> dict[str, Any]:
        return {"base_kib": 100 * 1024, "peak_kib": 100 * 1024, "reset": True, "input_bytes": 1 << 40,
                "output_bytes": 1 << 40, "cases": 1, "passed": 0}

    monkeypatch.setattr(bench, "_memory_child", child)
    figures = {f.name: f for f in bench.bench_memory()}
    ratio = figures["one large transpose: growth / tensors"]
    assert ratio.value == 0.0 and ratio.target == "<= 1.1x" and ratio.met is False
