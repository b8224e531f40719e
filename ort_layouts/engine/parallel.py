"""Worker processes that run units of cases for a run spread over several processes.

:func:`~ort_layouts.engine.runner.run_cases` with ``jobs`` above 1 cuts its batches into units of
whole batches, in order, and :func:`run_units` hands them to ``jobs`` worker processes from a
shared queue (a worker that finishes early takes the next unit). Each worker runs its unit with
the one-process runner (:func:`~ort_layouts.engine.runner.run_unit`), so a unit's batches,
sessions and verdicts are those of a one-process run (a diagnosis can differ where a unit needs
more re-runs than its share of the run's: :class:`Budget`); the results travel back as plain
field values, and the runner rebuilds each ``CaseResult`` around its own ``Case``.

A worker is ``python -P -u -c`` importing this module (the package's folder is put on
``sys.path``, the current one is not): requests and replies are pickled tuples on its stdin and
stdout, its own standard output goes to its standard error, and it ignores SIGINT (the process
that started it stops it). Once its imports are done it says ``("ready", 1)``; a worker that
dies or says anything else first is not started: when the run's workers start, the run then
stays in its own process; when one is started again during a run (after the one before died),
the run fails with a :class:`WorkerProcessError`:

- ``("run", request)`` (a :class:`~ort_layouts.engine.runner.UnitRequest`) -> ``("ok",
  [(status, other fields ...) per case], re-runs used, [encode of each result] or None)``, or
  ``("error", text, traceback)`` when the unit raised or the request could not be read (a
  fault of the harness, raised again as :class:`WorkerProcessError`; after a request it could
  not read, the worker exits);
- ``("quit",)`` -> the worker exits.

A worker that dies (a native crash of an EP) fails only its unit: the unit's cases go back on
the queue one case to a unit, and a lone case whose worker dies is an error that quotes the
worker's exit status and last words. The workers are kept for the next run of this process
(about half a second each to start) and stopped when Python exits; a forked process starts its
own.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from ort_layouts._errors import OrtLayoutsError
from ort_layouts.engine.session_process import (
    READY,
    ChildLost,
    PerProcess,
    died_text,
    exchange,
    stop_child,
    stop_children,
    wait_ready,
)

__all__ = ["MAX_JOBS", "Budget", "Unit", "WorkerProcessError", "pickled_for_workers", "run_units",
           "start_workers", "usable_cores", "worker_pids", "workers_busy_here"]

#: workers a run takes at most when it picks the count itself
MAX_JOBS = 8

# the folder that holds the ort_layouts package, for the worker's sys.path
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_WORKER_CODE = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "from ort_layouts.engine.parallel import _serve; _serve()")


class WorkerProcessError(OrtLayoutsError):
    """A worker process raised while it ran a unit (a fault of the harness, not of a case): the
    worker's exception in one line; its traceback in ``worker_traceback``."""

    def __init__(self, message: str, worker_traceback: str = "") -> None:
        super().__init__(message)
        self.worker_traceback = worker_traceback
        if worker_traceback:  # shown under this error's own traceback (not in the CLI's one line)
            self.add_note("in the worker process:\n" + worker_traceback.rstrip("\n"))


class _MainFinder(pickle.Pickler):
    """A pickler that refuses what a worker could not load: a class or function of ``__main__``
    (a worker's ``__main__`` is its own ``-c`` code)."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, (type, types.FunctionType)) and getattr(obj, "__module__", None) == "__main__":
            raise pickle.PicklingError(f"{obj.__qualname__} is defined in __main__, which a worker process "
                                       "does not import")
        return NotImplemented


def pickled_for_workers(value: object) -> bytes | None:
    """``value`` pickled for a worker process, or None where it cannot be: it does not pickle,
    or it pickles by reference to a class or function of ``__main__``. A worker may still fail
    to load it (a module on this process's path that the workers' lacks): it loads it apart
    from its request, to tell that failure."""
    out = io.BytesIO()
    try:
        _MainFinder(out, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    except Exception:  # pickle raises several kinds (PicklingError, TypeError, AttributeError)
        return None
    return out.getvalue()


class _WorkerDied(Exception):
    """The worker died or broke the protocol while it had a unit."""


def usable_cores() -> int:
    """The processors this process may run on (its affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class _Worker:
    """One worker process, started on first use and again after it died; used by one thread at a
    time."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._ready = False  # the process said it was ready (its READY read off its stdout)

    def ensure(self) -> subprocess.Popen[bytes]:
        """The running process that said it was ready: started if there is none, and waited for
        (:meth:`wait_ready`) if it has not said so yet.

        Raises:
            OSError: it could not be started, or did not say it was ready.
        """
        if self._proc is None or self._proc.poll() is not None:
            self.start()
        if not self._ready:
            self.wait_ready()
        assert self._proc is not None
        return self._proc

    def start(self) -> None:
        """Start a new process (the one before, if any, stopped)."""
        self.stop()
        self._ready = False
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop
        self._proc = subprocess.Popen([sys.executable, "-P", "-u", "-c", _WORKER_CODE, _PACKAGE_PARENT],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)

    def wait_ready(self) -> None:
        """Wait until the process just started (:meth:`start`) says it is ready (its imports
        done).

        Raises:
            OSError: it died first, or said something else (``sys.executable`` is not a Python
                that can import this package, say).
        """
        assert self._proc is not None, "wait_ready follows start"
        try:
            wait_ready(self._proc, self._stderr, what="the worker process")
        except OSError:
            self.stop()
            raise
        self._ready = True

    def call(self, request: tuple[Any, ...]) -> tuple[Any, ...]:
        try:
            return exchange(self.ensure(), request, ("ok", "error"), self.stop)
        except ChildLost as e:
            raise _WorkerDied(self._died_text(e.cause)) from None

    def _died_text(self, error: BaseException) -> str:
        text = died_text(self._proc, self._stderr, error, what="the worker process",
                         when="while it ran the case")
        self.stop()
        return text

    def stop(self) -> None:
        """Ask the process to quit (killed after 5 s) and let its pipes go."""
        stop_child(*self.detach())

    def detach(self) -> tuple[subprocess.Popen[bytes] | None, IO[bytes] | None]:
        """The process and its standard error's file, which the worker forgets (for the caller
        to stop)."""
        proc, stderr, self._proc, self._stderr = self._proc, self._stderr, None, None
        self._ready = False
        return proc, stderr

    def kill(self) -> None:
        """Kill the process, if it runs (from any thread: the thread that uses the worker sees
        it die, and cleans up)."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None


class _Pool:
    """The process's workers, kept between runs; one run uses them at a time."""

    def __init__(self) -> None:
        self.workers: list[_Worker] = []
        self.lock = threading.Lock()  # held by the run that uses the workers
        self.owner: int | None = None  # the thread of the run that uses them

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The lock, held by this thread for a run (waits for another thread's run to end)."""
        with self.lock:
            self.owner = threading.get_ident()
            try:
                yield
            finally:
                self.owner = None

    def take(self, count: int) -> list[_Worker]:
        while len(self.workers) < count:
            self.workers.append(_Worker())
        return self.workers[:count]

    def close(self) -> None:
        """Stop the workers, side by side (those that do not quit are killed after 5 s in all)."""
        stop_children([worker.detach() for worker in self.workers])


_POOL = PerProcess(_Pool, _Pool.close)


def _pool() -> _Pool:
    return _POOL.get()


def start_workers(count: int) -> None:
    """Start ``count`` workers now, if they are not running, and wait until each says it is
    ready (they import side by side), so that a run knows before it begins whether it can
    spread. A worker left started but not yet heard from (another one failed first) is waited
    for when it is next used.

    Raises:
        OSError: a worker could not be started, or did not say it was ready.
    """
    pool = _pool()
    with pool.held():
        workers = pool.take(count)
        for worker in workers:
            if worker.pid is None:
                worker.start()
        for worker in workers:
            worker.ensure()


def workers_busy_here() -> bool:
    """Whether this thread's own run is using the workers (a run started from its ``on_result``
    would wait for them forever)."""
    pool = _POOL.value
    return pool is not None and pool.owner == threading.get_ident()


def worker_pids() -> list[int]:
    """The running workers' process ids."""
    pool = _POOL.value
    if pool is None:
        return []
    return [pid for pid in (w.pid for w in pool.workers) if pid is not None]


# ---- a run ----------------------------------------------------------------------------------
class Budget:
    """A count lent out in shares and paid back with what a share did not use (thread-safe),
    so that the workers together never spend more than the whole."""

    def __init__(self, total: int, share: int) -> None:
        self.left = total
        self.share = share
        self.lock = threading.Lock()

    def lend(self) -> int:
        with self.lock:
            lent = min(self.left, self.share)
            self.left -= lent
            return lent

    def repay(self, count: int) -> None:
        with self.lock:
            self.left += count


Unit = tuple[list[int], int]  # (the keys of its cases, its batch size)


def run_units(units: Sequence[Unit], make_request: Callable[[Unit], tuple[Any, ...]], jobs: int
              ) -> Iterator[tuple[Unit, tuple[Any, ...], tuple[Any, ...]]]:
    """Hand ``units`` to ``jobs`` workers from a shared queue; yield ``(unit, request, reply)``
    in the calling thread as each comes back (``make_request(unit)`` runs on the unit's worker
    thread, as the unit is sent). A unit of several cases whose worker died goes back on the
    queue one case to a unit, and is yielded with the reply ``("requeued",)`` (so that the
    caller can settle what its request lent); for a unit of one case, the reply is ``("died",
    text)``. A reply ``("error", text, traceback)`` is raised as :class:`WorkerProcessError`. When the
    caller stops early (an error, an interrupt), the units not sent are dropped and the run's
    workers killed (the next run starts new ones)."""
    pool = _pool()
    work: queue.Queue[Unit | None] = queue.Queue()
    done: queue.Queue[tuple[Unit, tuple[Any, ...], tuple[Any, ...]]] = queue.Queue()
    for unit in units:
        work.put(unit)
    outstanding = len(units)

    def drive(worker: _Worker) -> None:
        while True:
            unit = work.get()
            if unit is None:
                return
            request: tuple[Any, ...] = ()
            try:
                request = make_request(unit)
                reply = worker.call(request)
            except _WorkerDied as e:
                reply = ("died", str(e))
            except BaseException as e:  # in this process: the request could not be made or sent
                reply = ("error", f"{type(e).__name__}: {e}", traceback.format_exc())
            done.put((unit, request, reply))

    with pool.held():
        workers = pool.take(jobs)
        threads = [threading.Thread(target=drive, args=(w,), name=f"ort_layouts_job{k}", daemon=True)
                   for k, w in enumerate(workers)]
        for thread in threads:
            thread.start()
        finished = False
        try:
            while outstanding:
                unit, request, reply = done.get()
                outstanding -= 1
                keys = unit[0]
                if reply[0] == "died" and len(keys) > 1:
                    for key in keys:  # each case alone, so that the one that kills a worker is found
                        work.put(([key], 1))
                    outstanding += len(keys)
                    yield unit, request, ("requeued",)
                    continue
                if reply[0] == "error":
                    raise WorkerProcessError(
                        f"a worker process failed while it ran {len(keys)} cases: {reply[1]}", reply[2])
                yield unit, request, reply
            finished = True
        finally:
            with contextlib.suppress(queue.Empty):
                while True:
                    work.get_nowait()
            for _ in threads:
                work.put(None)
            if not finished:  # the workers' units are dropped: each thread sees its worker die
                for worker in workers:
                    worker.kill()
            for thread in threads:
                thread.join()


# ---- the worker ----------------------------------------------------------------------------
def _serve() -> None:
    """The worker's loop (stdin: requests; the original stdout: replies): each unit runs with
    :func:`~ort_layouts.engine.runner.run_unit`."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to standard error, not into the replies
    sys.stdout = sys.stderr

    from ort_layouts.engine.runner import run_unit

    pickle.dump(READY, replies, protocol=pickle.HIGHEST_PROTOCOL)
    replies.flush()
    requests = sys.stdin.buffer
    keep_alive: dict[Any, Any] = {}
    reply: tuple[Any, ...]
    while True:
        try:
            request = pickle.load(requests)
        except EOFError:
            return
        except Exception as e:  # a request this process cannot read (a class it cannot import):
            # said as the unit's error, and the worker exits (the rest of the request is unread)
            reply = ("error", f"the worker process could not read its request: {type(e).__name__}: {e}",
                     traceback.format_exc())
            pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
            replies.flush()
            return
        if not request or request[0] != "run":
            return
        try:
            reply = ("ok", *run_unit(request[1], keep_alive))
        except Exception as e:
            reply = ("error", f"{type(e).__name__}: {e}", traceback.format_exc())
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()

