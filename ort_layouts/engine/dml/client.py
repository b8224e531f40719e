"""The Python side of the DirectML worker: :class:`DmlWorker` and :class:`DmlSession`.

One :class:`DmlWorker` is one Wine process (``ort_layouts_dml_worker.exe``, from ``worker.c``)
that serves many sessions; starting Wine costs seconds, a session tens of milliseconds. The
worker runs under an Xvfb display the client starts (and stops on :meth:`DmlWorker.close`), with
the environment of :func:`~ort_layouts.engine.dml.stack.run_environment`.

Errors (all :class:`~ort_layouts._errors.ProviderError`):

- :class:`DmlSessionCreationError`: ONNX Runtime refused the session; the message is ONNX
  Runtime's own text (with CPU fallback off, an unsupported node says so here).
- :class:`DmlRunError`: ``Run`` failed, or the request was refused; the worker lives on.
- :class:`DmlWorkerCrashedError`: the worker died or stopped answering. The request in flight is
  lost; the next call starts a new worker, and a :class:`DmlSession` re-creates itself there.
- :class:`~ort_layouts.engine.dml.stack.DmlStackMissingError`: the stack is not set up.

Protocol (version 1; keep in sync with the comment at the top of ``worker.c``)
------------------------------------------------------------------------------
Requests go to the worker's stdin, replies come from its stdout; both binary, little-endian.
Fields: ``u32``, ``u64``, ``i64``; ``str`` = u32 byte length + UTF-8 bytes; ``blob`` = u64 byte
length + bytes; ``pairs`` = u32 count + count x (str key, str value).

- Request: u32 op, u64 payload length, payload.
- Reply: u32 status (0 ok, 1 error), u64 payload length, payload. An error payload is u32 code
  (ONNX Runtime's OrtErrorCode, or 100 bad request, 101 worker failure) + str message.

====== ========== ===========================================================================
op     name       request -> reply
====== ========== ===========================================================================
1      HELLO      nothing -> u32 magic 0x57444C4F ("OLDW"), u32 protocol version, str ORT
                  version, u32 ORT C API version in use
2      INFO       u32 adapter index for the D3D12 probe -> str ORT version, str ORT build info,
                  str DirectML.dll path, str DirectML.dll file version, str D3D12 probe error,
                  str shader model, str feature level, u32 typed UAV loads (0/1/2 unknown),
                  u32 n adapters, n x (str description, u32 vendor id, u32 device id, u32
                  subsystem id, u32 revision, u64 dedicated video memory, u64 dedicated system
                  memory, u64 shared system memory, u32 flags)
3      CREATE     str provider ("DML" or "CPU"), u32 graph optimization level (0/1/2/99),
                  u32 flags (1 allow CPU fallback, 2 record placement, 4 keep DML graph fusion),
                  u32 log severity, pairs DML provider options, pairs extra session config
                  entries, blob model -> u32 session id, u64 creation ns, u32 n + n x str input
                  names, u32 n + n x str output names, str placement note ("" when recorded),
                  u32 n + n x (str node name, str op type, str EP name)
4      RUN        u32 session id, u32 n inputs, n x (str name, u32 element type, u32 rank, rank x
                  i64 dims, blob data), u32 n + n x str output names (0: all) -> u64 run ns,
                  u32 n outputs, n x (str name, u32 element type, u32 rank, rank x i64 dims,
                  blob data)
5      RELEASE    u32 session id -> nothing
6      QUIT       nothing -> nothing; the worker exits
====== ========== ===========================================================================

Element types are ONNX ``TensorProto.DataType`` codes; data is C order, little-endian, bool one
byte per element.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import os
import select
import shutil
import signal
import struct
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ort_layouts._errors import ArgumentError, DataTypeError, ProviderError
from ort_layouts.engine.dml.stack import DmlStack, DmlStackInfo, run_environment, worker_timeout_s
from ort_layouts.engine.session_process import await_exit

__all__ = [
    "AdapterInfo",
    "DmlProtocolError",
    "DmlRunError",
    "DmlSession",
    "DmlSessionCreationError",
    "DmlWorker",
    "DmlWorkerCrashedError",
    "DmlWorkerError",
    "WorkerInfo",
    "GRAPH_OPTIMIZATION_LEVELS",
    "ONNX_TO_NUMPY",
]

PROTOCOL_VERSION = 1
HELLO_MAGIC = 0x57444C4F
OP_HELLO, OP_INFO, OP_CREATE, OP_RUN, OP_RELEASE, OP_QUIT = 1, 2, 3, 4, 5, 6
# the requests that start a worker when none runs; a RUN or RELEASE names a session of the
# worker that made it, which a new worker does not have (or has another thread's by that id)
_STARTS_WORKER = frozenset({OP_INFO, OP_CREATE})
FLAG_ALLOW_CPU_FALLBACK, FLAG_RECORD_PLACEMENT, FLAG_KEEP_FUSION = 1, 2, 4
GRAPH_OPTIMIZATION_LEVELS = (0, 1, 2, 99)  # ORT_DISABLE_ALL, BASIC, EXTENDED, ALL

# ONNX TensorProto.DataType -> numpy dtype (little-endian)
ONNX_TO_NUMPY: dict[int, np.dtype[Any]] = {
    1: np.dtype("<f4"), 2: np.dtype("u1"), 3: np.dtype("i1"), 4: np.dtype("<u2"), 5: np.dtype("<i2"),
    6: np.dtype("<i4"), 7: np.dtype("<i8"), 9: np.dtype("?"), 10: np.dtype("<f2"), 11: np.dtype("<f8"),
    12: np.dtype("<u4"), 13: np.dtype("<u8"), 14: np.dtype("<c8"), 15: np.dtype("<c16"),
}
_NUMPY_TO_ONNX: dict[tuple[str, int], int] = {(d.kind, d.itemsize): code for code, d in ONNX_TO_NUMPY.items()}


# ---- errors -----------------------------------------------------------------------------------
class DmlWorkerError(ProviderError):
    """The worker refused a request. ``code`` is ONNX Runtime's OrtErrorCode (100: a bad request,
    101: a failure in the worker itself)."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class DmlSessionCreationError(DmlWorkerError):
    """ONNX Runtime refused to create the session; the message is its own text."""


class DmlRunError(DmlWorkerError):
    """``Run`` failed (the message is ONNX Runtime's text) or the feeds were refused."""


class DmlWorkerCrashedError(DmlWorkerError):
    """The worker process died or stopped answering; the next call starts a new one.

    Attributes:
        returncode: the process's exit status (None when it was killed for not answering).
        stderr_tail: the last lines it wrote to stderr.
    """

    def __init__(self, message: str, *, returncode: int | None = None, stderr_tail: str = "") -> None:
        super().__init__(message + (f"; its last words: {stderr_tail}" if stderr_tail else ""), 101)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class DmlWorkerTimeoutError(DmlWorkerCrashedError):
    """The worker did not answer within its timeout (a hang: a GPU or driver that stopped, a
    dispatch that never ends); it was stopped as if it had crashed."""


class DmlProtocolError(DmlWorkerCrashedError):
    """The worker's reply was not what the protocol says (the stream is out of step); the worker
    is stopped as if it had crashed."""


# ---- wire format ------------------------------------------------------------------------------
class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def u32(self, v: int) -> _Writer:
        self.parts.append(struct.pack("<I", v))
        return self

    def u64(self, v: int) -> _Writer:
        self.parts.append(struct.pack("<Q", v))
        return self

    def i64s(self, vs: Sequence[int]) -> _Writer:
        self.parts.append(struct.pack(f"<{len(vs)}q", *vs))
        return self

    def text(self, s: str) -> _Writer:
        b = s.encode("utf-8")
        self.parts.append(struct.pack("<I", len(b)))
        self.parts.append(b)
        return self

    def blob(self, b: bytes) -> _Writer:
        self.parts.append(struct.pack("<Q", len(b)))
        self.parts.append(b)
        return self

    def pairs(self, items: Mapping[str, str]) -> _Writer:
        self.u32(len(items))
        for k, v in items.items():
            self.text(k).text(v)
        return self

    def done(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    """A reply's payload, read field by field. ``fail(what)`` stops the worker that sent a reply
    that is not what the protocol says and makes the :class:`DmlProtocolError` to raise, "the
    DirectML worker {what}" (:meth:`DmlWorker._crashed`)."""

    def __init__(self, data: bytes, fail: Callable[[str], DmlWorkerCrashedError]) -> None:
        self.data = memoryview(data)
        self.at = 0
        self.fail = fail

    def _take(self, n: int) -> memoryview:
        if self.at + n > len(self.data):
            raise self.fail(f"sent a reply that ended early: wanted {n} bytes at offset {self.at} "
                            f"of {len(self.data)}")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def u32(self) -> int:
        return int(struct.unpack("<I", self._take(4))[0])

    def u64(self) -> int:
        return int(struct.unpack("<Q", self._take(8))[0])

    def i64s(self, n: int) -> tuple[int, ...]:
        return tuple(struct.unpack(f"<{n}q", self._take(8 * n)))

    def text(self) -> str:
        return bytes(self._take(self.u32())).decode("utf-8", errors="replace")

    def blob(self) -> bytes:
        return bytes(self._take(self.u64()))

    def end(self) -> None:
        if self.at != len(self.data):
            raise self.fail(f"sent a reply with {len(self.data) - self.at} bytes left over")


def encode_tensor(w: _Writer, name: str, value: Any) -> None:
    """Append one RUN input (name, element type, dims, data) for a numpy array."""
    arr = np.asarray(value)
    code = _NUMPY_TO_ONNX.get((arr.dtype.kind, arr.dtype.itemsize))
    if code is None:
        raise DataTypeError(f"input {name!r} has numpy dtype {arr.dtype}, which has no ONNX element type "
                            f"here; supported: {sorted({str(d) for d in ONNX_TO_NUMPY.values()})}")
    # little-endian, C order (tobytes also keeps rank 0, which ascontiguousarray would make rank 1)
    data = arr.astype(ONNX_TO_NUMPY[code], copy=False).tobytes(order="C")
    w.text(name).u32(code).u32(arr.ndim).i64s(arr.shape).blob(data)


def decode_tensor(r: _Reader) -> tuple[str, np.ndarray]:
    """Read one RUN output back into (name, numpy array of its dtype and shape)."""
    name = r.text()
    code = r.u32()
    dims = r.i64s(r.u32())
    data = r.blob()
    dtype = ONNX_TO_NUMPY.get(code)
    if dtype is None:
        raise DataTypeError(f"output {name!r} has ONNX element type {code}, which has no numpy dtype here")
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    if len(data) != count * dtype.itemsize:
        raise r.fail(f"sent output {name!r} with {len(data)} bytes for shape {list(dims)} of {dtype}")
    return name, np.frombuffer(data, dtype=dtype).reshape(dims).copy()


# ---- what INFO says ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class AdapterInfo:
    """One DXGI adapter as the worker sees it (under Wine: the Vulkan device behind vkd3d)."""

    description: str
    vendor_id: int
    device_id: int
    subsys_id: int
    revision: int
    dedicated_video_memory: int
    dedicated_system_memory: int
    shared_system_memory: int
    flags: int

    @property
    def software(self) -> bool:
        return bool(self.flags & 2)  # DXGI_ADAPTER_FLAG_SOFTWARE


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """The worker's INFO answer."""

    ort_version: str
    ort_build_info: str
    directml_path: str
    directml_version: str
    d3d12_error: str
    shader_model: str
    feature_level: str
    typed_uav_load_additional_formats: bool | None
    adapters: tuple[AdapterInfo, ...]


# ---- Xvfb -------------------------------------------------------------------------------------
# Xvfb under a shell that ends it when the pipe on its standard input closes: when stop()
# closes this process's end, and when this process ends without stopping it (SIGKILL, the OOM
# killer), which an Xvfb in a session of its own would otherwise outlive. The shell lives as
# long as Xvfb (it waits for it), and a TERM to it ends Xvfb too.
_XVFB_WATCH = ("exec 3<&0; Xvfb \"$@\" & x=$!; trap 'kill $x; wait $x; exit 143' TERM; "
               "(read _ <&3; kill $x) 2>/dev/null & wait $x")


class _Xvfb:
    """An Xvfb on a free display number (``-displayfd``), for Wine's Vulkan; it ends with this
    process (:data:`_XVFB_WATCH`). ``proc`` is the shell that watches it."""

    def __init__(self, timeout_s: float = 30.0) -> None:
        read_fd, write_fd = os.pipe()
        watch_fd, self._lifeline = os.pipe()  # the shell's standard input; only this process writes
        try:
            self.proc = subprocess.Popen(
                ["sh", "-c", _XVFB_WATCH, "sh", "-displayfd", str(write_fd), "-nolisten", "tcp",
                 "-screen", "0", "640x480x24"],
                pass_fds=(write_fd,), stdin=watch_fd, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            for fd in (read_fd, write_fd, self._lifeline):
                os.close(fd)
            raise ProviderError(f"cannot start Xvfb: {e}") from e
        finally:
            os.close(watch_fd)
        os.close(write_fd)
        text = b""
        deadline = time.monotonic() + timeout_s
        try:
            while not text.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                    raise ProviderError(f"Xvfb did not report a display in {timeout_s:.0f} s")
                chunk = os.read(read_fd, 64)
                if not chunk:
                    raise ProviderError(f"Xvfb exited (status {self.proc.wait()}) before reporting a display")
                text += chunk
        except BaseException:
            self.stop()
            raise
        finally:
            os.close(read_fd)
        self.display = ":" + text.decode().strip()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """End it (its watching shell killed as :func:`await_exit` says)."""
        with contextlib.suppress(OSError):  # (closed already: stopped before)
            os.close(self._lifeline)
        if self.proc.poll() is None:
            self.proc.terminate()
            await_exit([self.proc])


def _stop_processes(procs: list[Any]) -> None:
    """Finalizer: end what a forgotten DmlWorker left running (worker first, then Xvfb)."""
    for p in procs:
        with contextlib.suppress(Exception):
            if isinstance(p, _Xvfb):
                p.stop()
            elif p.poll() is None:
                p.kill()
                p.wait(timeout=10)


# ---- the worker -------------------------------------------------------------------------------
class DmlWorker:
    """One long-lived worker process (one Wine start) that serves many sessions.

    Args:
        stack: the stack to run (default :meth:`DmlStack.default`).
        timeout_s: how long one request may take before the worker counts as hung (and is
            killed: :class:`DmlWorkerCrashedError`); None: ``$ORT_LAYOUTS_DML_TIMEOUT_S``, else
            300 s (:func:`~ort_layouts.engine.dml.stack.worker_timeout_s`).
        start_timeout_s: how long starting Wine and the first reply may take.
        env: extra environment variables for the worker (e.g. ``{"WINEDEBUG": "err+all"}``).
        command: run this program instead of Wine with the worker (no stack, no Xvfb): a
            stand-in that speaks the same protocol.

    The worker starts on first use (or :meth:`start`); :meth:`close` (or leaving a ``with``
    block) ends it and its Xvfb. After a crash the next call starts a new one
    (:attr:`generation` counts the starts).
    """

    def __init__(self, stack: DmlStack | None = None, *, timeout_s: float | None = None,
                 start_timeout_s: float = 120.0,
                 env: Mapping[str, str] | None = None, command: Sequence[str] | None = None) -> None:
        for name, value in (("timeout_s", timeout_s), ("start_timeout_s", start_timeout_s)):
            if value is not None and (type(value) not in (int, float) or not 0 < value < math.inf):
                raise ArgumentError(f"DmlWorker {name}={value!r} is not valid; valid: a number of seconds > 0"
                                    + (" or None (the default)" if name == "timeout_s" else ""))
        self.stack = stack if stack is not None or command is not None else DmlStack.default()
        self.timeout_s = timeout_s if timeout_s is not None else worker_timeout_s()
        self.start_timeout_s = start_timeout_s
        self._extra_env = dict(env or {})
        self._command = list(command) if command is not None else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._xvfb: _Xvfb | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=400)
        self._lock = threading.RLock()
        self._procs: list[Any] = []
        self._finalizer = weakref.finalize(self, _stop_processes, self._procs)
        self.generation = 0
        #: whether a restart has cured a failed device creation (set False when it did not)
        self.device_restarts_help = True
        self.ort_version = ""
        self.api_version = 0
        self.start_seconds = 0.0  # the last start: Wine up and HELLO answered
        self._info: WorkerInfo | None = None

    # -- lifecycle --
    def __enter__(self) -> DmlWorker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """The worker's process id (under Wine: the Linux process running the .exe)."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the worker unless it runs; raises DmlStackMissingError if the stack is incomplete."""
        with self._lock:
            if self.running:
                return
            self._discard()
            start = time.perf_counter()
            if self._command is not None:
                cmd, env, cwd = self._command, dict(os.environ, **self._extra_env), None
            else:
                assert self.stack is not None
                self._prepare_stack(self.stack)
                display = None
                if shutil.which("Xvfb") is not None:
                    if self._xvfb is None or not self._xvfb.alive():
                        self._xvfb = _Xvfb()
                        self._procs.append(self._xvfb)
                    display = self._xvfb.display
                env = dict(run_environment(self.stack, display), **self._extra_env)
                cmd = ["wine", str(self.stack.worker_exe)]
                cwd = str(self.stack.bin_dir)
            self._stderr.clear()
            try:
                self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, env=env, cwd=cwd, bufsize=0)
            except OSError as e:
                raise ProviderError(f"cannot start the DirectML worker ({cmd[0]}): {e}") from e
            self._procs.append(self._proc)
            threading.Thread(target=self._drain_stderr, args=(self._proc,), daemon=True).start()
            self.generation += 1
            r = self._request(OP_HELLO, b"", timeout_s=self.start_timeout_s)
            magic, version = r.u32(), r.u32()
            if magic != HELLO_MAGIC:
                raise self._crashed(f"answered HELLO with magic {magic:#x}, not {HELLO_MAGIC:#x}",
                                    DmlProtocolError)
            if version != PROTOCOL_VERSION:
                raise self._crashed(f"speaks protocol {version}; this client speaks {PROTOCOL_VERSION} "
                                    "(rebuild it: the setup compiles worker.c)", DmlProtocolError)
            self.ort_version, self.api_version = r.text(), r.u32()
            if self.stack is not None and self.stack.directml_version and self._command is None:
                self._info = None
                try:  # an older DirectML: refuse a worker that loaded another DirectML.dll
                    self.stack_info()
                except ProviderError:
                    self._kill()
                    raise
            self.start_seconds = time.perf_counter() - start

    @staticmethod
    def _prepare_stack(stack: DmlStack) -> None:
        stack.require()
        if not stack.base.worker_current():
            from ort_layouts.engine.dml.install import compile_worker

            compile_worker(stack.base)
        stack.link_version_dir()  # an older DirectML: its folder gets the current worker

    def close(self) -> None:
        """Ask the worker to quit and stop the Xvfb: each has
        :data:`~ort_layouts.engine.session_process.QUIT_TIMEOUT_S` to end before it is killed,
        and is killed at once when the stop is hurried (a repeated Ctrl-C or SIGTERM:
        :func:`ort_layouts._startup.hurry`), before or while this waits: a hung worker's QUIT is
        never waited on for long."""
        with self._lock:
            proc = self._proc
            if proc is not None and proc.poll() is None:
                with contextlib.suppress(OSError, ValueError):  # (BlockingIOError: a full pipe)
                    assert proc.stdin is not None
                    os.set_blocking(proc.stdin.fileno(), False)  # a hung worker may not be reading
                    proc.stdin.write(struct.pack("<IQ", OP_QUIT, 0))  # its reply is not read
                await_exit([proc])
            self._discard()
            if self._xvfb is not None:
                self._xvfb.stop()
                self._xvfb = None
            self._procs.clear()

    def interrupt(self) -> None:
        """Kill the worker at once, without waiting for its lock: a run that stops (Ctrl-C,
        SIGTERM) gives up the request another thread waits on, which a worker that stopped
        answering would hold until its timeout (:attr:`timeout_s`). That request raises
        :class:`DmlWorkerCrashedError`; the next call starts a new worker."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.send_signal(signal.SIGKILL)

    def restart(self) -> None:
        """Kill the worker and start a new one."""
        with self._lock:
            self._kill()
            self.start()

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=10)
        self._discard()

    def _discard(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    if pipe is not None:
                        pipe.close()
            with contextlib.suppress(ValueError):
                self._procs.remove(proc)

    def _drain_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            text = line.decode("utf-8", errors="replace").rstrip()
            if text:
                self._stderr.append(text)

    def stderr_tail(self, lines: int = 10) -> str:
        return " | ".join(list(self._stderr)[-lines:])

    # -- requests --
    def _crashed(self, what: str, cls: type[DmlWorkerCrashedError] = DmlWorkerCrashedError, *,
                 exiting: bool = False) -> DmlWorkerCrashedError:
        """Stop the worker (it is dead, hung, or out of step: a reply that is not what the protocol
        says, found here or by a :class:`_Reader` of its payload) and make the error to raise,
        "the DirectML worker {what}"; the next request starts a new worker. ``exiting``: its pipes
        closed, so give it a moment to exit and collect its status."""
        with self._lock:
            proc = self._proc
            returncode = None
            if proc is not None:
                if exiting:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=5)
                returncode = proc.poll()
                self._kill()
        time.sleep(0.05)  # let the stderr thread catch the last lines
        status = f" (exit status {returncode})" if returncode is not None else ""
        return cls(f"the DirectML worker {what}{status}", returncode=returncode,
                   stderr_tail=self.stderr_tail())

    def _read_exact(self, n: int, deadline: float) -> bytes:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        chunks: list[bytes] = []
        left = n
        while left:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise self._crashed("did not answer in time", DmlWorkerTimeoutError)
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                raise self._crashed("died", exiting=True)
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _request(self, op: int, payload: bytes, *, timeout_s: float | None = None,
                 error: type[DmlWorkerError] = DmlWorkerError) -> _Reader:
        """Send one request, return a reader over the OK payload; raise ``error`` on an error
        reply, DmlWorkerCrashedError when the worker dies or hangs."""
        with self._lock:
            if op in _STARTS_WORKER and not self.running:
                self.start()
            proc = self._proc
            if proc is None or proc.stdin is None:
                raise self._crashed("is not running")
            try:
                try:
                    data = memoryview(struct.pack("<IQ", op, len(payload)) + payload)
                    while data:  # a pipe may take a large request in parts
                        data = data[proc.stdin.write(data) or 0:]
                except (BrokenPipeError, OSError):
                    raise self._crashed("died", exiting=True) from None
                deadline = time.monotonic() + (timeout_s if timeout_s is not None else self.timeout_s)
                status, length = struct.unpack("<IQ", self._read_exact(12, deadline))
                if status not in (0, 1):
                    raise self._crashed(f"sent reply status {status}: the stream is out of step",
                                        DmlProtocolError)
                body = self._read_exact(length, deadline) if length else b""
            except DmlWorkerError:
                raise  # the worker is stopped already
            except BaseException:
                # interrupted halfway (Ctrl-C, an alarm, a test's timeout): a request half sent or a
                # reply left unread would answer the next request with this one's outputs
                self._kill()
                raise
        r = _Reader(body, lambda what: self._crashed(what, DmlProtocolError))
        if status == 1:
            code, message = r.u32(), r.text()
            raise error(message, code)
        return r

    # -- public API --
    def info(self, *, adapter: int = 0) -> WorkerInfo:
        """Versions and adapters; the D3D12 probe (shader model, feature level) uses ``adapter``."""
        r = self._request(OP_INFO, _Writer().u32(adapter).done())
        ort_version, build, path, version, d3d12_error, sm, fl = (r.text() for _ in range(7))
        typed = r.u32()
        adapters = tuple(
            AdapterInfo(r.text(), r.u32(), r.u32(), r.u32(), r.u32(), r.u64(), r.u64(), r.u64(), r.u32())
            for _ in range(r.u32()))
        r.end()
        self._info = WorkerInfo(ort_version, build, path, version, d3d12_error, sm, fl,
                                None if typed == 2 else bool(typed), adapters)
        return self._info

    def stack_info(self) -> DmlStackInfo:
        """What this worker runs on, for reports (asks the worker once)."""
        info = self._info or self.info()
        stack = self.stack if self.stack is not None else DmlStack.default()
        return DmlStackInfo.from_worker(stack, info)

    def create_session(self, model: bytes | Any, *, provider: str = "DML",
                       provider_options: Mapping[str, str | int | bool] | None = None,
                       graph_optimization_level: int = 0, allow_cpu_fallback: bool = False,
                       record_placement: bool = True, graph_fusion: bool = False, log_severity: int = 3,
                       session_config: Mapping[str, str] | None = None) -> DmlSession:
        """A session for ``model`` (ModelProto or its bytes) in this worker.

        Args:
            provider: "DML", or "CPU" for no DML EP (with ``allow_cpu_fallback`` False this must
                fail: the negative control).
            provider_options: DML EP options (device_id, performance_preference, device_filter,
                disable_metacommands).
            graph_optimization_level: 0 (off, the default: optimizations can remove the node
                under test), 1, 2 or 99.
            allow_cpu_fallback: let ONNX Runtime put nodes the EP refuses on the CPU EP.
            record_placement: record which EP got each node (:meth:`DmlSession.node_assignment`).
            graph_fusion: let the DML EP fuse nodes (off: every node is its own operator).
            log_severity: ONNX Runtime's session log level (0 verbose .. 4 fatal), to stderr.
            session_config: extra session config entries, applied after the defaults.

        Raises:
            DmlSessionCreationError: ONNX Runtime refused (its text).
            DmlWorkerCrashedError: the worker died meanwhile.
        """
        level = graph_optimization_level
        if type(level) is not int or level not in GRAPH_OPTIMIZATION_LEVELS:
            raise ProviderError(f"graph optimization level {level!r} is not one of "
                                f"{list(GRAPH_OPTIMIZATION_LEVELS)}")
        if provider not in ("DML", "CPU"):
            raise ProviderError(f"provider {provider!r} is not one of ['DML', 'CPU']")
        if type(log_severity) is not int or not 0 <= log_severity <= 4:
            raise ProviderError(f"log severity {log_severity!r} is not one of [0, 1, 2, 3, 4] "
                                "(verbose, info, warning, error, fatal)")
        bad = next(((k, v) for k, v in (session_config or {}).items()
                    if not isinstance(k, str) or not isinstance(v, str)), None)
        if bad is not None:
            raise ProviderError(f"session config entry {bad[0]!r}: {bad[1]!r} is not valid; valid: a str "
                                "key and a str value, e.g. 'session.intra_op.allow_spinning': '0'")
        data = model if isinstance(model, bytes | bytearray | memoryview) else model.SerializeToString()
        options = {k: (str(v).lower() if isinstance(v, bool) else str(v))
                   for k, v in (provider_options or {}).items()}
        flags = ((FLAG_ALLOW_CPU_FALLBACK if allow_cpu_fallback else 0)
                 | (FLAG_RECORD_PLACEMENT if record_placement else 0)
                 | (FLAG_KEEP_FUSION if graph_fusion else 0))
        request = (_Writer().text(provider).u32(graph_optimization_level).u32(flags).u32(log_severity)
                   .pairs(options).pairs(dict(session_config or {})).blob(bytes(data)).done())
        return DmlSession(self, request)

    def _create(self, request: bytes) -> tuple[int, int, _Reader]:
        r = self._request(OP_CREATE, request, error=DmlSessionCreationError)
        return self.generation, r.u32(), r

    def _release(self, session_id: int) -> None:
        self._request(OP_RELEASE, _Writer().u32(session_id).done())


class DmlSession:
    """One ONNX Runtime session inside a :class:`DmlWorker` (made by
    :meth:`DmlWorker.create_session`). After a worker restart the session re-creates itself in
    the new worker on its next :meth:`run`."""

    def __init__(self, worker: DmlWorker, request: bytes) -> None:
        self.worker = worker
        self._request = request
        self._id = 0
        self._generation = 0
        self.input_names: tuple[str, ...] = ()
        self.output_names: tuple[str, ...] = ()
        self.placement_note = ""
        self._placement: dict[str, str] = {}
        self._op_types: dict[str, str] = {}
        self.create_seconds = 0.0  # ONNX Runtime's session creation, timed in the worker
        self.run_seconds = 0.0  # the last Run, timed in the worker
        self._create()

    def _create(self) -> None:
        self._generation, self._id, r = self.worker._create(self._request)
        self.create_seconds = r.u64() / 1e9
        self.input_names = tuple(r.text() for _ in range(r.u32()))
        self.output_names = tuple(r.text() for _ in range(r.u32()))
        self.placement_note = r.text()
        self._placement, self._op_types = {}, {}
        for _ in range(r.u32()):
            node, op_type, ep = r.text(), r.text(), r.text()
            self._placement[node] = ep
            self._op_types[node] = op_type
        r.end()

    def __enter__(self) -> DmlSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any]) -> list[np.ndarray]:
        """Run once; the outputs named (all when None or empty) as numpy arrays of their ONNX
        element type and shape.

        Raises:
            DmlRunError: ONNX Runtime's Run failed (its text), or the feeds were refused.
            DataTypeError: a feed's dtype has no ONNX element type here.
            DmlWorkerCrashedError: the worker died during the run (the next call restarts it).
        """
        if self._id == 0:
            raise ProviderError("this DmlSession was released")
        w = _Writer().u32(len(feeds))
        for name, value in feeds.items():
            encode_tensor(w, name, value)
        names = list(output_names or ())
        w.u32(len(names))
        for name in names:
            w.text(name)
        body = w.done()
        # under the worker's lock from the check to the reply: a session id is the worker's own
        # (each new worker numbers from 1), so another thread's restart between them would
        # send this id to a worker where it names another thread's session
        with self.worker._lock:
            if self._generation != self.worker.generation or not self.worker.running:
                self.worker.start()  # a new worker after a crash: the session is made again there
                self._create()
            r = self.worker._request(OP_RUN, struct.pack("<I", self._id) + body, error=DmlRunError)
        self.run_seconds = r.u64() / 1e9
        outputs = [decode_tensor(r)[1] for _ in range(r.u32())]
        r.end()
        return outputs

    def node_assignment(self) -> dict[str, str]:
        """{node name: EP name} as ONNX Runtime recorded it ({} when it was not recorded; see
        :attr:`placement_note`)."""
        return dict(self._placement)

    def node_op_types(self) -> dict[str, str]:
        """{node name: op type} for the nodes in :meth:`node_assignment`."""
        return dict(self._op_types)

    def release(self) -> None:
        """Free the session in the worker (nothing to do when the worker has restarted since)."""
        with self.worker._lock:  # (as run: the id names this session only in its own worker)
            if self._id and self._generation == self.worker.generation and self.worker.running:
                with contextlib.suppress(DmlWorkerError):
                    self.worker._release(self._id)
        self._id = 0
