"""Expand: a case's target shape is checked against ONNX's multidirectional broadcasting (numpy's
rule, and the ONNX reference implementation's result) when the case is made."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ort_layouts._errors import ShapeError
from ort_layouts.descriptors.broadcast import broadcast_conflict, broadcast_shape
from ort_layouts.descriptors.buffer_tensor import BufferTensorDesc
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator, expected_output, reference_output
from ort_layouts.operators.registry import operator_for_type
from ort_layouts.operators.values import make_input

PAIRS = [
    ((2, 3), (4, 3)), ((2, 3), (2, 4)), ((2, 3), (3, 2)), ((3,), (2, 4)), ((2, 3), (2, 0)),
    ((2, 0), (2, 3)), ((2, 3), (5, 2, 1)),  # incompatible
    ((2, 3), (3,)), ((2, 1), (2, 0)), ((2, 0), (2, 1)), ((1, 3), (4, 1, 1)), ((), (2, 3)), ((2, 3), ()),
    ((1,), (0,)), ((2, 1, 3), (2, 4, 3)),  # compatible
]


def _onnx_expand(x: np.ndarray, target: tuple[int, ...]) -> np.ndarray:
    """ONNX's own reference implementation of Expand (opset 13)."""
    node = helper.make_node("Expand", ["x", "shape"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(target, dtype=np.int64), "shape")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return np.asarray(ReferenceEvaluator(model).run(None, {"x": x})[0])


@pytest.mark.parametrize(("shape", "target"), PAIRS, ids=[f"{s}-to-{t}" for s, t in PAIRS])
def test_a_case_is_made_exactly_when_numpy_broadcasts_the_shapes(shape: tuple[int, ...],
                                                                 target: tuple[int, ...]) -> None:
    try:
        want = np.broadcast_shapes(shape, target)
    except ValueError:
        with pytest.raises(ShapeError) as raised:
            Case("Expand", "float32", shape, target_shape=target)
        text = str(raised.value)
        assert f"target_shape {list(target)}" in text and f"input {list(shape)}" in text
        assert "each pair of sizes equal or one of them 1" in text
        return
    case = Case("Expand", "float32", shape, target_shape=target)
    assert operator_for_type("Expand").output_shape(case) == want
    x = make_input(case)
    got = reference_output(case, x)
    assert got.shape == want and np.array_equal(got, _onnx_expand(x, target))


def test_the_refused_axis_is_named_in_output_coordinates() -> None:
    with pytest.raises(ShapeError, match=r"axis 1 \(right-aligned\) has 2 and 4"):
        Case("Expand", "float32", (2, 3), target_shape=(5, 4, 3))  # input axis 0 is output axis 1


def test_the_case_and_the_descriptor_name_the_same_refused_axis() -> None:
    """Input [2, 3] and target [4, 5] differ on both axes: each names the first, axis 0 (2 and 4)."""
    with pytest.raises(ShapeError, match=r"axis 0 \(right-aligned\) has 2 and 4"):
        Case("Expand", "float32", (2, 3), target_shape=(4, 5))
    with pytest.raises(ShapeError, match=r"axis 0 \(right-aligned\) has 2 and 4"):
        BufferTensorDesc("float32", (2, 3)).broadcast_to((4, 5))
    with pytest.raises(ShapeError, match=r"axis 1 \(right-aligned\) has 3 and 5"):
        BufferTensorDesc("float32", (3, 4)).broadcast_to((2, 5, 4))


SHAPES = [(), (1,), (3,), (0,), (2, 1), (1, 3), (2, 3), (3, 2), (2, 0), (1, 1, 3), (4, 1, 1), (2, 2, 3)]


def test_the_broadcast_rule_is_numpys() -> None:
    """Every pair of shapes: the broadcast shape where numpy broadcasts them, otherwise the first
    pair of sizes (right-aligned) that differ with neither 1."""
    for a in SHAPES:
        for b in SHAPES:
            try:
                want = np.broadcast_shapes(a, b)
            except ValueError:
                assert broadcast_shape(a, b) is None, (a, b)
                rank = max(len(a), len(b))
                pa, pb = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
                first = next(k for k in range(rank) if 1 not in (pa[k], pb[k]) and pa[k] != pb[k])
                assert broadcast_conflict(a, b) == (first, pa[first], pb[first]), (a, b)
                continue
            assert broadcast_shape(a, b) == want and broadcast_conflict(a, b) is None, (a, b)


def test_a_negative_target_size_is_refused() -> None:
    with pytest.raises(ShapeError, match=r"target_shape \[2, -1\] has a negative size; valid: sizes >= 0"):
        Case("Expand", "float32", (2, 3), target_shape=(2, -1))


def test_a_target_that_does_not_broadcast_is_refused_naming_the_conflicting_axis() -> None:
    with pytest.raises(ShapeError, match=r"target_shape \[5, 4\] does not broadcast with the input "
                                         r"\[2, 3, 4\]: axis 1 \(right-aligned\) has 3 and 5"):
        Case("Expand", "float32", (2, 3, 4), target_shape=(5, 4))
    with pytest.raises(ShapeError, match=r"cannot broadcast sizes \[2, 3, 4\] to shape \[5, 4\]: "
                                         r"axis 1 \(right-aligned\) has 3 and 5"):
        BufferTensorDesc("float32", (2, 3, 4)).broadcast_to((5, 4))


def test_a_compatible_case_gives_the_broadcast_through_every_path() -> None:
    case = Case("Expand", "int32", (2, 1), target_shape=(3, 2, 4))
    x = np.array([[7], [-5]], dtype=np.int32)
    want = np.array([[[7] * 4, [-5] * 4]] * 3, dtype=np.int32)  # worked by hand
    assert np.array_equal(reference_output(case, x), want)
    assert np.array_equal(expected_output(case, x), want)
    op = dml_operator(case)
    assert op.input.sizes == (1, 3, 2, 4) and op.input.strides == (0, 0, 1, 0)  # 4-D, as Initialize pads
