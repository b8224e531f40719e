"""NaN bit patterns of the float types (IEEE 754 binary16, binary32, binary64): which patterns
are NaNs, which are quiet, and what a float conversion may make of a NaN. A layout operator
copies bits; a float conversion on the way (a kernel that moves float16 through float32) keeps
a NaN a NaN but sets its quiet bit, or gives the one canonical quiet NaN (the quiet bit alone in
the payload, either sign).

>>> nan = nan_bits("float16")
>>> hex(nan.quiet)
'0x200'
>>> bool(nan.is_nan(0x7C01)), bool(nan.is_quiet_nan(0x7C01)), bool(nan.is_quiet_nan(0x7E01))
(True, False, True)
>>> [bool(nan.converted(e, a)) for e, a in ((0x7C01, 0x7E01), (0x7D55, 0xFE00), (0x7E00, 0x7E01))]
[True, True, False]
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ort_layouts._errors import DataTypeError
from ort_layouts.descriptors.dtypes import DataType

__all__ = ["NanBits", "nan_bits"]


@dataclasses.dataclass(frozen=True, slots=True)
class NanBits:
    """The fields of a float type's bit pattern that make a NaN.

    Attributes:
        exponent: the exponent field's mask (all ones in a NaN or an infinity).
        mantissa: the payload field's mask (not zero in a NaN).
        quiet: the payload's top bit, set in a quiet NaN.
    """

    exponent: int
    mantissa: int
    quiet: int

    def is_nan(self, bits: Any) -> Any:
        """Whether each pattern (an int or an array of unsigned integers) is a NaN."""
        return ((bits & self.exponent) == self.exponent) & ((bits & self.mantissa) != 0)

    def is_quiet_nan(self, bits: Any) -> Any:
        """Whether each pattern is a quiet NaN."""
        return self.is_nan(bits) & ((bits & self.quiet) != 0)

    def converted(self, expected: Any, actual: Any) -> Any:
        """Whether each ``actual`` pattern is what a float conversion may make of the NaN
        ``expected`` and differs from it: the same NaN quieted, or the canonical quiet NaN."""
        return (self.is_nan(expected) & self.is_quiet_nan(actual) & (expected != actual)
                & ((actual == (expected | self.quiet)) | ((actual & self.mantissa) == self.quiet)))


_NAN_BITS = {
    DataType.FLOAT16: NanBits(0x7C00, 0x03FF, 1 << 9),
    DataType.FLOAT32: NanBits(0x7F800000, 0x007FFFFF, 1 << 22),
    DataType.FLOAT64: NanBits(0x7FF << 52, (1 << 52) - 1, 1 << 51),
}


def nan_bits(data_type: Any) -> NanBits:
    """The NaN fields of a float type (a DataType, its name or a numpy dtype).

    Raises:
        DataTypeError: not FLOAT16, FLOAT32 or FLOAT64.
    """
    dtype = DataType.coerce(data_type)
    found = _NAN_BITS.get(dtype)
    if found is None:
        raise DataTypeError(f"{dtype.name} has no NaNs; valid: {[t.name for t in _NAN_BITS]}")
    return found

