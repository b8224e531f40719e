"""A run's selection as its meta stores it: ops, dtypes and values in the suite's order and ranks
sorted, each once, so that the order they were asked in makes no other selection."""

from __future__ import annotations

from typing import Any

import pytest

from ort_layouts import ArgumentError
from ort_layouts.engine.session import (
    normalized_selection,
    selection_differences,
    validation_meta,
    validation_selection,
)


def test_ops_and_ranks_are_stored_in_order_each_once() -> None:
    cpu = "CPUExecutionProvider"
    a = validation_meta(provider=cpu, ops=["Expand", "Transpose", "Expand"], ranks=[3, 1, 3])
    b = validation_meta(provider=cpu, ops=["Transpose", "Expand"], ranks=[1, 3])
    assert a["selection"] == b["selection"]
    assert a["selection"]["ops"] == ["Transpose", "Expand"]  # the suite's order
    assert a["selection"]["ranks"] == [1, 3]


@pytest.mark.parametrize(("selection", "expected"), [
    ({"ops": ["Pad", "Transpose", "Pad"], "ranks": [4, 2, 2], "dtypes": ["int8", "float32"]},
     {"ops": ["Transpose", "Pad"], "ranks": [2, 4], "dtypes": ["float32", "int8"]}),
    ({"dtypes": ["uint64", "float16", "float32", "float16"], "values": ["iota", "random", "random"]},
     {"dtypes": ["float32", "float16", "uint64"], "values": ["random", "iota"]}),
    ({"dtypes": ["nope", "int8"], "values": "iota"}, {"dtypes": ["int8", "nope"], "values": "iota"}),
    ({"ops": "Transpose", "ranks": [1, "x"]}, {"ops": "Transpose", "ranks": [1, "x"]}),
    ({"ops": ["Nope", "Pad"], "ranks": None}, {"ops": ["Pad", "Nope"], "ranks": None}),
    ({}, {}),
], ids=["reordered", "dtypes-values-reordered", "unknown-last", "other-kinds", "unknown-op-last", "empty"])
def test_normalized_selection(selection: dict[str, Any], expected: dict[str, Any]) -> None:
    assert normalized_selection(selection) == expected


def test_dtypes_and_values_are_stored_in_order_each_once() -> None:
    cpu = "CPUExecutionProvider"
    a = validation_meta(provider=cpu, dtypes=["int8", "float32", "int8"], values=["iota", "random", "random"])
    b = validation_meta(provider=cpu, dtypes=["float32", "int8"], values=["random", "iota"])
    assert a["selection"] == b["selection"]
    assert a["selection"]["dtypes"] == ["float32", "int8"]  # SUITE_DTYPES' order
    assert a["selection"]["values"] == ["random", "iota"]  # VALUE_KINDS' order


def test_selection_differences_name_each_field_that_differs_by_name() -> None:
    old = {"ops": ["Pad", "Transpose"], "ranks": [2, 1], "seed": 0, "shard": "1/2", "limit": 3}
    new = {"ops": ["Transpose", "Pad", "Pad"], "ranks": [1, 2], "seed": 7, "shard": "2/2", "dtypes": ["int8"]}
    assert selection_differences(old, new) == [
        ("dtypes", None, ["int8"]), ("limit", 3, None), ("seed", 0, 7), ("shard", "1/2", "2/2")]
    assert selection_differences(old, new, ignore={"shard", "limit", "dtypes"}) == [("seed", 0, 7)]
    assert selection_differences(old, {**old, "ops": ["Transpose", "Pad"]}) == []


def test_the_selection_alone_is_the_meta_s_and_names_a_field_it_does_not_take() -> None:
    cpu = "CPUExecutionProvider"
    asked: dict[str, Any] = {"ops": ["Pad"], "ranks": [2], "dtypes": ["int8"], "values": ["iota"], "seed": 3,
                             "shard": (1, 2), "limit": 5, "optimize": True, "dims": {"n": 2, "b": 1}}
    assert validation_selection(provider=cpu, **asked) == validation_meta(provider=cpu, **asked)["selection"]
    assert validation_selection(provider=cpu, **asked)["dims"] == {"b": 1, "n": 2}
    assert validation_selection(provider=cpu) == validation_meta(provider=cpu)["selection"]
    assert "dims" not in validation_selection(provider=cpu, dims={})  # as a report made before dims were kept
    with pytest.raises(ArgumentError, match=r"validation_selection got \['op'\]; valid: \['dims', 'dtypes'"):
        validation_selection(provider=cpu, op=["Pad"])

