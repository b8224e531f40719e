"""The ``ort-layouts`` program's first and last moments, outside :func:`~ort_layouts.frontends.cli.main`.

``python -m ort_layouts`` and the ``ort-layouts`` script import the package (numpy, onnx and
onnxruntime with it: a second or more) before ``main`` runs. From the moment this module has
loaded, about a millisecond into the package's import (:func:`guard_start`, called only when this
interpreter is starting the command line, never for a program that imports the package; a signal
before it, while Python itself starts, is Python's), until ``main`` takes the signals over,
Ctrl-C, SIGTERM and SIGHUP end the process with one line, ``ort-layouts: interrupted`` (or ``terminated
(SIGTERM)``), and exit status 128 + N: nothing has been written yet, and an import traceback
would say nothing the user needs.

After ``main`` returns, :func:`exit_now` ends the process: the exit functions run (children
stopped), then the process exits at once, where Python's own shutdown would take a while with
the signals back at their defaults (a Ctrl-C then ended it with no line at all). A signal that
comes meanwhile lets the exit functions finish, then is said in one line, with what was kept.

The standard library only: it runs before anything else of the package.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import sys
import threading
from typing import Any, NoReturn

__all__ = ["PROG", "STOP_SIGNALS", "exit_now", "guard_start", "hurried", "hurry", "is_python_default",
           "is_start_guard", "starting_command_line", "stop_text"]

PROG = "ort-layouts"
#: the signals that stop the command line (where the platform has them)
STOP_SIGNALS: tuple[int, ...] = tuple(
    s for s in (getattr(signal, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP")) if s is not None)


_HURRY = threading.Event()


def hurry() -> None:
    """Say that the stop under way is to be quick: a stop signal came again while the command
    line stopped (or exited). What waits for a child process to quit kills it at once instead
    (:func:`~ort_layouts.engine.session_process.stop_children`)."""
    _HURRY.set()


def hurried() -> bool:
    """Whether :func:`hurry` was called."""
    return _HURRY.is_set()


def stop_text(signum: int) -> str:
    """What a stop by ``signum`` is called in its line: "interrupted" (Ctrl-C) or
    "terminated (SIGTERM)"."""
    if signum == signal.SIGINT:
        return "interrupted"
    try:
        return f"terminated ({signal.Signals(signum).name})"
    except ValueError:
        return f"terminated (signal {signum})"


def starting_command_line() -> bool:
    """Whether this interpreter is starting the command line: ``python -m ort_layouts`` (while
    the module is looked for, ``sys.argv[0]`` is "-m") or the ``ort-layouts`` script."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 == "-m":
        orig = list(getattr(sys, "orig_argv", []))
        return any((a == "-m" and orig[i + 1:i + 2] == ["ort_layouts"]) or a == "-mort_layouts"
                   for i, a in enumerate(orig))
    name = re.sub(r"(-script\.pyw?|\.exe)?$", "", os.path.basename(argv0))
    return name == PROG


def _write_line(text: str) -> None:
    """``text`` as one line on standard error, as bytes (nothing Python buffers half written)."""
    with contextlib.suppress(OSError, ValueError):
        os.write(2, f"{PROG}: {text}\n".encode("utf-8", "backslashreplace"))


def _end_at_start(signum: int, frame: object) -> None:
    """A stop while the command line starts: one line, exit status 128 + N."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # None: a descriptor closed at start
        sys.stdout.flush()
    _write_line(stop_text(signum))
    os._exit(128 + signum)


def is_start_guard(handler: object) -> bool:
    """Whether ``handler`` is the one :func:`guard_start` sets."""
    return handler is _end_at_start


def is_python_default(signum: int, handler: Any) -> bool:
    """Whether ``handler`` is Python's own for ``signum`` (nothing set by a program)."""
    if signum == signal.SIGINT:
        return handler is signal.default_int_handler
    return handler is signal.SIG_DFL


def guard_start() -> None:
    """From now until :func:`~ort_layouts.frontends.cli.main` takes them over, Ctrl-C, SIGTERM and
    SIGHUP end the process with one line and exit status 128 + N (those that have Python's own
    handler; in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            if is_python_default(sig, signal.getsignal(sig)):
                signal.signal(sig, _end_at_start)


def exit_now(code: int, kept: str | None = None, *, stopped: bool = False) -> NoReturn:
    """End the process with exit status ``code``: standard output and error flushed, the exit
    functions run (worker processes, the DirectML worker, an X server stopped), then at once.

    A stop signal that comes meanwhile is noted, not acted on, until the exit functions are
    done: then one line says it (``kept``: what was kept, e.g. the report complete) and the
    exit status is 128 + N. Another one after it :func:`hurry`-s the exit functions (a child
    that does not quit is killed at once). ``stopped``: the command was stopped by a signal,
    and said so: a stop signal now only hurries them, with no line of its own and ``code``
    kept.
    """
    came: list[int] = []

    def note(signum: int, frame: object) -> None:
        came.append(signum)
        if stopped or len(came) > 1:
            hurry()

    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, note)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # None: a descriptor closed at start
            stream.flush()
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        if came and not stopped:
            _write_line(f"{stop_text(came[0])} as it exited" + (f"; {kept}" if kept else ""))
            code = 128 + came[0]
        os._exit(code)


if starting_command_line():  # the package imports this module first, before numpy, onnx and onnxruntime
    guard_start()
