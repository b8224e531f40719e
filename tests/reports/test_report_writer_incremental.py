"""A report directory written as results arrive holds, byte for byte, what writing the same
results at once makes.

The writer makes each result's JUnit testcase, its row of the HTML list of all cases and its
count in the HTML matrix as the result arrives, and keeps the results in planned order as they
come; the reference here is :func:`write_report`, which makes everything of the finished
:class:`Report` at once, given the results in the order worked out in this file (the last
result of each case id, in planned order, unplanned ones after in the order they last
arrived). The results are a few hundred cases of the standard suite run on the CPU EP, and
mismatches, known issues, errors and recoveries made of some of them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.engine.suite import standard_suite
from ort_layouts.reports.report import (
    HTML_FILE,
    JSON_FILE,
    JUNIT_FILE,
    META_FILE,
    RESULTS_FILE,
    Report,
    result_dict,
)
from ort_layouts.reports.writer import ReportWriter, ResultEncoder, result_line, write_report

CPU = "CPUExecutionProvider"
# text that XML or HTML escapes or cannot hold, or that a format string would read
AWKWARD = 'a<b>&"c"\'d\'\n\r\t{0}{}{{%s \x01 end'
META: dict[str, Any] = {
    "provider": CPU, "device": "cpu", "command": "ort-layouts validate " + AWKWARD,
    "environment": {"hostname": "h&h", "os": "TestOS", "python": "3.11", "versions": {"onnx": "1"}},
    "selection": {"provider": CPU, "ops": [], "shard": ""},
}
REPORT_FILES = (JSON_FILE, JUNIT_FILE, HTML_FILE)


@pytest.fixture(scope="module")
def sample() -> list[CaseResult]:
    """Every 29th case of the standard suite as the CPU EP runs it (passes and unsupported
    cases), some passes turned into each other way a case can go: a mismatch, a known issue,
    an error, a mismatch with a recovery, a pass with a message, a pass on a device whose name
    XML and HTML escape."""
    from ort_layouts.engine.runner import run_cases

    run = list(run_cases(standard_suite()[::29], provider="cpu"))
    assert {r.status for r in run} >= {Status.PASS, Status.UNSUPPORTED}
    made: list[CaseResult] = []
    for i, r in enumerate(run):
        kind = i % 17 if r.status is Status.PASS else -1
        if kind == 1:
            r = dataclasses.replace(r, status=Status.MISMATCH, mismatch_count=3, first_mismatch_index=(0,),
                                    input_offset_in_elements=2, expected_hex="01", actual_hex="02",
                                    diagnosis="strides ignored " + AWKWARD)
        elif kind == 2:
            r = dataclasses.replace(r, status=Status.MISMATCH, mismatch_count=1, first_mismatch_index=(0,),
                                    diagnosis="d", known_issue="a known deviation " + AWKWARD)
        elif kind == 3:
            r = dataclasses.replace(r, status=Status.ERROR, message="session.run failed: " + AWKWARD)
        elif kind == 4:
            recovered = {"kind": "strided read", "operator": "IDENTITY", "names": ["strides"],
                         "applied": {"sizes": [2, 3], "strides_in_elements": [1, 2]},
                         "expected": {"sizes": [2, 3], "strides_in_elements": [3, 1]}}
            r = dataclasses.replace(r, status=Status.MISMATCH, mismatch_count=2, first_mismatch_index=(0,),
                                    known_issue="k" if i % 2 else "", recovered=recovered)
        elif kind == 5:
            r = dataclasses.replace(r, message="passed on a second try")
        elif kind == 6:
            r = dataclasses.replace(r, device=AWKWARD, node_provider="<" + CPU + ">")
        made.append(r)
    statuses = [r.status for r in made]
    assert all(statuses.count(s) >= 5 for s in Status), statuses
    return made


# ---- the reference ------------------------------------------------------------------------

def _in_report_order(arrived: Sequence[CaseResult], planned: Sequence[str]) -> list[CaseResult]:
    """The last result of each case id, by the last place of its id in ``planned``, unplanned
    ones after in the order they last arrived."""
    last: dict[str, CaseResult] = {}
    for r in arrived:
        last.pop(r.case.id, None)
        last[r.case.id] = r
    place = {cid: i for i, cid in enumerate(planned)}
    return sorted(last.values(), key=lambda r: place.get(r.case.id, len(planned)))


def _check(directory: Path, arrived: Sequence[CaseResult], planned: Sequence[str], *, strict: bool,
           finished: bool) -> None:
    """The directory's report.json, junit.xml and report.html are those write_report makes of
    the results in report order (with the meta the directory holds), byte for byte; its
    results.jsonl holds each result in report order (finished) or as they arrived."""
    meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    expected = _in_report_order(arrived, planned)
    reference = directory.parent / (directory.name + "-reference")
    write_report(Report(meta, tuple(expected)), reference, strict=strict)
    for name in REPORT_FILES:
        assert (directory / name).read_bytes() == (reference / name).read_bytes(), name
    lines = expected if finished else arrived
    assert (directory / RESULTS_FILE).read_bytes() == b"".join(map(result_line, lines))


def _arrivals(results: Sequence[CaseResult], seed: int) -> list[CaseResult]:
    """``results`` shuffled, some of them run twice: a first try that failed, or a second run
    whose result replaces the first (another time, or another status)."""
    rng = random.Random(seed)
    arrived = list(results)
    rng.shuffle(arrived)
    for r in rng.sample(results, 12):  # a first try, before the result that replaces it
        at = arrived.index(r)
        first_try = dataclasses.replace(r, status=Status.ERROR, message="first try")
        arrived.insert(rng.randrange(at + 1), first_try)
    for n, r in enumerate(rng.sample(results, 8)):  # a second run, after the first
        at = arrived.index(r)
        again = (dataclasses.replace(r, seconds=r.seconds + 1.0) if n % 2 else
                 dataclasses.replace(r, status=Status.UNSUPPORTED, message="no kernel the second time"))
        arrived.insert(rng.randrange(at + 1, len(arrived) + 1), again)
    return arrived


# ---- runs ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("strict", "replace_while_open"), [(False, True), (True, True), (False, False)])
def test_a_run_out_of_order_writes_the_bytes_written_at_once(
        tmp_path: Path, sample: list[CaseResult], strict: bool, replace_while_open: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``replace_while_open`` off: as on Windows, where a file open cannot be replaced."""
    from ort_layouts.reports import report as report_module
    from ort_layouts.reports import writer as writer_module

    monkeypatch.setattr(report_module, "REPLACE_WHILE_OPEN", replace_while_open)
    monkeypatch.setattr(writer_module, "REPLACE_WHILE_OPEN", replace_while_open)
    planned = [r.case.id for r in sample]
    arrived = _arrivals(sample, seed=5)
    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=planned, strict=strict, interval_s=math.inf) as writer:
        for n, r in enumerate(arrived, 1):
            writer.add(r)
            if n % 50 == 0:  # what is on the disk: every line added so far, as it arrived
                assert (directory / RESULTS_FILE).read_bytes() == b"".join(map(result_line, arrived[:n]))
            if n in (1, 63, 64, 65, 150, 301):  # the summaries while results arrive
                if n == 150:
                    writer.update_meta(device="cpu & <co>")
                writer.write_summaries()
                _check(directory, arrived[:n], planned, strict=strict, finished=False)
        writer.write_summaries(finished=True)
        _check(directory, arrived, planned, strict=strict, finished=True)
        writer.write_summaries(finished=True)  # again: the same
        _check(directory, arrived, planned, strict=strict, finished=True)
        # a result after the end goes to the end of the new results.jsonl
        late = dataclasses.replace(sample[0], seconds=9.0)
        writer.add(late)
        expected = b"".join(map(result_line, [*_in_report_order(arrived, planned), late]))
        assert (directory / RESULTS_FILE).read_bytes() == expected
        writer.write_summaries(finished=True)
        _check(directory, [*arrived, late], planned, strict=strict, finished=True)


@pytest.mark.parametrize("replace_while_open", [True, False], ids=["posix", "windows"])
def test_a_finish_that_fails_to_write_leaves_the_reordering_to_the_next(
        tmp_path: Path, sample: list[CaseResult], replace_while_open: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ort_layouts.reports import report as report_module
    from ort_layouts.reports import writer as writer_module

    monkeypatch.setattr(report_module, "REPLACE_WHILE_OPEN", replace_while_open)
    monkeypatch.setattr(writer_module, "REPLACE_WHILE_OPEN", replace_while_open)
    planned = [r.case.id for r in sample]
    arrived = _arrivals(sample, seed=11)
    real = writer_module.atomic_write_texts
    failures = [OSError(28, "No space left on device")]

    def full_once(*args: Any, **kwargs: Any) -> None:
        if failures:
            raise failures.pop()
        real(*args, **kwargs)

    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=planned, interval_s=math.inf) as writer:
        for r in arrived:
            writer.add(r)
        monkeypatch.setattr(writer_module, "atomic_write_texts", full_once)
        with pytest.raises(OSError, match="No space left"):
            writer.write_summaries(finished=True)
        # nothing replaced: the lines as they arrived, still appended to
        assert (directory / RESULTS_FILE).read_bytes() == b"".join(map(result_line, arrived))
        writer.write_summaries(finished=True)
        _check(directory, arrived, planned, strict=False, finished=True)


def test_a_run_in_planned_order_keeps_its_results_file(tmp_path: Path, sample: list[CaseResult]) -> None:
    planned = [r.case.id for r in sample]
    with ReportWriter(tmp_path / "run", meta=META, planned=planned, interval_s=math.inf) as writer:
        for r in sample:
            writer.add(r)
        before = (tmp_path / "run" / RESULTS_FILE).stat().st_ino
        writer.write_summaries(finished=True)
    # in planned order already: not rewritten
    assert (tmp_path / "run" / RESULTS_FILE).stat().st_ino == before
    _check(tmp_path / "run", sample, planned, strict=False, finished=True)


def test_unplanned_missing_and_twice_planned_cases(tmp_path: Path, sample: list[CaseResult]) -> None:
    """Planned cases without a result leave the report incomplete; a case planned twice takes
    its last place; results of cases no longer planned (the planned ids changed: a writer takes
    only planned cases' results) come after the planned ones, in the order they last arrived."""
    ids = [r.case.id for r in sample]
    missing = ["Transpose-never-run-1", "Transpose-never-run-2"]
    first = [*ids, *missing]
    first.insert(3, ids[-1])  # planned twice: its place is the last
    planned = [*ids[40:], *missing]  # then the first 40 cases are planned no more
    planned.insert(3, ids[-1])
    arrived = _arrivals(sample, seed=8)
    arrived += [r for r in sample[:40:7]]  # some of those arriving again, later
    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=first, interval_s=math.inf) as writer:
        for n, r in enumerate(arrived, 1):
            writer.add(r)
            if n in (100, 200):
                writer.write_summaries()
                _check(directory, arrived[:n], first, strict=False, finished=False)
            if n in (130, 131):  # the results so far, in the report's order
                assert writer.report().results == tuple(_in_report_order(arrived[:n], first))
        from ort_layouts.reports.writer import _MAKE_BATCH

        assert writer._made > len(arrived) - _MAKE_BATCH  # put in order as they arrived, a batch at a time
        writer.update_meta(planned=planned)
        assert writer.report().results == tuple(_in_report_order(arrived, planned))
        writer.write_summaries()
        _check(directory, arrived, planned, strict=False, finished=False)
        report = writer.write_summaries(finished=True)
    assert not report.complete
    assert report.results == tuple(_in_report_order(arrived, planned))
    _check(directory, arrived, planned, strict=False, finished=True)


@pytest.mark.parametrize("strict", [False, True])
def test_a_resumed_run_writes_the_bytes_written_at_once(
        tmp_path: Path, sample: list[CaseResult], strict: bool) -> None:
    planned = [r.case.id for r in sample]
    arrived = _arrivals(sample, seed=13)
    first, second = arrived[:200], arrived[200:]
    directory = tmp_path / "run"
    writer = ReportWriter(directory, meta=META, planned=planned, strict=strict, interval_s=math.inf)
    for r in first:
        writer.add(r)
    writer.close()  # the run stops before it ends
    with (directory / RESULTS_FILE).open("ab") as f:
        f.write(b'{"cut sho')  # and its last line was cut short
    with ReportWriter(directory, meta=META, planned=planned, strict=strict, interval_s=math.inf,
                      resume=True) as writer:
        _check(directory, first, planned, strict=strict, finished=False)  # the summaries as it resumes
        for n, r in enumerate(second, 1):
            writer.add(r)
            if n == 70:
                writer.write_summaries()
                _check(directory, first + second[:n], planned, strict=strict, finished=False)
        writer.write_summaries(finished=True)
    _check(directory, arrived, planned, strict=strict, finished=True)


def test_a_result_the_summaries_cannot_write_fails_them_as_writing_at_once_does(
        tmp_path: Path, sample: list[CaseResult]) -> None:
    """A result whose time is not a number: its line is written (nothing already run is lost),
    and the summaries fail on it, as write_report does."""
    bad = dataclasses.replace(sample[0])
    object.__setattr__(bad, "seconds", None)  # not a number, on purpose: CaseResult itself refuses one
    results = [bad, *sample[1:100]]
    with pytest.raises(TypeError):
        write_report(Report(META, tuple(results)), tmp_path / "at-once")
    directory = tmp_path / "run"
    planned = [r.case.id for r in results]
    # the block's end writes them again, and fails on them again
    with pytest.raises(TypeError), ReportWriter(directory, meta=META, planned=planned,
                                                interval_s=math.inf) as writer:
        for r in results:
            writer.add(r)
        assert (directory / RESULTS_FILE).read_bytes() == b"".join(map(result_line, results))
        with pytest.raises(TypeError):
            writer.write_summaries(finished=True)
    assert (directory / RESULTS_FILE).read_bytes() == b"".join(map(result_line, results))
    assert sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp")) == []


def test_the_quick_check_of_case_ids_finds_what_xml_escapes_or_cannot_hold() -> None:
    """What ElementTree escapes in an attribute value (``& < > "`` and the tab, line feed and
    carriage return) and what XML 1.0 cannot hold (the other controls, surrogates, U+FFFE,
    U+FFFF), in text of every character below 0x80 and some beyond."""
    from ort_layouts.reports.junit import _plain

    escaped = set('&<>"\t\n\r')
    unheld = {chr(c) for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xD800, 0xDFFF, 0xFFFE,
                                0xFFFF]}
    beyond = [chr(c) for c in (0xE9, 0x2192, 0xD800, 0xDFFF, 0xFFFE, 0xFFFF, 0x1F600)]
    alphabet = [chr(c) for c in range(0x80)] + beyond
    rng = random.Random(1)
    texts = [f"id-{c}-s0" for c in alphabet]
    texts += ["".join(rng.choices(alphabet, k=rng.randrange(8))) for _ in range(5000)]
    for text in texts:
        assert _plain(text) == (not set(text) & (escaped | unheld)), repr(text)


@pytest.mark.parametrize("strict", [False, True])
def test_results_added_with_what_was_made_of_them_elsewhere_write_the_same_bytes(
        tmp_path: Path, sample: list[CaseResult], strict: bool) -> None:
    """add_encoded_all with what the writer's encoder made of each result in another process (a
    pickled copy of it), some results added plainly, some made for the other strict (which the
    writer makes again): the files are those write_report makes."""
    import pickle

    planned = [r.case.id for r in sample]
    arrived = _arrivals(sample, seed=11)
    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=planned, strict=strict, interval_s=math.inf) as writer:
        there = pickle.loads(pickle.dumps(writer.encode_results))
        other = pickle.loads(pickle.dumps(ResultEncoder(not strict)))
        for n, r in enumerate(arrived, 1):
            if n % 7 == 0:
                writer.add(r)
            else:
                copy = pickle.loads(pickle.dumps(r))
                writer.add_encoded_all([(r, (other if n % 11 == 0 else there)([copy])[0])])
            if n in (64, 130):
                writer.write_summaries()
                _check(directory, arrived[:n], planned, strict=strict, finished=False)
        writer.write_summaries(finished=True)
        _check(directory, arrived, planned, strict=strict, finished=True)


def test_add_encoded_refuses_what_the_encoder_does_not_make(tmp_path: Path, sample: list[CaseResult]) -> None:
    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=[r.case.id for r in sample]) as writer:
        line = result_line(sample[0]).decode("utf-8").rstrip("\n")
        for bad in (line, (line, "", "", False), (line, "", "", 1, ""), (line, b"", "", False, ""),
                    (line, "", "", False, None), [line, "", "", False, ""]):
            with pytest.raises(TypeError, match="is not what encode_results makes: "
                                                r"\(line, testcase, row, strict, section\)"):
                writer.add_encoded_all([(sample[0], bad)])  # type: ignore[list-item]
        assert (directory / RESULTS_FILE).read_bytes() == b""  # nothing written


class _CountedWrites:
    """A file whose writes are counted."""

    def __init__(self, file: Any) -> None:
        self.file = file
        self.writes = 0

    def write(self, data: bytes) -> int:
        self.writes += 1
        return int(self.file.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)


@pytest.mark.parametrize("strict", [False, True])
def test_results_added_together_write_their_lines_at_once_and_the_same_files(
        tmp_path: Path, sample: list[CaseResult], strict: bool) -> None:
    """add_encoded_all of results in groups (as a run's workers hand them over): one write to
    results.jsonl a group, and the files write_report makes, as when they come one by one."""
    planned = [r.case.id for r in sample]
    arrived = _arrivals(sample, seed=5)
    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=planned, strict=strict, interval_s=math.inf) as writer:
        counted = _CountedWrites(writer._file)
        writer._file = counted  # type: ignore[assignment]
        groups = [arrived[:1]] + [arrived[start:start + 37] for start in range(1, len(arrived), 37)]
        shown = 0
        for group in groups:
            writer.add_encoded_all(list(zip(group, writer.encode_results(group), strict=True)))
            shown += len(group)
            assert (directory / RESULTS_FILE).read_bytes() == b"".join(map(result_line, arrived[:shown]))
        assert counted.writes == len(groups)
        writer._file = counted.file
        writer.write_summaries(finished=True)
        _check(directory, arrived, planned, strict=strict, finished=True)


def test_add_encoded_all_refuses_a_group_with_one_bad_pair_before_writing_any(
        tmp_path: Path, sample: list[CaseResult]) -> None:
    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=[r.case.id for r in sample]) as writer:
        good = list(zip(sample[:3], writer.encode_results(sample[:3]), strict=True))
        bad = (sample[3], (*writer.encode_results(sample[3:4])[0][:3], "False", ""))
        with pytest.raises(TypeError, match="encoded tuple is not what encode_results makes"):
            writer.add_encoded_all([*good, bad])  # type: ignore[list-item]
        assert (directory / RESULTS_FILE).read_bytes() == b""
        assert writer.results == ()
        writer.add_encoded_all(good)
        writer.add_encoded_all([])
        assert (directory / RESULTS_FILE).read_bytes() == b"".join(result_line(r) for r, _ in good)


@pytest.mark.parametrize("strict", [False, True])
def test_a_failing_case_s_section_comes_from_the_encoder_of_its_own_result(
        tmp_path: Path, sample: list[CaseResult], strict: bool) -> None:
    """The drawn section that came with a failing result (add_encoded_all) is the page's, not
    drawn again; one made for the other strict, or that came with an earlier result of its
    case, is not."""
    errors = [r for r in sample if r.status is Status.ERROR]
    used, other_strict, replaced = errors[:3]
    planned = [r.case.id for r in sample]

    def marked(r: CaseResult, encoder: ResultEncoder, mark: str) -> list[tuple[CaseResult, Any]]:
        ((line, testcase, row, made_strict, section),) = encoder([r])
        assert section.startswith('<section class="case error"')  # an error fails either way
        return [(r, (line, testcase, row, made_strict, f"<section>{mark}</section>"))]

    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=planned, strict=strict, interval_s=math.inf) as writer:
        writer.add_encoded_all(marked(used, writer.encode_results, "drawn with its result"))
        other = ResultEncoder(not strict)
        writer.add_encoded_all(marked(other_strict, other, "for the other strict"))
        writer.add_encoded_all(marked(replaced, writer.encode_results, "of the first try"))
        writer.add(dataclasses.replace(replaced, message="the second try"))
        writer.write_summaries()
    from ort_layouts.reports.html import case_anchor, escape

    page = (directory / HTML_FILE).read_text(encoding="utf-8")
    assert "<section>drawn with its result</section>" in page
    assert "for the other strict" not in page and "of the first try" not in page
    drawn = {r.case.id for r in (used, other_strict, replaced)
             if f'<section class="case error" id="{escape(case_anchor(r.case.id))}">' in page}
    assert drawn == {other_strict.case.id, replaced.case.id} and "error: the second try" in page


@pytest.mark.parametrize("strict", [False, True])
def test_an_encoder_draws_the_sections_of_as_many_failing_cases_as_the_page_draws(
        tmp_path: Path, sample: list[CaseResult], strict: bool) -> None:
    """An encoder draws the section of its first MAX_PICTURES failing results only (its copies
    loaded in one process, as a worker's units get it, are the one encoder, and count with
    it); a report of more failing cases, each added with what an encoder made of it, is still
    the one write_report makes."""
    import pickle

    from ort_layouts.reports.html import MAX_PICTURES
    from ort_layouts.reports.report import is_failure

    failing = [CaseResult(r.case, Status.ERROR, r.provider, r.device, message=f"boom {k}")
               for k, r in enumerate(sample[:MAX_PICTURES + 30])]
    results = [*failing, *sample[MAX_PICTURES + 30:]]
    planned = [r.case.id for r in results]
    arrived = _arrivals(results, seed=5)
    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=planned, strict=strict, interval_s=math.inf) as writer:
        encoder = writer.encode_results
        made = [encoder([r])[0] for r in arrived]
        drawn = [k for k, e in enumerate(made) if e[4]]
        failures = [k for k, r in enumerate(arrived) if is_failure(r, strict=strict)]
        assert len(failures) > MAX_PICTURES + 30
        assert drawn == failures[:MAX_PICTURES]  # the first ones it saw, and no more
        copy = pickle.loads(pickle.dumps(encoder))  # loaded here: the encoder, with no section left
        assert copy is encoder and copy([failing[0]])[0][4] == ""
        elsewhere = ResultEncoder(strict)  # another encoder: its own count
        assert elsewhere([failing[0]])[0][4].startswith('<section class="case error"')
        for r, e in zip(arrived, made, strict=True):
            writer.add_encoded_all([(r, e)])
        writer.write_summaries(finished=True)
    _check(directory, arrived, planned, strict=strict, finished=True)


def test_the_quick_line_of_a_pass_checks_every_field_it_does_not_write(sample: list[CaseResult]) -> None:
    from ort_layouts.reports import writer as writer_module

    names = {f.name for f in dataclasses.fields(CaseResult)}
    assert set(writer_module._QUICK_WRITTEN) | set(writer_module._QUICK_AT_DEFAULT) == names
    passed = next(r for r in sample if r.status is Status.PASS and not r.message and r.device != AWKWARD)
    for name in writer_module._QUICK_AT_DEFAULT:  # any one of them off its default is in the line
        value = {"first_mismatch_index": (1,), "recovered": {"kind": "x"}}.get(name)
        if value is None:
            default = getattr(passed, name)
            value = 7 if default is None or isinstance(default, int) else "x"
        changed = dataclasses.replace(passed, **{name: value})
        assert json.loads(writer_module.result_json(changed))[name] == json.loads(json.dumps(value))
    # and every field, those it writes too, off the pass's value: the line is result_dict's
    for name in sorted(names - {"case", "status"}):
        value = {"first_mismatch_index": (1,), "recovered": {"kind": "x"}, "descriptors": {"operator": "X"},
                 "seconds": 0.25, "element_count": 5}.get(name)
        if value is None:
            default = getattr(passed, name)
            value = 7 if default is None or isinstance(default, int) else "x"
        changed = dataclasses.replace(passed, **{name: value})
        want = json.loads(json.dumps(result_dict(changed)))
        assert json.loads(writer_module.result_json(changed)) == want, name


def test_sections_are_kept_for_as_many_cases_as_the_page_draws(
        tmp_path: Path, sample: list[CaseResult], monkeypatch: pytest.MonkeyPatch) -> None:
    """Past that many the writer keeps none (they are about 25 KB each): the page draws the
    ones it was not given, so the bytes are those of write_report."""
    from ort_layouts.reports import writer as writer_module

    monkeypatch.setattr(writer_module, "MAX_PICTURES", 3)  # the writer's cap; the page still draws 100
    failing = [r for r in sample if r.status is not Status.PASS and r.status is not Status.UNSUPPORTED]
    assert len(failing) > 3
    planned = [r.case.id for r in sample]
    directory = tmp_path / "run"
    with ReportWriter(directory, meta=META, planned=planned, interval_s=math.inf) as writer:
        for r in sample:
            writer.add_encoded_all([(r, writer.encode_results([r])[0])])
        assert len(writer._sections) == 3
        again = next(r for r in sample if r.case.id in writer._sections)  # kept: takes its newer section
        writer.add_encoded_all([(again, writer.encode_results([again])[0])])
        assert len(writer._sections) == 3 and writer._sections[again.case.id][0] is again
        writer.write_summaries(finished=True)
    _check(directory, [*sample, again], planned, strict=False, finished=True)


def test_a_writer_that_fails_to_open_closes_its_file_and_lets_the_directory_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from ort_layouts.reports import writer as writer_module

    opened: list[Any] = []

    def tracked(*args: Any, **kwargs: Any) -> Any:
        file = builtins.open(*args, **kwargs)  # noqa: SIM115 - the writer under test closes it
        opened.append(file)
        return file

    def full_disk(self: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer_module, "open", tracked, raising=False)
    monkeypatch.setattr(writer_module.ReportWriter, "_write_summaries", full_disk)
    with pytest.raises(OSError, match="No space left"):
        writer_module.ReportWriter(tmp_path / "r", meta={}, planned=["a"])
    assert opened and all(f.closed for f in opened)
    monkeypatch.undo()
    writer_module.ReportWriter(tmp_path / "r", meta={}, planned=["a"]).close()  # not locked


def test_summaries_that_fail_as_a_new_report_opens_leave_its_meta_beside_the_emptied_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # never the earlier run's finished meta.json beside an emptied results.jsonl
    import os

    ids = ["a", "b"]
    earlier = {**META, "selection": {**META.get("selection", {}), "ops": ["Transpose"]}}
    with ReportWriter(tmp_path, meta=earlier, planned=ids) as w:
        w.write_summaries(finished=True)
    real, synced = os.fsync, []

    def fsync(fd: int) -> None:  # the disk fails every file after the first synced
        synced.append(fd)
        if len(synced) > 1:
            raise OSError(5, "Input/output error")
        real(fd)

    monkeypatch.setattr("os.fsync", fsync)
    later = {**META, "selection": {**META.get("selection", {}), "ops": ["Pad"]}}
    with pytest.raises(OSError, match="Input/output error"):
        ReportWriter(tmp_path, meta=later, planned=ids, force=True)
    monkeypatch.undo()
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["selection"]["ops"] == ["Pad"] and "finished" not in meta
    assert (tmp_path / "results.jsonl").read_bytes() == b""


def test_a_full_disk_midway_through_an_append_counts_the_lines_it_wrote_whole(
        tmp_path: Path, sample: list[CaseResult]) -> None:
    """The disk filled partway through a batch's lines: the lines written whole are in
    results.jsonl, and the writer counts them (the results kept, what --resume runs again)."""
    planned = [r.case.id for r in sample]
    batch = sample[:5]
    lines = b"".join(map(result_line, batch))
    room = len(b"".join(map(result_line, batch[:3]))) + 7  # three lines whole and part of the fourth
    writer = ReportWriter(tmp_path, meta=META, planned=planned, interval_s=math.inf)
    real = writer._file

    class FullDisk:
        def __init__(self) -> None:
            self.left = room

        def write(self, data: bytes) -> int:
            if not self.left:
                raise OSError(28, "No space left on device")
            taken = real.write(bytes(data[:self.left]))
            self.left -= taken
            return taken

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

    writer._file = FullDisk()  # type: ignore[assignment]
    with pytest.raises(OSError, match="No space left"):
        writer.add_encoded_all(zip(batch, writer.encode_results(batch), strict=True))
    writer._file = real
    assert (tmp_path / RESULTS_FILE).read_bytes() == lines[:room]
    assert writer.results == tuple(batch[:3])
    assert sorted(writer.done_ids) == sorted(r.case.id for r in batch[:3])
    writer.close()
