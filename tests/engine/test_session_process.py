"""The CPU EP's session process: the same outputs and errors as a session in this process, a
child that dies costing one failed batch (the next one starts a new child), and a run that
uses it giving the results of one that does not."""

from __future__ import annotations

import io
import os
import pickle
import re
import signal
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from ort_layouts.engine import runner as _runner
from ort_layouts.engine.providers import CPU, DML, ProviderConfig, session_options, session_settings
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.session_process import (
    ChildLost,
    SessionProcess,
    SessionProcessCreateError,
    SessionProcessDiedError,
    SessionProcessRunError,
    exchange,
)
from ort_layouts.engine.suite import standard_suite
from ort_layouts.operators.case import Case


def _transpose_model(opset: int = 17) -> bytes:
    node = helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0], name="n0_Transpose")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.fixture
def process() -> Any:
    p = SessionProcess()
    yield p
    p.close()


def _bits() -> np.ndarray:
    # NaN payloads and -0.0 among the values: the outputs must come back bit for bit
    raw = np.array([0x7FC00001, 0xFFA00002, 0x80000000, 1, 0x3F800000, 0x7F800000], dtype=np.uint32)
    return raw.view(np.float32).reshape(2, 3)


def test_outputs_and_placement_are_those_of_a_session_here(process: SessionProcess) -> None:
    config = ProviderConfig(CPU)
    x = _bits()
    outputs, placed = process.run_batch(_transpose_model(), session_settings(config), {"x": x}, ["y"])
    here = ort.InferenceSession(_transpose_model(), sess_options=session_options(config), providers=[CPU])
    assert outputs[0].tobytes() == here.run(["y"], {"x": x})[0].tobytes() == x.T.copy().tobytes()
    assert outputs[0].dtype == np.float32 and outputs[0].shape == (3, 2)
    if hasattr(ort.InferenceSession, "get_provider_graph_assignment_info"):
        assert placed == {"n0_Transpose": CPU}


def test_a_refused_session_and_a_failed_run_carry_onnx_runtimes_text(process: SessionProcess) -> None:
    settings = session_settings(ProviderConfig(CPU))
    bad = onnx.load_from_string(_transpose_model())
    bad.graph.node[0].op_type = "NoSuchOp"
    with pytest.raises(SessionProcessCreateError, match="NoSuchOp"):
        process.run_batch(bad.SerializeToString(), settings, {"x": _bits()}, ["y"])
    with pytest.raises(SessionProcessRunError, match="x_wrong"):
        process.run_batch(_transpose_model(), settings, {"x_wrong": _bits()}, ["y"])
    outputs, _ = process.run_batch(_transpose_model(), settings, {"x": _bits()}, ["y"])  # and it lives on
    assert outputs[0].tobytes() == _bits().T.copy().tobytes()


def test_a_child_that_dies_fails_its_batch_and_the_next_starts_a_new_one(
        process: SessionProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = session_settings(ProviderConfig(CPU))
    real = SessionProcess._ensure
    killed: list[int] = []

    def ensure_then_die(self: SessionProcess) -> Any:  # the child dies once it has the batch
        proc = real(self)
        if not killed:
            killed.append(proc.pid)
            proc.kill()
            proc.wait()
        return proc

    monkeypatch.setattr(SessionProcess, "_ensure", ensure_then_die)
    with pytest.raises(SessionProcessDiedError, match=r"exit status -9"):
        process.run_batch(_transpose_model(), settings, {"x": _bits()}, ["y"])
    outputs, _ = process.run_batch(_transpose_model(), settings, {"x": _bits()}, ["y"])
    assert process.pid not in (None, killed[0])
    assert outputs[0].tobytes() == _bits().T.copy().tobytes()


def test_a_child_that_died_between_batches_is_replaced_quietly(process: SessionProcess) -> None:
    settings = session_settings(ProviderConfig(CPU))
    process.start()
    first = process.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    os.waitpid(first, 0)
    outputs, _ = process.run_batch(_transpose_model(), settings, {"x": _bits()}, ["y"])
    assert process.pid not in (None, first)
    assert outputs[0].tobytes() == _bits().T.copy().tobytes()


def test_the_settings_are_the_session_options_here() -> None:
    for config in (ProviderConfig(CPU), ProviderConfig(CPU, optimize=True), ProviderConfig(DML)):
        settings = session_settings(config)
        so = session_options(config)
        assert so.intra_op_num_threads == settings["intra_op_num_threads"] == (1 if config.name == CPU else 0)
        assert (so.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL) == config.optimize
        assert so.log_severity_level == 4 and not so.enable_mem_pattern
        for key, value in settings["config_entries"]:
            assert so.get_session_config_entry(key) == value
    assert ("session.disable_cpu_ep_fallback", "1") in session_settings(ProviderConfig(DML))["config_entries"]


def test_a_run_through_the_process_gives_the_results_of_one_without(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [*standard_suite(ops=["Transpose", "Pad", "Slice", "Split"], dtypes=["float16", "int8"],
                             ranks=[1, 2]),
             Case("Pad", "int16", (2, 3), pads=(0, 1, 0, 1), opset=25)]  # no CPU kernel: unsupported
    monkeypatch.setattr(_runner, "PROCESS_MIN_CASES", 10**9)
    here = run_cases(cases, provider="cpu", jobs=1)
    shared = _runner.session_process()
    calls: list[int | None] = []
    real = SessionProcess.run_batch

    def run_batch(self: SessionProcess, *args: Any) -> Any:
        calls.append(self.pid)
        if len(calls) == 2 and self.pid is not None:  # the child dies under the second batch
            os.kill(self.pid, signal.SIGKILL)
        return real(self, *args)

    monkeypatch.setattr(SessionProcess, "run_batch", run_batch)
    monkeypatch.setattr(_runner, "PROCESS_MIN_CASES", 1)
    there = run_cases(cases, provider="cpu", jobs=1)
    assert len(set(calls)) >= 2 and shared.pid is not None  # a new child after the death
    assert [r.status for r in there] == [r.status for r in here]
    assert there[-1].status.value == "unsupported" and "Pad(25)" in there[-1].message
    for a, b in zip(here, there, strict=True):
        assert (a.case, a.element_count, a.mismatch_count, a.message, a.descriptors) == \
            (b.case, b.element_count, b.mismatch_count, b.message, b.descriptors)


def test_a_run_whose_process_cannot_start_keeps_its_sessions_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: SessionProcess) -> None:
        raise OSError("no Python executable")

    monkeypatch.setattr(SessionProcess, "start", refuse)
    monkeypatch.setattr(_runner, "PROCESS_MIN_CASES", 1)
    sent: list[int] = []
    monkeypatch.setattr(SessionProcess, "run_batch", lambda self, *a: sent.append(1))
    results = run_cases([Case("Transpose", "float32", (2, 3), perm=(1, 0))], provider="cpu", jobs=1)
    assert results[0].passed and not sent


def test_a_forked_process_starts_its_own_child() -> None:
    from ort_layouts.engine import session_process as module

    shared = module.session_process()
    pid = os.fork()
    if pid == 0:  # the child: a fresh handle, not the parent's pipes
        os._exit(0 if module._SHARED.value is None and module.session_process() is not shared else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_readme_says_when_and_what_the_session_process_runs() -> None:
    import ast
    import sys
    from pathlib import Path

    from ort_layouts.engine import session_process as module
    from ort_layouts.engine.runner import PROCESS_MIN_CASES, uses_session_process

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    said = " ".join(readme.split())  # the session process's own sentence, not the workers'
    assert (f"With one job, a run of {PROCESS_MIN_CASES:,} cases or more creates and runs its sessions in a "
            "session process") in said
    assert uses_session_process(CPU, PROCESS_MIN_CASES)
    assert not uses_session_process(CPU, PROCESS_MIN_CASES - 1)
    assert not uses_session_process(DML, 10**6)
    # "a child Python that imports only numpy and ONNX Runtime": the script's imports
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported - set(sys.stdlib_module_names) - {"__future__"} == {"onnxruntime"}  # numpy comes with it


def test_a_child_that_does_not_say_it_is_ready_is_not_started(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Any) -> None:
    """As when ``sys.executable`` is not a Python that imports ONNX Runtime: the child exits,
    or prints something else first; start() raises OSError (the runner then keeps its sessions
    in-process), and a batch of a process that cannot start again fails as died."""
    from ort_layouts.engine import session_process as module

    for text in ("import sys; sys.exit(3)", "print('not a session process')"):
        script = tmp_path / "child.py"
        script.write_text(text, encoding="utf-8")
        monkeypatch.setattr(module, "__file__", str(script))
        child = SessionProcess()
        try:
            with pytest.raises(OSError, match=r"the session process (died \(exit status \d+\) as it started"
                                              r"|did not start: it said)"):
                child.start()
            assert child.pid is None
            with pytest.raises(SessionProcessDiedError, match=r"the session process .* as it started"):
                child.run_batch(b"", {}, {}, [])
        finally:
            child.close()


def test_a_forked_process_that_exits_leaves_its_parents_children_running(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The exit handlers that stop the session process and the workers stop only the process's
    own: a forked child that exits (running them) leaves its parent's children running."""
    import atexit

    from ort_layouts.engine import parallel

    shared = _runner.session_process()
    shared.start()
    parallel.start_workers(1)
    before = (shared.pid, parallel.worker_pids())
    pid = os.fork()
    if pid == 0:
        atexit._run_exitfuncs()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (shared.pid, parallel.worker_pids()) == before and before[0] is not None and before[1]
    monkeypatch.setattr(_runner, "PROCESS_MIN_CASES", 1)
    results = run_cases([Case("Transpose", "float32", (2, 3), perm=(1, 0))] * 3, provider="cpu", jobs=1)
    assert all(r.passed for r in results)
    assert shared.pid == before[0]  # the same child served them


class _InterruptedLoad:
    """``pickle`` as the module under test sees it, whose next ``load`` is interrupted
    (KeyboardInterrupt, as Ctrl-C raises it) before it reads anything."""

    def __init__(self) -> None:
        import pickle

        self._pickle = pickle
        self.armed = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pickle, name)

    def load(self, stream: Any) -> Any:
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt
        return self._pickle.load(stream)


def test_a_start_interrupted_before_ready_is_stopped_not_kept(process: SessionProcess,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the child imports: a child kept would answer the next batch with its
    "ready", and every later batch with the reply meant for the one before."""
    from ort_layouts.engine import session_process as module

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "wait_ready", interrupted)
    with pytest.raises(KeyboardInterrupt):
        process.start()
    assert process.pid is None
    monkeypatch.undo()
    settings = session_settings(ProviderConfig(CPU))
    for scale in (1, 2):
        x = np.roll(_bits(), scale)
        outputs, _ = process.run_batch(_transpose_model(), settings, {"x": x}, ["y"])
        assert outputs[0].tobytes() == x.T.copy().tobytes()


def test_a_batch_interrupted_before_its_reply_is_read_stops_the_child(
        process: SessionProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine import session_process as module

    settings = session_settings(ProviderConfig(CPU))
    process.start()
    first = process.pid
    monkeypatch.setattr(module, "pickle", _InterruptedLoad())
    with pytest.raises(KeyboardInterrupt):
        process.run_batch(_transpose_model(), settings, {"x": _bits()}, ["y"])
    assert process.pid is None  # its reply unread: the child is stopped, not asked again
    x = np.roll(_bits(), 3)
    outputs, _ = process.run_batch(_transpose_model(), settings, {"x": x}, ["y"])
    assert outputs[0].tobytes() == x.T.copy().tobytes()  # this batch's own outputs
    assert process.pid not in (None, first)


class _Pipes:
    """A child's two pipes as a test gives them: its stdin a buffer, its stdout what it said."""

    def __init__(self, said: bytes) -> None:
        self.stdin = io.BytesIO()
        self.stdout = io.BytesIO(said)


def test_exchange_sends_the_request_and_returns_a_reply_of_a_known_kind() -> None:
    pipes = _Pipes(pickle.dumps(("error", "text", "trace")))
    stopped: list[bool] = []
    reply = exchange(pipes, ("run", 7), ("ok", "error"), lambda: stopped.append(True))  # type: ignore[arg-type]
    assert reply == ("error", "text", "trace") and pickle.loads(pipes.stdin.getvalue()) == ("run", 7)
    assert not stopped  # only an interruption stops the child


@pytest.mark.parametrize(("said", "lost"), [
    (pickle.dumps(("later", 1)), "unexpected reply 'later'; valid: ['ok', 'error']"),
    (pickle.dumps(["ok", 1]), "unexpected reply 'list'"),
    (pickle.dumps(()), "unexpected reply 'tuple'"),
    (b"", "Ran out of input"),  # the child closed its stdout
    (b"\x80\x05junk", "pickle data was truncated"),  # a reply cut short
])
def test_exchange_loses_a_child_whose_reply_is_unknown_or_unreadable(said: bytes, lost: str) -> None:
    with pytest.raises(ChildLost, match=re.escape(lost)):
        exchange(_Pipes(said), ("run", 7), ("ok", "error"), lambda: None)  # type: ignore[arg-type]


def test_a_session_process_reply_of_an_unknown_kind_is_a_died_child_not_a_run_error(
        process: SessionProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine import session_process as module

    process.start()
    real = module.pickle

    class _Odd:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def load(self, stream: Any) -> Any:
            real.load(stream)
            return ("maybe", "a reply this side does not know")

    monkeypatch.setattr(module, "pickle", _Odd())
    with pytest.raises(SessionProcessDiedError, match="unexpected reply 'maybe'"):
        process.run_batch(_transpose_model(), session_settings(ProviderConfig(CPU)), {"x": _bits()}, ["y"])
    assert process.pid is None
