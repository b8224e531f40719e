"""The recovery through re-runs: an integer Pad's constant is never an input element's pattern
(the suite's constant 7 read as element 6 before), a border the GPU wrote only in part is a
region that breaks, and a re-run that raises any error is said on the diagnosis line. The bugs
are simulated by numpy (a GPU that swaps start and end padding, one whose dispatch stops
early); the expected lines are worked out by hand from them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from ort_layouts import Case, DataType, ProviderError, expected_output, explain, make_input
from ort_layouts.engine.recover import unique_inputs


def test_one_input_s_patterns_step_over_the_patterns_to_avoid() -> None:
    (x,) = unique_inputs(DataType.INT32, (3, 4), avoid=(7, 9, 0x7FFFFFFF))
    assert x.reshape(-1).tolist() == [1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 13, 14]
    (plain,) = unique_inputs(DataType.INT32, (3, 4))
    assert plain.reshape(-1).tolist() == list(range(1, 13))
    (f,) = unique_inputs(DataType.FLOAT32, (4,), avoid=(0x00800001,))  # the second float pattern
    assert f.view(np.uint32).tolist() == [0x00800000, 0x00800002, 0x00800003, 0x00800004]


def _swapped_pads(border: int):
    """A GPU that pads [1, 2, 0, 0] as [0, 0, 1, 2] and writes ``border`` there."""
    def run(x: np.ndarray) -> list[np.ndarray]:
        return [np.pad(x, [(0, 1), (0, 2)], constant_values=np.asarray(border, x.dtype))]
    return run


@pytest.mark.parametrize("constant", [7, 1000])
def test_an_integer_pad_s_constant_is_no_element_of_the_re_run(constant: int) -> None:
    case = Case("Pad", DataType.INT32, (3, 4), pads=(1, 2, 0, 0), mode="constant",
                pad_value_hex=np.int32(constant).tobytes().hex(), values="special")
    x = make_input(case)
    bug = _swapped_pads(5000)
    diagnosis = explain(case, x, bug(x)[0], bug)
    assert diagnosis.recovery is not None and diagnosis.recovery.kind == "padding", diagnosis.text
    assert diagnosis.recovery.names == ("start and end padding swapped",
                                        f"constant 0x1388 instead of 0x{constant:x}")


def test_a_border_the_gpu_wrote_only_in_part_is_where_the_output_breaks() -> None:
    """3x4 padded by 1 to 5x6 with 7.0; the dispatch stops before the last row (element 24), so
    the only wrong elements are the border's last row, 0 instead of 7.0."""
    case = Case("Pad", DataType.FLOAT32, (3, 4), pads=(1, 1, 1, 1), mode="constant", pad_value_hex="0000e040")
    x = make_input(case)

    def stops_early(i: np.ndarray) -> list[np.ndarray]:
        y = np.pad(i, 1, constant_values=np.float32(7.0))
        y.reshape(-1)[24:] = 0
        return [y]

    actual = stops_early(x)[0]
    assert actual.tobytes() != expected_output(case, x).tobytes()
    diagnosis = explain(case, x, actual, stops_early)
    assert diagnosis.recovery is not None and diagnosis.recovery.kind == "region", diagnosis.text
    assert "rows 0-3 of axis 0 right, from row 4 on" in diagnosis.text


@pytest.mark.parametrize("error", [RuntimeError("device lost"), ProviderError("device lost"),
                                   ValueError("device lost")])
def test_a_re_run_that_raises_is_said_whatever_its_error(error: Exception) -> None:
    case = Case("Transpose", DataType.UINT8, (2, 3, 50), perm=(2, 1, 0))  # 300 elements: re-runs needed
    x = make_input(case)
    actual = np.roll(expected_output(case, x).reshape(-1), 1).reshape(50, 3, 2)  # no alternative fits

    def rerun(_: np.ndarray) -> Sequence[np.ndarray]:
        raise error

    diagnosis = explain(case, x, actual, rerun)
    assert diagnosis.text == "no alternative reproduces the output; the recovery failed: device lost"


def test_an_own_input_that_holds_the_constant_is_not_read_for_places() -> None:
    """Without a re-run, the case's own input serves only when no element holds the constant:
    here element 6 holds 7, which the border holds too, and a read of it named a wrong region."""
    case = Case("Pad", DataType.INT32, (3, 4), pads=(1, 2, 0, 0), mode="constant", pad_value_hex="07000000")
    x = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    actual = _swapped_pads(5000)(x)[0]
    assert explain(case, x, actual).recovery is None
    distinct = x + 100  # no element holds 7: the own input is read, and the bug named
    found = explain(case, distinct, _swapped_pads(5000)(distinct)[0]).recovery
    assert found is not None
    assert found.names == ("start and end padding swapped", "constant 0x1388 instead of 0x7")
