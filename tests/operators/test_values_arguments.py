"""make_input refuses what is no Case with an ArgumentError naming it and its type (it raised
an AttributeError on ``case.seed``)."""

from __future__ import annotations

import pytest

from ort_layouts import ArgumentError
from ort_layouts.operators.case import Case
from ort_layouts.operators.values import check_case, make_input


@pytest.mark.parametrize("bad, shown", [(None, "None is a NoneType"), (5, "5 is an int"),
                                        ("Transpose", "'Transpose' is a str")], ids=["None", "int", "str"])
def test_make_input_refuses_what_is_no_case(bad: object, shown: str) -> None:
    with pytest.raises(ArgumentError) as info:
        make_input(bad)  # type: ignore[arg-type]
    assert str(info.value) == (f"case {shown}, not a Case; valid: a Case (e.g. from standard_suite() or "
                               "Case(op=..., data_type=..., shape=...))")


def test_check_case_gives_a_case_back_and_names_the_argument() -> None:
    case = Case("Transpose", "int8", (2, 3), perm=(1, 0), values="iota")
    assert check_case(case) is case
    assert make_input(case).tolist() == [[0, 1, 2], [3, 4, 5]]  # iota: 0, 1, 2, ... in C order
    with pytest.raises(ArgumentError, match=r"^cases\[2\] None is a NoneType, not a Case; "):
        check_case(None, "cases[2]")
