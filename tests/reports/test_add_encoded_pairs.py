"""add_encoded_all reads its pairs once, and ties each encoded line to its own result: a generator
of pairs was read to its end by the check, so that no result was added; and pairs whose lines
were another result's (``zip(results, reversed(encoded))``) were written, so that results.jsonl
and report.json held the lines in another order than the writer counted the results in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ort_layouts._errors import ArgumentError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case
from ort_layouts.reports.report import JSON_FILE, RESULTS_FILE, load_report
from ort_layouts.reports.writer import ReportWriter

CPU = "CPUExecutionProvider"
META = {"provider": CPU, "selection": {}}
CASES = [Case("Transpose", "float32", (2, 3), perm=(1, 0), seed=seed) for seed in range(3)]
PLANNED = [c.id for c in CASES]


def _results() -> list[CaseResult]:
    """A pass (result_json's quick line), a mismatch and an error (its line made of every field)."""
    a, b, c = CASES
    return [CaseResult(a, Status.PASS, CPU, element_count=6, descriptors={"operator": "X"}, seconds=0.25),
            CaseResult(b, Status.MISMATCH, CPU, element_count=6, mismatch_count=2,
                       first_mismatch_index=(0, 1), seconds=0.0),
            CaseResult(c, Status.ERROR, CPU, message="boom")]


def _ids_of_lines(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_generator_of_pairs_adds_every_result(tmp_path: Path) -> None:
    results = _results()
    with ReportWriter(tmp_path, meta=META, planned=PLANNED) as w:
        encoded = w.encode_results(results)
        w.add_encoded_all(pair for pair in zip(results, encoded, strict=True))
        assert [r.case.id for r in w.results] == PLANNED
        assert _ids_of_lines(tmp_path / RESULTS_FILE) == PLANNED
    assert [r.case.id for r in load_report(tmp_path).results] == PLANNED


def test_lines_that_are_not_their_results_are_refused_before_any_is_written(tmp_path: Path) -> None:
    results = _results()
    with ReportWriter(tmp_path, meta=META, planned=PLANNED) as w:
        encoded = w.encode_results(results)
        with pytest.raises(ArgumentError) as info:
            w.add_encoded_all(list(zip(results, reversed(encoded), strict=True)))
        tail = encoded[2][0][-60:]  # the first pair holds the error's line
        assert str(info.value) == (
            f"pairs[0]: the encoded line ...{tail!r} is not the line of its result, of case {PLANNED[0]!r}; "
            "valid: each result with what encode_results made of that result, e.g. "
            "list(zip(results, writer.encode_results(results)))")
        # the mismatch's line in its own place, the others' swapped: refused at the first that is not
        swapped = [(results[0], encoded[2]), (results[1], encoded[1]), (results[2], encoded[0])]
        with pytest.raises(ArgumentError, match=r"^pairs\[0\]: the encoded line "):
            w.add_encoded_all(swapped)
        late = [(results[0], encoded[0]), (results[1], encoded[1]), (results[2], encoded[0])]
        with pytest.raises(ArgumentError, match=rf"^pairs\[2\]: .* of case {PLANNED[2]!r}; valid: "):
            w.add_encoded_all(late)
        assert (tmp_path / RESULTS_FILE).read_bytes() == b"" and w.results == ()  # nothing written
        w.add_encoded_all(list(zip(results, encoded, strict=True)))
    assert _ids_of_lines(tmp_path / RESULTS_FILE) == PLANNED
    data = json.loads((tmp_path / JSON_FILE).read_text(encoding="utf-8"))
    assert [r["id"] for r in data["results"]] == PLANNED


@pytest.mark.parametrize(("pairs", "message"), [
    (5, "pairs 5 is an int, not an iterable of (result, encoded) pairs; valid: e.g. "
        "list(zip(results, writer.encode_results(results)))"),
    ([("a", "b", "c")], "pairs[0] ('a', 'b', 'c') is not a (result, encoded) pair; valid: e.g. "
                        "list(zip(results, writer.encode_results(results)))"),
    ([None], "pairs[0] None is not a (result, encoded) pair; valid: e.g. "
             "list(zip(results, writer.encode_results(results)))"),
    ([("x", ("l", "t", "r", False, ""))], "pairs[0]: result 'x' is a str, not a CaseResult; valid: a "
                                         "CaseResult, with what encode_results made of it"),
], ids=["int", "triple", "none", "result-str"])
def test_what_is_no_pair_of_a_result_is_refused(tmp_path: Path, pairs: Any, message: str) -> None:
    with ReportWriter(tmp_path, meta=META, planned=PLANNED) as w:
        with pytest.raises(ArgumentError) as info:
            w.add_encoded_all(pairs)
        assert str(info.value) == message
        assert w.results == ()


class _IdFirst(CaseResult):
    """A result whose own to_dict writes the case id first: its line does not end with it."""

    def to_dict(self, *, defaults: bool = True) -> dict[str, Any]:
        d = CaseResult.to_dict(self, defaults=defaults)
        return {"id": d.pop("id"), **d}


def test_a_line_made_another_way_is_compared_whole(tmp_path: Path) -> None:
    results = [_IdFirst(c, Status.PASS, CPU, element_count=6, seconds=0.5) for c in CASES[:2]]
    with ReportWriter(tmp_path, meta=META, planned=PLANNED) as w:
        encoded = w.encode_results(results)
        assert all(e[0].startswith('{"id":') for e in encoded)
        with pytest.raises(ArgumentError, match=rf"^pairs\[0\]: .* of case {PLANNED[0]!r}; valid: "):
            w.add_encoded_all(list(zip(results, reversed(encoded), strict=True)))
        assert w.results == ()
        w.add_encoded_all(list(zip(results, encoded, strict=True)))
        assert _ids_of_lines(tmp_path / RESULTS_FILE) == PLANNED[:2]
