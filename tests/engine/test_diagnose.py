"""diagnose: a deliberately wrong output (built with numpy) is caught by compare and named."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from ort_layouts._errors import ArgumentError, DataTypeError, ShapeError
from ort_layouts.descriptors.dtypes import DataType
from ort_layouts.engine.diagnose import Diagnosis, diagnose, explain
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import dml_operator as operator_for
from ort_layouts.operators.values import make_input
from ort_layouts.reference.buffers import unpack
from ort_layouts.reference.compare import compare
from ort_layouts.reference.execute import execute

RNG = np.random.default_rng(1234)
X234 = RNG.permutation(24).astype(np.float32).reshape(2, 3, 4) + 0.5  # distinct values
X2345 = RNG.permutation(120).astype(np.int32).reshape(2, 3, 4, 5)
X34 = RNG.permutation(12).astype(np.float32).reshape(3, 4) + 0.25
X44 = RNG.permutation(16).astype(np.uint16).reshape(4, 4) + 1
SRC_3x1x4 = RNG.permutation(12).astype(np.float32).reshape(3, 1, 4) + 1
SRC_3 = np.array([1.5, 2.5, 3.5], dtype=np.float32)
VALUE = np.float32(2.5).tobytes().hex()


def transposed(x: np.ndarray, perm: tuple[int, ...], out_shape: tuple[int, ...]) -> np.ndarray:
    """The EP wrote x transposed by ``perm`` into the output buffer of shape ``out_shape``."""
    return np.ascontiguousarray(np.transpose(x, perm)).reshape(out_shape)


def padded(x: np.ndarray, widths: list[tuple[int, int]], out_shape: tuple[int, ...], mode: str,
           value: float = 0.0) -> np.ndarray:
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.ascontiguousarray(np.pad(x, widths, mode=mode, **kw)).reshape(out_shape)  # type: ignore[call-overload]


WRONG: list[tuple[str, Case, np.ndarray, Callable[[], np.ndarray], list[str]]] = [
    ("transpose-read-packed", Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1)), X234,
     lambda: X234.reshape(4, 2, 3), ["input read packed"]),
    ("transpose-perm-inverted", Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1)), X234,
     lambda: transposed(X234, (1, 2, 0), (4, 2, 3)), ["perm [1, 2, 0]", "inverse", "applied twice"]),
    ("transpose-perm-inverted-4d", Case("Transpose", "int32", (2, 3, 4, 5), perm=(0, 2, 3, 1)), X2345,
     lambda: transposed(X2345, (0, 3, 1, 2), (2, 4, 5, 3)), ["perm [0, 3, 1, 2]", "inverse"]),
    ("transpose-applied-twice", Case("Transpose", "int32", (2, 3, 4, 5), perm=(1, 0, 3, 2)), X2345,
     lambda: X2345.reshape(3, 2, 5, 4), ["input read packed"]),  # an involution twice is a copy
    ("transpose-applied-twice-4cycle", Case("Transpose", "int32", (2, 3, 4, 5), perm=(1, 2, 3, 0)), X2345,
     lambda: transposed(X2345, (2, 3, 0, 1), (3, 4, 5, 2)), ["perm [1, 2, 3, 0] applied twice"]),
    ("transpose-two-entries-swapped", Case("Transpose", "int32", (2, 3, 4, 5), perm=(0, 2, 3, 1)), X2345,
     lambda: transposed(X2345, (0, 3, 2, 1), (2, 4, 5, 3)),
     ["perm [0, 3, 2, 1]", "entries 1 and 2 of perm [0, 2, 3, 1] swapped"]),
    ("transpose-other-perm", Case("Transpose", "float32", (2, 3, 4), perm=(1, 2, 0)), X234,
     lambda: transposed(X234, (1, 0, 2), (3, 4, 2)), ["perm [1, 0, 2]"]),
    ("expand-stride-not-zeroed", Case("Expand", "float32", (3, 1, 4), target_shape=(3, 5, 4)), SRC_3x1x4,
     lambda: np.concatenate([SRC_3x1x4.reshape(-1), np.full(48, np.nan, np.float32)]).reshape(3, 5, 4),
     ["packed strides", "not zeroed", "inside the input buffer"]),
    ("expand-axis-not-zeroed", Case("Expand", "float32", (3, 1, 4), target_shape=(2, 3, 2, 4)), SRC_3x1x4,
     lambda: np.stack([np.stack([SRC_3x1x4.reshape(-1)[4 * c + 4 * r: 4 * c + 4 * r + 4]
                                 if 4 * c + 4 * r + 4 <= 12 else np.full(4, -1, np.float32)
                                 for r in range(2)]) for c in range(3)])[None].repeat(2, axis=0),
     ["broadcast axis 2 not zeroed (stride 4 instead of 0"]),
    ("expand-aligned-left", Case("Expand", "float32", (3,), target_shape=(3, 3)), SRC_3,
     lambda: np.broadcast_to(SRC_3[:, None], (3, 3)), ["aligned left [3, 1] instead of right [1, 3]"]),
    ("pad-start-end-swapped", Case("Pad", "float32", (3, 4), pads=(1, 2, 3, 4), mode="reflect"), X34,
     lambda: padded(X34, [(3, 1), (4, 2)], (7, 10), "reflect"), ["start and end padding swapped"]),
    ("pad-reflect-as-symmetric", Case("Pad", "float32", (3, 4), pads=(1, 2, 3, 4), mode="reflect"), X34,
     lambda: padded(X34, [(1, 3), (2, 4)], (7, 10), "symmetric"), ["mode SYMMETRIC instead of REFLECTION"]),
    ("pad-reflect-as-edge", Case("Pad", "float32", (3, 4), pads=(1, 2, 3, 4), mode="reflect"), X34,
     lambda: padded(X34, [(1, 3), (2, 4)], (7, 10), "edge"), ["mode EDGE"]),
    ("pad-wrap-as-reflect", Case("Pad", "float32", (3, 4), pads=(2, 2, 2, 2), mode="wrap"), X34,
     lambda: padded(X34, [(2, 2), (2, 2)], (7, 8), "reflect"), ["mode REFLECTION"]),
    ("pad-edge-as-constant", Case("Pad", "float32", (3, 4), pads=(1, 1, 1, 1), mode="edge"), X34,
     lambda: padded(X34, [(1, 1), (1, 1)], (5, 6), "constant"), ["mode CONSTANT"]),
    ("pad-constant-value-lost", Case("Pad", "float32", (3, 4), pads=(1, 2, 3, 4), pad_value_hex=VALUE), X34,
     lambda: padded(X34, [(1, 3), (2, 4)], (7, 10), "constant"), ["constant value lost", "0x00002040"]),
    ("pad-interleaved", Case("Pad", "uint16", (4, 4), pads=(0, 2, 3, 0), mode="edge"), X44,
     lambda: padded(X44, [(0, 2), (3, 0)], (7, 6), "edge"), ["read interleaved"]),
    ("pad-wrong-axes", Case("Pad", "uint16", (4, 4), pads=(1, 0, 2, 0), mode="wrap"), X44,
     lambda: padded(X44, [(0, 0), (1, 2)], (7, 4), "wrap"), ["wrong axes", "0->1"]),
]


@pytest.mark.parametrize("case,x,make_actual,words", [w[1:] for w in WRONG], ids=[w[0] for w in WRONG])
def test_wrong_result_is_caught_and_named(case: Case, x: np.ndarray, make_actual: Callable[[], np.ndarray],
                                          words: list[str]) -> None:
    op = operator_for(case)
    expected = unpack(op.output, execute(op, x)).reshape(make_actual().shape)
    actual = make_actual()
    assert not compare(expected, actual)
    text = diagnose(case, x, actual)
    assert text.startswith("output matches ")
    for word in words:
        assert word in text, text
    assert "\n" not in text


def test_another_permutation_is_named_with_both_descriptors() -> None:
    # perm [0, 3, 1, 2] is neither the inverse of [1, 2, 3, 0] ([3, 0, 1, 2]), nor it applied
    # twice ([2, 3, 0, 1]), nor it with two entries swapped. The packed [2, 3, 4, 5] input has
    # strides [60, 20, 5, 1]; each descriptor takes the sizes and strides in its perm's order.
    case = Case("Transpose", "int32", (2, 3, 4, 5), perm=(1, 2, 3, 0))
    actual = transposed(X2345, (0, 3, 1, 2), (3, 4, 5, 2))
    assert diagnose(case, X2345, actual) == (
        "output matches perm [0, 3, 1, 2] instead of [1, 2, 3, 0] (input sizes [2, 5, 3, 4] strides "
        "[60, 1, 20, 5] instead of sizes [3, 4, 5, 2] strides [20, 5, 1, 60])")


def test_another_permutation_of_rank_6_is_found_among_all_of_them() -> None:
    # [0, 5, 1, 4, 2, 3] differs from [1, 2, 3, 4, 5, 0] in five places; the inverse is
    # [5, 0, 1, 2, 3, 4] and twice [2, 3, 4, 5, 0, 1]: only the search of every permutation finds it
    x = RNG.permutation(144).astype(np.uint16).reshape(2, 3, 2, 2, 3, 2)
    case = Case("Transpose", "uint16", x.shape, perm=(1, 2, 3, 4, 5, 0))
    actual = transposed(x, (0, 5, 1, 4, 2, 3), (3, 2, 2, 3, 2, 2))
    # packed strides [72, 24, 12, 6, 2, 1]
    assert diagnose(case, x, actual) == (
        "output matches perm [0, 5, 1, 4, 2, 3] instead of [1, 2, 3, 4, 5, 0] (input sizes "
        "[2, 2, 3, 3, 2, 2] strides [72, 1, 24, 2, 12, 6] instead of sizes [3, 2, 2, 3, 2, 2] "
        "strides [24, 12, 6, 2, 1, 72])")
    assert diagnose(case, x, np.zeros_like(actual)) == "output matches all zeros (nothing was written)"


def test_pad_left_aligned_coercion_is_named() -> None:
    # [2, 2, 3] is coerced to [1, 2, 2, 3]; axis 1's pads belong on DML axis 2. Placed
    # left-aligned they land on DML axis 1 (ONNX axis 0), which has the same size here, so the
    # element count agrees and only the order tells.
    x = np.arange(12, dtype=np.int8).reshape(2, 2, 3)
    case = Case("Pad", "int8", (2, 2, 3), pads=(0, 1, 0, 0, 0, 0), mode="edge")
    actual = np.ascontiguousarray(np.pad(x, [(1, 0), (0, 0), (0, 0)], mode="edge")).reshape(2, 3, 3)
    assert not compare(np.pad(x, [(0, 0), (1, 0), (0, 0)], mode="edge"), actual)
    assert "left-aligned" in diagnose(case, x, actual)


def test_int64_emulation_high_words_lost_is_named() -> None:
    x = np.array([[-1, 2], [3, -(2**40)]], dtype=np.int64)
    case = Case("Transpose", "int64", (2, 2), perm=(1, 0))
    actual = (x.T.copy().view(np.uint64) & np.uint64(0xFFFFFFFF)).view(np.int64)
    assert actual[0, 0] == 0x00000000FFFFFFFF  # ORT PR 6816: -1 became 0x00000000FFFFFFFF
    assert not compare(x.T.copy(), actual)
    assert "UINT32 low words" in diagnose(case, x, actual)


def test_nothing_written_is_named() -> None:
    case = Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1))
    assert "all zeros" in diagnose(case, X234, np.zeros((4, 2, 3), np.float32))


def test_right_or_unexplained_output_gives_empty_string() -> None:
    case = Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1))
    assert diagnose(case, X234, np.transpose(X234, (2, 0, 1))) == ""
    noise = np.random.default_rng(5).random((4, 2, 3), dtype=np.float32)
    assert diagnose(case, X234, noise) == ""
    assert diagnose(case, X234, noise.reshape(2, 12)) == ""  # another shape: the provider's doing


@pytest.mark.parametrize(("x", "actual", "error", "named"), [
    (X234.astype(np.float64), np.transpose(X234, (2, 0, 1)), DataTypeError,
     "input is float64 of shape [2, 3, 4]; valid: float32"),
    (X234.reshape(6, 4), np.transpose(X234, (2, 0, 1)), ShapeError,
     "shape [6, 4]; valid: the case's [2, 3, 4]"),
    (X234, np.zeros((4, 2, 3), np.float64), DataTypeError, "output 0 is float64, of 8-byte elements"),
    (X234, [np.transpose(X234, (2, 0, 1))] * 2, ShapeError, "2 actual output(s); valid: 1"),
], ids=["input-dtype", "input-shape", "output-dtype", "output-count"])
def test_arguments_unlike_the_case_are_refused_not_left_unexplained(
        x: np.ndarray, actual: np.ndarray, error: type[Exception], named: str) -> None:
    case = Case("Transpose", "float32", (2, 3, 4), perm=(2, 0, 1))
    with pytest.raises(error, match=re.escape(named)):
        explain(case, x, actual)


def _nan_input(pattern: list[int]) -> np.ndarray:
    return np.array(pattern, dtype=np.uint32).view(np.float32)


def test_nans_moved_by_a_stride_bug_are_no_nan_rewrite() -> None:
    """An all-NaN input broadcast with the strides of the wrong axis: every element that differs is
    a NaN in both, but the NaNs moved (and one stayed signalling): no float conversion does that."""
    case = Case("Expand", "float32", (1, 4), target_shape=(2, 3, 4))
    x = _nan_input([0x7FC00000, 0x7F800001, 0xFFC00001, 0x7FA5A5A5]).reshape(1, 4)
    flat = x.reshape(-1)
    wrong = np.stack([np.stack([np.full(4, flat[j]) for j in range(3)])] * 2)  # each row one element
    text = diagnose(case, x, wrong)
    assert "NaN payloads replaced" not in text and "quieted" not in text, text


def test_quiet_nans_trading_places_are_no_nan_rewrite() -> None:
    case = Case("Tile", "float32", (2,), repeats=(3,))
    x = _nan_input([0x7FC00000, 0x7FC00001])
    wrong = np.tile(x[::-1], 3)  # read backwards: each quiet NaN where the other belongs
    assert "NaN" not in diagnose(case, x, wrong)


def test_a_payload_collapsed_to_one_quiet_nan_is_a_nan_rewrite() -> None:
    case = Case("Tile", "float32", (3,), repeats=(2,))
    x = _nan_input([0x7FC00001, 0x3F800000, 0x7FA00000])
    converted = np.tile(_nan_input([0x7FC00000, 0x3F800000, 0x7FC00000]), 2)
    assert diagnose(case, x, converted).startswith("output matches the input with NaN payloads replaced")


def test_a_failed_re_run_keeps_the_alternative_found() -> None:
    case = Case("Transpose", "uint8", (8, 8, 8), perm=(2, 0, 1))
    x = np.arange(512, dtype=np.uint16).astype(np.uint8).reshape(8, 8, 8)  # values repeat: needs a re-run

    def lost(_: np.ndarray) -> list[np.ndarray]:
        raise RuntimeError("device lost")

    found = explain(case, x, np.ascontiguousarray(np.transpose(x, (1, 2, 0))), lost)
    assert found.text.startswith("output matches perm [1, 2, 0]"), found.text
    assert found.text.endswith("; the recovery failed: device lost") and found.recovery is None


def test_a_failed_re_run_with_no_alternative_found_is_said_not_raised() -> None:
    """No alternative reproduces a shuffled output, so the recovery re-runs the case: a re-run
    that raises (a device lost) is said in the line, as after an alternative."""
    case = Case("Transpose", "uint8", (8, 8, 8), perm=(2, 0, 1))
    x = np.arange(512, dtype=np.uint16).astype(np.uint8).reshape(8, 8, 8)
    shuffled = np.random.default_rng(0).permutation(np.transpose(x, (1, 2, 0)).reshape(-1)).reshape(8, 8, 8)
    calls: list[np.ndarray] = []

    def lost(r: np.ndarray) -> list[np.ndarray]:
        calls.append(r)
        raise RuntimeError("device lost")

    found = explain(case, x, shuffled, lost)
    assert calls, "the recovery never re-ran the case"
    assert found.text == "no alternative reproduces the output; the recovery failed: device lost"
    assert found.recovery is None


def test_a_constant_written_as_another_value_is_named() -> None:
    """A Pad whose borders hold another value than the constant (as a float16 Pad-10 on one
    DirectML stack writes 0xFFFF): numpy pads with the wrong value, the diagnosis names it."""
    case = Case("Pad", "float16", (3, 4), pads=(1, 2, 2, 1), mode="constant", pad_value_hex="00c2", seed=3)
    x = make_input(case)
    wrong = np.pad(x.view(np.uint16), ((1, 2), (2, 1)), constant_values=0xFFFF).view(np.float16)
    text = diagnose(case, x, wrong)
    assert text.startswith("output matches the constant replaced by 0xffff"), text
    assert "0xc200 expected" in text


# ---- explain: the line and the structured recovery ----------------------------------------
def test_explain_gives_diagnose_line_and_a_recovery_when_an_alternative_matches() -> None:
    """A named alternative gives the line; the recovery, run on the case's own input (its
    elements are distinct), gives the read in DirectML terms: Transpose [2,3,4] perm [2,0,1]
    reads strides [1,12,4] (the packed [12,4,1] permuted); read packed, [6,3,1]."""
    case = Case("Transpose", DataType.FLOAT32, (2, 3, 4), perm=(2, 0, 1))
    actual = X234.reshape(4, 2, 3)
    calls: list[np.ndarray] = []

    def rerun(x: np.ndarray) -> list[np.ndarray]:
        calls.append(x)
        return [np.asarray(x).reshape(4, 2, 3)]

    found = explain(case, X234, actual, rerun)
    assert isinstance(found, Diagnosis)
    assert found.text == diagnose(case, X234, actual)
    assert found.text.startswith("output matches the input read packed")
    assert calls == []  # a matching alternative: the recovery reads the case's own input only
    assert found.recovery is not None and found.recovery.kind == "read"
    assert found.recovery.applied["strides_in_elements"] == [6, 3, 1]
    assert found.recovery.expected["strides_in_elements"] == [1, 12, 4]
    assert explain(case, X234, actual, recover=False) == Diagnosis(found.text, None)


def test_explain_without_a_matching_alternative_is_the_recovery() -> None:
    """No alternative reproduces a Transpose read one element late; the recovery, through the
    re-run, gives both the line and the structure."""
    case = Case("Transpose", DataType.FLOAT32, (2, 3, 4), perm=(2, 0, 1))

    def late(x: np.ndarray) -> np.ndarray:
        flat = np.append(np.asarray(x).reshape(-1)[1:], np.zeros(1, np.float32))
        return np.ascontiguousarray(np.transpose(flat.reshape(2, 3, 4), (2, 0, 1)))

    found = explain(case, X234, late(X234), lambda x: [late(x)])
    assert found.recovery is not None and found.text == found.recovery.text
    assert found.text == diagnose(case, X234, late(X234), lambda x: [late(x)])
    assert found.recovery.applied["offset_in_elements"] == 1
    assert "offset +1 element" in found.recovery.names
    assert explain(case, X234, late(X234), recover=False) == Diagnosis("", None)


def test_explain_names_quieted_nans_as_a_value_transform() -> None:
    case = Case("Transpose", DataType.FLOAT16, (2, 2), perm=(1, 0), values="special")
    x = np.array([[0x7C01, 0x3C00], [0x3C00, 0x3C00]], dtype=np.uint16).view(np.float16)
    actual = np.ascontiguousarray(x.T.view(np.uint16) | np.where(x.T.view(np.uint16) == 0x7C01, 0x0200, 0)
                                  .astype(np.uint16)).view(np.float16)
    found = explain(case, x, actual)
    assert found.text.startswith("output matches the input with signalling NaNs quieted")
    assert found.recovery is not None and found.recovery.kind == "values"
    assert found.recovery.applied == {"transform": "signalling NaNs quieted"}


def test_explain_of_a_right_output_is_empty() -> None:
    case = Case("Transpose", DataType.FLOAT32, (2, 3, 4), perm=(2, 0, 1))
    assert explain(case, X234, np.transpose(X234, (2, 0, 1))) == Diagnosis("", None)


def test_explain_re_runs_when_the_own_input_cannot_identify_elements() -> None:
    """An int8 input with repeated values cannot tell its elements apart: with a matching
    alternative, the recovery's structure comes from the re-run (int8 [2,3] transposed
    [1,0] reads strides [1,3]; read packed, [2,1])."""
    case = Case("Transpose", DataType.INT8, (2, 3), perm=(1, 0))
    x = np.array([[1, 1, 2], [2, 3, 3]], dtype=np.int8)
    calls: list[np.ndarray] = []

    def rerun(arr: np.ndarray) -> list[np.ndarray]:
        calls.append(arr)
        return [np.asarray(arr).reshape(3, 2)]

    found = explain(case, x, x.reshape(3, 2), rerun)
    assert found.text.startswith("output matches the input read packed")
    assert len(calls) == 1 and found.recovery is not None
    assert found.recovery.applied["strides_in_elements"] == [2, 1]
    assert found.recovery.expected["strides_in_elements"] == [1, 3]
    assert explain(case, x, x.reshape(3, 2)).recovery is None  # no re-run given: nothing to read


def test_one_nan_converted_two_ways_is_a_nan_rewrite() -> None:
    """ONNX Runtime's CPU Pad converts a float16 constant and its data on two paths: the same
    signalling NaN comes out as 0x7E00 in the border and 0x7E01 inside."""
    case = Case("Pad", "float16", (2,), pads=(1, 1), mode="constant", pad_value_hex="017c")
    x = np.array([0x7C01, 0x3C00], dtype=np.uint16).view(np.float16)
    converted = np.array([0x7E00, 0x7E01, 0x3C00, 0x7E00], dtype=np.uint16).view(np.float16)
    assert diagnose(case, x, converted).startswith("output matches the input with NaN payloads replaced")


def _f16(patterns: list[int], shape: tuple[int, ...] | None = None) -> np.ndarray:
    x = np.array(patterns, dtype=np.uint16).view(np.float16)
    return x.reshape(shape) if shape else x


# ONNX Runtime 1.32's CPU Pad, float16 (seen): a NaN constant comes out quieted in the border and as
# the canonical quiet NaN 0x7E00 in its last elements; signalling NaNs in the data come out quieted
@pytest.mark.parametrize(("written", "named"), [
    (0x7E01, "output matches the input with signalling NaNs quieted"),
    (0x7E00, "output matches the input with NaN payloads replaced"),
    (0xFE00, "output matches the input with NaN payloads replaced"),
    (0xFFFF, "output matches the constant replaced by 0xffff"),  # no conversion makes it: a constant
], ids=["quieted", "canonical", "canonical-negative", "another-nan"])
def test_a_nan_constant_a_conversion_changed_is_named_a_conversion(written: int, named: str) -> None:
    case = Case("Pad", "float16", (4,), pads=(1, 0), mode="constant", pad_value_hex="017c")
    x = _f16([0x0000, 0x3C00, 0x4000, 0x4200])
    actual = _f16([written, 0x0000, 0x3C00, 0x4000, 0x4200])
    assert diagnose(case, x, actual).startswith(named)


def test_a_nan_quieted_in_the_data_and_made_canonical_in_the_border_is_a_conversion() -> None:
    """The outputs of ONNX Runtime 1.32's CPU Pad (float16, constant 0x7E01, pads (1, 0, 0, 1)):
    the data's 0x7C01 became 0x7E01, the constant 0x7E01 in the last column 0x7E00; 0x7E01 is both
    a pattern the conversion made and one it changed."""
    case = Case("Pad", "float16", (3, 4), pads=(1, 0, 0, 1), mode="constant", pad_value_hex="017e")
    x = _f16([0x7C01, 0x3C00, 0x7C01, 0x4200, 0x7C01, 0x4500, 0x7C01, 0x4700, 0x7C01, 0x4880,
              0x7C01, 0x4980], (3, 4))
    actual = _f16([0x7E01, 0x7E01, 0x7E01, 0x7E01, 0x7E01,
                   0x7E01, 0x3C00, 0x7E01, 0x4200, 0x7E01,
                   0x7E01, 0x4500, 0x7E01, 0x4700, 0x7E01,
                   0x7E01, 0x4880, 0x7E00, 0x4980, 0x7E00], (4, 5))
    assert diagnose(case, x, actual).startswith("output matches the input with NaN payloads replaced")


def test_nans_a_stride_bug_moved_are_named_as_the_stride_bug_not_a_conversion() -> None:
    """A quiet NaN moved onto another NaN's place would pass for a payload replaced; the
    alternatives that move bits are tried first and name the input read packed."""
    case = Case("Transpose", "float32", (2, 2), perm=(1, 0))
    x = np.array([[0x3F800000, 0x7FC00000], [0xFFC00000, 0x40000000]], dtype=np.uint32).view(np.float32)
    assert diagnose(case, x, x.copy()).startswith("output matches the input read packed")


@pytest.mark.parametrize("call", [explain, diagnose], ids=["explain", "diagnose"])
def test_what_is_no_case_is_an_argument_error_naming_its_type(call: Callable[..., object]) -> None:
    """explain(None, ...) raised an AttributeError on ``case.id``."""
    a = np.zeros((2, 3), np.float32)
    with pytest.raises(ArgumentError) as info:
        call(None, a, a)
    assert str(info.value) == ("case None is a NoneType, not a Case; valid: a Case (e.g. from "
                               "standard_suite() or Case(op=..., data_type=..., shape=...))")


@pytest.mark.parametrize("count", [10, 12])
def test_many_parts_in_another_order_are_named_without_every_permutation(count: int) -> None:
    """Every order of a Concat's inputs (a Split's outputs) was a candidate: 10 inputs took
    minutes and 12 ran out of memory. Two parts swapped are still named."""
    concat = Case("Concat", "float32", (count, 2), axis=0, parts=(1,) * count)
    x = make_input(concat)
    order = list(range(count))
    order[2], order[7] = 7, 2
    text = explain(concat, x, np.ascontiguousarray(x[order]), recover=False).text  # the rows joined so
    said = f"output matches the inputs joined in the order {order} instead of {list(range(count))}"
    assert said in text, text
    split = Case("Split", "float32", (count, 2), axis=0, num_outputs=count, opset=18)
    x = make_input(split)
    outputs = [np.ascontiguousarray(x[k:k + 1]) for k in order]  # numpy's split, two outputs swapped
    text = explain(split, x, outputs, recover=False).text
    assert "order" in text and str(order) in text, text


def test_a_case_directml_cannot_express_is_still_diagnosed_from_numpy_s_reading() -> None:
    """A cropping Pad and a rank-0 Transpose have no DirectML operator, yet other EPs run them:
    explain gave no diagnosis at all, where the read and the quieted NaN are found."""
    crop = Case("Pad", "float32", (4, 5), pads=(-1, 0, 0, -2), mode="constant")
    x = make_input(crop)

    def gpu(z: np.ndarray) -> np.ndarray:  # the crop taken from the wrong side of axis 0
        return np.ascontiguousarray(z[0:3, 0:3])

    found = explain(crop, x, gpu(x), lambda z: [gpu(z)])
    assert found.text == ("recovered: the GPU read sizes [3,3] strides [5,1] offset 0; expected strides "
                          "[5,1] offset 5: offset -5 elements"), found.text
    assert explain(crop, x, np.ascontiguousarray(x[1:, :3])).text == ""  # numpy's crop: right

    scalar = Case("Transpose", "float16", ())
    signalling = np.array(np.uint16(0x7C01)).view(np.float16)
    quieted = np.array(np.uint16(0x7E01)).view(np.float16)
    text = explain(scalar, signalling, quieted).text
    assert text.startswith("output matches the input with signalling NaNs quieted (1 element(s) gained the "
                           "quiet bit 0x200)"), text


def test_a_start_crop_read_as_past_the_end_is_named() -> None:
    """What the DML EP gave for a Pad that crops row 0 of a 3x4 input (seen on DirectML 1.15.4):
    the constant everywhere, or with edge the last row twice; ONNX keeps rows 1 and 2. Another
    wrong output (row 0 twice) is not that reading."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    constant = Case("Pad", "float32", (3, 4), pads=(-1, 0, 0, 0))
    edge = Case("Pad", "float32", (3, 4), pads=(-1, 0, 0, 0), mode="edge")
    named = "output matches the negative start padding taken as unsigned (StartPadding [0, 0, 4294967295, 0])"
    assert diagnose(constant, x, np.zeros((2, 4), np.float32)).startswith(named)
    assert diagnose(edge, x, x[[2, 2]]).startswith(named)
    assert diagnose(edge, x, x[1:]) == ""
    assert not diagnose(edge, x, x[[0, 0]], recover=False).startswith(named)
