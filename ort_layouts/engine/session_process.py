"""The CPU EP's sessions in a process of their own, beside the process that checks them.

ONNX Runtime's Python binding takes Python's lock back many times while it creates a session,
so a session thread in the checking process contends with the thread that plans, fills and
judges the batches: on the standard suite, on 2 cores, the thread made a run no faster than
creating the sessions in turn on the main thread, at about 1.3 times the processor time. A
process of its own creates and runs the sessions at ONNX Runtime's own speed while the checking
process works, and a native crash of ONNX Runtime there is a failed batch, not the end of the
validation (the runner then isolates the culprit as for any failed run, and the next batch
starts a new process).

The child is this file run as a script (``python -P session_process.py``: its folder is not put
on ``sys.path``): it imports only the standard library, numpy and onnxruntime, so it starts in
about half a second. Once ONNX Runtime is imported it says ``("ready", 1)`` (a child that dies
or says anything else first is not started: the run keeps its sessions in-process). Requests
and replies are pickled tuples on its stdin and stdout:

- ``("batch", model bytes, settings, feeds, output names)`` -> ``("ok", outputs, {node: EP})``,
  ``("create", message)`` when ONNX Runtime refused the session, or ``("run", message)`` when
  ``Run`` failed;
- ``("quit",)`` -> the child exits.

``settings`` are the session options as data (:func:`apply_settings`), the same that
:func:`~ort_layouts.engine.providers.session_options` applies in-process.

The parent's side of a child (:func:`wait_ready`, :func:`exchange`, :func:`died_text`,
:func:`stop_child`, and :class:`PerProcess` for the one child a process keeps) is shared with the workers of
:mod:`~ort_layouts.engine.parallel`; it is here because this file must run alone, on the
standard library.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, Generic, TypeVar

__all__ = ["READY", "ChildLost", "PerProcess", "SessionProcess", "SessionProcessCreateError",
           "SessionProcessDiedError", "SessionProcessRunError", "apply_settings", "died_text", "exchange",
           "graph_assignment", "session_process", "stop_child", "stop_children", "wait_ready"]

_CPU = "CPUExecutionProvider"
T = TypeVar("T")
#: what a child says once its imports are done, before it reads a request
READY = ("ready", 1)
# how much of the child's standard error a died error quotes
_STDERR_TAIL_BYTES = 2000


def apply_settings(so: Any, settings: Mapping[str, Any]) -> None:
    """Set an ``onnxruntime.SessionOptions`` from settings as data: ``log_severity_level``,
    ``optimize`` (all graph optimizations, or none), ``intra_op_num_threads`` (0: ONNX Runtime's
    default) and ``config_entries`` (session config key/value pairs). Memory patterns are off
    (the DML EP requires it; harmless elsewhere) and execution is sequential."""
    import onnxruntime as ort

    so.log_severity_level = int(settings["log_severity_level"])
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if settings["optimize"]
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.enable_mem_pattern = False
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    for key, value in settings["config_entries"]:
        so.add_session_config_entry(key, value)
    if settings["intra_op_num_threads"]:
        so.intra_op_num_threads = int(settings["intra_op_num_threads"])


def graph_assignment(session: Any) -> dict[str, str]:
    """{node name: EP name} as ONNX Runtime recorded it for an ``InferenceSession``; {} when
    this runtime cannot say, or recording was off."""
    get = getattr(session, "get_provider_graph_assignment_info", None)
    if get is None:
        return {}
    try:
        subgraphs = get()
    except Exception:  # recording was not enabled for this session
        return {}
    return {node.name: sub.ep_name for sub in subgraphs for node in sub.get_nodes()}


def died_text(proc: subprocess.Popen[bytes] | None, stderr: IO[bytes] | None, error: BaseException, *,
              what: str, when: str) -> str:
    """Why a child process failed, in one line: ``"{what} died (exit status N) {when} (cause);
    its last words: ..."`` (the last line of its standard error). Waits for it to end (killed
    after 5 s)."""
    code = None
    if proc is not None:
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    tail = ""
    if stderr is not None:
        with contextlib.suppress(OSError, ValueError):  # closed meanwhile
            stderr.seek(0, os.SEEK_END)
            stderr.seek(max(0, stderr.tell() - _STDERR_TAIL_BYTES))
            tail = stderr.read().decode("utf-8", "replace").strip()
    cause = str(error) or type(error).__name__
    text = f"{what} died (exit status {code}) {when} ({cause})"
    return text + (f"; its last words: {tail.splitlines()[-1]}" if tail else "")


def wait_ready(proc: subprocess.Popen[bytes], stderr: IO[bytes] | None, *, what: str) -> None:
    """Wait until a child just started says it is ready (``("ready", 1)``, once its imports
    are done).

    Raises:
        OSError: it died first, or said something else (the caller stops it: :func:`stop_child`).
    """
    assert proc.stdout is not None
    try:
        said = pickle.load(proc.stdout)
    except Exception as e:  # died (EOF), or wrote what is not a pickle
        raise OSError(died_text(proc, stderr, e, what=what, when="as it started")) from None
    if said != READY:
        raise OSError(f"{what} did not start: it said {said!r}, not {READY!r}")


class ChildLost(Exception):
    """An exchange with a child broke off (:func:`exchange`): its pipe closed, or its reply could
    not be read; ``cause`` is the error that said so."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def exchange(proc: subprocess.Popen[bytes], request: tuple[Any, ...], kinds: Sequence[str],
             stop: Callable[[], None]) -> tuple[Any, ...]:
    """Send ``request`` to a child (pickled, on its stdin) and read its reply (a pickled tuple
    on its stdout, whose first item is one of ``kinds``).

    An exchange interrupted halfway (KeyboardInterrupt) calls ``stop`` before it goes on: a
    reply left unread would answer the next request.

    Raises:
        ChildLost: the pipe broke, the reply could not be read, or it was not a tuple of one of
            ``kinds`` (the child is no longer in step with this process).
    """
    assert proc.stdin is not None and proc.stdout is not None
    try:
        pickle.dump(request, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.flush()
        reply = pickle.load(proc.stdout)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError) as e:
        raise ChildLost(e) from None
    except BaseException:
        stop()
        raise
    if not isinstance(reply, tuple) or not reply or reply[0] not in kinds:
        kind = reply[0] if isinstance(reply, tuple) and reply else type(reply).__name__
        raise ChildLost(ValueError(f"unexpected reply {kind!r}; valid: {list(kinds)}"))
    return reply


def _hurried() -> bool:
    """Whether a stop is to be quick (:func:`ort_layouts._startup.hurried`: a repeated Ctrl-C or
    SIGTERM while the command line stops); never in this file run alone, as the child (the
    package, which imports that module first, is not imported there)."""
    startup = sys.modules.get("ort_layouts._startup")
    return bool(startup is not None and startup.hurried())


#: how long a child asked to quit has before it is killed
QUIT_TIMEOUT_S = 5.0


def await_exit(procs: Sequence[subprocess.Popen[Any]]) -> None:
    """Wait for processes that were asked to end: they have :data:`QUIT_TIMEOUT_S` between
    them, not each; those still running then are killed, and all of them at once when the stop
    is hurried (:func:`ort_layouts._startup.hurry`, also while this waits)."""
    deadline = time.monotonic() + QUIT_TIMEOUT_S
    for proc in procs:
        while proc.poll() is None:
            if _hurried() or time.monotonic() >= deadline:
                proc.kill()
                proc.wait()
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.05)


def stop_child(proc: subprocess.Popen[bytes] | None, stderr: IO[bytes] | None = None) -> None:
    """Ask a child to quit (``("quit",)``; killed after :data:`QUIT_TIMEOUT_S`, or at once when
    the stop is hurried) and close its pipes, and the file that holds its standard error."""
    stop_children([(proc, stderr)])


def stop_children(children: Sequence[tuple[subprocess.Popen[bytes] | None, IO[bytes] | None]]) -> None:
    """:func:`stop_child` of several children at once: each is asked to quit, then they have
    :data:`QUIT_TIMEOUT_S` between them (not each), and those still running then, or when the
    stop is hurried (a repeated Ctrl-C or SIGTERM: :func:`ort_layouts._startup.hurry`), are
    killed."""
    asked = []
    for proc, stderr in children:
        if stderr is not None:
            stderr.close()
        if proc is None:
            continue
        asked.append(proc)
        if proc.poll() is None:
            try:
                assert proc.stdin is not None
                pickle.dump(("quit",), proc.stdin)
                proc.stdin.close()
            except (OSError, ValueError):
                proc.kill()
    await_exit(asked)
    for proc in asked:
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # what was left to flush to a child that died
                    stream.close()


class SessionProcessCreateError(Exception):
    """ONNX Runtime refused the session in the child (its own message)."""


class SessionProcessRunError(Exception):
    """``Run`` failed in the child (ONNX Runtime's own message)."""


class SessionProcessDiedError(Exception):
    """The child died or broke the protocol while it had the batch; the next batch starts a new one."""


class SessionProcess:
    """A child process that creates and runs CPU EP sessions, one batch at a time (thread-safe:
    one request at a time; started on first use, restarted after it died)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    def start(self) -> None:
        """Start the child now, if it is not running (it starts on first use otherwise).

        Raises:
            OSError: the child could not be started (no Python executable to start it with), or
                died or said anything else before it said it was ready (ONNX Runtime imported).
        """
        with self._lock:
            self._ensure()

    def _ensure(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._stop()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in _stop
        command = [sys.executable, "-P", "-u", os.path.abspath(__file__)]
        proc = self._proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self._stderr)
        try:
            wait_ready(proc, self._stderr, what="the session process")  # once ONNX Runtime is imported
        except BaseException:  # KeyboardInterrupt too: its ready, unread, would pass for a reply
            self._stop()
            raise
        return proc

    def run_batch(self, model: bytes, settings: Mapping[str, Any], feeds: Mapping[str, Any],
                  names: Sequence[str]) -> tuple[list[Any], dict[str, str]]:
        """Create a CPU EP session of ``model`` with ``settings`` and run it on ``feeds``.

        Returns:
            (the outputs named ``names``, {node name: EP name}).

        Raises:
            SessionProcessCreateError: ONNX Runtime refused the session.
            SessionProcessRunError: ``Run`` failed.
            SessionProcessDiedError: the child died (its exit status and the end of its
                standard error are in the message), or could not be started again.
        """
        with self._lock:
            try:
                proc = self._ensure()
            except OSError as e:  # it died before, and does not start again
                raise SessionProcessDiedError(str(e)) from None
            try:
                reply = exchange(proc, ("batch", bytes(model), dict(settings), dict(feeds), list(names)),
                                 ("ok", "create", "run"), self._stop)
            except ChildLost as e:
                raise SessionProcessDiedError(self._died_text(e.cause)) from None
        if reply[0] == "ok":
            return reply[1], reply[2]
        if reply[0] == "create":
            raise SessionProcessCreateError(reply[1])
        raise SessionProcessRunError(reply[1])

    def _died_text(self, error: BaseException) -> str:
        text = died_text(self._proc, self._stderr, error, what="the session process",
                         when="while it had the batch")
        self._stop()
        return text

    def _stop(self) -> None:
        proc, stderr, self._proc, self._stderr = self._proc, self._stderr, None, None
        stop_child(proc, stderr)

    @property
    def pid(self) -> int | None:
        """The running child's process id, or None."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def close(self) -> None:
        """Stop the child."""
        with self._lock:
            self._stop()


class PerProcess(Generic[T]):
    """One ``T`` for this process, made on first use (:meth:`get`) and closed when Python exits;
    a forked process does not share its parent's (nor its pipes): it makes its own."""

    def __init__(self, make: Callable[[], T], close: Callable[[T], None]) -> None:
        self._make = make
        self._close = close
        self._lock = threading.Lock()
        self.value: T | None = None
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self.value = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self.value is None:
                value = self.value = self._make()
                atexit.register(self._close_at_exit, value, os.getpid())
            return self.value

    def _close_at_exit(self, value: T, pid: int) -> None:
        if os.getpid() == pid:  # not a forked process's: its parent's child is the parent's to stop
            self._close(value)


_SHARED = PerProcess(SessionProcess, SessionProcess.close)


def session_process() -> SessionProcess:
    """The process-wide :class:`SessionProcess` (stopped when Python exits)."""
    return _SHARED.get()


# ---- the child ---------------------------------------------------------------------------------
def _serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    import onnxruntime as ort

    pickle.dump(READY, replies, protocol=pickle.HIGHEST_PROTOCOL)
    replies.flush()

    while True:
        try:
            request = pickle.load(requests)
        except EOFError:
            return
        if request[0] != "batch":
            return
        _, model, settings, feeds, names = request
        try:
            so = ort.SessionOptions()
            apply_settings(so, settings)
            session = ort.InferenceSession(model, sess_options=so, providers=[_CPU])
        except Exception as e:
            reply: tuple[Any, ...] = ("create", str(e))
        else:
            try:
                reply = ("ok", session.run(names, feeds), graph_assignment(session))
            except Exception as e:
                reply = ("run", str(e))
            del session
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer)
