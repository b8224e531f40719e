"""The batched runner: results, culprit isolation, on_result, mismatch figures, and the whole
standard suite on the CPU EP."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ort_layouts._errors import ArgumentError, ProviderError
from ort_layouts.engine import runner as _runner
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.engine.suite import standard_suite
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator
from ort_layouts.operators.values import make_input

SMALL = [
    Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1), seed=1),
    Case("Transpose", "int64", (3, 4), seed=2),
    Case("Expand", "float16", (3, 1), target_shape=(2, 3, 4), seed=3),
    Case("Pad", "uint8", (3, 4), pads=(1, 2, 0, 1), mode="edge", seed=4),
    Case("Pad", "float64", (3, 4), pads=(1, 0, 2, 2), mode="constant", pad_value_hex="0000000000001440",
         seed=5),
]


def test_small_batch_passes_on_cpu() -> None:
    seen: list[CaseResult] = []
    results = run_cases(SMALL, provider="cpu", on_result=seen.append)
    assert [r.case for r in results] == SMALL
    assert all(r.status is Status.PASS for r in results), [(r.case.id, r.message) for r in results]
    assert sorted(r.case.id for r in seen) == sorted(c.id for c in SMALL)
    for r in results:
        assert r.provider == "CPUExecutionProvider" and r.node_provider == "CPUExecutionProvider"
        assert r.device and r.element_count > 0 and r.seconds > 0
        assert r.descriptors["operator"] in ("DML_OPERATOR_ELEMENT_WISE_IDENTITY", "DML_OPERATOR_PADDING1")


def test_culprits_isolated_and_rest_run() -> None:
    # the CPU EP has no int16 Pad kernel (session creation fails); a reflect pad of 5 on an axis of
    # 3 fails while running; everything else must still run and pass
    bad_session = Case("Pad", "int16", (3, 4), pads=(1, 1, 1, 1), seed=10)
    bad_run = Case("Pad", "float32", (3, 4), pads=(5, 0, 0, 0), mode="reflect", seed=11)
    good = standard_suite(ops=["Transpose"], ranks=[3])[:40]
    cases = [*good[:20], bad_run, *good[20:], bad_session]
    seen: list[CaseResult] = []
    results = run_cases(cases, provider="cpu", batch_size=64, on_result=seen.append)
    by_id = {r.case.id: r for r in results}
    assert by_id[bad_session.id].status is Status.UNSUPPORTED
    assert "Pad" in by_id[bad_session.id].message and "int16" in by_id[bad_session.id].message
    assert by_id[bad_run.id].status is Status.ERROR and "run failed" in by_id[bad_run.id].message
    assert all(by_id[c.id].passed for c in good)
    assert len(seen) == len(cases)


def test_batched_equals_one_session_per_case() -> None:
    cases = standard_suite(ops=["Pad"], dtypes=["float32", "int8"], ranks=[2])[:60]
    batched = run_cases(cases, provider="cpu", batch_size=256)
    single = run_cases(cases, provider="cpu", batch_size=1)
    assert [(r.case.id, r.status) for r in batched] == [(r.case.id, r.status) for r in single]


def test_unknown_provider_raises() -> None:
    with pytest.raises(ProviderError, match="available"):
        run_cases(SMALL, provider="nosuch")


def test_mismatch_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong expectation at a known index must come back with that index and the input and
    output buffer offsets of that element."""
    case = Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1), seed=9)
    index = (3, 1, 2)
    real = _runner.expected_output

    def flipped(c: Case, x: np.ndarray, **known: object) -> np.ndarray:
        out = real(c, x, **known).copy()  # type: ignore[arg-type]
        out.view(np.uint32)[index] ^= 1
        return out

    monkeypatch.setattr(_runner, "expected_output", flipped)
    (r,) = run_cases([case], provider="cpu")
    assert r.status is Status.MISMATCH and r.mismatch_count == 1
    assert r.first_mismatch_index == index
    # output index (3, 1, 2) reads input element x[1, 2, 3]: packed offset 1*12 + 2*4 + 3
    assert r.input_offset_in_elements == int(np.ravel_multi_index((1, 2, 3), (2, 3, 4)))
    assert r.output_offset_in_elements == int(np.ravel_multi_index(index, (4, 2, 3)))
    x = make_input(case)
    assert r.actual_hex == np.transpose(x, (2, 0, 1))[index].astype("<f4").tobytes().hex()


def test_mismatch_offsets_pad() -> None:
    op = dml_operator(Case("Pad", "float32", (3, 4), pads=(1, 2, 0, 1)))
    assert _runner._mismatch_offsets(op, (0, 0)) == (None, 0)  # padding: no input element
    # output (2, 3) reads input (1, 1) = packed offset 5; output is [1, 1, 4, 7] packed
    assert _runner._mismatch_offsets(op, (2, 3)) == (5, 2 * 7 + 3)


def test_negative_pads_unsupported_on_dml_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before opset 11: from 11 the DML EP runs a Pad that crops (tests/engine/dml)."""
    case = Case("Pad", "float32", (3, 4), pads=(-1, 0, 0, 1), seed=1, opset=10)
    (r,) = run_cases([case], provider="cpu")
    assert r.passed and r.descriptors == {}
    monkeypatch.setattr(ort, "get_available_providers",
                        lambda: ["DmlExecutionProvider", "CPUExecutionProvider"])
    seen: list[CaseResult] = []
    (r,) = run_cases([case], provider="dml", on_result=seen.append)
    assert r.status is Status.UNSUPPORTED and "negative pads" in r.message and seen == [r]


def _is_nan16(bits: int) -> bool:
    return (bits & 0x7C00) == 0x7C00 and bool(bits & 0x03FF)


def test_standard_suite_on_cpu() -> None:
    """The whole standard suite on the CPU EP. Everything passes except ONNX Runtime CPU's known
    behaviours, each checked precisely so a new failure cannot hide among them:

    - no Pad kernel for int16/uint16, and no DepthToSpace/SpaceToDepth kernel for integer types
      before opset 13 (unsupported);
    - float16 Pad and Tile move values through float32: signalling NaNs turn quiet (data and
      constant) and at rank 1 NaN payloads are replaced: a mismatch that the diagnosis
      explains and the known-issue table labels, so it does not fail the run.
    """
    cases = standard_suite()
    results = run_cases(cases, provider="cpu")
    status = Counter(r.status for r in results)
    assert status[Status.ERROR] == 0, [(r.case.id, r.message) for r in results if r.status is Status.ERROR]
    for r in results:
        c = r.case
        if r.status is Status.UNSUPPORTED:
            if c.op == "Pad":
                assert c.data_type.name in ("INT16", "UINT16"), (c.id, r.message)
            else:
                assert c.op in ("DepthToSpace", "SpaceToDepth"), (c.id, r.message)
                assert c.data_type.name not in ("FLOAT32", "FLOAT16", "FLOAT64"), (c.id, r.message)
                assert c.opset is not None and c.opset < 13, (c.id, r.message)
        elif r.status is Status.MISMATCH:
            assert c.op in ("Pad", "Tile") and c.data_type.name == "FLOAT16" and c.values == "special", c.id
            expected = int.from_bytes(bytes.fromhex(r.expected_hex), "little")
            actual = int.from_bytes(bytes.fromhex(r.actual_hex), "little")
            # NaN in, NaN out, other bits: quieted (rank >= 2) or the payload replaced (rank 1)
            assert _is_nan16(expected) and (actual & 0x7E00) == 0x7E00 and actual != expected, c.id
            assert r.known_issue and "float" in r.known_issue, c.id
            assert not r.failed
    assert not [r.case.id for r in results if r.failed]
    assert status[Status.PASS] >= 9000


def test_unsupported_nodes_are_isolated_by_placement_not_bisection(monkeypatch: pytest.MonkeyPatch) -> None:
    """With CPU fallback off, a batch whose session fails is probed once with fallback allowed;
    the nodes ONNX Runtime would move off the EP are reported unsupported, the rest run."""
    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.providers import ProviderConfig, SessionCreationError

    real_make_session = _runner.make_session
    calls: list[bool] = []
    odd_shape = [7, 5, 3]  # the one case the pretend EP has no kernel for

    def dims(model: onnx.ModelProto) -> list[list[int]]:
        return [[d.dim_value for d in v.type.tensor_type.shape.dim] for v in model.graph.input]

    def make_session(model: onnx.ModelProto, config: ProviderConfig) -> object:
        calls.append(config.fallback_disabled)
        if config.fallback_disabled and odd_shape in dims(model):
            raise SessionCreationError("graph nodes are assigned to the default CPU EP, but fallback "
                                       "to CPU EP has been explicitly disabled by the user")
        # ONNX Runtime refuses CPU fallback off on the CPU EP itself: build the real session without
        session = real_make_session(model, dataclasses.replace(config, disable_cpu_fallback=False))
        session._pretend_dims = dims(model)  # type: ignore[attr-defined]
        return session

    def node_assignment(session: object) -> dict[str, str]:
        return {f"n{i}_Transpose": "OtherEP" if d == odd_shape else "CPUExecutionProvider"
                for i, d in enumerate(session._pretend_dims)}  # type: ignore[attr-defined]

    monkeypatch.setattr(_runner, "make_session", make_session)
    monkeypatch.setattr(_runner, "node_assignment", node_assignment)
    cases = [Case("Transpose", "float32", tuple(s), perm=(2, 1, 0))
             for s in ([2, 3, 4], [3, 4, 5], odd_shape, [4, 5, 6], [5, 6, 7])]
    run = _runner._Run(ProviderConfig("CPUExecutionProvider", disable_cpu_fallback=True), "cpu", None)
    run.batch([(k, _runner._prepare(c, "CPUExecutionProvider", None)) for k, c in enumerate(cases)])
    statuses = [run.results[k].status for k in range(len(cases))]
    assert statuses == [Status.PASS, Status.PASS, Status.UNSUPPORTED, Status.PASS, Status.PASS]
    assert "would run the node on OtherEP" in run.results[2].message
    # failed batch, one placement probe, then the other four in one batch: no bisection
    assert calls == [True, False, True]


def test_a_kernel_missing_everywhere_fails_its_whole_signature_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ONNX Runtime's "provider type ... is not set" (no EP, the CPU included, has the kernel)
    names one node; every case of the batch with that op, type and opset is unsupported alike."""
    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.providers import ProviderConfig, SessionCreationError

    real_make_session = _runner.make_session
    calls: list[int] = []

    def make_session(model: onnx.ModelProto, config: ProviderConfig) -> object:
        calls.append(len(model.graph.node))
        int16 = [n.name for n, v in zip(model.graph.node, model.graph.input, strict=True)
                 if v.type.tensor_type.elem_type == onnx.TensorProto.INT16]
        if int16:
            raise SessionCreationError(
                "Exception during initialization: transformer_memcpy.cc:253 !node_provider_type.empty() "
                f"was false. Provider type for Pad node with name '{int16[0]}' is not set.")
        return real_make_session(model, config)

    monkeypatch.setattr(_runner, "make_session", make_session)
    cases = [Case("Pad", dt, (3, 4), pads=(k, 1, 1, k)) for k in range(3) for dt in ("int16", "float32")]
    results = run_cases(cases, provider="cpu")
    assert [r.status for r in results] == [Status.UNSUPPORTED, Status.PASS] * 3
    assert all("is not set" in r.message for r in results if r.status is Status.UNSUPPORTED)
    assert len(calls) == 2  # the int16 batch once, the float32 batch once: no bisection


def test_a_gpu_run_holds_one_session_open_for_its_whole_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a non-CPU EP the runner keeps a one-node session alive from the first batch to the
    last (a GPU EP may rebuild its device whenever its last session closes)."""
    from ort_layouts.engine import runner as _runner
    from ort_layouts.engine.providers import ProviderConfig

    real_make_session = _runner.make_session
    alive: list[object] = []
    events: list[str] = []

    class Tracked:
        def __init__(self, session: object, label: str) -> None:
            self.session, self.label = session, label
            events.append(f"open {label}")

        def __getattr__(self, name: str) -> object:
            return getattr(self.session, name)

        def __del__(self) -> None:
            events.append(f"close {self.label}")

    def make_session(model: onnx.ModelProto, config: ProviderConfig) -> object:
        label = "keep" if [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [1] \
            else f"batch{len(model.graph.node)}"
        session = Tracked(real_make_session(model, dataclasses.replace(config, name="CPUExecutionProvider")),
                          label)
        alive.append(session) if label == "keep" else None
        return session

    monkeypatch.setattr(_runner, "make_session", make_session)
    monkeypatch.setattr(_runner, "resolve_provider", lambda name: "FakeGpuExecutionProvider")
    monkeypatch.setattr(_runner, "device_description", lambda config: "fake")
    monkeypatch.setattr(_runner, "node_assignment", lambda session: {})
    cases = [Case("Transpose", dt, (2, 3), perm=(1, 0)) for dt in ("float32", "int32", "uint8")]
    alive.clear()
    results = _runner.run_cases(cases, provider="fake")
    assert [r.status for r in results] == [Status.PASS] * 3
    alive.clear()  # the runner's own reference is gone once it returned
    import gc
    gc.collect()
    assert events[0] == "open keep" and events[-1] == "close keep", events
    assert events.count("open keep") == 1


def test_a_scalar_expand_and_a_scalar_transpose_run_on_the_cpu_ep() -> None:
    """ONNX Expand takes a scalar (the DML EP sees it as sizes [1]); a rank-0 Transpose is valid
    ONNX (perm []) that DirectML cannot express: other EPs are compared with numpy's result."""
    expand, transpose = run_cases([Case("Expand", "float32", (), target_shape=(2, 3)),
                                   Case("Transpose", "float32", ())], provider="cpu")
    assert expand.status is Status.PASS and expand.element_count == 6
    assert transpose.status is Status.PASS and transpose.element_count == 1


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "8"])
@pytest.mark.usefixtures("no_work")
def test_a_bad_batch_size_is_refused_before_any_work(bad: Any) -> None:
    with pytest.raises(ArgumentError, match=f"batch_size {bad!r} is not valid; valid: an int >= 1"):
        _runner.run_cases([Case("Identity", "float32", (2,))], provider="cpu", batch_size=bad, jobs=2)


@pytest.mark.parametrize("bad", ["Transpose-float32-2x3-random-s0", None, {"op": "Transpose"}])
@pytest.mark.usefixtures("no_work")
def test_an_item_that_is_not_a_case_is_refused_before_any_work(bad: Any) -> None:
    expected = rf"cases\[1\] {re.escape(repr(bad))} is a {type(bad).__name__}, not a Case"
    with pytest.raises(ArgumentError, match=expected):
        _runner.run_cases([Case("Identity", "float32", (2,)), bad], provider="cpu", jobs=2)


@pytest.mark.parametrize("name", ["encode", "on_encoded", "on_result"])
@pytest.mark.usefixtures("no_work")
def test_a_callback_that_cannot_be_called_is_refused_before_any_work(name: str) -> None:
    given: dict[str, Any] = {"encode": len, "on_encoded": len} if name != "on_result" else {}
    given[name] = "not a function"
    with pytest.raises(ArgumentError,
                       match=f"{name} 'not a function' is not callable; valid: a function, or None"):
        _runner.run_cases([Case("Identity", "float32", (2,))], provider="cpu", jobs=2, **given)


@pytest.mark.parametrize("dtype", ["int4", "uint4"])
def test_a_4_bit_case_is_unsupported_with_its_reason_and_the_rest_run(dtype: str) -> None:
    """numpy has no 4-bit type and DirectML's layout operators take no 4-bit tensor: the case is
    not run, and says why, instead of failing as an error."""
    nibble = Case("Transpose", dtype, (2, 3), perm=(1, 0))
    plain = Case("Transpose", "int8", (2, 3), perm=(1, 0))
    first, second = run_cases([nibble, plain], provider="cpu")
    assert first.status is Status.UNSUPPORTED and not first.failed
    assert f"{dtype.upper()} data is not run: numpy has no 4-bit type" in first.message
    assert second.status is Status.PASS


def test_a_cpu_ep_batch_does_not_ask_where_its_nodes_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU EP has no other EP to put a node on: its batches pass without asking ONNX
    Runtime for the placement, and name the CPU EP as the node's."""

    def asked(session: object) -> dict[str, str]:
        raise AssertionError("node_assignment asked on the CPU EP")

    monkeypatch.setattr(_runner, "node_assignment", asked)
    cases = [Case("Transpose", "uint8", (2, 3), perm=(1, 0)), Case("Transpose", "uint8", (3, 4), perm=(1, 0))]
    results = run_cases(cases, provider="cpu", jobs=1)
    assert [r.status for r in results] == [Status.PASS, Status.PASS]
    assert {r.node_provider for r in results} == {"CPUExecutionProvider"}
