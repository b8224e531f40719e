"""A report directory belongs to one run at a time: an exclusive lock on its ``.lock`` file.

The lock is the operating system's (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows),
taken without waiting and held while the run writes; it goes when the run ends, and with the
process if that is killed, so a crash leaves no stale lock behind. The file itself stays; while
the directory is held it holds the holder's pid, host, command and start time as JSON, which a
refused run quotes. The holder empties it before letting the lock go, so what a refused run reads
is the record of the process that holds the lock now: one it finds empty, or naming a process of
this host that has ended (a holder killed before it could empty it), is waited on until the
new holder has written its own (:func:`holding_as` names the command of a process whose locks are
taken on its behalf by another part of the library, as a merge's report writer).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import platform
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ort_layouts._errors import ArgumentError, ReportError, a_type

__all__ = ["LOCK_FILE", "DirectoryLock", "check_lock_file", "holding_as", "made_directory"]

LOCK_FILE = ".lock"
_WINDOWS_LOCK_OFFSET = 1 << 20  # msvcrt locks a byte range; one past the holder's text
# the command and start time the locks taken in a holding_as block name, over their own
_HOLDER: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("ort_layouts_lock_holder",
                                                                                default=None)


@contextlib.contextmanager
def holding_as(command: str, started: str = "") -> Iterator[None]:
    """Within the block, every :class:`DirectoryLock` this thread (or task) takes names
    ``command`` and ``started`` as its holder's, over the ones it is given: a merge writes a
    report whose meta names the run it merges, but holds the directory as the merge it is.

    Raises:
        ArgumentError: ``command`` or ``started`` is not a str.
    """
    for name, value in (("command", command), ("started", started)):
        if not isinstance(value, str):
            raise ArgumentError(f"{name} {value!r:.60} is {a_type(value)}, not a str; valid: e.g. "
                                + ("'ort-layouts merge --shards reports'" if name == "command"
                                   else "'2025-01-31T12:00:00+00:00'"))
    token = _HOLDER.set((command, started))
    try:
        yield
    finally:
        _HOLDER.reset(token)


@contextlib.contextmanager
def made_directory(directory: Path) -> Iterator[None]:
    """``directory`` made (with its parents) for the block, where missing; a block that raises
    (a full disk) leaves none it made: the directory is removed, with its lock file, where that
    leaves it empty (what the block wrote is written whole or not at all)."""
    made = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                (directory / LOCK_FILE).unlink(missing_ok=True)
                directory.rmdir()
        raise


def _alive(pid: object, host: object) -> bool:
    """Whether the process ``pid`` of ``host`` may still run (True unless it is of this host,
    POSIX, and gone)."""
    if sys.platform == "win32" or host != platform.node() or not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it runs
        return True
    return True


# the lock file's open: read and append, made if missing, binary on Windows. A FIFO put in its
# place is refused by the fstat after this open (on Linux a read-write open of a FIFO returns at
# once); O_NONBLOCK keeps the open from waiting on a system where it would, and O_CLOEXEC says
# what os.open makes of a descriptor anyway (not inherited by child processes)
_OPEN_FLAGS = (os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def _try_lock(f: IO[bytes]) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        f.seek(_WINDOWS_LOCK_OFFSET)
        try:
            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(f: IO[bytes]) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        f.seek(_WINDOWS_LOCK_OFFSET)
        with contextlib.suppress(OSError):
            msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(f.fileno(), fcntl.LOCK_UN)


class DirectoryLock:
    """The exclusive lock of a report directory, taken at once or refused (when its holder lets
    it go while a refused run waits for the holder's record, it is taken then).

    Args:
        directory: the report directory (it must exist).
        command: the command line of the run that takes it, quoted to a refused run (a
            :func:`holding_as` block's command replaces it).
        started: when that run started (ISO 8601; a :func:`holding_as` block's replaces it).
        what: what the directory is called in the refusal ("report directory", "export
            directory").

    Raises:
        ReportError: another process holds the directory (the message names its pid, host,
            command and start time), or its ``.lock`` is not a regular file (a directory).
    """

    def __init__(self, directory: str | os.PathLike[str], *, command: str = "", started: str = "",
                 what: str = "report directory") -> None:
        self.directory = Path(directory)
        override = _HOLDER.get()
        if override is not None:
            command, started = override
        self.path = self.directory / LOCK_FILE
        self._file: IO[bytes] | None = self._open(what)
        holder = self._take()
        if holder is not None:
            self._file.close()
            self._file = None
            raise ReportError(
                f"{what} {str(self.directory)!r} is in use by another run: {_holder_text(holder)}; "
                f"wait for it to end, or use another {what}")
        self.info: dict[str, Any] = {"pid": os.getpid(), "host": platform.node(), "command": command,
                                     "started": started}
        self._file.seek(0)
        self._file.truncate()
        self._file.write(json.dumps(self.info).encode("utf-8") + b"\n")
        self._file.flush()

    def _open(self, what: str) -> IO[bytes]:
        """The lock file, opened (made if missing); one that is not a regular file (a directory, a
        FIFO) is refused, naming it, before it is opened (a FIFO's open may wait for a writer)."""
        check_lock_file(self.directory, what=what)
        try:  # without waiting: a FIFO made since is opened at once, and refused below
            fd = os.open(self.path, _OPEN_FLAGS, 0o666)
        except IsADirectoryError:  # made since
            raise _not_a_file(self.path, stat.S_IFDIR, what) from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise _not_a_file(self.path, mode, what)
        return os.fdopen(fd, "a+b")

    def _take(self, timeout_s: float = 2.0) -> dict[str, Any] | None:
        """Take the lock (None), or the record of the process that holds it ({} when none came
        in ``timeout_s``).

        A holder writes its record just after taking the lock and empties the file before
        letting it go, so a run refused in between finds the file empty, or, after a holder that
        was killed, naming an ended process: it waits for the record of a live one, and takes
        the lock if it is let go meanwhile. A record is quoted only when it is there both
        before and after the lock is found held again, so the process it names held the lock
        all along (a new holder's record names another pid or start).
        """
        assert self._file is not None
        deadline = time.monotonic() + timeout_s
        while not _try_lock(self._file):
            holder = self.holder()
            if holder and _alive(holder.get("pid"), holder.get("host")):
                if _try_lock(self._file):
                    return None
                if self.holder() == holder:
                    return holder
            if time.monotonic() >= deadline:
                return {}
            time.sleep(0.02)
        return None

    def holder(self) -> dict[str, Any]:
        """What the lock file says of its holder ({} when it says nothing readable)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    @property
    def held(self) -> bool:
        return self._file is not None

    def release(self) -> None:
        """Let the directory go (the lock file stays, emptied first: the next holder writes its
        own record, and a run refused before it does waits for that, not quoting this one)."""
        if self._file is not None:
            try:
                with contextlib.suppress(OSError):
                    self._file.seek(0)
                    self._file.truncate()
                    self._file.flush()
                _unlock(self._file)
            finally:
                self._file.close()
                self._file = None

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def check_lock_file(directory: str | os.PathLike[str], *, what: str = "report directory") -> None:
    """Refuse ``directory`` when its lock file is there and is not a regular file (a directory,
    a FIFO): :class:`DirectoryLock` could not take it. A missing one is made when it is taken.

    Raises:
        ReportError: naming the lock file, what it is and what to do.
    """
    path = Path(directory) / LOCK_FILE
    try:
        mode = os.stat(path).st_mode
    except OSError:  # missing: made; unreadable: the open says why
        return
    if not stat.S_ISREG(mode):
        raise _not_a_file(path, mode, what)


def _not_a_file(path: Path, mode: int, what: str) -> ReportError:
    kind = "a directory" if stat.S_ISDIR(mode) else "a special file (a FIFO, a socket or a device)"
    return ReportError(
        f"{what} {str(path.parent)!r}: its lock file {str(path)!r} is {kind}, not a regular file; move it "
        f"away (the lock file is made again), or use another {what}")


def _holder_text(holder: dict[str, Any]) -> str:
    if not holder:
        return "a process that has not yet said who it is"
    text = f"pid {holder.get('pid', '?')} on host {holder.get('host') or '?'}"
    if holder.get("started"):
        text += f", started {holder['started']}"
    if holder.get("command"):
        text += f": {holder['command']}"
    return text
