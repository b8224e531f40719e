"""The registry's one check of an op name (its callers: tests/models/test_op_names.py and the
command line's catalogue of bad inputs)."""

from __future__ import annotations

import pytest

from ort_layouts._errors import ShapeError
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
