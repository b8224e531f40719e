"""The batched runner: many cases share one graph and one session.

Cases are grouped by opset, op and data type and cut into batches of ``batch_size``; each batch
becomes one model (see :mod:`ort_layouts.engine.graphs`) and one session. A batch whose session
cannot be created, or whose run fails, loses its culprits and runs again: the node ONNX
Runtime's error names, with its kin (the cases of the batch that share its kernel signature),
or the nodes a placement probe would move off the EP; else it is split in two and each half
retried, until the culprits stand alone. A lone case whose session fails is *unsupported* (with
CPU fallback off, that is how an EP says it cannot take a node), one whose run fails is an
*error*. The rest still run. Each result goes to ``on_result`` as soon as it is known; a
mismatch is diagnosed, and may be run again alone for that (:meth:`_Run._rerun`).

A case whose operator has several data inputs (Concat) is fed ``x{i}``, ``x{i}_1``, ... cut from
its one input tensor; one with several outputs (Split) has each output compared bit for bit,
and a mismatch names the first output that differs ("output 1 of 3: ...").

How a run goes, so that it costs little more than ONNX Runtime creating and running the same
sessions on its own:

- every case's operator module and tensor shapes are looked up first, to cut the batches; a
  batch's cases are planned (DirectML operator and descriptors, each asked of its operator
  module once) when the batch is filled, with the inputs of all its cases at once
  (:func:`~ort_layouts.engine.inputs.make_inputs`, the values of ``make_input``) and the
  expected outputs from the descriptors (on the DML EP every case is planned first, so that
  what DirectML cannot express is reported before any session);
- the sessions are created and run on one thread of their own (ONNX Runtime lets go of
  Python's lock for most of that) while the next batches are filled and the earlier ones
  judged, up to four batches queued; on the CPU EP a one-process run of ``PROCESS_MIN_CASES``
  cases or more hands them from that thread to the session process
  (:mod:`~ort_layouts.engine.session_process`), where no lock is shared with this process;
- a case passes when each output has the expected element type and shape and the same bytes
  (bit-for-bit equality); any other case is compared in full, with the figures and diagnosis
  a mismatch gets;
- for the run, Python's cycle collector is paused (a run makes many small objects and no
  cycles worth collecting before it ends) and Python's lock changes hands every 0.2 ms
  instead of every 5 ms, so the session thread gets it back soon (:func:`_collector_paused`).

A run with ``jobs`` above 1 (by default a CPU EP run of ``PROCESS_MIN_CASES`` cases or more, on a
machine with several usable processors: :func:`resolve_jobs`) cuts its batches into units of
whole batches and hands them to worker processes (:mod:`~ort_layouts.engine.parallel`); each
worker runs its units as above, each batch in turn (:func:`run_unit`), and this process rebuilds
each result around its own case and hands it to ``on_result``. The batches, and so the verdicts,
are those of a one-process run (a diagnosis can differ where a unit needs more than its share of
the run's re-runs).

Note: apart from the worker processes and the session process, the runner works in-process; a
native crash of an EP in this process ends it (in the session process it fails the batch, and
the next batch starts a new one; in a worker it fails the unit, whose cases then run one to a
unit, so that the one that kills its worker is reported as an error).
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import math
import operator
import pickle
import re
import sys
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from ort_layouts._errors import (
    ArgumentError,
    NotExpressibleError,
    OrtLayoutsError,
    ProviderError,
    a_type,
)
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.descriptors.sequences import is_integer
from ort_layouts.descriptors.size import packed_strides
from ort_layouts.engine.dml.client import DmlWorkerTimeoutError
from ort_layouts.engine.environment import short_of_memory
from ort_layouts.engine.graphs import build_model, provider_ir_version, provider_opset
from ort_layouts.engine.inputs import generator_states, make_inputs
from ort_layouts.engine.known_issues import known_issue_for
from ort_layouts.engine.parallel import (
    MAX_JOBS,
    Budget,
    Unit,
    pickled_for_workers,
    run_units,
    start_workers,
    usable_cores,
    workers_busy_here,
)
from ort_layouts.engine.providers import (
    CPU,
    DML,
    WEBGPU,
    ProviderConfig,
    ProviderOptionError,
    SessionCreationError,
    check_device_id,
    device_description,
    dml_through_worker,
    dml_worker,
    interrupt_sessions,
    make_session,
    node_assignment,
    resolve_provider,
    runtime_version,
    session_settings,
)
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.session_process import (
    SessionProcess,
    SessionProcessCreateError,
    SessionProcessDiedError,
    SessionProcessRunError,
    session_process,
)
from ort_layouts.engine.suite import is_edge_case
from ort_layouts.operators.base import Operator, input_name, output_name
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import expected_output, expected_outputs
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.values import check_cases, check_input, make_input
from ort_layouts.reference.execute import (
    LARGE_OUTPUT_BYTES,
    PendingOutput,
    compare_output,
    is_multi_operator,
    pending_output,
)

__all__ = ["BatchPlan", "batch_cases", "check_provider_start", "plan_batches", "run_cases",
           "uses_session_process"]

OnResult = Callable[[CaseResult], None]
# encode(results): one value a result; on_encoded(pairs): the results that arrived together,
# each with what encode made of it
Encode = Callable[[Sequence[CaseResult]], Iterable[Any]]
OnEncoded = Callable[[list[tuple[CaseResult, Any]]], None]

# a run of at least this many cases is one worth starting processes for (about half a second
# each, once per process): on the CPU and WebGPU EPs it is spread over worker processes by
# default (:func:`resolve_jobs`), and a CPU EP run in one process hands its sessions to the
# session process (:func:`uses_session_process`)
PROCESS_MIN_CASES = 2000

#: re-runs of failing cases per run that the diagnosis may make (each a one-node session)
RERUN_LIMIT = 64

# ONNX Runtime names the node in its errors: "... node with name 'n12_Pad'"
_NAMED_NODE = re.compile(r"name '?n(\d+)_[A-Za-z]+'?")
# ... and the node a run failed in: "Non-zero status code returned while running Pad node. Name:'n3_Pad'"
_RUN_NODE = re.compile(r"running [A-Za-z]+ node\. Name:'n(\d+)_[A-Za-z]+'")
# outputs up to this size pass on equal bytes; larger ones go to compare, which never copies them
_BYTES_EQUAL_LIMIT = 64 << 10


class _Prepared:
    """A case on its way through a run: its operator module and tensor shapes; once planned
    (:meth:`plan`), its DirectML operator (None when DirectML cannot express the case) and
    descriptors; once its batch is filled, its input (the whole tensor and the node's feeds)
    and expected outputs."""

    __slots__ = ("case", "descriptors", "expected", "feeds", "input", "input_shapes", "op", "operator",
                 "output_shapes", "planned", "reason", "seconds")

    def __init__(self, case: Case, operator: Operator) -> None:
        start = time.perf_counter()
        self.case = case
        self.operator = operator
        self.op: Any = None
        self.reason = ""
        self.planned = False
        self.descriptors: dict[str, Any] = {}
        self.input_shapes, self.output_shapes = operator.tensor_shapes(case)
        self.input: np.ndarray = np.empty(0)
        self.feeds: list[np.ndarray] = []
        self.expected: list[np.ndarray | PendingOutput] = []
        self.seconds = time.perf_counter() - start

    def plan(self, provider: str) -> str:
        """Find the case's DirectML operator and descriptors; return the reason the case is
        unsupported on ``provider`` ("" when it runs). DirectML cannot express some cases (a
        Pad that crops): on the DML EP they are unsupported, unless the EP runs them anyway
        (an empty tensor, a Pad-11 that crops); their outputs come from numpy's reading."""
        if self.planned:
            return ""
        start = time.perf_counter()
        case, operator = self.case, self.operator
        if case.data_type.bitwidth < 8:
            self.descriptors = self._known_descriptors()
            return (f"{case.data_type.name} data is not run: numpy has no 4-bit type to make its input and "
                    f"read its outputs with, and {operator.data_type_reason(case)}; dml_operator and "
                    "expected_output describe the case")
        reason = operator.inexpressible_reason(case)
        if reason:
            if provider == DML and not operator.ep_runs_inexpressible(case):
                self.descriptors = self._known_descriptors()
                return reason
        else:
            try:
                self.op = operator.dml_operator(case)
            except NotExpressibleError as e:
                if provider == DML:
                    return str(e)
        self.reason = reason
        self.descriptors = self.op.to_dict() if self.op is not None else {}
        self.planned = True
        self.seconds += time.perf_counter() - start
        return ""

    def _known_descriptors(self) -> dict[str, Any]:
        """The descriptors of the DirectML operator the case describes, for a case that is not
        run: a 4-bit case has them (DirectML takes no 4-bit data-movement tensor, but the
        descriptors hold it); {} where the case has no DirectML operator (a Pad that crops, a
        rank-0 Transpose)."""
        try:
            return dict(self.operator.dml_operator(self.case).to_dict())
        except OrtLayoutsError:
            return {}

    @property
    def is_edge(self) -> bool:
        """A rank-0 or an empty tensor (:func:`~ort_layouts.engine.suite.is_edge_case`)."""
        if self.case.rank == 0:
            return True
        if type(self.operator).has_empty_tensor is Operator.has_empty_tensor:  # a 0 in any shape
            return any(0 in s for s in (*self.input_shapes, *self.output_shapes))
        return self.operator.has_empty_tensor(self.case)

    @property
    def large_output(self) -> bool:
        """One output of :data:`LARGE_OUTPUT_BYTES` or more with a DirectML operator: it is
        checked from the descriptors, and its expected output never held (:meth:`fill`)."""
        if len(self.output_shapes) != 1 or self.op is None:
            return False
        itemsize = max(1, self.case.data_type.bitwidth // 8)
        return math.prod(self.output_shapes[0]) * itemsize >= LARGE_OUTPUT_BYTES

    def fill(self, input_array: np.ndarray) -> None:
        """Set the input, the node's feeds and the expected outputs."""
        start = time.perf_counter()
        case = self.case
        dtype = case.data_type.to_numpy()
        x = np.asarray(input_array, dtype=dtype, order="C")  # rank 0 stays rank 0
        self.input = x
        self.feeds = [np.asarray(f, dtype=dtype, order="C") for f in self.operator.input_feeds(case, x)]
        if len(self.output_shapes) == 1:
            shape = self.output_shapes[0]
            self.expected = [(pending_output(self.op, x, shape) if self.large_output else None)
                             or expected_output(case, x, op=self.op, reason=self.reason, shape=shape,
                                                feeds=self.feeds)]
        else:
            self.expected = list(expected_outputs(case, x, op=self.op, reason=self.reason,
                                                  shapes=self.output_shapes, feeds=self.feeds))
        self.seconds += time.perf_counter() - start

    def passes(self, actuals: Sequence[Any]) -> bool:
        """Whether every output has the expected element type and shape and equal bytes: the
        pass of :func:`~ort_layouts.reference.compare.compare`, without its figures. False sends
        the case to the full comparison (also where the bytes would be a large copy)."""
        for e, a in zip(self.expected, actuals, strict=True):
            if (isinstance(e, PendingOutput) or type(a) is not np.ndarray or a.dtype != e.dtype
                    or a.shape != e.shape or e.nbytes > _BYTES_EQUAL_LIMIT or a.tobytes() != e.tobytes()):
                return False
        return True


def _encoded(encode: Encode, results: Sequence[CaseResult]) -> list[Any]:
    """``encode(results)``, one value a result.

    Raises:
        ArgumentError: ``encode`` made no iterable, or another number of values.
    """
    values = encode(results)
    try:
        made = list(values)
    except TypeError:
        raise ArgumentError(f"encode made {values!r:.60} of {len(results)} results, which is no iterable; "
                            "valid: an iterable of one value a result") from None
    if len(made) != len(results):
        raise ArgumentError(
            f"encode made {len(made)} values of {len(results)} results; valid: one value a result")
    return made


def _plan(case: Case, provider: str) -> _Prepared | str:
    """The planned case, or the reason it is unsupported on ``provider`` (a str)."""
    prepared = _Prepared(case, operator_for_type(case.op))
    return prepared.plan(provider) or prepared


def _prepare(case: Case, provider: str, inputs: Mapping[str, np.ndarray] | None) -> _Prepared | str:
    """The prepared case (planned and filled), or the reason it is unsupported on ``provider``."""
    prepared = _plan(case, provider)
    if isinstance(prepared, _Prepared):
        prepared.fill(inputs[case.id] if inputs is not None and case.id in inputs else make_input(case))
    return prepared


def _descriptor_index(op: Any, index: Sequence[int], shape: Sequence[int]) -> Sequence[int]:
    """``index`` of the ONNX output of ``shape`` as an index of the output descriptor of the
    one-output operator ``op``, where their sizes differ (the EP gives a Reshape, Squeeze,
    Unsqueeze, Flatten or Identity one packed descriptor of the input's sizes, at least 4D, and a
    scalar one axis): the same element of the row-major output buffer, its flat index unravelled
    into the descriptor's sizes. ``index`` as it is where the sizes agree, or the descriptor is
    not row-major packed over as many elements (the operator's own method then decides)."""
    desc = getattr(op, "output", None)
    if desc is None or tuple(shape) == desc.sizes or len(index) != len(shape):
        return index
    sizes = desc.sizes
    rows = packed_strides(sizes)
    if math.prod(shape) != math.prod(sizes) or any(
            s != r for n, s, r in zip(sizes, desc.effective_strides, rows, strict=True) if n > 1):
        return index
    flat = 0
    for i, n in zip(index, shape, strict=True):
        flat = flat * n + int(i)
    return tuple(flat // r % n for n, r in zip(sizes, rows, strict=True))


def _mismatch_offsets(op: Any, index: Sequence[int], output: int = 0, *,
                      shape: Sequence[int] | None = None) -> tuple[int | None, int | None]:
    """(input buffer offset read for ``index`` of output ``output``, output buffer offset), in
    elements, or (None, None) where the operator cannot say. ``shape``: the ONNX output's, by
    which an index of another rank than the descriptors' is mapped (:func:`_descriptor_index`)."""
    if op is None:
        return None, None
    try:
        if is_multi_operator(op):
            in_offset, out_offset = op.buffer_offsets_in_elements(index, output)  # type: ignore[attr-defined]
        else:
            if shape is not None:
                index = _descriptor_index(op, index, shape)
            in_offset, out_offset = op.buffer_offsets_in_elements(index)
        return in_offset, out_offset
    except (OrtLayoutsError, ValueError, IndexError):
        return None, None


def _kin(items: list[tuple[int, _Prepared]], culprit: int, *, with_mode: bool) -> list[tuple[int, _Prepared]]:
    """The items of a batch with the kernel signature of item ``culprit`` (op, data type, opset:
    what a kernel registry is keyed on; and the mode, ``with_mode``), the culprit included."""
    def signature(case: Case) -> tuple[Any, ...]:
        return (case.op, case.data_type, case.opset, case.mode if with_mode else None)

    wanted = signature(items[culprit][1].case)
    return [item for item in items if signature(item[1].case) == wanted]


def _release(session: Any) -> None:
    """Free a session now: a DirectML worker's session lives in the worker until released (an
    in-process session goes with its last reference)."""
    release = getattr(session, "release", None)
    if callable(release):
        release()


class _Attempt:
    """One batch's session, created and run (on the session thread): its outputs, or the
    error of the step that failed, and which EP got each node."""

    __slots__ = ("config", "create_error", "feeds", "model", "names", "outputs", "placed", "process",
                 "run_error", "seconds")

    def __init__(self, config: ProviderConfig, model: Any, feeds: dict[str, np.ndarray],
                 names: list[str], process: SessionProcess | None = None) -> None:
        self.config = config
        self.model = model
        self.feeds = feeds
        self.names = names
        self.process = process
        self.outputs: list[Any] = []
        self.placed: dict[str, str] = {}
        self.create_error: SessionCreationError | OrtLayoutsError | None = None
        self.run_error: Exception | None = None
        self.seconds = 0.0

    def __call__(self) -> _Attempt:
        start = time.perf_counter()
        try:
            if self.process is not None:
                self._in_session_process(self.process)
                return self
            try:
                session = make_session(self.model, self.config)
            except (SessionCreationError, OrtLayoutsError) as e:
                self.create_error = e
                return self
            try:
                self.outputs = session.run(self.names, self.feeds)
                if self.config.name != CPU:  # the CPU EP's nodes have no other EP to go to
                    self.placed = node_assignment(session)
            except Exception as e:  # the EP failed while running
                self.run_error = e
            finally:
                _release(session)
            return self
        finally:
            self.seconds = time.perf_counter() - start

    def _in_session_process(self, process: SessionProcess) -> None:
        """Create and run the session in the CPU EP's session process; a refused session is a
        creation error with :func:`make_session`'s text, a failed run or a died process a run
        error."""
        try:
            self.outputs, self.placed = process.run_batch(
                self.model.SerializeToString(), session_settings(self.config), self.feeds, self.names)
        except SessionProcessCreateError as e:
            self.create_error = SessionCreationError(f"{self.config.name} could not create the session: {e}")
        except (SessionProcessRunError, SessionProcessDiedError) as e:
            self.run_error = e


class _Run:
    def __init__(self, config: ProviderConfig, device: str, on_result: OnResult | None) -> None:
        self.config = config
        self.device = device
        self.on_result = on_result
        self.encode: Encode | None = None  # with on_encoded: run_cases' encode
        self.on_encoded: OnEncoded | None = None
        self.encode_sent: bytes | None = None  # encode pickled for the workers, None: made here
        self.results: dict[int, CaseResult] = {}
        self.ir_version = provider_ir_version(config.name)
        self.ort_version = runtime_version(config.name)  # the known issues seen with a release
        self.reruns_left = RERUN_LIMIT
        self.opset = provider_opset(config.name)
        self.sessions: ThreadPoolExecutor | None = None  # the session thread, while a run lasts
        self.process: SessionProcess | None = None  # the CPU EP's session process, when a run uses it

    def emit(self, key: int, result: CaseResult) -> None:
        """Keep a result and hand it on: to ``on_encoded`` with ``encode``'s value of it, and
        to ``on_result``."""
        self.emit_all([(key, result)])

    def emit_all(self, items: Sequence[tuple[int, CaseResult]], encoded: Sequence[Any] | None = None) -> None:
        """:meth:`emit` for results that arrived together (a worker's unit, a batch's cases):
        ``on_encoded`` takes them in one call, with ``encoded`` (``encode``'s values of them,
        made here when None), then ``on_result`` each in turn."""
        results = self.results
        for key, result in items:
            results[key] = result
        if self.on_encoded is not None:
            assert self.encode is not None
            made = _encoded(self.encode, [result for _, result in items]) if encoded is None else encoded
            self.on_encoded([(result, value) for (_, result), value in zip(items, made, strict=True)])
        if self.on_result is not None:
            for _, result in items:
                self.on_result(result)

    def fail(self, key: int, prep: _Prepared | Case, status: Status, message: str,
             seconds: float = 0.0) -> None:
        self.emit(key, self._failed(prep, status, message, seconds))

    def _failed(self, prep: _Prepared | Case, status: Status, message: str,
                seconds: float = 0.0) -> CaseResult:
        case = prep.case if isinstance(prep, _Prepared) else prep
        descriptors = prep.descriptors if isinstance(prep, _Prepared) else {}
        return CaseResult(case, status, self.config.name, self.device, message=message,
                          descriptors=descriptors, seconds=seconds)

    def _session_work(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the session thread (in turn with the batches already handed to it) and
        wait for it; in the calling thread when there is none."""
        if self.sessions is None:
            return fn()
        return self.sessions.submit(fn).result()

    def attempt(self, items: list[tuple[int, _Prepared]]) -> _Attempt:
        """The batch's model, feeds and output names, ready to be created and run (a model that
        cannot be built is an attempt whose creation failed)."""
        cases = [p.case for _, p in items]
        feeds = {input_name(i, k): x for i, (_, p) in enumerate(items) for k, x in enumerate(p.feeds)}
        names = [output_name(i, k) for i, (_, p) in enumerate(items) for k in range(len(p.expected))]
        try:
            shapes = [(p.input_shapes, p.output_shapes) for _, p in items]
            model = build_model(cases, opset=cases[0].opset or self.opset, ir_version=self.ir_version,
                                shapes=shapes)
        except OrtLayoutsError as e:
            attempt = _Attempt(self.config, None, feeds, names)
            attempt.create_error = e
            return attempt
        process = self.process
        if process is not None and sum(x.nbytes for x in feeds.values()) >= LARGE_OUTPUT_BYTES:
            process = None  # large tensors stay in this process: no copies through a pipe
        return _Attempt(self.config, model, feeds, names, process)

    def batch(self, items: list[tuple[int, _Prepared]]) -> None:
        """Run one batch; on failure isolate the culprits (by the node the error names, else by
        bisection) and run the rest."""
        attempt = self.attempt(items)
        if attempt.model is not None:
            self._session_work(attempt)
        self.judge(items, attempt)

    def judge(self, items: list[tuple[int, _Prepared]], attempt: _Attempt) -> None:
        """Report the results of a batch's attempt; when it failed, isolate the culprits and
        run the rest."""
        start = time.perf_counter()
        e = attempt.create_error
        if e is not None:
            if len(items) == 1:
                key, prep = items[0]
                if isinstance(e, SessionCreationError):
                    self.fail(key, prep, Status.UNSUPPORTED, self._unsupported(prep.case, str(e)),
                              attempt.seconds)
                else:
                    self.fail(key, prep, Status.ERROR, str(e), attempt.seconds)
                return
            if isinstance(e, SessionCreationError) and (
                    self._drop_named(items, str(e), start)
                    or self._drop_placed(items, attempt.model, start)):
                return
            self._split(items, hung=isinstance(e, DmlWorkerTimeoutError))
            return
        if attempt.run_error is not None:
            if len(items) == 1:
                key, prep = items[0]
                self.fail(key, prep, Status.ERROR, f"run failed: {attempt.run_error}", attempt.seconds)
                return
            if not self._isolate_failed_run(items, str(attempt.run_error)):
                self._split(items, hung=isinstance(attempt.run_error, DmlWorkerTimeoutError))
            return
        flat = attempt.outputs
        placed = attempt.placed
        share = attempt.seconds / len(items)
        name, device = self.config.name, self.device
        position = 0
        # the batch's results handed on together: before a mismatch's diagnosis, and at the end
        done: list[tuple[int, CaseResult]] = []
        for i, (key, prep) in enumerate(items):
            count = len(prep.expected)
            actuals = flat[position:position + count]
            position += count
            node = f"n{i}_{prep.case.op}"
            node_provider = placed.get(node, "")
            if node_provider and node_provider != name:
                done.append((key, self._failed(prep, Status.UNSUPPORTED,
                                               f"node {node} ran on {node_provider}, not {name}", share)))
                continue
            if prep.passes(actuals):
                done.append((key, CaseResult(
                    prep.case, Status.PASS, name, device, node_provider=node_provider or name,
                    element_count=sum(e.size for e in prep.expected), descriptors=prep.descriptors,
                    seconds=share + prep.seconds + (time.perf_counter() - start) / len(items))))
                continue
            if done:
                self.emit_all(done)
                done = []
            self.emit(key, self._judge(prep, [np.asarray(a) for a in actuals], node_provider or name, share))
        if done:
            self.emit_all(done)

    def _drop_named(self, items: list[tuple[int, _Prepared]], message: str, start: float) -> bool:
        """When session creation failed because no kernel exists for a named node, report that
        case and every case of the batch with the same kernel signature (op, data type, opset:
        what a kernel registry is keyed on) as unsupported, and run the rest. False when the
        message names no node of this batch."""
        match = _NAMED_NODE.search(message)
        if match is None or int(match.group(1)) >= len(items):
            return False
        lowered = message.lower()
        if "could not find an implementation" in lowered or "provider type for" in lowered:
            # no kernel for this signature anywhere (with fallback off, ONNX Runtime says the
            # node's provider type "is not set"): every case of the batch that shares it fails alike
            bad = _kin(items, int(match.group(1)), with_mode=False)
        else:
            bad = [items[int(match.group(1))]]
        seconds = (time.perf_counter() - start) / len(bad)
        for key, prep in bad:
            self.fail(key, prep, Status.UNSUPPORTED, self._unsupported(prep.case, message), seconds)
        rest = [item for item in items if item not in bad]
        if rest:
            self.batch(rest)
        return True

    def _drop_placed(self, items: list[tuple[int, _Prepared]], model: Any, start: float) -> bool:
        """When CPU fallback is off, ask ONNX Runtime where it would place each node (a session
        with fallback allowed that records the assignment); report the nodes it would not give
        to the EP as unsupported, and run the rest. One extra session instead of a bisection.
        False when the placement cannot be recorded or puts every node on the EP."""
        if not self.config.fallback_disabled:
            return False
        probe_config = dataclasses.replace(self.config, disable_cpu_fallback=False)

        def placement() -> dict[str, str] | None:
            try:
                probe = make_session(model, probe_config)
            except (SessionCreationError, OrtLayoutsError):
                return None
            placed = node_assignment(probe)
            _release(probe)
            return placed

        placed = self._session_work(placement)
        if not placed:
            return False
        bad = [(i, item) for i, item in enumerate(items)
               if placed.get(f"n{i}_{item[1].case.op}", self.config.name) != self.config.name]
        if not bad:
            return False
        seconds = (time.perf_counter() - start) / len(bad)
        for i, (key, prep) in bad:
            other = placed[f"n{i}_{prep.case.op}"]
            self.fail(key, prep, Status.UNSUPPORTED, self._unsupported(
                prep.case, f"ONNX Runtime would run the node on {other}, and CPU fallback is off"),
                seconds)
        rest = [item for i, item in enumerate(items) if i not in {j for j, _ in bad}]
        if rest:
            self.batch(rest)
        return True

    def _unsupported(self, case: Case, message: str) -> str:
        """The reason a case is unsupported, without the batch's own node names."""
        text = _NAMED_NODE.sub(f"name '{case.op}'", message)
        text = text.removeprefix(f"{self.config.name} could not create the session: ")
        opset = case.opset or self.opset
        return (f"{self.config.name} could not create a session for {case.op} on "
                f"{case.data_type.name.lower()} (opset {opset}): {text}")

    def _split(self, items: list[tuple[int, _Prepared]], *, hung: bool = False) -> None:
        """Run a failed batch again in halves; after a hang (the DirectML worker did not answer
        within its timeout, minutes), each case alone instead: a bisection would wait out the
        timeout at every level, a case alone only once for the case that hangs."""
        if hung:
            for item in items:
                self.batch([item])
            return
        half = len(items) // 2
        self.batch(items[:half])
        self.batch(items[half:])

    def _isolate_failed_run(self, items: list[tuple[int, _Prepared]], message: str) -> bool:
        """When a run failed in a node the error names ("... running Pad node. Name:'n3_Pad'"),
        run that case alone, and alone too each case of the batch with the same op, data type,
        opset and mode (a kernel that fails on one often fails on its kin: Pad "wrap" on a
        DirectML below feature level 6.4 fails every such node), then the rest as one batch.
        Each case still gets the message of its own run. False when no node of this batch is
        named (then the batch is bisected)."""
        match = _RUN_NODE.search(message)
        if match is None or int(match.group(1)) >= len(items):
            return False
        alone = _kin(items, int(match.group(1)), with_mode=True)
        for item in alone:
            self.batch([item])
        rest = [item for item in items if item not in alone]
        if rest:
            self.batch(rest)
        return True

    def _rerun(self, prep: _Prepared) -> Callable[[np.ndarray], list[np.ndarray]] | None:
        """The diagnosis's way to run a failing case again on another input (one that tells
        each source element apart): a one-node session of the case on the run's provider and
        options. None once the run has spent its ``RERUN_LIMIT`` re-runs (a broken stack fails
        every case: the rest are diagnosed from their own inputs)."""
        if self.reruns_left <= 0:
            return None
        case = prep.case
        dtype = case.data_type.to_numpy()
        outputs = [output_name(0, k) for k in range(len(prep.output_shapes))]
        model = build_model([case], opset=case.opset or self.opset, ir_version=self.ir_version,
                            shapes=[(prep.input_shapes, prep.output_shapes)])

        def rerun(x: np.ndarray) -> list[np.ndarray]:
            if self.reruns_left <= 0:
                raise ProviderError(f"this run has spent its {RERUN_LIMIT} diagnosis re-runs")
            self.reruns_left -= 1
            feeds = prep.operator.input_feeds(case, np.asarray(x, dtype=dtype))
            inputs = {input_name(0, k): np.ascontiguousarray(f, dtype=dtype) for k, f in enumerate(feeds)}

            def create_and_run() -> list[Any]:  # on the session thread, in turn with the batches
                session = make_session(model, self.config)
                try:
                    return list(session.run(outputs, inputs))
                finally:
                    _release(session)

            return [np.asarray(a) for a in self._session_work(create_and_run)]

        return rerun

    def _judge(self, prep: _Prepared, actuals: list[np.ndarray], node_provider: str,
               seconds: float) -> CaseResult:
        """Compare each output bit for bit; a mismatch reports the first output that differs
        (its index, offsets and bits), the mismatch count over every output, and for several
        outputs a message naming that output."""
        from ort_layouts.engine.diagnose import explain

        start = time.perf_counter()
        cmps = [compare_output(e, a) for e, a in zip(prep.expected, actuals, strict=True)]
        element_count = sum(c.element_count for c in cmps)
        if all(c.passed for c in cmps):
            total = seconds + prep.seconds + time.perf_counter() - start
            return CaseResult(prep.case, Status.PASS, self.config.name, self.device,
                              node_provider=node_provider, element_count=element_count,
                              descriptors=prep.descriptors, seconds=total)
        failed = [k for k, c in enumerate(cmps) if not c.passed]
        k = failed[0]
        cmp = cmps[k]
        index = cmp.first_mismatch_index
        input_offset_in_elements = output_offset_in_elements = None
        if index is not None:
            input_offset_in_elements, output_offset_in_elements = _mismatch_offsets(
                prep.op, index, k, shape=prep.output_shapes[k])
        recovered: dict[str, Any] = {}
        try:
            found = explain(prep.case, prep.input, actuals[0] if len(actuals) == 1 else actuals,
                            self._rerun(prep))
            diagnosis = found.text
            if found.recovery is not None:
                recovered = found.recovery.to_dict()
        except Exception as e:  # a diagnosis must never hide the mismatch itself
            diagnosis = f"(diagnosis failed: {e})"
        message = getattr(cmp, "message", "") or ""
        if len(cmps) > 1:
            others = f" (outputs {failed} differ)" if len(failed) > 1 else ""
            message = (f"output {k} of {len(cmps)} {list(prep.expected[k].shape)}{others}: {message}")
        result = CaseResult(
            prep.case, Status.MISMATCH, self.config.name, self.device, node_provider=node_provider,
            element_count=element_count, mismatch_count=sum(c.mismatch_count for c in cmps),
            first_mismatch_index=None if index is None else tuple(int(i) for i in index),
            input_offset_in_elements=input_offset_in_elements,
            output_offset_in_elements=output_offset_in_elements,
            expected_hex=cmp.expected_hex, actual_hex=cmp.actual_hex, diagnosis=diagnosis,
            recovered=recovered, message=message, descriptors=prep.descriptors,
            seconds=seconds + prep.seconds + time.perf_counter() - start)
        known = known_issue_for(result, self.ort_version)
        return dataclasses.replace(result, known_issue=known) if known else result



# how often, at most, the thread holding Python's lock is asked to let another have it, during a run
_SWITCH_INTERVAL_S = 0.0002


@contextmanager
def _collector_paused() -> Iterator[None]:
    """For the run: Python's cycle collector paused, and the lock handed between threads
    every 0.2 ms instead of 5 ms (both restored as they were after).

    A run allocates many small objects, which would set off full collections of everything
    alive, and frees them by reference counting. The session thread takes Python's lock back
    many times while ONNX Runtime creates a session (on the standard suite, beside the busy
    main thread, at 5 ms it spent about three times as long as ONNX Runtime alone; at 0.2 ms
    about 1.5 times)."""
    enabled = gc.isenabled()
    interval = sys.getswitchinterval()
    shorten = interval > _SWITCH_INTERVAL_S  # (Python keeps whole microseconds: set only to change it)
    gc.disable()
    if shorten:
        sys.setswitchinterval(_SWITCH_INTERVAL_S)
    try:
        yield
    finally:
        if shorten:
            sys.setswitchinterval(interval)
        if enabled:
            _enable_collector()


def _enable_collector() -> None:
    """Turn the cycle collector back on, with the objects made while it was off (a run's
    results, cases and descriptors: hundreds of thousands on the standard suite) counted among
    the oldest, which a full collection scans, not among the youngest, which the next
    allocation's collection would scan one by one (11-22 ms on this suite on a 2-core host,
    about 30 ms on a 16-core one). Where something of the process is frozen (``gc.freeze``,
    as a server does before it forks), nothing of it is moved: the collector is only turned on."""
    if gc.get_freeze_count() == 0:
        gc.freeze()  # everything tracked, the permanent generation's now
        gc.unfreeze()  # and the oldest generation's
    gc.enable()


def _group_key(run: _Run, case: Case) -> tuple[int, str, int]:
    """The (opset, op, data type) a case's batch is keyed on: one model per group, since a
    kernel missing for a type fails a whole group alike (:func:`_chunks` splits each by edge
    cases, :func:`_units` keeps groups whole)."""
    return (case.opset or run.opset, case.op, int(case.data_type))


def _chunks(run: _Run, case_list: Sequence[Case], batch_size: int) -> list[list[tuple[int, _Prepared]]]:
    """Take every case in (reporting those that cannot run) and cut them into batches: one model
    per (opset, op, data type), since a kernel missing for a type fails a whole group alike;
    edge cases (a rank-0 or an empty tensor) one per session, since the DML EP dispatches
    nothing for a node with an empty tensor and outputs of other nodes in the same DirectML
    session came back unwritten beside them.

    On the DML EP every case is planned here, so that the cases DirectML cannot express are
    reported unsupported before any session; elsewhere each batch's cases are planned when the
    batch is filled (:func:`_filler`), while the session thread works on the batch before."""
    name = run.config.name
    groups: dict[tuple[int, str, int, bool], list[tuple[int, _Prepared]]] = {}
    for key, case in enumerate(case_list):
        try:
            prepared = _Prepared(case, operator_for_type(case.op))
            edge = prepared.is_edge
        except Exception as e:  # the case itself is bad
            run.fail(key, case, Status.ERROR, f"preparing the case failed: {type(e).__name__}: {e}")
            continue
        failed = _unplanned(prepared, name) if name == DML else None
        if failed is not None:
            run.fail(key, prepared, *failed)
            continue
        groups.setdefault((*_group_key(run, case), edge), []).append((key, prepared))
    chunks = []
    for group in sorted(groups):
        items = groups[group]
        size = 1 if group[3] else batch_size
        chunks += [items[start:start + size] for start in range(0, len(items), size)]
    return chunks


def _filler(run: _Run, case_list: Sequence[Case], inputs: Mapping[str, np.ndarray] | None
            ) -> Callable[[list[tuple[int, _Prepared]]], list[tuple[int, _Prepared]]]:
    """fill(batch): the batch's cases planned (:meth:`_Prepared.plan`), their inputs and expected
    outputs set; the cases whose preparation failed are reported as errors, those the provider
    cannot run as unsupported, and both left out. The generators' states of every case are computed
    at once, ahead."""
    states = generator_states(case_list)

    name = run.config.name

    def fill(chunk: list[tuple[int, _Prepared]]) -> list[tuple[int, _Prepared]]:
        items = []
        for key, prep in chunk:
            failed = _unplanned(prep, name)
            if failed is None:
                items.append((key, prep))
            else:
                run.fail(key, prep, *failed)
        given = inputs or {}  # (a case's id is looked up only when inputs were given)
        made = [k for k, p in items if p.case.id not in given] if given else [k for k, _ in items]
        start = time.perf_counter()
        try:
            arrays = dict(zip(made, make_inputs([case_list[k] for k in made], [states[k] for k in made]),
                              strict=True))
        except Exception:  # one case's input failed: each case is made alone below, with its error
            arrays = {}
        share = (time.perf_counter() - start) / max(1, len(made))
        ready = []
        for key, prep in items:
            prep.seconds += share
            try:
                x = given[prep.case.id] if given and prep.case.id in given else arrays.get(key)
                prep.fill(make_input(prep.case) if x is None else x)
            except Exception as e:  # the case itself is bad, or the oracle rejected it
                run.fail(key, prep.case, Status.ERROR, f"preparing the case failed: {type(e).__name__}: {e}")
                continue
            ready.append((key, prep))
        return ready

    return fill


# batches handed to the session thread before the oldest is judged, at most: batches differ
# (one node or 256, a large tensor or small ones), and a queue lets the filling and the
# sessions even out (the standard suite on the CPU EP, five runs side by side: 1.50 s with 4,
# 1.67 s with 1, medians); beyond the first, at most this many bytes of inputs and expected outputs
_AHEAD_BATCHES = 4
_AHEAD_BYTES = 64 << 20

_Pending = tuple[list[tuple[int, _Prepared]], _Attempt, "Future[_Attempt] | None", int]


def _pipeline(run: _Run, chunks: Iterable[list[tuple[int, _Prepared]]],
              fill: Callable[[list[tuple[int, _Prepared]]], list[tuple[int, _Prepared]]],
              *, threaded: bool = True) -> None:
    """Run the batches: each batch's session is created and run on the session thread while
    the next batches are filled and the earlier ones judged, in order (up to
    ``_AHEAD_BATCHES`` batches queued, and ``_AHEAD_BYTES`` of their data past the oldest);
    not ``threaded``: each batch in turn on this thread (a worker process, beside others that
    keep the other processors busy)."""
    if not threaded:
        for chunk in chunks:
            items = fill(chunk)
            if items:
                run.batch(items)
        return
    pending: collections.deque[_Pending] = collections.deque()
    queued_bytes = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ort_layouts_sessions") as sessions:
        run.sessions = sessions
        try:
            for chunk in chunks:
                items = fill(chunk)
                if items:
                    attempt = run.attempt(items)
                    future = sessions.submit(attempt) if attempt.model is not None else None
                    held = sum(_held_bytes(p) for _, p in items)
                    pending.append((items, attempt, future, held))
                    queued_bytes += held
                while len(pending) > 1 and (len(pending) > _AHEAD_BATCHES
                                            or queued_bytes - pending[0][3] > _AHEAD_BYTES):
                    queued_bytes -= pending[0][3]
                    _judge_pending(run, pending.popleft())
            while pending:
                _judge_pending(run, pending.popleft())
        except KeyboardInterrupt:  # a stop (Ctrl-C, SIGTERM): the batches on the session thread are
            for _, _, queued, _ in pending:  # given up: those queued never start (on DirectML, one
                if queued is not None:  # would start a new worker), the one running is stopped,
                    queued.cancel()  # not waited on as the thread pool shuts down
            interrupt_sessions(run.config)
            raise
        finally:
            run.sessions = None


def _held_bytes(prep: _Prepared) -> int:
    """The bytes a filled case holds: its input and expected outputs (its feeds are its input,
    or views of it)."""
    held = prep.input.nbytes
    for e in prep.expected:
        if type(e) is np.ndarray:
            held += e.nbytes
    return held


def _judge_pending(run: _Run, pending: _Pending) -> None:
    items, attempt, future, _ = pending
    if future is not None:
        future.result()
    run.judge(items, attempt)


def _check_batch_size(batch_size: Any) -> int:
    """``batch_size`` as an int.

    Raises:
        ArgumentError: ``batch_size`` is not an integer >= 1 (a Python or numpy int).
    """
    if not is_integer(batch_size) or batch_size < 1:
        raise ArgumentError(f"batch_size {batch_size!r} is not valid; valid: an int >= 1")
    return int(batch_size)


def _check_inputs(case_list: Sequence[Case], inputs: object) -> None:
    """Refuse an explicit input that the case cannot take as it is: one of another element type
    (its values would be cast: NaN payloads and -0.0 lost, a float64 1e300 made infinite) or
    shape.

    Raises:
        ArgumentError: ``inputs`` is not a mapping of case ids to arrays, or names a case id
            that is not one of the cases' (a misspelt id would leave its case to the default
            input).
        DataTypeError: an input's element type is not the case's (its byte order aside).
        ShapeError: an input's shape is not the case's.
    """
    if inputs is None:
        return
    if not isinstance(inputs, Mapping):
        raise ArgumentError(f"inputs {inputs!r:.80} is {a_type(inputs)}; valid: a mapping of case "
                            "ids to arrays, or None")
    ids = {case.id for case in case_list}
    stray = [key for key in inputs if key not in ids]
    if stray:
        example = f" (e.g. {next(iter(ids))!r})" if ids else ""
        raise ArgumentError(f"inputs names {len(stray)} case ids that are no case's of the run: {stray[:3]}; "
                            f"valid: the ids of the cases given{example}")
    for case in case_list:
        if case.id in inputs:
            check_input(case, inputs[case.id], f"inputs[{case.id!r}]")


def run_cases(
    cases: Iterable[Case],
    *,
    provider: str = "auto",
    device_id: int = 0,
    provider_options: Mapping[str, Any] | None = None,
    optimize: bool = False,
    batch_size: int = 256,
    on_result: OnResult | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
    jobs: int | None = None,
    encode: Encode | None = None,
    on_encoded: OnEncoded | None = None,
) -> list[CaseResult]:
    """Run cases on an execution provider and compare each output bit for bit with the oracle.

    Args:
        cases: the cases.
        provider: "auto", "dml", "webgpu", "cuda", "cpu" or a full EP name.
        device_id: the device index.
        provider_options: EP options (validated for DML).
        optimize: turn ONNX Runtime's graph optimizations on (off by default: they may remove
            the node under test).
        batch_size: cases per model and session (1: one session per case).
        on_result: called with each result as soon as it is known (batches finish out of order
            when one is split), always from the calling thread.
        inputs: explicit input data by case id (default: :func:`make_input`'s), each of the
            case's shape and element type: it is never cast.
        jobs: worker processes that share the batches (:mod:`~ort_layouts.engine.parallel`); 1
            keeps the run in this process; None (the default): :func:`resolve_jobs`'s choice.
        encode, on_encoded: together: ``on_encoded(list(zip(results, encode(results))))`` for
            the results that arrive together (a worker's unit; in this process, the cases of a
            batch judged in turn without a mismatch between them; others one at a time),
            before ``on_result`` sees them; ``encode`` makes one value a result, and runs where
            the results are made: in their worker process, in a run with workers, when it can be
            sent there (it pickles: a module-level function, or an instance of a module-level
            class of a module they import); one that cannot (a lambda, a class of ``__main__``,
            a module the workers cannot import) runs in this process, on each unit's results as
            they arrive. A report writer's encoding of its lines is made beside the results, and
            the lines of a unit are written at once. A run started from ``on_result`` of a run
            on workers stays in this process (the workers are busy).

    Returns:
        One result per case, in the order of ``cases``.

    Raises:
        ProviderError: the provider is unknown or not available (lists the available ones; a
            :class:`~ort_layouts.ProviderUnavailableError` for the latter), or ``jobs`` is
            above 1 on the DML EP.
        ArgumentError: an item of ``cases`` is not a :class:`Case`, ``batch_size`` or ``jobs``
            is not valid, ``inputs`` is not a mapping, only one of ``encode`` and
            ``on_encoded`` is given, a callback is not callable (all before anything runs), or
            ``encode`` (run in this process) made another number of values than it was given
            results. A ValueError and a TypeError too.
        DataTypeError, ShapeError: an input of ``inputs`` is not of its case's element type or
            shape (before anything runs).
        WorkerProcessError: a worker process raised (a fault of the harness, not of a case;
            ``encode`` raising there, or making another number of values, too).
    """
    batch_size = _check_batch_size(batch_size)
    if (encode is None) != (on_encoded is None):
        raise ArgumentError("encode and on_encoded go together: give both, or neither")
    for name, given in (("encode", encode), ("on_encoded", on_encoded), ("on_result", on_result)):
        if given is not None and not callable(given):
            raise ArgumentError(f"{name} {given!r} is not callable; valid: a function, or None")
    case_list = check_cases(cases)
    _check_inputs(case_list, inputs)
    run = _new_run(provider, device_id, provider_options, optimize, on_result)
    run.encode, run.on_encoded = encode, on_encoded
    workers = min(resolve_jobs(jobs, run.config.name, len(case_list)), max(1, len(case_list)))  # no idle ones
    if workers > 1 and workers_busy_here():  # a run started from this thread's run's on_result
        workers = 1
    if workers > 1:
        # an encode the workers cannot load runs here, on each unit's results as they arrive
        run.encode_sent = None if encode is None else pickled_for_workers(encode)
        try:
            start_workers(workers)
        except OSError:  # no Python to start them with (an embedded interpreter): the run stays here
            workers = 1
    if workers == 1 and uses_session_process(run.config.name, len(case_list)):
        try:
            session_process().start()
            run.process = session_process()
        except OSError:  # sessions stay in this process
            run.process = None
    with _collector_paused():
        if workers > 1:
            _run_parallel(run, case_list, inputs, workers, batch_size)
        else:
            _run_here(run, case_list, batch_size, inputs)
    return [run.results[k] for k in range(len(case_list))]


def _run_here(run: _Run, case_list: list[Case], batch_size: int, inputs: Mapping[str, np.ndarray] | None,
              *, keep_alive: bool = True, threaded: bool = True) -> None:
    """Run the cases in this process (its sessions on the session thread, or in the session
    process when ``run.process`` is set; not ``threaded``: in turn on this thread);
    ``keep_alive``: hold a session open for the run (:func:`_keep_alive_session`)."""
    chunks = _chunks(run, case_list, batch_size)
    if not chunks:
        return
    if run.config.name == DML:
        _canary(run.config)
    held = _keep_alive_session(run.config) if keep_alive else None
    try:
        _pipeline(run, _consumed(chunks), _filler(run, case_list, inputs), threaded=threaded)
    finally:
        _release(held)
        del held


# CaseResult's fields that a worker sends back: all but the case, the provider and the device,
# which the process that asked knows
_FIELDS = tuple(f.name for f in dataclasses.fields(CaseResult))
_sent_values = operator.attrgetter(*_FIELDS[4:])
assert _FIELDS[:4] == ("case", "status", "provider", "device")


def _units(run: _Run, case_list: Sequence[Case], jobs: int, batch_size: int) -> list[Unit]:
    """The cases cut into units for ``jobs`` workers, each unit whole batches of :func:`_chunks`
    (so that a unit's worker, cutting it again, makes the batches this process would), in
    ``_chunks``' order: about eight units a worker, so that the workers finish together.

    Nothing is prepared here for a group (opset, op, data type) that fits in a unit: it goes
    whole into one, and its worker finds its edge cases. A larger group is prepared here only to
    be cut: its other cases in pieces of whole batches, its edge cases (a batch each) with its
    last piece. A case whose preparation fails goes with them; its worker reports it."""
    target = max(1, len(case_list) // (8 * jobs))
    groups: dict[tuple[int, str, int], list[int]] = {}
    for key, case in enumerate(case_list):
        groups.setdefault(_group_key(run, case), []).append(key)
    step = max(1, target // batch_size) * batch_size  # keys of a large group's piece
    units: list[Unit] = []
    keys: list[int] = []
    for group in sorted(groups):
        members = groups[group]
        pieces = [members]
        if len(members) > target:
            plain: list[int] = []
            alone: list[int] = []
            for key in members:
                try:
                    edge = is_edge_case(case_list[key])
                except Exception:  # the case itself is bad: its worker reports it
                    edge = True
                (alone if edge else plain).append(key)
            pieces = [plain[start:start + step] for start in range(0, len(plain), step)] or [[]]
            pieces[-1] = pieces[-1] + alone
        for piece in pieces:
            keys += piece
            if len(keys) >= target:
                units.append((keys, batch_size))
                keys = []
    if keys:
        units.append((keys, batch_size))
    return units


def _run_parallel(run: _Run, case_list: Sequence[Case], inputs: Mapping[str, np.ndarray] | None, jobs: int,
                  batch_size: int) -> None:
    """Run the batches on ``jobs`` worker processes (:mod:`~ort_layouts.engine.parallel`), each
    unit with :func:`run_unit`; a unit's results go to ``run.emit_all`` in this thread, each
    around this process's own case. The diagnosis re-runs are lent to the units in shares, so that the run
    makes at most ``RERUN_LIMIT`` in all."""
    config = run.config
    budget = Budget(run.reruns_left, max(1, RERUN_LIMIT // jobs))

    def request(unit: Unit) -> tuple[str, UnitRequest]:
        keys, size = unit
        cases = [case_list[k] for k in keys]
        given = None if inputs is None else {c.id: inputs[c.id] for c in cases if c.id in inputs}
        return ("run", UnitRequest(config, size, cases, given, budget.lend(), run.device, run.encode_sent))

    name, device = config.name, run.device
    for (keys, _), sent, reply in run_units(_units(run, case_list, jobs, batch_size), request, jobs):
        lent = sent[1].rerun_budget
        if reply[0] == "ok":
            budget.repay(lent - reply[2])
            run.emit_all([(key, CaseResult(case_list[key], values[0], name, device, *values[1:]))
                          for key, values in zip(keys, reply[1], strict=True)], reply[3])
            continue
        budget.repay(lent)
        if reply[0] == "died":
            run.fail(keys[0], case_list[keys[0]], Status.ERROR, reply[1])
    run.reruns_left = budget.left


class UnitRequest(NamedTuple):
    """What a worker is sent to run a unit (:func:`run_unit`), after ``"run"``.

    Attributes:
        config: the run's provider and its settings, as the asking process resolved them.
        batch_size: cases per model and session.
        cases: the unit's cases, in order.
        inputs: explicit inputs by case id, or None.
        rerun_budget: diagnosis re-runs lent to the unit.
        device: the device as the asking process described it, named by each result.
        encode: ``run_cases``' encode, pickled (:func:`pickled_for_workers`), or None: the
            asking process makes its values.
    """

    config: ProviderConfig
    batch_size: int
    cases: list[Case]
    inputs: Mapping[str, np.ndarray] | None
    rerun_budget: int
    device: str
    encode: bytes | None


def run_unit(request: UnitRequest, keep_alive: dict[Any, Any]
             ) -> tuple[list[tuple[Any, ...]], int, list[Any] | None]:
    """A worker's side of :func:`_run_parallel`: run one unit in this process, each batch in
    turn, and return (each case's status and fields after the device, diagnosis re-runs used,
    ``encode`` of each result, or None without it or where this process cannot load it: the
    asking process then makes them). The results name the asking process's device.
    ``keep_alive`` holds a session per provider config across units (:func:`_keep_alive_session`)."""
    config, batch_size, cases, inputs, budget, device, sent = request
    encode = None
    if sent is not None:
        try:
            encode = pickle.loads(sent)
        except Exception:  # e.g. its module is on the asking process's path only
            encode = None
    # the asking process resolved the provider and described the device: taken as they are
    run = _Run(config, device, None)
    run.reruns_left = budget
    if run.config not in keep_alive:
        keep_alive[run.config] = _keep_alive_session(run.config)
    with _collector_paused():
        _run_here(run, list(cases), batch_size, inputs, keep_alive=False, threaded=False)
    results = [run.results[k] for k in range(len(cases))]
    values = [(r.status, *_sent_values(r)) for r in results]
    return values, budget - run.reruns_left, None if encode is None else _encoded(encode, results)


# the EPs whose long runs are spread over worker processes unless told otherwise: the CPU EP, and
# the WebGPU EP (on an NVIDIA H100 host, the standard suite's validation took 20 s with 8 workers,
# 25 s with 4, 33 s with 2 and 34-36 s in one process)
_SPREAD_BY_DEFAULT = frozenset({CPU, WEBGPU})


def resolve_jobs(jobs: int | None, provider: str, case_count: int) -> int:
    """The worker processes a run of ``case_count`` cases on ``provider`` (a full EP name) uses:
    ``jobs`` when given (1: the run stays in this process); by default, for a CPU or WebGPU EP
    run of ``PROCESS_MIN_CASES`` cases or more, one a usable processor up to ``MAX_JOBS``, else 1.

    Raises:
        ArgumentError: ``jobs`` is not an integer >= 1 (a Python or numpy int), nor None; or it
            is above the larger of ``MAX_JOBS`` and this machine's usable processors.
        ProviderError: ``jobs`` is above 1 on the DML EP, which one process drives.
    """
    if jobs is None:
        if provider not in _SPREAD_BY_DEFAULT or case_count < PROCESS_MIN_CASES:
            return 1
        return min(usable_cores(), MAX_JOBS)
    if not is_integer(jobs) or jobs < 1:
        raise ArgumentError(f"jobs {jobs!r} is not valid; valid: an int >= 1, or None for the default")
    jobs = int(jobs)
    most = max(MAX_JOBS, usable_cores())
    if jobs > most:
        raise ArgumentError(f"jobs {jobs} is more worker processes than this machine runs side by side; "
                            f"valid: 1..{most} ({usable_cores()} usable processors here, or {MAX_JOBS}), "
                            "or None for the default")
    if jobs > 1 and provider == DML:
        raise ProviderError(f"jobs {jobs} is not valid on {DML}, which one process drives; valid: 1")
    return jobs


def uses_session_process(provider: str, case_count: int) -> bool:
    """Whether :func:`run_cases`, run in one process (``jobs`` 1), hands the sessions of
    ``case_count`` cases on ``provider`` (a full EP name) to the session process: CPU EP runs of
    ``PROCESS_MIN_CASES`` cases or more."""
    return provider == CPU and case_count >= PROCESS_MIN_CASES


def _consumed(chunks: list[list[tuple[int, _Prepared]]]) -> Iterator[list[tuple[int, _Prepared]]]:
    """The batches in order, each let go of as it is taken, so that a judged batch's inputs and
    expected outputs are freed at once (and not left for the cycle collector's pass when the
    run ends)."""
    chunks.reverse()
    while chunks:
        yield chunks.pop()


def _new_run(provider: str, device_id: int, provider_options: Mapping[str, Any] | None, optimize: bool,
             on_result: OnResult | None) -> _Run:
    config = _provider_config(provider, device_id, provider_options, optimize)
    return _Run(config, device_description(config), on_result)


def _provider_config(provider: str, device_id: int, provider_options: Mapping[str, Any] | None,
                     optimize: bool) -> ProviderConfig:
    """The config of a run's sessions, its provider resolved and its device checked.

    Raises:
        ProviderError: an unknown or unavailable provider, options that are no mapping, a
            device index the provider does not list.
    """
    name = resolve_provider(provider)
    if provider_options is not None and not isinstance(provider_options, Mapping):
        raise ProviderOptionError(f"provider_options {provider_options!r:.80} is {a_type(provider_options)}; "
                                  "valid: a mapping of option names to values, or None")
    config = ProviderConfig(name, device_id=device_id, options=tuple((provider_options or {}).items()),
                            optimize=optimize)
    check_device_id(config.name, config.device_id)
    return config


@dataclasses.dataclass(frozen=True, slots=True)
class BatchPlan:
    """One batch as :func:`run_cases` first tries it (a batch that fails is split later).

    Attributes:
        config: the provider and options its session is created with.
        model: the serialized model.
        feeds: its inputs, by name.
        names: its outputs' names.
        nodes: its nodes, one per case.
    """

    config: ProviderConfig
    model: bytes
    feeds: dict[str, np.ndarray]
    names: list[str]
    nodes: int


def batch_cases(cases: Iterable[Case], *, provider: str = "auto", batch_size: int = 256) -> list[list[Case]]:
    """The cases of each session :func:`run_cases` first creates for ``cases``, in its order
    (cases it cannot run are left out): how a run batches, without making any data."""
    batch_size = _check_batch_size(batch_size)
    run = _new_run(provider, 0, None, False, None)
    batches = []
    for chunk in _chunks(run, check_cases(cases), batch_size):
        batch = [p.case for _, p in chunk if _unplanned(p, run.config.name) is None]
        if batch:
            batches.append(batch)
    return batches


def _unplanned(prep: _Prepared, provider: str) -> tuple[Status, str] | None:
    """Plan the case for ``provider``; the status and message of a case that cannot run (its
    preparation failed, the provider cannot take it, or this machine has not the memory it
    needs), None for one that can."""
    try:
        unsupported = prep.plan(provider)
    except Exception as e:  # the case itself is bad, or the oracle rejected it
        return Status.ERROR, f"preparing the case failed: {type(e).__name__}: {e}"
    if unsupported:
        return Status.UNSUPPORTED, unsupported
    needed = _needed_bytes(prep)
    available = short_of_memory(needed)
    if available is not None:
        return Status.ERROR, (
            f"the case needs {-(-needed >> 20):,} MiB of memory (its input, ONNX Runtime's outputs and "
            f"the expected ones) and this machine has {available >> 20:,} MiB available: it was not run "
            "(validate it on a machine with more memory)")
    return None


def _needed_bytes(prep: _Prepared) -> int:
    """The bytes a run holds at once for a case: its input (its feeds are views of it), the
    outputs ONNX Runtime returns, and the expected outputs (none for a large output, which is
    checked from the descriptors: :meth:`_Prepared.fill`)."""
    itemsize = max(1, prep.case.data_type.bitwidth // 8)
    outputs = sum(math.prod(s) * itemsize for s in prep.output_shapes)
    return math.prod(prep.case.shape) * itemsize + outputs + (0 if prep.large_output else outputs)


def plan_batches(
    cases: Iterable[Case],
    *,
    provider: str = "auto",
    device_id: int = 0,
    provider_options: Mapping[str, Any] | None = None,
    optimize: bool = False,
    batch_size: int = 256,
) -> list[BatchPlan]:
    """The batches :func:`run_cases` makes of ``cases``, with the same arguments: each one's
    model, feeds and output names exactly as its session gets them, to measure ONNX Runtime
    on its own on the same sessions. Cases that cannot run (unsupported on the provider, or
    whose preparation fails) are left out, as the runner leaves them out of its sessions."""
    batch_size = _check_batch_size(batch_size)
    run = _new_run(provider, device_id, provider_options, optimize, None)
    case_list = check_cases(cases)
    fill = _filler(run, case_list, None)
    plans = []
    for chunk in _chunks(run, case_list, batch_size):
        items = fill(chunk)
        if items:
            attempt = run.attempt(items)
            if attempt.model is not None:
                plans.append(BatchPlan(run.config, attempt.model.SerializeToString(), attempt.feeds,
                                       attempt.names, len(items)))
    return plans


# tiny cases whose outputs are all non-zero: a broken stack shows in a few milliseconds
_CANARY = (
    Case("Transpose", DataType.FLOAT32, (2, 3), perm=(1, 0), values="iota", seed=1),
    Case("Expand", DataType.INT32, (3,), target_shape=(2, 3), values="iota", seed=2),
    Case("Pad", DataType.UINT8, (2, 2), pads=(1, 1, 1, 1), mode="edge", values="iota", seed=3),
)


def check_provider_start(
    provider: str = "auto",
    *,
    device_id: int = 0,
    provider_options: Mapping[str, Any] | None = None,
    optimize: bool = False,
) -> str:
    """Check that a run on ``provider`` can start, before anything of it is written (a report
    directory replaced, a resumed report's meta rewritten): the checks :func:`run_cases` makes
    before its first case, with the same arguments. On DirectML the canary cases run (a stack
    that returns zeros, cannot create or run their session, or hangs is refused); on any other
    provider a one-node session (a float32 Transpose, which every execution provider runs) is
    created and released. A DirectML canary that passed holds for its worker process: a run
    with the same settings on the same worker takes it instead of running it again.

    Returns:
        The provider's full name.

    Raises:
        ProviderError: the provider is unknown, or cannot start: the message says why, and that
            no case was run (a :class:`~ort_layouts.ProviderUnavailableError` for a provider
            that is not available here; a ProviderOptionError for a bad device index or option).
    """
    config = _provider_config(provider, device_id, provider_options, optimize)
    name = config.name
    if name == DML:
        _canary(config)
        return name
    try:
        _release(_one_node_session(config))
    except OrtLayoutsError as e:  # SessionCreationError, or the EP's device missing
        raise ProviderError(
            f"{name} cannot start, so no case was run: it could not create a session of one float32 "
            f"Transpose node, which every execution provider runs: {e}") from e
    return name


class _InProcess:
    """Stands for an in-process DML EP where a canary's worker is named."""


_IN_PROCESS = _InProcess()
# the canaries that passed, by the DirectML worker they ran on (held weakly: a worker let go takes
# its passes with it), each as (the worker's generation, which a restart counts; the config). One
# pass holds for the worker process it ran on: the cases of many run_cases calls (a pytest item
# each, validate --model's models) are not checked again each time
_canary_passed: weakref.WeakKeyDictionary[Any, set[tuple[int, ProviderConfig]]] = weakref.WeakKeyDictionary()


def _canary_worker() -> tuple[Any, int]:
    """The worker a canary runs on (:data:`_IN_PROCESS` for an in-process DML EP) and its
    generation."""
    worker = dml_worker() if dml_through_worker() else _IN_PROCESS
    return worker, getattr(worker, "generation", 0)


def _canary(config: ProviderConfig) -> None:
    """Run the canary cases before a DirectML run; stop it with one line when the stack returns
    zeros or wrong bits (e.g. vkd3d 1.6 on a Vulkan driver without descriptor indexing, such as
    Mesa 22's lavapipe: every dispatch runs with nothing bound and Run still returns OK).

    The canary cases (a float32 Transpose, an int32 Expand, a uint8 edge Pad) are ones every
    DirectML release runs: a stack that cannot create their session, or fails or dies running
    it, is broken too (no Direct3D 12 device: a Vulkan driver that does not load, no adapter;
    a worker that crashes), and is stopped the same way instead of reporting every case of the
    run unsupported or an error.

    A canary that passed holds for the worker process it ran on and the config: later calls
    with both take it; a restarted worker (another generation), another worker (another stack)
    or another config is checked again.

    Raises:
        ProviderError: the stack gave wrong outputs for the canary cases, or could not create or
            run their session.
    """
    worker, generation = _canary_worker()
    if (generation, config) in _canary_passed.get(worker, ()):
        return
    inputs = [make_input(c) + (1 if c.values == "iota" else 0) for c in _CANARY]
    model = build_model(list(_CANARY), opset=provider_opset(config.name),
                        ir_version=provider_ir_version(config.name))
    step = "create"
    try:
        session = make_session(model, config)
        step = "run"
        try:
            outputs = session.run([f"y{i}" for i in range(len(_CANARY))],
                                  {f"x{i}": x for i, x in enumerate(inputs)})
        finally:
            _release(session)
    except Exception as e:  # any failure of the canary's session is the stack's
        raise ProviderError(
            f"the DirectML stack is broken, so no case was run: it could not {step} the session of the "
            f"canary cases (a float32 Transpose, an int32 Expand and a uint8 edge Pad, which every "
            f"DirectML release runs): {e}") from e
    wrong = [c.op for c, x, y in zip(_CANARY, inputs, outputs, strict=True)
             if np.asarray(y).tobytes() != expected_output(c, x).tobytes()]
    if not wrong:
        worker, generation = _canary_worker()  # the worker the cases ran on (one that died failed)
        _canary_passed.setdefault(worker, set()).add((generation, config))
        return
    zeros = all(not np.asarray(y).any() for y in outputs)
    cause = ("every output is zeros: DirectML's dispatches ran with nothing bound, as with vkd3d 1.6 "
             "on a Vulkan driver without descriptor indexing (Mesa 22 lavapipe); use the stack's "
             "Mesa 25 lavapipe or a GPU's Vulkan driver" if zeros else
             f"the {', '.join(wrong)} canary outputs are wrong")
    raise ProviderError(f"the DirectML stack is broken, so no case was run: {cause}")


def _keep_alive_session(config: ProviderConfig) -> Any:
    """A one-node session held open for the whole run on a non-CPU EP, or None.

    A GPU EP may tear its device down when its last session closes and build it again for the
    next one: with the WebGPU plugin EP on an NVIDIA H200 that is about 87 ms a session instead
    of 1.8 ms. Holding one session keeps the device for every batch of the run."""
    if config.name == CPU:
        return None
    try:
        return _one_node_session(config)
    except (SessionCreationError, OrtLayoutsError):
        return None


def _one_node_session(config: ProviderConfig) -> Any:
    """A session of one float32 Transpose node, which every execution provider runs: the
    session :func:`check_provider_start` creates and :func:`_keep_alive_session` holds.

    Raises:
        SessionCreationError, OrtLayoutsError: the provider could not create it (the EP's
            device missing, for one).
    """
    probe = Case("Transpose", DataType.FLOAT32, (1,), perm=(0,))
    return make_session(build_model([probe], opset=provider_opset(config.name),
                                    ir_version=provider_ir_version(config.name)), config)
