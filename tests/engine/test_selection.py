"""The selection's lists are read alike: --values takes its kinds in any letter case, as --ops
takes op names and --dtypes data types (``--values Random`` was refused, ``--ops transpose`` and
``--dtypes FLOAT32`` taken)."""

from __future__ import annotations

import pytest

from ort_layouts._errors import ShapeError
from ort_layouts.engine.selection import resolve_dtypes, resolve_ops, resolve_value_kinds, select_cases


def test_the_other_lists_take_any_case() -> None:
    """The rule --values follows: that of --ops and --dtypes."""
    assert resolve_ops(["transpose", "PAD"]) == ["Transpose", "Pad"]
    assert [d.name for d in resolve_dtypes(["FLOAT32", "Int8"]) or []] == ["FLOAT32", "INT8"]


@pytest.mark.parametrize("given, kinds", [
    (["Random"], ["random"]),
    (["RANDOM", "Iota"], ["random", "iota"]),
    (["sPeCiAl", "special"], ["special", "special"]),
    (("iota",), ["iota"]),
])
def test_value_kinds_in_any_case_are_the_kinds_as_spelt(given: list[str], kinds: list[str]) -> None:
    assert resolve_value_kinds(given) == kinds


@pytest.mark.parametrize("given, shown", [(["Randm"], "'Randm'"), (["random", "IOTAS"], "'IOTAS'"),
                                          ([1], "1"), ([None], "None")])
def test_an_unknown_kind_is_named_with_the_valid_ones(given: list[object], shown: str) -> None:
    with pytest.raises(ShapeError) as refused:
        resolve_value_kinds(given)  # type: ignore[arg-type]
    assert str(refused.value) == f"unknown kind {shown}; valid: ['random', 'special', 'iota']"


def test_a_selection_by_kinds_in_another_case_is_the_same_selection() -> None:
    lower = select_cases(ops=["Transpose"], dtypes=["float32"], ranks=[2], values=["special", "iota"])
    mixed = select_cases(ops=["Transpose"], dtypes=["float32"], ranks=[2], values=["IOTA", "Special"])
    assert lower and [c.id for c in mixed] == [c.id for c in lower]
    assert {c.values for c in lower} == {"special", "iota"}
