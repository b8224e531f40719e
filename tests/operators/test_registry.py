"""The registry's one check of an op name, and the case makers that refuse an unknown op with it
(a model's callers: tests/models/test_op_names.py; the command line's catalogue of bad inputs)."""

from __future__ import annotations

import pytest

from ort_layouts._errors import ShapeError
from ort_layouts.engine.selection import resolve_ops
from ort_layouts.engine.suite import standard_suite
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import check_op_type, operator_for_type

# the op types of ARCHITECTURE.md's operator modules, in the order of the standard suite
EVERY_OP = ["Transpose", "Expand", "Pad", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
            "DepthToSpace", "SpaceToDepth", "Slice", "Tile", "Concat", "Split"]


@pytest.mark.parametrize(("name", "options", "expected"), [
    ("Transpose", {}, "Transpose"),
    ("SpaceToDepth", {"cases": True}, "SpaceToDepth"),
    ("transpose", {"any_case": True}, "Transpose"),
    ("DEPTHTOSPACE", {"any_case": True, "cases": True}, "DepthToSpace"),
], ids=["exact", "cases", "any-case", "any-case-cases"])
def test_a_known_name_is_spelt_as_the_registry_spells_it(name: str, options: dict[str, bool],
                                                       expected: str) -> None:
    assert check_op_type(name, **options) == expected


@pytest.mark.parametrize(("name", "shown"), [("transpose", "'transpose'"), ("Conv", "'Conv'"), (3, "3"),
                                             (None, "None"), (["Pad"], "['Pad']")],
                         ids=["other-case", "unknown", "int", "none", "list"])
def test_another_name_is_refused_naming_it_and_the_valid_ones(name: object, shown: str) -> None:
    with pytest.raises(ShapeError) as raised:
        check_op_type(name)
    assert str(raised.value) == f"op {shown} is not a layout op here; valid: {EVERY_OP}"


def test_operator_for_type_refuses_with_the_one_message() -> None:
    with pytest.raises(ShapeError) as raised:
        operator_for_type("Conv")
    assert str(raised.value) == f"op 'Conv' is not a layout op here; valid: {EVERY_OP}"


def test_the_case_makers_refuse_an_unknown_op() -> None:
    no_cases = f"op 'Conv' is not a layout op that makes cases here; valid: {EVERY_OP}"
    with pytest.raises(ShapeError) as raised:
        check_op_type("Conv", cases=True)
    assert str(raised.value) == no_cases
    for refuse in (lambda: Case("Conv", "float32", (2, 3)), lambda: resolve_ops(["pad", "Conv"]),
                   lambda: standard_suite(ops=["Pad", "Conv"])):
        with pytest.raises(ShapeError) as raised:
            refuse()
        assert str(raised.value) == no_cases
