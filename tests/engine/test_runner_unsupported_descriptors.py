"""A case the run does not take still carries the DirectML descriptors it has: a 4-bit case
(DirectML takes no 4-bit tensor in a data-movement operator, and numpy has no 4-bit type) has
its operator's descriptors, as DirectML's documentation describes them; a case with no DirectML
operator (a rank-0 Transpose, a Pad that crops) has none."""

from __future__ import annotations

import pytest

from ort_layouts import Case, Status, run_cases


@pytest.mark.parametrize("dtype", ["INT4", "UINT4"])
def test_a_4_bit_pad_is_unsupported_with_its_padding1_descriptors(dtype: str) -> None:
    (r,) = run_cases([Case("Pad", dtype, (2, 3), pads=(1, 0, 0, 2), mode="constant")], provider="cpu")
    assert r.status is Status.UNSUPPORTED and "4-bit" in r.message
    d = r.descriptors
    assert d["operator"] == "DML_OPERATOR_PADDING1"
    # the EP right-aligns the input to 4 dimensions; the pads [1, 0] before and [0, 2] after
    assert d["input"]["data_type"] == dtype and list(d["input"]["sizes"]) == [1, 1, 2, 3]
    assert list(d["output"]["sizes"]) == [1, 1, 3, 5]


def test_a_4_bit_transpose_is_unsupported_with_its_identity_descriptors() -> None:
    (r,) = run_cases([Case("Transpose", "UINT4", (2, 3), perm=(1, 0))], provider="cpu")
    assert r.status is Status.UNSUPPORTED
    d = r.descriptors
    assert d["operator"] == "DML_OPERATOR_ELEMENT_WISE_IDENTITY"
    assert d["input"]["data_type"] == "UINT4" and d["output"]["data_type"] == "UINT4"


def test_a_case_without_a_directml_operator_has_no_descriptors() -> None:
    (r,) = run_cases([Case("Transpose", "float32", (), perm=())], provider="cpu")
    assert r.status is Status.PASS and r.descriptors == {}


@pytest.mark.parametrize("case", [Case("Transpose", "float32", (), perm=()),
                                  Case("Pad", "float32", (3, 4), pads=(-1, 0, 0, 1), mode="constant",
                                       opset=10)],
                         ids=["rank-0-transpose", "cropping-pad"])
def test_a_case_directml_cannot_express_is_unsupported_there_without_descriptors(case: Case) -> None:
    """On the DML EP, which reports such a case unsupported (its plan says why), it has no
    descriptors either."""
    from ort_layouts.engine.providers import DML
    from ort_layouts.engine.runner import _Prepared
    from ort_layouts.operators.registry import operator_for_type

    prepared = _Prepared(case, operator_for_type(case.op))
    assert prepared.plan(DML) and prepared.descriptors == {}


def test_a_pad_that_crops_from_opset_11_runs_on_the_dml_ep_against_onnx_s_reading() -> None:
    """The DML EP runs it (its pads wrapped to uint32): planned, with no DirectML descriptors,
    its expected output numpy's reading (ONNX's)."""
    from ort_layouts.engine.providers import DML
    from ort_layouts.engine.runner import _Prepared
    from ort_layouts.operators.registry import operator_for_type

    case = Case("Pad", "float32", (3, 4), pads=(-1, 0, 0, 1), opset=11)
    prepared = _Prepared(case, operator_for_type(case.op))
    assert prepared.plan(DML) == "" and prepared.descriptors == {}
    assert "4294967295" in prepared.reason
