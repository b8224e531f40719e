"""Shapes the standard suite shares between operators."""

from __future__ import annotations

from collections.abc import Sequence

from ort_layouts.descriptors.dtypes import DataType

__all__ = ["SUITE_SHAPES", "rotating"]

# Shapes with distinct sizes where possible, so a swapped axis changes the result.
SUITE_SHAPES: dict[int, tuple[int, ...]] = {
    1: (5,), 2: (3, 4), 3: (2, 3, 4), 4: (2, 3, 4, 5), 5: (2, 3, 2, 4, 3), 6: (2, 3, 2, 1, 3, 2),
    7: (2, 1, 3, 2, 1, 2, 2), 8: (2, 1, 2, 3, 1, 2, 1, 2),
}


def rotating(dtypes: Sequence[DataType], i: int) -> DataType:
    """The i-th data type, cycling: spreads the cases of a large rank over the types."""
    return dtypes[i % len(dtypes)]
