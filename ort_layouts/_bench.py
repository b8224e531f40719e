"""Benchmarks: each figure is a ratio of two rates measured side by side in one process, so it
holds on a noisy machine. Nothing here asserts a time; the figures are printed and returned.

Sections:
    suite   cases per second of the batched engine against one session per case (same cases),
            and the wall time of the whole standard suite.
    oracle  expected output from descriptors + bit-exact comparison, for tensors of >= 256 MB
            (a 4D transpose, a broadcast, a pad), against a plain memory copy of the same size.
    gpu     Transpose, Expand and Pad on a GPU EP with inputs and outputs kept on the device
            (I/O binding), against a device-to-device copy of the same size; and the harness's
            overhead against a bare ``run_with_iobinding`` loop.
    memory  peak resident memory of a validation run, against the tensors it holds.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import numpy as np

__all__ = ["SECTIONS", "Figure", "run_benchmarks"]

SECTIONS: tuple[str, ...] = ("suite", "oracle", "gpu", "memory")
_MiB = 1 << 20


@dataclasses.dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure. ``met`` is None where the figure has no target."""

    section: str
    name: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None
    detail: str = ""

    def line(self) -> str:
        verdict = "" if self.met is None else ("  [target met]" if self.met else "  [target MISSED]")
        target = f"  (target {self.target})" if self.target else ""
        detail = f"  {self.detail}" if self.detail else ""
        return f"{self.section:7s} {self.name:52s} {self.value:12.3f} {self.unit}{target}{verdict}{detail}"


def _best_of(fn: Callable[[], Any], repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls (the least disturbed run)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


# ---- suite -----------------------------------------------------------------------------------
def bench_suite(*, provider: str = "cpu", sample_size: int = 200) -> list[Figure]:
    from ._runner import run_cases
    from ._suite import standard_suite

    cases = standard_suite()
    t0 = time.perf_counter()
    results = run_cases(cases, provider=provider)
    full = time.perf_counter() - t0
    passed = sum(1 for r in results if r)
    step = max(1, len(cases) // sample_size)
    sample = cases[::step][:sample_size]
    # interleave the two so that drift on a noisy machine hits both alike
    batched, single = [], []
    for _ in range(2):
        t0 = time.perf_counter()
        run_cases(sample, provider=provider)
        batched.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        run_cases(sample, provider=provider, batch_size=1)
        single.append(time.perf_counter() - t0)
    rate_batched = len(sample) / min(batched)
    rate_single = len(sample) / min(single)
    ratio = rate_batched / rate_single
    return [
        Figure("suite", f"standard suite wall time ({len(cases)} cases, {passed} passed)", full, "s",
               "< 10 s with >= 5000 cases", full < 10 and len(cases) >= 5000),
        Figure("suite", "batched rate", rate_batched, "cases/s", detail=f"{len(sample)} cases"),
        Figure("suite", "one session per case rate", rate_single, "cases/s", detail=f"{len(sample)} cases"),
        Figure("suite", "batched / one-session-per-case", ratio, "x", ">= 25x", ratio >= 25),
    ]


# ---- oracle ----------------------------------------------------------------------------------
def bench_oracle(*, size_in_bytes: int = 256 * _MiB, repeats: int = 3) -> list[Figure]:
    from ._compare import compare
    from ._descriptor import BufferTensorDesc
    from ._oracle import IdentityOp, execute
    from ._padding import PaddingOp

    elements = size_in_bytes // 4
    rng = np.random.default_rng(0)
    # a 4D NCHW -> NHWC transpose, a channel broadcast, a spatial pad; each output ~= size_in_bytes
    side = int(round((elements // 64) ** 0.5))
    shape4 = (1, 64, side, side)
    src = rng.integers(0, 2**32, size=shape4, dtype=np.uint32).view(np.float32)
    t_in = BufferTensorDesc("float32", shape4)
    transpose = IdentityOp(t_in.transpose((0, 2, 3, 1)),
                           BufferTensorDesc("float32", (1, side, side, 64)))
    small = rng.integers(0, 2**32, size=(1, 1, side, side), dtype=np.uint32).view(np.float32)
    b_in = BufferTensorDesc("float32", small.shape)
    broadcast = IdentityOp(b_in.broadcast_to(shape4), BufferTensorDesc("float32", shape4))
    pad_side = side - 2
    pad_src = rng.integers(0, 2**32, size=(1, 64, pad_side, pad_side), dtype=np.uint32).view(np.float32)
    pad = PaddingOp.from_onnx(BufferTensorDesc("float32", pad_src.shape), [0, 0, 1, 1, 0, 0, 1, 1],
                              mode="reflect")
    ops: list[tuple[str, Any, np.ndarray]] = [
        ("transpose NCHW->NHWC", transpose, src),
        ("broadcast C", broadcast, small),
        ("pad reflect", pad, pad_src),
    ]
    figures = []
    for name, op, array in ops:
        out_bytes = op.output.total_tensor_size_in_bytes
        buf = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        out = np.empty(out_bytes, dtype=np.uint8)
        actual = np.empty(out_bytes, dtype=np.uint8)
        execute(op, buf, out=actual)
        shape = op.output.sizes
        expected_view = out[: np.prod(shape) * 4].view(np.float32).reshape(shape)
        actual_view = actual[: np.prod(shape) * 4].view(np.float32).reshape(shape)

        def oracle_and_compare(op: Any = op, buf: np.ndarray = buf, out: np.ndarray = out,
                               e: np.ndarray = expected_view, a: np.ndarray = actual_view) -> None:
            execute(op, buf, out=out)
            if not compare(e, a):
                raise AssertionError("oracle disagrees with itself")

        memcpy_src = np.ones(out_bytes, dtype=np.uint8)
        memcpy_dst = np.empty_like(memcpy_src)
        t_copy, t_oracle = [], []
        for _ in range(repeats):  # interleaved, best of each
            t_copy.append(_best_of(lambda d=memcpy_dst, s=memcpy_src: np.copyto(d, s), 1))
            t_oracle.append(_best_of(oracle_and_compare, 1))
        rate_copy = out_bytes / min(t_copy) / 1e9
        rate_oracle = out_bytes / min(t_oracle) / 1e9
        ratio = rate_oracle / rate_copy
        figures += [
            Figure("oracle", f"{name}: oracle+compare", rate_oracle, "GB/s",
                   detail=f"{out_bytes / _MiB:.0f} MiB output"),
            Figure("oracle", f"{name}: memory copy", rate_copy, "GB/s"),
            Figure("oracle", f"{name}: oracle+compare / memory copy", ratio, "x", ">= 0.5x", ratio >= 0.5),
        ]
        del out, actual, memcpy_src, memcpy_dst
    return figures


# ---- gpu -------------------------------------------------------------------------------------
def bench_gpu(*, provider: str = "auto", size_in_bytes: int = 64 * _MiB, iterations: int = 50) -> list[Figure]:
    """GPU layout-op bandwidth with I/O binding. Needs a GPU EP; raises ProviderError otherwise."""
    import onnxruntime as ort

    from ._case import Case
    from ._errors import ProviderError
    from ._graphs import build_model
    from ._providers import ProviderConfig, device_memory_info, make_session, resolve_provider

    name = resolve_provider(provider)
    if name == "CPUExecutionProvider":
        raise ProviderError("the gpu section needs a GPU execution provider; CPUExecutionProvider "
                            "is the only one available here")
    config = ProviderConfig(name)
    elements = size_in_bytes // 4
    side = int(round((elements // 64) ** 0.5))
    cases = [
        ("Transpose", Case("Transpose", "float32", (1, 64, side, side), perm=(0, 2, 3, 1))),
        ("Expand", Case("Expand", "float32", (1, 1, side, side), target_shape=(1, 64, side, side))),
        ("Pad", Case("Pad", "float32", (1, 64, side - 2, side - 2), pads=(0, 0, 1, 1, 0, 0, 1, 1),
                     mode="reflect")),
    ]
    mem = device_memory_info(config)
    rng = np.random.default_rng(0)
    figures = []
    for label, case in cases:
        sess = make_session(build_model([case]).SerializeToString(), config)
        x = rng.integers(0, 2**32, size=case.shape, dtype=np.uint32).view(np.float32)
        out_shape = sess.get_outputs()[0].shape
        x_dev = ort.OrtValue.ortvalue_from_shape_and_type(list(x.shape), np.float32, memory_info=mem)
        x_dev.update_inplace(x)
        y_dev = ort.OrtValue.ortvalue_from_shape_and_type(list(out_shape), np.float32, memory_info=mem)
        y_copy = ort.OrtValue.ortvalue_from_shape_and_type(list(out_shape), np.float32, memory_info=mem)
        binding = sess.io_binding()
        binding.bind_ortvalue_input("x0", x_dev)
        binding.bind_ortvalue_output("y0", y_dev)
        for _ in range(3):
            sess.run_with_iobinding(binding)
        out_bytes = int(np.prod(out_shape)) * 4

        def bare(n: int = iterations, s: Any = sess, b: Any = binding) -> None:
            for _ in range(n):
                s.run_with_iobinding(b)

        def harness(n: int = iterations, s: Any = sess, b: Any = binding) -> None:
            timed_device_runs(s, b, n)

        def d2d(n: int = iterations, src: Any = y_dev, dst: Any = y_copy) -> None:
            for _ in range(n):
                ort.copy_tensors([src], [dst], None)
            dst.numpy() if False else None

        t_bare, t_harness, t_copy = [], [], []
        for _ in range(3):
            t_bare.append(_best_of(bare, 1))
            t_harness.append(_best_of(harness, 1))
            t_copy.append(_best_of(d2d, 1))
        op_rate = out_bytes * iterations / min(t_bare) / 1e9
        copy_rate = out_bytes * iterations / min(t_copy) / 1e9
        overhead = min(t_harness) / min(t_bare) - 1
        figures += [
            Figure("gpu", f"{label} on {name} (bytes written)", op_rate, "GB/s",
                   detail=f"{out_bytes / _MiB:.0f} MiB output, {iterations} runs"),
            Figure("gpu", f"{label}: device-to-device copy", copy_rate, "GB/s"),
            Figure("gpu", f"{label} / device copy", op_rate / copy_rate, "x"),
            Figure("gpu", f"{label}: harness overhead vs bare run_with_iobinding", overhead * 100, "%",
                   "<= 5%", overhead <= 0.05),
        ]
    return figures


def timed_device_runs(session: Any, binding: Any, iterations: int) -> list[float]:
    """The harness's device loop: run a bound session ``iterations`` times, timing each run."""
    times = []
    run = session.run_with_iobinding
    clock = time.perf_counter
    for _ in range(iterations):
        t0 = clock()
        run(binding)
        times.append(clock() - t0)
    return times


# ---- memory ----------------------------------------------------------------------------------
_MEMORY_CHILD = r"""
import json, resource, sys
import numpy as np
from ort_layouts._runner import run_cases
from ort_layouts._suite import standard_suite, make_input
cases = standard_suite()
held = sum(make_input(c).nbytes for c in cases)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
results = run_cases(cases, provider=sys.argv[1])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"base_kib": base, "peak_kib": peak, "input_bytes": held, "cases": len(cases)}))
"""


def bench_memory(*, provider: str = "cpu") -> list[Figure]:
    out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, provider], capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": _root_path()})
    data = json.loads(out.stdout.strip().splitlines()[-1])
    growth = (data["peak_kib"] - data["base_kib"]) * 1024
    return [
        Figure("memory", f"peak RSS of a validation run ({data['cases']} cases)", data["peak_kib"] / 1024,
               "MiB", detail=f"{data['base_kib'] / 1024:.0f} MiB before the run"),
        Figure("memory", "growth during the run", growth / _MiB, "MiB"),
        Figure("memory", "input tensors of the whole suite", data["input_bytes"] / _MiB, "MiB"),
    ]


def _root_path() -> str:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])


# ---- driver ----------------------------------------------------------------------------------
def run_benchmarks(
    sections: Sequence[str] = ("suite", "oracle", "memory"),
    *,
    provider: str = "cpu",
    gpu_provider: str = "auto",
    oracle_bytes: int = 256 * _MiB,
    gpu_bytes: int = 64 * _MiB,
    out: TextIO = sys.stdout,
) -> list[Figure]:
    """Run the named sections, print each figure as it is measured, return them all."""
    from ._errors import OrtLayoutsError

    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown bench sections {unknown}; valid: {list(SECTIONS)}")
    print(f"# ort_layouts bench  {time.strftime('%Y-%m-%d')}  {platform.platform()}  "
          f"{platform.processor() or platform.machine()}  cpus={os.cpu_count()}", file=out)
    figures: list[Figure] = []
    runners: dict[str, Callable[[], list[Figure]]] = {
        "suite": lambda: bench_suite(provider=provider),
        "oracle": lambda: bench_oracle(size_in_bytes=oracle_bytes),
        "gpu": lambda: bench_gpu(provider=gpu_provider, size_in_bytes=gpu_bytes),
        "memory": lambda: bench_memory(provider=provider),
    }
    for section in sections:
        try:
            got = runners[section]()
        except OrtLayoutsError as e:
            print(f"{section:7s} skipped: {e}", file=out)
            continue
        for f in got:
            print(f.line(), file=out, flush=True)
        figures += got
    return figures


def summarize(figures: Sequence[Figure]) -> dict[str, Any]:
    return {"date": time.strftime("%Y-%m-%d"), "machine": platform.platform(),
            "figures": [dataclasses.asdict(f) for f in figures],
            "median_ratio": statistics.median([f.value for f in figures if f.unit == "x"] or [0])}
