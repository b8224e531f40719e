"""CaseResult: a frozen value that hashes, pickles and reads back from its dict unchanged."""

from __future__ import annotations

import json
import pickle
import re

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError
from ort_layouts.engine.result import CaseResult, Status
from ort_layouts.operators.case import Case

CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
DESCRIPTORS = {"operator": "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
               "input": {"data_type": "FLOAT32", "sizes": [3, 2], "strides": [1, 3]}}


def _result(**fields: object) -> CaseResult:
    given: dict[str, object] = {"element_count": 6, "mismatch_count": 1, "first_mismatch_index": (1, 0),
                                "descriptors": dict(DESCRIPTORS),
                                "recovered": {"kind": "read", "names": ["transpose"]}}
    return CaseResult(CASE, Status.MISMATCH, "CPUExecutionProvider", **{**given, **fields})  # type: ignore[arg-type]


def test_a_result_hashes_by_its_fields_its_dicts_aside() -> None:
    a, b = _result(), _result()
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1  # hashing raised on its dicts before
    other = _result(descriptors={})
    assert other != a and len({a, other}) == 2  # equal hashes, not equal results
    assert hash(CaseResult(CASE, Status.PASS, "CPUExecutionProvider")) != hash(a)


def test_pickling_and_the_dict_round_trip_are_unchanged() -> None:
    a = _result()
    back = pickle.loads(pickle.dumps(a))
    assert back == a and type(back.descriptors) is dict and type(back.recovered) is dict
    data = json.loads(json.dumps(a.to_dict()))
    assert data["descriptors"] == DESCRIPTORS and data["first_mismatch_index"] == [1, 0]
    assert CaseResult.from_dict(data) == a
    assert CaseResult.from_dict(json.loads(json.dumps(a.to_dict(defaults=False)))) == a


@pytest.mark.parametrize(("field", "value", "named"), [
    ("recovered", ["x"], "recovered is list ['x'], not a JSON object"),
    ("descriptors", "x", "descriptors is str 'x', not a JSON object"),
    ("seconds", "x", "seconds is str 'x', not a finite number"),
    ("seconds", True, "seconds is bool True, not a finite number"),
    ("seconds", float("nan"), "seconds is float nan, not a finite number"),
    ("seconds", float("inf"), "seconds is float inf, not a finite number"),
    ("seconds", 10 ** 400, "seconds is int 1000000"),
    ("message", None, "message is NoneType None, not a string"),
    ("provider", 5, "provider is int 5, not a string"),
    ("element_count", "6", "element_count is str '6', not an integer"),
    ("mismatch_count", 1.0, "mismatch_count is float 1.0, not an integer"),
    ("first_mismatch_index", {"a": 1}, "first_mismatch_index is dict {'a': 1}, not a list of integers"),
    ("first_mismatch_index", [0, "1"], "first_mismatch_index is list [0, '1'], not a list of integers"),
    ("input_offset", "3", "input_offset_in_elements is str '3', not an integer or null"),
], ids=["recovered-list", "descriptors-str", "seconds-str", "seconds-bool", "seconds-nan", "seconds-inf",
        "seconds-over-a-float", "message-null", "provider-int",
        "count-str", "count-float", "index-dict", "index-str-item", "old-offset-str"])
def test_a_field_of_another_kind_is_a_value_error_naming_it(field: str, value: object, named: str) -> None:
    """A damaged line of results.jsonl (valid JSON, a field of another kind) is refused where it
    is read, not where a report later uses the field (an AttributeError, a format error)."""
    data = json.loads(json.dumps(_result().to_dict(defaults=False)))
    data[field] = value
    with pytest.raises(ValueError, match=re.escape(named)):
        CaseResult.from_dict(data)


@pytest.mark.parametrize("seconds", [float("nan"), float("-inf"), 10 ** 400, "1"])
def test_seconds_that_are_no_finite_number_are_refused_naming_them(seconds: object) -> None:
    with pytest.raises(ArgumentError, match=r"valid: a finite number of seconds"):
        CaseResult(CASE, Status.PASS, "CPUExecutionProvider", seconds=seconds)  # type: ignore[arg-type]


def test_the_kinds_a_field_may_have_read_back() -> None:
    data = json.loads(json.dumps(_result().to_dict()))
    data.update(seconds=2, input_offset_in_elements=None, output_offset_in_elements=7,
                first_mismatch_index=None)
    back = CaseResult.from_dict(data)
    assert (back.seconds, back.output_offset_in_elements, back.first_mismatch_index) == (2, 7, None)


def test_a_status_given_as_its_value_is_the_status_and_others_are_refused() -> None:
    """A result made with status "pass" was falsy and its to_dict failed; "bogus" was taken."""
    made = CaseResult(CASE, "pass", "cpu")  # type: ignore[arg-type]
    assert made.status is Status.PASS and made.passed and bool(made)
    assert made == CaseResult(CASE, Status.PASS, "cpu")
    assert made.to_dict()["status"] == "pass"
    for bad in ("bogus", 1, None, "PASS"):
        with pytest.raises(ArgumentError) as raised:
            CaseResult(CASE, bad, "cpu")  # type: ignore[arg-type]
        assert str(raised.value) == (f"status {bad!r} is not a status; valid: ['pass', 'mismatch', "
                                     "'unsupported', 'error'] (Status members or their values)")
    with pytest.raises(ArgumentError, match=r"^case 'Transpose' is a str; valid: a Case$"):
        CaseResult("Transpose", Status.PASS, "cpu")  # type: ignore[arg-type]


def test_numpy_integers_are_taken_as_ints_and_bad_counts_are_refused() -> None:
    """numpy integers, which JSON cannot hold, were kept and failed the report writer later."""
    made = CaseResult(CASE, Status.MISMATCH, "cpu", element_count=np.int64(6), mismatch_count=np.uint8(1),
                      first_mismatch_index=[np.int32(1), 0], input_offset_in_elements=np.int64(3),
                      output_offset_in_elements=np.uint64(1), seconds=np.float32(0.5))
    assert (made.element_count, made.mismatch_count, made.first_mismatch_index, made.input_offset_in_elements,
            made.output_offset_in_elements, made.seconds) == (6, 1, (1, 0), 3, 1, 0.5)
    assert all(type(v) is int for v in (made.element_count, made.mismatch_count, *made.first_mismatch_index,
                                          made.input_offset_in_elements, made.output_offset_in_elements))
    assert type(made.seconds) is float and json.loads(json.dumps(made.to_dict()))["element_count"] == 6
    for field, bad, valid in [("element_count", -1, "an integer >= 0"),
                              ("mismatch_count", True, "an integer >= 0"),
                              ("input_offset_in_elements", 1.5, "an integer >= 0, or None"),
                              ("first_mismatch_index", (0, -1), "an integer >= 0")]:
        with pytest.raises(ArgumentError) as raised:
            CaseResult(CASE, Status.PASS, "cpu", **{field: bad})
        shown = -1 if field == "first_mismatch_index" else bad
        assert str(raised.value) == f"{field} {shown!r} is not valid; valid: {valid}"
    with pytest.raises(ArgumentError, match=r"^first_mismatch_index '10' is a str; valid: a tuple of "):
        CaseResult(CASE, Status.PASS, "cpu", first_mismatch_index="10")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=r"^seconds '1' is a str; valid: a finite number of seconds$"):
        CaseResult(CASE, Status.PASS, "cpu", seconds="1")  # type: ignore[arg-type]
