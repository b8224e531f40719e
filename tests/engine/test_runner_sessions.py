"""How the runner drives its sessions: the CPU EP's session options, the session thread, sessions
released as soon as they ran, results reported from the calling thread, the cycle collector
paused and restored, and the batches ``plan_batches`` / ``batch_cases`` describe being the
ones ``run_cases`` creates."""

from __future__ import annotations

import gc
import sys
import threading
from typing import Any

import numpy as np
import onnx
import pytest

from ort_layouts._errors import ArgumentError
from ort_layouts.engine import runner as _runner
from ort_layouts.engine.providers import CPU, CUDA, ProviderConfig, session_options
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.runner import batch_cases, plan_batches, run_cases
from ort_layouts.engine.suite import standard_suite
from ort_layouts.operators.case import Case
from ort_layouts.operators.values import make_input


def test_the_cpu_ep_runs_each_node_on_the_calling_thread() -> None:
    assert session_options(ProviderConfig(CPU)).intra_op_num_threads == 1
    assert session_options(ProviderConfig(CUDA)).intra_op_num_threads == 0  # ONNX Runtime's default


class _Recorded:
    """A real session that notes its thread, its runs' feeds and its release."""

    def __init__(self, session: Any, log: dict[str, list[Any]]) -> None:
        self.session = session
        self.log = log
        self.serial = len(log["threads"])
        log["threads"].append(threading.current_thread().name)

    def run(self, names: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.log["feeds"].append((list(names), {k: v.tobytes() for k, v in feeds.items()}))
        return list(self.session.run(names, feeds))

    def get_provider_graph_assignment_info(self) -> Any:
        return self.session.get_provider_graph_assignment_info()

    def release(self) -> None:
        self.log["released"].append(self.serial)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    log: dict[str, list[Any]] = {"threads": [], "feeds": [], "released": [], "models": []}
    real = _runner.make_session

    def make_session(model: onnx.ModelProto, config: ProviderConfig) -> _Recorded:
        log["models"].append(model.SerializeToString())
        return _Recorded(real(model, config), log)

    monkeypatch.setattr(_runner, "make_session", make_session)
    return log


def test_sessions_run_on_their_thread_and_are_released(recorded: dict[str, list[Any]]) -> None:
    cases = standard_suite(ops=["Transpose", "Pad"], dtypes=["float32", "int8"], ranks=[1, 2])
    caller = threading.current_thread().name
    reported: list[tuple[str, bool]] = []

    def on_result(result: CaseResult) -> None:
        reported.append((threading.current_thread().name, gc.isenabled()))

    assert gc.isenabled()
    results = run_cases(cases, provider="cpu", on_result=on_result)
    assert gc.isenabled()  # restored
    assert all(r.passed for r in results) and len(reported) == len(cases)
    assert set(reported) == {(caller, False)}  # from the calling thread, collector paused
    sessions = len(recorded["threads"])
    assert sessions == len(batch_cases(cases, provider="cpu")) > 2
    assert all(name.startswith("ort_layouts_sessions") for name in recorded["threads"])
    assert len(recorded["released"]) == len(set(recorded["released"])) == sessions


def test_the_lock_changes_hands_often_during_a_run_only() -> None:
    seen: list[float] = []
    before = sys.getswitchinterval()
    run_cases([Case("Transpose", "float32", (2, 3), perm=(1, 0))], provider="cpu",
              on_result=lambda r: seen.append(sys.getswitchinterval()))
    assert seen and seen[0] <= 0.0002 < before  # Python's default is 0.005 s
    assert sys.getswitchinterval() == before
    sys.setswitchinterval(0.0001)  # a shorter interval of the caller's is kept
    shorter = sys.getswitchinterval()  # as Python stores it (whole microseconds)
    try:
        run_cases([Case("Transpose", "float32", (2, 3), perm=(1, 0))], provider="cpu",
                  on_result=lambda r: seen.append(sys.getswitchinterval()))
        assert seen[-1] == sys.getswitchinterval() == shorter < 0.0002
    finally:
        sys.setswitchinterval(before)


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        run_cases([Case("Transpose", "float32", (2, 3), perm=(1, 0))], provider="cpu")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_run_s_objects_join_the_oldest_generation_when_the_collector_resumes() -> None:
    # else the first allocation after the run scans every one of them in a young collection
    results = run_cases(standard_suite(ops=["Transpose"], dtypes=["float32"], ranks=[2]), provider="cpu")
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(r) in oldest and id(r.descriptors) in oldest for r in results)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_process_s_frozen_objects_stay_frozen() -> None:
    frozen = [object(), {"made": "before"}]
    gc.freeze()
    try:
        run_cases([Case("Transpose", "float32", (2, 3), perm=(1, 0))], provider="cpu")
        assert gc.get_freeze_count() > 0 and gc.isenabled()
        assert id(frozen[1]) not in {id(o) for g in range(3) for o in gc.get_objects(generation=g)}
    finally:
        gc.unfreeze()


def test_plan_batches_are_the_sessions_run_cases_creates(recorded: dict[str, list[Any]]) -> None:
    cases = standard_suite(ops=["Concat", "Expand", "Pad"], dtypes=["float16", "int16"], ranks=[0, 1, 2])
    run_cases(cases, provider="cpu", batch_size=16)
    plans = plan_batches(cases, provider="cpu", batch_size=16)
    batches = batch_cases(cases, provider="cpu", batch_size=16)
    # the CPU EP has no int16 Pad kernel: those sessions fail to be created, and nothing retries
    # them, so the sessions made are exactly the planned ones
    assert recorded["models"] == [p.model for p in plans]
    assert [len(b) for b in batches] == [p.nodes for p in plans]
    assert [len(onnx.load_from_string(p.model).graph.node) for p in plans] == [p.nodes for p in plans]
    ran = [(p.names, {k: v.tobytes() for k, v in p.feeds.items()}) for p in plans]
    assert all(feeds in ran for feeds in recorded["feeds"]) and len(recorded["feeds"]) < len(plans)
    assert all(p.config == ProviderConfig(CPU) for p in plans)


@pytest.mark.parametrize("plan", [plan_batches, batch_cases])
@pytest.mark.parametrize("bad", [0, True, 2.5, "8"])
def test_plan_batches_and_batch_cases_refuse_a_bad_batch_size_as_run_cases_does(plan: Any, bad: Any) -> None:
    with pytest.raises(ArgumentError, match=f"batch_size {bad!r} is not valid; valid: an int >= 1"):
        plan([Case("Identity", "float32", (2,))], provider="cpu", batch_size=bad)


@pytest.mark.parametrize("plan", [plan_batches, batch_cases])
def test_plan_batches_and_batch_cases_refuse_an_item_that_is_not_a_case(plan: Any) -> None:
    with pytest.raises(ArgumentError, match=r"cases\[0\] 'Identity' is a str, not a Case"):
        plan(["Identity"], provider="cpu")


def test_a_case_whose_expected_output_fails_is_an_error_and_the_rest_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=s) for s in range(4)]
    bad = cases[2]
    real = _runner.expected_output

    def expected_output(case: Case, x: np.ndarray, **known: Any) -> np.ndarray:
        if case == bad:
            raise ValueError("no oracle today")
        return real(case, x, **known)

    monkeypatch.setattr(_runner, "expected_output", expected_output)
    results = run_cases(cases, provider="cpu")
    assert [r.status for r in results] == [Status.PASS, Status.PASS, Status.ERROR, Status.PASS]
    assert results[2].message == "preparing the case failed: ValueError: no oracle today"


def test_explicit_inputs_are_what_the_session_gets(recorded: dict[str, list[Any]]) -> None:
    cases = [Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=s) for s in range(3)]
    given = (np.arange(6).reshape(2, 3) * -1.5).astype(">f4")  # float32 of the other byte order
    results = run_cases(cases, provider="cpu", inputs={cases[1].id: given})
    assert all(r.passed for r in results)
    ((names, feeds),) = recorded["feeds"]
    assert names == ["y0", "y1", "y2"]
    assert feeds["x1"] == given.astype("<f4").tobytes()
    assert feeds["x0"] == make_input(cases[0]).tobytes() and feeds["x2"] == make_input(cases[2]).tobytes()


@pytest.mark.parametrize(("ahead_bytes", "attempts_before_first_judge"), [(64 << 20, 5), (0, 2)])
def test_batches_queue_ahead_up_to_a_count_and_a_byte_size(
        monkeypatch: pytest.MonkeyPatch, ahead_bytes: int, attempts_before_first_judge: int) -> None:
    events: list[str] = []
    attempt, judge = _runner._Run.attempt, _runner._Run.judge

    def attempted(self: Any, items: Any) -> Any:
        events.append("a")  # a batch filled and handed to the session thread
        return attempt(self, items)

    def judged(self: Any, items: Any, a: Any) -> None:
        events.append("j")
        judge(self, items, a)

    monkeypatch.setattr(_runner._Run, "attempt", attempted)
    monkeypatch.setattr(_runner._Run, "judge", judged)
    monkeypatch.setattr(_runner, "_AHEAD_BYTES", ahead_bytes)
    assert _runner._AHEAD_BATCHES == 4
    cases = standard_suite(ops=["Transpose"], dtypes=["float32"], ranks=[2, 3])
    results = run_cases(cases, provider="cpu", batch_size=2)
    assert all(r.passed for r in results) and events.count("a") == events.count("j") > 6
    assert events.index("j") == attempts_before_first_judge


def test_a_stop_while_batches_are_queued_starts_none_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while batches wait on the session thread: the thread pool's shutdown ran each of them
    (on DirectML each one started a new worker, on the GPU that had just hung). Now none starts
    after the stop; the one running is stopped by ``interrupt_sessions``."""
    started: list[float] = []
    stopped: list[float] = []
    real_call = _runner._Attempt.__call__

    def slow_call(self: Any) -> Any:
        import time

        started.append(time.monotonic())
        time.sleep(0.2)  # the batches queue up behind it
        return real_call(self)

    def stop_at_first_judge(run: Any, pending: Any) -> None:
        import time

        stopped.append(time.monotonic())
        raise KeyboardInterrupt

    monkeypatch.setattr(_runner._Attempt, "__call__", slow_call)
    monkeypatch.setattr(_runner, "_judge_pending", stop_at_first_judge)
    cases = [c for c in standard_suite() if c.op == "Transpose"][:200]
    with pytest.raises(KeyboardInterrupt):
        run_cases(cases, provider="cpu", batch_size=20, jobs=1)
    assert stopped and len(started) >= 1
    assert [t for t in started if t > stopped[0]] == []  # batch after batch ran after the stop before
