"""PaddingValue as the DML EP writes it (DmlOperatorPadding.cpp): from opset 11 it copies the
constant tensor's own bytes into the union; before, it writes the float ``value`` attribute with
``CastToClampedScalarUnion<float>``, whose FLOAT16 case writes the ``Float32`` member. The bytes
below are worked by hand: float16 -3.0 is 0xC200, float32 -3.0 is 0xC0400000."""

from __future__ import annotations

import pytest

from ort_layouts import DescriptorError
from ort_layouts.operators.case import Case
from ort_layouts.operators.padding import PaddingOp
from ort_layouts.operators.registry import operator_for_type

PAD = operator_for_type("Pad")


def _case(dtype: str, value_hex: str, opset: int | None) -> Case:
    return Case("Pad", dtype, (3, 4), pads=(1, 2, 2, 1), pad_value_hex=value_hex, opset=opset)


def test_a_float16_pad_10_holds_the_float32_bits_the_dml_ep_writes() -> None:
    op = PAD.dml_operator(_case("float16", "00c2", 10))
    assert op.padding_value_bytes == bytes.fromhex("00c2")
    assert op.padding_value_union == bytes.fromhex("000040c0")
    assert op.to_dict()["padding_value_union_hex"] == "000040c0"
    assert "{{0x00, 0x00, 0x40, 0xc0, 0x00, 0x00, 0x00, 0x00}};  // Float32 = -3.0f" in op.to_cpp()
    assert PaddingOp.from_dict(op.to_dict()) == op


@pytest.mark.parametrize(("dtype", "value_hex", "opset"), [
    ("float16", "00c2", 11), ("float16", "00c2", None), ("float32", "000040c0", 10)])
def test_elsewhere_the_union_holds_the_constant_itself(dtype: str, value_hex: str, opset: int | None) -> None:
    op = PAD.dml_operator(_case(dtype, value_hex, opset))
    assert op.padding_value_union == b"" and "padding_value_union_hex" not in op.to_dict()
    union = ", ".join(f"0x{b:02x}" for b in bytes.fromhex(value_hex).ljust(8, b"\0"))
    assert f"{{{{{union}}}}};" in op.to_cpp()


def test_a_union_of_more_than_8_bytes_is_refused() -> None:
    op = PAD.dml_operator(_case("float16", "00c2", 10))
    data = {**op.to_dict(), "padding_value_union_hex": "00" * 9}
    with pytest.raises(DescriptorError, match="padding_value_union"):
        PaddingOp.from_dict(data)
