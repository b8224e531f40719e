"""CaseResult: a frozen value that hashes, pickles and reads back from its dict unchanged."""

from __future__ import annotations

import json
import pickle

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
