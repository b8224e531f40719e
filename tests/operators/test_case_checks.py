"""Case refuses, with a typed error naming the value, what would otherwise make another case than
asked or fail a whole batch later; tensors over DirectML's limits are inexpressible (compared
with numpy), not errors."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ShapeError
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case
from ort_layouts.operators.registry import operator_for_type


@pytest.mark.parametrize("shape, fragment", [
    ("23", "shape '23' is not a sequence of integers"),
    (5, "shape 5 is not a sequence of integers"),
    ((2.7, 3), "holds 2.7, which is not an integer"),
    ((True, 3), "holds True, which is not an integer"),
    ({4, 3}, "is not a sequence of integers"),
    ((-1, 3), "shape (-1, 3) holds -1, which is less than 0; valid: a list, tuple or array of integers >= 0"),
], ids=["string", "scalar", "float", "bool", "set", "negative"])
def test_a_shape_that_is_not_sizes_is_refused(shape: Any, fragment: str) -> None:
    with pytest.raises(ShapeError) as raised:
        Case("Transpose", "float32", shape)
    assert fragment in str(raised.value)


@pytest.mark.parametrize("fields, fragment", [
    ({"seed": "abc"}, "seed 'abc' is not valid; valid: an integer >= 0"),
    ({"seed": -1}, "seed -1 is not valid; valid: an integer >= 0"),
    ({"opset": "13"}, "opset '13' is not an integer"),
    ({"opset": 0}, "opset 0 is not valid; valid: an integer >= 1"),
    ({"pads": (1, 1)}, "a Transpose case takes ['perm'], not ['pads']"),
    ({"mode": "reflect"}, "a Transpose case takes ['perm'], not ['mode']"),
    ({"pad_value_hex": "zz"}, "not ['pad_value_hex']"),
], ids=["seed-text", "seed-negative", "opset-text", "opset-zero", "stray-pads", "stray-mode", "stray-value"])
def test_seed_opset_and_fields_the_op_does_not_take_are_refused(fields: dict[str, Any],
                                                                fragment: str) -> None:
    with pytest.raises(ShapeError) as raised:
        Case("Transpose", "float32", (2, 3), **fields)
    assert fragment in str(raised.value)


def test_an_axis_that_is_not_an_integer_is_refused_and_numpy_integers_are_taken() -> None:
    with pytest.raises(ShapeError, match=r"axis 0\.9 is not an integer"):
        Case("Concat", "float32", (4, 3), axis=0.9, parts=(2, 2))  # type: ignore[arg-type]
    case = Case("Transpose", "float32", (np.int64(2), np.int32(3)), perm=[np.int64(1), 0], seed=np.uint32(7))
    assert (case.shape, case.perm, case.seed) == ((2, 3), (1, 0), 7)
    assert all(type(v) is int for v in (*case.shape, *case.perm, case.seed))
    # the modes an op has by default are no stray field
    assert Case("SpaceToDepth", "float32", (1, 4, 2, 2), blocksize=2).mode == "DCR"


def test_from_dict_takes_any_mapping_and_refuses_what_is_not_one() -> None:
    case = Case("Pad", "int8", (3, 4), pads=(1, 0, 0, 2), mode="edge", seed=3)
    data = {"op": "Pad", "data_type": "INT8", "shape": [3, 4], "pads": [1, 0, 0, 2], "mode": "edge",
            "seed": 3}
    assert Case.from_dict(types.MappingProxyType(data)) == case
    assert Case.from_dict(data) == case
    for bad in ([("op", "Pad")], "Pad", None):
        with pytest.raises(TypeError, match=f"a case is a JSON object, not {type(bad).__name__}"):
            Case.from_dict(bad)  # type: ignore[arg-type]


def test_a_bad_case_is_refused_before_the_run_and_leaves_the_others_alone() -> None:
    with pytest.raises(ShapeError):
        Case("Transpose", "float32", (2, 3), seed="abc")  # type: ignore[arg-type]
    good = Case("Transpose", "float32", (2, 3), perm=(1, 0))
    assert run_cases([good], provider="cpu", jobs=1)[0].status is Status.PASS


@pytest.mark.parametrize("case", [
    Case("Transpose", "float32", (1, 2, 1, 2, 1, 2, 1, 1, 2)),
    Case("Expand", "float32", (1,) * 8, target_shape=(2,) * 9),
    Case("Pad", "float32", (1,) * 9, pads=(0,) * 9 + (1,) + (0,) * 8),
    Case("Slice", "float32", (2,) * 9, starts=(0,), ends=(1,), axes=(0,)),
    Case("Concat", "float32", (2,) * 9, axis=0, parts=(1, 1)),
    Case("Split", "float32", (2,) * 9, axis=0, parts=(1, 1)),
    Case("Tile", "float32", (1, 2, 1, 1, 1, 1, 1, 1, 2), repeats=(1,) * 8 + (2,)),
], ids=["Transpose", "Expand", "Pad", "Slice", "Concat", "Split", "Tile"])
def test_more_than_8_dimensions_is_inexpressible_and_checked_against_numpy(case: Case) -> None:
    reason = operator_for_type(case.op).inexpressible_reason(case)
    assert "tensor" in reason and "over DirectML's 8 dimensions" in reason
    (result,) = run_cases([case], provider="cpu", jobs=1)
    assert result.status is Status.PASS, result.message  # the CPU EP against the numpy reference


@pytest.mark.parametrize(("case", "shape"), [
    (Case("Expand", "uint8", (1, 1), target_shape=(65537, 65536)), "[65537, 65536]"),
    (Case("Tile", "uint8", (65536,), repeats=(65537,)), "[4295032832]"),  # Tile has its own reasons too
], ids=["Expand", "Tile"])
def test_more_than_2_to_the_32_elements_is_inexpressible(case: Case, shape: str) -> None:
    reason = operator_for_type(case.op).inexpressible_reason(case)
    assert reason == f"a tensor {shape} of 4295032832 elements is over DirectML's 2^32 - 1"


def test_a_space_to_depth_mode_other_than_its_one_order_says_so() -> None:
    with pytest.raises(ShapeError, match=r"SpaceToDepth has no mode \(its order is DCR\), got 'CRD'"):
        Case("SpaceToDepth", "float32", (1, 4, 2, 2), blocksize=2, mode="CRD")


_OVER = 2**63  # one past INT64_MAX


@pytest.mark.parametrize("op, shape, fields, named", [
    ("Pad", (3, 2), {"pads": (_OVER, 0, 0, 0)}, "pads"),
    ("Pad", (3, 2), {"pads": (0, -_OVER - 1, 0, 0)}, "pads"),
    ("Tile", (3, 2), {"repeats": (_OVER, 1)}, "repeats"),
    ("Expand", (1, 2), {"target_shape": (_OVER, 2)}, "target_shape"),
    ("Transpose", (_OVER, 1), {}, "shape"),
    ("Slice", (4,), {"starts": (0,), "ends": (-_OVER - 1,)}, "ends"),
    ("Split", (4, 2), {"axis": 2**64}, "axis"),
    ("Transpose", (2,), {"opset": _OVER}, "opset"),
], ids=["pads", "negative-pads", "repeats", "target-shape", "shape", "slice-ends", "axis", "opset"])
def test_an_integer_no_int64_holds_is_refused_when_the_case_is_made(
        op: str, shape: tuple[int, ...], fields: dict[str, Any], named: str) -> None:
    # a model holds these as int64 (attributes, initializers, dims); the case was once made and
    # failed later in numpy ("`pad_width` must be of integral type") or in onnx (OverflowError)
    with pytest.raises(ShapeError) as raised:
        Case(op, "float32", shape, **fields)
    assert named in str(raised.value) and "does not fit int64" in str(raised.value)
    assert str(2**63 - 1) in str(raised.value)  # the valid range


def test_the_int64_extremes_themselves_make_cases() -> None:
    assert Case("Slice", "float32", (4,), starts=(-(2**63),), ends=(2**63 - 1,)).ends == (2**63 - 1,)
    assert Case("Pad", "float32", (3,), pads=(0, 0)).pads == (0, 0)
