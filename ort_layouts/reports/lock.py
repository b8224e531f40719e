"""A report directory belongs to one run at a time: an exclusive lock on its ``.lock`` file.

The lock is the operating system's (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows),
taken without waiting and held while the run writes; it goes when the run ends, and with the
process if that is killed, so a crash leaves no stale lock behind. The file itself stays and
holds the last holder's pid, host, command and start time as JSON, which a refused run quotes.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import IO, Any

from ort_layouts._errors import ReportError

__all__ = ["LOCK_FILE", "DirectoryLock"]

LOCK_FILE = ".lock"
_WINDOWS_LOCK_OFFSET = 1 << 20  # msvcrt locks a byte range; one past the holder's text


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
    """The exclusive lock of a report directory, taken at once or refused.

    Args:
        directory: the report directory (it must exist).
        command: the command line of the run that takes it, quoted to a refused run.
        started: when that run started (ISO 8601).

    Raises:
        ReportError: another process holds the directory; the message names its pid, host,
            command and start time.
    """

    def __init__(self, directory: str | os.PathLike[str], *, command: str = "", started: str = "") -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILE
        self._file: IO[bytes] | None = open(self.path, "a+b")  # noqa: SIM115 - closed in release()
        if not _try_lock(self._file):
            holder = self._wait_for_holder()
            self._file.close()
            self._file = None
            raise ReportError(
                f"report directory {str(self.directory)!r} is in use by another run: {_holder_text(holder)}; "
                "wait for it to end, or use another report directory")
        self.info: dict[str, Any] = {"pid": os.getpid(), "host": platform.node(), "command": command,
                                     "started": started}
        self._file.seek(0)
        self._file.truncate()
        self._file.write(json.dumps(self.info).encode("utf-8") + b"\n")
        self._file.flush()

    def _wait_for_holder(self, timeout_s: float = 2.0) -> dict[str, Any]:
        """The holder's record, waiting up to ``timeout_s`` for it: a run writes it just after
        taking the lock, so a run refused in between would otherwise find the file empty."""
        deadline = time.monotonic() + timeout_s
        holder = self.holder()
        while not holder and time.monotonic() < deadline:
            time.sleep(0.02)
            holder = self.holder()
        return holder

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
        """Let the directory go (the lock file stays, naming its last holder)."""
        if self._file is not None:
            try:
                _unlock(self._file)
            finally:
                self._file.close()
                self._file = None

    def __enter__(self) -> DirectoryLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder_text(holder: dict[str, Any]) -> str:
    if not holder:
        return "a process that has not yet said who it is"
    text = f"pid {holder.get('pid', '?')} on host {holder.get('host') or '?'}"
    if holder.get("started"):
        text += f", started {holder['started']}"
    if holder.get("command"):
        text += f": {holder['command']}"
    return text
