"""Pad: a case's pads, mode and constant are checked when the case is made; negative pads
(cropping) are read as ONNX Runtime reads them, checked on its CPU EP and against numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ort_layouts._errors import ModelError, ShapeError
from ort_layouts.engine.graphs import build_model
from ort_layouts.engine.result import Status
from ort_layouts.engine.runner import run_cases
from ort_layouts.operators.case import Case
from ort_layouts.operators.expected import reference_output
from ort_layouts.operators.registry import operator_for_type

X = np.arange(6, dtype=np.float32).reshape(2, 3)  # [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize(("shape", "fields", "fragment"), [
    ((2, 3), {"pads": (0, -5, 0, 0)},
     "Pad pads [0, -5, 0, 0] crop axis 1 of the input [2, 3] past its size: 3 with pads -5 and 0 is -2"),
    ((2, 3), {"pads": (-1, 0, -2, 0), "mode": "edge"}, "crop axis 0 of the input [2, 3] past its size"),
    ((2, 3), {"pads": (-4, 0), "axes": (-1,)},
     "crop axis 1 of the input [2, 3] past its size: 3 with pads -4 and 0"),
    ((2, 3), {"pads": (0, -3, 0, 1), "mode": "edge"},
     "Pad mode 'edge' pads axis 1 of the input [2, 3] (pads [0, -3, 0, 1]), which has no element left"),
    ((2, 3), {"pads": (0, -4, 0, 2), "mode": "wrap"}, "Pad mode 'wrap' pads axis 1"),
    ((0, 3), {"pads": (1, 0, 0, 0), "mode": "reflect"}, "Pad mode 'reflect' pads axis 0 of the input [0, 3]"),
    ((2, 3), {"pads": (0, 1, 0)}, "pads [0, 1, 0] has 3 entries; 4 expected"),
    ((2, 3), {"pads": (0, 1), "axes": (2,)}, "Pad axis 2 is out of range for rank 2"),
    ((2, 3), {"pads": (0, 1, 0, 1), "mode": "bogus"},
     "Pad mode 'bogus' is not valid; valid: ['constant', 'edge', 'reflect', 'wrap']"),
    ((2, 3), {"pads": (0, 1, 0, 1), "pad_value_hex": "zz"}, "pad_value_hex 'zz' is not hexadecimal"),
    ((2, 3), {"pads": (0, 1, 0, 1), "pad_value_hex": "0000"}, "is 2 bytes; valid: 4 (FLOAT32)"),
], ids=["crop-past", "crop-past-edge", "crop-past-axes", "edge-of-nothing", "wrap-of-nothing",
        "reflect-of-empty", "pads-count", "axes-range", "mode", "value-not-hex", "value-size"])
def test_what_is_no_pad_is_refused_when_the_case_is_made(shape: tuple[int, ...], fields: dict[str, Any],
                                                          fragment: str) -> None:
    with pytest.raises(ShapeError) as raised:
        Case("Pad", "float32", shape, **fields)
    assert fragment in str(raised.value)


def test_a_4_bit_constant_is_one_byte_whose_low_nibble_is_the_value() -> None:
    with pytest.raises(ShapeError, match=r"pad_value_hex '0e00' is 2 bytes; valid: 1 \(INT4\)"):
        Case("Pad", "int4", (2, 3), pads=(0, 1, 0, 0), pad_value_hex="0e00")
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    for value, want in (("0e", -2), ("fe", -2), ("07", 7), ("", 0)):  # 0xE in 4 bits: -2
        case = Case("Pad", "int4", (2, 3), pads=(0, 1, 0, 0), pad_value_hex=value)
        assert reference_output(case, x)[:, 0].tolist() == [want, want], value
    for value, want in (("0e", 14), ("f8", 8), ("07", 7)):  # UINT4: the low nibble, unsigned
        case = Case("Pad", "uint4", (2, 3), pads=(0, 1, 0, 0), pad_value_hex=value)
        assert reference_output(case, x.astype(np.uint8))[:, 0].tolist() == [want, want], value


def test_numpy_cannot_pad_what_the_case_refuses_either() -> None:
    """np.pad (ONNX's reference implementation) has no edge, reflect or wrap of an empty axis."""
    for mode in ("edge", "reflect", "wrap"):
        with pytest.raises(ValueError):
            np.pad(np.zeros((0, 3), np.float32), ((1, 0), (0, 0)), mode=mode)  # type: ignore[call-overload]


@pytest.mark.parametrize(("pads", "mode", "want"), [
    ((0, -3, 0, 0), "constant", np.zeros((2, 0), np.float32)),  # crops an axis to nothing
    ((0, -4, 0, 2), "constant", [[0], [0]]),  # the crop reaches into the constant
    ((0, -3, 0, 0), "wrap", np.zeros((2, 0), np.float32)),  # nothing padded: an empty crop is fine
    ((0, -1, 0, 2), "wrap", [[1, 2, 1, 2], [4, 5, 4, 5]]),  # wraps around [1, 2], what is left
    ((0, 2, 0, -1), "wrap", [[0, 1, 0, 1], [3, 4, 3, 4]]),  # wraps around [0, 1]
    ((0, -1, 0, 4), "wrap", [[1, 2, 1, 2, 1, 2], [4, 5, 4, 5, 4, 5]]),
    ((-1, -1, 1, 2), "wrap", [[4, 5, 4, 5], [4, 5, 4, 5]]),
    ((0, -1, 0, 2), "edge", [[1, 2, 2, 2], [4, 5, 5, 5]]),
    ((0, -1, 0, 1), "reflect", [[1, 2, 1], [4, 5, 4]]),
], ids=["crop-to-empty", "crop-into-constant", "wrap-crop-to-empty", "wrap-begin-crop", "wrap-end-crop",
        "wrap-beyond", "wrap-both-axes", "edge", "reflect"])
def test_negative_pads_read_as_onnx_runtime_reads_them(pads: tuple[int, ...], mode: str, want: Any) -> None:
    """Worked by hand: cropped first, then padded from what is left (ONNX Runtime's CPU EP gives
    the same, checked below)."""
    case = Case("Pad", "float32", (2, 3), pads=pads, mode=mode)
    got = reference_output(case, X)
    assert got.shape == np.asarray(want).shape and np.array_equal(got, np.asarray(want, np.float32))
    assert "negative pads" in operator_for_type("Pad").inexpressible_reason(case)


def test_edge_and_reflect_read_the_same_cropped_first_or_last() -> None:
    """Only wrap reads across the crop: numpy's pad-then-crop gives the reference for the others."""
    for pads, mode in (((0, -1, 0, 2), "edge"), ((-1, 1, 0, -2), "edge"), ((0, -1, 0, 1), "reflect"),
                       ((0, 1, 0, -1), "reflect")):
        case = Case("Pad", "float32", (2, 3), pads=pads, mode=mode)
        b, e = pads[:2], pads[2:]
        padded = np.pad(X, [(max(b[a], 0), max(e[a], 0)) for a in range(2)], mode=mode)  # type: ignore[call-overload]
        crop = tuple(slice(max(-b[a], 0), padded.shape[a] - max(-e[a], 0)) for a in range(2))
        assert np.array_equal(reference_output(case, X), padded[crop]), (pads, mode)


def test_wrap_with_negative_pads_passes_on_the_cpu_ep() -> None:
    """The whole input wrapped, then cropped, made a false mismatch here."""
    cases = [Case("Pad", dt, (3, 4), pads=pads, mode="wrap", opset=19)
             for dt in ("float32", "int8")
             for pads in ((0, -1, 0, 2), (1, 2, -2, -1), (-1, 0, 2, -3), (0, 5, 0, -2))]
    results = run_cases(cases, provider="cpu", jobs=1)
    assert [r.status for r in results] == [Status.PASS] * len(cases), [r.message for r in results]


def test_a_rank_0_pad_is_refused_when_the_case_is_made() -> None:
    """ONNX Runtime's CPU EP fails a Pad of a scalar ("data_rank > 0 was false. Input tensor has
    no dimensions", pad.cc), as ONNX's reference does: such a case is refused when it is made,
    where it was taken and then failed in dml_operator, the reference and the run."""
    with pytest.raises(ShapeError, match=r"a rank-0 Pad is not defined .*valid: an input of rank >= 1"):
        Case("Pad", "float32", (), pads=())
    assert Case("Pad", "float32", (1,), pads=(0, 0)).rank == 1


@pytest.mark.parametrize(("dtype", "value_hex", "back_hex"), [
    ("float64", "9a9999999999b93f", "000000a09999b93f"),  # 0.1: a float32 holds 0.100000001490116...
    ("float32", "0100807f", "0100c07f"),  # a signalling NaN: a float conversion quiets it
], ids=["float64-0.1", "float32-signalling-nan"])
def test_a_constant_a_float_attribute_cannot_hold_is_refused_before_opset_11(
        dtype: str, value_hex: str, back_hex: str) -> None:
    """Before Pad-11 the constant is the float attribute ``value``: ONNX Runtime (CPU and DML
    EPs) and ONNX's reference pad with its float32, not the case's exact bytes."""
    with pytest.raises(ShapeError, match=rf"pad_value_hex '{value_hex}' .* reads back as '{back_hex}'; "
                                         r"valid: a constant that a float32 holds exactly"):
        Case("Pad", dtype, (3, 4), pads=(1, 1, 1, 1), pad_value_hex=value_hex, opset=10)
    case = Case("Pad", dtype, (3, 4), pads=(1, 1, 1, 1), pad_value_hex=value_hex)  # taken at opset 11+
    with pytest.raises(ModelError, match="a float attribute before opset 11"):
        build_model([case], opset=10)


def test_a_constant_a_float32_holds_is_padded_bit_for_bit_before_opset_11() -> None:
    half = "000000000000e03f"  # 0.5
    case = Case("Pad", "float64", (3, 4), pads=(1, 1, 1, 1), pad_value_hex=half, opset=10)
    (result,) = run_cases([case], provider="cpu")
    assert result.status is Status.PASS, result.message
    model = build_model([case], opset=10)
    (value,) = [a.f for a in model.graph.node[0].attribute if a.name == "value"]
    assert value == 0.5


def test_a_constant_that_is_no_hex_is_refused_as_such_at_an_opset_before_11() -> None:
    """The opset's check read the constant before it was checked: a bare ValueError of bytes.fromhex."""
    with pytest.raises(ShapeError, match=r"^Pad pad_value_hex 'zz' is not hexadecimal bytes; valid: "):
        Case("Pad", "float32", (2, 3), pads=(0, 1, 0, 1), pad_value_hex="zz", opset=10)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_integer_data_is_refused_before_opset_11_as_pad_2_takes_floats_only(dtype: str) -> None:
    """Pad-2's T is float16, float and double: onnx's checker refuses an int32 Pad-2 node ("has
    unsupported type: tensor(int32)"), and so does ONNX Runtime when it loads the model."""
    import onnx

    with pytest.raises(ShapeError, match=rf"Pad before opset 11 .* not {dtype.upper()}; valid: a float type"):
        Case("Pad", dtype, (3, 2), pads=(1, 0, 0, 0), opset=10)
    case = Case("Pad", dtype, (3, 2), pads=(1, 0, 0, 0))  # the run's opset
    with pytest.raises(ModelError, match="Pad-2"):
        build_model([case], opset=10)
    model = build_model([case], opset=11)
    onnx.checker.check_model(model, full_check=True)  # Pad-11 takes it
    float_case = Case("Pad", "float16", (3, 2), pads=(1, 0, 0, 0), opset=10)
    onnx.checker.check_model(build_model([float_case]), full_check=True)


def test_the_dml_ep_runs_a_pad_that_crops_from_opset_11_with_its_pads_wrapped_to_uint32() -> None:
    """PaddingHelper reads the pads input into int32 and keeps them in uint32 StartPadding and
    EndPadding: -1 is 2^32 - 1 = 4294967295, after the two leading zeros of 4 dimensions. The
    Pad-10 path (pads an attribute) leaves such a node to another EP."""
    pad = operator_for_type("Pad")
    crop = Case("Pad", "float32", (3, 4), pads=(-1, 1, 1, -2))
    assert pad.ep_runs_inexpressible(crop)
    wrapped = "StartPadding [0, 0, 4294967295, 1], EndPadding [0, 0, 1, 4294967294]"
    assert wrapped in pad.inexpressible_reason(crop)
    old = Case("Pad", "float32", (3, 4), pads=(-1, 1, 1, -2), opset=10)
    assert not pad.ep_runs_inexpressible(old)
    assert "does not take this Pad before opset 11" in pad.inexpressible_reason(old)
    assert not pad.ep_runs_inexpressible(Case("Pad", "float32", (3, 4), pads=(1, 1, 1, 2)))


def test_a_start_crop_read_as_past_the_end_is_the_one_reading_offered() -> None:
    """Worked by hand on [[0, 1, 2], [3, 4, 5]]: cropping row 0 read as 'past the end' gives the
    constant (constant mode) or the last row (edge); a crop at the end, or reflect, has none."""
    pad = operator_for_type("Pad")
    constant = Case("Pad", "float32", (2, 3), pads=(-1, 0, 0, 1), mode="constant", pad_value_hex="0000c03f")
    ((name, make),) = list(pad.inexpressible_candidates(constant, X))
    assert "axes [0]" in name and "(the constant)" in name
    assert np.array_equal(make(), np.full((1, 4), 1.5, np.float32))
    edge = Case("Pad", "float32", (2, 3), pads=(-1, 1, 0, 0), mode="edge")
    ((name, make),) = list(pad.inexpressible_candidates(edge, X))
    assert "(its last element)" in name and np.array_equal(make(), [[3, 3, 4, 5]])
    for case in (Case("Pad", "float32", (2, 3), pads=(0, 0, -1, 0)),
                 Case("Pad", "float32", (2, 3), pads=(-1, 0, 0, 0), mode="reflect")):
        assert list(pad.inexpressible_candidates(case, X)) == []


def test_a_pad_that_crops_over_directml_s_limits_says_the_limit() -> None:
    """Nine dimensions: over DML_TENSOR_DIMENSION_COUNT_MAX1 whatever the pads; the EP does not
    run it, and the reason is the limit, not the opset."""
    pad = operator_for_type("Pad")
    case = Case("Pad", "float32", (1,) * 8 + (3,), pads=(0,) * 8 + (-1,) + (0,) * 9)
    assert not pad.ep_runs_inexpressible(case)
    reason = pad.inexpressible_reason(case)
    assert "dimensions" in reason and "opset" not in reason
