"""check_value refuses a nonzero decimal that became 0 before it was called (``1e-400`` parses
to 0.0, ``-1e-400`` to -0.0) when it has the text: "a constant that its data type cannot hold
is refused, never rounded" (README), as for 1e-50 in float32."""

from __future__ import annotations

import pytest

from ort_layouts import ShapeError
from ort_layouts.operators.padding import check_value

# the smallest subnormals, as IEEE 754 gives them: 2**-149 and 2**-1074
_SMALLEST = {"float32": "1.4013e-45", "float64": "4.94066e-324", "float16": "5.96046e-08"}


@pytest.mark.parametrize("text", ["1e-400", "-1e-400", "0.1e-399", "1E-400", " 1e-400"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_nonzero_decimal_that_became_zero_is_refused(dtype: str, text: str) -> None:
    value = float(text)
    assert value == 0  # Python's own parse underflows: the number only the text still holds
    with pytest.raises(ShapeError) as info:
        check_value(value, dtype, what="Pad value", text=text)
    assert str(info.value) == (f"Pad value {text} is too small for {dtype} (smallest nonzero "
                               f"{_SMALLEST[dtype]}); it would become 0")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64"])
def test_an_integer_type_names_it_no_whole_number(dtype: str) -> None:
    with pytest.raises(ShapeError, match=r"^Pad value 1e-400 is not a whole number; "):
        check_value(0.0, dtype, what="Pad value", text="1e-400")


@pytest.mark.parametrize("text", ["0", "-0", "0.0", "-0.0", "0e5", "0e-400", "nan", "inf"])
def test_zero_written_as_zero_is_kept(text: str) -> None:
    value = float(text)
    got = check_value(value, "float32", text=text)
    assert repr(got) == repr(value)  # -0.0 stays -0.0


def test_without_text_a_zero_is_a_zero() -> None:
    assert repr(check_value(-0.0, "float64")) == "-0.0"


@pytest.mark.parametrize("text", ["1e-99999999999999999999", "-0.5e-99999999999999999999"])
def test_an_exponent_beyond_what_decimal_reads_is_still_a_nonzero_value(text: str) -> None:
    # float() reads these as 0.0 / -0.0; their mantissa is not zero
    assert float(text) == 0.0
    with pytest.raises(ShapeError, match=r"would become 0"):
        check_value(float(text), "float32", text=text)


@pytest.mark.parametrize("text", ["0", "-0", "0.000", "0e-99999999999999999999", "-0.0e5"])
def test_a_zero_written_any_way_is_taken(text: str) -> None:
    assert check_value(float(text), "float32", text=text) == 0.0
