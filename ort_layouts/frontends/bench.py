"""Benchmarks: ``ort-layouts bench`` and ``scripts/bench.py``.

Each figure with a target is a ratio of two rates measured side by side in one process, the two
interleaved and the best of each kept, so that it holds on a noisy machine. Nothing here
asserts a time: the figures are printed (each with its target and whether it was met) and
returned.

Sections:
    suite   the wall time of the whole standard suite, with how many nodes its sessions had;
            cases per second of the engine on whole batches of the suite (a sample of its real
            batches) against one session per case (the same cases).
    floor   the standard suite against ONNX Runtime alone creating and running the same
            sessions (the same models, session options and inputs, nothing checked): cases per
            second of each, of ``run_cases``, and of a validation with its reports; the ratios
            and the reports' share of the run. Any provider (``--provider``); DirectML through
            its worker, whose bare loop is the worker creating and running those sessions.
    diagnosis  what a mismatch costs: every tenth case of the standard suite given its expected
            output with one bit flipped, diagnosed from its own input (no re-run).
    oracle  the expected output from descriptors compared bit for bit with an output
            (:func:`~ort_layouts.reference.execute.verify`), for tensors of 256 MiB (a 4D transpose, a
            broadcast, a pad), against a plain memory copy of the same size.
    gpu     Transpose, Expand and Pad on a GPU EP with inputs and outputs kept on the device
            (I/O binding), against a device-to-device copy of the same size; and the overhead
            of this package's device loop (:func:`device_loop`) against a bare
            ``run_with_iobinding`` loop. Each output is checked once, bit for bit.
    memory  peak resident memory of a validation run, against the tensors it holds, measured in
            a fresh process (:mod:`ort_layouts.frontends.bench_memory`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

__all__ = [
    "DEFAULT_SECTIONS",
    "MIB",
    "SECTIONS",
    "Figure",
    "device_loop",
    "machine",
    "main",
    "run_benchmarks",
]

SECTIONS: tuple[str, ...] = ("suite", "floor", "diagnosis", "oracle", "gpu", "memory", "dml")
DEFAULT_SECTIONS: tuple[str, ...] = SECTIONS  # every section (those that cannot run here are skipped)
MIB = 1 << 20
_CHANNELS = 64  # the 4D tensors are [1, 64, side, side]


@dataclasses.dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure.

    Attributes:
        section: the section that measured it.
        name: what it is.
        value: the figure, in ``unit``.
        unit: "GB/s", "x", "%", "s", "us", "cases/s", "MiB".
        target: the target in words ("" when none).
        met: whether the target was met; None when there is none.
        detail: sizes, counts, how it was measured.
    """

    section: str
    name: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None
    detail: str = ""

    def line(self) -> str:
        verdict = "" if self.met is None else ("  [met]" if self.met else "  [MISSED]")
        target = f"  target {self.target}" if self.target else ""
        detail = f"  ({self.detail})" if self.detail else ""
        return f"{self.section:6s} {self.name:58s} {self.value:10.3f} {self.unit}{target}{verdict}{detail}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def machine() -> dict[str, Any]:
    """The machine the figures were measured on."""
    import onnxruntime as ort

    from ort_layouts.engine.parallel import usable_cores

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "platform": platform.platform(), "cpu": cpu,
            "cpu_count": os.cpu_count(), "usable_cpus": usable_cores(), "python": platform.python_version(),
            "numpy": np.__version__,
            "onnxruntime": ort.__version__}


def _interleaved(fns: Sequence[Callable[[], Any]], repeats: int,
                 processor: list[float] | None = None, values: list[Any] | None = None) -> list[float]:
    """Best wall time of each function, the functions taking turns ``repeats`` times so that
    drift on a noisy machine hits them alike. ``processor``, when given, gets each function's
    least processor time (:func:`_processor_seconds`); ``values`` each function's value of its
    last turn.

    A function is timed to its return: what it returns (a run's results) is its caller's, and
    letting go of it (freeing a suite's results takes 10-20 ms) is no part of the call. It is
    let go of after the clock stops, the previous turn's before the next turn's clock starts."""
    best = [float("inf")] * len(fns)
    least = [float("inf")] * len(fns)
    kept: list[Any] = [None] * len(fns)
    for _ in range(max(1, repeats)):
        for k, fn in enumerate(fns):
            kept[k] = None
            c0 = _processor_seconds() if processor is not None else 0.0
            t0 = time.perf_counter()
            kept[k] = fn()
            best[k] = min(best[k], time.perf_counter() - t0)
            if processor is not None:
                least[k] = min(least[k], _processor_seconds() - c0)
    if processor is not None:
        processor[:] = least
    if values is not None:
        values[:] = kept
    return best


def _processor_seconds() -> float:
    """Processor seconds used so far by this process (every thread), by the CPU EP's session
    process and by the run's worker processes, while they run (Linux: from ``/proc``; elsewhere
    this process alone)."""
    from ort_layouts.engine.parallel import worker_pids
    from ort_layouts.engine.session_process import session_process

    used = time.process_time()
    for pid in (session_process().pid, *worker_pids()):
        if pid is None:
            continue
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            used += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
        except (OSError, ValueError, IndexError):
            pass
    return used


# ---- suite ---------------------------------------------------------------------------------
def _nodes_text(sizes: Sequence[int]) -> str:
    """How many nodes the sessions had, in words."""
    if not sizes:
        return "no sessions"
    ordered = sorted(sizes)
    median = ordered[len(ordered) // 2]
    return (f"{len(sizes)} sessions of {ordered[0]}-{ordered[-1]} nodes (median {median}, "
            f"mean {sum(sizes) / len(sizes):.1f}; {sum(1 for n in sizes if n == 1)} of one node)")


def bench_suite(*, provider: str = "cpu", sample_size: int = 300, repeats: int = 2,
                ranks: Sequence[int] | None = None) -> list[Figure]:
    """The standard suite's wall time and its sessions' node counts; and the engine's rate on a
    sample of the suite's real batches (whole batches spread over the run, as the runner makes
    them) against one session per case on the same cases (interleaved, best of ``repeats``)."""
    from ort_layouts.engine.runner import batch_cases, run_cases
    from ort_layouts.engine.suite import standard_suite

    run_cases(standard_suite(ranks=[1], ops=["Transpose"])[:4], provider=provider)  # warm up imports
    t0 = time.perf_counter()
    cases = standard_suite(ranks=ranks)
    results = run_cases(cases, provider=provider)
    full = time.perf_counter() - t0
    passed = sum(1 for r in results if r)
    batches = batch_cases(cases, provider=provider)
    sizes = [len(b) for b in batches]
    # every stride-th batch: about sample_size cases, whole batches of every size the suite has
    stride = max(1, len(cases) // max(1, sample_size))
    sample: list[Any] = []
    picked: list[int] = []
    for batch in batches[::stride]:
        if len(sample) >= sample_size:
            break
        sample += batch
        picked.append(len(batch))
    t_batched, t_single = _interleaved([lambda: run_cases(sample, provider=provider),
                                        lambda: run_cases(sample, provider=provider, batch_size=1)],
                                       repeats)
    rate_batched, rate_single = len(sample) / t_batched, len(sample) / t_single
    return [
        Figure("suite", "standard suite wall time, build + run + compare", full, "s",
               "< 10 s, >= 5000 cases", full < 10 and len(cases) >= 5000,
               f"{len(cases)} cases, {passed} passed, {len(cases) / full:.0f} cases/s; {_nodes_text(sizes)}"),
        Figure("suite", "batched engine, the suite's own batches", rate_batched, "cases/s",
               detail=f"{len(sample)} cases, one batch in {stride}: {_nodes_text(picked)}"),
        Figure("suite", "one session per case (batch_size=1)", rate_single, "cases/s",
               detail="the same cases"),
        Figure("suite", "batched / one session per case", rate_batched / rate_single, "x",
               detail="the floor section's ratios to bare ONNX Runtime are the yardstick"),
    ]


# ---- floor ---------------------------------------------------------------------------------
def _bare_loop(plans: Sequence[Any]) -> int:
    """ONNX Runtime alone on the engine's sessions: create each one (the engine's
    :func:`~ort_layouts.engine.providers.make_session`: ONNX Runtime's constructor with the
    engine's session options, or the DirectML worker's) and run it once on its inputs; nothing
    is checked. On a non-CPU EP the first session stays open to the end, as the runner keeps
    one (a GPU EP may tear its device down with its last session). Returns the sessions that
    ran."""
    from ort_layouts.engine.providers import CPU, SessionCreationError, make_session

    held = None
    ran = 0
    for plan in plans:
        try:
            session = make_session(plan.model, plan.config)
        except SessionCreationError:
            continue  # the engine finds its unsupported cases by this failure too
        try:
            session.run(plan.names, plan.feeds)
            ran += 1
        except Exception:  # an EP that fails to run a node: the engine reports it as an error
            pass
        if held is None and plan.config.name != CPU:
            held = session
        elif hasattr(session, "release"):  # a DirectML worker's session
            session.release()
    if held is not None and hasattr(held, "release"):
        held.release()
    return ran


# the stages of a validation timed on their own (:func:`_stage_seconds`), in the order they run
_STAGES = ("descriptors", "inputs", "oracle", "models", "sessions", "encoding")


def _stage_seconds(batches: Sequence[Sequence[Any]], results: Sequence[Any],
                   repeats: int) -> dict[str, float]:
    """Processor seconds of each stage of a validation, in this process, over the cases the
    sessions hold (``batches``, as :func:`~ort_layouts.engine.runner.batch_cases` gives them),
    through the library's public functions, each stage its least of ``repeats``, each given
    what the runner has by then: the DirectML operator and its descriptors' dicts (the
    operator's ``inexpressible_reason``, then ``dml_operator(case).to_dict()``), the inputs
    (``make_inputs`` of each batch, from ``generator_states`` of all cases), the expected
    outputs (``expected_outputs``, given the operator, its reason and the output shapes), the
    models (``build_model`` of each batch given its shapes, serialized) and the reports' text of
    ``results`` (a :class:`~ort_layouts.reports.writer.ResultEncoder`'s, as each worker makes it).
    The sessions' own time is the bare loop's; the tensor shapes are found ahead, untimed."""
    from ort_layouts._errors import OrtLayoutsError
    from ort_layouts.engine.graphs import build_model
    from ort_layouts.engine.inputs import generator_states, make_inputs
    from ort_layouts.operators.expected import dml_operator, expected_outputs
    from ort_layouts.operators.registry import operator_for_type
    from ort_layouts.reports.writer import ResultEncoder

    cases = [c for batch in batches for c in batch]
    shapes = [operator_for_type(c.op).tensor_shapes(c) for c in cases]
    ops: list[Any] = []
    reasons: list[str] = []
    inputs: list[Any] = []

    def descriptors() -> None:
        ops.clear()
        reasons.clear()
        for case in cases:
            op: Any = None
            reason = operator_for_type(case.op).inexpressible_reason(case)
            if not reason:
                try:
                    op = dml_operator(case)
                    op.to_dict()
                except OrtLayoutsError:  # no DirectML operator (an empty tensor): numpy's reading
                    pass
            ops.append(op)
            reasons.append(reason)

    def make() -> None:  # the generators' states of all cases at once, as the runner makes them
        inputs.clear()
        states = generator_states(cases)
        start = 0
        for batch in batches:
            inputs.extend(make_inputs(batch, states[start:start + len(batch)]))
            start += len(batch)

    def oracle() -> None:
        for case, op, reason, x, (_, out_shapes) in zip(cases, ops, reasons, inputs, shapes, strict=True):
            expected_outputs(case, x, op=op, reason=None if op is None else reason, shapes=out_shapes)

    def models() -> None:
        start = 0
        for batch in batches:
            build_model(batch, shapes=shapes[start:start + len(batch)]).SerializeToString()
            start += len(batch)

    def encoding() -> None:
        ResultEncoder()(results)

    timed = {"descriptors": descriptors, "inputs": make, "oracle": oracle, "models": models,
             "encoding": encoding}
    least = dict.fromkeys(timed, float("inf"))
    for _ in range(max(1, repeats)):
        for stage, fn in timed.items():
            start = time.process_time()
            fn()
            least[stage] = min(least[stage], time.process_time() - start)
    return least


def bench_floor(*, provider: str = "cpu", repeats: int = 2, ranks: Sequence[int] | None = None,
                batch_size: int = 256, jobs: int | None = None) -> list[Figure]:
    """The standard suite, interleaved, best of ``repeats``: ONNX Runtime alone creating and
    running the engine's sessions (:func:`~ort_layouts.engine.runner.plan_batches`: the same
    models, options and inputs, made ahead and not timed), ``run_cases`` (inputs, the oracle,
    the comparison, the results), and a validation with its reports (``validate --report``'s
    session and report writer; the run's meta is made ahead, and its report directories are
    removed after the timings), each with ``jobs`` worker
    processes (None: the runner's choice); when that is more than one, a validation in one
    process too. Rates are over every case of the suite."""
    import shutil
    import tempfile

    from ort_layouts.engine.providers import resolve_provider
    from ort_layouts.engine.runner import plan_batches, resolve_jobs, run_cases, uses_session_process
    from ort_layouts.engine.session import ValidationSession, validation_meta
    from ort_layouts.engine.session_process import session_process
    from ort_layouts.engine.suite import standard_suite
    from ort_layouts.reports.writer import ReportWriter

    name = resolve_provider(provider)
    cases = standard_suite(ranks=ranks)
    n = len(cases)
    workers = resolve_jobs(jobs, name, n)
    plans = plan_batches(cases, provider=name, batch_size=batch_size)
    meta = validation_meta(provider=name, command="ort-layouts bench --sections floor")
    ids = [c.id for c in cases]
    warm = cases[:: max(1, n // 16)]
    run_cases(warm, provider=name, batch_size=batch_size, jobs=workers)  # imports, the provider, the workers
    if uses_session_process(name, n):  # the one-process runs' child, started before any is timed
        session_process().start()
    _bare_loop(plans[:4])

    def engine() -> list[Any]:
        return run_cases(cases, provider=name, batch_size=batch_size, jobs=workers)

    written: list[str] = []  # the validations' report directories, removed after the timings

    def validate(count: int) -> tuple[Any, Any]:
        """The session's outcome and its writer, which holds the report's text."""
        directory = tempfile.mkdtemp(prefix="ort_layouts_floor_")
        written.append(directory)
        writer = ReportWriter(directory, meta=meta, planned=ids)
        return writer, ValidationSession(cases, provider=name, batch_size=batch_size, writer=writer,
                                         device=meta["device"], jobs=count).run()

    ran = _bare_loop(plans)
    cpu: list[float] = []
    timed = [lambda: _bare_loop(plans), engine, lambda: validate(workers)]
    if workers > 1:
        timed.append(lambda: validate(1))
    last: list[Any] = []
    try:
        t_bare, t_run, t_validate, *t_one = _interleaved(timed, repeats, cpu, last)
    finally:
        for directory in written:
            shutil.rmtree(directory, ignore_errors=True)
    results = last[1]  # the last run's, whose report text the stages time
    del last
    bare, run, full = n / t_bare, n / t_run, n / t_validate
    share = max(0.0, (t_validate - t_run) / t_validate)
    nodes = _nodes_text([p.nodes for p in plans])
    if workers > 1:
        where = f"{workers} worker processes"
    elif uses_session_process(name, n):
        where = "one process; sessions in the session process"
    else:
        where = "one process; sessions on the session thread"
    figures = [
        Figure("floor", f"bare ONNX Runtime, the same sessions ({name})", bare, "cases/s",
               detail=f"{n} cases, {t_bare:.2f} s; {nodes}; {ran} ran, {len(plans) - ran} failed"),
        Figure("floor", "run_cases: inputs, oracle, compare, results", run, "cases/s",
               detail=f"{t_run:.2f} s; {where}"),
        Figure("floor", "run_cases / bare", run / bare, "x", detail="the same sessions"),
        Figure("floor", "validate with reports", full, "cases/s",
               detail=f"{t_validate:.2f} s: results.jsonl, report.json, junit.xml, report.html; {where}"),
        Figure("floor", "validate with reports / bare", full / bare, "x", ">= 0.8x", full / bare >= 0.8),
    ]
    if t_one:
        figures.append(Figure("floor", "validate with reports in one process (jobs 1) / bare",
                              n / t_one[0] / bare, "x", detail=f"{t_one[0]:.2f} s"))
    processes = "this process, its workers and the session process"
    figures += [
        Figure("floor", "reports' share of the validation", 100 * share, "%", "<= 10%", share <= 0.10,
               detail="(validate - run_cases) / validate"),
        Figure("floor", "processor time: bare / validate with reports", cpu[0] / cpu[2], "x",
               detail=f"bare {cpu[0]:.2f} s, run_cases {cpu[1]:.2f} s, validate {cpu[2]:.2f} s "
                      f"({processes})"),
    ]
    return figures + _stage_figures(cases, results, name, batch_size, repeats, t_bare, cpu, workers)


def _stage_figures(cases: Sequence[Any], results: Sequence[Any], name: str, batch_size: int, repeats: int,
                   t_bare: float, cpu: Sequence[float], workers: int) -> list[Figure]:
    """Where a validation's processor time goes, per case of the suite (:func:`_stage_seconds`;
    ``results``: a run's of ``cases``), and the most it may take for 0.8x of the bare rate with
    every CPU the run can keep busy busy: its ``workers`` and this process, of those it may use."""
    from ort_layouts.engine.parallel import usable_cores
    from ort_layouts.engine.runner import batch_cases

    n = len(cases)
    batches = batch_cases(cases, provider=name, batch_size=batch_size)
    seconds = _stage_seconds(batches, results, repeats)
    seconds["sessions"] = cpu[0]
    per_case = {stage: 1e6 * seconds[stage] / n for stage in _STAGES}
    validate = 1e6 * cpu[2] / n
    rest = validate - sum(per_case.values())
    usable = usable_cores()
    cpus = min(usable, workers + 1)  # a pinned run may use fewer than the machine has
    budget = 1e6 * t_bare / 0.8 * cpus / n
    stages = ", ".join(f"{stage} {us:.1f}" for stage, us in per_case.items())
    return [
        Figure("floor", "processor time of validate with reports, per case", validate, "us",
               detail=f"{stages}, the rest {rest:.1f} (comparison, results, batching, the workers' "
                      "transfers, the writer); each stage timed on its own in one process"),
        Figure("floor", f"processor time per case for 0.8x on {cpus} CPUs, at most", budget, "us",
               detail=f"bare {t_bare:.2f} s / 0.8 x {cpus} CPUs / {n} cases, every one busy throughout: "
                      f"{workers} worker process(es) and this one, of the {usable} it may use"),
    ]


# ---- diagnosis -----------------------------------------------------------------------------
def bench_diagnosis(*, step: int = 10, ranks: Sequence[int] | None = None) -> list[Figure]:
    """The diagnosis of a mismatch (:func:`~ort_layouts.engine.diagnose.explain`), on every
    ``step``-th case of the standard suite: each given its expected outputs with the lowest bit
    of the first output's first byte flipped, diagnosed from its own input, with no re-run (a
    validation lends its diagnoses 64 re-runs at most). Milliseconds a case, over all of them and
    for the (op, rank) of five cases or more that costs most; the expected outputs and inputs are
    made ahead."""
    import collections

    from ort_layouts.engine.diagnose import explain
    from ort_layouts.engine.suite import standard_suite
    from ort_layouts.operators.expected import expected_outputs
    from ort_layouts.operators.values import make_input

    work = []
    for case in standard_suite(ranks=ranks)[::step]:
        x = make_input(case)
        outputs = [np.array(o, copy=True) for o in expected_outputs(case, x)]
        if not outputs or outputs[0].size == 0:
            continue  # nothing to flip
        outputs[0].reshape(-1).view(np.uint8)[0] ^= 1
        work.append((case, x, outputs[0] if len(outputs) == 1 else outputs))
    if not work:  # no case of these ranks has an output to flip
        return []
    seconds: collections.defaultdict[tuple[str, int], float] = collections.defaultdict(float)
    counts: collections.Counter[tuple[str, int]] = collections.Counter()
    named = 0
    start = time.perf_counter()
    for case, x, actual in work:
        t0 = time.perf_counter()
        found = explain(case, x, actual)
        key = (case.op, case.rank)
        seconds[key] += time.perf_counter() - t0
        counts[key] += 1
        named += bool(found.text)
    total = time.perf_counter() - start
    groups = [kv for kv in seconds.items() if counts[kv[0]] >= 5] or list(seconds.items())  # not one odd case
    (op, rank), worst = max(groups, key=lambda kv: kv[1] / counts[kv[0]])
    return [
        Figure("diagnosis", "diagnosis of a mismatch, a case", 1e3 * total / len(work), "ms",
               detail=f"{len(work)} cases, every {step}th of the suite, one bit flipped, no re-runs, "
                      f"{total:.2f} s; {named} named"),
        Figure("diagnosis", f"... the costliest: {op} of rank {rank}", 1e3 * worst / counts[(op, rank)],
               "ms", detail=f"{counts[(op, rank)]} cases"),
    ]


# ---- DirectML through the worker -------------------------------------------------------------
def bench_dml(*, sample_size: int = 1000, repeats: int = 2, runs: int = 300) -> list[Figure]:
    """DirectML through the worker against the CPU EP on the same cases (a sample spread over
    the standard suite, interleaved, best of ``repeats``), and the worker's overhead per run: the
    wall time of one ``Run`` seen from Python (pipe, protocol, copies) against the time the
    worker measured around ONNX Runtime's C API ``Run`` call alone (its bare loop)."""
    from ort_layouts._errors import ProviderError
    from ort_layouts.descriptors.dtypes import DataType
    from ort_layouts.engine.graphs import build_model, provider_ir_version, provider_opset
    from ort_layouts.engine.providers import CPU, DML, dml_through_worker, dml_worker
    from ort_layouts.engine.runner import run_cases
    from ort_layouts.engine.suite import standard_suite
    from ort_layouts.operators.case import Case
    from ort_layouts.operators.values import make_input

    if not dml_through_worker():
        raise ProviderError("DirectML through the worker is not set up here (ort-layouts setup dml)")
    cases = standard_suite()
    step = max(1, len(cases) // sample_size)
    sample = cases[::step][:sample_size]
    run_cases(sample[:8], provider=DML)  # Wine and the worker up
    t_dml, t_cpu = _interleaved([lambda: run_cases(sample, provider=DML),
                                 lambda: run_cases(sample, provider=CPU)], repeats)
    stack = str(dml_worker().stack_info())
    case = Case("Transpose", DataType.FLOAT32, (64, 64), perm=(1, 0))
    model = build_model([case], opset=provider_opset(DML), ir_version=provider_ir_version(DML))
    x = make_input(case)
    walls, bare = [], []
    with dml_worker().create_session(model.SerializeToString()) as session:
        session.run(None, {"x0": x})
        for _ in range(runs):
            t0 = time.perf_counter()
            session.run(None, {"x0": x})
            walls.append(time.perf_counter() - t0)
            bare.append(session.run_seconds)
    wall_us, bare_us = 1e6 * float(np.median(walls)), 1e6 * float(np.median(bare))
    return [
        Figure("dml", "DirectML (worker) on a suite sample", len(sample) / t_dml, "cases/s",
               detail=f"{len(sample)} cases, {t_dml:.2f} s; {stack}"),
        Figure("dml", "CPU EP on the same cases", len(sample) / t_cpu, "cases/s",
               detail=f"{t_cpu:.2f} s"),
        Figure("dml", "DirectML / CPU EP", t_cpu / t_dml, "x", detail="cases/s ratio, same cases"),
        Figure("dml", "one Run seen from Python (worker round trip)", wall_us, "us",
               detail=f"median of {runs}, float32 64x64 Transpose"),
        Figure("dml", "the same Run inside the worker (C API OrtRun)", bare_us, "us",
               detail="median, measured by the worker around Run"),
        Figure("dml", "worker overhead per Run", wall_us - bare_us, "us",
               detail=f"{wall_us / bare_us:.2f}x the bare C API call"),
    ]


# ---- oracle --------------------------------------------------------------------------------
def _side(size_in_bytes: int, itemsize: int = 4) -> int:
    """The side of a [1, 64, side, side] tensor of about ``size_in_bytes``: at least 4, so that the
    reflect pad of 1 has an input side of 2 (ONNX reflects a pad smaller than the side)."""
    root: float = (size_in_bytes // itemsize // _CHANNELS) ** 0.5
    return max(4, round(root))


def oracle_workloads(size_in_bytes: int, *, seed: int = 0) -> list[tuple[str, Any, Any]]:
    """(name, Case, input) for the oracle and gpu sections: a 4D NCHW->NHWC transpose, a
    channel broadcast and a reflect pad, each output ``[1, 64, side, side]`` float32 of about
    ``size_in_bytes``, inputs of random bits (NaN payloads included)."""
    from ort_layouts.descriptors.dtypes import DataType
    from ort_layouts.operators.case import Case

    side = _side(size_in_bytes)
    rng = np.random.default_rng(seed)

    def bits(shape: tuple[int, ...]) -> np.ndarray:
        return rng.integers(0, 2**32, size=shape, dtype=np.uint32).view(np.float32)

    full = (1, _CHANNELS, side, side)
    inner = (1, _CHANNELS, side - 2, side - 2)
    return [
        ("transpose NCHW->NHWC", Case("Transpose", DataType.FLOAT32, full, perm=(0, 2, 3, 1)), bits(full)),
        ("broadcast over C", Case("Expand", DataType.FLOAT32, (1, 1, side, side), target_shape=full),
         bits((1, 1, side, side))),
        ("pad reflect H, W by 1", Case("Pad", DataType.FLOAT32, inner, pads=(0, 0, 1, 1, 0, 0, 1, 1),
                                                mode="reflect"), bits(inner)),
    ]


def bench_oracle(*, size_in_bytes: int = 256 * MIB, repeats: int = 3) -> list[Figure]:
    """verify(op, input, actual) against np.copyto of the output's size, with the comparison
    kernel this install has and (when that is the C kernel) with numpy's comparison side by
    side; the unfused path (execute, then compare) is measured alongside for reference."""
    from ort_layouts.operators.expected import dml_operator
    from ort_layouts.reference.buffers import unpack
    from ort_layouts.reference.compare import compare, comparison_kernel, numpy_comparison
    from ort_layouts.reference.execute import DmlOperator, execute, verify

    kernel = comparison_kernel()
    figures = []
    for name, case, x in oracle_workloads(size_in_bytes):
        op = dml_operator(case)
        assert isinstance(op, DmlOperator)  # the workloads have one input and one output
        actual = unpack(op.output, execute(op, x))  # the output under test: correct, so all is read
        out_bytes = actual.nbytes
        scratch = np.empty(op.output.total_tensor_size_in_bytes, dtype=np.uint8)
        copy_src = np.ones(out_bytes, dtype=np.uint8)
        copy_dst = np.empty_like(copy_src)
        np.copyto(copy_dst, copy_src)  # touch every page before timing

        def fused(op: Any = op, x: np.ndarray = x, actual: np.ndarray = actual, name: str = name) -> None:
            if not verify(op, x, actual):
                raise AssertionError(f"verify rejects the oracle's own output for {name}")

        def fused_numpy() -> None:
            with numpy_comparison():
                fused()

        def unfused(op: Any = op, x: np.ndarray = x, actual: np.ndarray = actual,
                    scratch: np.ndarray = scratch, name: str = name) -> None:
            expected = unpack(op.output, execute(op, x, out=scratch))
            if not compare(expected, actual):
                raise AssertionError(f"execute + compare rejects the oracle's own output for {name}")

        def memcpy(d: np.ndarray = copy_dst, s: np.ndarray = copy_src) -> None:
            np.copyto(d, s)

        timed: list[Callable[[], None]] = [memcpy, fused, unfused]
        if kernel != "numpy":
            timed.append(fused_numpy)
        t_copy, t_fused, t_unfused, *t_numpy = _interleaved(timed, repeats)
        gbs = [out_bytes / t / 1e9 for t in (t_copy, t_fused, t_unfused)]
        ratio = gbs[1] / gbs[0]
        mib = f"{out_bytes / MIB:.0f} MiB output"
        figures += [
            Figure("oracle", f"{name}: memory copy (np.copyto)", gbs[0], "GB/s", detail=mib),
            Figure("oracle", f"{name}: verify (oracle + compare, fused)", gbs[1], "GB/s",
                   detail=f"{mib}; comparison: {kernel}"),
            Figure("oracle", f"{name}: execute, then compare (unfused)", gbs[2], "GB/s", detail=mib),
        ]
        if t_numpy:
            figures.append(Figure("oracle", f"{name}: verify with numpy's comparison / memory copy",
                                  t_copy / t_numpy[0], "x", detail="the C kernel left aside"))
        figures.append(Figure("oracle", f"{name}: verify / memory copy", ratio, "x", ">= 0.5x", ratio >= 0.5))
        del scratch, copy_src, copy_dst, actual
    return figures


# ---- gpu -----------------------------------------------------------------------------------
_CLASSIC_DEVICE_TYPES = {"CUDAExecutionProvider": "cuda", "DmlExecutionProvider": "dml",
                         "CPUExecutionProvider": "cpu"}


def device_allocator(provider: str, device_id: int = 0) -> tuple[Callable[[Sequence[int], Any], Any], str]:
    """A function ``(shape, numpy dtype) -> OrtValue`` that allocates on the EP's device, and how.

    The EP's ``OrtEpDevice`` memory (``ep_device.memory_info(OrtDeviceMemoryType.DEFAULT)``)
    where ONNX Runtime offers it (plugin EPs such as WebGPU); else the classic device name
    ("cuda", "dml", "cpu").

    Raises:
        ProviderError: no way to allocate on this EP's device.
    """
    import onnxruntime as ort

    from ort_layouts._errors import ProviderError
    from ort_layouts.engine.providers import ep_devices

    devices = ep_devices(provider)
    memory_type = getattr(getattr(ort, "OrtDeviceMemoryType", None), "DEFAULT", None)
    if device_id < len(devices) and memory_type is not None and hasattr(devices[device_id], "memory_info"):
        info = devices[device_id].memory_info(memory_type)
        if info is not None:
            def allocate(shape: Sequence[int], dtype: Any) -> Any:
                return ort.OrtValue.ortvalue_from_shape_and_type(list(shape), dtype, memory_info=info)
            return allocate, "OrtEpDevice memory (DEFAULT)"
    kind = _CLASSIC_DEVICE_TYPES.get(provider)
    if kind is None:
        raise ProviderError(f"cannot allocate device tensors for {provider}: it lists no OrtEpDevice "
                            f"memory and has no device name; known: {sorted(_CLASSIC_DEVICE_TYPES)}")

    def allocate_classic(shape: Sequence[int], dtype: Any) -> Any:
        return ort.OrtValue.ortvalue_from_shape_and_type(list(shape), dtype, kind, device_id)
    return allocate_classic, f"device_type {kind!r}"


def device_copy(src: Any, dst: Any) -> str:
    """Copy one OrtValue into another on their device (``onnxruntime.copy_tensors``); for CPU
    values, which ONNX Runtime has no data transfer for, a numpy copy. Returns the method."""
    import onnxruntime as ort

    copy = getattr(ort, "copy_tensors", None)
    if copy is not None and src.device_name().lower() != "cpu":
        copy([src], [dst], None)
        return "onnxruntime.copy_tensors"
    dst.update_inplace(src.numpy())
    return "numpy (host values)"


def device_fence(allocate: Callable[[Sequence[int], Any], Any]) -> Callable[[], None]:
    """A wait for everything queued on the device: read a one-element device tensor back to the
    host. ``IOBinding.synchronize_outputs`` and ``copy_tensors`` return before a plugin EP's
    queue (WebGPU) has run, so a timing that ends with them measures only the enqueueing; a
    device-to-host read has to flush the queue and wait for it."""
    probe = allocate((1,), np.float32)
    probe.update_inplace(np.zeros(1, dtype=np.float32))

    def fence() -> None:
        probe.numpy()
    return fence


def device_loop(session: Any, binding: Any, iterations: int,
                fence: Callable[[], None] | None = None) -> list[float]:
    """This package's device loop: run a bound session ``iterations`` times, then wait for the
    device (``fence``, default ``binding.synchronize_outputs``); the seconds of each run (the
    last includes the wait)."""
    times = [0.0] * iterations
    run = session.run_with_iobinding
    wait = fence or binding.synchronize_outputs
    clock = time.perf_counter
    for i in range(iterations):
        t0 = clock()
        run(binding)
        times[i] = clock() - t0
    if iterations:
        t0 = clock()
        wait()
        times[-1] += clock() - t0
    return times


def gpu_section_provider(provider: str = "auto", *, allow_cpu: bool = False) -> str:
    """The EP the gpu section runs on: ``provider`` ("auto": the default GPU EP) where it is a
    GPU EP that runs in this process; else, with ``allow_cpu``, the CPU EP (no GPU EP here, or
    DirectML only through its worker process, which binds no device memory of this one).

    Raises:
        ProviderError: ``provider`` names no EP, or one not available here (the message lists
            the valid ones); without ``allow_cpu``, no GPU EP that runs in this process.
    """
    from ort_layouts._errors import ProviderError
    from ort_layouts.engine.providers import CPU, DML, dml_through_worker, resolve_provider

    name = resolve_provider(provider)
    if name != CPU and not (name == DML and dml_through_worker()):
        return name
    if allow_cpu:
        return CPU
    if name == CPU:
        raise ProviderError(f"the gpu section needs a GPU execution provider; {provider!r} resolves to "
                            f"{CPU} (ask for one with --gpu-provider webgpu|dml|cuda, or run it on the CPU "
                            "EP with --gpu-on-cpu)")
    raise ProviderError("the gpu section needs a GPU execution provider in this process (it binds "
                        "device memory); DirectML runs here through its worker process (run the section "
                        "on the CPU EP with --gpu-on-cpu)")


def bench_gpu(*, provider: str = "auto", device_id: int = 0, size_in_bytes: int = 64 * MIB,
              iterations: int = 200, repeats: int = 3, allow_cpu: bool = False) -> list[Figure]:
    """Layout-op bandwidth on a GPU EP with I/O binding; every output checked once bit for bit.

    Args:
        provider: the EP ("auto" picks the default GPU EP).
        device_id: its device.
        size_in_bytes: size of each output.
        iterations: runs per timed loop.
        repeats: timed loops of each kind, interleaved (best kept).
        allow_cpu: run on the CPU EP where no GPU EP runs in this process (to exercise this
            code path without one): :func:`gpu_section_provider`.

    Raises:
        ProviderError: no GPU EP in this process (unless ``allow_cpu``), or a ``provider`` not
            available here.
    """
    from ort_layouts.engine.graphs import build_model, provider_opset
    from ort_layouts.engine.providers import ProviderConfig, make_session
    from ort_layouts.operators.expected import dml_operator, output_shape
    from ort_layouts.reference.execute import DmlOperator, verify

    name = gpu_section_provider(provider, allow_cpu=allow_cpu)
    config = ProviderConfig(name, device_id=device_id)
    allocate, how = device_allocator(name, device_id)
    fence = device_fence(allocate)
    figures = []
    for label, case, x in oracle_workloads(size_in_bytes, seed=1):
        session = make_session(build_model([case], opset=provider_opset(config.name)), config)
        shape = output_shape(case)
        x_dev = allocate(x.shape, np.float32)
        x_dev.update_inplace(np.ascontiguousarray(x))
        y_dev = allocate(shape, np.float32)
        y_copy = allocate(shape, np.float32)
        binding = session.io_binding()
        binding.bind_ortvalue_input("x0", x_dev)
        binding.bind_ortvalue_output("y0", y_dev)
        for _ in range(3):  # warm up: pipelines, allocations
            session.run_with_iobinding(binding)
        got = y_dev.numpy()
        op = dml_operator(case)
        assert isinstance(op, DmlOperator)  # the workloads have one input and one output
        check = verify(op, x, got)
        copy_how = device_copy(y_dev, y_copy)
        copied = verify(op, x, y_copy.numpy())
        out_bytes = int(np.prod(shape)) * 4

        def bare(n: int = iterations, s: Any = session, b: Any = binding) -> None:
            for _ in range(n):
                s.run_with_iobinding(b)
            fence()

        def harness(n: int = iterations, s: Any = session, b: Any = binding) -> None:
            device_loop(s, b, n, fence)

        def d2d(n: int = iterations, src: Any = y_dev, dst: Any = y_copy) -> None:
            for _ in range(n):
                device_copy(src, dst)
            fence()  # the device's one queue: the copies' too

        t_bare, t_harness, t_copy = _interleaved([bare, harness, d2d], repeats)
        op_rate = out_bytes * iterations / t_harness / 1e9
        copy_rate = out_bytes * iterations / t_copy / 1e9
        overhead = t_harness / t_bare - 1
        ok = "output checked bit for bit: " + ("equal" if check else f"MISMATCH {check.message}")
        figures += [
            Figure("gpu", f"{label} on {name}", op_rate, "GB/s",
                   detail=f"{out_bytes / MIB:.0f} MiB written per run, {iterations} runs; {ok}"),
            Figure("gpu", f"{label}: device-to-device copy", copy_rate, "GB/s",
                   detail=f"{copy_how}; copy {'equal' if copied else 'DIFFERS'}; tensors: {how}"),
            Figure("gpu", f"{label}: op / device copy", op_rate / copy_rate, "x"),
            Figure("gpu", f"{label}: device_loop overhead vs bare run_with_iobinding", overhead * 100, "%",
                   "<= 5%", overhead <= 0.05),
        ]
        del binding, session, x_dev, y_dev, y_copy
    return figures


# ---- memory --------------------------------------------------------------------------------
def _memory_child(provider: str, kind: str, size_in_bytes: int, ranks: Sequence[int] | None
                  ) -> dict[str, Any]:
    """Run :mod:`ort_layouts.frontends.bench_memory` in a fresh process and read its figures."""
    root = str(Path(__file__).resolve().parents[2])  # the directory that holds ort_layouts
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    out = subprocess.run([sys.executable, "-m", "ort_layouts.frontends.bench_memory", provider, kind,
                          str(size_in_bytes), "all" if ranks is None else ",".join(map(str, ranks))],
                         capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"the memory benchmark's child process failed: {out.stderr.strip()[-2000:]}")
    data: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def bench_memory(*, provider: str = "cpu", size_in_bytes: int = 256 * MIB,
                 ranks: Sequence[int] | None = None) -> list[Figure]:
    """Peak resident memory (VmHWM, else ru_maxrss) of a validation run in a fresh process: the
    standard suite, and one large NCHW->NHWC transpose; growth over the process before the run,
    against the input and output tensors the run holds; for a run spread over worker processes,
    their peaks too. The large case's growth has a target:
    at most 1.1x its tensors (its input made in place, its output checked from the descriptors
    without an expected copy)."""
    figures = []
    for kind, label in (("suite", "standard suite"), ("large", "one large transpose")):
        d = _memory_child(provider, kind, size_in_bytes, ranks)
        growth = (d["peak_kib"] - d["base_kib"]) * 1024
        tensors = d["input_bytes"] + d["output_bytes"]
        ratio = growth / tensors
        target, met = ("<= 1.1x", ratio <= 1.1) if kind == "large" else ("", None)
        if kind == "large" and d["passed"] != d["cases"]:  # a case not run (refused for memory) holds nothing
            met = False
        figures += [
            Figure("memory", f"{label}: peak RSS", d["peak_kib"] / 1024, "MiB",
                   detail=f"{d['cases']} cases, {d['passed']} passed; {d['base_kib'] / 1024:.0f} MiB "
                          f"before the run{'' if d['reset'] else ' (peak not resettable: since start)'}"),
            Figure("memory", f"{label}: growth during the run", growth / MIB, "MiB"),
            Figure("memory", f"{label}: input + output tensors", tensors / MIB, "MiB"),
            Figure("memory", f"{label}: growth / tensors", ratio, "x", target, met),
        ]
        workers = d.get("worker_peak_kib") or []
        if workers:
            figures.append(Figure("memory", f"{label}: the worker processes' peak RSS, together",
                                  sum(workers) / 1024, "MiB",
                                  detail=f"{len(workers)} workers, {min(workers) / 1024:.0f} - "
                                         f"{max(workers) / 1024:.0f} MiB each, imports included"))
    return figures


# ---- driver --------------------------------------------------------------------------------
def run_benchmarks(
    sections: Sequence[str] = DEFAULT_SECTIONS,
    *,
    provider: str = "cpu",
    gpu_provider: str = "auto",
    device_id: int = 0,
    suite_sample: int = 300,
    suite_ranks: Sequence[int] | None = None,
    oracle_bytes: int = 256 * MIB,
    gpu_bytes: int = 64 * MIB,
    gpu_iterations: int = 200,
    memory_bytes: int = 256 * MIB,
    repeats: int = 3,
    allow_cpu_gpu_section: bool = False,
    out: TextIO | None = None,
    jobs: int | None = None,
) -> list[Figure]:
    """Run the named sections, print a header and each figure as it is measured, return them all.

    A section that cannot run here (no GPU EP) prints why and is skipped.
    """
    from ort_layouts._errors import OrtLayoutsError

    stream = sys.stdout if out is None else out
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown bench sections {unknown}; valid: {list(SECTIONS)}")
    m = machine()
    print(f"# ort_layouts bench  {m['date']}  {m['platform']}  {m['cpu']}  "
          f"cpus={m['cpu_count']} ({m['usable_cpus']} usable)  python {m['python']}  numpy {m['numpy']}  "
          f"onnxruntime {m['onnxruntime']}",
          file=stream, flush=True)
    runners: dict[str, Callable[[], list[Figure]]] = {
        "suite": lambda: bench_suite(provider=provider, sample_size=suite_sample, ranks=suite_ranks,
                                     repeats=repeats),
        "floor": lambda: bench_floor(provider=provider, repeats=repeats, ranks=suite_ranks,
                                     jobs=jobs),
        "diagnosis": lambda: bench_diagnosis(ranks=suite_ranks),
        "oracle": lambda: bench_oracle(size_in_bytes=oracle_bytes, repeats=repeats),
        "gpu": lambda: bench_gpu(provider=gpu_provider, device_id=device_id, size_in_bytes=gpu_bytes,
                                 iterations=gpu_iterations, repeats=repeats, allow_cpu=allow_cpu_gpu_section),
        "memory": lambda: bench_memory(provider=provider, size_in_bytes=memory_bytes, ranks=suite_ranks),
        "dml": lambda: bench_dml(sample_size=max(suite_sample, 1000), repeats=repeats),
    }
    figures: list[Figure] = []
    for section in sections:
        try:
            got = runners[section]()
        except OrtLayoutsError as e:
            print(f"{section:6s} skipped: {e}", file=stream, flush=True)
            continue
        for f in got:
            print(f.line(), file=stream, flush=True)
        figures += got
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    """``python scripts/bench.py``: the bench subcommand on its own (its arguments are the
    command line's, :func:`ort_layouts.frontends.cli.bench_main`)."""
    from ort_layouts.frontends.cli import bench_main

    return bench_main(argv)
