"""The oracle's public functions take a Case and its input exactly: another input (None, too
few elements, another shape, another element type) is refused with the library's typed error
before anything is computed, never read as zeros or cast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError, DataTypeError, ShapeError
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import (
    dml_operator,
    expected_output,
    expected_outputs,
    input_feeds,
    output_shape,
    output_shapes,
    reference_output,
    reference_outputs,
)

CASE = Case("Transpose", "float32", (2, 3), perm=(1, 0))
TAKES_INPUT: list[Callable[..., Any]] = [expected_output, expected_outputs, reference_output,
                                          reference_outputs, input_feeds]


@pytest.mark.parametrize("fn", TAKES_INPUT, ids=lambda f: f.__name__)
@pytest.mark.parametrize(("bad", "error", "named"), [
    (None, DataTypeError, "valid: float32"),
    (np.arange(4, dtype=np.float32), ShapeError, "input_array has shape [4]; valid: the case's [2, 3]"),
    (np.arange(6, dtype=np.float32), ShapeError, "input_array has shape [6]"),
    (np.zeros((3, 4), np.float32), ShapeError, "input_array has shape [3, 4]"),
    (np.arange(6, dtype=np.float64).reshape(2, 3), DataTypeError, "input_array is float64"),
    ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], DataTypeError, "input_array is float64"),
], ids=["none", "short", "flat", "wrong-shape", "float64", "list"])
def test_an_input_that_is_not_the_cases_is_refused(fn: Callable[..., Any], bad: Any, error: type,
                                                   named: str) -> None:
    with pytest.raises(error) as caught:
        fn(CASE, bad)
    assert named in str(caught.value)


@pytest.mark.parametrize("fn", [*TAKES_INPUT, dml_operator, output_shape, output_shapes],
                         ids=lambda f: f.__name__)
def test_what_is_no_case_is_refused(fn: Callable[..., Any]) -> None:
    args = ("Transpose",) if fn in (dml_operator, output_shape, output_shapes) else ("Transpose", None)
    with pytest.raises(ArgumentError, match=r"case 'Transpose' is a str, not a Case; valid: a Case"):
        fn(*args)


def test_the_cases_own_input_in_either_byte_order_gives_numpys_transpose() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = np.ascontiguousarray(x.T).tobytes()  # independent: numpy's transpose
    assert expected_output(CASE, x).tobytes() == want
    assert expected_output(CASE, x.astype(">f4")).tobytes() == want  # swapped bit for bit, not cast
    assert reference_output(CASE, x).tobytes() == want


@pytest.mark.parametrize("case", [
    Case("Transpose", "float32", (2, 0, 3), perm=(2, 0, 1)),
    Case("Expand", "float32", (2, 1), target_shape=(2, 0)),
    Case("Pad", "float32", (2, 0), pads=(1, 0, 1, 0)),
    Case("DepthToSpace", "float32", (0, 8, 2, 2), blocksize=2),
    Case("Reshape", "float32", (2, 0), target_shape=(0, -1)),
    Case("Transpose", "float32", (1,) * 9, perm=tuple(range(9))),
], ids=["transpose-empty", "expand-empty", "pad-empty", "depth-to-space-empty", "reshape-empty",
        "transpose-rank-9"])
def test_dml_operator_of_a_case_directml_cannot_express_is_a_not_expressible_error(case: Case) -> None:
    """As documented: a DescriptorError or ShapeError (a 0 size, nine dimensions) escaped a caller
    that catches NotExpressibleError."""
    from ort_layouts._errors import NotExpressibleError

    with pytest.raises(NotExpressibleError) as info:
        dml_operator(case)
    text = str(info.value)
    assert (text == "a rank-9 tensor [1, 1, 1, 1, 1, 1, 1, 1, 1] is over DirectML's 8 dimensions"
            or "has an empty tensor: DirectML has no 0 size" in text), text
