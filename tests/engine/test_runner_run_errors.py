"""A run that fails in a node the error names: that case and its kin run alone, the rest batched
(the shape of the DML EP's Pad "wrap" failure on DirectML below feature level 6.4)."""

from __future__ import annotations

import weakref
from typing import Any

import onnx

from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case


def test_a_named_run_failure_isolates_its_kin_without_bisection(monkeypatch: Any) -> None:
    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.providers import ProviderConfig

    real_make_session = _runner.make_session
    sizes: list[int] = []

    class WrapFails:
        """A session that fails like ORT 1.24.4's DML EP on a Pad "wrap" node of an old DirectML."""

        def __init__(self, model: onnx.ModelProto, config: ProviderConfig) -> None:
            self.inner = real_make_session(model, config)
            self.wrap = [n.name for n in model.graph.node
                         if any(a.name == "mode" and a.s == b"wrap" for a in n.attribute)]
            sizes.append(len(model.graph.node))

        def run(self, names: list[str], feeds: dict[str, Any]) -> list[Any]:
            if self.wrap:
                raise RuntimeError(
                    "[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Pad node. "
                    f"Name:'{self.wrap[0]}' Status Message: MLOperatorAuthorImpl.cpp(2508) 80070057 "
                    "Invalid parameter.")
            return self.inner.run(names, feeds)  # type: ignore[no-any-return]

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    monkeypatch.setattr(_runner, "make_session", WrapFails)
    modes = ["constant", "wrap", "edge", "wrap", "reflect", "wrap", "constant", "edge"]
    cases = [Case("Pad", "float32", (3, 4), pads=(1, 1 + k % 2, 1, k % 3), mode=m)
             for k, m in enumerate(modes)]
    results = run_cases(cases, provider="cpu", batch_size=64)
    assert [r.status for r in results] == [
        Status.ERROR if m == "wrap" else Status.PASS for m in modes]
    # each wrap case reports the failure of its own one-node session
    assert all("Name:'n0_Pad'" in r.message for r in results if r.status is Status.ERROR)
    # the batch of 8, the three wrap cases alone, then the other five in one batch: no bisection
    assert sizes == [8, 1, 1, 1, 5]


def test_after_a_hang_each_case_of_the_batch_runs_alone_instead_of_a_bisection(monkeypatch: Any) -> None:
    """A DirectML worker that does not answer is stopped after its timeout (minutes): bisecting
    a batch of 8 around one hanging case would wait it out 4 times; alone, twice."""
    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.dml.client import DmlWorkerTimeoutError
    from ort_layouts.engine.providers import ProviderConfig

    real_make_session = _runner.make_session
    sizes: list[int] = []
    hangs: list[int] = []

    class HangsOnAPermutation:
        """A session whose run hangs (times out) when it holds the Transpose of perm (1, 2, 0)."""

        def __init__(self, model: onnx.ModelProto, config: ProviderConfig) -> None:
            self.inner = real_make_session(model, config)
            self.hangs = any(list(a.ints) == [1, 2, 0] for n in model.graph.node for a in n.attribute)
            sizes.append(len(model.graph.node))

        def run(self, names: list[str], feeds: dict[str, Any]) -> list[Any]:
            if self.hangs:
                hangs.append(len(sizes))
                raise DmlWorkerTimeoutError("the DirectML worker did not answer in time")
            return self.inner.run(names, feeds)  # type: ignore[no-any-return]

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    monkeypatch.setattr(_runner, "make_session", HangsOnAPermutation)
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0), (0, 1, 2), (2, 1, 0)]
    cases = [Case("Transpose", "float32", (2, 3, 4), perm=p, seed=k) for k, p in enumerate(perms)]
    results = run_cases(cases, provider="cpu", batch_size=64)
    assert [r.status for r in results] == [Status.ERROR if p == (1, 2, 0) else Status.PASS for p in perms]
    assert "did not answer in time" in results[3].message
    assert sizes == [8, 1, 1, 1, 1, 1, 1, 1, 1] and len(hangs) == 2


def _canary_with(monkeypatch: Any, make_session: Any) -> str:
    """The error the canary raises with ``make_session`` standing in for the provider's."""
    import pytest

    from ort_layouts._errors import ProviderError
    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.providers import DML, ProviderConfig

    monkeypatch.setattr(_runner, "make_session", make_session)
    monkeypatch.setattr(_runner, "_canary_passed", weakref.WeakKeyDictionary())  # no earlier pass holds
    with pytest.raises(ProviderError) as raised:
        _runner._canary(ProviderConfig(DML))
    return str(raised.value)


def test_the_canary_stops_a_stack_that_cannot_create_its_session(monkeypatch: Any) -> None:
    """No Direct3D 12 device (a Vulkan driver that does not load: DXGI_ERROR_UNSUPPORTED): the
    canary's Transpose, Expand and Pad, which every DirectML release runs, are refused, and the
    run stops instead of reporting every case unsupported and passing."""
    from ort_layouts.engine.providers import SessionCreationError

    def refused(model: Any, config: Any) -> Any:
        raise SessionCreationError("DmlExecutionProvider could not create the session: ... 887A0004")

    message = _canary_with(monkeypatch, refused)
    assert message.startswith("the DirectML stack is broken, so no case was run: it could not create")
    assert message.endswith("887A0004")


def test_the_canary_stops_a_stack_whose_worker_dies_running_it(monkeypatch: Any) -> None:
    from ort_layouts.engine.dml.client import DmlWorkerCrashedError

    class Dies:
        def run(self, names: Any, feeds: Any) -> Any:
            raise DmlWorkerCrashedError("the DirectML worker died (status -11)")

    message = _canary_with(monkeypatch, lambda model, config: Dies())
    assert "it could not run the session of the canary cases" in message and "status -11" in message


def test_a_canary_that_passed_holds_for_its_worker_process_and_config(monkeypatch: Any) -> None:
    """The canary's session is made once for a worker process and a config: a later call on the
    same worker takes the pass; a restarted worker (another generation), another worker or
    another config runs it again. ONNX Runtime's CPU EP stands in for the DirectML stack."""
    import onnxruntime as ort

    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.providers import DML, ProviderConfig

    made: list[int] = []

    def cpu_session(model: Any, config: Any) -> Any:
        made.append(1)
        return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])

    class Worker:
        pass

    worker: list[Any] = [Worker(), 1]  # the worker the canary would run on, its generation
    monkeypatch.setattr(_runner, "make_session", cpu_session)
    monkeypatch.setattr(_runner, "_canary_passed", weakref.WeakKeyDictionary())
    monkeypatch.setattr(_runner, "_canary_worker", lambda: (worker[0], worker[1]))
    config = ProviderConfig(DML)
    _runner._canary(config)
    _runner._canary(config)
    assert len(made) == 1
    worker[1] = 2  # the worker restarted
    _runner._canary(config)
    _runner._canary(config)
    assert len(made) == 2
    gone = weakref.ref(worker[0])
    worker[0] = Worker()  # another worker (another stack)
    _runner._canary(config)
    assert len(made) == 3
    _runner._canary(ProviderConfig(DML, optimize=True))  # another config
    assert len(made) == 4
    assert gone() is None and len(_runner._canary_passed) == 1  # the worker let go took its passes
