"""A run spread over worker processes gives the results of a one-process run, survives a
worker's death, and keeps to the run's contracts (on_result in the calling thread, re-run
budget, typed errors)."""

from __future__ import annotations

import collections
import functools
import operator
import os
import pickle
import re
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from ort_layouts._errors import ArgumentError, ProviderError
from ort_layouts.engine import parallel
from ort_layouts.engine import runner as _runner
from ort_layouts.engine import session_process as session_process_module
from ort_layouts.engine import suite as suite_module
from ort_layouts.engine.parallel import MAX_JOBS, Budget, WorkerProcessError, _Worker, usable_cores
from ort_layouts.engine.providers import CPU, DML, ProviderConfig
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.runner import PROCESS_MIN_CASES, UnitRequest, resolve_jobs, run_cases
from ort_layouts.engine.suite import is_edge_case, standard_suite
from ort_layouts.operators.case import Case

# a sample with several ops, data types, edge cases and a case no CPU kernel takes
CASES = [*standard_suite(ops=["Transpose", "Pad", "Split", "Expand"], dtypes=["float16", "int8"],
                         ranks=[0, 1, 2]),
         Case("Pad", "int16", (2, 3), pads=(0, 1, 0, 1), opset=25)]


def _without_seconds(result: CaseResult) -> dict[str, Any]:
    data = result.to_dict()
    data.pop("seconds")
    return data


@pytest.fixture(scope="module")
def one_process() -> list[dict[str, Any]]:
    return [_without_seconds(r) for r in run_cases(CASES, provider="cpu", jobs=1)]


def _call_killed(worker: _Worker, request: tuple[Any, ...], real: Any) -> tuple[Any, ...]:
    """``real(worker, request)`` on the worker's process killed first (and not started again for
    this call), as if it had died under the request."""
    proc = worker.ensure()
    assert worker._stderr is not None
    worker._stderr.write(b"a line before\nfatal: boom\n")  # its standard error, as a crash leaves it
    worker._stderr.flush()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    worker.ensure = lambda: proc  # type: ignore[method-assign]
    try:
        return real(worker, request)  # type: ignore[no-any-return]
    finally:
        del worker.ensure


def test_two_workers_give_the_results_of_one_process(one_process: list[dict[str, Any]]) -> None:
    seen: list[tuple[CaseResult, int]] = []
    results = run_cases(CASES, provider="cpu", jobs=2, batch_size=16,
                        on_result=lambda r: seen.append((r, threading.get_ident())))
    assert [_without_seconds(r) for r in results] == one_process
    assert all(r.case is c for r, c in zip(results, CASES, strict=True))  # this process's own cases
    assert sorted(id(r) for r, _ in seen) == sorted(id(r) for r in results)  # each result once
    assert {t for _, t in seen} == {threading.get_ident()}  # always from the calling thread
    assert results[-1].status == Status.UNSUPPORTED and "Pad(25)" in results[-1].message
    assert len(parallel.worker_pids()) >= 2


def test_a_worker_killed_under_a_unit_costs_no_result(monkeypatch: pytest.MonkeyPatch,
                                                      one_process: list[dict[str, Any]]) -> None:
    real = _Worker.call
    sent: list[list[Case]] = []
    killed: list[list[Case]] = []
    lock = threading.Lock()

    def call(self: _Worker, request: tuple[Any, ...]) -> tuple[Any, ...]:
        with lock:
            sent.append(list(request[1].cases))
            # the first unit of several cases: its worker dies
            kill = not killed and len(request[1].cases) > 1
            if kill:
                killed.append(list(request[1].cases))
        return _call_killed(self, request, real) if kill else real(self, request)

    monkeypatch.setattr(_Worker, "call", call)
    results = run_cases(CASES, provider="cpu", jobs=2, batch_size=16)
    assert [_without_seconds(r) for r in results] == one_process
    assert killed and all([case] in sent for case in killed[0])  # the lost unit went back one case at a time


def test_a_case_that_kills_its_worker_is_an_error_and_the_rest_run(
        monkeypatch: pytest.MonkeyPatch, one_process: list[dict[str, Any]]) -> None:
    deadly = CASES[5]
    real = _Worker.call

    def call(self: _Worker, request: tuple[Any, ...]) -> tuple[Any, ...]:
        if any(c == deadly for c in request[1].cases):  # as a native crash on this case would
            return _call_killed(self, request, real)
        return real(self, request)

    monkeypatch.setattr(_Worker, "call", call)
    results = run_cases(CASES, provider="cpu", jobs=2, batch_size=16)
    assert results[5].status == Status.ERROR
    assert results[5].message.startswith("the worker process died (exit status -9)")
    assert results[5].message.endswith("; its last words: fatal: boom")  # the last line of its stderr
    others = [_without_seconds(r) for k, r in enumerate(results) if k != 5]
    assert others == [d for k, d in enumerate(one_process) if k != 5]


def _request(cases: list[Case], *, batch_size: int = 1, inputs: Any = None, device: str = "",
             encode: Any = None) -> UnitRequest:
    """A unit's request on the CPU EP, lent no diagnosis re-run."""
    return UnitRequest(ProviderConfig(CPU), batch_size, cases, inputs, 0, device, encode)


def test_a_worker_that_raises_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = "Traceback (most recent call last)"
    monkeypatch.setattr(_Worker, "call", lambda self, request: ("error", "RuntimeError: boom", trace))
    with pytest.raises(WorkerProcessError) as raised:
        run_cases(CASES, provider="cpu", jobs=2)
    # the error itself is one line (the CLI's); the traceback is a note under it
    one_line = r"a worker process failed while it ran \d+ cases: RuntimeError: boom"
    assert re.fullmatch(one_line, str(raised.value))
    assert raised.value.worker_traceback == trace
    assert raised.value.__notes__ == ["in the worker process:\n" + trace]  # under its own traceback


def test_the_worker_itself_reports_what_raised() -> None:
    worker = _Worker()
    try:
        # inputs that are no mapping: a fault of the harness, raised by the unit (not a case's error)
        reply = worker.call(("run", _request(CASES[:1], inputs=5)))
        assert reply[0] == "error" and reply[1].startswith("TypeError: ")
        assert "'int'" in reply[1] and "\n" not in reply[1]  # one line: the CLI's
        assert reply[2].startswith("Traceback (most recent call last)") and "TypeError" in reply[2]
        # it goes on
        each_repr = functools.partial(map, repr)
        ok = worker.call(("run", _request(CASES[:3], batch_size=4, device="a device",
                                              encode=pickle.dumps(each_repr))))
        assert ok[0] == "ok" and len(ok[1]) == 3 and ok[2] == 0
        for text, case, values in zip(ok[3], CASES[:3], ok[1], strict=True):  # encode ran there
            assert text.startswith(f"CaseResult(case={case!r}, status={values[0]!r}, provider='{CPU}', "
                                   "device='a device', ")  # on results that name the given device
    finally:
        worker.stop()


class _LoadsAsABadInt:
    """Pickles here, and raises when a worker loads it (``int("not a number")``)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return int, ("not a number",)


def test_a_request_the_worker_cannot_read_is_its_error_and_it_exits() -> None:
    worker = _Worker()
    try:
        proc = worker.ensure()
        reply = worker.call(("run", _request(CASES[:1], encode=_LoadsAsABadInt())))
        assert reply[0] == "error"
        assert reply[1].startswith("the worker process could not read its request: "
                                   "ValueError: invalid literal")
        assert "\n" not in reply[1] and "Traceback" in reply[2]
        assert proc.wait(timeout=10) == 0  # it exits (the rest of its input is not a request)
        ok = worker.call(("run", _request(CASES[:1])))  # a new one
        assert ok[0] == "ok" and worker.pid not in (None, proc.pid)
    finally:
        worker.stop()


def test_a_request_the_workers_cannot_read_fails_the_run_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # a request itself unreadable there (not an encode apart from it): each worker reads a bad int
    monkeypatch.setattr(_runner, "pickled_for_workers", lambda value: _LoadsAsABadInt())
    with pytest.raises(WorkerProcessError, match="could not read its request: ValueError: invalid literal"):
        run_cases(CASES, provider="cpu", jobs=2, encode=len, on_encoded=lambda pairs: None)
    assert len(run_cases(CASES[:40], provider="cpu", jobs=2)) == 40  # the next run works


class _Local:
    def __call__(self, results: list[CaseResult]) -> list[str]:
        return [f"{r.case.id}:{r.status.value}" for r in results]


@pytest.mark.parametrize("encode", [lambda rs: [f"{r.case.id}:{r.status.value}" for r in rs], _Local()],
                         ids=["lambda", "class of __main__"])
def test_an_encode_the_workers_cannot_load_runs_here_and_the_run_stays_spread(
        monkeypatch: pytest.MonkeyPatch, encode: Any) -> None:
    if isinstance(encode, _Local):  # as a script's own class is
        monkeypatch.setattr(_Local, "__module__", "__main__")
    sent: list[Any] = []
    real_run_units = _runner.run_units

    def spy(units: Any, request: Any, jobs: int) -> Any:
        def recorded(unit: Any) -> Any:
            made = request(unit)
            sent.append(made[1].encode)
            return made
        return real_run_units(units, recorded, jobs)

    monkeypatch.setattr(_runner, "run_units", spy)
    here_pid = os.getpid()
    pairs: list[tuple[CaseResult, Any]] = []
    made_in: list[int] = []

    def on_encoded(group: list[tuple[CaseResult, Any]]) -> None:
        made_in.append(os.getpid())
        pairs.extend(group)

    results = run_cases(CASES, provider="cpu", jobs=2, batch_size=16, encode=encode, on_encoded=on_encoded)
    assert sent and all(value is None for value in sent)  # the workers were sent no encode
    assert len(made_in) == len(sent) < len(CASES)  # one group a unit, as with a picklable encode
    assert sorted(id(r) for r, _ in pairs) == sorted(id(r) for r in results)
    assert all(value == f"{r.case.id}:{r.status.value}" for r, value in pairs)
    assert set(made_in) == {here_pid}


def test_an_error_in_on_result_stops_the_run_and_the_next_works(one_process: list[dict[str, Any]]) -> None:
    def explode(result: CaseResult) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run_cases(CASES, provider="cpu", jobs=2, batch_size=16, on_result=explode)
    results = run_cases(CASES, provider="cpu", jobs=2, batch_size=16)
    assert [_without_seconds(r) for r in results] == one_process


def _batches(run: Any, cases: list[Case], batch_size: int, keys: list[int]) -> list[tuple[int, ...]]:
    """The batches the one-process runner cuts ``cases`` into, as tuples of ``keys``."""
    return [tuple(keys[k] for k, _ in chunk) for chunk in _runner._chunks(run, cases, batch_size)]


# a suite's sample with large groups (one op and data type), edge cases among them, a case whose
# preparation fails and cases of another opset
UNIT_CASES = [*standard_suite(ops=["Transpose", "Pad", "Slice"], dtypes=["float32", "int8"],
                              ranks=[0, 1, 2, 3]),
              Case("Pad", "int16", (2, 3), pads=(0, 1, 0, 1), opset=25),
              Case("Pad", "float32", (2, 3), pads=(0, 1, 0, 1), opset=11)]


@pytest.mark.parametrize(("jobs", "batch_size"), [(1, 256), (2, 16), (2, 256), (3, 7), (8, 1), (8, 64)])
def test_units_cut_the_batches_this_process_would(monkeypatch: pytest.MonkeyPatch, jobs: int,
                                                   batch_size: int) -> None:
    cases = list(UNIT_CASES)
    # a case that passed its own checks, but whose shapes cannot be found: its worker reports it
    failing = _failing_for(cases[3])
    monkeypatch.setattr(_runner, "operator_for_type", failing)
    monkeypatch.setattr(suite_module, "operator_for_type", failing)  # is_edge_case's, in _units
    edge_checked: list[Case] = []

    def counted(case: Case) -> bool:
        edge_checked.append(case)
        return is_edge_case(case)

    monkeypatch.setattr(_runner, "is_edge_case", counted)
    run = _runner._new_run("cpu", 0, None, False, None)
    units = _runner._units(run, cases, jobs, batch_size)
    # only the cases of a group too large for one unit are looked at in this process
    target = max(1, len(cases) // (8 * jobs))
    sizes = collections.Counter(_runner._group_key(run, c) for c in cases)
    assert all(sizes[_runner._group_key(run, c)] > target for c in edge_checked)
    assert len(edge_checked) == sum(n for n in sizes.values() if n > target)
    assert {size for _, size in units} == {batch_size}
    keys = [k for unit_keys, _ in units for k in unit_keys]
    assert sorted(keys) == list(range(len(cases)))  # each case once
    whole = _batches(run, cases, batch_size, list(range(len(cases))))
    cut = [b for unit_keys, _ in units
           for b in _batches(run, [cases[k] for k in unit_keys], batch_size, unit_keys)]
    assert sorted(cut) == sorted(whole)  # the same batches, each in one unit
    target = len(cases) // (8 * jobs)
    assert all(len(k) >= target for k, _ in units[:-1])  # about eight units a worker, at most
    if jobs > 1:
        assert len(units) > 1


def _failing_for(bad: Case) -> Any:
    real = _runner.operator_for_type

    def operator_for_type(op: str) -> Any:
        operator = real(op)
        if op != bad.op:
            return operator

        class Failing(type(operator)):  # type: ignore[misc]
            def input_shapes(self, case: Case) -> Any:
                if case == bad:
                    raise ValueError("no shapes")
                return super().input_shapes(case)

        return Failing()

    return operator_for_type


def test_the_rerun_budget_is_never_overspent() -> None:
    budget = Budget(10, 4)
    lent = [budget.lend() for _ in range(4)]
    assert lent == [4, 4, 2, 0]
    budget.repay(3)  # a unit used 1 of its 4
    assert budget.lend() == 3 and budget.left == 0


def test_resolve_jobs() -> None:
    assert resolve_jobs(None, CPU, PROCESS_MIN_CASES) == min(usable_cores(), MAX_JOBS)
    assert resolve_jobs(None, CPU, PROCESS_MIN_CASES - 1) == 1
    assert resolve_jobs(None, "WebGpuExecutionProvider", 10**6) == min(usable_cores(), MAX_JOBS)
    assert resolve_jobs(None, "WebGpuExecutionProvider", PROCESS_MIN_CASES - 1) == 1
    assert resolve_jobs(None, "CUDAExecutionProvider", 10**6) == 1
    assert resolve_jobs(None, DML, 10**6) == 1
    assert resolve_jobs(3, CPU, 1) == 3 and resolve_jobs(1, DML, 10**6) == 1
    for bad in (0, -1, True, 2.0, "2"):
        with pytest.raises(ValueError, match=f"jobs {bad!r} is not valid; valid: an int >= 1"):
            resolve_jobs(bad, CPU, 1)  # type: ignore[arg-type]
    with pytest.raises(ProviderError, match=r"jobs 2 is not valid on DmlExecutionProvider.*valid: 1"):
        resolve_jobs(2, DML, 1)


@pytest.mark.usefixtures("no_work")
def test_a_bad_jobs_is_refused_before_any_work() -> None:
    with pytest.raises(ValueError, match="jobs 0 is not valid"):
        run_cases(CASES, provider="cpu", jobs=0)


def test_a_run_whose_workers_cannot_start_stays_in_this_process(monkeypatch: pytest.MonkeyPatch,
                                                                one_process: list[dict[str, Any]]) -> None:
    def refuse(count: int) -> None:
        raise OSError("no Python executable")

    monkeypatch.setattr(_runner, "start_workers", refuse)
    monkeypatch.setattr(_runner, "_run_parallel", lambda *a: pytest.fail("ran on workers"))
    results = run_cases(CASES, provider="cpu", jobs=2)
    assert [_without_seconds(r) for r in results] == one_process


def test_a_forked_process_starts_its_own_workers() -> None:
    parallel.start_workers(1)
    pid = os.fork()
    if pid == 0:  # the child: no handle on the parent's workers
        os._exit(0 if parallel._POOL.value is None and parallel.worker_pids() == [] else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_readme_says_when_and_how_many_workers_a_run_takes() -> None:
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    words = {1: "one", 2: "two", 4: "four", 8: "8"}
    assert (f"on the CPU EP a run of {PROCESS_MIN_CASES:,} cases or more (a standard-suite validation) is "
            f"spread over worker processes, one per usable processor up to {words[MAX_JOBS]}") in readme


@pytest.mark.parametrize("jobs", [1, 2])
def test_encode_runs_where_the_results_are_made(jobs: int) -> None:
    """on_encoded takes the results that arrived together (a batch's in this process, a unit
    from a worker), each with encode's value made of that very result; on_result then sees each
    of them, in the same order, before the next on_encoded."""
    calls: list[tuple[str, Any]] = []
    results = run_cases(CASES, provider="cpu", jobs=jobs, batch_size=16, encode=functools.partial(map, repr),
                        on_encoded=lambda pairs: calls.append(("encoded", list(pairs))),
                        on_result=lambda r: calls.append(("result", r)))
    waiting: list[CaseResult] = []
    sizes = []
    for kind, value in calls:
        if kind == "encoded":
            assert waiting == []  # the results of the last call were all handed on first
            assert [e for _, e in value] == [repr(r) for r, _ in value]  # of the very result
            waiting = [r for r, _ in value]
            sizes.append(len(value))
        else:
            assert value is waiting.pop(0)
    assert waiting == []
    assert sum(sizes) == len(CASES) == len(results)
    assert {id(r) for kind, r in calls if kind == "result"} == {id(r) for r in results}
    if jobs == 1:  # a batch's results together: at most batch_size, several at once
        assert max(sizes) <= 16 and max(sizes) > 1 and len(sizes) < len(CASES)
    else:  # a unit's results together: fewer calls than results
        assert len(sizes) < len(CASES) and max(sizes) > 1


def test_an_encode_that_makes_another_number_of_values_fails_the_run() -> None:
    one_short = operator.itemgetter(slice(1, None))  # results[1:]; sent to workers as it is
    with pytest.raises(ValueError, match=r"^encode made 0 values of 1 results; valid: one value a result$"):
        run_cases(CASES[:2], provider="cpu", jobs=1, encode=one_short, on_encoded=lambda pairs: None)
    with pytest.raises(WorkerProcessError, match=r"encode made [0-9]+ values of [0-9]+ results; valid: one"):
        run_cases(CASES, provider="cpu", jobs=2, encode=one_short, on_encoded=lambda pairs: None)


def test_an_encode_that_makes_no_iterable_fails_the_run_naming_what_it_made() -> None:
    with pytest.raises(ArgumentError, match=r"^encode made None of 1 results, which is no iterable; valid: "
                                            r"an iterable of one value a result$"):
        run_cases(CASES[:1], provider="cpu", jobs=1, encode=_makes_none, on_encoded=lambda pairs: None)


def _makes_none(results: Any) -> None:
    return None


def test_encode_and_on_encoded_go_together() -> None:
    for kwargs in ({"encode": repr}, {"on_encoded": lambda pairs: None}):
        with pytest.raises(ValueError, match="encode and on_encoded go together"):
            run_cases(CASES[:1], provider="cpu", **kwargs)  # type: ignore[arg-type]


def test_a_validation_on_workers_writes_the_lines_this_process_would(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.engine.session import ValidationSession, validation_meta
    from ort_layouts.reports.report import RESULTS_FILE
    from ort_layouts.reports.writer import ReportWriter, ResultEncoder, result_line

    meta = validation_meta(provider=CPU, command="test")
    writer = ReportWriter(tmp_path, meta=meta, planned=[c.id for c in CASES])
    encoded: list[int] = []
    real = ReportWriter.add_encoded_all
    # every result comes with what the workers made of it: none is encoded here
    monkeypatch.setattr(ResultEncoder, "__call__", lambda self, rs: pytest.fail("encoded in this process"))
    writer.add = lambda result: pytest.fail("a result was added without its report pieces")  # type: ignore[method-assign]
    writer.add_encoded_all = lambda pairs: (encoded.append(len(pairs)), real(writer, pairs))[1]  # type: ignore[method-assign]
    outcome = ValidationSession(CASES, provider="cpu", writer=writer, device=meta["device"], jobs=2,
                                batch_size=16).run()
    assert [r.case for r in outcome.results] != CASES  # they arrived out of planned order
    assert sorted(outcome.results, key=lambda r: CASES.index(r.case)) == list(writer.results)
    assert (tmp_path / RESULTS_FILE).read_bytes() == b"".join(map(result_line, writer.results))
    assert sum(encoded) == len(CASES) and len(encoded) < len(CASES)  # a unit's results at once


def test_each_unit_is_lent_a_share_of_the_runs_reruns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit's request lends it at most RERUN_LIMIT // jobs diagnosis re-runs, and what it did
    not use is paid back (Budget) and lent again."""
    real = _runner.run_units
    settled: list[tuple[int, int]] = []  # (lent, used) of each unit that came back

    def counting(*args: Any) -> Any:
        for unit, request, reply in real(*args):
            settled.append((request[1].rerun_budget, reply[2] if reply[0] == "ok" else 0))
            yield unit, request, reply

    monkeypatch.setattr(_runner, "run_units", counting)
    monkeypatch.setattr(_runner, "RERUN_LIMIT", 5)
    run_cases(CASES, provider="cpu", jobs=2, batch_size=4)
    assert len(settled) >= 4
    lent = [lent for lent, _ in settled]
    assert max(lent) == 2  # 5 // 2, or what is left while other units hold theirs
    assert all(used == 0 for _, used in settled)  # nothing was re-run: all paid back
    assert sum(lent) > 5  # the units together were lent more than the run has: what came back was lent again


@pytest.mark.parametrize("code", ["import sys; sys.exit(3)", "print('not a worker')",
                                  "import sys, pickle; pickle.dump(('hello',), sys.stdout.buffer)"])
def test_workers_that_do_not_start_leave_the_run_in_this_process(
        monkeypatch: pytest.MonkeyPatch, one_process: list[dict[str, Any]], code: str) -> None:
    """As when ``sys.executable`` is not a Python that can import the package: a worker that
    dies, or says anything but that it is ready, is not started."""
    monkeypatch.setattr(parallel._POOL, "value", None)  # a pool of its own (the shared one comes back after)
    monkeypatch.setattr(parallel, "_WORKER_CODE", code)
    with pytest.raises(OSError, match=r"the worker process (died .* as it started|did not start: it said)"):
        parallel.start_workers(2)
    results = run_cases(CASES, provider="cpu", jobs=2)
    assert [_without_seconds(r) for r in results] == one_process
    assert parallel.worker_pids() == []


def test_a_worker_left_unheard_when_another_failed_to_start_is_heard_before_its_first_unit(
        monkeypatch: pytest.MonkeyPatch, one_process: list[dict[str, Any]]) -> None:
    """The first worker fails to say it is ready, so the run stays in this process; the second
    was started and said so too, unread. The next run must read that before its first reply,
    or every reply would land on the unit before it."""
    monkeypatch.setattr(parallel._POOL, "value", None)  # a pool of its own
    real = parallel.wait_ready
    calls: list[int] = []

    def first_fails(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("the worker process did not start: injected")
        real(*args, **kwargs)

    monkeypatch.setattr(parallel, "wait_ready", first_fails)
    try:
        assert [_without_seconds(r) for r in run_cases(CASES, provider="cpu", jobs=2)] == one_process
        assert len(parallel.worker_pids()) == 1  # the unheard one is still running
        results = run_cases(CASES, provider="cpu", jobs=2, batch_size=16)
        assert [_without_seconds(r) for r in results] == one_process
        assert len(parallel.worker_pids()) == 2
    finally:
        parallel._pool().close()


def test_a_reply_of_another_kind_is_a_died_worker_not_a_dropped_unit() -> None:
    worker = _Worker()
    worker.start()
    worker._ready = True  # as if its ready message had been read: the next reply read is that message
    with pytest.raises(parallel._WorkerDied, match=r"unexpected reply 'ready'"):
        worker.call(("quit",))
    assert worker.pid is None  # stopped, to be started again on next use


def test_the_workers_are_kept_for_the_next_run() -> None:
    run_cases(CASES, provider="cpu", jobs=2)
    first = parallel.worker_pids()
    assert len(first) >= 2
    run_cases(CASES, provider="cpu", jobs=2)
    assert parallel.worker_pids() == first  # the same processes, not started again


def test_a_unit_interrupted_before_its_reply_is_read_stops_the_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.engine.test_session_process import _InterruptedLoad

    worker = _Worker()
    try:
        first = worker.ensure().pid
        monkeypatch.setattr(session_process_module, "pickle", _InterruptedLoad())
        with pytest.raises(KeyboardInterrupt):
            worker.call(("run", _request(CASES[:1])))
        assert worker.pid is None  # its reply unread: stopped, not asked again
        reply = worker.call(("run", _request(CASES[1:4], batch_size=4)))
        assert reply[0] == "ok" and len(reply[1]) == 3 and worker.pid not in (None, first)
        assert [values[0] for values in reply[1]] == [r.status for r in run_cases(CASES[1:4], jobs=1)]
    finally:
        worker.stop()


def test_an_encode_from_a_module_the_workers_cannot_import_runs_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It pickles (by reference to its module), but the workers' path lacks that module: it is
    made in this process instead of failing the run."""
    (tmp_path / "encode_beside_the_script.py").write_text(
        "import os\n\n\ndef encode(results):\n    return [(r.case.id, os.getpid()) for r in results]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import encode_beside_the_script as module  # type: ignore[import-not-found]

    pairs: list[tuple[CaseResult, Any]] = []
    results = run_cases(CASES, provider="cpu", jobs=2, batch_size=16, encode=module.encode,
                        on_encoded=pairs.extend)
    assert sorted(id(r) for r, _ in pairs) == sorted(id(r) for r in results)
    assert all(value == (r.case.id, os.getpid()) for r, value in pairs)


def test_a_run_on_workers_started_from_on_result_of_one_stays_in_this_process(
        one_process: list[dict[str, Any]]) -> None:
    """The outer run holds the workers while it hands its results on: the inner one, from its
    on_result, would wait for them forever."""
    inner: list[list[CaseResult]] = []

    def on_result(result: CaseResult) -> None:
        if not inner:
            inner.append(run_cases(CASES[:40], provider="cpu", jobs=2))

    outer: list[list[CaseResult]] = []
    thread = threading.Thread(target=lambda: outer.append(run_cases(CASES, provider="cpu", jobs=2,
                                                                    on_result=on_result)), daemon=True)
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive(), "the inner run waited for the workers the outer one holds"
    assert [_without_seconds(r) for r in outer[0]] == one_process
    assert [_without_seconds(r) for r in inner[0]] == one_process[:40]


def test_a_run_starts_no_more_workers_than_it_has_cases(monkeypatch: pytest.MonkeyPatch,
                                                        one_process: list[dict[str, Any]]) -> None:
    started: list[int] = []
    real = _runner.start_workers
    monkeypatch.setattr(_runner, "start_workers", lambda n: (started.append(n), real(n)))
    results = run_cases(CASES[:3], provider="cpu", jobs=MAX_JOBS)
    assert started == [3]
    assert [_without_seconds(r) for r in results] == one_process[:3]


def test_more_jobs_than_the_machine_runs_side_by_side_are_refused_before_any_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """jobs=10**6 started a worker a case; jobs above the larger of MAX_JOBS and the usable
    processors is refused, naming both, before any worker starts."""
    started: list[int] = []
    monkeypatch.setattr(_runner, "start_workers", lambda n: started.append(n))
    monkeypatch.setattr(_runner, "usable_cores", lambda: 2)
    for jobs in (MAX_JOBS + 1, 10**6):
        with pytest.raises(ArgumentError) as raised:
            run_cases(CASES[:12], provider="cpu", jobs=jobs)
        assert str(raised.value) == (
            f"jobs {jobs} is more worker processes than this machine runs side by side; valid: "
            f"1..{MAX_JOBS} (2 usable processors here, or {MAX_JOBS}), or None for the default")
    monkeypatch.setattr(_runner, "usable_cores", lambda: 4 * MAX_JOBS)
    assert resolve_jobs(4 * MAX_JOBS, "CPUExecutionProvider", 12) == 4 * MAX_JOBS  # a machine that has them
    assert started == []


def test_children_that_do_not_quit_share_one_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """stop_children (the pool's close) stops them side by side: two that ignore ("quit",) are killed
    once QUIT_TIMEOUT_S has passed for both of them together, not after it twice."""
    import subprocess
    import sys
    import time

    monkeypatch.setattr(session_process_module, "QUIT_TIMEOUT_S", 1.0)
    deaf = "import time\nwhile True: time.sleep(1)"
    children = [subprocess.Popen([sys.executable, "-c", deaf], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                for _ in range(2)]
    start = time.monotonic()
    session_process_module.stop_children([(child, None) for child in children])
    assert time.monotonic() - start < 1.8
    assert all(child.returncode is not None for child in children)
