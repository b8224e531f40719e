"""NaN bit patterns: hand-worked IEEE 754 patterns of binary16, binary32 and binary64."""

from __future__ import annotations

import numpy as np
import pytest

from ort_layouts._errors import DataTypeError
from ort_layouts.reference.nans import nan_bits

# (type, a signalling NaN, it quieted, the canonical quiet NaN, +infinity, a quiet NaN with a payload)
PATTERNS = [
    ("float16", 0x7C01, 0x7E01, 0x7E00, 0x7C00, 0x7F55),
    ("float32", 0x7F800001, 0x7FC00001, 0x7FC00000, 0x7F800000, 0x7FE5A5A5),
    ("float64", 0x7FF0000000000001, 0x7FF8000000000001, 0x7FF8000000000000, 0x7FF0000000000000,
     0x7FFDA5A5A5A5A5A5),
]


@pytest.mark.parametrize(("name", "signalling", "quieted", "canonical", "inf", "payload"), PATTERNS)
def test_nan_patterns(name: str, signalling: int, quieted: int, canonical: int, inf: int,
                      payload: int) -> None:
    nan = nan_bits(name)
    sign = 1 << (8 * np.dtype(name).itemsize - 1)
    patterns = (signalling, quieted, canonical, inf, payload, sign | quieted, 0)
    assert [bool(nan.is_nan(b)) for b in patterns] == [True, True, True, False, True, True, False]
    assert [bool(nan.is_quiet_nan(b)) for b in (signalling, quieted, canonical, inf, payload)] == [
        False, True, True, False, True]
    # a conversion quiets a NaN or gives the canonical one (either sign); it never moves a payload
    assert bool(nan.converted(signalling, quieted))
    assert bool(nan.converted(signalling, canonical)) and bool(nan.converted(payload, sign | canonical))
    assert not bool(nan.converted(quieted, quieted))  # unchanged: nothing to explain
    assert not bool(nan.converted(canonical, payload))  # a quiet NaN took another's payload
    assert not bool(nan.converted(signalling, signalling | 2))  # still signalling
    assert not bool(nan.converted(0, canonical))  # a number became a NaN


def test_arrays_are_read_element_by_element() -> None:
    nan = nan_bits("float16")
    expected = np.array([0x7C01, 0x7E00, 0x7D55, 0x3C00], dtype=np.uint16)
    actual = np.array([0x7E01, 0x7E01, 0xFE00, 0x3C00], dtype=np.uint16)
    assert nan.converted(expected, actual).tolist() == [True, False, True, False]


@pytest.mark.parametrize("name", ["int32", "uint8", "uint4"])
def test_types_without_nans_are_refused(name: str) -> None:
    with pytest.raises(DataTypeError, match="valid: \\['FLOAT16', 'FLOAT32', 'FLOAT64'\\]"):
        nan_bits(name)
