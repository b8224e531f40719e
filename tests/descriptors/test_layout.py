"""calculate_strides and layout names, against the seed's C++ CalculateStrides."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ort_layouts import NAMED_LAYOUTS, LayoutError, ShapeError, calculate_strides
from ort_layouts.descriptors.layout import axis_order, layouts_for_rank

N, C, H, W = range(4)


def calculate_strides_cpp(layout: str, sizes: list[int], broadcast: list[bool]) -> tuple[int, ...]:
    """The seed's C++ CalculateStrides, transcribed with its uint32_t arithmetic."""
    u = np.uint32
    c = u(1) if broadcast[C] else u(sizes[C])
    h = u(1) if broadcast[H] else u(sizes[H])
    w = u(1) if broadcast[W] else u(sizes[W])
    with np.errstate(over="ignore"):
        if layout == "NCHW":
            n_stride = u(0) if broadcast[N] else c * h * w
            c_stride = u(0) if broadcast[C] else h * w
            h_stride = u(0) if broadcast[H] else w
            w_stride = u(0) if broadcast[W] else u(1)
        else:  # NHWC
            n_stride = u(0) if broadcast[N] else h * w * c
            h_stride = u(0) if broadcast[H] else w * c
            w_stride = u(0) if broadcast[W] else c
            c_stride = u(0) if broadcast[C] else u(1)
    return tuple(int(s) for s in (n_stride, c_stride, h_stride, w_stride))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_identical_to_cpp_small_grid(layout: str) -> None:
    """Every 4D input with sizes 1..3 and every broadcast pattern (81 * 16 cases)."""
    for sizes in itertools.product(range(1, 4), repeat=4):
        for flags in itertools.product([False, True], repeat=4):
            assert calculate_strides(layout, sizes, flags) == calculate_strides_cpp(
                layout, list(sizes), list(flags)), (sizes, flags)


@settings(max_examples=100, deadline=None)
@given(layout=st.sampled_from(["NCHW", "NHWC"]),
       sizes=st.lists(st.integers(1, 1024), min_size=4, max_size=4),
       flags=st.lists(st.booleans(), min_size=4, max_size=4))
def test_identical_to_cpp(layout: str, sizes: list[int], flags: list[bool]) -> None:
    # products stay under 2^32 here, where the C++ cannot wrap
    assert calculate_strides(layout, sizes, flags) == calculate_strides_cpp(layout, sizes, flags)


def test_cpp_wraps_where_python_does_not() -> None:
    sizes = [1, 65536, 65536, 2]
    assert calculate_strides_cpp("NCHW", sizes, [False] * 4)[0] == 0  # 2^33 mod 2^32
    assert calculate_strides("NCHW", sizes)[0] == 2**33


@pytest.mark.parametrize(
    ("layout", "sizes", "expected"),
    [("NCHW", (2, 3, 4, 5), (60, 20, 5, 1)), ("NHWC", (2, 3, 4, 5), (60, 1, 15, 3)),
     ("NCDHW", (2, 3, 4, 5, 6), (360, 120, 30, 6, 1)), ("NDHWC", (2, 3, 4, 5, 6), (360, 1, 90, 18, 3)),
     ("NCW", (2, 3, 4), (12, 4, 1)), ("NWC", (2, 3, 4), (12, 1, 3)),
     ("HW", (2, 3), (3, 1)), ("WH", (2, 3), (1, 2)), ("DHW", (2, 2, 3), (6, 3, 1)),
     ("WHD", (2, 2, 3), (1, 2, 4)), ("W", (7,), (1,)), ("CNHW", (2, 3, 4, 5), (20, 40, 5, 1)),
     ((0, 2, 3, 1), (2, 3, 4, 5), (60, 1, 15, 3)), ((1, 0), (2, 3), (1, 2))],
    ids=["NCHW", "NHWC", "NCDHW", "NDHWC", "NCW", "NWC", "HW", "WH", "DHW", "WHD", "W", "CNHW",
         "axes-0231", "axes-10"])
def test_named_and_explicit(layout: str | tuple[int, ...], sizes: tuple[int, ...],
                            expected: tuple[int, ...]) -> None:
    assert calculate_strides(layout, sizes) == expected
    # an independent check: numpy's strides of the array transposed into memory order
    order = axis_order(layout, len(sizes))
    mem = np.empty([sizes[a] for a in order], dtype=np.uint8)
    inverse = np.argsort(order)
    assert calculate_strides(layout, sizes) == tuple(np.transpose(mem, inverse).strides)


def test_lowercase_name() -> None:
    assert calculate_strides("nhwc", (1, 1, 3, 5)) == (15, 1, 5, 1)


def test_broadcast_counts_as_size_one() -> None:
    assert calculate_strides("NHWC", (2, 3, 4, 5), [False, False, True, False]) == (15, 1, 0, 3)


def test_numpy_bools_and_0_1_are_flags_too() -> None:
    # NCHW with C broadcast: W 1, H 5, C 0, N 4 * 5 (C counts as size 1)
    for flags in ([0, 1, 0, 0], np.array([False, True, False, False]), (np.int64(0), 1, False, 0)):
        assert calculate_strides("NCHW", (2, 3, 4, 5), flags) == (20, 0, 5, 1)  # type: ignore[arg-type]


def test_layouts_for_rank() -> None:
    assert layouts_for_rank(4)[:2] == ["NCHW", "NHWC"]
    assert len(layouts_for_rank(4)) == 24
    assert len(layouts_for_rank(3)) == 12  # NCW and DHW orderings
    assert layouts_for_rank(6) == []
    assert set(NAMED_LAYOUTS) <= {n for r in range(1, 6) for n in layouts_for_rank(r)}


@pytest.mark.parametrize(
    ("layout", "rank", "needle"),
    [("NCHX", 4, "NCHX"), ("NCHW", 3, "NCHW"), ("NNHW", 4, "NNHW"), ((0, 0, 1), 3, "[0, 0, 1]"),
     ((0, 1), 3, "[0, 1]"), (3.5, 1, "3.5")],
    ids=["unknown-letter", "wrong-rank", "repeated-letter", "repeated-axis", "short-order", "float"])
def test_bad_layouts(layout: object, rank: int, needle: str) -> None:
    with pytest.raises(LayoutError) as info:
        axis_order(layout, rank)  # type: ignore[arg-type]
    assert needle in str(info.value)


def test_bad_broadcast_flags() -> None:
    with pytest.raises(ShapeError, match="3 entries"):
        calculate_strides("NCHW", (1, 2, 3, 4), [True, False, False])
