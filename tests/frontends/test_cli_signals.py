"""Ctrl-C, SIGTERM and SIGHUP sent to a real ``ort-layouts`` process, at each of its moments:
while it starts (the package imports numpy, onnx and onnxruntime), while a run's report is
closed, as the process exits, and a second one while the first stops the run. Each time one
line says what happened and what was kept, never a traceback; the report is complete and
consistent, its directory unlocked, no worker process left.

Each child waits at its moment for the test (a marker file appears, then the test signals), so
no test depends on how fast the machine is.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from ort_layouts.reports.report import JSON_FILE, RESULTS_FILE

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--provider", "cpu", "--ops", "Transpose,Expand", "--dtypes", "float32,int8", "--ranks", "1-3"]
SIGNALS = [pytest.param(signal.SIGINT, id="SIGINT"), pytest.param(signal.SIGTERM, id="SIGTERM")]
LINE_TEXT = {signal.SIGINT: "interrupted", signal.SIGTERM: r"terminated \(SIGTERM\)"}

# waits (in the child) until the test says it has signalled, at most 20 s; wait_in makes a method
# wait so the first time it is called (each patch with names of its own)
WAIT = """
def wait_for_test(marker):
    import os, time
    open(marker + ".here", "w").close()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not os.path.exists(marker + ".go"):
        time.sleep(0.005)

def wait_in(owner, method, marker):
    real = getattr(owner, method)
    waited = []
    def waiting(self, *a, **k):
        if not waited:
            waited.append(True)
            wait_for_test(marker)
        return real(self, *a, **k)
    setattr(owner, method, waiting)
"""


def _env(extra_path: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(p) for p in (extra_path, ROOT) if p is not None]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
    env["CI"] = "true"
    return env


def _wait_for(path: Path, child: subprocess.Popen[bytes]) -> None:
    """Wait until ``path`` exists, the child has ended, or 60 s have passed."""
    deadline = time.monotonic() + 60
    while not path.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)


def _signal_at(child: subprocess.Popen[bytes], marker: Path, signum: int) -> tuple[str, str]:
    """Send ``signum`` once the child is at its marker; its output once it has ended."""
    here = Path(f"{marker}.here")
    _wait_for(here, child)
    try:
        assert here.exists(), "the child never reached its marker"
        child.send_signal(signum)
    finally:
        Path(f"{marker}.go").touch()
        out, err = child.communicate(timeout=60)
    return out.decode(), err.decode()


def _program(code: str, *argv: str) -> subprocess.Popen[bytes]:
    """``code`` run first, then ``python -m ort_layouts ARGV`` (the module as the program)."""
    program = (WAIT + code + "\nimport runpy, sys\n"
               "runpy.run_module('ort_layouts', run_name='__main__', alter_sys=True)\n")
    return subprocess.Popen([sys.executable, "-c", program, *argv], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _run_code(code: str, report: Path, *extra: str) -> subprocess.Popen[bytes]:
    """:func:`_program` of ``validate`` of the small selection into ``report``."""
    return _program(code, "validate", *SMALL, "--progress", "none", "--report", str(report), *extra)


def _complete(report: Path) -> dict[str, object]:
    data = json.loads((report / JSON_FILE).read_text())
    assert data["complete"] is True and data["verdict"] == "pass"
    assert len((report / RESULTS_FILE).read_text().splitlines()) == data["planned_count"]
    return data


def _resumes(report: Path) -> None:
    """The directory is unlocked: a resume of it runs (nothing left to run) and exits 0."""
    done = subprocess.run([sys.executable, "-m", "ort_layouts", "validate", *SMALL, "--progress", "none",
                           "--report", str(report), "--resume"], env=_env(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()


# ---- while it starts -----------------------------------------------------------------------------
# a sitecustomize that holds the start where the package imports onnx
SLOW_IMPORT = WAIT + """
import sys
class _Slow:
    def find_spec(self, name, path=None, target=None):
        if name == "onnx" and "ort_layouts" in sys.modules:
            sys.meta_path.remove(self)
            wait_for_test(MARKER)
        return None
sys.meta_path.insert(0, _Slow())
"""
SCRIPT = """import re
import sys
from ort_layouts.frontends.cli import command_line
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(command_line())
"""


@pytest.mark.parametrize("signum", SIGNALS)
@pytest.mark.parametrize("start", ["python -m", "script"])
def test_a_stop_while_it_starts_is_one_line(tmp_path: Path, start: str, signum: int) -> None:
    """Ctrl-C while the package imports onnx (before main runs) printed the import's
    traceback; SIGTERM ended it with nothing said."""
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "marker"
    (site / "sitecustomize.py").write_text(f"MARKER = {str(marker)!r}\n" + SLOW_IMPORT)
    script = tmp_path / "ort-layouts"  # as the installed console script is written
    script.write_text(SCRIPT)
    program = ["-m", "ort_layouts"] if start == "python -m" else [str(script)]
    child = subprocess.Popen([sys.executable, *program, "validate", *SMALL, "--report", str(tmp_path / "r")],
                             env=_env(site), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    assert re.fullmatch(rf"ort-layouts: {LINE_TEXT[signum]}\n", err), err
    assert out == "" and not (tmp_path / "r").exists()


def test_a_program_that_imports_the_package_keeps_its_own_ctrl_c(tmp_path: Path) -> None:
    """Only the command line's start takes the signals: ``import ort_layouts`` in a program
    leaves Python's Ctrl-C as it was."""
    code = ("import signal, ort_layouts\n"
            "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
            "assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL\n")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()


# ---- once the report is written --------------------------------------------------------------------
@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_once_the_report_is_written_says_it_is_complete(tmp_path: Path, signum: int) -> None:
    """A stop after the run's report is written and its directory let go: it said the results
    were kept and that --resume would go on, of a complete report."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    code = f"""
import ort_layouts.reports.writer as w
real = w.ReportWriter.close
def close(self):
    real(self)
    wait_for_test({str(marker)!r})
w.ReportWriter.close = close
"""
    child = _run_code(code, report)
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    data = _complete(report)
    assert "Traceback" not in err and err.count("ort-layouts:") == 1, err
    assert re.fullmatch(rf"ort-layouts: {LINE_TEXT[signum]}; {data['planned_count']} results kept in "
                        rf"{re.escape(str(report))} \(the report is complete\)", err.strip()), err
    _resumes(report)


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_as_the_process_exits_is_one_line(tmp_path: Path, signum: int) -> None:
    """A stop after main has returned, while the process exits: it ended the process with no line
    at all (SIGTERM), or with a traceback of an exit function and status 0 (Ctrl-C)."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    code = f"""
import atexit
atexit.register(wait_for_test, {str(marker)!r})
"""
    child = _run_code(code, report)
    out, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    data = _complete(report)
    assert "reports:" in out  # the run's own lines came first, whole
    assert "Traceback" not in err and err.count("ort-layouts:") == 1, err
    assert re.fullmatch(rf"ort-layouts: {LINE_TEXT[signum]} as it exited; {data['planned_count']} results "
                        rf"kept in {re.escape(str(report))} \(the report is complete\)", err.strip()), err
    _resumes(report)


# ---- a second stop while the first stops the run ---------------------------------------------------
def _workers(pid: int) -> list[int]:
    return [p.pid for p in psutil.Process(pid).children(recursive=True)]


def _gone(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running, once each has had 10 s to end."""
    procs = []
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            procs.append(psutil.Process(pid))
    _, alive = psutil.wait_procs(procs, timeout=10)
    return [p.pid for p in alive]


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_second_stop_while_the_first_stops_the_run_lets_it_finish(tmp_path: Path, signum: int) -> None:
    """Ctrl-C (or SIGTERM) in the middle of a run spread over worker processes, then another
    while the first is closing the report: the stop goes on, one line says what was kept, the
    worker processes are gone and a resume completes the report."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    code = f"""
import sys, time
import ort_layouts.engine.runner as runner
import ort_layouts.reports.writer as w
real_run = runner.run_cases
def slow(cases, **kwargs):
    callback = kwargs.pop("on_result")
    def on_result(result):
        callback(result)
        time.sleep(0.05)
    return real_run(cases, on_result=on_result, **kwargs)
runner.run_cases = slow
real_close = w.ReportWriter.close
def close(self):
    if sys.exc_info()[1] is not None:  # the stop unwinds
        wait_for_test({str(marker)!r})
    real_close(self)
w.ReportWriter.close = close
"""
    child = _run_code(code, report, "--jobs", "2", "--batch-size", "4")
    results = report / RESULTS_FILE
    deadline = time.monotonic() + 60
    while child.poll() is None and time.monotonic() < deadline:
        if results.is_file() and results.read_bytes().count(b"\n") >= 4:
            break
        time.sleep(0.005)
    workers = _workers(child.pid)
    child.send_signal(signum)
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    assert "Traceback" not in err and err.count("ort-layouts:") == 1, err
    kept = re.fullmatch(rf"ort-layouts: {LINE_TEXT[signum]}; (\d+) results kept in {re.escape(str(report))} "
                        r"\(--resume continues\)", err.strip())
    assert kept, err
    assert len(results.read_text().splitlines()) == int(kept[1])
    data = json.loads((report / JSON_FILE).read_text())
    assert len(data["results"]) == int(kept[1]) and data["complete"] is False
    assert _gone(workers) == []
    _resumes(report)
    _complete(report)


def _lock_free(report: Path) -> bool:
    import fcntl

    with open(report / ".lock", "a+b") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    return True


def _one_line(err: str, signum: int, rest: str) -> None:
    assert "Traceback" not in err and err.count("ort-layouts:") == 1, err
    assert re.fullmatch(rf"ort-layouts: {LINE_TEXT[signum]}; {rest}", err.strip()), err
    assert err == err.lstrip(), "a blank line before the stop's line, in a log that is no terminal"


# ---- before the run's first result -----------------------------------------------------------------
@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_before_the_first_result_closes_the_report(tmp_path: Path, signum: int) -> None:
    """A stop once the report directory was taken, before the run began (the cases planned, the
    session being made): it said only "interrupted", left the writer open (its directory held
    until the process ended) and did not say what the directory held."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    code = _waiting_in("ort_layouts.engine.session", "ValidationSession", "__init__", marker) + f"""
import atexit, os
from ort_layouts.reports.lock import DirectoryLock
def free():  # as the process exits, before the exit ends it: the directory is let go already
    DirectoryLock({str(report)!r}).release()
    open({str(marker)!r} + ".free", "w").close()
atexit.register(free)
"""
    child = _run_code(code, report)
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    _one_line(err, signum, rf"0 results kept in {re.escape(str(report))} \(--resume continues\)")
    assert (tmp_path / "marker.free").exists() and _lock_free(report)
    data = json.loads((report / JSON_FILE).read_text())
    assert data["complete"] is False and data["results"] == []
    _resumes(report)
    _complete(report)


def _waiting_in(module: str, owner: str, method: str, marker: Path) -> str:
    """A child's code that makes ``module.owner.method`` wait for the test's marker the first
    time it is called, then go on (``wait_in`` of :data:`WAIT`)."""
    return f"\nimport {module}\nwait_in({module}.{owner}, {method!r}, {str(marker)!r})\n"


def _while_it_opens(marker: Path) -> str:
    """The child waits in the report writer's first write of the summaries (with meta.json):
    inside the block that writes the directory's start (meta.json, an emptied results.jsonl,
    the summaries) whole, with stops held until it ends."""
    return _waiting_in("ort_layouts.reports.writer", "ReportWriter", "_write_summaries", marker)


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_while_the_report_directory_opens_says_what_it_keeps(tmp_path: Path, signum: int) -> None:
    """A stop while the report writer wrote the directory's start: the stop was acted on as the
    writer's constructor ended, and the line said only "interrupted", not that the report was
    begun and --resume continues it, as a stop a moment later says."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    child = _run_code(_while_it_opens(marker), report)
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    _one_line(err, signum, rf"0 results kept in {re.escape(str(report))} \(--resume continues\)")
    assert _lock_free(report)
    data = json.loads((report / JSON_FILE).read_text())
    assert data["complete"] is False and data["results"] == []
    _resumes(report)
    _complete(report)


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_while_a_complete_report_is_resumed_says_it_is_complete(tmp_path: Path, signum: int) -> None:
    report = tmp_path / "r"
    _resumes(report)  # a whole run (nothing there to resume: a new report)
    planned = _complete(report)["planned_count"]
    marker = tmp_path / "marker"
    child = _run_code(_while_it_opens(marker), report, "--resume")
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    _one_line(err, signum, rf"{planned} results kept in {re.escape(str(report))} \(the report is complete\)")
    assert _lock_free(report)
    _complete(report)


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_while_an_empty_shard_s_report_opens_says_what_it_keeps(tmp_path: Path, signum: int) -> None:
    """A shard that holds no case writes an empty report: a stop as it was written said only
    "interrupted"."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    # Transpose in float32 at rank 1: 5 cases (as test_cli_empty_shard's), none in shard 7 of 7
    child = _program(_while_it_opens(marker), "validate", "--provider", "cpu", "--ops",
                     "Transpose", "--ranks", "1", "--dtypes", "float32", "--progress", "none",
                     "--shard", "7/7", "--report", str(report))
    out, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    shard = report / "shard-7-of-7"
    _one_line(err, signum, rf"0 results kept in {re.escape(str(shard))} \(the report is complete\)")
    assert out == "" and _lock_free(shard)
    data = json.loads((shard / JSON_FILE).read_text())
    assert data["complete"] is True and data["results"] == [] and data["planned_count"] == 0


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_before_the_report_directory_is_begun_says_nothing_is_written(tmp_path: Path,
                                                                           signum: int) -> None:
    """A stop as the writer took the directory, before it wrote anything: it said only
    "interrupted"."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    child = _run_code(_waiting_in("ort_layouts.reports.writer", "ReportWriter", "_open", marker), report)
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    _one_line(err, signum, rf"nothing written in {re.escape(str(report))} \(this run's report not begun\)")
    assert sorted(p.name for p in report.iterdir()) == [".lock"] and _lock_free(report)
    _resumes(report)
    _complete(report)


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_while_the_workers_start_stops_them(tmp_path: Path, signum: int) -> None:
    """A stop while the worker processes of a --jobs 2 run import: one line, the workers gone."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    child = _run_code(_waiting_in("ort_layouts.engine.parallel", "_Worker", "wait_ready", marker), report,
                      "--jobs", "2")
    _wait_for(Path(f"{marker}.here"), child)
    workers = _workers(child.pid)
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    _one_line(err, signum, rf"0 results kept in {re.escape(str(report))} \(--resume continues\)")
    assert len(workers) == 2 and _gone(workers) == []
    _resumes(report)
    _complete(report)


# ---- a stop whose clean-up hangs ------------------------------------------------------------------
@pytest.mark.parametrize("signum", SIGNALS)
def test_a_repeated_stop_ends_a_clean_up_that_hangs(tmp_path: Path, signum: int) -> None:
    """Worker processes that never say they are ready, nor quit, nor end on SIGINT or SIGTERM: a
    stop, then another while the process exits. The workers were asked to quit one after the
    other, 5 s each, whatever came meanwhile, and the second stop printed a second line."""
    report = tmp_path / "r"
    marker = tmp_path / "marker"
    hung = ("import signal, time; "
            "[signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)]; "
            f"open({str(marker)!r} + '.here', 'w').close(); time.sleep(60)")
    code = f"""
import ort_layouts.engine.parallel as p
p._WORKER_CODE = {hung!r}
real = p._POOL._close
def close(pool):  # as the process exits
    open({str(marker)!r} + ".exiting", "w").close()
    real(pool)
p._POOL._close = close
"""
    child = _run_code(code, report, "--jobs", "2")
    _wait_for(Path(f"{marker}.here"), child)
    time.sleep(0.2)  # both workers started (the second a moment after the first)
    workers = _workers(child.pid)
    child.send_signal(signum)
    exiting = Path(f"{marker}.exiting")
    _wait_for(exiting, child)
    assert exiting.exists(), "the process never stopped its workers"
    stopped = time.monotonic()
    child.send_signal(signum)
    err = child.communicate(timeout=60)[1].decode()
    assert time.monotonic() - stopped < 3, "the second stop did not hurry the exit"
    assert child.returncode == 128 + signum, err
    _one_line(err, signum, rf"0 results kept in {re.escape(str(report))} \(--resume continues\)")
    assert len(workers) == 2 and _gone(workers) == []
    assert _lock_free(report)


# ---- merge and export ------------------------------------------------------------------------------
def _shards(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    for k in (1, 2):
        done = subprocess.run([sys.executable, "-m", "ort_layouts", "validate", *SMALL, "--progress", "none",
                               "--report", str(runs), "--shard", f"{k}/2"], env=_env(), capture_output=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr.decode()
    return runs


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_while_shards_merge_leaves_an_incomplete_report_said_so(tmp_path: Path, signum: int) -> None:
    """A stop while merge --shards adds the shards' results: the merged report's summaries said
    it held none (results.jsonl held some), and the line did not say what was left."""
    runs = _shards(tmp_path)
    marker = tmp_path / "marker"
    code = f"""
import ort_layouts.reports.writer as w
real = w.ReportWriter.add
added = []
def add(self, result):
    added.append(result)
    if len(added) == 20:
        wait_for_test({str(marker)!r})
    real(self, result)
w.ReportWriter.add = add
"""
    child = _program(code, "merge", "--shards", str(runs))
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    data = json.loads((runs / JSON_FILE).read_text())
    count = len((runs / RESULTS_FILE).read_text().splitlines())
    assert data["complete"] is False and len(data["results"]) == count < data["planned_count"]
    assert not (runs / "shards.json").exists()
    _one_line(err, signum, rf"the merged report in {re.escape(str(runs))} is incomplete \({count} of "
                           rf"{data['planned_count']} results\): merge again")
    assert _lock_free(runs)
    done = subprocess.run([sys.executable, "-m", "ort_layouts", "merge", "--shards", str(runs)], env=_env(),
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    _complete(runs)
    assert (runs / "shards.json").is_file()


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_as_a_merge_finishes_keeps_its_listing(tmp_path: Path, signum: int) -> None:
    """A stop once the merged report's summaries were written whole, before shards.json: it was
    left without its listing of the shards."""
    runs = _shards(tmp_path)
    marker = tmp_path / "marker"
    code = f"""
import ort_layouts.reports.merge as m
real = m.atomic_write_text
def write(path, text):
    wait_for_test({str(marker)!r})
    real(path, text)
m.atomic_write_text = write
"""
    child = _program(code, "merge", "--shards", str(runs))
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    data = _complete(runs)
    assert (runs / "shards.json").is_file()
    _one_line(err, signum, rf"the merged report in {re.escape(str(runs))} is complete "
                           rf"\({data['planned_count']} results\)")


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_stop_while_it_exports_leaves_the_earlier_export(tmp_path: Path, signum: int) -> None:
    """A stop while export --force writes its test directories: the earlier export is left as
    it was, and one line says so."""
    out = tmp_path / "e"
    first = subprocess.run([sys.executable, "-m", "ort_layouts", "export", "--ops", "Expand", "--dtypes",
                            "int8", "--ranks", "1", "--out", str(out)], env=_env(), capture_output=True,
                           timeout=60)
    assert first.returncode == 0, first.stderr.decode()
    before = sorted(p.name for p in out.iterdir())
    marker = tmp_path / "marker"
    code = f"""
import ort_layouts.models.testdata as t
real = t.write_test_dir
written = []
def write(*a, **k):
    written.append(1)
    if len(written) == 3:
        wait_for_test({str(marker)!r})
    return real(*a, **k)
t.write_test_dir = write
"""
    child = _program(code, "export", "--ops", "Transpose", "--dtypes", "float32", "--ranks", "1-2", "--force",
                     "--out", str(out))
    _, err = _signal_at(child, marker, signum)
    assert child.returncode == 128 + signum, err
    _one_line(err, signum, rf"nothing exported \({re.escape(str(out))} as it was\)")
    assert sorted(p.name for p in out.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")) == []


@pytest.mark.parametrize(("tty", "mid_line", "start"), [(True, False, "\n"), (False, True, "\n"),
                                                        (False, False, "")])
def test_the_stop_s_line_starts_a_new_line_only_after_a_terminal_s_echo_or_a_bar(
        monkeypatch: pytest.MonkeyPatch, tty: bool, mid_line: bool, start: str) -> None:
    """On a terminal the ``^C`` echo (or a progress bar) is ended first; in a log the line
    follows what was written, with no blank line."""
    from ort_layouts.frontends import cli

    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    stream = Stream()
    monkeypatch.setattr(sys, "stderr", stream)
    with pytest.raises(KeyboardInterrupt):
        cli._stopped(KeyboardInterrupt(), "nothing kept", mid_line=mid_line)
    assert stream.getvalue() == f"{start}ort-layouts: interrupted; nothing kept\n"
