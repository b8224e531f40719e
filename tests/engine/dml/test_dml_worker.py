"""The real DirectML stack: ONNX Runtime's DirectML EP and DirectML.dll under Wine (vkd3d on
Vulkan). Skipped when the stack is not set up (``ort-layouts setup dml``);
``ORT_LAYOUTS_REQUIRE_DML=1`` turns the skip into a failure.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ort_layouts.engine.dml.client import (
    DmlRunError,
    DmlSessionCreationError,
    DmlWorker,
    DmlWorkerCrashedError,
)
from ort_layouts.engine.dml.stack import DmlStack

DML = "DmlExecutionProvider"
DTYPES = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def _stack_or_skip() -> DmlStack:
    stack = DmlStack.default()
    missing = stack.missing()
    if missing:
        reason = "the DirectML stack is not set up: " + "; ".join(missing)
        if os.environ.get("ORT_LAYOUTS_REQUIRE_DML"):
            pytest.fail(reason + " (and ORT_LAYOUTS_REQUIRE_DML is set)")
        pytest.skip(reason)
    return stack


@pytest.fixture(scope="module")
def worker() -> Iterator[DmlWorker]:
    w = DmlWorker(_stack_or_skip())
    w.start()
    yield w
    w.close()


def one_node(op: str, dtype: int, in_shape: list[int], out_shape: list[int], name: str = "node0",
             **attrs: object) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], name=name, **attrs)], "g",
        [helper.make_tensor_value_info("x", dtype, in_shape)],
        [helper.make_tensor_value_info("y", dtype, out_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def transpose(dtype: int, shape: list[int], perm: list[int]) -> onnx.ModelProto:
    return one_node("Transpose", dtype, shape, [shape[p] for p in perm], name="transpose0", perm=perm)


def random_array(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    """Finite values; every bit pattern for the integer types."""
    if dtype is np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return rng.integers(0, 256, size, dtype=np.uint8).view(dtype).reshape(shape)


def test_stack_info(worker: DmlWorker) -> None:
    info = worker.stack_info()
    assert info.ort_version == "1.24.4"
    assert info.directml_version == "1.15.4"
    assert info.d3d12.startswith("vkd3d")
    assert info.adapter_name
    assert info.wine_version.startswith("wine-")
    assert info.to_dict()["vulkan_icd"] == str(worker.stack.icd_json)


def test_transpose_float32_bit_exact(worker: DmlWorker) -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * np.float32(1.25)
    with worker.create_session(transpose(TensorProto.FLOAT, [2, 3, 4], [2, 0, 1])) as session:
        (y,) = session.run(None, {"x": x})
        assert session.node_assignment() == {"transpose0": DML}
    assert y.dtype == np.float32 and y.shape == (4, 2, 3)
    assert y.tobytes() == np.ascontiguousarray(x.transpose(2, 0, 1)).tobytes()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_transpose_every_type_bit_exact(worker: DmlWorker, dtype: type) -> None:
    rng = np.random.default_rng(19)
    x = random_array(rng, dtype, (3, 1, 4, 5))
    if dtype is np.int64:  # values outside the int32 range catch a 32-bit emulation
        x[0, 0, 0, :3] = [1 << 40, -(1 << 40), -1]
    code = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    with worker.create_session(transpose(code, [3, 1, 4, 5], [3, 1, 0, 2])) as session:
        (y,) = session.run(["y"], {"x": x})
        assert session.node_assignment() == {"transpose0": DML}
    assert y.dtype == np.dtype(dtype) and y.shape == (5, 1, 3, 4)
    assert y.tobytes() == np.ascontiguousarray(x.transpose(3, 1, 0, 2)).tobytes()


def test_zero_sized_and_rank_zero(worker: DmlWorker) -> None:
    with worker.create_session(transpose(TensorProto.FLOAT, [2, 0, 3], [2, 1, 0])) as session:
        (y,) = session.run(None, {"x": np.zeros((2, 0, 3), np.float32)})
    assert y.shape == (3, 0, 2)
    with worker.create_session(one_node("Identity", TensorProto.INT64, [], [])) as session:
        (y,) = session.run(None, {"x": np.array(-(1 << 40), np.int64)})
        assert session.node_assignment() == {"node0": DML}
    assert y.shape == () and int(y) == -(1 << 40)


def test_no_dml_kernel_fails_creation_instead_of_running_on_the_cpu(worker: DmlWorker) -> None:
    # The DML EP registers no Unique kernel: with CPU fallback off, ONNX Runtime must refuse.
    unique = one_node("Unique", TensorProto.FLOAT, [6], [None])
    with pytest.raises(DmlSessionCreationError, match="assigned to the default CPU EP") as e:
        worker.create_session(unique)
    assert e.value.code == 1  # ORT_FAIL
    with worker.create_session(unique, allow_cpu_fallback=True) as session:
        assert session.node_assignment() == {"node0": "CPUExecutionProvider"}
        (y,) = session.run(None, {"x": np.array([3, 1, 3, 2, 1, 0], np.float32)})
    assert y.tolist() == [0, 1, 2, 3]  # sorted (the default)


def test_negative_control_without_the_dml_ep(worker: DmlWorker) -> None:
    model = transpose(TensorProto.FLOAT, [2, 3], [1, 0])
    with pytest.raises(DmlSessionCreationError, match="fallback to CPU EP has been explicitly disabled"):
        worker.create_session(model, provider="CPU")
    with worker.create_session(model, provider="CPU", allow_cpu_fallback=True) as session:
        assert session.node_assignment() == {"transpose0": "CPUExecutionProvider"}


def test_provider_options(worker: DmlWorker) -> None:
    model = transpose(TensorProto.FLOAT, [2, 3], [1, 0])
    options = {"device_id": 0, "performance_preference": "high_performance", "disable_metacommands": True}
    with worker.create_session(model, provider_options=options, graph_optimization_level=99) as session:
        (y,) = session.run(None, {"x": np.ones((2, 3), np.float32)})
    assert y.shape == (3, 2)
    with pytest.raises(DmlSessionCreationError):
        worker.create_session(model, provider_options={"device_id": 1})  # one adapter: DXGI_ERROR_NOT_FOUND


def test_killed_or_hung_worker_is_restarted() -> None:
    with DmlWorker(_stack_or_skip(), timeout_s=5) as w:
        session = w.create_session(transpose(TensorProto.INT32, [2, 3], [1, 0]))
        x = np.arange(6, dtype=np.int32).reshape(2, 3)
        first = w.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)  # killed between calls: the next call starts a new worker
        deadline = time.monotonic() + 10  # the kill lands when the kernel gets to it: wait for it
        while w.running and time.monotonic() < deadline:
            time.sleep(0.05)
        assert session.run(None, {"x": x})[0].tolist() == x.T.tolist()
        assert w.pid != first and w.generation == 2

        second = w.pid
        assert second is not None
        os.kill(second, signal.SIGSTOP)  # hung during a call: that call fails, the next one works
        with pytest.raises(DmlWorkerCrashedError, match="did not answer"):
            session.run(None, {"x": x})
        assert not w.running
        assert session.run(None, {"x": x})[0].tolist() == x.T.tolist()
        assert w.generation == 3


def test_errors_are_ort_text_and_the_worker_lives_on(worker: DmlWorker) -> None:
    pid = worker.pid
    with pytest.raises(DmlSessionCreationError, match=r"(?i)protobuf|parse|load model") as e:
        worker.create_session(b"not an onnx model")
    assert e.value.code != 0
    with worker.create_session(transpose(TensorProto.FLOAT, [2, 3], [1, 0])) as session:
        with pytest.raises(DmlRunError, match="input name"):
            session.run(None, {"nope": np.zeros((2, 3), np.float32)})
        with pytest.raises(DmlRunError, match=r"(?i)dimensions|shape"):
            session.run(None, {"x": np.zeros((3, 3), np.float32)})
        assert session.run(None, {"x": np.ones((2, 3), np.float32)})[0].shape == (3, 2)
    assert worker.pid == pid
