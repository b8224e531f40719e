"""Named memory layouts ("NCHW", "NHWC", "WHD", ...) and CalculateStrides.

A layout names the memory order of a tensor's axes, outermost first. Sizes are always given in
the logical order of that layout's letters (N, C, D, H, W as DirectML orders them), so "NHWC"
with sizes ``{N, C, H, W}`` means C varies fastest in memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ort_layouts._errors import LayoutError, ShapeError
from ort_layouts.descriptors.sequences import as_int_tuple, int_tuple, is_ordered_sequence

__all__ = ["LOGICAL_ORDERS", "NAMED_LAYOUTS", "axis_order", "calculate_strides", "layouts_for_rank"]

# the logical order of each set of letters, as DirectML orders sizes
LOGICAL_ORDERS: tuple[str, ...] = ("W", "HW", "NCW", "DHW", "NCHW", "NCDHW")

# the layouts users name most, tried first when a descriptor's strides are matched to a name
NAMED_LAYOUTS: tuple[str, ...] = (
    "NCHW", "NHWC", "NCDHW", "NDHWC", "DHW", "WHD", "NCW", "NWC", "HW", "WH", "W",
)

LayoutSpec = str | Sequence[int]


def _logical_order(letters: str) -> str | None:
    for logical in LOGICAL_ORDERS:
        if len(logical) == len(letters) and set(logical) == set(letters):
            return logical
    return None


def axis_order(layout: LayoutSpec, rank: int) -> tuple[int, ...]:
    """The memory order of a layout as logical axis indices, outermost first.

    ``layout`` is a layout name (any ordering of a logical order's letters) or an explicit axis
    order (a permutation of ``0..rank-1``).

    >>> axis_order("NHWC", 4)
    (0, 2, 3, 1)
    >>> axis_order("WHD", 3)
    (2, 1, 0)
    """
    if isinstance(layout, str):
        letters = layout.strip().upper()
        logical = _logical_order(letters) if len(set(letters)) == len(letters) else None
        if logical is None:
            raise LayoutError(
                f"layout {layout!r} is not an ordering of any of {list(LOGICAL_ORDERS)}; "
                f"named layouts: {list(NAMED_LAYOUTS)}; or give an axis order such as (0, 2, 3, 1)")
        if len(logical) != rank:
            raise LayoutError(
                f"layout {layout!r} has {len(logical)} axes but the sizes have {rank}; "
                f"layouts for rank {rank}: {layouts_for_rank(rank) or 'none (use an axis order)'}")
        return tuple(logical.index(ch) for ch in letters)
    order = as_int_tuple(layout)
    if order is None:
        raise LayoutError(
            f"layout {layout!r} is neither a name nor a sequence of integer axes; "
            f"named layouts: {list(NAMED_LAYOUTS)}")
    if sorted(order) != list(range(rank)):
        raise LayoutError(
            f"axis order {list(order)} is not a permutation of 0..{rank - 1} (rank {rank})")
    return order


def layouts_for_rank(rank: int) -> list[str]:
    """The named layouts for a rank, then every other ordering of that rank's letters."""
    if not any(len(o) == rank for o in LOGICAL_ORDERS):
        return []
    names = [n for n in NAMED_LAYOUTS if len(n) == rank]
    for logical_order in [o for o in LOGICAL_ORDERS if len(o) == rank]:
        names += ["".join(p) for p in itertools.permutations(logical_order)
                  if "".join(p) not in names]
    return names


def _flags(broadcast: Sequence[bool]) -> list[bool]:
    """Broadcast flags as bools; bools (numpy's too) and the integers 0 and 1 are flags."""
    valid = "one True or False per size, e.g. [False, True, False, False]"
    if not is_ordered_sequence(broadcast):
        raise ShapeError(f"broadcast flags {broadcast!r} are not a sequence of bools; valid: {valid}")
    flags = []
    for b in broadcast:
        if not isinstance(b, (bool, np.bool_)) and not (isinstance(b, (int, np.integer)) and b in (0, 1)):
            raise ShapeError(f"broadcast flags {list(broadcast)!r} hold {b!r}, which is not a bool; "
                             f"valid: {valid}")
        flags.append(bool(b))
    return flags


def calculate_strides(
    layout: LayoutSpec,
    sizes: Sequence[int],
    broadcast: Sequence[bool] | None = None,
) -> tuple[int, ...]:
    """CalculateStrides from DirectML's helper functions, generalised to any rank and layout.

    Sizes are in logical order. An axis flagged in ``broadcast`` (one bool per size, 0 and 1
    taken as False and True) gets stride 0 and counts as size 1 for the strides of the axes
    outside it, exactly as the seed's C++ does.

    Raises:
        ShapeError: sizes that are not integers >= 0, or broadcast flags that are not one bool
            per size (a string, a set, 2 or None among them).
        LayoutError: a layout that is neither a name nor an axis order of the sizes' rank.

    >>> calculate_strides("NHWC", [1, 1, 3, 5])
    (15, 1, 5, 1)
    >>> calculate_strides("NCHW", [2, 3, 4, 5], [False, True, False, False])
    (20, 0, 5, 1)
    """
    sz = list(int_tuple(sizes, "sizes", low=0))
    rank = len(sz)
    order = axis_order(layout, rank)
    flags = [False] * rank if broadcast is None else _flags(broadcast)
    if len(flags) != rank:
        raise ShapeError(
            f"broadcast flags {flags} have {len(flags)} entries but sizes {sz} have {rank}")
    strides = [0] * rank
    step = 1
    for axis in reversed(order):
        if flags[axis]:
            strides[axis] = 0  # a broadcast axis counts as size 1 for the axes outside it
        else:
            strides[axis] = step
            step *= sz[axis]
    return tuple(strides)
