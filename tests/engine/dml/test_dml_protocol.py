"""The DirectML worker client against a stand-in worker (fake_worker.py) that speaks the same
protocol and runs models on this Python's CPU ONNX Runtime: no Wine needed.

Also the stack's bookkeeping: where it lives, what is missing, the run environment.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import psutil
import pytest
from onnx import TensorProto, helper

from ort_layouts._errors import ArgumentError, DataTypeError, ProviderError
from ort_layouts.engine.dml import client as C
from ort_layouts.engine.dml.client import (
    DmlProtocolError,
    DmlRunError,
    DmlSessionCreationError,
    DmlWorker,
    DmlWorkerCrashedError,
)
from ort_layouts.engine.dml.stack import (
    SETUP_COMMAND,
    DmlStack,
    DmlStackInfo,
    DmlStackMissingError,
    directml_file_version,
    dml_home,
    run_environment,
)
from ort_layouts.engine.providers import ProviderOptionError

FAKE = [sys.executable, str(Path(__file__).with_name("fake_worker.py"))]
WORKER_C = Path(C.__file__).with_name("worker.c")

DTYPES = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def identity_model(names_types_shapes: list[tuple[str, int, list[int]]],
                   op: str = "Identity") -> onnx.ModelProto:
    nodes = [helper.make_node(op, [n], [f"{n}_out"], name=f"{n}_node") for n, _, _ in names_types_shapes]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in names_types_shapes],
        [helper.make_tensor_value_info(f"{n}_out", t, s) for n, t, s in names_types_shapes])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def random_array(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    if dtype is np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 256, size, dtype=np.uint8).view(dtype).reshape(shape)


@pytest.fixture(scope="module")
def worker() -> Iterator[DmlWorker]:
    w = DmlWorker(command=FAKE, timeout_s=20)
    w.start()
    yield w
    w.close()


def test_hello(worker: DmlWorker) -> None:
    assert worker.running
    assert worker.ort_version == "9.9.9-fake"
    assert worker.api_version == 24
    assert worker.generation >= 1


def test_info(worker: DmlWorker) -> None:
    info = worker.info()
    assert info.directml_version == "1.15.4+fake"
    assert info.shader_model == "5.1" and info.feature_level == "11_1"
    assert info.typed_uav_load_additional_formats is True
    (adapter,) = info.adapters
    assert (adapter.description, adapter.vendor_id, adapter.device_id) == ("Fake Adapter", 0x10005, 7)
    assert adapter.dedicated_video_memory == 1 << 30 and not adapter.software


@pytest.mark.parametrize("shape", [(2, 3, 4), (), (0,), (2, 0, 3), (1,)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_every_type_and_shape(worker: DmlWorker, dtype: type, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1234)
    code = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    x = random_array(rng, dtype, shape)
    with worker.create_session(identity_model([("x", code, list(shape))])) as session:
        (y,) = session.run(None, {"x": x})
    assert y.dtype == np.dtype(dtype) and y.shape == shape
    assert y.tobytes() == x.tobytes()


def test_many_inputs_and_chosen_outputs(worker: DmlWorker) -> None:
    model = identity_model([("a", TensorProto.FLOAT, [2]), ("b", TensorProto.INT64, [3]),
                            ("c", TensorProto.BOOL, [1, 2])])
    feeds = {"a": np.array([1.5, -2], np.float32), "b": np.array([1 << 40, -1, 7], np.int64),
             "c": np.array([[True, False]])}
    session = worker.create_session(model)
    assert session.input_names == ("a", "b", "c")
    assert session.output_names == ("a_out", "b_out", "c_out")
    outs = session.run(None, feeds)
    assert [o.tobytes() for o in outs] == [feeds[k].tobytes() for k in "abc"]
    c, a = session.run(["c_out", "a_out"], feeds)
    assert c.dtype == np.bool_ and a.dtype == np.float32
    assert session.node_assignment() == {"a_node": "DmlExecutionProvider", "b_node": "DmlExecutionProvider",
                                         "c_node": "DmlExecutionProvider"}
    assert session.node_op_types()["a_node"] == "Identity"
    assert session.create_seconds == pytest.approx(1e-6) and session.run_seconds == pytest.approx(2e-6)
    session.release()


def test_non_contiguous_and_big_endian_feeds(worker: DmlWorker) -> None:
    x = np.arange(24, dtype=">i4").reshape(4, 6)[:, ::2]
    with worker.create_session(identity_model([("x", TensorProto.INT32, [4, 3])])) as session:
        (y,) = session.run(None, {"x": x})
    assert y.dtype == np.dtype("<i4")
    np.testing.assert_array_equal(y, x)


def test_placement_not_recorded(worker: DmlWorker) -> None:
    with worker.create_session(identity_model([("x", TensorProto.FLOAT, [1])]), record_placement=False) as s:
        assert s.node_assignment() == {}
        assert s.placement_note


def test_session_creation_error_carries_ort_text(worker: DmlWorker) -> None:
    model = identity_model([("x", TensorProto.FLOAT, [3])], op="Unique")
    with pytest.raises(DmlSessionCreationError, match="fallback to CPU EP has been explicitly disabled") as e:
        worker.create_session(model)
    assert e.value.code == 1
    assert isinstance(e.value, ProviderError)
    pid = worker.pid
    worker.create_session(model, allow_cpu_fallback=True).release()  # the worker lives on
    assert worker.pid == pid


def test_run_error_leaves_the_worker_running(worker: DmlWorker) -> None:
    pid = worker.pid
    model = identity_model([("x", TensorProto.FLOAT, [1]), ("fail", TensorProto.FLOAT, [1])])
    session = worker.create_session(model)
    with pytest.raises(DmlRunError, match="fake Run failure") as e:
        session.run(None, {"x": np.zeros(1, np.float32), "fail": np.zeros(1, np.float32)})
    assert e.value.code == 2
    assert worker.pid == pid
    session.release()


def test_unsupported_feed_dtype_is_refused_before_sending(worker: DmlWorker) -> None:
    session = worker.create_session(identity_model([("x", TensorProto.FLOAT, [1])]))
    with pytest.raises(DataTypeError, match="numpy dtype <U1"):
        session.run(None, {"x": np.array(["a"])})
    session.release()
    with pytest.raises(ProviderError, match="released"):
        session.run(None, {"x": np.zeros(1, np.float32)})


def test_bad_arguments() -> None:
    w = DmlWorker(command=FAKE)
    with pytest.raises(ProviderError, match="optimization level 3"):
        w.create_session(b"", graph_optimization_level=3)
    with pytest.raises(ProviderError, match="'CUDA'"):
        w.create_session(b"", provider="CUDA")
    # each refused with the value and the valid ones, before a request: not struct's or str's error
    for kwargs, said in [({"graph_optimization_level": 1.0},
                          r"optimization level 1\.0 is not one of \[0, 1, 2, 99\]"),
                         ({"graph_optimization_level": True}, r"optimization level True"),
                         ({"log_severity": -1}, r"log severity -1 is not one of \[0, 1, 2, 3, 4\]"),
                         ({"log_severity": "3"}, r"log severity '3'"),
                         ({"session_config": {"session.intra_op.allow_spinning": 0}},
                          r"'session.intra_op.allow_spinning': 0 is not valid; "
                          r"valid: a str key and a str value")]:
        with pytest.raises(ProviderError, match=said):
            w.create_session(b"", **kwargs)  # type: ignore[arg-type]
    assert not w.running
    w.close()
    for kwargs in [{"timeout_s": "5"}, {"timeout_s": 0}, {"timeout_s": True}, {"start_timeout_s": math.nan}]:
        name, value = next(iter(kwargs.items()))
        with pytest.raises(ArgumentError, match=rf"DmlWorker {name}={re.escape(repr(value))} is not valid; "
                                                r"valid: a number of seconds > 0"):
            DmlWorker(command=FAKE, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("trigger", ["crash", "hang", "garbage", "short", "extra"])
def test_a_dead_worker_raises_then_restarts(trigger: str) -> None:
    with DmlWorker(command=FAKE, timeout_s=3) as w:
        model = identity_model([("x", TensorProto.FLOAT, [2]), (trigger, TensorProto.FLOAT, [1])])
        session = w.create_session(model)
        feeds = {"x": np.array([1, 2], np.float32), trigger: np.zeros(1, np.float32)}
        with pytest.raises(DmlWorkerCrashedError) as e:
            session.run(["x_out"], feeds)
        if trigger == "crash":
            assert e.value.returncode == 3
            assert "crashing as asked" in e.value.stderr_tail
        if trigger in ("garbage", "short", "extra"):
            assert isinstance(e.value, DmlProtocolError)
        assert not w.running
        # the next call starts a new worker and makes the session again there
        del feeds[trigger]
        good = w.create_session(identity_model([("x", TensorProto.FLOAT, [2])]))
        assert w.generation == 2
        assert good.run(None, feeds)[0].tolist() == [1, 2]


def test_a_worker_killed_between_calls_is_replaced() -> None:
    with DmlWorker(command=FAKE) as w:
        session = w.create_session(identity_model([("x", TensorProto.FLOAT, [2])]))
        first = w.pid
        w.restart()
        assert w.pid != first and w.generation == 2
        assert session.run(None, {"x": np.ones(2, np.float32)})[0].tolist() == [1, 1]


def test_a_restart_by_another_thread_mid_run_never_runs_its_session_by_this_one_s_id() -> None:
    """Each worker numbers its sessions from 1: a thread that restarts the worker and makes a
    session there between another thread's check of the worker and its RUN must not get that
    RUN (it would run the other model on these inputs); it waits until the RUN is answered."""
    with DmlWorker(command=FAKE, timeout_s=20) as w:
        x = np.array([1, 2], np.float32)
        mine = w.create_session(identity_model([("x", TensorProto.FLOAT, [2])]))
        theirs: list[np.ndarray] = []

        def other_thread() -> None:
            w.restart()
            theirs.extend(w.create_session(identity_model([("x", TensorProto.FLOAT, [2])], op="Neg"))
                          .run(None, {"x": x}))

        real = w._request
        others: list[threading.Thread] = []

        def request(op: int, payload: bytes, **kwargs: object) -> object:
            if op == C.OP_RUN and not others:  # the other thread runs as this RUN is about to be sent
                others.append(threading.Thread(target=other_thread))
                others[0].start()
                others[0].join(timeout=3)  # it finishes meanwhile unless the RUN holds the worker
            return real(op, payload, **kwargs)

        w._request = request  # type: ignore[method-assign]
        (out,) = mine.run(None, {"x": x})
        others[0].join()
        assert out.tolist() == [1, 2]  # Identity's, not the other thread's Neg
        assert theirs[0].tolist() == [-1, -2]


def test_a_run_whose_worker_died_since_its_check_raises_and_starts_none() -> None:
    """A RUN names a session of the worker that made it: when that worker is gone as the RUN
    is sent, the RUN is not sent to a new worker (which has no such session, or another's)."""
    with DmlWorker(command=FAKE, timeout_s=20) as w:
        session = w.create_session(identity_model([("x", TensorProto.FLOAT, [2])]))
        w._kill()
        with pytest.raises(DmlWorkerCrashedError, match="is not running"):
            w._request(C.OP_RUN, b"\x01\x00\x00\x00")
        assert not w.running and w.generation == 1
        assert session.run(None, {"x": np.ones(2, np.float32)})[0].tolist() == [1, 1]  # made again
        assert w.generation == 2


def test_stack_info_from_worker(worker: DmlWorker, tmp_path: Path) -> None:
    info = DmlStackInfo.from_worker(DmlStack(tmp_path), worker.info())
    assert info.directml_version == "1.15.4" and info.directml_file_version == "1.15.4+fake"
    assert info.adapter_name == "Fake Adapter" and info.adapter_vendor_id == 0x10005
    d = info.to_dict()
    assert d["ort_version"] == "9.9.9-fake" and d["shader_model"] == "5.1"
    assert "DirectML 1.15.4" in str(info)


# ---- the protocol is documented the same way on both sides ------------------------------------
def _ops(text: str, pattern: str) -> dict[str, int]:
    return {name: int(num) for num, name in re.findall(pattern, text)}


def test_protocol_doc_in_sync() -> None:
    source = WORKER_C.read_text()
    expected = {"HELLO": 1, "INFO": 2, "CREATE": 3, "RUN": 4, "RELEASE": 5, "QUIT": 6}
    assert _ops(source, r"\* op (\d) (\w+)") == expected  # the comment at the top of worker.c
    assert _ops(C.__doc__ or "", r"\n(\d)\s+(\w+)\s") == expected  # the client's docstring table
    assert {name: int(n) for name, n in re.findall(r"OP_(\w+) = (\d)", source)} == expected
    assert {name: getattr(C, f"OP_{name}") for name in expected} == expected
    assert f"#define PROTOCOL_VERSION {C.PROTOCOL_VERSION}u" in source
    assert f"#define HELLO_MAGIC 0x{C.HELLO_MAGIC:08X}u" in source


# ---- the stack's bookkeeping ------------------------------------------------------------------
def test_home_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ORT_LAYOUTS_DML_HOME", str(tmp_path / "h"))
    assert dml_home() == tmp_path / "h"
    monkeypatch.delenv("ORT_LAYOUTS_DML_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert dml_home() == tmp_path / "cache" / "ort_layouts" / "dml"


def test_a_relative_home_or_icd_is_taken_from_the_working_directory_and_a_relative_xdg_ignored(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The worker runs in the stack's folder, and Wine refuses a relative prefix: a relative
    ORT_LAYOUTS_DML_HOME, --home or Vulkan ICD names a path from the working directory; a
    relative XDG_CACHE_HOME is ignored (the XDG Base Directory spec: "If an implementation
    encounters a relative path in any of these variables it should consider the path invalid
    and ignore it")."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ORT_LAYOUTS_DML_HOME", "h")
    assert dml_home() == tmp_path / "h"
    monkeypatch.delenv("ORT_LAYOUTS_DML_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    assert dml_home() == Path.home() / ".cache" / "ort_layouts" / "dml"
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", "icd.json")
    stack = DmlStack.default(home="stack")
    assert stack.home == tmp_path / "stack" and stack.vk_icd == tmp_path / "icd.json"
    assert DmlStack.default(home="stack", vk_icd="other.json").vk_icd == tmp_path / "other.json"


def test_missing_parts_name_the_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ORT_LAYOUTS_DML_VK_ICD", raising=False)
    stack = DmlStack.default(home=tmp_path)
    missing = stack.missing()
    text = "\n".join(missing)
    for part in ("onnxruntime.dll", "DirectML.dll", "Mesa 25 lavapipe", "Wine prefix"):
        assert part in text
    assert all(SETUP_COMMAND in line or "apt-get install" in line for line in missing)
    assert "--mesa 22" in "\n".join(DmlStack.default(home=tmp_path, mesa="22").missing())
    with pytest.raises(DmlStackMissingError) as e:
        DmlWorker(stack).start()
    assert e.value.missing == missing or e.value.missing
    with pytest.raises(ProviderError, match="choices"):
        DmlStack.default(home=tmp_path, mesa="24")


def test_run_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    icd = tmp_path / "nvidia_icd.json"
    icd.write_text('{"ICD": {"library_path": "libGLX_nvidia.so.0"}}')
    monkeypatch.setenv("ORT_LAYOUTS_DML_VK_ICD", str(icd))
    stack = DmlStack.default(home=tmp_path)
    env = run_environment(stack, ":7")
    assert env["VK_ICD_FILENAMES"] == str(icd) and env["DISPLAY"] == ":7"
    assert env["WINEPREFIX"] == str(tmp_path / "prefix") and env["WINEDEBUG"] == "-all"
    assert env["VKD3D_CONFIG"] == "virtual_heaps" and env["WINE_D3D_CONFIG"] == "renderer=vulkan"
    monkeypatch.delenv("ORT_LAYOUTS_DML_VK_ICD")
    assert DmlStack.default(home=tmp_path, mesa="22").icd_json == tmp_path / "mesa22" / "lvp_icd.json"


def test_the_run_environment_drops_what_would_change_vkd3d_or_the_vulkan_loader(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """VKD3D_DISABLE_EXTENSIONS=VK_EXT_descriptor_indexing in the user's shell made every DirectML
    run crash, and a report would not have said why: the worker runs without such variables
    (a user's VKD3D_CONFIG too), and keeps a relocated Wine's own."""
    for name, value in {"VKD3D_DISABLE_EXTENSIONS": "VK_EXT_descriptor_indexing",
                        "VKD3D_CONFIG": "no_upload_hvv", "VKD3D_VULKAN_DEVICE": "1",
                        "VK_LOADER_DRIVERS_SELECT": "*nvidia*",
                        "VK_INSTANCE_LAYERS": "VK_LAYER_KHRONOS_validation", "VK_ADD_DRIVER_FILES": "/x.json",
                        "WINELOADER": "/opt/wine/bin/wine", "LD_LIBRARY_PATH": "/opt/wine/lib"}.items():
        monkeypatch.setenv(name, value)
    env = run_environment(DmlStack.default(home=tmp_path), None)
    assert env["VKD3D_CONFIG"] == "virtual_heaps"
    assert not {"VKD3D_DISABLE_EXTENSIONS", "VKD3D_VULKAN_DEVICE", "VK_LOADER_DRIVERS_SELECT",
                "VK_INSTANCE_LAYERS", "VK_ADD_DRIVER_FILES"} & set(env)
    assert env["WINELOADER"] == "/opt/wine/bin/wine" and env["LD_LIBRARY_PATH"] == "/opt/wine/lib"


def test_directml_file_version_reads_the_version_resource(tmp_path: Path) -> None:
    key = "FileVersion".encode("utf-16-le") + b"\0\0"
    blob = b"MZ" + b"\0" * 5 + key
    blob += b"\0" * ((-len(blob)) % 4) + "1.15.4+abc".encode("utf-16-le") + b"\0\0" + b"junk"
    (tmp_path / "DirectML.dll").write_bytes(blob)
    assert directml_file_version(tmp_path / "DirectML.dll") == "1.15.4+abc"
    assert directml_file_version(tmp_path / "absent.dll") == ""


@pytest.mark.parametrize("where", ["before the reply", "inside the reply"])
def test_a_request_interrupted_halfway_stops_the_worker_and_the_next_gets_its_own_reply(
        where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (or an alarm, a test's timeout) while a reply is read: a reply left in the pipe
    would answer the next request, whose caller would take another session's outputs as its own."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with DmlWorker(command=FAKE, timeout_s=20) as w:
        transpose = w.create_session(identity_model([("x", TensorProto.FLOAT, [2, 3])], op="Transpose"))
        identity = w.create_session(identity_model([("x", TensorProto.FLOAT, [2, 3])]))
        real = w._read_exact
        reads: list[int] = []

        def interrupted(n: int, deadline: float) -> bytes:
            reads.append(n)
            if where == "before the reply" or len(reads) == 2:
                raise KeyboardInterrupt
            return real(n, deadline)

        monkeypatch.setattr(w, "_read_exact", interrupted)
        with pytest.raises(KeyboardInterrupt):
            transpose.run(None, {"x": x})
        monkeypatch.undo()
        assert not w.running  # stopped, not left with a reply in its pipe
        assert identity.run(None, {"x": x})[0].tobytes() == x.tobytes()
        assert transpose.run(None, {"x": x})[0].tobytes() == np.ascontiguousarray(x.T).tobytes()
        assert w.generation == 2


@pytest.mark.parametrize(("trigger", "what"), [
    ("short", "sent a reply that ended early: wanted 4 bytes at offset 8 of 8"),
    ("extra", "sent a reply with 1 bytes left over"),
], ids=["ends-early", "bytes-left-over"])
def test_a_reply_whose_payload_does_not_parse_stops_the_worker(trigger: str, what: str) -> None:
    """A reply with a good header whose payload is not what the protocol says: the reader stops
    the worker, as a crash does, with the same error (its exit status unknown, its last words);
    the next request starts a new worker."""
    with DmlWorker(command=FAKE, timeout_s=20) as w:
        session = w.create_session(identity_model([("x", TensorProto.FLOAT, [1]),
                                                   (trigger, TensorProto.FLOAT, [1])]))
        first = w.pid
        feeds = {"x": np.ones(1, np.float32), trigger: np.zeros(1, np.float32)}
        with pytest.raises(DmlProtocolError) as caught:
            session.run(["x_out"], feeds)
        assert str(caught.value) == f"the DirectML worker {what}"
        assert caught.value.returncode is None and caught.value.code == 101
        assert not w.running and first is not None
        assert w.info().ort_version == "9.9.9-fake" and w.pid != first and w.generation == 2


def test_a_worker_of_another_protocol_is_stopped() -> None:
    w = DmlWorker(command=FAKE, env={"FAKE_WORKER_PROTOCOL": "2"})
    with pytest.raises(DmlProtocolError, match=r"^the DirectML worker speaks protocol 2; this client "
                                               r"speaks 1 \(rebuild it"):
        w.start()
    assert not w.running
    w.close()


def test_wine_s_libraries_are_looked_for_beside_the_wine_that_runs_first(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A Wine in /opt ahead of the system's on PATH: the vkd3d a report names must be that Wine's,
    not the system Wine's beside it."""
    from ort_layouts.engine.dml import stack as S

    (tmp_path / "opt" / "bin").mkdir(parents=True)
    wine = tmp_path / "opt" / "bin" / "wine"
    wine.write_text("#!/bin/sh\necho wine-9.0\n")
    wine.chmod(0o755)
    libs = tmp_path / "opt" / "lib" / "wine"
    libs.mkdir(parents=True)
    monkeypatch.delenv("WINELOADER", raising=False)
    monkeypatch.setenv("PATH", f"{wine.parent}:{os.environ['PATH']}")
    assert S._wine_lib_dirs()[0] == libs


def test_the_hang_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """ORT_LAYOUTS_DML_TIMEOUT_S sets how long a request may take: a hang is found after it."""
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", "1.5")
    with DmlWorker(command=FAKE) as w:
        assert w.timeout_s == 1.5
        model = identity_model([("x", TensorProto.FLOAT, [2]), ("hang", TensorProto.FLOAT, [1])])
        session = w.create_session(model)
        start = time.monotonic()
        with pytest.raises(DmlWorkerCrashedError):
            session.run(["x_out"], {"x": np.array([1, 2], np.float32), "hang": np.zeros(1, np.float32)})
        assert 1.5 <= time.monotonic() - start < 60
    monkeypatch.delenv("ORT_LAYOUTS_DML_TIMEOUT_S")
    assert DmlWorker(command=FAKE).timeout_s == 300


@pytest.mark.parametrize("text", ["abc", "0", "-1", "inf", "nan", "1e400"])
def test_a_bad_hang_timeout_is_named_before_any_worker_starts(monkeypatch: pytest.MonkeyPatch,
                                                               text: str) -> None:
    monkeypatch.setenv("ORT_LAYOUTS_DML_TIMEOUT_S", text)
    named = (rf"ORT_LAYOUTS_DML_TIMEOUT_S='{re.escape(text)}' is not valid; "
             r"valid: a number of seconds > 0 \(unset: 300\)")
    with pytest.raises(ProviderOptionError, match=named) as caught:
        DmlWorker(command=FAKE)
    assert isinstance(caught.value, ValueError)  # the user's input, not a stack that cannot run


def _hung_at_quit() -> DmlWorker:
    worker = DmlWorker(command=FAKE, timeout_s=20, env={"FAKE_WORKER_QUIT": "hang"})
    worker.start()
    return worker


def test_a_worker_that_hangs_as_it_quits_is_killed_after_the_quit_timeout() -> None:
    """close asks the worker to quit and waits QUIT_TIMEOUT_S (5 s), not the 10 s for the reply
    and 10 s more for the exit it waited before; the process is gone after it."""
    from ort_layouts.engine.session_process import QUIT_TIMEOUT_S

    worker = _hung_at_quit()
    proc = worker._proc
    assert proc is not None
    start = time.monotonic()
    worker.close()
    took = time.monotonic() - start
    assert proc.poll() is not None and not worker.running
    assert QUIT_TIMEOUT_S - 0.5 <= took < QUIT_TIMEOUT_S + 3, took


def test_a_hurried_stop_kills_a_worker_that_hangs_as_it_quits_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated Ctrl-C or SIGTERM (ort_layouts._startup.hurry) makes close kill the worker
    without waiting, also when it comes while close waits."""
    import threading

    from ort_layouts import _startup

    event = threading.Event()
    monkeypatch.setattr(_startup, "_HURRY", event)
    worker = _hung_at_quit()
    proc = worker._proc
    assert proc is not None
    threading.Timer(0.5, _startup.hurry).start()  # while close waits on the hung QUIT
    start = time.monotonic()
    worker.close()
    took = time.monotonic() - start
    assert proc.poll() is not None
    assert 0.4 <= took < 2, took
    worker = _hung_at_quit()  # hurried before close: no wait at all
    start = time.monotonic()
    worker.close()
    assert time.monotonic() - start < 1


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="no Xvfb here")
def test_the_x_server_ends_with_the_process_that_started_it_even_when_killed() -> None:
    """The Xvfb for Wine runs in a session of its own (a Ctrl-C to the terminal's group must not
    end it before the worker): it must still end when the process that started it is killed
    (SIGKILL, the OOM killer), which runs no stop, and when it is stopped."""
    code = ("import sys, time\nfrom ort_layouts.engine.dml.client import _Xvfb\n"
            "x = _Xvfb()\nprint(x.proc.pid, flush=True)\ntime.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[3]),
                                                os.environ.get("PYTHONPATH", "")])))
    assert parent.stdout is not None
    session = int(parent.stdout.readline())
    servers = _x_servers(session)
    assert len(servers) == 1
    parent.kill()
    parent.wait()
    _, alive = psutil.wait_procs(servers, timeout=10)
    assert alive == []

    x = C._Xvfb()
    servers = _x_servers(x.proc.pid)
    assert len(servers) == 1
    x.stop()
    assert not x.alive()
    _, alive = psutil.wait_procs(servers, timeout=10)
    assert alive == []


def _x_servers(session: int) -> list[psutil.Process]:
    """The Xvfb processes of one session."""
    found = []
    for p in psutil.process_iter(["name"]):
        with contextlib.suppress(psutil.Error, OSError):
            if p.info["name"] == "Xvfb" and os.getsid(p.pid) == session:
                found.append(p)
    return found
