"""CaseResult: a frozen value that hashes, pickles and reads back from its dict unchanged."""

from __future__ import annotations

import json
import pickle
import re

import pytest

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
    ("seconds", "x", "seconds is str 'x', not a number"),
    ("seconds", True, "seconds is bool True, not a number"),
    ("message", None, "message is NoneType None, not a string"),
    ("provider", 5, "provider is int 5, not a string"),
    ("element_count", "6", "element_count is str '6', not an integer"),
    ("mismatch_count", 1.0, "mismatch_count is float 1.0, not an integer"),
    ("first_mismatch_index", {"a": 1}, "first_mismatch_index is dict {'a': 1}, not a list of integers"),
    ("first_mismatch_index", [0, "1"], "first_mismatch_index is list [0, '1'], not a list of integers"),
    ("input_offset", "3", "input_offset_in_elements is str '3', not an integer or null"),
], ids=["recovered-list", "descriptors-str", "seconds-str", "seconds-bool", "message-null", "provider-int",
        "count-str", "count-float", "index-dict", "index-str-item", "old-offset-str"])
def test_a_field_of_another_kind_is_a_value_error_naming_it(field: str, value: object, named: str) -> None:
    """A damaged line of results.jsonl (valid JSON, a field of another kind) is refused where it
    is read, not where a report later uses the field (an AttributeError, a format error)."""
    data = json.loads(json.dumps(_result().to_dict(defaults=False)))
    data[field] = value
    with pytest.raises(ValueError, match=re.escape(named)):
        CaseResult.from_dict(data)


def test_the_kinds_a_field_may_have_read_back() -> None:
    data = json.loads(json.dumps(_result().to_dict()))
    data.update(seconds=2, input_offset_in_elements=None, output_offset_in_elements=7,
                first_mismatch_index=None)
    back = CaseResult.from_dict(data)
    assert (back.seconds, back.output_offset_in_elements, back.first_mismatch_index) == (2, 7, None)
