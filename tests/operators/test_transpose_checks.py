"""A Transpose case refuses, when it is made, a perm that is not a permutation of its axes:
what ONNX's Transpose (and ``numpy.transpose``) refuse too."""

from __future__ import annotations

import numpy as np
import pytest

from ort_layouts._errors import ShapeError
from ort_layouts.operators.case import Case


@pytest.mark.parametrize("shape, perm, message", [
    ((3, 4), (0, 0), "perm [0, 0] is not a permutation of 0..1 (rank 2)"),
    ((3, 4), (0, 1, 2), "perm [0, 1, 2] is not a permutation of 0..1 (rank 2)"),
    ((3, 4), (0,), "perm [0] is not a permutation of 0..1 (rank 2)"),
    ((3, 4), (2, 0), "perm [2, 0] is not a permutation of 0..1 (rank 2)"),
    ((2, 3, 4), (2, 1, 1), "perm [2, 1, 1] is not a permutation of 0..2 (rank 3)"),
    ((2, 3), (1, 0, 2), "perm [1, 0, 2] is not a permutation of 0..1 (rank 2)"),
], ids=["repeated", "too-long", "too-short", "out-of-range", "rank3-repeated", "too-long-swapped"])
def test_a_perm_that_is_not_a_permutation_of_the_axes_is_refused_when_the_case_is_made(
        shape: tuple[int, ...], perm: tuple[int, ...], message: str) -> None:
    with pytest.raises((ValueError, np.exceptions.AxisError)):  # numpy refuses the same perm
        np.transpose(np.zeros(shape), perm)
    with pytest.raises(ShapeError) as raised:
        Case("Transpose", "float32", shape, perm=perm)
    assert str(raised.value) == message


@pytest.mark.parametrize("shape, perm", [((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((), ()), ((5,), None)],
                         ids=["swap", "rotate", "scalar", "default"])
def test_a_permutation_of_the_axes_makes_a_case(shape: tuple[int, ...], perm: tuple[int, ...] | None) -> None:
    case = Case("Transpose", "float32", shape, perm=perm)
    assert case.perm == perm
